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
	// Modules are the declared modules, which a test file may not load().
	Modules []Module
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

// A run of rule tests is bounded as a whole, not only test by test: the
// files under test are the change's own, and a thousand tests that each
// keep what they may would add up.
const (
	// runDeadlineFactor is the whole run's time, in hook deadlines; a test
	// is not started past it.
	runDeadlineFactor = 60
	// maxReportBytes bounds what the report keeps: names, failures, prints.
	maxReportBytes = 16 << 20
	// maxFailures is how many failed assertions a test keeps, each cut to
	// maxFailureBytes.
	maxFailures     = 100
	maxFailureBytes = 4 << 10
	// A test keeps at most this much of what it printed.
	maxTestPrintLines = 1000
	maxTestPrintBytes = 64 << 10
)

// RunTests executes each file, a repository-relative .star path read from
// opts.Repo, and calls each of its top-level test_* functions, in the
// order they are defined, with a fresh t (see ruletest_t.go for its
// methods). A file that cannot be executed is reported on its TestFile and
// the others still run. The files run with the hook API predeclared, under
// the same limits as a hook call; hook() is refused in them, and so is
// load() of a declared module (opts.Modules).
//
// The run stops, and says so on a TestFile of its own (so that it counts
// as broken), when it has run for runDeadlineFactor hook deadlines, when
// its report would pass maxReportBytes, or when a test did not stop when
// cancelled: its goroutine may still be running, and another beside it
// would only add to it.
func RunTests(files []string, runner TestRunner, opts TestOptions) (*TestReport, error) {
	h, err := newHost(opts.Options)
	if err != nil {
		return nil, err
	}
	r := &testRun{host: h, runner: runner, opts: opts,
		deadline: time.Now().Add(runDeadlineFactor * h.limits.Deadline)}
	rep := &TestReport{Files: []TestFile{}}
	for i, f := range files {
		if r.stopped != "" {
			r.stopped += fmt.Sprintf("; %d file(s) did not run", len(files)-i)
			break
		}
		tf := r.file(f)
		if tf.Err != "" {
			rep.Broken++
		}
		for _, t := range tf.Tests {
			if t.Passed {
				rep.Passed++
			} else {
				rep.Failed++
			}
		}
		rep.Files = append(rep.Files, tf)
	}
	if r.stopped != "" {
		rep.Broken++
		rep.Files = append(rep.Files, TestFile{Path: "(the run)", Err: r.stopped, Tests: []TestResult{}})
	}
	return rep, nil
}

// testRun is one RunTests: what it has kept, and why it stopped.
type testRun struct {
	*host
	runner   TestRunner
	opts     TestOptions
	deadline time.Time
	kept     int
	stopped  string // why the run stopped; "" while it runs
}

func (r *testRun) stop(format string, args ...any) {
	if r.stopped == "" {
		r.stopped = fmt.Sprintf(format, args...)
	}
}

func (r *testRun) file(rel string) TestFile {
	tf := TestFile{Path: rel, Tests: []TestResult{}}
	l := &loader{host: r.host, declared: map[string]Module{}, files: map[string]*fileEntry{}, regs: map[string]*registration{}}
	// A test loads libraries; a declared module is loaded only as one,
	// and saying so beats a hook() refused inside it.
	for _, m := range r.opts.Modules {
		if src, err := l.resolveModule(m); err == nil {
			l.declared[src.real] = m
		}
	}
	src, err := l.resolveIn(r.repo, rel, false)
	if err != nil {
		tf.Err = err.Error()
		return tf
	}
	data, err := readSource(src)
	if err != nil {
		tf.Err = err.Error()
		return tf
	}
	st := newCallState("test file "+src.name, r.limits, r.log)
	st.budget = r.opts.Budget
	st.prints = newPrintLog(maxTestPrintLines, maxTestPrintBytes)
	thread := st.newThread("test file "+src.name, r.threadInit)
	thread.Load = l.loadFn
	// The test file is loading while it runs: a load() of it is a cycle.
	l.files[src.real] = &fileEntry{loading: true}
	var globals sl.StringDict
	_, err, abandoned := st.run(func() (sl.Value, error) {
		globals, err = l.exec(thread, src, data)
		return nil, err
	}, exclusive)
	switch {
	case abandoned:
		tf.Err = fmt.Sprintf("%s: %s as it loaded", src.name, st.exceeded())
		r.stop("%s did not stop when cancelled; the run stopped there", src.name)
		return tf
	case err != nil && st.trippedLimit() != limitNone:
		tf.Err = fmt.Sprintf("%s: %s as it loaded", src.name, st.exceeded())
		return tf
	case err != nil:
		tf.Err = graph.Cut(quote(err), maxFailureBytes)
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
		if r.opts.Run == nil || r.opts.Run.MatchString(name) {
			tests = append(tests, test{name, fn})
		}
	}
	slices.SortFunc(tests, func(a, b test) int {
		return cmp.Or(cmp.Compare(a.fn.Position().Line, b.fn.Position().Line), cmp.Compare(a.name, b.name))
	})
	for i, t := range tests {
		if r.stopped == "" && time.Now().After(r.deadline) {
			r.stop("the run reached its time limit of %s", runDeadlineFactor*r.limits.Deadline)
		}
		if r.stopped != "" {
			r.stopped += fmt.Sprintf("; %d test(s) of %s did not run", len(tests)-i, rel)
			break
		}
		res := r.runTest(t.name, t.fn, rel)
		if !r.keep(&res) {
			r.stop("the report reached its limit of %d bytes", maxReportBytes)
			r.stopped += fmt.Sprintf("; %d test(s) of %s did not run", len(tests)-i, rel)
			break
		}
		tf.Tests = append(tf.Tests, res)
	}
	return tf
}

// keep charges res to the report, trimming what it printed, then its
// failures past the first, when the report would otherwise pass its
// limit; false when even that does not fit.
func (r *testRun) keep(res *TestResult) bool {
	size := func() int {
		n := 64 + len(res.Name) + len(res.Pos)
		for _, f := range res.Failures {
			n += len(f.Pos) + len(f.Msg)
		}
		for _, p := range res.Prints {
			n += len(p)
		}
		return n
	}
	if r.kept+size() > maxReportBytes && len(res.Prints) > 0 {
		res.Prints = []string{fmt.Sprintf("… %d print() line(s) not kept: the report is near its limit", len(res.Prints))}
	}
	if r.kept+size() > maxReportBytes && len(res.Failures) > 1 {
		res.Failures = append(res.Failures[:1], TestFailure{Pos: res.Pos, Msg: fmt.Sprintf("… %d more failure(s) not kept: the report is near its limit", len(res.Failures)-1)})
	}
	if r.kept+size() > maxReportBytes {
		return false
	}
	r.kept += size()
	return true
}

// runTest calls one test function with a fresh t. Assertions that fail
// are collected and the test goes on; an error ends it.
func (r *testRun) runTest(name string, fn *sl.Function, file string) TestResult {
	res := TestResult{Name: name, Pos: fn.Position().String(), Failures: []TestFailure{}}
	limits := r.limits
	limits.Deadline *= testDeadlineFactor
	st := newCallState("test "+name, limits, r.log)
	st.budget = r.opts.Budget
	st.prints = newPrintLog(maxTestPrintLines, maxTestPrintBytes)
	thread := st.newThread("test "+name, r.threadInit)
	t := &tester{runner: r.runner, file: file, st: st}
	start := time.Now()
	// A test holds no heap gate: the hooks it runs take their own.
	_, err, abandoned := st.run(func() (sl.Value, error) {
		return sl.Call(thread, fn, sl.Tuple{t}, nil)
	}, ungated)
	res.Duration = time.Since(start)
	if abandoned {
		// Its goroutine may still run: nothing it holds is read.
		res.Failures = append(res.Failures, TestFailure{Pos: res.Pos, Msg: st.exceeded() + "; it did not stop when cancelled and was abandoned"})
		r.stop("%s did not stop when cancelled; the run stopped there", name)
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
		msg := graph.Cut(oneLine(err.Error()), maxFailureBytes)
		var ee *sl.EvalError
		if errors.As(err, &ee) {
			msg = graph.Cut(oneLine(ee.Msg), maxFailureBytes) + "\n" + graph.Cut(strings.TrimRight(ee.CallStack.String(), "\n"), maxFailureBytes)
		}
		t.failures = append(t.failures, TestFailure{Pos: pos, Msg: "error: " + msg})
	}
	res.Steps = thread.ExecutionSteps() + t.hookSteps
	res.Prints = st.prints.kept()
	res.Failures = append(res.Failures, t.failures...)
	if t.dropped > 0 {
		res.Failures = append(res.Failures, TestFailure{Pos: res.Pos, Msg: fmt.Sprintf("… %d more failed assertion(s) not kept (a test keeps %d)", t.dropped, maxFailures)})
	}
	res.Passed = len(res.Failures) == 0
	return res
}
