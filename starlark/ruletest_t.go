package starlark

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// tester is the t a rule test is called with: it builds in-memory
// repositories and items, runs hooks against them, and collects failed
// assertions, so that a test goes on after one fails.
type tester struct {
	runner    TestRunner
	file      string
	st        *callState
	failures  []TestFailure
	dropped   int // failures past maxFailures, counted and not kept
	hookSteps uint64
	attrs     map[string]*sl.Builtin
}

var _ sl.HasAttrs = (*tester)(nil)

var testerAttrs = []string{"eq", "fails", "finding", "repo", "run", "status", "true"}

func (t *tester) String() string        { return "<t>" }
func (t *tester) Type() string          { return "t" }
func (t *tester) Freeze()               {}
func (t *tester) Truth() sl.Bool        { return sl.True }
func (t *tester) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: t") }
func (t *tester) AttrNames() []string   { return testerAttrs }

func (t *tester) Attr(name string) (sl.Value, error) {
	if t.attrs == nil {
		t.attrs = map[string]*sl.Builtin{
			"eq":      sl.NewBuiltin("t.eq", t.eq),
			"true":    sl.NewBuiltin("t.true", t.isTrue),
			"status":  sl.NewBuiltin("t.status", t.status),
			"finding": sl.NewBuiltin("t.finding", t.finding),
			"fails":   sl.NewBuiltin("t.fails", t.fails),
			"repo":    sl.NewBuiltin("t.repo", t.repo),
			"run":     sl.NewBuiltin("t.run", t.run),
		}
	}
	if b, ok := t.attrs[name]; ok {
		return b, nil
	}
	return nil, nil
}

// fail records a failed assertion at the line of the test that made it.
func (t *tester) fail(thread *sl.Thread, msg string, extra sl.Value) {
	if s, ok := extra.(sl.String); ok && s != "" {
		msg = string(s) + ": " + msg
	}
	pos := ""
	if depth := thread.CallStackDepth(); depth > 1 {
		pos = thread.CallFrame(1).Pos.String()
		if depth > 2 {
			// An assertion in a helper: where the test called it too.
			pos += " (from " + thread.CallFrame(depth-1).Pos.String() + ")"
		}
	}
	if len(t.failures) >= maxFailures {
		t.dropped++
		return
	}
	t.failures = append(t.failures, TestFailure{Pos: pos, Msg: graph.Cut(oneLine(msg), maxFailureBytes)})
}

// shown is v as a failure message quotes it: its repr when that is
// short, which is measured before it is built, since a value a test makes
// can be too large or deep to write out.
func shown(v sl.Value) string {
	const max = 1 << 10
	if size, deep := strSize(v, max); deep || size > max {
		if l, ok := v.(sl.Sequence); ok {
			return fmt.Sprintf("<a %s of %d elements, too large to show>", v.Type(), l.Len())
		}
		return fmt.Sprintf("<a %s too large to show>", v.Type())
	}
	return v.String()
}

// eq(got, want, msg=None)
func (t *tester) eq(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var got, want sl.Value
	var msg sl.Value = sl.None
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "got", &got, "want", &want, "msg?", &msg); err != nil {
		return nil, err
	}
	if err := chargeCompare(thread, syntax.EQL, got, want, b.Name()); err != nil {
		return nil, err
	}
	same, err := sl.Equal(got, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if !same {
		t.fail(thread, fmt.Sprintf("got %s, want %s", shown(got), shown(want)), msg)
	}
	return sl.None, nil
}

// true(cond, msg=None)
func (t *tester) isTrue(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var cond sl.Value
	var msg sl.Value = sl.None
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "cond", &cond, "msg?", &msg); err != nil {
		return nil, err
	}
	if !cond.Truth() {
		t.fail(thread, fmt.Sprintf("got %s, want something true", shown(cond)), msg)
	}
	return sl.None, nil
}

// status(result, want) asserts a t.run result's status.
func (t *tester) status(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var res *runResult
	var want string
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &res, &want); err != nil {
		return nil, err
	}
	if !graph.Status(want).Valid() {
		return nil, fmt.Errorf("%s: %q is not a status; want pass, block, wait or skip", b.Name(), want)
	}
	if res.broken(t, thread) {
		return sl.None, nil
	}
	if got := res.rep.Result.Status; got != graph.Status(want) {
		t.fail(thread, fmt.Sprintf("%s returned %s, want %s%s", res.rep.Result.Hook, got, want, res.said()), sl.None)
	}
	return sl.None, nil
}

// broken fails the assertion being made about res when its hook failed to
// run: check would block on it, so a test expecting a block would pass on a
// rule that crashes. A test about the failure itself asserts on res.error.
func (r *runResult) broken(t *tester, thread *sl.Thread) bool {
	if r.rep.Trace.Err == "" {
		return false
	}
	t.fail(thread, fmt.Sprintf("%s failed to run: %s (check would block the node, not retriable; to test the failure itself, assert on res.error)", r.rep.Result.Hook, r.rep.Trace.Err), sl.None)
	return true
}

// finding(result, contains=None, path=None, line=None, column=None,
// severity=None) asserts that one finding of a t.run result matches
// everything given.
func (t *tester) finding(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var res *runResult
	var containsArg, pathArg, severityArg optString
	var lineArg, columnArg optInt
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "result", &res, "contains?", &containsArg, "path?", &pathArg, "line?", &lineArg, "column?", &columnArg, "severity?", &severityArg); err != nil {
		return nil, err
	}
	contains, path, severity := string(containsArg), string(pathArg), string(severityArg)
	line, column := int(lineArg), int(columnArg)
	if res.broken(t, thread) {
		return sl.None, nil
	}
	match := func(f graph.Finding) bool {
		return strings.Contains(f.Text, contains) && (path == "" || f.Path == path) &&
			(line == 0 || f.Line == line) && (column == 0 || f.Column == column) &&
			(severity == "" || string(f.Severity) == severity)
	}
	if !slices.ContainsFunc(res.rep.Findings, match) {
		var want []string
		for _, kv := range [][2]string{{"contains", contains}, {"path", path}, {"severity", severity}} {
			if kv[1] != "" {
				want = append(want, fmt.Sprintf("%s %q", kv[0], kv[1]))
			}
		}
		if line > 0 {
			want = append(want, fmt.Sprintf("line %d", line))
		}
		if column > 0 {
			want = append(want, fmt.Sprintf("column %d", column))
		}
		t.fail(thread, fmt.Sprintf("no finding with %s%s", orAny(want), res.said()), sl.None)
	}
	return sl.None, nil
}

func orAny(want []string) string {
	if len(want) == 0 {
		return "anything (want at least one finding)"
	}
	return strings.Join(want, ", ")
}

// fails(fn, pattern) asserts that calling fn fails with an error whose
// message matches pattern. A limit exceeded is never caught: it ends the
// test.
func (t *tester) fails(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var fn sl.Callable
	var pattern string
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &fn, &pattern); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	_, err = sl.Call(thread, fn, nil, nil)
	if err != nil && t.st.trippedLimit() != limitNone {
		return nil, err
	}
	switch {
	case err == nil:
		t.fail(thread, fmt.Sprintf("%s did not fail; want an error matching %q", fn.Name(), pattern), sl.None)
	case !re.MatchString(errorText(err)):
		t.fail(thread, fmt.Sprintf("%s failed with %q, which does not match %q", fn.Name(), graph.Cut(errorText(err), maxFailureBytes), pattern), sl.None)
	}
	return sl.None, nil
}

// errorText is an error's message without its Starlark backtrace.
func errorText(err error) string {
	if ee, ok := err.(*sl.EvalError); ok {
		return ee.Msg
	}
	return err.Error()
}

// The in-memory repository is held to what a checkout's reads are: no
// file past what one read takes (graph.MaxArtifactBytes), nor files past
// what one evaluation keeps (graph.MaxEvaluationBytes) in all, nor a path
// past what the kernel takes. Each is checked before anything is copied,
// and every entry is counted, so a dict of many references to one large
// string is refused, not copied as many times.
const (
	maxTestFileBytes = graph.MaxArtifactBytes
	maxTestRepoBytes = graph.MaxEvaluationBytes
	maxTestPathBytes = 4095
	// testEntryBytes is what each file costs the repository besides its
	// contents and path: its map entries and listings.
	testEntryBytes = 64
)

// fileContent is a file's content as a test gives it: a string or bytes,
// neither copied.
func fileContent(v sl.Value) (string, bool) {
	switch v := v.(type) {
	case sl.String:
		return string(v), true
	case sl.Bytes:
		return string(v), true
	}
	return "", false
}

// admit adds a file of n bytes at path p to what the repository holds,
// refusing it, naming the test, where it would pass a limit.
func (r *testRepo) admit(t *tester, what, p string, n int) error {
	if len(p) > maxTestPathBytes {
		return fmt.Errorf("%s: %s: %s: a path of %d bytes exceeds the limit of %d", what, t.st.who, graph.Cut(p, 64), len(p), maxTestPathBytes)
	}
	if n > maxTestFileBytes {
		return fmt.Errorf("%s: %s: %q: %d bytes exceed the limit of %s a file (what a checkout's read takes)", what, t.st.who, graph.Cut(p, 256), n, formatBytes(maxTestFileBytes))
	}
	r.size += uint64(n) + uint64(len(p)) + testEntryBytes
	if r.size > maxTestRepoBytes {
		return fmt.Errorf("%s: %s: %q: the test's repository comes to more than its limit of %s in all (what one evaluation keeps)", what, t.st.who, graph.Cut(p, 256), formatBytes(maxTestRepoBytes))
	}
	return nil
}

// who names the test that made r, for its errors.
func (r *testRepo) who() string {
	if r.t == nil {
		return "the test"
	}
	return r.t.st.who
}

// repo(files={}) is an in-memory repository holding files, by
// repository-relative path.
func (t *tester) repo(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var filesArg optDict
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "files?", &filesArg); err != nil {
		return nil, err
	}
	files := filesArg.d
	r := &testRepo{t: t, files: map[string][]byte{}, items: map[string]TestItem{}}
	if files != nil {
		items := files.Items()
		// Building the repository is work done for the test: a step a
		// file and one a KiB, like reading them; the paths are charged
		// before they are cleaned, the contents before they are copied.
		if err := t.st.charge(thread, uint64(len(items)), b.Name()); err != nil {
			return nil, err
		}
		for _, kv := range items {
			k, ok := kv[0].(sl.String)
			if !ok {
				return nil, fmt.Errorf("%s: files: a path must be a string, got %s", b.Name(), kv[0].Type())
			}
			if len(k) > maxTestPathBytes {
				return nil, r.admit(t, b.Name(), string(k), 0)
			}
			if p, err := repo.Clean(string(k)); err != nil || p == "." {
				return nil, fmt.Errorf("%s: files[%q]: want a file's path inside the repository", b.Name(), string(k))
			}
			data, ok := fileContent(kv[1])
			if !ok {
				return nil, fmt.Errorf("%s: files[%q]: content must be a string or bytes, got %s", b.Name(), string(k), kv[1].Type())
			}
			if err := r.admit(t, b.Name(), string(k), len(data)); err != nil {
				return nil, err
			}
		}
		if err := t.st.charge(thread, r.size/1024, b.Name()); err != nil {
			return nil, err
		}
		for _, kv := range items {
			data, _ := fileContent(kv[1])
			r.files[string(kv[0].(sl.String))] = []byte(data)
		}
	}
	return r, nil
}

// run(hook, item, node=None, boundary=None, params=None, changed=None)
// runs hook against item through the same path as check, and returns what
// it did: status, findings, messages, data, error, prints, steps,
// under_check. params stands in for the attachment's with: (with is a
// reserved word in Starlark).
func (t *tester) run(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var hook string
	var node, boundary optString
	var item *testItem
	var withArg optDict
	var changed sl.Value = sl.None
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "hook", &hook, "item", &item, "node?", &node, "boundary?", &boundary, "params?", &withArg, "changed?", &changed); err != nil {
		return nil, err
	}
	with := withArg.d
	req := TrialRequest{Files: maps.Clone(item.repo.files), Item: item.id,
		Trial: graph.Trial{Hook: hook, Node: string(node), Boundary: graph.Boundary(boundary)}}
	for _, id := range slices.Sorted(maps.Keys(item.repo.items)) {
		req.Items = append(req.Items, item.repo.items[id])
	}
	if with != nil {
		params, err := toGo(with)
		if err != nil {
			return nil, fmt.Errorf("%s: params: %w", b.Name(), err)
		}
		req.Trial.Params = params.(map[string]any)
	}
	if changed != sl.None {
		paths, err := stringList(changed)
		if err != nil {
			return nil, fmt.Errorf("%s: changed: %w", b.Name(), err)
		}
		req.Changed = paths
	}
	// Each run builds the repository again, copying the items'
	// artifacts: a step a file and one a KiB.
	if err := t.st.charge(thread, uint64(len(req.Files))+item.repo.size/1024, b.Name()); err != nil {
		return nil, err
	}
	var rep *graph.TrialReport
	var err error
	t.st.leave(func() { rep, err = t.runner.RunTrial(req) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	t.hookSteps += rep.Trace.Steps
	for _, p := range rep.Trace.Prints {
		// What the hook printed, in order with the test's own prints.
		t.st.prints.add(nil, hook+": "+p)
	}
	return newRunResult(rep)
}

func stringList(v sl.Value) ([]string, error) {
	iter, ok := v.(sl.Iterable)
	if !ok {
		return nil, fmt.Errorf("want a list of paths, got %s", v.Type())
	}
	out := []string{}
	for x := range sl.Elements(iter) {
		s, ok := x.(sl.String)
		if !ok {
			return nil, fmt.Errorf("want a list of paths, got an element of type %s", x.Type())
		}
		out = append(out, string(s))
	}
	return out, nil
}

// testRepo is t.repo(): files, and the items made in it with item().
type testRepo struct {
	t     *tester
	size  uint64 // what its files and items' artifacts come to (see admit)
	files map[string][]byte
	items map[string]TestItem
}

var _ sl.HasAttrs = (*testRepo)(nil)

func (r *testRepo) String() string        { return fmt.Sprintf("<repo of %d files>", len(r.files)) }
func (r *testRepo) Type() string          { return "test_repo" }
func (r *testRepo) Freeze()               {}
func (r *testRepo) Truth() sl.Bool        { return sl.True }
func (r *testRepo) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: test_repo") }
func (r *testRepo) AttrNames() []string   { return []string{"item"} }

func (r *testRepo) Attr(name string) (sl.Value, error) {
	if name == "item" {
		return sl.NewBuiltin("repo.item", r.item), nil
	}
	return nil, nil
}

// item(id, node=None, artifacts={}, state={}) makes a work item in the
// repository: its spec folder holds the artifacts (name to content), and
// its state file records node as its current node, with state's keys
// over it.
func (r *testRepo) item(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var id string
	var nodeArg optString
	var artifactsArg, stateArg optDict
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "id", &id, "node?", &nodeArg, "artifacts?", &artifactsArg, "state?", &stateArg); err != nil {
		return nil, err
	}
	node, artifacts, state := string(nodeArg), artifactsArg.d, stateArg.d
	if _, dup := r.items[id]; dup {
		return nil, fmt.Errorf("%s: %q is already an item of this repository", b.Name(), id)
	}
	it := TestItem{ID: id, Node: node, Artifacts: map[string]string{}}
	size := r.size // given back when the item is refused
	if artifacts != nil {
		items := artifacts.Items()
		// Each run copies the artifacts into its repository: they are
		// held to its limits, every reference counted, before any is.
		if r.t != nil {
			if err := r.t.st.charge(thread, uint64(len(items)), b.Name()); err != nil {
				return nil, err
			}
		}
		for _, kv := range items {
			k, ok1 := kv[0].(sl.String)
			v, ok2 := fileContent(kv[1])
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("%s: artifacts: want file names mapped to their contents, got %s: %s", b.Name(), kv[0].Type(), kv[1].Type())
			}
			if r.t != nil {
				if err := r.admit(r.t, b.Name(), id+"/"+string(k), len(v)); err != nil {
					r.size = size
					return nil, err
				}
			}
			it.Artifacts[string(k)] = v
		}
	}
	if state != nil {
		// The state becomes the item's state file, which a checkout reads
		// up to graph.MaxStateBytes: measured before it is converted.
		if n, deep := strSize(state, graph.MaxStateBytes); deep || n > graph.MaxStateBytes {
			r.size = size
			return nil, fmt.Errorf("%s: %s: state: would write more than %s, the limit of a state file", b.Name(), r.who(), formatBytes(graph.MaxStateBytes))
		} else if r.t != nil {
			if err := r.admit(r.t, b.Name(), id+"/"+graph.StateFile, int(n)); err != nil {
				r.size = size
				return nil, err
			}
		}
		v, err := toGo(state)
		if err != nil {
			return nil, fmt.Errorf("%s: state: %w", b.Name(), err)
		}
		it.State = v.(map[string]any)
	}
	r.items[id] = it
	return &testItem{repo: r, id: id, node: node}, nil
}

// testItem is repo.item(): the handle t.run takes.
type testItem struct {
	repo *testRepo
	id   string
	node string
}

var _ sl.HasAttrs = (*testItem)(nil)

func (i *testItem) String() string        { return fmt.Sprintf("<item %s>", i.id) }
func (i *testItem) Type() string          { return "test_item" }
func (i *testItem) Freeze()               {}
func (i *testItem) Truth() sl.Bool        { return sl.True }
func (i *testItem) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: test_item") }
func (i *testItem) AttrNames() []string   { return []string{"id", "node"} }

func (i *testItem) Attr(name string) (sl.Value, error) {
	switch name {
	case "id":
		return sl.String(i.id), nil
	case "node":
		return sl.String(i.node), nil
	}
	return nil, nil
}

// runResult is what t.run returns: a read-only view of the trial.
type runResult struct {
	rep   *graph.TrialReport
	attrs sl.StringDict
}

var _ sl.HasAttrs = (*runResult)(nil)

func newRunResult(rep *graph.TrialReport) (*runResult, error) {
	findings := make(sl.Tuple, len(rep.Findings))
	for i, f := range rep.Findings {
		findings[i] = newStruct("finding", sl.StringDict{
			"hook": sl.String(f.Hook), "severity": sl.String(f.Severity), "text": sl.String(f.Text),
			"path": sl.String(f.Path), "line": sl.MakeInt(f.Line), "column": sl.MakeInt(f.Column),
		})
	}
	msgs := make(sl.Tuple, len(rep.Result.Messages))
	for i, m := range rep.Result.Messages {
		msgs[i] = &messageValue{m}
	}
	var data sl.Value = sl.None
	if rep.Result.Data != nil {
		d, err := toStarlark(rep.Result.Data)
		if err != nil {
			return nil, err
		}
		data = d
	}
	before := make(sl.Tuple, len(rep.Before))
	for i, b := range rep.Before {
		v, err := resultValue(b)
		if err != nil {
			return nil, err
		}
		before[i] = v
	}
	var errText sl.Value = sl.None
	if rep.Trace.Err != "" {
		errText = sl.String(rep.Trace.Err)
	}
	r := &runResult{rep: rep, attrs: sl.StringDict{
		"hook": sl.String(rep.Result.Hook), "status": sl.String(rep.Result.Status),
		"node": sl.String(rep.Node), "boundary": sl.String(rep.Boundary),
		"findings": findings, "messages": msgs, "data": data, "error": errText,
		"retriable": sl.Bool(rep.Result.Retriable), "prints": stringTuple(rep.Trace.Prints),
		"steps": sl.MakeUint64(rep.Trace.Steps), "under_check": sl.String(rep.UnderCheck),
		"before": before,
	}}
	r.attrs.Freeze()
	return r, nil
}

func (r *runResult) String() string {
	return fmt.Sprintf("<result %s %s>", r.rep.Result.Hook, r.rep.Result.Status)
}
func (r *runResult) Type() string          { return "result" }
func (r *runResult) Freeze()               {}
func (r *runResult) Truth() sl.Bool        { return sl.True }
func (r *runResult) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: result") }
func (r *runResult) AttrNames() []string   { return r.attrs.Keys() }
func (r *runResult) Attr(name string) (sl.Value, error) {
	return r.attrs[name], nil
}

// said is what a failure about this result adds: its findings and error.
func (r *runResult) said() string {
	var b strings.Builder
	if r.rep.Trace.Err != "" {
		fmt.Fprintf(&b, "; it failed: %s", r.rep.Trace.Err)
	}
	if len(r.rep.Findings) > 0 {
		b.WriteString("; its findings:")
		for _, f := range r.rep.Findings {
			where := f.Where()
			if where != "" {
				where = " (" + where + ")"
			}
			fmt.Fprintf(&b, " [%s: %s%s]", f.Severity, f.Text, where)
		}
	} else if r.rep.Trace.Err == "" {
		b.WriteString("; it reported no finding")
	}
	return b.String()
}

// optString, optInt and optDict are optional arguments whose default is
// None: None, or no argument, is the zero value.
type (
	optString string
	optInt    int
	optDict   struct{ d *sl.Dict }
)

func (o *optString) Unpack(v sl.Value) error {
	switch v := v.(type) {
	case sl.NoneType:
		*o = ""
	case sl.String:
		*o = optString(v)
	default:
		return fmt.Errorf("got %s, want string or None", v.Type())
	}
	return nil
}

func (o *optInt) Unpack(v sl.Value) error {
	if v == sl.None {
		*o = 0
		return nil
	}
	var n int
	if err := sl.AsInt(v, &n); err != nil {
		return fmt.Errorf("got %s, want int or None", v.Type())
	}
	*o = optInt(n)
	return nil
}

func (o *optDict) Unpack(v sl.Value) error {
	switch v := v.(type) {
	case sl.NoneType:
		o.d = nil
	case *sl.Dict:
		o.d = v
	default:
		return fmt.Errorf("got %s, want dict or None", v.Type())
	}
	return nil
}
