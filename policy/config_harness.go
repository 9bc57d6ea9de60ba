package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
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

	co   *repo.Checkout // the repository it belongs to
	node *yaml.Node     // the parsed mapping, for line numbers; nil without a file
}

// DefaultHarnessConfig is the config of a repository rooted at root that
// carries no harness config file: every accessor answers its default.
func DefaultHarnessConfig(root string) *HarnessConfig {
	return &HarnessConfig{Root: root, Doc: map[string]any{}}
}

// findHarnessConfig returns the repository-relative path of co's harness
// config (current name first, then the legacy one), or "" when there is
// none. A name that exists in any other form than a regular file inside
// the checkout (a dangling link, a link out, a directory, a FIFO) is a
// *graph.ConfigError naming it: a config that cannot be read must never
// read as "no config", or a change under review could make the
// repository's rules vanish by replacing the file.
func findHarnessConfig(co *repo.Checkout) (string, error) {
	if configDirLeadsOut(co) {
		return "", &graph.ConfigError{File: ConfigDir, Msg: "is a symbolic link leading outside the repository; want a directory inside it"}
	}
	for _, name := range HarnessConfigFiles {
		rel := ConfigDir + "/" + name
		if _, err := co.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return "", &graph.ConfigError{File: rel, Msg: "cannot be inspected", Err: repo.Cause(err)}
		}
		fi, err := co.Stat(rel)
		var why string
		switch {
		case errors.Is(err, repo.ErrOutside):
			why = "is a symbolic link leading outside the repository"
		case errors.Is(err, fs.ErrNotExist):
			why = "is a symbolic link to nothing"
		case err != nil:
			return "", &graph.ConfigError{File: rel, Msg: "cannot be inspected", Err: err}
		case fi.IsDir():
			why = "is a directory"
		case !fi.Mode().IsRegular():
			why = "is not a regular file (" + fi.Mode().Type().String() + ")"
		default:
			return rel, nil
		}
		return "", &graph.ConfigError{File: rel, Msg: why + "; want a regular file inside the repository (or no file, for the defaults)"}
	}
	return "", nil
}

// configDirLeadsOut reports whether co's .the-loop is a symbolic link whose
// target is outside the checkout: nothing the-loop may read or write.
func configDirLeadsOut(co *repo.Checkout) bool {
	// Departure from the original (docs/compatibility.md#a-the-loop-that-leads-out-of-the-checkout): the original reads a config through the link.
	_, err := co.Stat(ConfigDir)
	return errors.Is(err, repo.ErrOutside)
}

// LoadHarnessConfig reads the harness config of the repository at root; see
// LoadCheckoutHarness.
func LoadHarnessConfig(root string) (*HarnessConfig, error) {
	co, err := repo.Open(root)
	if err != nil {
		return nil, err
	}
	return LoadCheckoutHarness(co)
}

// LoadCheckoutHarness reads the harness config of the checkout co, through
// its confinement.
//
// No file is not an error: the result then answers every key with its
// default and Initialized reports false. A file that is not a regular file
// inside the repository, is over the size limit, is not valid YAML or a
// single mapping, or breaks the harness schema is a *graph.ConfigError
// naming the repository-relative file, the line and the key. It never
// writes.
func LoadCheckoutHarness(co *repo.Checkout) (*HarnessConfig, error) {
	rel, err := findHarnessConfig(co)
	if err != nil {
		return nil, err
	}
	if rel == "" {
		c := DefaultHarnessConfig(co.Root())
		c.co = co
		return c, nil
	}
	return readHarness(co, rel, co.Abs(rel), func(limit int64) ([]byte, error) { return co.ReadFile(rel, limit) })
}

// readHarness reads, parses and validates the harness config of co that
// read returns, bounded; file names it in errors and path in File.
//
// Departure from the original (docs/compatibility.md#a-broken-harness-config-is-exit-2): a config that does not parse or validate is an error, never the defaults.
func readHarness(co *repo.Checkout, file, path string, read func(limit int64) ([]byte, error)) (*HarnessConfig, error) {
	data, err := readConfig(file, read)
	if err != nil {
		return nil, err
	}
	doc, top, err := parseMapping(data, file)
	if err != nil {
		return nil, err
	}
	if err := validateDoc(harnessSchema, doc, file, top); err != nil {
		return nil, err
	}
	return &HarnessConfig{Root: co.Root(), Path: path, Doc: doc, co: co, node: top}, nil
}

// readConfig reads the config file named file through read, bounded: one
// byte over maxConfigBytes, so that parseMapping can tell "at the limit"
// from "over it". A file refused by its size, or not read, is a
// *graph.ConfigError naming it.
func readConfig(file string, read func(limit int64) ([]byte, error)) ([]byte, error) {
	data, err := read(maxConfigBytes + 1)
	var tooLarge *repo.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return nil, &graph.ConfigError{File: file, Msg: fmt.Sprintf("is %d bytes; want at most %d", tooLarge.Size, maxConfigBytes)}
	case err != nil:
		return nil, &graph.ConfigError{File: file, Msg: "cannot be read", Err: repo.Cause(err)}
	}
	return data, nil
}

// File is the config's path relative to Root, slash-separated, as error
// messages name it; "" when there is no file.
func (c *HarnessConfig) File() string {
	if c.Path == "" {
		return ""
	}
	return c.co.Display(c.Path)
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
// checks it stays inside the repository, returning its absolute path. When
// override is not "" (the CLI config's routing.graph.specDir) it replaces
// the repository's value, and a refusal names that key instead.
func (c *HarnessConfig) ResolveSpecDir(override string) (string, error) {
	co, err := c.SpecCheckout(override)
	if err != nil {
		return "", err
	}
	return co.Abs(co.SpecDir()), nil
}

// SpecCheckout is the repository's checkout with its spec root set: see
// ResolveSpecDir.
func (c *HarnessConfig) SpecCheckout(override string) (*repo.Checkout, error) {
	value, key, file := c.SpecDir(), "workflow.specDir", c.File()
	if override != "" {
		value, key, file = override, "routing.graph.specDir", ""
	}
	co := c.co
	if co == nil {
		var err error
		if co, err = repo.Open(c.Root); err != nil {
			return nil, fmt.Errorf("resolve repository root %s: %w", c.Root, err)
		}
	}
	spec, err := withSpecDir(co, value, key)
	if err != nil {
		var ce *graph.ConfigError
		if errors.As(err, &ce) && ce.File == "" {
			ce.File = file
			if file != "" {
				ce.Line = lineOf(c.node, []string{"workflow", "specDir"}, "")
			}
		}
		return nil, err
	}
	return spec, nil
}

// ResolveSpecDir resolves specDir (workflow.specDir; "" means
// DefaultSpecDir) against the repository root and returns its absolute path.
// The directory need not exist.
//
// The value comes from a repository, so it must not name anything outside
// it: an absolute path, a ".." escape, or a symlink (anywhere along the
// existing part of the path) resolving outside root is refused with a
// *graph.ConfigError whose Key is "workflow.specDir".
func ResolveSpecDir(root, specDir string) (string, error) {
	co, err := repo.Open(root)
	if err != nil {
		return "", fmt.Errorf("resolve repository root %s: %w", root, err)
	}
	defer co.Close()
	spec, err := withSpecDir(co, specDir, "workflow.specDir")
	if err != nil {
		return "", err
	}
	return co.Abs(spec.SpecDir()), nil
}

// withSpecDir is co with its spec root at specDir, which key declared.
func withSpecDir(co *repo.Checkout, specDir, key string) (*repo.Checkout, error) {
	if specDir == "" {
		specDir = DefaultSpecDir
	}
	refuse := func(format string, args ...any) error {
		return &graph.ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if filepath.IsAbs(specDir) || strings.HasPrefix(specDir, "/") || filepath.VolumeName(specDir) != "" {
		return nil, refuse("%q is an absolute path; want a path relative to the repository root, such as %q", specDir, DefaultSpecDir)
	}
	clean := path.Clean(filepath.ToSlash(specDir))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, refuse("%q leaves the repository; want a directory inside it, such as %q", specDir, DefaultSpecDir)
	}
	spec, err := co.WithSpecDir(clean)
	switch {
	case errors.Is(err, repo.ErrOutside):
		return nil, refuse("%q resolves through a symlink outside the repository; want a directory inside it", specDir)
	case err != nil:
		return nil, refuse("%q cannot be inspected: %v", specDir, repo.Cause(err))
	}
	return spec, nil
}
