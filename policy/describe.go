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
// anything a repository declares.
type HooksReport struct {
	Shipped []string `json:"shipped"`
	// Declared is the repository's graph.hooks, as written.
	Declared Declaration `json:"declared"`
	// RepoHooks is false when this machine refuses repository hooks.
	RepoHooks bool `json:"repoHooks"`
	// Executed is always false: listing runs nothing.
	Executed bool `json:"executed"`
	// Warnings and Errors are what can be told of the declaration without
	// reading its modules (see CheckDeclaration): its shape, and its
	// attachments' nodes and boundaries.
	Warnings []Diagnostic `json:"warnings"`
	Errors   []Diagnostic `json:"errors"`
	faults   []*graph.ConfigError
}

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
	if decl.Modules == nil {
		decl.Modules = []ModuleRef{}
	}
	if decl.Attach == nil {
		decl.Attach = []AttachRef{}
	}
	return HooksReport{Shipped: builtins.Registry().Names(), Declared: decl, RepoHooks: e.CLI.RepoHooks(),
		Warnings: rep.Warnings, Errors: rep.Errors, faults: rep.faults}, nil
}

// SpecDirRel is the spec root relative to the repository, slash-separated.
func (e *Engine) SpecDirRel() string { return e.Checkout.SpecDir() }
