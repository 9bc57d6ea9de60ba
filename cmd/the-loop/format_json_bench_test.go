package main

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// benchReports are the reports check --all makes of a generated corpus of
// n items.
func benchReports(b *testing.B, n int) []*graph.StatusReport {
	b.Setenv("HOME", b.TempDir())
	b.Setenv("THE_LOOP_CLI_CONFIG", "")
	e, err := policy.Open(policy.Options{Repo: corpusRepo(b, n)})
	if err != nil {
		b.Fatal(err)
	}
	items, err := e.Items()
	if err != nil {
		b.Fatal(err)
	}
	reports, err := e.Check(items, false, policy.Selector{})
	if err != nil && !errors.As(err, new(policy.ItemsError)) {
		b.Fatal(err)
	}
	return reports
}

// BenchmarkJSONElement writes the list elements check --all --format json
// writes for a generated corpus's reports, terminal-safe pass included.
func BenchmarkJSONElement(b *testing.B) {
	reports := benchReports(b, 100)
	w := &jsonWriter{out: newOutput(io.Discard, io.Discard), list: true}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range reports {
			if err := w.element(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkReportEncoder is the encoding alone, without the terminal-safe
// pass: encoding/json's indenting Encoder against reportEncoder.
func BenchmarkReportEncoder(b *testing.B) {
	reports := benchReports(b, 100)
	b.Run("encoding-json", func(b *testing.B) {
		var buf bytes.Buffer
		enc := jsonEncoder(&buf, "  ")
		b.ReportAllocs()
		for b.Loop() {
			for _, r := range reports {
				buf.Reset()
				if err := enc.Encode(r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("by-hand", func(b *testing.B) {
		var buf []byte
		enc := newReportEncoder("  ")
		b.ReportAllocs()
		for b.Loop() {
			for _, r := range reports {
				var err error
				if buf, err = enc.element(buf[:0], r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
