package builtins

import (
	"strings"
	"unicode/utf8"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/lazyregexp"
)

const lintArtifactsName = "lint-artifacts"

func init() { register(lintArtifactsName, lintArtifacts{}) }

// lintArtifacts is the lint-artifacts hook: markdown lints over every
// artifact the node produced, whichever accepted name it goes by.
//
// with.diagrams (default true) checks every ```mermaid block: it must not be
// empty, must parse (see checkMermaid), and no quoted node label may hold a
// backtick, which the code host's renderer rejects. with.maxLineLength, when
// set, flags prose lines longer than that many characters outside code
// fences (a line without spaces, such as a URL, is exempt). A node with no
// artifact on disk skips.
type lintArtifacts struct{}

var (
	_ graph.Hook         = lintArtifacts{}
	_ graph.ParamChecker = lintArtifacts{}
)

var lintArtifactsParams = hookParams{
	hook: lintArtifactsName,
	rules: map[string]paramRule{
		"diagrams": {want: "a boolean (false skips the mermaid checks)", check: ruleBool},
		"maxLineLength": {want: "a whole number of characters, 0 for no limit", check: func(v any) (bool, error) {
			n, ok := wholeNumber(v)
			return ok && n >= 0, nil
		}},
	},
}

func (lintArtifacts) CheckParams(params map[string]any) error {
	return lintArtifactsParams.check(params)
}

// backtickLabel finds a backtick inside a quoted square-bracket label.
var backtickLabel = lazyregexp.New("\\[\\s*\"[^\"\\n]*`")

func (lintArtifacts) Run(ctx *graph.Context) (graph.Result, error) {
	var paths []string
	for _, slot := range resolveSlots(ctx, nodeProduces(ctx)) {
		paths = append(paths, slot.Present...)
	}
	if len(paths) == 0 {
		return graph.Skip(lintArtifactsName, "no artifacts to lint"), nil
	}
	diagrams := true
	if v, set := ctx.Params["diagrams"]; set {
		diagrams = pythonTruthy(v)
	}
	limit, _ := wholeNumber(ctx.Params["maxLineLength"])

	var findings []graph.Message
	for _, p := range paths {
		text, err := ctx.Files.Text(p)
		if err != nil {
			findings = append(findings, findingAt(p, "artifact could not be read: %v", err))
			continue
		}
		if diagrams {
			findings = append(findings, lintMermaid(text, p)...)
		}
		if limit > 0 {
			findings = append(findings, lintLineLength(text, p, limit)...)
		}
	}
	if len(findings) > 0 {
		return graph.Block(lintArtifactsName, findings...), nil
	}
	return graph.Pass(lintArtifactsName, nil), nil
}

// lintMermaid checks every mermaid block of text. Messages name the block by
// the line of its opening fence and carry the offending line.
func lintMermaid(text, rel string) []graph.Message {
	var out []graph.Message
	at := func(line int, format string, args ...any) {
		out = append(out, onLine(findingAt(rel, format, args...), line, 0))
	}
	for _, block := range fmMermaidBlocks(text) {
		if fmTrim(block.Body) == "" {
			at(block.Line, "mermaid block at line %d is empty", block.Line)
			continue
		}
		for _, issue := range checkMermaid(block.Body) {
			at(block.Line+issue.Line, "mermaid block at line %d: %s", block.Line, issue.Msg)
		}
		if strings.IndexByte(block.Body, '`') < 0 {
			continue // what backtickLabel looks for ends in one
		}
		for i, line := range strings.Split(block.Body, "\n") {
			if backtickLabel.MatchString(line) {
				at(block.Line+1+i, "mermaid block at line %d: a backtick inside a node label breaks rendering; use plain text", block.Line)
			}
		}
	}
	return out
}

// lintLineLength flags lines longer than limit characters outside ```
// fences. A fence line toggles the state before it is judged, so an opening
// fence is never flagged and a closing one may be. Lines with no inner space
// cannot be wrapped and are exempt.
func lintLineLength(text, rel string, limit int) []graph.Message {
	var out []graph.Message
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(graph.TrimLeftPySpace(line), "```") {
			fenced = !fenced
		}
		if !fenced && utf8.RuneCountInString(line) > limit && strings.ContainsRune(fmTrim(line), ' ') {
			out = append(out, onLine(findingAt(rel, "line %d exceeds %d characters", i+1, limit), i+1, 0))
		}
	}
	return out
}
