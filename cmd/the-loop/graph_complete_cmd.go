package main

// GraphCompleteCmd is `the-loop graph complete`.
type GraphCompleteCmd struct {
	Item  string `arg:"" predictor:"item" help:"Work item id."`
	Node  string `help:"The node the claim is about (default: the current node)." placeholder:"NODE"`
	Actor string `help:"Who is claiming completion." placeholder:"WHO"`
	JSONFormat
	LoopFlags
	RefFlag
	EventFlags
}

func (c *GraphCompleteCmd) Help() string {
	return `A completion claim carries no verdict: it runs the current node's exit
chain under the work item's lock. The result is one JSON object:
{node, status, outcome, moved, currentNode, messages, reason}. A refusal, a
block or "busy" (another process holds the lock) is an answer, so the exit
code is 0; 2 means it could not run at all.`
}

func (c *GraphCompleteCmd) Run(g *Globals, out *Output) error {
	e, sel, ev, err := g.engineWithEvent(out, c.LoopFlags, c.Ref, c.EventFlags, true)
	if err != nil {
		return err
	}
	res, err := e.Complete(c.Item, c.Node, c.Actor, sel, ev)
	if err != nil {
		return err
	}
	return writeJSON(out, res)
}
