package repo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func openTemp(t *testing.T) *Checkout {
	t.Helper()
	co, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { co.Close() })
	return co
}

func TestAWriteItsReaderWouldRefuseIsRefusedAndNothingWritten(t *testing.T) {
	for _, c := range []struct {
		name    string
		size    int
		limit   int64
		refused bool
	}{
		{"at the limit", 100, 100, false},
		{"one over", 101, 100, true},
		{"far over", 1 << 20, 4096, true},
		{"empty", 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			co := openTemp(t)
			if err := co.WriteFile("f.json", []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := co.WriteFileWithin("f.json", bytes.Repeat([]byte("x"), c.size), 0o644, c.limit)
			var large *TooLargeError
			if c.refused != errors.As(err, &large) || (!c.refused && err != nil) {
				t.Fatalf("WriteFileWithin = %v; want refused %v", err, c.refused)
			}
			got, _ := os.ReadFile(co.Abs("f.json"))
			if c.refused && string(got) != "old" {
				t.Errorf("the refused write left %d bytes; want the old file", len(got))
			}
			if !c.refused && len(got) != c.size {
				t.Errorf("wrote %d bytes, want %d", len(got), c.size)
			}
		})
	}
}

func TestAnAppendPastItsReadersLimitIsRefusedAndNothingWritten(t *testing.T) {
	for _, c := range []struct {
		name        string
		have, add   int
		limit       int64
		wantRefused bool
	}{
		{"fills it exactly", 90, 10, 100, false},
		{"one over", 91, 10, 100, true},
		{"a new file over", 0, 200, 100, true},
		{"no limit", 1000, 1000, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			co := openTemp(t)
			if c.have > 0 {
				os.WriteFile(co.Abs("log.jsonl"), bytes.Repeat([]byte("a"), c.have), 0o600)
			}
			err := co.AppendFileWithin("log.jsonl", bytes.Repeat([]byte("b"), c.add), 0o600, c.limit)
			var large *TooLargeError
			if errors.As(err, &large) != c.wantRefused || (!c.wantRefused && err != nil) {
				t.Fatalf("AppendFileWithin = %v; want refused %v", err, c.wantRefused)
			}
			fi, _ := os.Stat(co.Abs("log.jsonl"))
			want := int64(c.have + c.add)
			if c.wantRefused {
				want = int64(c.have)
			}
			if size := int64(0); fi != nil {
				size = fi.Size()
				if size != want {
					t.Errorf("the file is %d bytes, want %d", size, want)
				}
			}
		})
	}
}

// TestAnAppendTheDiskTookPartOfIsCutBack runs AppendFile on a real file
// into a real limit: a child under RLIMIT_FSIZE, where a write past it
// is cut short and the next fails with EFBIG.
func TestAnAppendTheDiskTookPartOfIsCutBack(t *testing.T) {
	if os.Getenv("REPO_FSIZE_CHILD") != "" {
		return
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("needs prlimit to set RLIMIT_FSIZE on a child")
	}
	for _, limit := range []int{1000, 1003, 1050} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command("prlimit", "--fsize="+strconv.Itoa(limit), os.Args[0], "-test.run=^TestAppendFSizeChild$")
			cmd.Env = append(os.Environ(), "REPO_FSIZE_CHILD="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "refused after") {
				t.Fatalf("child: %v\n%s", err, out)
			}
			data, _ := os.ReadFile(filepath.Join(dir, "inbox.jsonl"))
			if len(data)%50 != 0 || len(data) > limit {
				t.Errorf("the file is %d bytes under a %d-byte limit; want whole 50-byte records only", len(data), limit)
			}
		})
	}
}

func TestAppendFSizeChild(t *testing.T) {
	dir := os.Getenv("REPO_FSIZE_CHILD")
	if dir == "" {
		t.Skip("the child of TestAnAppendTheDiskTookPartOfIsCutBack")
	}
	co, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	record := []byte(strings.Repeat("r", 49) + "\n")
	for i := range 1000 {
		if err := co.AppendFile("inbox.jsonl", record, 0o600); err != nil {
			if !errors.Is(err, syscall.EFBIG) && !strings.Contains(err.Error(), "short write") {
				t.Fatalf("append %d: %v; want EFBIG or a short write", i, err)
			}
			fmt.Printf("refused after %d records: %v\n", i, err)
			return
		}
	}
	t.Fatal("1000 records fit under the limit")
}
