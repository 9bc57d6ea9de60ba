package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/the-loop/the-loop/graph"
)

// Trial runs one hook against item as check would build its ctx, at the
// place t names whatever the item's position (see graph.Runtime.Trial):
// how a rule's author sees what it does. It writes nothing and emits
// nothing; with Options.Base the hook sees ctx.changed.
func (e *Engine) Trial(item string, t graph.Trial, sel Selector) (*graph.TrialReport, error) {
	if _, err := e.Changes(); err != nil {
		return nil, err
	}
	_, recorded, _, err := e.itemState(item, sel)
	if err != nil {
		return nil, err
	}
	rt, err := e.runtime(recorded, sel, false)
	if err != nil {
		return nil, err
	}
	return rt.Trial(item, t)
}

// ParseParams reads a hook's parameters given as a JSON object on the
// command line, numbers as the harness config's YAML would give them:
// whole ones as int, others as float64.
func ParseParams(text string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("want a JSON object such as '{\"max\": 3}': %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("want one JSON object, got more after it")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object such as '{\"max\": 3}', got %s", kindOf(v))
	}
	out, err := plainNumbers(m)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

func plainNumbers(v any) (any, error) {
	var err error
	switch v := v.(type) {
	case json.Number:
		if n, aerr := strconv.Atoi(v.String()); aerr == nil {
			return n, nil
		}
		f, ferr := v.Float64()
		if ferr != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s is not a number a float holds", v)
		}
		return f, nil
	case map[string]any:
		for k, x := range v {
			if v[k], err = plainNumbers(x); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, x := range v {
			if v[i], err = plainNumbers(x); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}
