package generated

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckWritesWhenAskedAndOtherwiseCompares(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.go")
	src := []byte("package x\nvar   A = 1\n")
	Check(t, file, src, true, "go generate")
	if got, _ := os.ReadFile(file); string(got) != "package x\n\nvar A = 1\n" {
		t.Fatalf("wrote %q; want it formatted", got)
	}
	Check(t, file, src, false, "go generate") // the same: passes
	var r recorder
	Check(&r, file, []byte("package x\nvar A = 2\n"), false, "go generate")
	if !r.failed {
		t.Error("a stale file passed")
	}
}

// recorder is a testing.TB that notes a failure rather than failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }
