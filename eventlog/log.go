package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unicode/utf8"
)

// FileName is the log's path under a state root.
var FileName = filepath.Join("logs", "events.jsonl")

// Permissions of what the log creates. The log names work items and people,
// so it is the operator's alone.
const (
	dirPerm  fs.FileMode = 0o700
	filePerm fs.FileMode = 0o600
)

// envelope lists the keys every record starts with, in order. Fields may not
// use them.
var envelope = []string{"ts", "source", "event", "level", "pid"}

// Log appends event records to one JSONL file. The zero value and a nil *Log
// both behave as Discard.
//
// A Log is safe for concurrent use, and several processes may append to the
// same file: each record is one line written by a single write on a file
// opened with O_APPEND, under the file's lock, so lines never interleave,
// and a record the disk took only part of is cut off again (see append). The file is opened for
// each record, which keeps a log rotated underneath a long-running process
// working.
type Log struct {
	path   string // "" discards
	source string
	pid    int
	now    func() time.Time
	// open opens the file for one record; nil is openLogFile.
	open func(path string) (logFile, error)
}

// Discard checks events against the catalog like any Log and writes nothing.
var Discard = &Log{}

// Open returns the log of the state root stateRoot, which is
// <stateRoot>/logs/events.jsonl, writing records with the given source
// ("cli", "serve", ...). Nothing is created until the first record.
func Open(stateRoot, source string) *Log {
	return OpenFile(filepath.Join(stateRoot, FileName), source)
}

// OpenFile is Open for an explicit file (the CLI config's eventLog.path).
func OpenFile(path, source string) *Log {
	return &Log{path: path, source: source, pid: os.Getpid(), now: time.Now}
}

// Path is the file records go to, "" for Discard.
func (l *Log) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// Emit appends one record. event must be in the Catalog; level is one of
// Levels, or "" for the event's catalog level. fields are the event's own
// data: nil values are left out, a field may not reuse an envelope key, and
// a value JSON cannot encode is written as its text.
//
// The record is one line: the envelope (ts as RFC 3339 UTC with
// milliseconds, source, event, level, pid) then the fields sorted by name.
// Emit creates the log's directory on first use.
func (l *Log) Emit(event, level string, fields map[string]any) error {
	et, ok := Lookup(event)
	if !ok {
		return fmt.Errorf("event %q is not in the catalog", event)
	}
	if level == "" {
		level = et.Level
	}
	if !validLevel(level) {
		return fmt.Errorf("event %s: got level %q, want one of %v", event, level, Levels)
	}
	for k := range fields {
		if slices.Contains(envelope, k) {
			return fmt.Errorf("event %s: field %q would overwrite the envelope", event, k)
		}
	}
	if l == nil || l.path == "" {
		return nil
	}
	line, err := l.encode(event, level, fields)
	if err != nil {
		return err
	}
	if len(line) > MaxRecord {
		// Read skips a line over MaxRecord: cut the long texts so that
		// the record is read, and say so in them.
		if line, err = l.encode(event, level, cutFields(fields)); err != nil {
			return err
		}
		if len(line) > MaxRecord {
			return fmt.Errorf("event %s: the record is %d bytes, over the %d a reader takes", event, len(line), MaxRecord)
		}
	}
	return l.append(line)
}

// maxCutField is what cutFields keeps of a long text.
const maxCutField = 64 << 10

// cutFields is fields with every text over maxCutField bytes cut to it,
// on a character boundary, saying how much was not kept.
func cutFields(fields map[string]any) map[string]any {
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		if err, ok := v.(error); ok {
			v = err.Error()
		}
		if s, ok := v.(string); ok && len(s) > maxCutField {
			cut := maxCutField
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			v = fmt.Sprintf("%s… (%d more bytes not kept)", s[:cut], len(s)-cut)
		}
		out[k] = v
	}
	return out
}

func (l *Log) encode(event, level string, fields map[string]any) ([]byte, error) {
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	var b bytes.Buffer
	b.WriteByte('{')
	member := func(k string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		if err := writeJSON(&b, k); err != nil {
			return err
		}
		b.WriteByte(':')
		return writeJSON(&b, v)
	}
	ts := now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
	for _, kv := range []struct {
		k string
		v any
	}{{"ts", ts}, {"source", l.source}, {"event", event}, {"level", level}, {"pid", l.pid}} {
		if err := member(kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(fields))
	for k, v := range fields {
		if v != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := member(k, fields[k]); err != nil {
			return nil, fmt.Errorf("event %s: field %s: %w", event, k, err)
		}
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// writeJSON appends v's compact JSON, without HTML escaping. An error value
// is written as its message, and anything else JSON cannot encode as its
// fmt text, so instrumentation never fails on a field.
func writeJSON(b *bytes.Buffer, v any) error {
	if err, ok := v.(error); ok {
		v = err.Error()
	}
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		tmp.Reset()
		if err := enc.Encode(fmt.Sprint(v)); err != nil {
			return err
		}
	}
	b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
	return nil
}

// Sync makes every record appended so far durable: it flushes the file
// (whichever descriptor wrote it) and its directory to the disk. A verb
// that moves a work item syncs its events before it writes the state that
// records the move.
func (l *Log) Sync() error {
	if l == nil || l.path == "" {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing written yet
	}
	if err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	serr := f.Sync()
	cerr := f.Close()
	if d, err := os.Open(filepath.Dir(l.path)); err == nil {
		d.Sync() // the file's own creation; best effort where unsupported
		d.Close()
	}
	if serr != nil {
		return fmt.Errorf("event log %s: %w", l.path, serr)
	}
	return cerr
}

// append writes line with one write call on an O_APPEND descriptor,
// under the file's lock (see lockLog), so that it knows where its record
// starts. A record the disk took only part of (a short write, ENOSPC,
// EFBIG) is cut off again, back to that offset, and the failure is
// returned: the next record never runs on from half a line. A file that
// already ends mid-line (a crash in an earlier write, or a writer that does
// not cut back) gets a newline before the record, so that the torn line
// stays a line of its own, which readers skip (see Read).
//
// Departure from the original (docs/compatibility.md#a-move-whose-events-cannot-be-written-is-not-made): a torn record is cut back, and the next never runs on from it.
func (l *Log) append(line []byte) error {
	open := l.open
	if open == nil {
		open = openLogFile
	}
	f, err := open(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(l.path), dirPerm); err != nil {
			return fmt.Errorf("event log: %w", err)
		}
		f, err = open(l.path)
	}
	if err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	werr := writeRecord(f, line)
	cerr := f.Close()
	switch {
	case werr != nil:
		return fmt.Errorf("event log %s: %w", l.path, werr)
	case cerr != nil:
		return fmt.Errorf("event log %s: %w", l.path, cerr)
	}
	return nil
}

// logFile is what append needs of the log's file. *os.File is one; tests
// hand one that fails as a full disk does.
type logFile interface {
	io.Writer
	io.ReaderAt
	Stat() (fs.FileInfo, error)
	Truncate(size int64) error
	Close() error
}

// openLogFile opens the log for one record and takes its lock, which
// Close releases.
func openLogFile(path string) (logFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, filePerm)
	if err != nil {
		return nil, err
	}
	if err := lockLog(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ErrTorn is wrapped by the error of a record the file took only part of.
var ErrTorn = errors.New("the record was not written whole")

// writeRecord appends line to f, which ends at the last whole record or
// mid-line, and on failure cuts f back to where it ended.
func writeRecord(f logFile, line []byte) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket) != 0 {
		// A pipe nobody drains would hang every verb once it is full.
		return fmt.Errorf("not a file but a %s", fi.Mode().Type())
	}
	end := fi.Size()
	if end > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], end-1); err != nil {
			return fmt.Errorf("reading its last byte: %w", err)
		}
		if last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	n, err := f.Write(line)
	if err == nil && n == len(line) {
		return nil
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	torn := fmt.Errorf("%w (%d of %d bytes went to the disk: %w)", ErrTorn, n, len(line), err)
	if n == 0 {
		return torn
	}
	if terr := f.Truncate(end); terr != nil {
		return fmt.Errorf("%w; cutting the file back to its last whole record: %w", torn, terr)
	}
	return fmt.Errorf("%w; the file was cut back to its last whole record", torn)
}
