package eventlog

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// the-loop never rotates its log (nor did the original, which leaves it
// to logrotate); Rotated reads the names logrotate gives.

// Rotated lists the files a log rotated away from path, oldest first,
// with logrotate's names: path-SUFFIX (its dateext, such as
// events.jsonl-20260722, in the order of their names), then path.N
// (events.jsonl.2 before events.jsonl.1); either compressed as .gz. A
// missing directory lists none.
func Rotated(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("event log: %w", err)
	}
	type numbered struct {
		n    uint64
		name string
	}
	var dated []string
	var nums []numbered
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, base) {
			continue
		}
		rest := strings.TrimSuffix(name[len(base):], ".gz")
		switch {
		case strings.HasPrefix(rest, "-") && len(rest) > 1:
			dated = append(dated, name)
		case strings.HasPrefix(rest, "."):
			if n, err := strconv.ParseUint(rest[1:], 10, 32); err == nil {
				nums = append(nums, numbered{n, name})
			}
		}
	}
	slices.Sort(dated)
	slices.SortFunc(nums, func(a, b numbered) int {
		if a.n != b.n {
			return int(b.n) - int(a.n)
		}
		return strings.Compare(a.name, b.name) // .1 before .1.gz: never both
	})
	files := make([]string, 0, len(dated)+len(nums))
	for _, d := range dated {
		files = append(files, filepath.Join(dir, d))
	}
	for _, n := range nums {
		files = append(files, filepath.Join(dir, n.name))
	}
	return files, nil
}

// Query hands fn each record of the log at path that f selects, as
// written (without its newline), from its rotated files (see Rotated)
// oldest first, then the log itself. It returns how many lines it skipped
// as unreadable: torn lines (see Read), and a compressed file that does
// not decompress, counted as one line. A missing log has no records. fn
// returning an error stops the query with that error.
func Query(path string, f Filter, fn func(record []byte) error) (skipped int, err error) {
	files, err := Rotated(path)
	if err != nil {
		return 0, err
	}
	for _, name := range append(files, path) {
		n, err := queryFile(name, f, fn)
		skipped += n
		if err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

// queryFile is Query of one file.
func queryFile(name string, f Filter, fn func([]byte) error) (skipped int, err error) {
	file, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // rotated away between the listing and now
	}
	if err != nil {
		return 0, fmt.Errorf("event log: %w", err)
	}
	defer file.Close()
	var r io.Reader = file
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(file)
		if err != nil {
			return 1, nil
		}
		defer zr.Close()
		r = zr
	}
	var ferr error // fn's, as opposed to the file's
	torn, err := Read(r, func(rec []byte) error {
		if !f.Match(rec) {
			return nil
		}
		ferr = fn(rec)
		return ferr
	})
	switch {
	case ferr != nil:
		return torn, ferr
	case err != nil && r != io.Reader(file):
		return torn + 1, nil // a compressed file cut short
	case err != nil:
		return torn, fmt.Errorf("event log %s: %w", name, err)
	}
	return torn, nil
}

// Follow is Query, and then goes on handing fn the records f selects as
// they are appended to the log, until ctx is done (which returns nil) or
// fn returns an error. It polls every poll (250ms when 0). The log being
// rotated (renamed, or removed, and a new file created in its place) is
// followed: what was appended to the old file is read to its end first,
// then the new file from its start. A log cut back in place (logrotate's
// copytruncate) is read again from its start, when it is found shorter
// than what was read of it: one cut back and written past that length
// again between two polls reads on from the old length. skipped counts as Query's
// does, and a line left without its newline in a file rotated away.
func Follow(ctx context.Context, path string, f Filter, poll time.Duration, fn func(record []byte) error) (skipped int, err error) {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	files, err := Rotated(path)
	if err != nil {
		return 0, err
	}
	for _, name := range files {
		n, err := queryFile(name, f, fn)
		skipped += n
		if err != nil {
			return skipped, err
		}
	}
	t := &tail{path: path, filter: f, fn: fn}
	defer t.close()
	for {
		err := t.poll()
		skipped, t.skipped = skipped+t.skipped, 0
		if err != nil {
			return skipped, err
		}
		select {
		case <-ctx.Done():
			return skipped, nil
		case <-time.After(poll):
		}
	}
}

// tail reads one log as it grows.
type tail struct {
	path    string
	filter  Filter
	fn      func([]byte) error
	file    *os.File // nil until the log exists
	offset  int64    // what of file has been read
	pending []byte   // the start of a line whose newline has not come yet
	long    bool     // pending was an overlong line, dropped
	skipped int
	buf     []byte
}

func (t *tail) close() {
	if t.file != nil {
		t.file.Close()
	}
}

// poll reads what was appended, and moves to a new file if the log was
// rotated or cut back.
func (t *tail) poll() error {
	if t.file == nil {
		f, err := os.Open(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("event log: %w", err)
		}
		t.file, t.offset = f, 0
	}
	if err := t.drain(); err != nil {
		return err
	}
	now, err := os.Stat(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // rotated, and not created again yet
	}
	if err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	held, err := t.file.Stat()
	if err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	switch {
	case !os.SameFile(now, held):
		// Rotated: the old file was read to its end above. A line still
		// without its newline will not get one.
		if err := t.drain(); err != nil {
			return err
		}
		t.cutPending()
		t.file.Close()
		t.file = nil
		return t.poll()
	case held.Size() < t.offset:
		// Cut back in place: start again.
		t.cutPending()
		t.offset = 0
		return t.drain()
	}
	return nil
}

// cutPending counts a line left without its newline as skipped.
func (t *tail) cutPending() {
	if len(bytes.Trim(t.pending, " \t\r")) > 0 || t.long {
		t.skipped++
	}
	t.pending, t.long = t.pending[:0], false
}

// drain reads the file from offset to its end, handing over each whole
// line's record and keeping a last line without its newline for later.
func (t *tail) drain() error {
	if t.buf == nil {
		t.buf = make([]byte, 256<<10)
	}
	for {
		n, err := t.file.ReadAt(t.buf, t.offset)
		t.offset += int64(n)
		if n > 0 {
			if ferr := t.feed(t.buf[:n]); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) || n == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("event log %s: %w", t.path, err)
		}
	}
}

// feed takes the next bytes of the file.
func (t *tail) feed(b []byte) error {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.keep(b)
			return nil
		}
		t.keep(b[:i+1])
		b = b[i+1:]
		line := t.pending
		if t.long {
			t.skipped++
		} else if err := t.line(line); err != nil {
			t.pending = t.pending[:0]
			return err
		}
		t.pending, t.long = t.pending[:0], false
	}
	return nil
}

// keep adds b to the pending line, dropping a line over MaxRecord.
func (t *tail) keep(b []byte) {
	if t.long {
		return
	}
	if len(t.pending)+len(b) > MaxRecord+1 {
		t.pending, t.long = t.pending[:0], true
		return
	}
	t.pending = append(t.pending, b...)
}

// line hands over one whole line, newline included, as Read would.
func (t *tail) line(line []byte) error {
	torn, err := Read(bytes.NewReader(line), func(rec []byte) error {
		if !t.filter.Match(rec) {
			return nil
		}
		return t.fn(rec)
	})
	t.skipped += torn
	return err
}
