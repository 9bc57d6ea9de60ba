package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// graph-state.json is checked in, so a rewrite must not churn it. The
// reference tool writes it with Python's json.dumps(indent=2): keys in
// insertion order, non-ASCII escaped as \uXXXX. This file reproduces that
// format byte for byte. Key order comes from, in turn: the order the loaded
// file had, the order this run added keys in, the order the reference
// writes a known record in, and sorted order for anything else.

// keyOrder maps a JSON path ("nodes", "skips/design", "forced/0") to the
// keys of the object there, in order.
type keyOrder map[string][]string

// fileOrder is the key order of the file a state was read from, read
// when a write first needs it: check reads thousands of states and
// writes none.
type fileOrder struct {
	once  sync.Once
	data  []byte
	order keyOrder
}

// at is the order of the object at path; none for a state not read from
// a file.
func (o *fileOrder) at(path string) []string {
	if o == nil {
		return nil
	}
	o.once.Do(func() { o.order, o.data = readKeyOrder(o.data), nil })
	return o.order[path]
}

// readKeyOrder records the key order of every object in a JSON document.
func readKeyOrder(data []byte) keyOrder {
	order := keyOrder{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	// A path is remembered only while it is short: the original's records
	// nest three deep under short keys, and a path built for every level
	// of deep nesting under long keys grows with the square of the depth.
	const maxPath = 1 << 10
	var walk func(path string, record bool, depth int) bool
	walk = func(path string, record bool, depth int) bool {
		tok, err := dec.Token()
		if err != nil || depth > 64 {
			return false
		}
		deeper := func(key string) (string, bool) {
			if !record || len(path)+len(key) > maxPath {
				return "", false
			}
			return join(path, key), true
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				key, ok := k.(string)
				if err != nil || !ok {
					return false
				}
				if record {
					order[path] = append(order[path], key)
				}
				next, rec := deeper(key)
				if !walk(next, rec, depth+1) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				next, rec := deeper(strconv.Itoa(i))
				if !walk(next, rec, depth+1) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		}
		return true
	}
	walk("", true, 0)
	return order
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "/" + key
}

// recordOrders are the key orders the reference writes its records in,
// by path pattern ("*" is any key or index).
var recordOrders = map[string][]string{
	"":              knownStateKeys,
	"nodes/*":       {"attempts", "outcome", "enteredAt", "exitedAt", "lastBlock", "forced", "by"},
	"decisions/*":   {"at", "graph", "via", "surface", "sessionPerPr", "goal"},
	"forced/*":      {"from", "to", "reason", "actor", "at", "warnings"},
	"parked":        {"node", "reason", "since"},
	"completions/*": {"at", "by"},
	"skips/*":       {"via", "token", "by", "reason", "at"},
	"optIns/*":      {"via", "token", "by", "reason", "at"},
}

func pattern(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) == 2 {
		return parts[0] + "/*"
	}
	return path
}

// orderKeys orders an object's keys at path.
func (s *State) orderKeys(path string, keys []string) []string {
	out := make([]string, 0, len(keys))
	seen := map[string]bool{}
	take := func(list []string) {
		for _, k := range list {
			if !seen[k] && slices.Contains(keys, k) {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	take(s.order.at(path))
	take(s.added[path])
	take(recordOrders[pattern(path)])
	rest := slices.Clone(keys)
	slices.Sort(rest)
	take(rest)
	return out
}

// noteKey records that key was added to the object at path, so it is
// written after the keys the file already had, in the order they came.
func (s *State) noteKey(path, key string) {
	if slices.Contains(s.order.at(path), key) || slices.Contains(s.added[path], key) {
		return
	}
	if s.added == nil {
		s.added = keyOrder{}
	}
	s.added[path] = append(s.added[path], key)
}

// format renders the state as the reference tool would write it.
func (s *State) format() ([]byte, error) {
	compact, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(compact))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	s.writeValue(&b, "", tree, 0)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func (s *State) writeValue(b *bytes.Buffer, path string, v any, depth int) {
	indent := func(d int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("  ", d))
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		b.WriteByte('{')
		for i, k := range s.orderKeys(path, keys) {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			writePyString(b, k)
			b.WriteString(": ")
			s.writeValue(b, join(path, k), x[k], depth+1)
		}
		indent(depth)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			s.writeValue(b, join(path, strconv.Itoa(i)), e, depth+1)
		}
		indent(depth)
		b.WriteByte(']')
	case string:
		writePyString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case nil:
		b.WriteString("null")
	default:
		fmt.Fprint(b, x)
	}
}

// writePyString writes s as Python's json.dumps does with ensure_ascii:
// the short escapes it knows, \u00XX for other controls, \uXXXX (surrogate
// pairs beyond the BMP) for everything outside ASCII.
func writePyString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x7f && r < utf8.RuneSelf):
			fmt.Fprintf(b, `\u%04x`, r)
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
}
