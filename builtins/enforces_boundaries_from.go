package builtins

import (
	"strings"

	"github.com/the-loop/the-loop/graph"
)

const enforcesBoundariesName = "enforces-boundaries-from"

func init() { register(enforcesBoundariesName, enforcesBoundaries{}) }

// enforcesBoundaries is the enforces-boundaries-from hook: every trust
// boundary raised upstream must be answered downstream.
//
// with.upstream names the upstream artifact (alternatives a|b allowed; every
// present name is read, so a marker raised in either must be answered), and
// with.markers the phrases to follow, matched case-insensitively in the
// documents' bodies. A marker found upstream but not in the node's own
// produced artifacts blocks. A declared downstream artifact that is missing
// answers nothing, so it blocks too. With no upstream on disk, or a node that
// produces nothing, the hook skips.
type enforcesBoundaries struct{}

var (
	_ graph.Hook         = enforcesBoundaries{}
	_ graph.ParamChecker = enforcesBoundaries{}
)

var enforcesBoundariesParams = hookParams{
	hook: enforcesBoundariesName,
	rules: map[string]paramRule{
		"upstream": {want: "an artifact name (alternatives separated by |)", check: ruleArtifactRef},
		"markers":  {want: "a list of marker phrases", check: ruleStringList},
	},
}

func (enforcesBoundaries) CheckParams(params map[string]any) error {
	return enforcesBoundariesParams.check(params)
}

func (enforcesBoundaries) Run(ctx *graph.Context) (graph.Result, error) {
	upstream := ctx.Params["upstream"]
	if !pythonTruthy(upstream) {
		return graph.Skip(enforcesBoundariesName, "no upstream artifact declared"), nil
	}
	var ups []string
	for _, slot := range resolveSlots(ctx, slotEntries(upstream)) {
		ups = append(ups, slot.Present...)
	}
	// Gate on what the node declares, read what is present: a declared but
	// missing downstream leaves nothing to answer with, and blocks.
	slots := resolveSlots(ctx, nodeProduces(ctx))
	var downs []string
	for _, slot := range slots {
		downs = append(downs, slot.Present...)
	}
	if len(ups) == 0 || len(slots) == 0 {
		return graph.Skip(enforcesBoundariesName, "upstream or downstream artifact absent"), nil
	}

	upBody, failed := joinedBodies(ctx, ups)
	downBody, failedDown := joinedBodies(ctx, downs)
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
func joinedBodies(ctx *graph.Context, paths []string) (string, []graph.Message) {
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
