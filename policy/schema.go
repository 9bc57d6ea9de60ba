package policy

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/lazyregexp"
)

//go:embed schemas/harness-config.schema.json
var harnessSchemaJSON []byte

//go:embed schemas/cli-config.schema.json
var cliSchemaJSON []byte

// Schema names: the schemas' own $id values, which name them in the
// error of one that does not compile.
const (
	harnessSchemaURL = "https://the-loop.dev/schemas/harness-config.schema.json"
	cliSchemaURL     = "https://the-loop.dev/schemas/cli-config.schema.json"
)

// HarnessSchema returns the JSON Schema (draft 2020-12) of the harness config.
// The slice is a copy; callers may keep or modify it.
func HarnessSchema() []byte { return slices.Clone(harnessSchemaJSON) }

// CLISchema returns the JSON Schema (draft 2020-12) of the CLI config.
// The slice is a copy; callers may keep or modify it.
func CLISchema() []byte { return slices.Clone(cliSchemaJSON) }

// The schemas are compiled on first use, by the verbs that validate a
// config; a verb that reads none (--version, --help, graph show outside a
// repository) never pays for them. They are compiled from their decoded
// documents, which schemas_decoded.go holds as Go: decoding the JSON was
// most of compiling it, and every check of a repository with a harness
// config compiles one.
//
//go:generate go test -run ^TestTheDecodedSchemasAreTheirJSON$ -update .
var (
	harnessSchema = sync.OnceValues(func() (*compiledSchema, error) {
		return compileDecoded(harnessSchemaURL, decodedSchema(harnessSchemaURL))
	})
	cliSchema = sync.OnceValues(func() (*compiledSchema, error) {
		return compileDecoded(cliSchemaURL, decodedSchema(cliSchemaURL))
	})
)

// ValidateHarness checks doc against the harness config schema. doc is a
// decoded YAML or JSON document; YAML-only shapes (non-string map keys,
// timestamps) are converted first. file names the document in the error.
// The result is nil or a *graph.ConfigError whose Key is the dotted path of
// the first offending value (for example "graph.hooks.attach[0].boundary").
func ValidateHarness(doc any, file string) error {
	return validateValue(harnessSchema, doc, file)
}

// ValidateCLI checks doc against the CLI config schema; see ValidateHarness.
func ValidateCLI(doc any, file string) error {
	return validateValue(cliSchema, doc, file)
}

// validateValue converts doc to JSON-compatible values and validates it.
func validateValue(schema func() (*compiledSchema, error), doc any, file string) error {
	v, err := jsonValue(doc)
	if err != nil {
		return &graph.ConfigError{File: file, Msg: "cannot be checked against the schema", Err: err}
	}
	return validateDoc(schema, v, file, nil)
}

// validateDoc validates doc, which already holds JSON-compatible values (as
// parseMapping returns them), and, when top is the YAML node doc was decoded
// from, puts the offending line on the error.
func validateDoc(schema func() (*compiledSchema, error), doc any, file string, top *yaml.Node) error {
	s, err := schema()
	if err != nil {
		return err // an embedded schema that does not compile is a build defect
	}
	f := s.validate(doc, nil)
	if f == nil {
		return nil
	}
	return schemaError(f, doc, file, top)
}

// problem is one leaf of a validation failure, already phrased for a person.
type problem struct {
	key  string // dotted key, the offending property included
	line int
	msg  string
}

// schemaError turns the validator's failure tree into one ConfigError
// naming the first problem (in document order) and summarising the rest.
func schemaError(root *failure, doc any, file string, top *yaml.Node) error {
	var leaves []*failure
	var collect func(f *failure)
	collect = func(f *failure) {
		if len(f.causes) == 0 {
			leaves = append(leaves, f)
			return
		}
		causes := f.causes
		if f.kind == failNoneOf {
			causes = pruneAlternatives(f)
		}
		for _, c := range causes {
			collect(c)
		}
	}
	collect(root)

	probs := make([]problem, 0, len(leaves))
	for _, l := range leaves {
		probs = append(probs, describe(l, doc, top))
	}
	return summarise(probs, file)
}

// summarise is one ConfigError for a config's problems: the first in
// document order, and the rest counted and listed after it, a few at most.
func summarise(probs []problem, file string) error {
	slices.SortStableFunc(probs, func(a, b problem) int {
		if a.line != b.line && a.line > 0 && b.line > 0 {
			return a.line - b.line
		}
		return strings.Compare(a.key, b.key)
	})
	probs = slices.CompactFunc(probs, func(a, b problem) bool { return a.key == b.key && a.msg == b.msg })

	first := probs[0]
	msg := first.msg
	if rest := probs[1:]; len(rest) > 0 {
		const shown = 4
		var b strings.Builder
		fmt.Fprintf(&b, "%s (and %d more: ", msg, len(rest))
		for i, p := range rest {
			if i == shown {
				b.WriteString("; ...")
				break
			}
			if i > 0 {
				b.WriteString("; ")
			}
			if p.key != "" {
				b.WriteString(p.key + ": ")
			}
			b.WriteString(p.msg)
		}
		b.WriteString(")")
		msg = b.String()
	}
	return &graph.ConfigError{File: file, Line: first.line, Key: first.key, Msg: msg}
}

// pruneAlternatives keeps the failures an operator can act on when a value
// fits none of several shapes (a person entry is a string or a mapping).
// An alternative refused only for the value's type says nothing once
// another alternative had the right type and failed deeper: that deeper
// failure ("slack: got number, want string") is the one to report. When
// every alternative refused the type, the result is one type error naming
// every type wanted ("got number, want string or object") rather than one
// per alternative.
func pruneAlternatives(f *failure) []*failure {
	var kept []*failure
	merged := newFailure(f.loc, failType)
	for _, c := range f.causes {
		t, ok := wrongType(c, f.loc)
		if !ok {
			kept = append(kept, c)
			continue
		}
		merged.got = t.got
		for _, w := range t.want {
			if !slices.Contains(merged.want, w) {
				merged.want = append(merged.want, w)
			}
		}
	}
	if len(kept) > 0 {
		return kept
	}
	return []*failure{merged}
}

// wrongType returns the type failure that is an alternative's only
// failure, when it concerns the value at loc itself.
func wrongType(f *failure, loc []string) (*failure, bool) {
	for len(f.causes) == 1 {
		f = f.causes[0]
	}
	if f.kind != failType || len(f.causes) > 0 || !slices.Equal(f.loc, loc) {
		return nil, false
	}
	return f, true
}

// misplaced is a hint for keys that belong elsewhere, when where is
// plain: a repository's rules under the top-level hooks (git hook
// commands) rather than graph.hooks.
func misplaced(path, props []string) string {
	if slices.Equal(path, []string{"hooks"}) && (slices.Contains(props, "modules") || slices.Contains(props, "attach")) {
		return "; repository rules (modules, attach) go under graph.hooks, while hooks holds the git hook commands"
	}
	return ""
}

// describe phrases one leaf failure in the project's "got X, want Y" style.
func describe(f *failure, doc any, top *yaml.Node) problem {
	path := f.loc
	p := problem{key: dottedKey(path, doc)}
	p.line = lineOf(top, path, "")
	switch f.kind {
	case failAdditional:
		props := slices.Clone(f.want)
		slices.Sort(props)
		if len(props) == 1 {
			p.key = joinKey(p.key, props[0])
			p.line = lineOf(top, path, props[0])
			p.msg = "unknown key; the schema does not allow it here"
		} else {
			p.line = lineOf(top, path, props[0])
			p.msg = "unknown keys " + quoteList(props) + "; the schema does not allow them here"
		}
		p.msg += misplaced(path, props)
	case failRequired:
		if len(f.want) == 1 {
			p.msg = fmt.Sprintf("missing required key %q", f.want[0])
		} else {
			p.msg = "missing required keys " + quoteList(f.want)
		}
	case failType:
		p.msg = fmt.Sprintf("got %s, want %s", f.got, strings.Join(f.want, " or "))
	case failEnum:
		want := make([]string, len(f.enum))
		for i, w := range f.enum {
			want[i] = fmt.Sprintf("%v", w)
			if s, ok := w.(string); ok {
				want[i] = strconv.Quote(s)
			}
		}
		p.msg = fmt.Sprintf("got %s, want one of %s", gotValue(f.got), strings.Join(want, ", "))
	case failPattern:
		p.msg = fmt.Sprintf("got %q, want a value matching %s", f.got, f.want[0])
	default:
		// Worded as the library's leaf error, "at '<pointer>': <message>",
		// with everything to the first "': " cut, as it always was.
		msg := "at " + singleQuote(jsonPointer(path)) + ": " + f.msg
		if i := strings.Index(msg, "': "); i >= 0 {
			msg = msg[i+3:]
		}
		p.msg = msg
	}
	return p
}

// jsonPointer is the RFC 6901 pointer of tokens.
func jsonPointer(tokens []string) string {
	var b strings.Builder
	for _, tok := range tokens {
		b.WriteByte('/')
		tok = strings.ReplaceAll(tok, "~", "~0")
		b.WriteString(strings.ReplaceAll(tok, "/", "~1"))
	}
	return b.String()
}

// singleQuote quotes s as Go would, in single quotes.
func singleQuote(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

func gotValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%v", v)
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// dottedKey renders JSON pointer tokens as the dotted key an operator would
// write: object members joined with ".", list positions as "[i]".
func dottedKey(tokens []string, doc any) string {
	var b strings.Builder
	cur := doc
	for _, tok := range tokens {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		case map[string]any:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			cur = c[tok]
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			cur = nil
		}
	}
	return b.String()
}

func joinKey(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

// lineOf finds the line of the value at tokens under top (the line of its
// key, for a mapping member), or of the key member inside it when member is
// not "". It returns the deepest line it can vouch for, or 0 without a node.
func lineOf(top *yaml.Node, tokens []string, member string) int {
	if top == nil {
		return 0
	}
	n, line := top, top.Line
	for _, tok := range tokens {
		key, next := childNode(n, tok)
		if next == nil {
			return line
		}
		n, line = next, next.Line
		if key != nil {
			line = key.Line
		}
	}
	if member != "" {
		if k, _ := childNode(n, member); k != nil {
			return k.Line
		}
	}
	return line
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 32; i++ {
		n = n.Alias
	}
	return n
}

// childNode returns the member tok of a mapping (its key and value nodes)
// or the element tok of a sequence (nil key).
func childNode(n *yaml.Node, tok string) (key, value *yaml.Node) {
	n = deref(n)
	if n == nil {
		return nil, nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == tok {
				return k, n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
			return nil, n.Content[i]
		}
	}
	return nil, nil
}

// maxConfigBytes bounds a config file. Real configs are a few kilobytes;
// the bound keeps a hostile checkout from making a read verb allocate
// without limit (parsing YAML builds a tree of about a hundred times the
// text).
const maxConfigBytes = 1 << 20

// maxExpandedBytes bounds a config once its aliases are expanded: an alias
// is cheap to write and costs its whole target every time it is used, so
// a few kilobytes of anchors can stand for gigabytes.
const maxExpandedBytes = 4 * maxConfigBytes

// yamlLine pulls "line N" out of a yaml.v3 error message.
var yamlLine = lazyregexp.New(`line (\d+)`)

// yamlError is a yaml.v3 error with the "yaml: line N:" noise removed; the
// line moves to the ConfigError.
type yamlError struct {
	msg string
	err error
}

func (e *yamlError) Error() string { return e.msg }
func (e *yamlError) Unwrap() error { return e.err }

func yamlConfigError(file string, err error) *graph.ConfigError {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	msg = strings.TrimSpace(msg)
	if m := yamlLine.FindStringIndex(msg); m != nil && m[0] == 0 {
		msg = strings.TrimPrefix(strings.TrimSpace(msg[m[1]:]), ":")
		msg = strings.TrimSpace(msg)
	}
	return &graph.ConfigError{File: file, Line: line, Msg: "invalid YAML", Err: &yamlError{msg: msg, err: err}}
}

// parseMapping decodes data as a single YAML document whose top level is a
// mapping, converted to JSON-compatible values. An empty or null document is
// an empty mapping. The returned node (nil for an empty document) locates
// values for error messages.
func parseMapping(data []byte, file string) (map[string]any, *yaml.Node, error) {
	if len(data) > maxConfigBytes {
		return nil, nil, &graph.ConfigError{File: file,
			Msg: fmt.Sprintf("is %d bytes; want at most %d", len(data), maxConfigBytes)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return map[string]any{}, nil, nil
		}
		return nil, nil, yamlConfigError(file, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, nil, yamlConfigError(file, err)
	default:
		return nil, nil, &graph.ConfigError{File: file, Line: extra.Line,
			Msg: "holds more than one YAML document; want exactly one"}
	}
	if len(doc.Content) == 0 {
		return map[string]any{}, nil, nil
	}
	top := deref(doc.Content[0])
	if top == nil {
		return map[string]any{}, nil, nil
	}
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return map[string]any{}, nil, nil
	}
	if top.Kind != yaml.MappingNode {
		return nil, nil, &graph.ConfigError{File: file, Line: top.Line,
			Msg: fmt.Sprintf("top level is %s; want a mapping of keys", nodeKindName(top))}
	}
	if _, over := graph.ExpandedSize(top, maxExpandedBytes); over != nil {
		return nil, nil, &graph.ConfigError{File: file, Line: over.Line,
			Msg: fmt.Sprintf("the document stands for more than %d bytes once its aliases are expanded; write the values out, or refer to them less", maxExpandedBytes)}
	}
	var raw any
	if err := top.Decode(&raw); err != nil {
		return nil, nil, yamlConfigError(file, err)
	}
	v, err := jsonValue(raw)
	if err != nil {
		return nil, nil, &graph.ConfigError{File: file, Line: top.Line, Msg: "unsupported YAML", Err: err}
	}
	m, ok := v.(map[string]any)
	if !ok { // unreachable: a mapping node decodes to a map
		return nil, nil, &graph.ConfigError{File: file, Line: top.Line, Msg: "top level is not a mapping"}
	}
	return m, top, nil
}

func nodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return "a string"
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		}
		return "a scalar"
	}
	return "not a mapping"
}

// jsonValue converts a decoded YAML value into the shapes JSON produces (and
// the schema validator expects): maps keyed by strings, lists, strings,
// numbers, booleans and nil. Non-string keys are written as YAML would print
// them; timestamps become their ISO 8601 text.
func jsonValue(v any) (any, error) {
	return jsonValueDepth(v, 0)
}

// maxDepth bounds nesting, so a pathological document fails instead of
// exhausting the stack.
const maxDepth = 512

func jsonValueDepth(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch t := v.(type) {
	case nil, string, bool, int, int64, uint64:
		return t, nil
	case int8, int16, int32, uint, uint8, uint16, uint32, float32:
		return t, nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return strconv.FormatFloat(t, 'g', -1, 64), nil
		}
		return t, nil
	case time.Time:
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 && t.Location() == time.UTC {
			return t.Format(time.DateOnly), nil
		}
		return t.Format(time.RFC3339Nano), nil
	case []byte:
		return string(t), nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			c, err := jsonValueDepth(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			ks, err := keyString(k)
			if err != nil {
				return nil, err
			}
			c, err := jsonValueDepth(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[ks] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, err := jsonValueDepth(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

func keyString(k any) (string, error) {
	switch t := k.(type) {
	case string:
		return t, nil
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(t), nil
	case int, int64, uint64, int32, uint32, int16, uint16, int8, uint8, uint:
		return fmt.Sprintf("%d", t), nil
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64), nil
	case time.Time:
		s, _ := jsonValue(t)
		return s.(string), nil
	}
	return "", fmt.Errorf("unsupported mapping key of type %T; want a string", k)
}
