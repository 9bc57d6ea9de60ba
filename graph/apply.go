package graph

import (
	"fmt"
	"maps"
	"slices"
)

// Attachment appends one repository hook to one node's chain.
type Attachment struct {
	Hook     string
	Node     string
	Boundary Boundary
	Params   map[string]any
	// File and Line locate the declaration, for errors.
	File string
	Line int
}

// Apply returns a copy of g whose nodes carry the attachments appended after
// their shipped chains, and whose hook table resolves the repository's x-
// hooks. g is not modified. Every attachment is validated with the same code
// as a shipped chain entry; a hook not in table, a node this loop does not
// declare, or a boundary other than entry or exit is a *ConfigError. Apply is
// append-only by construction: nothing here can remove or reorder a shipped
// entry.
func Apply(g *Graph, table map[string]Hook, attachments []Attachment) (*Graph, error) {
	registered := slices.Sorted(maps.Keys(table))
	for _, name := range registered {
		if !IsExtension(name) {
			return nil, &ConfigError{File: g.File, Loop: g.Name, Key: "graph.hooks",
				Msg: fmt.Sprintf("repository hook %q must be named %s<something>; the unprefixed namespace is the-loop's own", name, ExtensionPrefix)}
		}
	}
	if len(table) == 0 && len(attachments) == 0 {
		return g, nil
	}
	out := *g
	out.extensions = maps.Clone(table)
	out.Nodes = slices.Clone(g.Nodes)
	out.byID = maps.Clone(g.byID)
	for _, a := range attachments {
		fail := func(key, format string, args ...any) error {
			return &ConfigError{File: a.File, Line: a.Line, Loop: g.Name, Node: a.Node, Key: key, Msg: fmt.Sprintf(format, args...)}
		}
		if a.Boundary == "" {
			a.Boundary = Exit
		}
		if a.Boundary != Entry && a.Boundary != Exit {
			return nil, fail("graph.hooks.attach.boundary", "got %q, want entry or exit", a.Boundary)
		}
		if _, ok := table[a.Hook]; !ok {
			return nil, fail("graph.hooks.attach.hook", "%q was not registered by any declared module; registered hooks are: %s", a.Hook, orNone(registered))
		}
		i := out.Index(a.Node)
		if i < 0 {
			return nil, fail("graph.hooks.attach.node", "the %s loop declares no node %q; its nodes are: %s", g.Name, a.Node, orNone(g.NodeIDs()))
		}
		e := ChainEntry{Hook: a.Hook, Params: a.Params, Line: a.Line}
		if e.Params == nil {
			e.Params = map[string]any{}
		}
		c := compiler{file: a.File, reg: g.registry, loop: g.Name}
		if err := c.checkEntry(a.Node, a.Boundary, &e, table); err != nil {
			return nil, err
		}
		n := *out.Nodes[i]
		if a.Boundary == Entry {
			n.Entry = append(slices.Clip(n.Entry), e)
		} else {
			n.Exit = append(slices.Clip(n.Exit), e)
		}
		out.Nodes[i] = &n
		out.byID[n.ID] = &n
	}
	return &out, nil
}
