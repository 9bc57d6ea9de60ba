package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// Helpers shared by the content hooks (validate-artifacts, lint-artifacts,
// enforces-boundaries-from, record-feedback, await-inner-loops): resolving
// produces entries against a spec folder, naming files for messages, and
// checking with: parameters.

// artifactSlot is one produces entry resolved against a spec folder: one
// artifact, under any one of the names the entry accepts
// ("requirements.md|bugfix.md"). Present is the subset of Candidates that
// exists as a regular file, in declaration order. The resolver never chooses
// between present alternatives; that is each hook's policy.
type artifactSlot struct {
	Names      []string
	Candidates []string // repository-relative paths, one per name
	Present    []string // repository-relative paths
	// Outside are candidates that are links leading out of the checkout:
	// never read, and reported by the gate rather than read as missing.
	Outside []string
}

// label lists the accepted names for a message.
func (s artifactSlot) label() string { return strings.Join(s.Names, ", ") }

// alternatives reports whether the slot accepts more than one name.
func (s artifactSlot) alternatives() bool { return len(s.Names) > 1 }

// resolveSlots resolves produces-style entries against the work item's
// folder, one slot per entry.
func resolveSlots(ctx *graph.Context, entries []string) []artifactSlot {
	slots := make([]artifactSlot, len(entries))
	for i, entry := range entries {
		slots[i] = resolveSlot(ctx, entry)
	}
	return slots
}

// resolveSlot resolves one entry, once per read-only evaluation: every
// node's gate resolves its produces, and most nodes name the same few
// files. What it keeps is never modified: its lists are clipped, so an
// append copies.
func resolveSlot(ctx *graph.Context, entry string) artifactSlot {
	return graph.Remembered(ctx.Files, ctx.WorkItem.Dir, entry, func() artifactSlot { return resolveSlotNow(ctx, entry) })
}

// resolveSlotNow resolves entry.
func resolveSlotNow(ctx *graph.Context, entry string) artifactSlot {
	var slot artifactSlot
	for _, name := range graph.ArtifactNames(entry) {
		p := path.Join(ctx.WorkItem.Dir, name)
		slot.Names = append(slot.Names, name)
		slot.Candidates = append(slot.Candidates, p)
		switch kind, err := ctx.Files.Kind(p); {
		case err == nil && kind == repo.KindRegular:
			slot.Present = append(slot.Present, p)
		case errors.Is(err, repo.ErrOutside):
			slot.Outside = append(slot.Outside, p)
		}
	}
	slot.Names, slot.Candidates = slices.Clip(slot.Names), slices.Clip(slot.Candidates)
	slot.Present, slot.Outside = slices.Clip(slot.Present), slices.Clip(slot.Outside)
	return slot
}

// slotEntries reads a with: value naming artifacts: one entry, or a list of
// them. Nothing (absent, empty) is no entries; a scalar of another type is
// read as its text, as the reference implementation does.
func slotEntries(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []string:
		return x
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = pythonStr(e)
		}
		return out
	}
	if !pythonTruthy(v) {
		return nil
	}
	return []string{pythonStr(v)}
}

// nodeProduces is the node's produces list; none for a nil node.
func nodeProduces(ctx *graph.Context) []string {
	if ctx.Node == nil {
		return nil
	}
	return ctx.Node.Produces
}

// pythonTruthy is Python truthiness for decoded values: the reference
// implementation tests most parameters with a bare `if`.
func pythonTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case []string:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// writeArtifact replaces the file rel in the checkout atomically. A hook
// handed no checkout writes nothing. A file over the bound an item's
// files are read up to is refused, and nothing written: the item would
// no longer be judged.
func writeArtifact(ctx *graph.Context, rel string, data []byte, perm fs.FileMode) error {
	if ctx.Checkout == nil {
		return graph.ErrNoCheckout
	}
	return ctx.Checkout.WriteFileWithin(rel, data, perm, graph.MaxArtifactBytes)
}

// findingAt is an error-severity message about path.
func findingAt(path, format string, args ...any) graph.Message {
	m := graph.Errorf(format, args...)
	m.Path = path
	return m
}

// onLine is m pointing at line and column of its file, counted from 1 (0 is
// unknown).
func onLine(m graph.Message, line, column int) graph.Message {
	m.Line, m.Column = line, column
	return m
}

// paramRule is what one with: key must hold.
type paramRule struct {
	// want completes "got X, want ..." in the refusal.
	want string
	// check reports whether v is acceptable; a non-nil error replaces the
	// generic refusal with a more precise one.
	check func(v any) (bool, error)
}

// hookParams declares the with: keys one hook accepts.
type hookParams struct {
	hook  string
	rules map[string]paramRule
}

// check refuses unknown keys, naming the accepted ones, and values of the
// wrong shape, naming what would be right. Keys are checked in sorted order
// so the first error is stable.
func (h hookParams) check(params map[string]any) error {
	for _, key := range slices.Sorted(maps.Keys(params)) {
		rule, ok := h.rules[key]
		if !ok {
			if len(h.rules) == 0 {
				return fmt.Errorf("with.%s: unknown parameter; %s takes no parameters", key, h.hook)
			}
			return fmt.Errorf("with.%s: unknown parameter; %s accepts %s", key, h.hook, strings.Join(slices.Sorted(maps.Keys(h.rules)), ", "))
		}
		good, err := rule.check(params[key])
		if err != nil {
			return fmt.Errorf("with.%s: %w", key, err)
		}
		if !good {
			return fmt.Errorf("with.%s: got %s, want %s", key, yamlTypeName(params[key]), rule.want)
		}
	}
	return nil
}

// yamlTypeName names a decoded value's type the way a YAML author thinks of it.
func yamlTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int, int64, int32, uint, uint64:
		return "integer"
	case float64, float32:
		return "number"
	case []any, []string:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

func ruleBool(v any) (bool, error) {
	_, ok := v.(bool)
	return ok, nil
}

func ruleStringList(v any) (bool, error) {
	_, ok := obStringList(v)
	return ok, nil
}

// ruleArtifactRef accepts one produces-style entry or a list of them, each
// well formed: "a||b", "|a" and "a|" would silently accept fewer names than
// their author wrote.
func ruleArtifactRef(v any) (bool, error) {
	var entries []string
	if s, ok := v.(string); ok {
		entries = []string{s}
	} else if list, ok := obStringList(v); ok {
		entries = list
	} else {
		return false, nil
	}
	for _, e := range entries {
		if err := checkArtifactEntry(e); err != nil {
			return false, err
		}
	}
	return true, nil
}

func checkArtifactEntry(entry string) error {
	for _, part := range strings.Split(entry, graph.AlternativeSeparator) {
		if strings.TrimSpace(part) == "" {
			return fmt.Errorf("entry %q has an empty alternative; write the accepted names as first.md%ssecond.md", entry, graph.AlternativeSeparator)
		}
	}
	return nil
}

// wholeNumber is v as a whole number, in any numeric shape a decoder produces.
func wholeNumber(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case int32:
		return int(x), true
	case uint64:
		return int(x), true
	case float64:
		if x == float64(int(x)) {
			return int(x), true
		}
	}
	return 0, false
}

// noWithParams is the rule set of a hook that takes no with: parameters.
func noWithParams(hook string) hookParams { return hookParams{hook: hook} }
