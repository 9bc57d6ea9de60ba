package starlark

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/the-loop/the-loop/graph"
)

// TestRunner runs a repository's hooks for its rule tests: t.run hands it
// an in-memory repository and a trial, and it runs the hook through the
// same path as check. policy implements it over the repository's engine.
type TestRunner interface {
	RunTrial(req TrialRequest) (*graph.TrialReport, error)
}

// TrialRequest is one t.run: the repository a test built, the item to run
// against and where.
type TrialRequest struct {
	// Files are the in-memory repository's, by repository-relative path.
	Files map[string][]byte
	// Items are the work items the test made in it.
	Items []TestItem
	Item  string
	Trial graph.Trial
	// Changed is ctx.changed; nil is None, as without --base.
	Changed []string
}

// TestItem is a work item a test made with repo.item(): its artifacts by
// name, and its state (currentNode set from Node when given).
type TestItem struct {
	ID        string
	Node      string
	Artifacts map[string]string
	State     map[string]any
}

// TestOptions configure RunTests.
type TestOptions struct {
	Options
	// Run, when set, selects the tests whose name it matches.
	Run *regexp.Regexp
}

// TestReport is what a set of rule test files did.
type TestReport struct {
	Files  []TestFile `json:"files"`
	Passed int        `json:"passed"`
	Failed int        `json:"failed"`
	// Broken counts the files that could not run at all.
	Broken int `json:"broken"`
}

// TestFile is one *_test.star file's outcome.
type TestFile struct {
	Path string `json:"path"`
	// Err is why the file could not run (a syntax error, a failing
	// load()), with its position; "" when it ran.
	Err string `json:"error,omitempty"`
	// Found counts its test_* functions, before --run chose among them.
	Found int          `json:"found"`
	Tests []TestResult `json:"tests"`
}

// TestResult is one test_* function's outcome.
type TestResult struct {
	Name string `json:"name"`
	// Pos is where the function is defined.
	Pos      string        `json:"position"`
	Passed   bool          `json:"passed"`
	Failures []TestFailure `json:"failures"`
	// Steps are the Starlark steps the test took, its hook runs included:
	// the same every run, so a rule that gets slower shows in review.
	Steps    uint64        `json:"steps"`
	Prints   []string      `json:"prints"`
	Duration time.Duration `json:"-"`
}

// TestFailure is one failed assertion, or the error that ended a test.
type TestFailure struct {
	Pos string `json:"position"`
	Msg string `json:"message"`
}

// testDeadlineFactor is a whole test's deadline in hook deadlines: a test
// may run several hooks.
const testDeadlineFactor = 10

// RunTests executes each file, a repository-relative .star path read from
// opts.Repo, and calls each of its top-level test_* functions, in the
// order they are defined, with a fresh t (see ruletest_t.go for its
// methods). A file that cannot be executed is reported on its TestFile and
// the others still run. The files run with the hook API predeclared, under
// the same limits as a hook call; hook() is refused in them.
func RunTests(files []string, runner TestRunner, opts TestOptions) (*TestReport, error) {
	h, err := newHost(opts.Options)
	if err != nil {
		return nil, err
	}
	rep := &TestReport{Files: []TestFile{}}
	for _, f := range files {
		tf := h.runTestFile(f, runner, opts)
		switch {
		case tf.Err != "":
			rep.Broken++
		default:
			for _, t := range tf.Tests {
				if t.Passed {
					rep.Passed++
				} else {
					rep.Failed++
				}
			}
		}
		rep.Files = append(rep.Files, tf)
	}
	return rep, nil
}

func (h *host) runTestFile(rel string, runner TestRunner, opts TestOptions) TestFile {
	tf := TestFile{Path: rel, Tests: []TestResult{}}
	l := &loader{host: h, declared: map[string]Module{}, files: map[string]*fileEntry{}, regs: map[string]*registration{}}
	src, err := l.resolveIn(h.repo, rel, false)
	if err != nil {
		tf.Err = err.Error()
		return tf
	}
	data, err := readSource(src)
	if err != nil {
		tf.Err = err.Error()
		return tf
	}
	st := newCallState("test file "+src.name, h.limits, h.log)
	st.prints = &printLog{}
	thread := st.newThread("test file "+src.name, h.threadInit)
	thread.Load = l.loadFn
	var globals sl.StringDict
	_, err, abandoned := st.run(func() (sl.Value, error) {
		globals, err = l.exec(thread, src, data)
		return nil, err
	}, exclusive)
	switch {
	case abandoned || (err != nil && st.trippedLimit() != limitNone):
		tf.Err = fmt.Sprintf("%s: %s as it loaded", src.name, st.exceeded())
		return tf
	case err != nil:
		tf.Err = quote(err)
		return tf
	}
	type test struct {
		name string
		fn   *sl.Function
	}
	var tests []test
	for name, v := range globals {
		fn, ok := v.(*sl.Function)
		if !ok || !strings.HasPrefix(name, "test_") {
			continue
		}
		tf.Found++
		if opts.Run == nil || opts.Run.MatchString(name) {
			tests = append(tests, test{name, fn})
		}
	}
	slices.SortFunc(tests, func(a, b test) int {
		return cmp.Or(cmp.Compare(a.fn.Position().Line, b.fn.Position().Line), cmp.Compare(a.name, b.name))
	})
	for _, t := range tests {
		tf.Tests = append(tf.Tests, h.runTest(t.name, t.fn, rel, runner))
	}
	return tf
}

// runTest calls one test function with a fresh t. Assertions that fail
// are collected and the test goes on; an error ends it.
func (h *host) runTest(name string, fn *sl.Function, file string, runner TestRunner) TestResult {
	res := TestResult{Name: name, Pos: fn.Position().String(), Failures: []TestFailure{}}
	limits := h.limits
	limits.Deadline *= testDeadlineFactor
	st := newCallState("test "+name, limits, h.log)
	st.prints = &printLog{}
	thread := st.newThread("test "+name, h.threadInit)
	t := &tester{runner: runner, file: file, st: st}
	start := time.Now()
	// A test holds no heap gate: the hooks it runs take their own.
	_, err, abandoned := st.run(func() (sl.Value, error) {
		return sl.Call(thread, fn, sl.Tuple{t}, nil)
	}, ungated)
	res.Duration = time.Since(start)
	if abandoned {
		// Its goroutine may still run: nothing it holds is read.
		res.Failures = append(res.Failures, TestFailure{Pos: res.Pos, Msg: st.exceeded() + "; it did not stop when cancelled and was abandoned"})
		return res
	}
	switch {
	case err != nil && st.trippedLimit() != limitNone:
		msg := st.exceeded()
		if pos, ok := deepestPos(err); ok {
			msg += fmt.Sprintf(" (stopped at %s)", pos)
		}
		t.failures = append(t.failures, TestFailure{Pos: res.Pos, Msg: msg})
	case err != nil:
		pos := res.Pos
		if p, ok := deepestPos(err); ok {
			pos = p.String()
		}
		msg := oneLine(err.Error())
		var ee *sl.EvalError
		if errors.As(err, &ee) {
			msg = oneLine(ee.Msg) + "\n" + strings.TrimRight(ee.CallStack.String(), "\n")
		}
		t.failures = append(t.failures, TestFailure{Pos: pos, Msg: "error: " + msg})
	}
	res.Steps = thread.ExecutionSteps() + t.hookSteps
	res.Prints = append([]string{}, st.prints.lines...)
	res.Failures = append(res.Failures, t.failures...)
	res.Passed = len(res.Failures) == 0
	return res
}
