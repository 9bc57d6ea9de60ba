package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// diskFile is a log file in memory on a disk with room bytes left: a write
// past them puts what fits and fails with fail, or, with fail nil, returns
// short with no error, as a write interrupted part way may.
type diskFile struct {
	data      *bytes.Buffer
	room      int
	fail      error
	truncErr  error
	truncated []int64
}

func (f *diskFile) Write(p []byte) (int, error) {
	if len(p) <= f.room {
		f.room -= len(p)
		return f.data.Write(p)
	}
	n := max(f.room, 0)
	f.data.Write(p[:n])
	f.room = 0
	return n, f.fail
}

func (f *diskFile) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(f.data.Bytes()).ReadAt(p, off)
}

func (f *diskFile) Stat() (fs.FileInfo, error) { return sizeInfo(f.data.Len()), nil }

func (f *diskFile) Truncate(size int64) error {
	f.truncated = append(f.truncated, size)
	if f.truncErr != nil {
		return f.truncErr
	}
	f.data.Truncate(int(size))
	return nil
}

func (f *diskFile) Close() error { return nil }

type sizeInfo int

func (s sizeInfo) Name() string       { return "events.jsonl" }
func (s sizeInfo) Size() int64        { return int64(s) }
func (s sizeInfo) Mode() fs.FileMode  { return 0o600 }
func (s sizeInfo) ModTime() time.Time { return time.Time{} }
func (s sizeInfo) IsDir() bool        { return false }
func (s sizeInfo) Sys() any           { return nil }

// onDisk is fixedLog writing to f.
func onDisk(t *testing.T, f *diskFile) *Log {
	l := fixedLog(t, "cli")
	l.open = func(string) (logFile, error) { return f, nil }
	return l
}

func emitForced(l *Log, n int) error {
	return l.Emit("graph.forced", "", map[string]any{"work_item": "issue-" + strconv.Itoa(n), "reason": strings.Repeat("r", 40)})
}

// records reads data as Read does.
func records(t *testing.T, data []byte) (recs []string, torn int) {
	t.Helper()
	torn, err := Read(bytes.NewReader(data), func(r []byte) error {
		recs = append(recs, string(r))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, torn
}

func TestARecordTheDiskTookOnlyPartOfIsCutBackAndReported(t *testing.T) {
	probe := &diskFile{data: &bytes.Buffer{}, room: 1 << 20}
	if err := emitForced(onDisk(t, probe), 1); err != nil {
		t.Fatal(err)
	}
	size := probe.data.Len() // every record below is this long
	for _, c := range []struct {
		name string
		room int // bytes left after the first record
		fail error
	}{
		{"no room at all, ENOSPC", 0, syscall.ENOSPC},
		{"one byte, ENOSPC", 1, syscall.ENOSPC},
		{"half a record, ENOSPC", size / 2, syscall.ENOSPC},
		{"all but the newline, ENOSPC", size - 1, syscall.ENOSPC},
		{"half a record, EFBIG", size / 2, syscall.EFBIG},
		{"a third, a short write with no error", size / 3, nil},
		{"all but the newline, a short write with no error", size - 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &diskFile{data: &bytes.Buffer{}, room: size + c.room, fail: c.fail}
			l := onDisk(t, f)
			if err := emitForced(l, 1); err != nil {
				t.Fatal(err)
			}
			before := bytes.Clone(f.data.Bytes())
			err := emitForced(l, 2)
			if !errors.Is(err, ErrTorn) {
				t.Fatalf("emit on a full disk = %v; want ErrTorn", err)
			}
			if c.fail != nil && !errors.Is(err, c.fail) {
				t.Errorf("error %v does not carry %v", err, c.fail)
			}
			if !bytes.Equal(f.data.Bytes(), before) {
				t.Errorf("the file is\n%q\nwant it cut back to\n%q", f.data.Bytes(), before)
			}
			// Room again: the next record is whole, on a line of its own.
			f.room = 1 << 20
			if err := emitForced(l, 3); err != nil {
				t.Fatal(err)
			}
			recs, torn := records(t, f.data.Bytes())
			if len(recs) != 2 || torn != 0 || !strings.Contains(recs[1], `"issue-3"`) {
				t.Errorf("read %d records (%d torn) from %q; want issue-1 and issue-3 whole", len(recs), torn, f.data.Bytes())
			}
		})
	}
}

func TestATornRecordThatCannotBeCutBackStillEndsTheLineForTheNext(t *testing.T) {
	f := &diskFile{data: &bytes.Buffer{}, room: 30, fail: syscall.ENOSPC, truncErr: syscall.EIO}
	l := onDisk(t, f)
	err := emitForced(l, 1)
	if !errors.Is(err, ErrTorn) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("emit = %v; want ErrTorn and the truncate's EIO", err)
	}
	f.room, f.truncErr = 1<<20, nil
	if err := emitForced(l, 2); err != nil {
		t.Fatal(err)
	}
	recs, torn := records(t, f.data.Bytes())
	if len(recs) != 1 || torn != 1 || !strings.Contains(recs[0], `"issue-2"`) {
		t.Errorf("read %q (%d torn); want the torn line counted and issue-2 whole", recs, torn)
	}
}

func TestARecordAfterATornTailStartsOnALineOfItsOwn(t *testing.T) {
	for _, c := range []struct {
		tail        string
		records     int
		tornRecords int
	}{
		{`{"ts":"2026-07-22T06:31:20.123Z","source":"cli","ev`, 2, 1},
		{`{`, 2, 1},
		// Whole JSON that lost only its newline is a record again.
		{`{"ts":"2026-07-22T06:31:20.123Z"}`, 3, 0},
		// A crash that kept the size but not the data.
		{"\x00\x00\x00\x00", 2, 1},
	} {
		tail := c.tail
		t.Run(fmt.Sprintf("%.12q", tail), func(t *testing.T) {
			l := fixedLog(t, "cli")
			os.MkdirAll(filepath.Dir(l.Path()), 0o700)
			whole := `{"ts":"2026-07-22T06:31:19.000Z","source":"cli","event":"graph.advanced","level":"info","pid":1}` + "\n"
			if err := os.WriteFile(l.Path(), []byte(whole+tail), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := emitForced(l, 1); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(l.Path())
			if !strings.HasPrefix(string(data), whole+tail+"\n{") {
				t.Errorf("the log is %q; want the torn tail ended by a newline, then the record", data)
			}
			recs, torn := records(t, data)
			if len(recs) != c.records || torn != c.tornRecords {
				t.Errorf("read %d records, %d torn; want %d, %d", len(recs), torn, c.records, c.tornRecords)
			}
		})
	}
}

func TestARecordAfterRotationStartsTheNewFile(t *testing.T) {
	l := fixedLog(t, "cli")
	if err := emitForced(l, 1); err != nil {
		t.Fatal(err)
	}
	// A rotation that moves the file away mid-record, and one that empties
	// it in place (copytruncate).
	if err := os.Rename(l.Path(), l.Path()+".1"); err != nil {
		t.Fatal(err)
	}
	if err := emitForced(l, 2); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(l.Path(), 0); err != nil {
		t.Fatal(err)
	}
	if err := emitForced(l, 3); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(l.Path())
	if data[0] != '{' || bytes.Count(data, []byte("\n")) != 1 || !bytes.Contains(data, []byte(`"issue-3"`)) {
		t.Errorf("the rotated log is %q; want issue-3's record alone", data)
	}
}

func TestReadSkipsAndCountsTornLines(t *testing.T) {
	rec := func(n int) string { return fmt.Sprintf(`{"event":"graph.forced","n":%d}`, n) }
	for _, c := range []struct {
		name string
		log  string
		want []string
		torn int
	}{
		{"empty", "", nil, 0},
		{"whole records", rec(1) + "\n" + rec(2) + "\n", []string{rec(1), rec(2)}, 0},
		{"a torn tail", rec(1) + "\n" + `{"event":"gra`, []string{rec(1)}, 1},
		{"a torn record glued to the next", rec(1) + "\n" + `{"event":"gra` + rec(2) + "\n" + rec(3) + "\n", []string{rec(1), rec(3)}, 1},
		{"a torn record ended by the next writer", `{"ev` + "\n" + rec(2) + "\n", []string{rec(2)}, 1},
		{"not JSON, or not an object", "garbage\n[1]\n" + rec(1) + "\n", []string{rec(1)}, 2},
		{"blank lines are nothing", "\n\n" + rec(1) + "\n", []string{rec(1)}, 0},
		{"a last record without its newline", rec(1), nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, torn := records(t, []byte(c.log))
			if strings.Join(got, "|") != strings.Join(c.want, "|") || torn != c.torn {
				t.Errorf("Read = %q, %d torn; want %q, %d", got, torn, c.want, c.torn)
			}
		})
	}
}

func TestReadSkipsALineOverMaxRecordWithoutHoldingIt(t *testing.T) {
	long := `{"x":"` + strings.Repeat("a", MaxRecord) + `"}`
	log := long + "\n" + `{"n":1}` + "\n"
	got, torn := records(t, []byte(log))
	if len(got) != 1 || got[0] != `{"n":1}` || torn != 1 {
		t.Errorf("Read = %d records, %d torn; want the long line skipped and the next read", len(got), torn)
	}
}

func TestReadStopsAtFnsError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	_, err := Read(strings.NewReader("{}\n{}\n{}\n"), func([]byte) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("Read = %v after %d records; want stop after 1", err, n)
	}
	if _, err := Read(iotest{}, func([]byte) error { return nil }); err == nil {
		t.Error("Read hid its reader's error")
	}
}

type iotest struct{}

func (iotest) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
