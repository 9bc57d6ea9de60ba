package builtins

import "github.com/the-loop/the-loop/graph"

func init() { register("set-phase-label", setPhaseLabel{}) }

// defaultPhaseLabelPrefix prefixes the phase label when the settings name no
// prefix.
const defaultPhaseLabelPrefix = "loop:"

// setPhaseLabel keeps the work item's phase label in sync with the node just
// entered: "<prefix><phase>" through the integration's set-labels, which
// adds it beside the other labels and, given replacePrefix, takes
// off the earlier phase's label (any other label carrying the prefix). A
// node with no phase declares no label and creates none, so labels stay
// coarse while the graph state carries the detail.
//
// Data: label (string), applied (bool); error when the call failed.
type setPhaseLabel struct{}

var (
	_ graph.Hook         = setPhaseLabel{}
	_ graph.ParamChecker = setPhaseLabel{}
)

const setPhaseLabelName = "set-phase-label"

func (setPhaseLabel) CheckParams(params map[string]any) error {
	return withRules{}.verify(setPhaseLabelName, params)
}

func (setPhaseLabel) Run(ctx *graph.Context) (graph.Result, error) {
	const name = setPhaseLabelName
	if ctx.Node == nil || ctx.Node.Phase == "" {
		return graph.Skip(name, "node declares no phase label"), nil
	}
	if ctx.ReadOnly {
		return graph.Skip(name, readOnlyReason), nil
	}
	prefix := ctx.Settings.PhaseLabelPrefix
	if prefix == "" {
		prefix = defaultPhaseLabelPrefix
	}
	label := prefix + ctx.Node.Phase
	if _, err := callOut(ctx, opSetLabels, map[string]any{"ref": ctx.WorkItem.Ref, "labels": []any{label}, "replacePrefix": prefix}); err != nil {
		obWarn(ctx, "could not set the phase label", "label", label, "error", err)
		return degradedWith(name, err, map[string]any{"label": label, "applied": false}), nil
	}
	return graph.Pass(name, map[string]any{"label": label, "applied": true}), nil
}
