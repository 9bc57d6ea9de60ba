package graph

import (
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// SplitFrontMatter separates a markdown document's leading "---" YAML block
// from its body. A document without one, with an unterminated one, or with
// one that is not a YAML mapping has no front matter, and its whole text is
// the body: a malformed header is the artifact's problem to be reported by a
// gate, not a reason to fail the read.
func SplitFrontMatter(text string) (map[string]any, string) {
	if !strings.HasPrefix(text, "---") {
		return map[string]any{}, text
	}
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "---" {
			continue
		}
		var data map[string]any
		if err := yaml.Unmarshal([]byte(strings.Join(lines[1:i], "\n")), &data); err != nil || data == nil {
			return map[string]any{}, text
		}
		return data, strings.Join(lines[i+1:], "\n")
	}
	return map[string]any{}, text
}

// ReadFrontMatter is the front matter of the file at path, empty when the
// file cannot be read or has none.
func ReadFrontMatter(path string) map[string]any {
	data, err := os.ReadFile(path)
	if err != nil {
		return map[string]any{}
	}
	fm, _ := SplitFrontMatter(string(data))
	return fm
}
