package starlark

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// writeTree writes files (slash paths -> contents) under a new temporary
// directory and returns its absolute, link-free path.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, files)
	return root
}

// writeFiles writes files (slash-separated paths to contents) under root.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hooksFile is where the tests' single module lives.
const hooksFile = ".the-loop/hooks/rules.star"

// declared is the declaration of hooksFile, as the harness config would
// make it.
var declared = Module{Path: hooksFile, File: ".the-loop/harness-config.yaml", Line: 7}

// testLimits keep the limit tests quick.
var testLimits = Limits{Steps: 1_000_000, Deadline: 2 * time.Second, ReadBytes: 1 << 10, ReadTotal: 4 << 10, Heap: 64 << 20}

func mustLoad(t testing.TB, root string, modules ...Module) map[string]graph.Hook {
	t.Helper()
	table, err := Load(modules, Options{Repo: root, Limits: testLimits})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return table
}

// loadSource writes src as hooksFile in a new repository and loads it.
func loadSource(t testing.TB, src string) (map[string]graph.Hook, string) {
	t.Helper()
	root := writeTree(t, map[string]string{hooksFile: src})
	return mustLoad(t, root, declared), root
}

// mustFailLoad loads modules and returns the *graph.ConfigError it must fail
// with.
func mustFailLoad(t testing.TB, opts Options, modules ...Module) *graph.ConfigError {
	t.Helper()
	if opts.Limits == (Limits{}) {
		opts.Limits = testLimits
	}
	_, err := Load(modules, opts)
	if err == nil {
		t.Fatal("Load succeeded; want an error")
	}
	var ce *graph.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Load: got %T %v, want *graph.ConfigError", err, err)
	}
	return ce
}

// openCheckout opens root as the checkout a hook call runs over.
func openCheckout(root string) *repo.Checkout {
	co, err := repo.Open(root)
	if err != nil {
		panic(err)
	}
	return co
}

// gctx is a minimal context over the repository at root, as a mutating
// chain has it.
func gctx(root string) *graph.Context {
	co := openCheckout(root)
	return &graph.Context{Checkout: co, Files: graph.DirectFiles(co), Params: map[string]any{}, Boundary: graph.Exit}
}

// pureCtx is a minimal context over root as check has it: read-only, its
// files cached and globs read ahead.
func pureCtx(root string) *graph.Context {
	co := openCheckout(root)
	return &graph.Context{Checkout: co, Files: graph.NewFiles(co), Boundary: graph.Exit, ReadOnly: true}
}

// run calls the named hook of table with a minimal context.
func run(t testing.TB, table map[string]graph.Hook, name, root string) (graph.Result, error) {
	t.Helper()
	h, ok := table[name]
	if !ok {
		t.Fatalf("no hook %s; have %v", name, slices.Sorted(maps.Keys(table)))
	}
	return h.Run(gctx(root))
}

func mustRun(t testing.TB, table map[string]graph.Hook, name, root string) graph.Result {
	t.Helper()
	r, err := run(t, table, name, root)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func contains(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: %q does not contain %q", what, got, w)
		}
	}
}

// captured is a slog handler that keeps every record, for asserting on
// what was logged.
type captured struct {
	mu      sync.Mutex
	records []slog.Record
}

func (c *captured) Enabled(context.Context, slog.Level) bool { return true }
func (c *captured) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r.Clone())
	return nil
}
func (c *captured) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *captured) WithGroup(string) slog.Handler      { return c }

// prints returns the msg attribute of every print record.
func (c *captured) prints() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.records {
		if r.Message != "starlark print" {
			continue
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "msg" {
				out = append(out, a.Value.String())
			}
			return true
		})
	}
	return out
}

func (c *captured) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b bytes.Buffer
	h := slog.NewTextHandler(&b, nil)
	for _, r := range c.records {
		_ = h.Handle(context.Background(), r)
	}
	return b.String()
}

// registry is a shipped registry for compiling test graphs.
type registry map[string]graph.Hook

func (r registry) Lookup(name string) (graph.Hook, bool) { h, ok := r[name]; return h, ok }
func (r registry) Names() []string                       { return slices.Sorted(maps.Keys(r)) }

func fixed(r graph.Result) graph.Hook {
	return graph.HookFunc(func(*graph.Context) (graph.Result, error) { return r, nil })
}

// shipped has a passing and a blocking shipped hook.
var shipped = registry{
	"ok":   fixed(graph.Pass("ok", nil)),
	"nope": fixed(graph.Block("nope", graph.Errorf("the shipped gate says no"))),
}

// compileLoop compiles testdata/loop.yaml against shipped.
func compileLoop(t testing.TB) *graph.Graph {
	t.Helper()
	src, err := os.ReadFile("testdata/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Compile("testdata/loop.yaml", src, shipped)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
