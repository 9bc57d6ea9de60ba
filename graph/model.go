package graph

import (
	"fmt"
	"slices"
	"strings"
)

// The four shipped loops.
const (
	WorkItemLoop     = "pdlc-work-item-loop"
	PRLoop           = "pdlc-pr-loop"
	ContributionLoop = "pdlc-contribution-loop"
	AdhocLoop        = "pdlc-adhoc-loop"
)

// ShippedLoops lists every loop the runtime accepts, in a stable order.
var ShippedLoops = []string{WorkItemLoop, PRLoop, ContributionLoop, AdhocLoop}

// OuterLoop returns name when it is an outer-path loop other than the default
// (contribution, adhoc), else "". graph-state.json is agent-writable, so its
// loop field may only ever select one of these.
func OuterLoop(name string) string {
	switch name {
	case ContributionLoop, AdhocLoop:
		return name
	}
	return ""
}

// Actors a node may declare.
const (
	ActorAgent = "agent"
	ActorHuman = "human"
	ActorCode  = "code"
)

// AlternativeSeparator separates the names one produces entry accepts:
// "requirements.md|bugfix.md" is one artifact under either name.
const AlternativeSeparator = "|"

// ChainEntry is one hook in an entry or exit chain.
type ChainEntry struct {
	Hook   string
	Params map[string]any
	// Prepared is what the hook's PrepareParams made of Params.
	Prepared any
	// Line is where the entry was declared (0 when unknown).
	Line int
}

// Node is one step of a loop. Nodes are immutable once compiled.
type Node struct {
	ID          string
	Phase       string
	Actor       string
	Produces    []string
	Command     string
	Stage       string
	Session     string
	Required    bool
	Optional    bool
	Skippable   bool
	OptIn       bool
	Description string
	MaxAttempts int
	Entry       []ChainEntry
	Exit        []ChainEntry
	Terminal    bool
	Line        int
}

// Chain returns the node's chain at b.
func (n *Node) Chain(b Boundary) []ChainEntry {
	if b == Entry {
		return n.Entry
	}
	return n.Exit
}

// Edge routes from one node to another on an outcome.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	On   string `json:"on"`
}

// SkipSet is a named bundle of skippable nodes.
type SkipSet struct {
	Name  string
	Nodes []string
}

// Graph is a compiled loop. It is immutable and safe for concurrent use;
// Apply returns a new Graph rather than changing one.
type Graph struct {
	Name     string
	Version  int
	Start    string
	File     string
	Nodes    []*Node
	Edges    []Edge
	SkipSets []SkipSet

	byID     map[string]*Node
	index    map[[2]string]string
	registry Registry
	// extensions is this repository's own x- hooks, resolved before the
	// shipped registry: two repositories may define the same name.
	extensions map[string]Hook
}

// Node returns the node with id, or an error listing the declared ones.
func (g *Graph) Node(id string) (*Node, error) {
	if n, ok := g.byID[id]; ok {
		return n, nil
	}
	return nil, fmt.Errorf("%w %q in %s; declared nodes are: %s", ErrUnknownNode, id, g.Name, strings.Join(g.NodeIDs(), ", "))
}

// Has reports whether the loop declares id.
func (g *Graph) Has(id string) bool { _, ok := g.byID[id]; return ok }

// NodeIDs lists node ids in declaration order.
func (g *Graph) NodeIDs() []string {
	ids := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// Index is the node's position in declaration order, -1 when absent.
func (g *Graph) Index(id string) int {
	return slices.IndexFunc(g.Nodes, func(n *Node) bool { return n.ID == id })
}

// Next is the target of the first declared edge from id on outcome.
func (g *Graph) Next(id, outcome string) (string, bool) {
	to, ok := g.index[[2]string{id, outcome}]
	return to, ok
}

// EdgesFrom lists the edges leaving id in declaration order.
func (g *Graph) EdgesFrom(id string) []Edge {
	var out []Edge
	for _, e := range g.Edges {
		if e.From == id {
			out = append(out, e)
		}
	}
	return out
}

// Hook resolves name for this graph: the repository's table first, the
// shipped registry second. The two never collide: repository names carry the
// x- prefix and shipped ones never do.
func (g *Graph) Hook(name string) (Hook, bool) {
	if h, ok := g.extensions[name]; ok {
		return h, true
	}
	if g.registry == nil {
		return nil, false
	}
	return g.registry.Lookup(name)
}

// Registry is the shipped registry the graph was compiled against.
func (g *Graph) Registry() Registry { return g.registry }

// Extensions lists the repository hook names attached to this graph, sorted.
func (g *Graph) Extensions() []string {
	names := make([]string, 0, len(g.extensions))
	for n := range g.extensions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// SkipSet returns the named skip set.
func (g *Graph) SkipSet(name string) ([]string, bool) {
	for _, s := range g.SkipSets {
		if s.Name == name {
			return s.Nodes, true
		}
	}
	return nil, false
}

// ExpandSkipTokens resolves tokens (node ids or skip-set names) against the
// skip vocabulary. accepted maps each skippable node to the token that named
// it, in first-declaration order (order lists the keys); rejected keeps every
// token naming nothing skippable.
func (g *Graph) ExpandSkipTokens(tokens []string) (order []string, accepted map[string]string, rejected []string) {
	accepted = map[string]string{}
	add := func(id, token string) {
		if _, seen := accepted[id]; !seen {
			accepted[id] = token
			order = append(order, id)
		}
	}
	for _, raw := range tokens {
		token := strings.TrimSpace(raw)
		if token == "" {
			continue
		}
		if members, ok := g.SkipSet(token); ok {
			for _, id := range members {
				add(id, token)
			}
			continue
		}
		if n, ok := g.byID[token]; ok && n.Skippable {
			add(token, token)
			continue
		}
		rejected = append(rejected, token)
	}
	return order, accepted, rejected
}

// ArtifactNames splits one produces entry into the names it accepts.
func ArtifactNames(entry string) []string {
	var names []string
	for _, part := range strings.Split(entry, AlternativeSeparator) {
		if p := strings.TrimSpace(part); p != "" {
			names = append(names, p)
		}
	}
	return names
}

// hookCount is how many chain entries the loop's nodes hold in all.
func (g *Graph) hookCount() int {
	n := 0
	for _, node := range g.Nodes {
		n += len(node.Entry) + len(node.Exit)
	}
	return n
}

// HasRepositoryHooks reports whether any node's chains hold a repository
// (x-) hook.
func (g *Graph) HasRepositoryHooks() bool {
	for _, n := range g.Nodes {
		for _, chain := range [][]ChainEntry{n.Entry, n.Exit} {
			for _, e := range chain {
				if IsExtension(e.Hook) {
					return true
				}
			}
		}
	}
	return false
}
