package builtins

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// The content hooks as they were before a check streamed at scale, kept so
// that a test can run the loops on both and compare every node: the
// sections joined line by line for every heading (fmSectionsJoined), the
// mermaid blocks likewise (fmMermaidBlocksJoined), documents lowered by
// strings.ToLower, and every artifact stat'ed afresh on every node. Their
// Run methods are copies of the hooks' at that commit, with those helpers.
// (The front matter, read through graph.Files, is compared in package
// graph, document by document.)

// LegacyRegistry is the shipped hooks with validate-artifacts,
// lint-artifacts and enforces-boundaries-from as they were.
func LegacyRegistry() graph.Registry { return legacyRegistry{} }

type legacyRegistry struct{}

func (legacyRegistry) Lookup(name string) (graph.Hook, bool) {
	switch name {
	case validateArtifactsName:
		return legacyValidateArtifacts{}, true
	case lintArtifactsName:
		return legacyLintArtifacts{}, true
	case enforcesBoundariesName:
		return legacyEnforcesBoundaries{}, true
	}
	return registry{}.Lookup(name)
}

func (legacyRegistry) Names() []string { return registry{}.Names() }

type legacyValidateArtifacts struct{ validateArtifacts }

type legacyLintArtifacts struct{ lintArtifacts }

type legacyEnforcesBoundaries struct{ enforcesBoundaries }

// legacyResolveSlots is resolveSlots stat'ing every candidate afresh.
func legacyResolveSlots(ctx *graph.Context, entries []string) []artifactSlot {
	files := graph.DirectFiles(ctx.Checkout)
	slots := make([]artifactSlot, 0, len(entries))
	for _, entry := range entries {
		var slot artifactSlot
		for _, name := range graph.ArtifactNames(entry) {
			p := path.Join(ctx.WorkItem.Dir, name)
			slot.Names = append(slot.Names, name)
			slot.Candidates = append(slot.Candidates, p)
			fi, err := files.Stat(p)
			switch {
			case err == nil && fi.Mode().IsRegular():
				slot.Present = append(slot.Present, p)
			case errors.Is(err, repo.ErrOutside):
				slot.Outside = append(slot.Outside, p)
			}
		}
		slots = append(slots, slot)
	}
	return slots
}

func (legacyValidateArtifacts) Run(ctx *graph.Context) (graph.Result, error) {
	params := ctx.Params
	if reason := legacyDormantReason(ctx); reason != "" {
		return graph.Skip(validateArtifactsName, reason), nil
	}
	checks := artifactChecks(params)

	produced := legacyResolveSlots(ctx, nodeProduces(ctx))
	slots := append(slices.Clone(produced), legacyResolveSlots(ctx, checks.Validates)...)
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
		findings = append(findings, legacyCheckArtifactContent(ctx, p, checks)...)
	}
	if len(findings) > 0 {
		return graph.Block(validateArtifactsName, findings...), nil
	}
	if plannedAbsences > 0 && len(paths) == 0 {
		// Nothing to assert against: a skip, never a minted pass.
		return graph.Skip(validateArtifactsName, "artifact(s) authored by a declared-skipped node; absence is planned"), nil
	}
	return graph.Pass(validateArtifactsName, map[string]any{"artifacts": append([]string{}, paths...)}), nil
}

// dormantReason says why an onlyWhenSkipped entry does not apply, or "" when
// it does. The entry applies only while every named artifact is a planned
// absence: declared skipped and not on disk. It can only narrow what is
// gated, since SkippedArtifacts comes from the graph's skippable vocabulary;
// and presence wins, so an existing artifact is gated where it is declared.
func legacyDormantReason(ctx *graph.Context) string {
	declared := ctx.Params["onlyWhenSkipped"]
	if !pythonTruthy(declared) {
		return ""
	}
	slots := legacyResolveSlots(ctx, slotEntries(declared))
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
func legacyCheckArtifactContent(ctx *graph.Context, path string, checks ArtifactChecks) []graph.Message {
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
		found := fmSectionsJoined(body)
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

func (legacyLintArtifacts) Run(ctx *graph.Context) (graph.Result, error) {
	var paths []string
	for _, slot := range legacyResolveSlots(ctx, nodeProduces(ctx)) {
		paths = append(paths, slot.Present...)
	}
	if len(paths) == 0 {
		return graph.Skip(lintArtifactsName, "no artifacts to lint"), nil
	}
	diagrams := true
	if v, set := ctx.Params["diagrams"]; set {
		diagrams = pythonTruthy(v)
	}
	limit, _ := wholeNumber(ctx.Params["maxLineLength"])

	var findings []graph.Message
	for _, p := range paths {
		text, err := ctx.Files.Text(p)
		if err != nil {
			findings = append(findings, findingAt(p, "artifact could not be read: %v", err))
			continue
		}
		if diagrams {
			findings = append(findings, legacyLintMermaid(text, p)...)
		}
		if limit > 0 {
			findings = append(findings, lintLineLength(text, p, limit)...)
		}
	}
	if len(findings) > 0 {
		return graph.Block(lintArtifactsName, findings...), nil
	}
	return graph.Pass(lintArtifactsName, nil), nil
}

// lintMermaid checks every mermaid block of text. Messages name the block by
// the line of its opening fence and carry the offending line.
func legacyLintMermaid(text, rel string) []graph.Message {
	var out []graph.Message
	at := func(line int, format string, args ...any) {
		out = append(out, onLine(findingAt(rel, format, args...), line, 0))
	}
	for _, block := range fmMermaidBlocksJoined(text) {
		if fmTrim(block.Body) == "" {
			at(block.Line, "mermaid block at line %d is empty", block.Line)
			continue
		}
		for _, issue := range checkMermaid(block.Body) {
			at(block.Line+issue.Line, "mermaid block at line %d: %s", block.Line, issue.Msg)
		}
		for i, line := range strings.Split(block.Body, "\n") {
			if backtickLabel.MatchString(line) {
				at(block.Line+1+i, "mermaid block at line %d: a backtick inside a node label breaks rendering; use plain text", block.Line)
			}
		}
	}
	return out
}

func (legacyEnforcesBoundaries) Run(ctx *graph.Context) (graph.Result, error) {
	upstream := ctx.Params["upstream"]
	if !pythonTruthy(upstream) {
		return graph.Skip(enforcesBoundariesName, "no upstream artifact declared"), nil
	}
	var ups []string
	for _, slot := range legacyResolveSlots(ctx, slotEntries(upstream)) {
		ups = append(ups, slot.Present...)
	}
	// Gate on what the node declares, read what is present: a declared but
	// missing downstream leaves nothing to answer with, and blocks.
	slots := legacyResolveSlots(ctx, nodeProduces(ctx))
	var downs []string
	for _, slot := range slots {
		downs = append(downs, slot.Present...)
	}
	if len(ups) == 0 || len(slots) == 0 {
		return graph.Skip(enforcesBoundariesName, "upstream or downstream artifact absent"), nil
	}

	upBody, failed := legacyJoinedBodies(ctx, ups)
	downBody, failedDown := legacyJoinedBodies(ctx, downs)
	if failed = append(failed, failedDown...); len(failed) > 0 {
		return graph.Block(enforcesBoundariesName, failed...), nil
	}

	where := ctx.WorkItem.Dir
	if len(downs) > 0 {
		where = downs[0]
	} else if len(slots[0].Candidates) > 0 {
		where = slots[0].Candidates[0]
	}
	var missing []graph.Message
	for _, marker := range sectionParam(ctx.Params["markers"]) {
		m := strings.ToLower(marker)
		if strings.Contains(upBody, m) && !strings.Contains(downBody, m) {
			// No line: the finding is about what the downstream artifact
			// lacks; the line that names the marker is in another file.
			missing = append(missing, findingAt(where, "boundary named upstream is unanswered here: %s", marker))
		}
	}
	if len(missing) > 0 {
		return graph.Block(enforcesBoundariesName, missing...), nil
	}
	return graph.Pass(enforcesBoundariesName, nil), nil
}

// joinedBodies is the lower-cased bodies (front matter removed) of paths,
// joined by newlines, and a finding for each file that could not be read.
func legacyJoinedBodies(ctx *graph.Context, paths []string) (string, []graph.Message) {
	var bodies []string
	var failed []graph.Message
	for _, p := range paths {
		_, body, err := ctx.Files.FrontMatter(p)
		if err != nil {
			failed = append(failed, findingAt(p, "artifact could not be read: %v", err))
			continue
		}
		bodies = append(bodies, body)
	}
	return strings.ToLower(strings.Join(bodies, "\n")), failed
}
