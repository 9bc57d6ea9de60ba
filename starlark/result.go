package starlark

import (
	"fmt"
	"strings"

	sl "go.starlark.net/starlark"

	"github.com/the-loop/the-loop/graph"
)

// messageValue is the Starlark value message(...) returns: one finding.
type messageValue struct{ m graph.Message }

var (
	_ sl.HasAttrs = (*messageValue)(nil)
	_ sl.HasAttrs = (*hookResult)(nil)
)

func (m *messageValue) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "message(%q", m.m.Text)
	if m.m.Path != "" {
		fmt.Fprintf(&b, ", path = %q", m.m.Path)
	}
	if m.m.Line > 0 {
		fmt.Fprintf(&b, ", line = %d", m.m.Line)
	}
	if m.m.Column > 0 {
		fmt.Fprintf(&b, ", column = %d", m.m.Column)
	}
	fmt.Fprintf(&b, ", severity = %q)", m.m.Severity)
	return b.String()
}

// StringSize bounds len(String()): %q writes a byte as at most ten.
func (m *messageValue) StringSize() uint64 {
	return 10*uint64(len(m.m.Text)+len(m.m.Path)) + 96
}

func (m *messageValue) Type() string          { return "message" }
func (m *messageValue) Freeze()               {}
func (m *messageValue) Truth() sl.Bool        { return sl.True }
func (m *messageValue) Hash() (uint32, error) { return sl.String(m.String()).Hash() }
func (m *messageValue) AttrNames() []string {
	return []string{"column", "line", "path", "severity", "text"}
}

func (m *messageValue) Attr(name string) (sl.Value, error) {
	switch name {
	case "text":
		return sl.String(m.m.Text), nil
	case "path":
		if m.m.Path == "" {
			return sl.None, nil
		}
		return sl.String(m.m.Path), nil
	case "line":
		if m.m.Line <= 0 {
			return sl.None, nil
		}
		return sl.MakeInt(m.m.Line), nil
	case "column":
		if m.m.Column <= 0 {
			return sl.None, nil
		}
		return sl.MakeInt(m.m.Column), nil
	case "severity":
		return sl.String(m.m.Severity), nil
	}
	return nil, nil
}

// hookResult is the Starlark value ok(), block(), wait() and skip()
// return: a hook's verdict, converted to a graph.Result when the hook
// returns it.
type hookResult struct{ r graph.Result }

func (r *hookResult) String() string {
	return fmt.Sprintf("result(status = %q, messages = %d)", r.r.Status, len(r.r.Messages))
}
func (r *hookResult) Type() string          { return "result" }
func (r *hookResult) Freeze()               {}
func (r *hookResult) Truth() sl.Bool        { return sl.True }
func (r *hookResult) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: result") }
func (r *hookResult) AttrNames() []string   { return []string{"data", "messages", "retriable", "status"} }

func (r *hookResult) Attr(name string) (sl.Value, error) {
	switch name {
	case "status":
		return sl.String(r.r.Status), nil
	case "retriable":
		return sl.Bool(r.r.Retriable), nil
	case "messages":
		out := make(sl.Tuple, len(r.r.Messages))
		for i, m := range r.r.Messages {
			out[i] = &messageValue{m}
		}
		return out, nil
	case "data":
		if r.r.Data == nil {
			return sl.None, nil
		}
		return toStarlark(r.r.Data)
	}
	return nil, nil
}

// severities are what message() accepts: the three findings carry, and
// "info", the original tool's name for a notice, taken as one.
var severities = []string{graph.SeverityError, graph.SeverityWarning, graph.SeverityNotice}

// Bounds on the text a result carries out of its call: a hook may return a
// finding per file of a large tree, but a result is printed, logged and
// stored, and must not carry gigabytes (a list of one long string repeated
// is cheap to build).
const (
	// maxMessageText bounds one message's text, and its path.
	maxMessageText = 4 << 10
	// maxResultText bounds the text of all a result's messages; past it
	// the rest are counted, not kept.
	maxResultText = 1 << 20
)

// kept is s as a result keeps it: cut to maxMessageText and copied, so
// that a piece of a file's text does not keep the whole buffer it was read
// into alive.
func kept(s string) string { return strings.Clone(graph.Cut(s, maxMessageText)) }

// messageBuiltin is message(text, path=None, line=None, severity="error",
// column=None).
func messageBuiltin(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var text string
	var path, line, column sl.Value = sl.None, sl.None, sl.None
	severity := graph.SeverityError
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "text", &text, "path?", &path, "line?", &line, "severity?", &severity, "column?", &column); err != nil {
		return nil, err
	}
	// A result outlives its call: its strings are cut and copied (kept).
	m := graph.Message{Text: kept(text), Severity: severity}
	switch p := path.(type) {
	case sl.NoneType:
	case sl.String:
		m.Path = kept(string(p))
	default:
		return nil, fmt.Errorf("%s: path: got %s, want string or None", b.Name(), path.Type())
	}
	var err error
	if m.Line, err = position(b.Name(), "line", line); err != nil {
		return nil, err
	}
	if m.Column, err = position(b.Name(), "column", column); err != nil {
		return nil, err
	}
	if m.Column > 0 && m.Line == 0 {
		return nil, fmt.Errorf("%s: column %d without a line; give the line too", b.Name(), m.Column)
	}
	if m.Severity = graph.NormalSeverity(severity, ""); m.Severity == "" {
		return nil, fmt.Errorf("%s: severity: got %q, want %s", b.Name(), severity, strings.Join(severities, ", "))
	}
	return &messageValue{m}, nil
}

// position reads a line or column argument: None, or a number from 1.
func position(fn, what string, v sl.Value) (int, error) {
	switch v := v.(type) {
	case sl.NoneType:
		return 0, nil
	case sl.Int:
		n, ok := v.Int64()
		if !ok || n < 1 || n > 1<<31 {
			return 0, fmt.Errorf("%s: %s: got %s, want a %s number from 1", fn, what, v, what)
		}
		return int(n), nil
	}
	return 0, fmt.Errorf("%s: %s: got %s, want int or None", fn, what, v.Type())
}

// resultBuiltin makes ok, block, wait and skip: each positional argument is
// a string, a message or a list (or tuple) of those; data is a dict or
// None; block alone takes retriable. A bare string is an error under block
// and information under the others.
func resultBuiltin(name string, status graph.Status) *sl.Builtin {
	severity := graph.SeverityNotice
	if status == graph.StatusBlock {
		severity = graph.SeverityError
	}
	return sl.NewBuiltin(name, func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		r := graph.Result{Status: status, Retriable: true}
		var data sl.Value = sl.None
		for _, kv := range kwargs {
			k, _ := sl.AsString(kv[0])
			switch {
			case k == "data":
				data = kv[1]
			case k == "retriable" && status == graph.StatusBlock:
				bv, ok := kv[1].(sl.Bool)
				if !ok {
					return nil, fmt.Errorf("%s: retriable: got %s, want bool", name, kv[1].Type())
				}
				r.Retriable = bool(bv)
			default:
				return nil, fmt.Errorf("%s: unexpected keyword argument %s", name, k)
			}
		}
		total, dropped := 0, 0
		add := func(v sl.Value) error {
			var m graph.Message
			switch v := v.(type) {
			case sl.String:
				m = graph.Message{Text: string(v), Severity: severity}
			case *messageValue:
				m = v.m
			default:
				return fmt.Errorf("%s: got %s, want a string, a message() or a list of those", name, v.Type())
			}
			if total += min(len(m.Text), maxMessageText) + len(m.Path); total > maxResultText {
				dropped++
				return nil
			}
			m.Text = kept(m.Text)
			r.Messages = append(r.Messages, m)
			return nil
		}
		for _, a := range args {
			switch a := a.(type) {
			case *sl.List, sl.Tuple:
				for x := range sl.Elements(a.(sl.Iterable)) {
					if err := add(x); err != nil {
						return nil, err
					}
				}
			default:
				if err := add(a); err != nil {
					return nil, err
				}
			}
		}
		if dropped > 0 {
			r.Messages = append(r.Messages, graph.Message{Severity: severity,
				Text: fmt.Sprintf("and %d more message(s), not kept: a result carries at most %d bytes of text", dropped, maxResultText)})
		}
		switch d := data.(type) {
		case sl.NoneType:
		case *sl.Dict:
			g, err := toGo(d)
			if err != nil {
				return nil, fmt.Errorf("%s: data: %w", name, err)
			}
			r.Data = g.(map[string]any)
		default:
			return nil, fmt.Errorf("%s: data: got %s, want dict or None", name, data.Type())
		}
		return &hookResult{r}, nil
	})
}
