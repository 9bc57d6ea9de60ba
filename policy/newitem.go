package policy

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/lazyregexp"
	"github.com/the-loop/the-loop/repo"
)

// NewItemOptions choose what NewItem drafts. The zero value drafts
// requirements.md and writes.
type NewItemOptions struct {
	// Bugfix drafts bugfix.md where the loop accepts it in place of
	// requirements.md.
	Bugfix bool
	// DryRun reports what would be written, and writes nothing.
	DryRun bool
}

// NewItemReport is what NewItem wrote, or with DryRun would write.
type NewItemReport struct {
	// Item is the work item's id, Dir its folder, repository-relative.
	Item string `json:"item"`
	Dir  string `json:"dir"`
	// Loop is the loop whose gates the drafts were made for.
	Loop string `json:"loop"`
	// SpecDir is the spec directory, repository-relative, and
	// SpecDirCreated whether NewItem created it.
	SpecDir        string `json:"specDir"`
	SpecDirCreated bool   `json:"specDirCreated"`
	// Drafts are the files written into Dir, in the order the loop
	// reaches them.
	Drafts []Draft `json:"drafts"`
	// NotDrafted are the artifacts of phases an item walks only by
	// choice, which a new item starts without.
	NotDrafted []OptionalArtifact `json:"notDrafted"`
	DryRun     bool               `json:"dryRun"`
}

// OptionalArtifact is an artifact of a phase an item walks only when
// someone writes it, or ticks the phase at phase-selection.
type OptionalArtifact struct {
	Name string `json:"name"`
	Node string `json:"node"`
}

// Draft is one artifact of a new work item.
type Draft struct {
	// Name is the file's name in the work item's folder.
	Name string `json:"name"`
	// Node is the node that authors it.
	Node string `json:"node"`
	// Sections are the headings the loop's gates look for, each with a
	// placeholder line under it.
	Sections []string `json:"sections"`
	// LockedAt is the first node that wants it status: approved, "" for
	// none.
	LockedAt string `json:"lockedAt,omitempty"`
}

// ErrItemExists is wrapped by NewItem when something in the spec
// directory already has the new work item's name.
var ErrItemExists = errors.New("already exists")

// bugfixArtifact is the name a bug's first spec artifact goes by, in
// place of requirements.md.
const bugfixArtifact = "bugfix.md"

// newID is the id a new item may take: one a shell, a URL and a branch
// name carry unquoted. Existing folders are read whatever their names;
// only new ones are held to it.
var newID = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// NewItem starts the work item id: it creates the item's folder in the
// spec directory and drafts in it every artifact the loop's gates will
// ask for, each with the sections they look for, a placeholder line under
// each, and status: draft. An id that cannot name a folder, or a name
// already taken, is refused before anything is written. NewItem adopts
// nothing: without a harness config the default spec directory is used,
// and the config is left for init, or the first verb that moves the item,
// to write.
func (e *Engine) NewItem(id string, opts NewItemOptions) (*NewItemReport, error) {
	if !newID.MatchString(id) || !repo.ValidID(id) {
		return nil, fmt.Errorf("work item id %q: want a folder name of letters, digits, '.', '_' and '-' that starts with a letter or digit, such as issue-42 or add-oauth-login", id)
	}
	if slices.Contains(strings.Split(e.SpecDirRel(), "/"), ".git") {
		// git's own directory holds its hooks and config: nothing the
		// repository's config names there is a place to write.
		return nil, fmt.Errorf("the spec directory %s is inside .git; new writes no work item there (set workflow.specDir in %s)", e.SpecDirRel(), cmp.Or(e.Harness.File(), ConfigDir+"/"+HarnessConfigFile))
	}
	// A new item has no state to name another loop, so it walks the
	// work-item loop. The shipped loop is read rather than this
	// repository's extension of it: a repository appends only x- hooks,
	// which cannot change what validate-artifacts asks for, and loading
	// them would run the repository's code for nothing.
	name := Selector{}.Loop()
	g, err := Loop(name)
	if err != nil {
		return nil, err
	}
	plan, err := planDrafts(g, opts.Bugfix)
	if err != nil {
		return nil, err
	}
	rep := &NewItemReport{Item: id, Dir: e.Checkout.ItemDir(id), Loop: name, SpecDir: e.SpecDirRel(), DryRun: opts.DryRun,
		Drafts: []Draft{}, NotDrafted: append([]OptionalArtifact{}, plan.optional...)}
	texts := make([][]byte, len(plan.drafts))
	for i, d := range plan.drafts {
		rep.Drafts = append(rep.Drafts, d.report())
		if texts[i], err = d.render(); err != nil {
			return nil, err
		}
	}
	if err := refuseTaken(e.Checkout, id, rep.Dir); err != nil {
		return nil, err
	}
	if ok, err := e.Checkout.Exists(rep.SpecDir); err != nil {
		return nil, fmt.Errorf("the spec directory %s: %w", rep.SpecDir, repo.Cause(err))
	} else if !ok {
		rep.SpecDirCreated = true
	}
	if opts.DryRun {
		return rep, nil
	}
	if err := e.Checkout.MkdirAll(rep.SpecDir); err != nil {
		return nil, fmt.Errorf("create the spec directory: %w", err)
	}
	// The folder is made exclusively: of two runs starting the same item,
	// one writes and the other is refused, never both into one folder.
	if err := e.Checkout.Mkdir(rep.Dir); errors.Is(err, fs.ErrExist) {
		return nil, taken(id, rep.Dir)
	} else if err != nil {
		return nil, fmt.Errorf("work item %q: %w", id, err)
	}
	for i, d := range plan.drafts {
		if err := e.Checkout.WriteFile(path.Join(rep.Dir, d.name), texts[i], 0o644); err != nil {
			return nil, fmt.Errorf("work item %q: %w", id, err)
		}
	}
	return rep, nil
}

// refuseTaken refuses a name something in the spec directory already has:
// a folder, a file, or a link, wherever it leads.
func refuseTaken(co *repo.Checkout, id, dir string) error {
	_, err := co.Lstat(dir)
	switch {
	case err == nil:
		return taken(id, dir)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return fmt.Errorf("work item %q: %w", id, err)
}

func taken(id, dir string) error {
	return fmt.Errorf("work item %q: %s %w; nothing was written: a new work item needs an id no folder has", id, dir, ErrItemExists)
}

// draftPlan is what a new item starts with on one loop.
type draftPlan struct {
	drafts   []*draft
	optional []OptionalArtifact
}

// draft is one artifact to write and what the loop's gates ask of it.
type draft struct {
	name     string
	entry    string // the produces entry it fills, "requirements.md|bugfix.md"
	author   string // the node that produces it first
	sections []draftSection
	lockedAt string
	// frontMatter are the values a gate compares, written as it wants them.
	frontMatter map[string]any
}

type draftSection struct {
	title string
	// tickedAt is the node that wants every box of it ticked, "" for none.
	tickedAt string
}

func (d *draft) report() Draft {
	r := Draft{Name: d.name, Node: d.author, Sections: []string{}, LockedAt: d.lockedAt}
	for _, s := range d.sections {
		r.Sections = append(r.Sections, s.title)
	}
	return r
}

// planDrafts reads g for what a new item should hold: every artifact a
// node of the default walk produces, and what every validate-artifacts
// entry of that walk asks of it. The default walk leaves out opt-in
// nodes, off unless ticked at phase-selection, and optional ones: an
// optional node counts as entered when its artifact exists, so drafting
// brainstorm.md would send every item through brainstorming. A skippable
// node is walked until someone declares the skip, so its artifact is
// drafted (testing-plan.md): a missing one would block test-planning, and
// an item that skips the phase deletes the draft with the decision.
// Artifacts a node only validates (the execution log the review nodes
// read) are not drafted: they are written as the work happens, and
// their gates lock nothing, so a placeholder would pass them. bugfix picks
// bugfix.md where an entry accepts it.
func planDrafts(g *graph.Graph, bugfix bool) (draftPlan, error) {
	var plan draftPlan
	walked := func(n *graph.Node) bool { return !n.OptIn && !n.Optional }
	// An entry reads a draft when it accepts the draft's name, as the
	// gate resolving the entry would find the file.
	find := func(entry string) *draft {
		names := graph.ArtifactNames(entry)
		for _, d := range plan.drafts {
			if slices.Contains(names, d.name) {
				return d
			}
		}
		return nil
	}
	for _, n := range g.Nodes {
		for _, entry := range n.Produces {
			if find(entry) != nil {
				continue
			}
			if !walked(n) {
				if !slices.ContainsFunc(plan.optional, func(o OptionalArtifact) bool { return slices.Contains(graph.ArtifactNames(entry), o.Name) }) {
					plan.optional = append(plan.optional, OptionalArtifact{Name: graph.ArtifactNames(entry)[0], Node: n.ID})
				}
				continue
			}
			plan.drafts = append(plan.drafts, &draft{name: pickName(entry, bugfix), entry: entry, author: n.ID})
		}
	}
	// An artifact an optional node authors and a walked one also produces
	// is drafted all the same.
	plan.optional = slices.DeleteFunc(plan.optional, func(o OptionalArtifact) bool { return find(o.Name) != nil })
	if bugfix && !slices.ContainsFunc(plan.drafts, func(d *draft) bool { return d.name == bugfixArtifact }) {
		return draftPlan{}, fmt.Errorf("the %s loop accepts no %s: its first spec artifact is %s", g.Name, bugfixArtifact, firstDraftName(plan))
	}
	for _, n := range g.Nodes {
		if !walked(n) {
			continue
		}
		for _, ce := range slices.Concat(n.Entry, n.Exit) {
			checks, ok := builtins.ArtifactChecksOf(ce)
			// An onlyWhenSkipped entry applies only while an artifact is
			// missing by a declared skip; a new item has declared none.
			if !ok || len(checks.OnlyWhenSkipped) > 0 {
				continue
			}
			for _, entry := range slices.Concat(n.Produces, checks.Validates) {
				if d := find(entry); d != nil {
					d.ask(n.ID, checks)
				}
			}
		}
	}
	return plan, nil
}

// ask adds what one gate at node asks of d.
func (d *draft) ask(node string, checks builtins.ArtifactChecks) {
	if checks.Locked && d.lockedAt == "" {
		d.lockedAt = node
	}
	for k, v := range checks.FrontMatter {
		if d.frontMatter == nil {
			d.frontMatter = map[string]any{}
		}
		d.frontMatter[k] = v
	}
	for _, title := range checks.Sections {
		if !slices.ContainsFunc(d.sections, func(s draftSection) bool { return s.title == title }) {
			d.sections = append(d.sections, draftSection{title: title})
		}
	}
	if !checks.Checkmarks {
		return
	}
	// The boxes go where the ticking will be: the sections this gate
	// names, or every section when it names none.
	for i, s := range d.sections {
		if s.tickedAt == "" && (len(checks.Sections) == 0 || slices.Contains(checks.Sections, s.title)) {
			d.sections[i].tickedAt = node
		}
	}
}

// pickName is the name a draft of entry goes by: bugfix.md when asked
// for and accepted, else the first name the entry accepts.
func pickName(entry string, bugfix bool) string {
	names := graph.ArtifactNames(entry)
	if bugfix && slices.Contains(names, bugfixArtifact) {
		return bugfixArtifact
	}
	return names[0]
}

func firstDraftName(plan draftPlan) string {
	if len(plan.drafts) == 0 {
		return "none"
	}
	return plan.drafts[0].entry
}

// Placeholders. validate-artifacts reads a section that still holds one
// (builtins.DraftMarker) as unwritten, so a draft does not pass by being
// approved unread; its status, draft until someone sets approved, and in a
// section whose boxes a gate counts, an unticked box, say so too.
const (
	placeholder    = "_" + builtins.DraftMarker + " with the section's text._"
	boxPlaceholder = "- [ ] " + builtins.DraftMarker + " with the section's items, one box each; %s waits until every box is ticked."
)

// render is the draft's text: front matter, a note on how to finish it,
// and each section with its placeholder.
func (d *draft) render() ([]byte, error) {
	var b strings.Builder
	b.WriteString("---\nstatus: draft\n")
	if fm := maps.Clone(d.frontMatter); len(fm) > 0 {
		// status is the lock, and a draft is not locked.
		delete(fm, "status")
		if len(fm) > 0 {
			out, err := yaml.Marshal(fm)
			if err != nil {
				return nil, fmt.Errorf("draft %s: front matter: %w", d.name, err)
			}
			b.Write(out)
		}
	}
	b.WriteString("---\n\n")
	b.WriteString("<!-- Drafted by `the-loop new`: write each section in place of its\n     placeholder line.")
	if d.lockedAt != "" {
		fmt.Fprintf(&b, " Once the document has been reviewed, set\n     status: approved; %s holds the item until then.", d.lockedAt)
	}
	b.WriteString(" -->\n")
	for _, s := range d.sections {
		fmt.Fprintf(&b, "\n## %s\n\n", s.title)
		if s.tickedAt != "" {
			fmt.Fprintf(&b, boxPlaceholder+"\n", s.tickedAt)
		} else {
			b.WriteString(placeholder + "\n")
		}
	}
	return []byte(b.String()), nil
}
