package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// InitReport is what Init did, or with DryRun would do.
type InitReport struct {
	// Config is the harness config's path, repository-relative.
	Config string `json:"config"`
	// Outcome is ScaffoldWritten or ScaffoldPresent.
	Outcome string `json:"outcome"`
	// Origin is the owner/name written into ticketing.github, "" for none.
	Origin string `json:"origin"`
	// OriginFrom says where Origin came from: "--github", "origin remote"
	// or "" when none was found.
	OriginFrom string `json:"originFrom"`
	// SpecDir is the spec directory, repository-relative, and SpecDirCreated
	// whether Init created it.
	SpecDir        string `json:"specDir"`
	SpecDirCreated bool   `json:"specDirCreated"`
	// GitIgnore is what Init did to .gitignore to keep the lock files out
	// of git.
	GitIgnore *GitIgnoreReport `json:"gitignore"`
	DryRun    bool             `json:"dryRun"`
}

// ErrForeignCheckout refuses to adopt a checkout under a name its origin
// remote contradicts.
var ErrForeignCheckout = errors.New("the checkout's origin is another repository")

// Init adopts the repository explicitly: it scaffolds the harness config
// (naming the GitHub repository given as OWNER/NAME, else the one the origin
// remote names) and creates the spec directory. Running it again changes
// nothing. With dryRun it only reports what it would do.
func (e *Engine) Init(github string, dryRun bool) (*InitReport, error) {
	rep := &InitReport{DryRun: dryRun, Config: scaffoldedFile}
	owner, name, err := e.initOrigin(github)
	if err != nil {
		return nil, err
	}
	if owner != "" {
		rep.Origin = owner + "/" + name
		rep.OriginFrom = "origin remote"
		if github != "" {
			rep.OriginFrom = "--github"
		}
	}
	outcome, err := scaffold(e.Checkout, e.builtinDefault(), owner, name, dryRun)
	if err != nil {
		// Departure from the original (docs/compatibility.md#init-fails-when-it-cannot-write): asked for this one write, init reports it undone as exit 2.
		return nil, fmt.Errorf("init: %w", err)
	}
	rep.Outcome = outcome
	if outcome == ScaffoldPresent {
		rep.Config = e.Harness.File()
		rep.Origin, rep.OriginFrom = e.Harness.OriginRepo(), ""
	}
	if outcome == ScaffoldWritten && !dryRun {
		e.emit("harness.config_scaffolded", "info", map[string]any{"path": rep.Config, "repo": rep.Origin})
		if err := e.loadHarness(); err != nil {
			return nil, err
		}
	}
	rep.SpecDir = e.SpecDirRel()
	if ok, err := e.Checkout.Exists(rep.SpecDir); err == nil && !ok {
		rep.SpecDirCreated = true
		if !dryRun {
			if err := e.Checkout.MkdirAll(rep.SpecDir); err != nil {
				return nil, fmt.Errorf("init: create the spec directory: %w", err)
			}
		}
	}
	if rep.GitIgnore, err = ignoreLocks(e.Checkout, dryRun); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	return rep, nil
}

// initOrigin is the repository to name in ticketing.github: --github when
// given (refused when the origin remote names another repository), else the
// origin remote's, else none.
func (e *Engine) initOrigin(github string) (owner, name string, err error) {
	host, err := e.CLI.GitHubHost()
	if err != nil {
		return "", "", err
	}
	remoteOwner, remoteName, remote := checkoutOrigin(e.Checkout, host)
	if github == "" {
		if remote {
			return remoteOwner, remoteName, nil
		}
		return "", "", nil
	}
	r, perr := graph.ParseRepoName(github)
	if perr != nil {
		return "", "", fmt.Errorf("--github: %w", perr)
	}
	if remote && !strings.EqualFold(remoteOwner+"/"+remoteName, github) {
		return "", "", fmt.Errorf("%w: origin is %s/%s, not %s; refusing to adopt it under that name", ErrForeignCheckout, remoteOwner, remoteName, github)
	}
	return r.Owner, r.Name, nil
}
