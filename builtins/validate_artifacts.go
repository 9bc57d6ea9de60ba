package builtins

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/the-loop/the-loop/graph"
)

const validateArtifactsName = "validate-artifacts"

func init() { register(validateArtifactsName, validateArtifacts{}) }

// validateArtifacts is the validate-artifacts hook: does the node's output
// exist, and does it hold up?
//
// It resolves the node's produces, plus any with.validates (artifacts the
// node gates but did not author, such as the shared execution log), against
// the spec folder and reports every unmet requirement in one block, so the
// agent repairs them in one round:
//
//   - locked: true: the front matter says status: approved.
//   - frontMatter: {key: value}: each key's value, compared as text.
//   - sections: [title, ...]: each heading is present and owns some text.
//   - checkmarks: complete: no "- [ ]" box is left unticked.
//
// An entry may accept several names (a|b): exactly one must exist, two are
// ambiguous and block. A node that declares checks but resolves no artifact
// fails closed with a non-retriable block. An optional node that produced
// nothing was not entered and is skipped; an absence whose every name is
// authored by a declared-skipped node is planned and tolerated. With
// onlyWhenSkipped the entry applies only while that artifact is a planned
// absence.
type validateArtifacts struct{}

var (
	_ graph.Hook          = validateArtifacts{}
	_ graph.ParamChecker  = validateArtifacts{}
	_ graph.ParamPreparer = validateArtifacts{}
)

var validateArtifactsParams = hookParams{
	hook: validateArtifactsName,
	rules: map[string]paramRule{
		"locked": {want: "a boolean (true requires front matter status: approved)", check: ruleBool},
		"frontMatter": {want: "a mapping of front-matter keys to expected values", check: func(v any) (bool, error) {
			m, ok := v.(map[string]any)
			if !ok {
				return false, nil
			}
			for _, k := range slices.Sorted(maps.Keys(m)) {
				switch m[k].(type) {
				case map[string]any, []any, []string:
					return false, fmt.Errorf("%s: got %s, want a scalar to compare the front-matter value with", k, yamlTypeName(m[k]))
				}
			}
			return true, nil
		}},
		"sections": {want: "a list of section titles", check: ruleStringList},
		"checkmarks": {want: `"complete"`, check: func(v any) (bool, error) {
			s, ok := v.(string)
			if ok && s != "complete" {
				return false, fmt.Errorf("got %q, want \"complete\" (every task box ticked)", s)
			}
			return ok, nil
		}},
		"validates":       {want: "an artifact name (alternatives separated by |) or a list of them", check: ruleArtifactRef},
		"onlyWhenSkipped": {want: "an artifact name (alternatives separated by |) or a list of them", check: ruleArtifactRef},
	},
}

// ValidateArtifacts is the validate-artifacts hook's name, for a caller
// that reads what its chain entries ask (see ArtifactChecksOf).
const ValidateArtifacts = validateArtifactsName

// ArtifactChecks is what one validate-artifacts chain entry asks of the
// artifacts it reads, decoded as Run decodes it: a caller that drafts
// artifacts (the-loop new) writes what the gate will look for.
type ArtifactChecks struct {
	// Locked: front matter status: approved.
	Locked bool
	// FrontMatter: each key's value, compared as text.
	FrontMatter map[string]any
	// Sections: each heading present and owning some text; the titles are
	// trimmed, as the gate compares them.
	Sections []string
	// Checkmarks: no box left unticked.
	Checkmarks bool
	// Validates are artifacts read beside the node's produces, as produces
	// entries ("a.md|b.md").
	Validates []string
	// OnlyWhenSkipped, when set, makes the entry apply only while these
	// artifacts are absences a declared skip planned.
	OnlyWhenSkipped []string
}

// ArtifactChecksOf decodes e's with: when e is a validate-artifacts entry;
// ok is false for any other hook.
func ArtifactChecksOf(e graph.ChainEntry) (checks ArtifactChecks, ok bool) {
	if e.Hook != validateArtifactsName {
		return ArtifactChecks{}, false
	}
	return artifactChecks(e.Params), true
}

// artifactChecks reads the parameters, leniently: CheckParams has refused
// what is malformed, but Run must not trust that it ran. The gate and the
// drafts of the-loop new read them here, so they cannot disagree.
func artifactChecks(p map[string]any) ArtifactChecks {
	checks := ArtifactChecks{
		Locked:     pythonTruthy(p["locked"]),
		Checkmarks: p["checkmarks"] == "complete",
		Validates:  slotEntries(p["validates"]),
	}
	for _, title := range sectionParam(p["sections"]) {
		checks.Sections = append(checks.Sections, fmTrim(title))
	}
	if fm, isMap := p["frontMatter"].(map[string]any); isMap {
		checks.FrontMatter = fm
	}
	if pythonTruthy(p["onlyWhenSkipped"]) {
		checks.OnlyWhenSkipped = slotEntries(p["onlyWhenSkipped"])
	}
	return checks
}

// validateArtifactsChecks are the parameters that make the hook an
// assertion: declaring any of them demands something to assert against.
var validateArtifactsChecks = []string{"locked", "frontMatter", "sections", "checkmarks"}

func (validateArtifacts) CheckParams(params map[string]any) error {
	return validateArtifactsParams.check(params)
}

// PrepareParams decodes the checks once per chain entry: the hook runs at
// most nodes of every item.
func (validateArtifacts) PrepareParams(params map[string]any) any { return artifactChecks(params) }

func (validateArtifacts) Run(ctx *graph.Context) (graph.Result, error) {
	params := ctx.Params
	if reason := dormantReason(ctx); reason != "" {
		return graph.Skip(validateArtifactsName, reason), nil
	}
	checks, ok := ctx.Prepared.(ArtifactChecks)
	if !ok {
		checks = artifactChecks(params)
	}

	produced := resolveSlots(ctx, nodeProduces(ctx))
	slots := produced
	if len(checks.Validates) > 0 {
		slots = append(slices.Clip(produced), resolveSlots(ctx, checks.Validates)...)
	}
	if len(slots) == 0 {
		if slices.ContainsFunc(validateArtifactsChecks, func(k string) bool { return pythonTruthy(params[k]) }) {
			// A graph-authoring fault: re-running the node cannot repair
			// it, so the block is final rather than burning attempts.
			r := graph.Block(validateArtifactsName, findingAt(ctx.WorkItem.Dir,
				"this node checks artifact content but names no artifact to read: declare produces: on the node or validates: on this hook entry"))
			r.Retriable = false
			return r, nil
		}
		return graph.Skip(validateArtifactsName, "this node declares no artifacts"), nil
	}

	// Whether an optional node ran is judged on what it authored, when it
	// authors anything: a shared artifact it merely validates exists for
	// every work item.
	entered := produced
	if len(entered) == 0 {
		entered = slots
	}
	if ctx.Node != nil && ctx.Node.Optional && !slices.ContainsFunc(entered, func(s artifactSlot) bool { return len(s.Present) > 0 }) {
		return graph.Skip(validateArtifactsName, "optional node; no artifact was produced"), nil
	}

	var findings []graph.Message
	var paths []string
	plannedAbsences := 0
	for _, slot := range slots {
		for _, p := range slot.Outside {
			findings = append(findings, findingAt(p, "leads outside the checkout through a symbolic link; an artifact must be a file inside the repository"))
		}
		switch {
		case len(slot.Outside) > 0:
		case len(slot.Present) == 0 && plannedAbsence(ctx, slot):
			plannedAbsences++
		case len(slot.Present) == 0 && slot.alternatives():
			findings = append(findings, findingAt(ctx.WorkItem.Dir, "required artifact is missing — write one of: %s", slot.label()))
		case len(slot.Present) == 0 && len(slot.Candidates) == 1:
			findings = append(findings, findingAt(slot.Candidates[0], "required artifact is missing"))
		case len(slot.Present) == 0:
			findings = append(findings, findingAt(ctx.WorkItem.Dir, "a produces entry names no artifact"))
		case len(slot.Present) > 1:
			findings = append(findings, findingAt(ctx.WorkItem.Dir,
				"%d artifacts present where one is expected — keep one of: %s", len(slot.Present), slot.label()))
		default:
			paths = append(paths, slot.Present[0])
		}
	}

	for _, p := range paths {
		findings = append(findings, checkArtifactContent(ctx, p, checks)...)
	}
	if len(findings) > 0 {
		return graph.Block(validateArtifactsName, findings...), nil
	}
	if plannedAbsences > 0 && len(paths) == 0 {
		// Nothing to assert against: a skip, never a minted pass.
		return graph.Skip(validateArtifactsName, "artifact(s) authored by a declared-skipped node; absence is planned"), nil
	}
	if paths == nil {
		paths = []string{} // a list, never null, in a report's data
	}
	return graph.Pass(validateArtifactsName, map[string]any{"artifacts": slices.Clip(paths)}), nil
}

// plannedAbsence reports whether every name slot accepts is authored by a
// node the work item declared skipped.
func plannedAbsence(ctx *graph.Context, slot artifactSlot) bool {
	return len(slot.Names) > 0 && !slices.ContainsFunc(slot.Names, func(n string) bool { return !ctx.SkippedArtifacts[n] })
}

// dormantReason says why an onlyWhenSkipped entry does not apply, or "" when
// it does. The entry applies only while every named artifact is a planned
// absence: declared skipped and not on disk. It can only narrow what is
// gated, since SkippedArtifacts comes from the graph's skippable vocabulary;
// and presence wins, so an existing artifact is gated where it is declared.
func dormantReason(ctx *graph.Context) string {
	declared := ctx.Params["onlyWhenSkipped"]
	if !pythonTruthy(declared) {
		return ""
	}
	slots := resolveSlots(ctx, slotEntries(declared))
	if len(slots) == 0 {
		return fmt.Sprintf("onlyWhenSkipped names no artifact: %s", pythonRepr(declared))
	}
	for _, slot := range slots {
		if !plannedAbsence(ctx, slot) {
			return fmt.Sprintf("%s was not declared skipped", slot.label())
		}
		if len(slot.Present) > 0 {
			return fmt.Sprintf("%s exists; it is gated where it is declared", slot.label())
		}
	}
	return ""
}

// checkArtifactContent applies the content checks to one artifact. Each
// finding points at the line it judges, counted in the whole file: a body
// line is offset by the front matter above it.
func checkArtifactContent(ctx *graph.Context, path string, checks ArtifactChecks) []graph.Message {
	front, body, lines, err := ctx.Files.FrontMatterLines(path)
	if err != nil {
		return []graph.Message{findingAt(path, "artifact could not be read: %v", err)}
	}
	var out []graph.Message

	if checks.Locked {
		status := ""
		if v, ok := front["status"]; ok {
			status = fmTrim(pythonStr(v))
		}
		if status != "approved" {
			shown := status
			if shown == "" {
				shown = "(unset)"
			}
			out = append(out, onLine(findingAt(path, "artifact is not locked — front matter says status: %s, expected status: approved", shown),
				lines.Key("status"), 0))
		}
	}

	if want := checks.FrontMatter; want != nil {
		for _, key := range slices.Sorted(maps.Keys(want)) {
			got, present := front[key]
			if !present {
				got = nil
			}
			if pythonStr(got) != pythonStr(want[key]) {
				out = append(out, onLine(findingAt(path, "front-matter %s: expected %s, found %s", key, pythonRepr(want[key]), pythonRepr(got)),
					lines.Key(key), 0))
			}
		}
	}

	if titles := checks.Sections; len(titles) > 0 {
		found := artifactSections(ctx.Files, path, body)
		for _, title := range titles {
			i := slices.IndexFunc(found, func(s mdSection) bool { return s.Title == title })
			switch {
			case i < 0:
				out = append(out, findingAt(path, "required section is missing: %s", title))
			case found[i].Content == "":
				out = append(out, onLine(findingAt(path, "required section is empty: %s", title), lines.Body(found[i].Line), 1))
			case strings.Contains(found[i].Content, DraftMarker):
				out = append(out, onLine(findingAt(path, "required section still holds the draft's placeholder: %s", title), lines.Body(found[i].Line), 1))
			}
		}
	}

	if checks.Checkmarks {
		if n := strings.Count(body, uncheckedBox); n > 0 {
			line, col := firstUnchecked(body)
			out = append(out, onLine(findingAt(path, "%d task(s) still unticked", n), lines.Body(line), col))
		}
	}
	return out
}

// DraftMarker opens the placeholder line the-loop new writes under each
// section it drafts: a section that still holds it has not been written,
// whatever the document's status says.
const DraftMarker = "Draft: replace this line"

// uncheckedBox is a task left undone, wherever it stands on a line.
const uncheckedBox = "- [ ]"

// firstUnchecked is the line and column, from 1, of the "[ ]" of the
// first uncheckedBox in text, which must hold one: one finding stands for
// them all, and points where the list of work left begins.
func firstUnchecked(text string) (line, column int) {
	at := strings.Index(text, uncheckedBox)
	before := text[:at]
	lineStart := strings.LastIndexByte(before, '\n') + 1
	return strings.Count(before, "\n") + 1, utf8.RuneCountInString(before[lineStart:]) + len("- ") + 1
}

// sectionParam reads a list-of-titles parameter leniently: CheckParams has
// refused anything but a list of strings, but Run must not trust that it ran.
func sectionParam(v any) []string {
	switch v.(type) {
	case []string, []any:
		return slotEntries(v)
	}
	return nil
}
