package builtins

import (
	"fmt"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/corpus"
)

// corpusBodies are the bodies (front matter removed, as the gates read
// them) of every Markdown file of the original's work items, by path; the
// test skips when the original's mirror is not on this machine.
func corpusBodies(tb testing.TB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for path, text := range corpus.Shared(tb).Markdown() {
		_, out[path] = graph.SplitFrontMatter(text)
	}
	return out
}

// nestedDocument is a document of depth levels of headings, each with
// width children and a paragraph: the shape that made the joined splitter
// quadratic. It needs no mirror.
func nestedDocument(depth, width int) string {
	var b strings.Builder
	var write func(level int, path string)
	write = func(level int, path string) {
		fmt.Fprintf(&b, "%s Section %s\n\nA paragraph of ordinary prose under the heading, long enough to be one.\n\n", strings.Repeat("#", level), path)
		if level == depth {
			return
		}
		for i := range width {
			write(level+1, fmt.Sprintf("%s.%d", path, i+1))
		}
	}
	write(1, "1")
	return b.String()
}

// BenchmarkSections splits the largest Markdown bodies of the corpus (the
// execution logs and designs a gate reads on node after node) and a deeply
// nested synthetic document.
func BenchmarkSections(b *testing.B) {
	b.Run("nested", func(b *testing.B) {
		doc := nestedDocument(5, 4)
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			fmSections(doc)
		}
	})
	b.Run("corpus", func(b *testing.B) {
		benchCorpusBodies(b, func(body string) { fmSections(body) })
	})
}

// BenchmarkMermaidBlocks finds the mermaid blocks of the corpus's bodies,
// as lint-artifacts does for every artifact it reads.
func BenchmarkMermaidBlocks(b *testing.B) {
	benchCorpusBodies(b, func(body string) { fmMermaidBlocks(body) })
}

// benchCorpusBodies times f over every body of the corpus, by the byte.
func benchCorpusBodies(b *testing.B, f func(body string)) {
	var docs []string
	size := 0
	for _, body := range corpusBodies(b) {
		docs = append(docs, body)
		size += len(body)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			f(d)
		}
	}
}
