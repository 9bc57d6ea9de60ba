package graph

// Assemble completes g, whose exported fields are a loop as Compile built
// it (but for the chain entries' Prepared), with what Compile builds
// beside them (the node and edge indexes, the first declared edge winning,
// what each hook prepares of its parameters) and reg as its hooks, and
// returns it.
// It checks nothing: it is for a loop compiled and checked when the
// program was built, as the shipped loops are (policy holds its
// generated ones equal to what Compile makes of their YAML).
func Assemble(g *Graph, reg Registry) *Graph {
	g.byID = make(map[string]*Node, len(g.Nodes))
	for _, n := range g.Nodes {
		g.byID[n.ID] = n
		prepare(n.Entry, reg)
		prepare(n.Exit, reg)
	}
	g.index = make(map[[2]string]string, len(g.Edges))
	for _, e := range g.Edges {
		if key := [2]string{e.From, e.On}; g.index[key] == "" {
			g.index[key] = e.To
		}
	}
	g.registry = reg
	return g
}

// prepare sets each entry's Prepared, as checkEntry does when a loop
// compiles: generated code can hold parameters, not what a hook makes of
// them.
func prepare(entries []ChainEntry, reg Registry) {
	if reg == nil {
		return
	}
	for i := range entries {
		if h, ok := reg.Lookup(entries[i].Hook); ok {
			prepareEntry(h, &entries[i])
		}
	}
}

// prepareEntry sets e's Prepared when its hook decodes its parameters
// ahead of time.
func prepareEntry(h Hook, e *ChainEntry) {
	if pp, ok := h.(ParamPreparer); ok {
		e.Prepared = pp.PrepareParams(e.Params)
	}
}
