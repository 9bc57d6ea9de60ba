package policy

import (
	"math"
	"strings"
)

// Typed reads of a parsed config document. A value of the wrong type reads
// as absent: the schema has already refused it for a loaded file, and a
// hand-built Doc must not make an accessor panic.

// lookup walks a dotted key path through nested maps.
func lookup(doc map[string]any, key string) (any, bool) {
	var cur any = doc
	for part := range strings.SplitSeq(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func stringAt(doc map[string]any, key string) (string, bool) {
	v, ok := lookup(doc, key)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

func boolAt(doc map[string]any, key string) (value, ok bool) {
	v, ok := lookup(doc, key)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	return b, ok
}

func mapAt(doc map[string]any, key string) (map[string]any, bool) {
	v, ok := lookup(doc, key)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// stringsAt returns the strings of a list, skipping anything else; nil when
// the key is absent or not a list.
func stringsAt(doc map[string]any, key string) []string {
	v, _ := lookup(doc, key)
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// numberAt reads any numeric value as a float64.
func numberAt(doc map[string]any, key string) (float64, bool) {
	v, ok := lookup(doc, key)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// uintAt reads a non-negative whole number.
func uintAt(doc map[string]any, key string) (uint64, bool) {
	v, ok := lookup(doc, key)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int:
		if n >= 0 {
			return uint64(n), true
		}
	case int64:
		if n >= 0 {
			return uint64(n), true
		}
	case uint64:
		return n, true
	case float64:
		if n >= 0 && n == math.Trunc(n) && n < math.MaxUint64 {
			return uint64(n), true
		}
	}
	return 0, false
}
