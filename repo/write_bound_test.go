package repo

import (
	"bytes"
	"errors"
	"os"
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
