package eventlog

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// emitCall matches an event emitted with a literal name anywhere in the
// module: rt.emit("graph.parked", ...), log.Emit("harness.x", ...).
var emitCall = regexp.MustCompile(`\b[eE]mit\(\s*"([a-z_]+\.[a-z_.]+)"`)

// TestEveryEmittedEventIsCatalogued scans the module's sources, so an event
// added anywhere without a catalog entry fails here rather than at run time
// in an operator's log.
func TestEveryEmittedEventIsCatalogued(t *testing.T) {
	found := map[string]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "examples" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range emitCall.FindAllStringSubmatch(string(src), -1) {
			found[m[1]] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 10 {
		t.Fatalf("found only %d emitted events; the scan is broken: %v", len(found), found)
	}
	for event, path := range found {
		if _, ok := Describe(event); !ok {
			t.Errorf("%s emits %q, which the catalog does not describe", path, event)
		}
	}
}
