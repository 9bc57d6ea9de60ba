package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/starlark"
)

// HooksKey is where a repository declares its own hooks.
const HooksKey = "graph.hooks"

// ModuleRef is one declared hook module: a repository-relative .star file
// (Path) or a dotted name on the operator's hook path (Module).
type ModuleRef struct {
	Path   string `json:"path,omitempty"`
	Module string `json:"module,omitempty"`
	Line   int    `json:"-"`
}

// Label names the module in messages.
func (m ModuleRef) Label() string {
	if m.Path != "" {
		return m.Path
	}
	return m.Module
}

// AttachRef attaches one repository hook to one node boundary.
type AttachRef struct {
	Hook     string         `json:"hook"`
	Node     string         `json:"node"`
	Boundary string         `json:"boundary"`
	With     map[string]any `json:"with,omitempty"`
	Line     int            `json:"-"`
}

// Declaration is a repository's graph.hooks block, parsed and validated.
// Reading one executes nothing.
type Declaration struct {
	// File is the harness config it was read from, repository-relative.
	File    string      `json:"-"`
	Modules []ModuleRef `json:"modules"`
	Attach  []AttachRef `json:"attach"`
}

// Empty reports whether the repository declares no hooks.
func (d Declaration) Empty() bool { return len(d.Modules) == 0 && len(d.Attach) == 0 }

// Digest identifies the declaration, for caching what it loads: two
// repositories, or two versions of one, with different declarations never
// share a compiled graph.
func (d Declaration) Digest() string {
	data, _ := json.Marshal(d) // plain values; map keys are sorted
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// ReadDeclaration parses and validates the harness config's graph.hooks
// block. It never executes anything. The shape is already held to the
// schema when the config loads; this adds the rules a schema cannot say:
// exactly one of path or module, a path that stays inside the repository
// and names a .star file, a dotted module name. The error is the first
// fault; CheckDeclaration reports them all.
func ReadDeclaration(hc *HarnessConfig) (Declaration, error) {
	p := parseDeclaration(hc)
	if len(p.faults) > 0 {
		return p.Declaration, p.faults[0]
	}
	return p.Declaration, nil
}

// parsed is a declaration read to the end whatever it holds: every fault,
// and which entries are whole enough for the checks that follow.
type parsed struct {
	Declaration
	faults []error
	// badModule and badAttach mark the entries a fault has been said of
	// already, so that no later check says it again.
	badModule map[int]bool
	badAttach map[int]bool
	// moduleIndex and attachIndex are each entry's index in its list, for
	// keys and lines.
	moduleIndex []int
	attachIndex []int
}

func parseDeclaration(hc *HarnessConfig) parsed {
	p := parsed{Declaration: Declaration{File: hc.File()}, badModule: map[int]bool{}, badAttach: map[int]bool{}}
	raw, ok := hc.HooksBlock()
	if !ok || raw == nil {
		return p
	}
	block, ok := raw.(map[string]any)
	if !ok {
		p.faults = append(p.faults, p.fail(hc, []string{"graph", "hooks"}, HooksKey, "got %s, want a mapping with modules and attach", kindOf(raw)))
		return p
	}
	modules, err := p.list(hc, block, "modules")
	if err != nil {
		p.faults = append(p.faults, err)
	}
	for i, m := range modules {
		ref, ok, err := p.module(hc, i, m)
		if err != nil {
			p.faults = append(p.faults, err)
		}
		if !ok {
			continue
		}
		if err != nil {
			p.badModule[len(p.Modules)] = true
		}
		p.Modules = append(p.Modules, ref)
		p.moduleIndex = append(p.moduleIndex, i)
	}
	attach, err := p.list(hc, block, "attach")
	if err != nil {
		p.faults = append(p.faults, err)
	}
	for i, a := range attach {
		ref, ok, err := p.attachment(hc, i, a)
		if err != nil {
			p.faults = append(p.faults, err)
		}
		if !ok {
			continue
		}
		if err != nil {
			p.badAttach[len(p.Attach)] = true
		}
		p.Attach = append(p.Attach, ref)
		p.attachIndex = append(p.attachIndex, i)
	}
	if len(attach) > 0 && len(modules) == 0 {
		p.faults = append(p.faults, p.fail(hc, []string{"graph", "hooks", "attach"}, HooksKey+".attach", "attaches hooks but declares no modules to define them; add graph.hooks.modules"))
	}
	return p
}

func (d Declaration) fail(hc *HarnessConfig, tokens []string, key, format string, args ...any) error {
	return &graph.ConfigError{File: d.File, Line: lineOf(hc.node, tokens, ""), Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (d Declaration) list(hc *HarnessConfig, block map[string]any, name string) ([]any, error) {
	v, ok := block[name]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, d.fail(hc, []string{"graph", "hooks", name}, HooksKey+"."+name, "got %s, want a list", kindOf(v))
	}
	return l, nil
}

// module reads the i'th module entry: ok is false when it is not an entry
// at all, err a fault of one that is.
func (d Declaration) module(hc *HarnessConfig, i int, v any) (ref ModuleRef, ok bool, err error) {
	tokens := []string{"graph", "hooks", "modules", strconv.Itoa(i)}
	key := fmt.Sprintf("%s.modules[%d]", HooksKey, i)
	m, ok := v.(map[string]any)
	if !ok {
		return ModuleRef{}, false, d.fail(hc, tokens, key, "got %s, want {path: FILE.star} or {module: dotted.name}", kindOf(v))
	}
	p, hasPath := m["path"].(string)
	mod, hasModule := m["module"].(string)
	ref = ModuleRef{Path: p, Module: mod, Line: lineOf(hc.node, tokens, "")}
	switch {
	case hasPath == hasModule:
		return ref, true, d.fail(hc, tokens, key, "name exactly one of path (a .star file in this repository) or module (a dotted name on the operator's hook path)")
	case hasPath:
		if err := checkModulePath(p); err != nil {
			return ref, true, d.fail(hc, tokens, key+".path", "%q %v", p, err)
		}
	default:
		if !starlark.IsModuleName(mod) {
			return ref, true, d.fail(hc, tokens, key+".module", "%q is not a dotted module name; want identifiers joined by dots, e.g. acme.compliance", mod)
		}
	}
	return ref, true, nil
}

// checkModulePath applies the rules a path can be held to without the
// filesystem; symlinks are resolved when the module is loaded.
func checkModulePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("is empty; want a .star file relative to the repository root")
	case path.IsAbs(p) || strings.HasPrefix(p, "\\") || (len(p) > 1 && p[1] == ':'):
		return fmt.Errorf("is absolute; a hook module is named relative to the repository root and must live inside it")
	case path.Clean(p) == ".." || strings.HasPrefix(path.Clean(p), "../"):
		return fmt.Errorf("leaves the repository; a repository may only run hook code it carries")
	case strings.HasSuffix(p, ".py"):
		return fmt.Errorf("is a Python module; repository hooks are Starlark now: port it to a .star file (see docs/extending.md)")
	case !strings.HasSuffix(p, ".star"):
		return fmt.Errorf("is not a .star file")
	}
	return nil
}

// attachment reads the i'th attachment: ok is false when it is not an
// entry at all, err a fault of one that is.
func (d Declaration) attachment(hc *HarnessConfig, i int, v any) (ref AttachRef, ok bool, err error) {
	tokens := []string{"graph", "hooks", "attach", strconv.Itoa(i)}
	key := fmt.Sprintf("%s.attach[%d]", HooksKey, i)
	m, ok := v.(map[string]any)
	if !ok {
		return AttachRef{}, false, d.fail(hc, tokens, key, "got %s, want {hook: x-name, node: NODE, boundary: entry|exit, with: {...}}", kindOf(v))
	}
	ref = AttachRef{Boundary: string(graph.Exit), Line: lineOf(hc.node, tokens, "")}
	ref.Hook, _ = m["hook"].(string)
	ref.Node, _ = m["node"].(string)
	if b, ok := m["boundary"].(string); ok && b != "" {
		ref.Boundary = b
	}
	if w, ok := m["with"].(map[string]any); ok {
		ref.With = w
	}
	switch {
	case ref.Hook == "" || ref.Node == "":
		return ref, true, d.fail(hc, tokens, key, "name the hook and the node it attaches to")
	case !graph.IsExtension(ref.Hook):
		return ref, true, d.fail(hc, tokens, key+".hook", "%q: a repository hook is named %s<something>; shipped hooks cannot be attached again", ref.Hook, graph.ExtensionPrefix)
	case ref.Boundary != string(graph.Entry) && ref.Boundary != string(graph.Exit):
		return ref, true, d.fail(hc, tokens, key+".boundary", "got %q, want entry or exit", ref.Boundary)
	}
	return ref, true, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("%v", v)
}
