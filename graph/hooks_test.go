package graph

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// fakeRegistry is a shipped registry for tests: each hook returns whatever
// its function says.
type fakeRegistry map[string]Hook

func (r fakeRegistry) Lookup(name string) (Hook, bool) { h, ok := r[name]; return h, ok }
func (r fakeRegistry) Names() []string                 { return slices.Sorted(maps.Keys(r)) }

type paramHook struct {
	HookFunc
	allowed []string
}

func (p paramHook) CheckParams(params map[string]any) error {
	for k := range params {
		if !slices.Contains(p.allowed, k) {
			return fmt.Errorf("with.%s: unknown parameter; want one of %v", k, p.allowed)
		}
	}
	return nil
}

func fixed(r Result) Hook {
	return HookFunc(func(ctx *Context) (Result, error) { return r, nil })
}

// testRegistry resolves the hooks the fixtures in testdata use. "gate" reads
// the event: a comment "approve" passes with outcome approved, none waits.
// "file-present" passes when the param path exists in the spec folder.
func testRegistry() fakeRegistry {
	return fakeRegistry{
		"ok":      fixed(Pass("ok", nil)),
		"nothing": fixed(Skip("nothing", "not applicable")),
		"deny":    fixed(Block("deny", Errorf("denied"))),
		"boom": HookFunc(func(*Context) (Result, error) {
			return Result{}, errors.New("exploded")
		}),
		"gate": HookFunc(func(ctx *Context) (Result, error) {
			if ctx.Event == nil || len(ctx.Event.Comments) == 0 {
				if r := ctx.Recorded; r != nil {
					return Wait("gate", fmt.Sprintf("recorded %s by %q at %s", r.Outcome, r.By, r.At.Format(time.RFC3339))), nil
				}
				return Wait("gate", "no authorized feedback yet"), nil
			}
			c := ctx.Event.Comments[0]
			return Pass("gate", map[string]any{"outcome": c.Body,
				"comments": []any{map[string]any{"author": c.Author, "body": c.Body}}}), nil
		}),
		"file-present": paramHook{allowed: []string{"path"}, HookFunc: func(ctx *Context) (Result, error) {
			p, _ := ctx.Params["path"].(string)
			if ctx.Files.IsRegular(ctx.WorkItem.Dir + "/" + p) {
				return Pass("file-present", nil), nil
			}
			return Block("file-present", Message{Text: "missing " + p, Path: p, Severity: SeverityError}), nil
		}},
		"degraded": fixed(Degraded("degraded", ErrIntegrationUnavailable)),
		"warns": fixed(Result{Status: StatusPass, Hook: "warns", Messages: []Message{
			{Text: "deprecated key", Path: "a.md", Line: 3, Column: 1, Severity: SeverityWarning},
			{Text: "said as an error", Severity: SeverityError},
			{Text: "all 3 files looked at", Severity: SeverityInfo},
		}}),
		"mute": fixed(Result{Status: StatusBlock, Hook: "mute"}),
	}
}
