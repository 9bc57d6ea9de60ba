package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

const recordFeedbackName = "record-feedback"

func init() { register(recordFeedbackName, recordFeedback{}) }

// now is the clock record-feedback dates entries with; tests replace it.
var now = time.Now

// reviewSection is the heading feedback is recorded under.
const reviewSection = "Review comments"

// recordFeedback is the record-feedback hook: it appends the review that
// classify-feedback (earlier in the same chain) passed on to the artifact
// named by with.into, under a "## Review comments" section it creates when
// missing. Feedback then travels with the document it concerns and shows up
// in the pull request's diff.
//
// Each entry is a "### <UTC date> — <outcome>" heading followed by every
// comment, attributed as "**@author** wrote:" with the body verbatim. The
// file is replaced atomically. The hook writes nothing under a read-only
// evaluation, and skips when the artifact is absent or there is nothing to
// record. with.into may carry alternatives (a|b): the one present is written.
type recordFeedback struct{}

var (
	_ graph.Hook         = recordFeedback{}
	_ graph.ParamChecker = recordFeedback{}
)

var recordFeedbackParams = hookParams{
	hook: recordFeedbackName,
	rules: map[string]paramRule{
		"into": {want: "the artifact file name to record review comments in", check: func(v any) (bool, error) {
			s, ok := v.(string)
			if !ok {
				return false, nil
			}
			if err := checkArtifactEntry(s); err != nil {
				return false, err
			}
			for _, name := range graph.ArtifactNames(s) {
				if !fbInsideSpecDir(name) {
					return false, fmt.Errorf("got %q, want a file inside the spec folder (a relative path without ..)", name)
				}
			}
			return true, nil
		}},
	},
}

func (recordFeedback) CheckParams(params map[string]any) error {
	if err := recordFeedbackParams.check(params); err != nil {
		return err
	}
	if _, set := params["into"]; !set {
		return fmt.Errorf("with.into: missing, want %s", recordFeedbackParams.rules["into"].want)
	}
	return nil
}

// fbInsideSpecDir reports whether name is a relative path that stays inside
// the folder it is joined to.
func fbInsideSpecDir(name string) bool {
	if name == "" || path.IsAbs(name) || filepath.IsAbs(name) || strings.ContainsRune(name, '\\') {
		return false
	}
	clean := path.Clean(name)
	return clean != "." && clean != ".." && !strings.HasPrefix(clean, "../")
}

func (recordFeedback) Run(ctx *graph.Context) (graph.Result, error) {
	if ctx.ReadOnly {
		return graph.Skip(recordFeedbackName, readOnlyReason), nil
	}
	into, _ := ctx.Params["into"].(string)
	if into == "" {
		return graph.Skip(recordFeedbackName, "no target artifact declared"), nil
	}
	var present []string
	for _, name := range graph.ArtifactNames(into) {
		if !fbInsideSpecDir(name) {
			r := graph.Block(recordFeedbackName, findingAt(ctx.WorkItem.Dir, "with.into %q is not a file inside the spec folder", name))
			r.Retriable = false
			return r, nil
		}
		p := path.Join(ctx.WorkItem.Dir, name)
		fi, err := ctx.Files.Stat(p)
		switch {
		case errors.Is(err, repo.ErrOutside):
			r := graph.Block(recordFeedbackName, findingAt(p, "%s leads outside the checkout through a symbolic link; feedback is recorded only in a file inside it", name))
			r.Retriable = false
			return r, nil
		case err == nil && fi.Mode().IsRegular():
			present = append(present, p)
		}
	}
	switch len(present) {
	case 0:
		return graph.Skip(recordFeedbackName, into+" does not exist"), nil
	case 1:
	default:
		return graph.Skip(recordFeedbackName, "more than one of "+into+" exists; not choosing where to record"), nil
	}
	target := present[0]

	outcome, comments := fbPriorReview(ctx.Results)
	if len(comments) == 0 {
		return graph.Skip(recordFeedbackName, "no feedback to record"), nil
	}

	text, err := ctx.Files.Text(target)
	if err != nil {
		return graph.Result{}, fmt.Errorf("read %s: %w", target, err)
	}
	text = fbAppendReview(text, now().UTC().Format("2006-01-02"), outcome, comments)
	if err := fbWriteAtomic(ctx, target, []byte(text)); err != nil {
		return graph.Result{}, fmt.Errorf("record feedback in %s: %w", target, err)
	}
	return graph.Pass(recordFeedbackName, map[string]any{
		"recorded": len(comments),
		"artifact": target,
	}), nil
}

// fbPriorReview finds the latest classify-feedback result earlier in the
// chain: its outcome ("reviewed" when it has none) and its comments, which
// may arrive as the hook built them or as decoded JSON.
func fbPriorReview(results []graph.Result) (string, []graph.Comment) {
	for i := len(results) - 1; i >= 0; i-- {
		r := results[i]
		if r.Hook != classifyFeedbackName {
			continue
		}
		outcome := r.Outcome()
		if outcome == "" {
			outcome = "reviewed"
		}
		return outcome, fbComments(r.Data["comments"])
	}
	return "ctReviewed", nil
}

func fbComments(v any) []graph.Comment {
	var out []graph.Comment
	add := func(m map[string]any) {
		author, _ := m["author"].(string)
		body, _ := m["body"].(string)
		out = append(out, graph.Comment{Author: author, Body: body})
	}
	switch x := v.(type) {
	case []graph.Comment:
		return x
	case []map[string]any:
		for _, m := range x {
			add(m)
		}
	case []any:
		for _, e := range x {
			switch c := e.(type) {
			case map[string]any:
				add(c)
			case graph.Comment:
				out = append(out, c)
			}
		}
	}
	return out
}

// fbAppendReview appends one dated review entry to text. The attribution
// line carries words after the emphasis on purpose: a paragraph that is only
// emphasis is what markdownlint's MD036 rejects. Bodies are kept verbatim
// apart from surrounding white space.
func fbAppendReview(text, date, outcome string, comments []graph.Comment) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(text, "\n"))
	if !strings.Contains(text, "## "+reviewSection) {
		b.WriteString("\n\n## " + reviewSection + "\n")
	} else {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n### %s — %s\n", date, outcome)
	for _, c := range comments {
		author := strings.TrimPrefix(strings.TrimSpace(c.Author), "@")
		if body := fmTrim(c.Body); body != "" {
			fmt.Fprintf(&b, "\n**@%s** wrote:\n\n%s\n", author, body)
		} else {
			fmt.Fprintf(&b, "\n**@%s** left no comment text.\n", author)
		}
	}
	return b.String()
}

// fbWriteAtomic replaces target with data atomically (see
// repo.Checkout.WriteFile), so a crash leaves either the old artifact or
// the new one, never a torn one. The file's permission bits are kept.
func fbWriteAtomic(ctx *graph.Context, target string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := ctx.Files.Stat(target); err == nil {
		mode = fi.Mode().Perm()
	}
	return writeArtifact(ctx, target, data, mode)
}
