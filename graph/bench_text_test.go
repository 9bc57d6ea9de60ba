package graph

import (
	"testing"

	"github.com/the-loop/the-loop/internal/corpus"
)

// corpusMarkdown is every Markdown file of the original's work items, by
// path; the test skips when the original's mirror is not on this machine.
func corpusMarkdown(tb testing.TB) map[string]string {
	tb.Helper()
	return corpus.Shared(tb).Markdown()
}

// BenchmarkFrontMatter splits every Markdown file of the corpus into its
// front matter and body, as a check does once per artifact.
func BenchmarkFrontMatter(b *testing.B) {
	var docs []string
	for _, text := range corpusMarkdown(b) {
		docs = append(docs, text)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			SplitFrontMatterLines(d)
		}
	}
}
