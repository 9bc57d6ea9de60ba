package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/graph"
)

// Where a repository keeps its harness config.
const (
	// ConfigDir is the directory, at the repository root, holding the-loop's
	// per-repository files.
	ConfigDir = ".the-loop"
	// HarnessConfigFile is the harness config's name, and the only name a
	// new config is written under.
	HarnessConfigFile = "harness-config.yaml"
	// LegacyHarnessConfigFile is the name the harness config had before it
	// was renamed. It is still read when the current name is absent.
	LegacyHarnessConfigFile = "config.yaml"
)

// HarnessConfigFiles lists the names a harness config is looked up under,
// in order: the first that exists as a regular file wins.
var HarnessConfigFiles = []string{HarnessConfigFile, LegacyHarnessConfigFile}

// Defaults for the harness config keys the CLI reads. Each is what an
// absent key (or an absent file) means; the embedded default harness config
// states the same values.
const (
	DefaultSpecDir          = "docs/specs"
	DefaultPhaseLabelPrefix = "loop:"
)

// HarnessRead is one harness config key the CLI reads, with the reason it
// belongs to the repository rather than to the operator.
type HarnessRead struct {
	Key  string // dotted key
	By   string // the commands that read it
	Why  string
	Kind string // "string", "map", "list" or "block"
}

// HarnessReads is the CLI's whole read surface of a repository's harness
// config. Everything else in the file is for the agent. A new accessor on
// HarnessConfig adds a row here.
var HarnessReads = []HarnessRead{
	{"workflow.specDir", "check, graph, serve", "the spec folder's location is part of the repository's layout", "string"},
	{"workflow.phaseLabelPrefix", "check, graph, serve", "the phase label namespace is the repository's own convention", "string"},
	{"notifications", "check, graph, serve", "who hears about a gate resolves against the repository's collaborators", "map"},
	{"ticketing.github", "check, graph, serve", "the repository tickets are filed in anchors pull request state across repositories", "map"},
	{"graph.hooks", "check, graph, hooks, serve", "rules a repository wrote for its own work live in its own tree", "block"},
	{"reviews.critics", "critic", "the review bar is a property of the project", "list"},
	{"testing.integrationTestGlobs", "scenarios", "where the integration tests live is part of the layout", "list"},
	{"customInstructions", "instructions", "which conventions govern work here is a fact about this repository", "map"},
}

// HarnessConfig is a repository's harness config: its policy for work done on
// that repository. The zero value is not useful; use LoadHarnessConfig, or
// DefaultHarnessConfig for a repository with no config.
//
// A HarnessConfig is immutable once loaded: accessors never modify Doc, and
// callers must not either. It is then safe for concurrent use.
type HarnessConfig struct {
	// Root is the repository root the config was looked up under.
	Root string
	// Path is the file that was read, or "" when the repository has none.
	Path string
	// Doc is the parsed document with JSON-compatible values. Never nil: a
	// repository with no config has an empty Doc.
	Doc map[string]any

	node *yaml.Node // the parsed mapping, for line numbers; nil without a file
}

// DefaultHarnessConfig is the config of a repository rooted at root that
// carries no harness config file: every accessor answers its default.
func DefaultHarnessConfig(root string) *HarnessConfig {
	return &HarnessConfig{Root: root, Doc: map[string]any{}}
}

// FindHarnessConfig returns the harness config file under root (current
// name first, then the legacy one), or "" when there is none. It only looks.
func FindHarnessConfig(root string) string {
	for _, name := range HarnessConfigFiles {
		p := filepath.Join(root, ConfigDir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// HarnessInitialized reports whether the repository at root has adopted
// the-loop, that is, carries a harness config under either name.
func HarnessInitialized(root string) bool { return FindHarnessConfig(root) != "" }

// LoadHarnessConfig reads the harness config of the repository at root.
//
// No file is not an error: the result then answers every key with its
// default and Initialized reports false. A file that is not valid YAML, is
// not a single mapping, resolves outside the repository, or breaks the
// harness schema is a *graph.ConfigError naming the repository-relative file,
// the line and the key. LoadHarnessConfig never writes.
func LoadHarnessConfig(root string) (*HarnessConfig, error) {
	path := FindHarnessConfig(root)
	if path == "" {
		return DefaultHarnessConfig(root), nil
	}
	rel := relFile(root, path)
	if err := checkContained(root, path); err != nil {
		return nil, &graph.ConfigError{File: rel, Msg: err.Error()}
	}
	data, err := readBounded(path)
	if err != nil {
		return nil, &graph.ConfigError{File: rel, Msg: "cannot be read", Err: err}
	}
	doc, top, err := parseMapping(data, rel)
	if err != nil {
		return nil, err
	}
	if err := validateDoc(harnessSchema, doc, rel, top); err != nil {
		return nil, err
	}
	return &HarnessConfig{Root: root, Path: path, Doc: doc, node: top}, nil
}

// File is the config's path relative to Root, slash-separated, as error
// messages name it; "" when there is no file.
func (c *HarnessConfig) File() string {
	if c.Path == "" {
		return ""
	}
	return relFile(c.Root, c.Path)
}

// Initialized reports whether the repository carries a harness config file.
// A repository that does not is worked under the defaults, but some
// behaviour (keeping the spec tree out of git, posting plans to the thread)
// depends on the distinction itself.
func (c *HarnessConfig) Initialized() bool { return c.Path != "" }

// Lookup returns the value at a dotted key path ("workflow.specDir") and
// whether it is present. A present key may hold nil (YAML null).
func (c *HarnessConfig) Lookup(key string) (any, bool) { return lookup(c.Doc, key) }

// SpecDir is workflow.specDir, the directory holding one folder per work
// item, as written (not yet resolved or checked; see ResolveSpecDir). Empty,
// null or absent means DefaultSpecDir: a repository that wrote "" chose
// nothing, not its root.
func (c *HarnessConfig) SpecDir() string {
	if s, ok := stringAt(c.Doc, "workflow.specDir"); ok && s != "" {
		return s
	}
	return DefaultSpecDir
}

// PhaseLabelPrefix is workflow.phaseLabelPrefix, prepended to a phase to
// name the label that tracks it. Absent or null means
// DefaultPhaseLabelPrefix; an explicit "" is honoured (phase labels bare).
func (c *HarnessConfig) PhaseLabelPrefix() string {
	if s, ok := stringAt(c.Doc, "workflow.phaseLabelPrefix"); ok {
		return s
	}
	return DefaultPhaseLabelPrefix
}

// OriginRepo is "owner/repo" from ticketing.github: the repository the work
// item's ticket lives in, where the outer loop runs. It is "" when either
// half is missing; callers treat that as unknown and fail closed.
func (c *HarnessConfig) OriginRepo() string {
	owner, _ := stringAt(c.Doc, "ticketing.github.owner")
	repo, _ := stringAt(c.Doc, "ticketing.github.repo")
	owner, repo = strings.TrimSpace(owner), strings.TrimSpace(repo)
	if owner == "" || repo == "" {
		return ""
	}
	return owner + "/" + repo
}

// Notifications is the notifications block (which roles hear about which
// event), or an empty map. The map is the config's own; do not modify it.
func (c *HarnessConfig) Notifications() map[string]any {
	if m, ok := mapAt(c.Doc, "notifications"); ok {
		return m
	}
	return map[string]any{}
}

// HooksBlock returns the raw graph.hooks value and whether the key is
// present. The declaration is parsed and checked elsewhere; this only hands
// it over.
func (c *HarnessConfig) HooksBlock() (any, bool) { return lookup(c.Doc, "graph.hooks") }

// Critics is reviews.critics as raw entries (each a map), or nil. Critic
// entries are executable configuration.
func (c *HarnessConfig) Critics() []any {
	v, _ := lookup(c.Doc, "reviews.critics")
	l, _ := v.([]any)
	return l
}

// IntegrationTestGlobs is testing.integrationTestGlobs, or nil.
func (c *HarnessConfig) IntegrationTestGlobs() []string {
	return stringsAt(c.Doc, "testing.integrationTestGlobs")
}

// CustomInstructions is the customInstructions block, or an empty map.
func (c *HarnessConfig) CustomInstructions() map[string]any {
	if m, ok := mapAt(c.Doc, "customInstructions"); ok {
		return m
	}
	return map[string]any{}
}

// ResolveSpecDir resolves the config's spec directory against Root and
// checks it stays inside the repository. When override is not "" (the CLI
// config's routing.graph.specDir) it replaces the repository's value, and a
// refusal names that key instead.
func (c *HarnessConfig) ResolveSpecDir(override string) (string, error) {
	value, key, file := c.SpecDir(), "workflow.specDir", c.File()
	if override != "" {
		value, key, file = override, "routing.graph.specDir", ""
	}
	abs, err := resolveContained(c.Root, value, key)
	if err != nil {
		var ce *graph.ConfigError
		if errors.As(err, &ce) && ce.File == "" {
			ce.File = file
			if file != "" {
				ce.Line = lineOf(c.node, []string{"workflow", "specDir"}, "")
			}
		}
		return "", err
	}
	return abs, nil
}

// ResolveSpecDir resolves specDir (workflow.specDir; "" means
// DefaultSpecDir) against the repository root and returns its absolute path.
// The directory need not exist.
//
// The value comes from a repository, so it must not name anything outside
// it: an absolute path, a ".." escape, or a symlink (anywhere along the
// existing part of the path) resolving outside root is refused with a
// *graph.ConfigError whose Key is "workflow.specDir". A symlink that does not
// resolve is refused too: it has not been shown to be contained.
func ResolveSpecDir(root, specDir string) (string, error) {
	return resolveContained(root, specDir, "workflow.specDir")
}

func resolveContained(root, specDir, key string) (string, error) {
	if specDir == "" {
		specDir = DefaultSpecDir
	}
	refuse := func(format string, args ...any) error {
		return &graph.ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if filepath.IsAbs(specDir) || strings.HasPrefix(specDir, "/") || filepath.VolumeName(specDir) != "" {
		return "", refuse("%q is an absolute path; want a path relative to the repository root, such as %q", specDir, DefaultSpecDir)
	}
	clean := filepath.Clean(filepath.FromSlash(specDir))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", refuse("%q leaves the repository; want a directory inside it, such as %q", specDir, DefaultSpecDir)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("resolve repository root %s: %w", root, err)
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", fmt.Errorf("resolve repository root %s: %w", root, err)
	}
	target := filepath.Join(absRoot, clean)

	// Resolve the deepest part of the path that exists; the rest cannot be a
	// symlink yet, so it cannot lead anywhere else.
	existing, rest := target, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !isNotDir(err) {
			return "", refuse("%q cannot be inspected: %v", specDir, err)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", refuse("%q goes through a symlink that does not resolve; want a real directory inside the repository", specDir)
	}
	if !within(realRoot, filepath.Join(real, rest)) {
		return "", refuse("%q resolves through a symlink to %s, outside the repository; want a directory inside it", specDir, real)
	}
	return target, nil
}

// isNotDir reports a path component that is a file, not a directory.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// within reports whether path is base or lies under it. Both are clean.
func within(base, path string) bool {
	if path == base {
		return true
	}
	rel, err := filepath.Rel(base, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// checkContained refuses a config file that resolves outside the repository
// (a committed symlink pointing elsewhere on the machine).
func checkContained(root, path string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("repository root cannot be resolved: %v", err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("cannot be resolved: %v", err)
	}
	if !within(realRoot, real) {
		return fmt.Errorf("resolves to %s, outside the repository; want a regular file inside it", real)
	}
	return nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One byte over the bound, so parseMapping can tell "at the limit" from
	// "over it" and say so.
	return io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
}

// relFile is path relative to root, slash-separated; path itself when it is
// not under root.
func relFile(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(path)
}
