package main

import (
	"io"
	"os"
	"testing"

	"github.com/the-loop/the-loop/internal/corpus"
)

// corpusRepo writes a repository of n copies of the original project's
// work items (see package corpus) for one test or benchmark, skipping when
// the original's mirror is not on this machine. $THE_LOOP_CORPUS_REPO
// names one already written, of any size, to profile against.
func corpusRepo(tb testing.TB, n int) string {
	tb.Helper()
	root := tb.TempDir()
	if err := corpus.Shared(tb).Write(root, n); err != nil {
		tb.Fatal(err)
	}
	return root
}

// benchCheckAll is a whole check --all in-process, its output discarded:
// the engine, the streaming and the formatter, without the process start.
func benchCheckAll(b *testing.B, root string, format string) {
	b.Setenv("HOME", b.TempDir())
	b.Setenv("THE_LOOP_CLI_CONFIG", "")
	b.ReportAllocs()
	for b.Loop() {
		if code := run([]string{"check", "--all", "--repo", root, "--format", format}, io.Discard, io.Discard); code == 2 {
			b.Fatalf("exit %d", code)
		}
	}
}

func BenchmarkCheckAllCorpus1000(b *testing.B) { benchCheckAll(b, corpusRepo(b, 1000), "text") }

// BenchmarkCheckAllCorpusEnv is check --all on $THE_LOOP_CORPUS_REPO (see
// the justfile's corpus recipe), for profiling at 10,000 items without
// writing them again for every run.
func BenchmarkCheckAllCorpusEnv(b *testing.B) {
	root := os.Getenv("THE_LOOP_CORPUS_REPO")
	if root == "" {
		b.Skip("set THE_LOOP_CORPUS_REPO to a repository the corpus recipe wrote")
	}
	format := os.Getenv("THE_LOOP_CORPUS_FORMAT")
	if format == "" {
		format = "text"
	}
	benchCheckAll(b, root, format)
}
