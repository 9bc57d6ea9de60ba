package graph

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Compile parses and validates one loop. Every structural fault is a
// *ConfigError naming file, line, loop, node and key, so a broken graph fails
// at startup rather than three nodes into a walk. reg resolves hook names and
// checks each entry's with: parameters.
func Compile(file string, src []byte, reg Registry) (*Graph, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, &ConfigError{File: file, Line: yamlErrorLine(err), Msg: "not valid YAML", Err: err}
	}
	return compileDocument(file, &doc, reg)
}

func compileDocument(file string, doc *yaml.Node, reg Registry) (*Graph, error) {
	c := compiler{file: file, reg: reg}
	if len(doc.Content) == 0 {
		return nil, c.errAt(doc, "", "", "the graph is empty; want a mapping with nodes and edges")
	}
	return c.graph(doc.Content[0])
}

type compiler struct {
	file string
	reg  Registry
	loop string
}

func (c *compiler) errAt(n *yaml.Node, node, key, format string, args ...any) *ConfigError {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &ConfigError{File: c.file, Line: line, Loop: c.loop, Node: node, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// field is one key of a YAML mapping with the node holding its value.
type field struct {
	key   string
	keyAt *yaml.Node
	value *yaml.Node
}

func (c *compiler) mapping(n *yaml.Node, node, what string) ([]field, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil, c.errAt(n, node, "", "%s: got %s, want a mapping", what, kindName(n))
	}
	out := make([]field, 0, len(n.Content)/2)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			return nil, c.errAt(k, node, k.Value, "%s: duplicate key", what)
		}
		seen[k.Value] = true
		out = append(out, field{key: k.Value, keyAt: k, value: n.Content[i+1]})
	}
	return out, nil
}

var graphKeys = []string{"version", "name", "start", "skipSets", "nodes", "edges"}

func (c *compiler) graph(root *yaml.Node) (*Graph, error) {
	fields, err := c.mapping(root, "", "the graph")
	if err != nil {
		return nil, err
	}
	g := &Graph{File: c.file, Version: 1, byID: map[string]*Node{}, index: map[[2]string]string{}, registry: c.reg}
	var nodesAt, edgesAt, setsAt, startAt *yaml.Node
	for _, f := range fields {
		switch f.key {
		case "version":
			v, err := c.integer(f.value, "", "version")
			if err != nil {
				return nil, err
			}
			g.Version = v
		case "name":
			g.Name = f.value.Value
			c.loop = g.Name
		case "start":
			startAt = f.value
		case "nodes":
			nodesAt = f.value
		case "edges":
			edgesAt = f.value
		case "skipSets":
			setsAt = f.value
		default:
			return nil, c.errAt(f.keyAt, "", f.key, "unknown key; want one of %s", strings.Join(graphKeys, ", "))
		}
	}
	if nodesAt == nil || nodesAt.Kind != yaml.SequenceNode || len(nodesAt.Content) == 0 {
		return nil, c.errAt(orNode(nodesAt, root), "", "nodes", "the graph declares no nodes; want a list of node mappings")
	}
	for _, raw := range nodesAt.Content {
		n, err := c.node(raw)
		if err != nil {
			return nil, err
		}
		if _, dup := g.byID[n.ID]; dup {
			return nil, c.errAt(raw, n.ID, "id", "duplicate node id %q", n.ID)
		}
		g.byID[n.ID] = n
		g.Nodes = append(g.Nodes, n)
	}
	if edgesAt != nil && edgesAt.Kind != yaml.SequenceNode && edgesAt.Tag != "!!null" {
		return nil, c.errAt(edgesAt, "", "edges", "got %s, want a list of {from, to, on}", kindName(edgesAt))
	}
	if edgesAt != nil {
		for _, raw := range edgesAt.Content {
			if err := c.edge(g, raw); err != nil {
				return nil, err
			}
		}
	}
	g.Start = g.Nodes[0].ID
	if startAt != nil {
		g.Start = startAt.Value
		if !g.Has(g.Start) {
			return nil, c.errAt(startAt, "", "start", "start node %q is not declared; declared nodes are: %s", g.Start, strings.Join(g.NodeIDs(), ", "))
		}
	}
	// Routing around a skippable node is authored, never inferred.
	for _, n := range g.Nodes {
		if _, ok := g.Next(n.ID, OutcomeSkipped); n.Skippable && !ok {
			return nil, &ConfigError{File: c.file, Line: n.Line, Loop: c.loop, Node: n.ID, Key: "skippable",
				Msg: fmt.Sprintf("skippable but declares no edge for the outcome skipped; add {from: %s, to: <next>, on: skipped}", n.ID)}
		}
	}
	if setsAt != nil {
		if err := c.skipSets(g, setsAt); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func (c *compiler) skipSets(g *Graph, n *yaml.Node) error {
	if n.Tag == "!!null" {
		return nil
	}
	fields, err := c.mapping(n, "", "skipSets")
	if err != nil {
		return err
	}
	for _, f := range fields {
		key := "skipSets." + f.key
		if f.value.Kind != yaml.SequenceNode {
			return c.errAt(f.value, "", key, "got %s, want a list of node ids", kindName(f.value))
		}
		set := SkipSet{Name: f.key}
		for _, m := range f.value.Content {
			node, ok := g.byID[m.Value]
			if !ok || !node.Skippable {
				return c.errAt(m, "", key, "%q is not a declared skippable node; a skip set cannot widen the skip vocabulary", m.Value)
			}
			if node.OptIn {
				return c.errAt(m, "", key, "%q is an opt-in node, already off unless selected; declaring it skipped says nothing", m.Value)
			}
			set.Nodes = append(set.Nodes, m.Value)
		}
		g.SkipSets = append(g.SkipSets, set)
	}
	return nil
}

func (c *compiler) edge(g *Graph, raw *yaml.Node) error {
	fields, err := c.mapping(raw, "", "edge")
	if err != nil {
		return err
	}
	var e Edge
	have := map[string]bool{}
	for _, f := range fields {
		switch f.key {
		case "from":
			e.From = f.value.Value
		case "to":
			e.To = f.value.Value
		case "on":
			e.On = f.value.Value
		default:
			return c.errAt(f.keyAt, "", "edges."+f.key, "unknown edge key; want from, to and on")
		}
		have[f.key] = true
	}
	for _, k := range []string{"from", "to", "on"} {
		if !have[k] {
			return c.errAt(raw, "", "edges."+k, "edge is missing %q; want {from, to, on}", k)
		}
	}
	for _, end := range [][2]string{{e.From, "from"}, {e.To, "to"}} {
		if !g.Has(end[0]) {
			return c.errAt(raw, "", "edges."+end[1], "edge names undeclared node %q; declared nodes are: %s", end[0], strings.Join(g.NodeIDs(), ", "))
		}
	}
	g.Edges = append(g.Edges, e)
	key := [2]string{e.From, e.On}
	if _, dup := g.index[key]; dup {
		// First declared wins; a later one is an ambiguity, not an override.
		slog.Debug("duplicate edge; the first declared wins", "file", c.file, "line", raw.Line, "from", e.From, "on", e.On)
		return nil
	}
	g.index[key] = e.To
	return nil
}

var nodeKeys = []string{"id", "phase", "actor", "produces", "command", "stage", "session", "required",
	"optional", "skippable", "optIn", "description", "maxAttempts", "entry", "exit", "terminal"}

func (c *compiler) node(raw *yaml.Node) (*Node, error) {
	fields, err := c.mapping(raw, "", "node entry")
	if err != nil {
		return nil, err
	}
	n := &Node{Actor: ActorAgent, Session: "new", MaxAttempts: 3, Line: raw.Line}
	for _, f := range fields {
		if f.key == "id" {
			n.ID = strings.TrimSpace(f.value.Value)
		}
	}
	if n.ID == "" {
		return nil, c.errAt(raw, "", "id", "every node needs an id")
	}
	var entryAt, exitAt *yaml.Node
	for _, f := range fields {
		v := f.value
		var err error
		switch f.key {
		case "id":
		case "phase":
			n.Phase = v.Value
		case "actor":
			n.Actor = v.Value
			if !slices.Contains([]string{ActorAgent, ActorHuman, ActorCode}, n.Actor) {
				err = c.errAt(v, n.ID, "actor", "got %q, want agent, human or code", n.Actor)
			}
		case "session":
			n.Session = v.Value
			if n.Session != "new" && n.Session != "inherit" {
				err = c.errAt(v, n.ID, "session", "got %q, want new or inherit", n.Session)
			}
		case "command":
			n.Command = v.Value
		case "stage":
			n.Stage = v.Value
		case "description":
			n.Description = strings.TrimSpace(v.Value)
		case "produces":
			n.Produces, err = c.produces(n.ID, v)
		case "required":
			n.Required, err = c.boolean(v, n.ID, f.key)
		case "optional":
			n.Optional, err = c.boolean(v, n.ID, f.key)
		case "skippable":
			n.Skippable, err = c.boolean(v, n.ID, f.key)
		case "optIn":
			n.OptIn, err = c.boolean(v, n.ID, f.key)
		case "terminal":
			n.Terminal, err = c.boolean(v, n.ID, f.key)
		case "maxAttempts":
			n.MaxAttempts, err = c.integer(v, n.ID, f.key)
			if err == nil && n.MaxAttempts < 1 {
				err = c.errAt(v, n.ID, f.key, "got %d, want a positive number", n.MaxAttempts)
			}
		case "entry":
			entryAt = v
		case "exit":
			exitAt = v
		default:
			err = c.errAt(f.keyAt, n.ID, f.key, "unknown node key; want one of %s", strings.Join(nodeKeys, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	// Checked before the skippable pair: optIn implies skippable, and that
	// message would name a marker this author never wrote.
	if n.Required && n.OptIn {
		return nil, c.errAt(raw, n.ID, "optIn", "both required and optIn; a mandatory gate cannot be off until somebody asks for it")
	}
	if n.Required && n.Skippable {
		return nil, c.errAt(raw, n.ID, "skippable", "both required and skippable; a mandatory gate cannot be in the skip vocabulary")
	}
	n.Skippable = n.Skippable || n.OptIn
	if n.Entry, err = c.chain(n.ID, Entry, entryAt); err != nil {
		return nil, err
	}
	if n.Exit, err = c.chain(n.ID, Exit, exitAt); err != nil {
		return nil, err
	}
	return n, nil
}

func (c *compiler) produces(node string, v *yaml.Node) ([]string, error) {
	var raw []*yaml.Node
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil, nil
		}
		raw = []*yaml.Node{v}
	case yaml.SequenceNode:
		raw = v.Content
	default:
		return nil, c.errAt(v, node, "produces", "got %s, want a list of artifact names", kindName(v))
	}
	out := make([]string, 0, len(raw))
	for _, p := range raw {
		if p.Kind != yaml.ScalarNode {
			return nil, c.errAt(p, node, "produces", "got %s, want an artifact name", kindName(p))
		}
		if err := CheckProducesEntry(p.Value); err != nil {
			return nil, c.errAt(p, node, "produces", "%v", err)
		}
		out = append(out, p.Value)
	}
	return out, nil
}

// CheckProducesEntry refuses a produces entry with an empty alternative
// ("a||b", "|a", "a|"): an authoring slip that would otherwise resolve to a
// silently shorter list of accepted names.
func CheckProducesEntry(entry string) error {
	for _, part := range strings.Split(entry, AlternativeSeparator) {
		if strings.TrimSpace(part) == "" {
			return fmt.Errorf("entry %q has an empty alternative; write the accepted names as first.md|second.md", entry)
		}
	}
	return nil
}

func (c *compiler) chain(node string, b Boundary, v *yaml.Node) ([]ChainEntry, error) {
	if v == nil || v.Tag == "!!null" {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, c.errAt(v, node, string(b), "got %s, want a list of hook names or {hook, with}", kindName(v))
	}
	out := make([]ChainEntry, 0, len(v.Content))
	for _, raw := range v.Content {
		e, err := c.chainEntry(node, b, raw)
		if err != nil {
			return nil, err
		}
		if err := c.checkEntry(node, b, &e, nil); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (c *compiler) chainEntry(node string, b Boundary, raw *yaml.Node) (ChainEntry, error) {
	key := string(b)
	switch raw.Kind {
	case yaml.ScalarNode:
		return ChainEntry{Hook: raw.Value, Params: map[string]any{}, Line: raw.Line}, nil
	case yaml.MappingNode:
		fields, err := c.mapping(raw, node, key+" entry")
		if err != nil {
			return ChainEntry{}, err
		}
		e := ChainEntry{Params: map[string]any{}, Line: raw.Line}
		for _, f := range fields {
			switch f.key {
			case "hook":
				e.Hook = f.value.Value
			case "with":
				if f.value.Tag == "!!null" {
					continue
				}
				if f.value.Kind != yaml.MappingNode {
					return e, c.errAt(f.value, node, key+".with", "got %s, want a mapping of parameters", kindName(f.value))
				}
				params, err := plainValue(f.value, 0)
				if err != nil {
					return e, c.errAt(f.value, node, key+".with", "%v", err)
				}
				e.Params = params.(map[string]any)
			default:
				return e, c.errAt(f.keyAt, node, key+"."+f.key, "unknown chain entry key; want hook and with")
			}
		}
		if e.Hook != "" {
			return e, nil
		}
	}
	return ChainEntry{}, c.errAt(raw, node, key, "malformed hook entry; want a hook name or {hook: name, with: {...}}")
}

// checkEntry validates one chain entry: the hook resolves (from the shipped
// registry, or extra for a repository attachment) and its parameters pass
// the hook's own check, and the hook prepares them when it does. Shared by
// Compile and Apply so an appended entry is held to exactly the rules of a
// shipped one.
func (c *compiler) checkEntry(node string, b Boundary, e *ChainEntry, extra map[string]Hook) error {
	h, ok := extra[e.Hook]
	if !ok && c.reg != nil {
		h, ok = c.reg.Lookup(e.Hook)
	}
	if !ok {
		known := []string{}
		if c.reg != nil {
			known = c.reg.Names()
		}
		return &ConfigError{File: c.file, Line: e.Line, Loop: c.loop, Node: node, Key: string(b),
			Msg: fmt.Sprintf("unknown hook %q; registered hooks are: %s", e.Hook, orNone(known))}
	}
	if pc, ok := h.(ParamChecker); ok {
		if err := pc.CheckParams(e.Params); err != nil {
			return &ConfigError{File: c.file, Line: e.Line, Loop: c.loop, Node: node, Key: string(b) + "." + e.Hook + ".with",
				Msg: err.Error(), Err: err}
		}
	}
	prepareEntry(h, e)
	return nil
}

func (c *compiler) boolean(v *yaml.Node, node, key string) (bool, error) {
	var b bool
	if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
		return false, c.errAt(v, node, key, "got %q, want true or false", v.Value)
	}
	return b, nil
}

func (c *compiler) integer(v *yaml.Node, node, key string) (int, error) {
	i, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil {
		return 0, c.errAt(v, node, key, "got %q, want a whole number", v.Value)
	}
	return i, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// yamlErrorLine digs the line number out of a yaml.v3 error ("yaml: line 7: …").
func yamlErrorLine(err error) int {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if _, rest, ok := strings.Cut(msg, "line "); ok {
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end > 0 {
			n, _ := strconv.Atoi(rest[:end])
			return n
		}
	}
	return 0
}

// plainValue turns a YAML node into the plain Go values hooks receive as
// parameters (string, int, float64, bool, nil, []any, map[string]any): what
// Node.Decode into any would give, without its reflection.
func plainValue(n *yaml.Node, depth int) (any, error) {
	if depth > 64 {
		return nil, errors.New("nested too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return plainValue(n.Alias, depth+1)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := plainValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a parameter name must be a plain string", k.Line)
			}
			v, err := plainValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "":
			return n.Value, nil
		case "!!null":
			return nil, nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML value", n.Line)
}
