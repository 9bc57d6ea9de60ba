package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// extraOutput is one --output FORMAT=FILE: a format written to a file
// from the same evaluation as stdout's. The file is written to a
// temporary beside it and renamed over it once complete, so a reader
// never sees half a report.
type extraOutput struct {
	format, file string
	tmp          *os.File
	buf          *bufio.Writer
	out          *Output
	done         bool // committed or discarded: the temporary is gone
}

// parseOutputs reads --output values and opens each file's temporary,
// before anything is evaluated: a format that does not exist, or a file
// that cannot be written, is the answer.
func parseOutputs(values []string, stderr *Output) ([]*extraOutput, error) {
	var outs []*extraOutput
	seen := map[string]string{}
	fail := func(err error) ([]*extraOutput, error) {
		for _, o := range outs {
			o.discard()
		}
		return nil, err
	}
	for _, v := range values {
		format, file, ok := strings.Cut(v, "=")
		if !ok || format == "" || file == "" {
			return fail(fmt.Errorf("check --output %q: want FORMAT=FILE, e.g. --output sarif=the-loop.sarif", v))
		}
		if _, known := reportFormats[format]; !known || format == "github" {
			return fail(fmt.Errorf("check --output %s: no such file format; want one of %s (github is workflow commands, for the step's own log: use --format github)",
				v, strings.Join(fileFormatNames(), ", ")))
		}
		abs, err := filepath.Abs(file)
		if err != nil {
			return fail(fmt.Errorf("check --output %s: %w", v, err))
		}
		if prev, dup := seen[abs]; dup {
			return fail(fmt.Errorf("check --output %s: %s is already the file of --output %s", v, file, prev))
		}
		seen[abs] = v
		if fi, err := os.Stat(abs); err == nil && !fi.Mode().IsRegular() {
			return fail(fmt.Errorf("check --output %s: %s is not a regular file", v, file))
		}
		tmp, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".*.tmp")
		if err != nil {
			return fail(fmt.Errorf("check --output %s: cannot write %s: %w", v, file, errors.Unwrap(err)))
		}
		o := &extraOutput{format: format, file: abs, tmp: tmp, buf: bufio.NewWriterSize(tmp, 64<<10)}
		o.out = &Output{Stdout: visibleWriter{o.buf}, Stderr: stderr.Stderr, raw: o.buf}
		outs = append(outs, o)
	}
	return outs, nil
}

// fileFormatNames are the formats --output writes.
func fileFormatNames() []string {
	var names []string
	for _, n := range reportFormatNames() {
		if n != "github" {
			names = append(names, n)
		}
	}
	return names
}

// commit makes the file what was written: flushed, synced, renamed over
// FILE.
func (o *extraOutput) commit() error {
	if o.done {
		return nil
	}
	o.done = true
	err := o.buf.Flush()
	if err == nil {
		// A temporary is private; the report is an ordinary file.
		err = o.tmp.Chmod(0o644)
	}
	if err == nil {
		err = o.tmp.Sync()
	}
	if cerr := o.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.tmp.Name(), o.file)
	}
	if err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("check --output %s=%s: %w", o.format, o.file, err)
	}
	return nil
}

// fail replaces what was written with the format's account of why the
// run could not answer, where it has one, and commits that: a CI step
// reading the file reads why, not nothing.
func (o *extraOutput) fail(runErr error, view checkView) error {
	if o.done {
		return nil
	}
	o.buf.Reset(o.tmp)
	if err := o.tmp.Truncate(0); err != nil {
		o.discard()
		return err
	}
	if _, err := o.tmp.Seek(0, 0); err != nil {
		o.discard()
		return err
	}
	if f, ok := reportFormats[o.format].(failureWriter); ok {
		if err := f.writeFailure(o.out, runErr, view); err != nil {
			o.discard()
			return err
		}
	}
	return o.commit()
}

// discard removes the temporary, leaving FILE as it was.
func (o *extraOutput) discard() {
	if o.done {
		return
	}
	o.done = true
	o.tmp.Close()
	os.Remove(o.tmp.Name())
}

// teeWriter hands each report to every format's writer in turn: one
// evaluation, several outputs.
type teeWriter []reportWriter

func (t teeWriter) report(r *graph.StatusReport) error {
	for _, w := range t {
		if err := w.report(r); err != nil {
			return err
		}
	}
	return nil
}

func (t teeWriter) finish(view checkView) error {
	for _, w := range t {
		if err := w.finish(view); err != nil {
			return err
		}
	}
	return nil
}
