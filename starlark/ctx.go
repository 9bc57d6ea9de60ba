package starlark

import (
	"fmt"
	"path"
	"slices"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/the-loop/the-loop/graph"
)

// ctxAttrs are ctx's attribute names, sorted.
var ctxAttrs = []string{
	"artifacts", "boundary", "changed", "config", "decisions", "hook", "loop",
	"node", "params", "repo", "results", "work_item",
}

// ctxValue is the ctx a hook is called with: a read-only view of the
// graph.Context. Its attributes are built on first use and frozen, so a
// hook that never looks at ctx.config pays nothing for it. A ctxValue
// belongs to one call, on one goroutine.
type ctxValue struct {
	hook  string
	gctx  *graph.Context
	repo  *repoValue
	cache map[string]sl.Value
}

var _ sl.HasAttrs = (*ctxValue)(nil)

func newContext(hook string, gctx *graph.Context, repo *repoValue) *ctxValue {
	return &ctxValue{hook: hook, gctx: gctx, repo: repo, cache: map[string]sl.Value{}}
}

func (c *ctxValue) String() string        { return fmt.Sprintf("<ctx %s>", c.hook) }
func (c *ctxValue) Type() string          { return "ctx" }
func (c *ctxValue) Freeze()               {}
func (c *ctxValue) Truth() sl.Bool        { return sl.True }
func (c *ctxValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: ctx") }
func (c *ctxValue) AttrNames() []string   { return ctxAttrs }

func (c *ctxValue) Attr(name string) (sl.Value, error) {
	if name == "repo" {
		return c.repo, nil // without the map: a rule over a tree names it per file
	}
	if v, ok := c.cache[name]; ok {
		return v, nil
	}
	if _, ok := slices.BinarySearch(ctxAttrs, name); !ok {
		return nil, nil
	}
	v, err := c.build(name)
	if err != nil {
		return nil, fmt.Errorf("ctx.%s: %w", name, err)
	}
	v.Freeze()
	c.cache[name] = v
	return v, nil
}

func (c *ctxValue) build(name string) (sl.Value, error) {
	g := c.gctx
	switch name {
	case "hook":
		return sl.String(c.hook), nil
	case "params":
		return toStarlark(orEmpty(g.Params))
	case "boundary":
		return sl.String(g.Boundary), nil
	case "loop":
		if g.Graph == nil {
			return sl.String(""), nil
		}
		return sl.String(g.Graph.Name), nil
	case "node":
		return nodeValue(g.Node), nil
	case "work_item":
		w := g.WorkItem
		return newStruct("work_item", sl.StringDict{
			"id":           sl.String(w.ID),
			"ref":          sl.String(w.Ref),
			"spec_dir":     sl.String(w.Dir),
			"risk_tier":    sl.MakeInt(w.RiskTier),
			"tags":         stringTuple(w.Tags),
			"current_node": sl.String(w.CurrentNode),
		}), nil
	case "artifacts":
		return c.artifacts(), nil
	case "decisions":
		return toStarlark(orEmpty(g.Decisions))
	case "config":
		return toStarlark(orEmpty(g.Config))
	case "results":
		out := make(sl.Tuple, len(g.Results))
		for i, r := range g.Results {
			v, err := resultValue(r)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case "changed":
		if g.Changed == nil {
			return sl.None, nil
		}
		paths := make([]sl.Value, len(g.Changed))
		for i, p := range g.Changed {
			paths[i] = sl.String(p)
		}
		l := sl.NewList(paths)
		l.Freeze()
		return l, nil
	case "repo":
		return c.repo, nil
	}
	return nil, fmt.Errorf("no attribute %s", name)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func newStruct(name string, d sl.StringDict) *starlarkstruct.Struct {
	s := starlarkstruct.FromStringDict(sl.String(name), d)
	s.Freeze()
	return s
}

func stringTuple(ss []string) sl.Tuple {
	t := make(sl.Tuple, len(ss))
	for i, s := range ss {
		t[i] = sl.String(s)
	}
	return t
}

func nodeValue(n *graph.Node) sl.Value {
	if n == nil {
		return sl.None
	}
	return newStruct("node", sl.StringDict{
		"id":           sl.String(n.ID),
		"phase":        sl.String(n.Phase),
		"actor":        sl.String(n.Actor),
		"description":  sl.String(n.Description),
		"produces":     stringTuple(n.Produces),
		"required":     sl.Bool(n.Required),
		"optional":     sl.Bool(n.Optional),
		"skippable":    sl.Bool(n.Skippable),
		"opt_in":       sl.Bool(n.OptIn),
		"terminal":     sl.Bool(n.Terminal),
		"max_attempts": sl.MakeInt(n.MaxAttempts),
	})
}

// artifacts maps each name the node produces (either alternative of an
// "a.md|b.md" entry) that exists in the spec folder to its repo-relative
// path.
func (c *ctxValue) artifacts() sl.Value {
	d := sl.NewDict(0)
	g := c.gctx
	if g.Node == nil || g.WorkItem.Dir == "" {
		return d
	}
	var names []string
	for _, entry := range g.Node.Produces {
		names = append(names, graph.ArtifactNames(entry)...)
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		rel := path.Join(g.WorkItem.Dir, name)
		if _, err := g.Files.Kind(rel); err != nil {
			continue
		}
		_ = d.SetKey(sl.String(name), sl.String(rel))
	}
	return d
}

// resultValue is an earlier result in the chain, as ctx.results shows it.
func resultValue(r graph.Result) (sl.Value, error) {
	msgs := make(sl.Tuple, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = &messageValue{m}
	}
	var data sl.Value = sl.None
	if r.Data != nil {
		d, err := toStarlark(r.Data)
		if err != nil {
			return nil, err
		}
		data = d
	}
	return newStruct("result", sl.StringDict{
		"hook":      sl.String(r.Hook),
		"status":    sl.String(r.Status),
		"outcome":   sl.String(r.Outcome()),
		"messages":  msgs,
		"data":      data,
		"retriable": sl.Bool(r.Retriable),
	}), nil
}
