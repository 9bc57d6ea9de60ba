package builtins

import (
	"fmt"
	"slices"

	"github.com/the-loop/the-loop/graph"
)

// shipped is filled by each hook file's init, one hook per file. It is written
// only during package initialisation and read-only afterwards.
var shipped = map[string]graph.Hook{}

func register(name string, h graph.Hook) {
	if graph.IsExtension(name) {
		panic(fmt.Sprintf("builtins: %q is in the repository namespace %q", name, graph.ExtensionPrefix))
	}
	if _, dup := shipped[name]; dup {
		panic(fmt.Sprintf("builtins: duplicate hook %q", name))
	}
	shipped[name] = h
}

type registry struct{}

// Registry returns the shipped hooks. It is safe for concurrent use.
func Registry() graph.Registry { return registry{} }

func (registry) Lookup(name string) (graph.Hook, bool) {
	h, ok := shipped[name]
	return h, ok
}

func (registry) Names() []string {
	names := make([]string, 0, len(shipped))
	for n := range shipped {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
