package policy

import (
	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
)

// GraphDescription is a compiled loop as data, for `graph show --format json`.
type GraphDescription struct {
	Version  int                 `json:"version"`
	Name     string              `json:"name"`
	Start    string              `json:"start"`
	SkipSets map[string][]string `json:"skipSets"`
	Nodes    []NodeDescription   `json:"nodes"`
	Edges    []graph.Edge        `json:"edges"`
}

// NodeDescription is one node as data; its keys are the original tool's.
type NodeDescription struct {
	ID          string       `json:"id"`
	Phase       string       `json:"phase"`
	Actor       string       `json:"actor"`
	Produces    []string     `json:"produces"`
	Command     string       `json:"command"`
	Stage       string       `json:"stage"`
	Session     string       `json:"session"`
	Required    bool         `json:"required"`
	Optional    bool         `json:"optional"`
	Skippable   bool         `json:"skippable"`
	OptIn       bool         `json:"optIn"`
	Description string       `json:"description"`
	MaxAttempts int          `json:"maxAttempts"`
	Terminal    bool         `json:"terminal"`
	Entry       []ChainEntry `json:"entry"`
	Exit        []ChainEntry `json:"exit"`
}

// ChainEntry is one hook of a chain as data.
type ChainEntry struct {
	Hook string         `json:"hook"`
	With map[string]any `json:"with,omitempty"`
}

// DescribeGraph renders g as data, nodes and edges in declaration order.
func DescribeGraph(g *graph.Graph) GraphDescription {
	d := GraphDescription{Version: g.Version, Name: g.Name, Start: g.Start, SkipSets: map[string][]string{}, Edges: g.Edges}
	for _, s := range g.SkipSets {
		d.SkipSets[s.Name] = s.Nodes
	}
	for _, n := range g.Nodes {
		d.Nodes = append(d.Nodes, NodeDescription{
			ID: n.ID, Phase: n.Phase, Actor: n.Actor, Produces: nonNil(n.Produces), Command: n.Command, Stage: n.Stage,
			Session: n.Session, Required: n.Required, Optional: n.Optional, Skippable: n.Skippable, OptIn: n.OptIn,
			Description: n.Description, MaxAttempts: n.MaxAttempts, Terminal: n.Terminal,
			Entry: describeChain(n.Entry), Exit: describeChain(n.Exit),
		})
	}
	return d
}

func describeChain(c []graph.ChainEntry) []ChainEntry {
	out := make([]ChainEntry, len(c))
	for i, e := range c {
		out[i] = ChainEntry{Hook: e.Hook}
		if len(e.Params) > 0 {
			out[i].With = e.Params
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// HooksReport is what `graph hooks` lists. It is built without executing
// anything a repository declares. Its first three keys, shipped, modules
// and attach, are the original tool's, in its shapes, so that what reads
// the original's listing reads this one.
type HooksReport struct {
	Shipped []string           `json:"shipped"`
	Modules []ListedModule     `json:"modules"`
	Attach  []ListedAttachment `json:"attach"`
	// Departure from the original (docs/compatibility.md#the-json-adds-the-kill-switch-and-the-faults): the listing also says whether this machine runs what it lists, and what is wrong with it.
	//
	// RepoHooks is false when this machine refuses repository hooks.
	RepoHooks bool `json:"repoHooks"`
	// Executed is always false: listing runs nothing.
	Executed bool `json:"executed"`
	// Warnings and Errors are what can be told of the declaration without
	// reading its modules (see CheckDeclaration): its shape, and its
	// attachments' nodes and boundaries.
	Warnings []Diagnostic `json:"warnings"`
	Errors   []Diagnostic `json:"errors"`
	// File is the harness config the declaration was read from,
	// repository-relative; empty when there is none.
	File   string `json:"-"`
	faults []*graph.ConfigError
}

// ListedModule is one graph.hooks.modules entry as graph hooks lists it:
// both keys are always there, and the one the entry does not give is "".
type ListedModule struct {
	Path   string `json:"path"`
	Module string `json:"module"`
}

// Label names the module in the listing: its path, else its dotted name.
func (m ListedModule) Label() string { return ModuleRef{Path: m.Path, Module: m.Module}.Label() }

// ListedAttachment is one graph.hooks.attach entry as graph hooks lists
// it. Boundary is filled in ("exit" when the entry names none) and With is
// never nil: an attachment without parameters lists {}.
type ListedAttachment struct {
	Hook     string         `json:"hook"`
	Node     string         `json:"node"`
	Boundary string         `json:"boundary"`
	With     map[string]any `json:"with"`
}

// Empty reports whether the repository declares no hooks.
func (r HooksReport) Empty() bool { return len(r.Modules) == 0 && len(r.Attach) == 0 }

// Err is every error in Errors, joined; nil when there is none.
func (r HooksReport) Err() error { return DeclarationReport{faults: r.faults}.Err() }

// Hooks lists the shipped hooks and what the repository declares, executing
// none of it, so an operator can inspect a repository before adopting its
// code. A declaration with faults is listed as far as it reads, its faults
// in Errors; one whose modules would fail to load is listed all the same.
func (e *Engine) Hooks() (HooksReport, error) {
	c, err := e.newDeclCheck()
	if err != nil {
		return HooksReport{}, err
	}
	c.attachments()
	rep := c.finish()
	decl := c.p.Declaration
	out := HooksReport{Shipped: builtins.Registry().Names(), Modules: []ListedModule{}, Attach: []ListedAttachment{},
		RepoHooks: e.CLI.RepoHooks(), Warnings: rep.Warnings, Errors: rep.Errors, File: decl.File, faults: rep.faults}
	for _, m := range decl.Modules {
		out.Modules = append(out.Modules, ListedModule{Path: m.Path, Module: m.Module})
	}
	for _, a := range decl.Attach {
		with := a.With
		if with == nil {
			with = map[string]any{}
		}
		out.Attach = append(out.Attach, ListedAttachment{Hook: a.Hook, Node: a.Node, Boundary: a.Boundary, With: with})
	}
	return out, nil
}

// SpecDirRel is the spec root relative to the repository, slash-separated.
func (e *Engine) SpecDirRel() string { return e.Checkout.SpecDir() }
