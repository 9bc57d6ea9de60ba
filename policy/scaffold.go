package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
	"github.com/the-loop/the-loop/internal/lazyregexp"
	"github.com/the-loop/the-loop/repo"
)

// What Scaffold did.
const (
	// ScaffoldWritten: the built-in default was written.
	ScaffoldWritten = "written"
	// ScaffoldPresent: a harness config (of either name) was already there;
	// nothing was touched.
	ScaffoldPresent = "present"
	// ScaffoldFailed ("") : nothing could be written; a warning says why.
	ScaffoldFailed = ""
)

// scaffoldedFile is the harness config Scaffold writes, repository-relative
// and slash-separated, as messages and reports name it.
const scaffoldedFile = ConfigDir + "/" + HarnessConfigFile

// SchemaURL is where editors fetch the harness config's schema from, named
// in the written file's yaml-language-server line.
const SchemaURL = "https://raw.githubusercontent.com/the-loop/the-loop/main/policy/schemas/harness-config.schema.json"

// provenance heads every file Scaffold writes, so the next person to open it
// knows who put it there and how to make it their own.
const provenance = "# yaml-language-server: $schema=" + SchemaURL + `
# Written by the-loop when it adopted this repository, with its built-in
# defaults. Tailor it and commit it: run ` + "`the-loop init`" + ` to re-check it,
# ` + "`the-loop config schema harness`" + ` prints every key. the-loop never
# overwrites this file once it exists.
`

// validOrigin reports whether owner/repo may be written into
// ticketing.github: graph.ParseRepoName's charset has no quote, newline or
// colon, so a name that passes cannot extend or re-key YAML.
func validOrigin(owner, repo string) bool {
	_, err := graph.ParseRepoName(owner + "/" + repo)
	return err == nil
}

// Scaffold adopts root with the built-in default harness config: it writes
// .the-loop/harness-config.yaml when no harness config exists under either
// name, and returns ScaffoldWritten, ScaffoldPresent or ScaffoldFailed. It
// never fails its caller, nor panics into it; what went wrong is logged as
// a warning on slog.Default. owner and repo are written into
// ticketing.github only when both are plain GitHub names; anything else is
// dropped, never escaped.
//
// Whether adopting is appropriate at all (a contribution must never adopt
// its host repository) is the caller's decision.
func Scaffold(root, owner, repo string) string {
	co, err := openCheckout(root)
	if err != nil {
		slog.Warn("not adopting the repository", "root", root, "err", err)
		return ScaffoldFailed
	}
	defer co.Close()
	outcome, err := scaffold(co, graphs.DefaultHarnessConfig, owner, repo, false)
	if err != nil {
		slog.Warn("not adopting the repository", "root", root, "err", err)
	}
	return outcome
}

// scaffold is Scaffold returning its reason, with the built-in default
// read from builtin; dryRun decides without writing. Whatever goes wrong
// inside it, a panic included, is ScaffoldFailed and an error: adopting is
// best effort at every call site, and must never cost the caller its run.
func scaffold(co *repo.Checkout, builtin func() []byte, owner, repo string, dryRun bool) (outcome string, err error) {
	defer func() {
		if r := recover(); r != nil {
			outcome, err = ScaffoldFailed, fmt.Errorf("adopting failed unexpectedly: %v", r)
		}
	}()
	rel, err := findHarnessConfig(co)
	switch {
	case err != nil:
		return ScaffoldFailed, err
	case rel != "":
		return ScaffoldPresent, nil
	}
	def, err := checkedDefault(builtin)
	if err != nil {
		return ScaffoldFailed, err
	}
	if err := adoptableDir(co); err != nil {
		return ScaffoldFailed, err
	}
	if dryRun {
		return ScaffoldWritten, nil
	}
	body := provenance + withOrigin(string(def), owner, repo)
	if err := co.WriteFile(scaffoldedFile, []byte(body), 0o644); err != nil {
		return ScaffoldFailed, err
	}
	return ScaffoldWritten, nil
}

// checkedDefault is the built-in default builtin returns, refused unless
// it is a harness config that loads: a file written from a default nobody
// could read would fail every later run that reads it, where writing
// nothing leaves the per-key defaults to carry them. It is compiled into
// the program, so this fails only for a broken build.
func checkedDefault(builtin func() []byte) ([]byte, error) {
	// Departure from the original (docs/compatibility.md#the-built-in-default-is-checked-before-it-is-written): a default that does not load is not written.
	def := builtin()
	if len(bytes.TrimSpace(def)) == 0 {
		return nil, errors.New("the built-in harness config is empty")
	}
	doc, top, err := parseMapping(def, "the built-in harness config")
	if err == nil {
		err = validateDoc(harnessSchema, doc, "the built-in harness config", top)
	}
	if err != nil {
		return nil, fmt.Errorf("the built-in harness config does not load: %w", err)
	}
	return def, nil
}

// adoptableDir refuses a .the-loop that is a symlink, or anything but a
// directory: a cloned repository carries whatever its contributors
// committed, and a constant name is not a constant destination.
func adoptableDir(co *repo.Checkout) error {
	// Departure from the original (docs/compatibility.md#a-the-loop-linked-inside-the-checkout): no write through a link, even one that stays inside.
	fi, err := co.Lstat(ConfigDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("inspect %s: %w", ConfigDir, repo.Cause(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink; the-loop only writes its config into a real directory inside the checkout", ConfigDir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", ConfigDir)
	}
	return nil
}

// openCheckout opens root as a checkout, as an error a caller can print.
func openCheckout(root string) (*repo.Checkout, error) {
	co, err := repo.Open(root)
	if err != nil {
		return nil, &RepoError{Path: root, Err: err}
	}
	return co, nil
}

var (
	topLevelKey = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_-]*:`)
	emptyOwner  = lazyregexp.New(`^(\s+)owner: ""\s*$`)
	emptyRepo   = lazyregexp.New(`^(\s+)repo: ""\s*$`)
)

// withOrigin names owner/repo in the template's ticketing block by a
// line-anchored replacement, bounded at the next top-level key, so every
// comment of the template survives (a YAML round trip would drop them all).
// owner/repo must be what graph.ParseRepoName takes, or the template is
// returned as it is.
func withOrigin(template, owner, repo string) string {
	if !validOrigin(owner, repo) {
		return template
	}
	lines := strings.Split(template, "\n")
	inTicketing := false
	for i, line := range lines {
		if topLevelKey.MatchString(line) {
			inTicketing = strings.HasPrefix(line, "ticketing:")
			continue
		}
		if !inTicketing {
			continue
		}
		if m := emptyOwner.FindStringSubmatch(line); m != nil {
			lines[i] = m[1] + `owner: "` + owner + `"`
		} else if m := emptyRepo.FindStringSubmatch(line); m != nil {
			lines[i] = m[1] + `repo: "` + repo + `"`
		}
	}
	return strings.Join(lines, "\n")
}
