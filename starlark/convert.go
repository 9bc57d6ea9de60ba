package starlark

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// maxDataValues bounds how many values a result's data may hold once
// converted to Go, and maxDataDepth how deeply they may nest: conversion
// copies, so a structure referring to one large list a thousand times
// would otherwise become a thousand copies.
const (
	maxDataValues = 100_000
	maxDataDepth  = 64
)

// toStarlark converts a plain Go value (as YAML, JSON or the graph package
// produce them) into a frozen Starlark value: maps become dicts with their
// keys in sorted order, slices become lists, time.Time an RFC 3339 string.
// Anything else becomes its fmt %v string.
func toStarlark(v any) (sl.Value, error) {
	out, err := goToStarlark(v, 0)
	if err != nil {
		return nil, err
	}
	out.Freeze()
	return out, nil
}

func goToStarlark(v any, depth int) (sl.Value, error) {
	if depth > maxDataDepth {
		return nil, fmt.Errorf("value nests more than %d deep", maxDataDepth)
	}
	switch v := v.(type) {
	case nil:
		return sl.None, nil
	case sl.Value:
		return v, nil
	case bool:
		return sl.Bool(v), nil
	case string:
		return sl.String(v), nil
	case int:
		return sl.MakeInt(v), nil
	case int64:
		return sl.MakeInt64(v), nil
	case int32:
		return sl.MakeInt64(int64(v)), nil
	case uint64:
		return sl.MakeUint64(v), nil
	case uint:
		return sl.MakeUint(v), nil
	case float64:
		return sl.Float(v), nil
	case float32:
		return sl.Float(v), nil
	case *big.Int:
		return sl.MakeBigInt(v), nil
	case time.Time:
		return sl.String(v.Format(time.RFC3339Nano)), nil
	case []any:
		elems := make([]sl.Value, len(v))
		for i, x := range v {
			e, err := goToStarlark(x, depth+1)
			if err != nil {
				return nil, err
			}
			elems[i] = e
		}
		return sl.NewList(elems), nil
	case []string:
		elems := make([]sl.Value, len(v))
		for i, x := range v {
			elems[i] = sl.String(x)
		}
		return sl.NewList(elems), nil
	case map[string]any:
		d := sl.NewDict(len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			e, err := goToStarlark(v[k], depth+1)
			if err != nil {
				return nil, err
			}
			_ = d.SetKey(sl.String(k), e)
		}
		return d, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return sl.MakeInt64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return sl.MakeUint64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return sl.Float(rv.Float()), nil
	case reflect.String:
		return sl.String(rv.String()), nil
	case reflect.Bool:
		return sl.Bool(rv.Bool()), nil
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return sl.NewList(nil), nil
		}
		elems := make([]sl.Value, rv.Len())
		for i := range elems {
			e, err := goToStarlark(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			elems[i] = e
		}
		return sl.NewList(elems), nil
	case reflect.Map:
		type entry struct {
			key   string
			k, v  sl.Value
			order string
		}
		var entries []entry
		iter := rv.MapRange()
		for iter.Next() {
			k, err := goToStarlark(iter.Key().Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			e, err := goToStarlark(iter.Value().Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			entries = append(entries, entry{k: k, v: e, order: k.String()})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].order < entries[j].order })
		d := sl.NewDict(len(entries))
		for _, e := range entries {
			if err := d.SetKey(e.k, e.v); err != nil {
				return nil, err
			}
		}
		return d, nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return sl.None, nil
		}
		return goToStarlark(rv.Elem().Interface(), depth+1)
	}
	return sl.String(fmt.Sprintf("%v", v)), nil
}

// toGo converts a Starlark value into plain Go data: string, int, float64,
// bool, nil, []any and map[string]any. A set or tuple becomes []any, a
// struct or message a map. Integers must fit in 64 bits, dict keys must be
// strings, floats must be finite, and the whole must hold at most
// maxDataValues values nested at most maxDataDepth deep.
func toGo(v sl.Value) (any, error) {
	c := goConverter{}
	return c.convert(v, 0)
}

type goConverter struct{ n int }

func (c *goConverter) convert(v sl.Value, depth int) (any, error) {
	c.n++
	if c.n > maxDataValues {
		return nil, fmt.Errorf("holds more than %d values", maxDataValues)
	}
	if depth > maxDataDepth {
		return nil, fmt.Errorf("nests more than %d deep", maxDataDepth)
	}
	switch v := v.(type) {
	case sl.NoneType:
		return nil, nil
	case sl.Bool:
		return bool(v), nil
	case sl.String:
		// Copied: the value outlives the call, and a piece of a file's text
		// would keep the whole buffer it was read into.
		return strings.Clone(string(v)), nil
	case sl.Int:
		i, ok := v.Int64()
		if !ok {
			return nil, fmt.Errorf("integer %s does not fit in 64 bits", v)
		}
		return int(i), nil
	case sl.Float:
		f := float64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("float %s is not finite", v)
		}
		return f, nil
	case *sl.List, sl.Tuple, *sl.Set:
		out := []any{}
		for x := range sl.Elements(v.(sl.Iterable)) {
			g, err := c.convert(x, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	case *sl.Dict:
		out := make(map[string]any, v.Len())
		for _, kv := range v.Items() {
			k, ok := kv[0].(sl.String)
			if !ok {
				return nil, fmt.Errorf("dict key %s is a %s; data keys must be strings", kv[0], kv[0].Type())
			}
			g, err := c.convert(kv[1], depth+1)
			if err != nil {
				return nil, err
			}
			out[strings.Clone(string(k))] = g
		}
		return out, nil
	case *starlarkstruct.Struct:
		out := map[string]any{}
		for name, x := range v.Entries() {
			g, err := c.convert(x, depth+1)
			if err != nil {
				return nil, err
			}
			out[name] = g
		}
		return out, nil
	case *messageValue:
		out := map[string]any{"text": v.m.Text, "severity": v.m.Severity}
		if v.m.Path != "" {
			out["path"] = v.m.Path
		}
		if v.m.Line > 0 {
			out["line"] = v.m.Line
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot convert a %s to data", v.Type())
}
