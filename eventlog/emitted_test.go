package eventlog

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// eventName is what a literal event type looks like.
var eventName = regexp.MustCompile(`^[a-z_]+\.[a-z_.]+$`)

// emitSite is one call that writes an event with a literal name.
type emitSite struct {
	pos    string
	event  string
	fields []string // the literal keys the call is seen to write
}

// emitSites parses the module's sources (not tests, testdata or examples)
// and returns every emit(...) or Emit(...) call whose first argument is a
// literal event name, with the field names written into its fields
// argument: the keys of a map literal passed directly, or, for a variable,
// those of the map literal it was assigned and of every fields["key"] = …
// in the same function.
func emitSites(t *testing.T) []emitSite {
	t.Helper()
	fset := token.NewFileSet()
	var sites []emitSite
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (d.Name() == "testdata" || d.Name() == "examples" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			sites = append(sites, emitsIn(fset, fn.Body)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sites
}

// emitsIn is the emit sites in one function body.
func emitsIn(fset *token.FileSet, body *ast.BlockStmt) []emitSite {
	var sites []emitSite
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 3 || !isEmit(call.Fun) {
			return true
		}
		event, ok := stringLit(call.Args[0])
		if !ok || !eventName.MatchString(event) {
			return true
		}
		site := emitSite{pos: fset.Position(call.Pos()).String(), event: event}
		switch arg := call.Args[2].(type) {
		case *ast.CompositeLit:
			site.fields = literalKeys(arg)
		case *ast.Ident:
			site.fields = keysWritten(body, arg.Name, call.Pos())
		}
		sites = append(sites, site)
		return true
	})
	return sites
}

func isEmit(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.SelectorExpr:
		return f.Sel.Name == "emit" || f.Sel.Name == "Emit"
	case *ast.Ident:
		return f.Name == "emit" || f.Name == "Emit"
	}
	return false
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// literalKeys is the string keys of a map literal.
func literalKeys(lit *ast.CompositeLit) []string {
	var keys []string
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := stringLit(kv.Key); ok {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// keysWritten is the keys body writes into the map variable name before
// the position at: by assigning it a literal, or by name["key"] = ….
func keysWritten(body *ast.BlockStmt, name string, at token.Pos) []string {
	var keys []string
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || as.Pos() > at {
			return true
		}
		for i, lhs := range as.Lhs {
			switch l := lhs.(type) {
			case *ast.Ident:
				if l.Name == name && i < len(as.Rhs) {
					if lit, ok := as.Rhs[i].(*ast.CompositeLit); ok {
						keys = append(keys, literalKeys(lit)...)
					}
				}
			case *ast.IndexExpr:
				if id, ok := l.X.(*ast.Ident); ok && id.Name == name {
					if k, ok := stringLit(l.Index); ok {
						keys = append(keys, k)
					}
				}
			}
		}
		return true
	})
	return keys
}

// TestEveryEmittedEventIsCatalogued parses the module's sources, so an event
// added anywhere without a catalog entry fails here rather than at run time
// in an operator's log.
func TestEveryEmittedEventIsCatalogued(t *testing.T) {
	sites := emitSites(t)
	events := map[string]bool{}
	for _, s := range sites {
		events[s.event] = true
	}
	if len(events) < 30 {
		t.Fatalf("found only %d emitted events; the scan is broken: %v", len(events), events)
	}
	for _, s := range sites {
		if _, ok := Lookup(s.event); !ok {
			t.Errorf("%s emits %q, which the catalog does not describe", s.pos, s.event)
		}
	}
}

// TestEveryEmittedFieldIsCatalogued holds the catalog's field lists to the
// code: a field written anywhere under an event's name must be listed in
// that event's row.
func TestEveryEmittedFieldIsCatalogued(t *testing.T) {
	seen := 0
	for _, s := range emitSites(t) {
		e, ok := Lookup(s.event)
		if !ok {
			continue // TestEveryEmittedEventIsCatalogued says so
		}
		for _, f := range s.fields {
			seen++
			if !e.HasField(f) {
				t.Errorf("%s writes %s with the field %q, which its catalog row does not list", s.pos, s.event, f)
			}
		}
	}
	if seen < 100 {
		t.Fatalf("saw only %d fields written; the scan is broken", seen)
	}
}

// TestTheCatalogIsWellFormed keeps the table sorted (Lookup searches it),
// every level valid, and every field named once and not as an envelope key.
func TestTheCatalogIsWellFormed(t *testing.T) {
	if !slices.IsSortedFunc(Catalog, func(a, b EventType) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("the catalog is not sorted by name")
	}
	for _, e := range Catalog {
		if !validLevel(e.Level) {
			t.Errorf("%s: level %q", e.Name, e.Level)
		}
		if len(e.Fields) == 0 {
			t.Errorf("%s lists no fields", e.Name)
		}
		names := map[string]bool{}
		for _, f := range e.Fields {
			if names[f.Name] {
				t.Errorf("%s lists %s twice", e.Name, f.Name)
			}
			names[f.Name] = true
			if slices.Contains(envelope, f.Name) {
				t.Errorf("%s lists the envelope key %s as a field", e.Name, f.Name)
			}
		}
	}
}
