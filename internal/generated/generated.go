// Package generated holds a go generate test to the file it writes: the
// tests that turn the shipped loops, schemas and help into Go compare the
// file with what they would write now, and rewrite it when asked.
package generated

import (
	"bytes"
	"go/format"
	"os"
	"testing"
)

// Check formats src, Go a test has just generated, and holds file to it:
// with update it writes the file, otherwise it fails the test when the
// file differs, naming the command that rewrites it.
func Check(t testing.TB, file string, src []byte, update bool, rewrite string) {
	t.Helper()
	formatted, err := format.Source(src)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if update {
		if err := os.WriteFile(file, formatted, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, formatted) {
		t.Errorf("%s is stale (%s rewrites it)", file, rewrite)
	}
}
