//go:build unix

package eventlog

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAFileSizeLimitCutsNoRecordInHalf runs the real os.File path into a
// real limit: a child process sets RLIMIT_FSIZE on itself (a write past
// it is cut short, the next fails with EFBIG; Go ignores the SIGXFSZ that
// comes with them) and appends until the limit refuses a record.
func TestAFileSizeLimitCutsNoRecordInHalf(t *testing.T) {
	for _, limit := range []int{4000, 4097, 9000} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestFSizeChild$")
			cmd.Env = append(os.Environ(), "EVENTLOG_FSIZE_CHILD="+dir, "EVENTLOG_FSIZE="+strconv.Itoa(limit))
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "refused after") {
				t.Fatalf("child: %v\n%s", err, out)
			}
			data, err := os.ReadFile(filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			if len(data) == 0 || data[len(data)-1] != '\n' {
				t.Errorf("the log ends %q; want it to end at a whole record", data[max(0, len(data)-40):])
			}
			recs, torn := records(t, data)
			if torn != 0 || len(recs) == 0 {
				t.Errorf("read %d records and %d torn lines at the limit; want only whole records", len(recs), torn)
			}
		})
	}
}

func TestFSizeChild(t *testing.T) {
	dir := os.Getenv("EVENTLOG_FSIZE_CHILD")
	if dir == "" {
		t.Skip("the child of TestAFileSizeLimitCutsNoRecordInHalf")
	}
	limit, _ := strconv.ParseUint(os.Getenv("EVENTLOG_FSIZE"), 10, 64)
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Fatal(err)
	}
	l := Open(dir, "cli")
	for i := range 1000 {
		if err := emitForced(l, i); err != nil {
			if !errors.Is(err, ErrTorn) {
				t.Fatalf("record %d: %v; want ErrTorn", i, err)
			}
			fmt.Printf("refused after %d records: %v\n", i, err)
			return
		}
	}
	t.Fatal("1000 records fit under the limit")
}
