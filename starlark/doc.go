// Package starlark is the sandboxed host for a repository's own hooks,
// written in Starlark: it executes the modules a repository declares,
// collects their hook() registrations into a per-repository table, and runs
// each hook call under a step budget, a deadline and a memory watchdog with
// a frozen ctx whose only window on the world is a repository reader.
//
// # Loading
//
// [Load] takes the declared modules ([Module]: a repo-relative Path to a
// .star file, or a Dotted name a.b resolved as a/b.star in the first
// [Options].HookPath directory that has it) and returns the hooks they
// registered, by name, as graph.Hook values ([*Hook]). Each module's top
// level is executed once, in declaration order, under the [Limits]. Every
// failure is a *graph.ConfigError with Key "graph.hooks.modules", located
// at the Starlark position when there is one (the .star file and line) and
// at the declaration (Module.File and Line) otherwise, naming the module
// and the rule broken. Refused: an absolute path, a path leaving the
// repository through .. or a symbolic link, a file that is not .star (a
// .py file is told to port itself to .star), a missing or unreadable file,
// a module whose top level fails (syntax, resolution or runtime error,
// quoted with its file:line:col and backtrace), a module that registers no
// hook, a name without the x- prefix, a name two modules (or one module
// twice) register, the same module declared twice, and a dotted name not
// found on the hook path (the directories searched are listed).
//
// [Resolve] finds the modules' files as Load would and executes nothing,
// returning every failure to find one rather than the first: it is how a
// declaration is checked before anything of it runs.
//
// The dialect is starlark-go's strict one plus sets: no while, no
// recursion, no reassignment of a global, no if or for at the top level
// (a module's top level defines and registers; its work happens in
// functions). A %= or //= on an element or field (x[i] %= y) is also
// refused; write x[i] = x[i] % y.
//
// load() loads another .star file: "//a/b.star" from the root of the
// loading file's tree (the repository, or for a hook-path module its hook
// path directory), anything else relative to the loading file. Absolute
// paths, paths leaving the tree through .. or a symbolic link, labels
// (@repo//x) and files that are not .star are refused. Each loaded file is
// executed once per Load, frozen and shared; a cycle is reported with its
// chain. A loaded file is a library: its top level may not call hook(),
// because it runs once for whichever module loads it first. It may define
// functions that call hook(), which a declared module then calls at its own
// top level. A declared module cannot also be load()ed.
//
// # The predeclared API
//
//	hook(name, impl)
//	    Registers impl, a function taking ctx, under name, which must be x-
//	    followed by letters, digits, '.', '_' or '-'. Only while a declared
//	    module's top level runs; calling it from a running hook is an error.
//
//	ok(*msgs, data=None)      the hook passes
//	block(*msgs, retriable=True, data=None)
//	wait(*msgs, data=None)    a gate stays open
//	skip(*msgs, data=None)    the hook declines to judge
//	    Each positional argument is a string, a message() or a list (or
//	    tuple) of those. A bare string is an "error" message under block and
//	    a "notice" under the others; a block with no message gets one
//	    saying so. data is a dict with string keys, converted to plain Go
//	    values (string, int, float64, bool, nil, []any, map[string]any;
//	    tuples and sets become lists, structs maps) when the result is made:
//	    integers must fit in 64 bits, floats must be finite, and data may
//	    hold at most 100000 values nested at most 64 deep. data["outcome"]
//	    is dropped with a warning by graph.RunChain: repository hooks do not
//	    route. A result has the attributes status, messages, data and
//	    retriable.
//
//	message(text, path=None, line=None, severity="error", column=None)
//	    One finding; severity is "error", "warning" or "notice" ("info" is
//	    taken as "notice"), line and column count from 1, and a column
//	    needs a line. Attributes text, path, line, column, severity. Under
//	    ok() and skip() an error or warning is reported as a warning and
//	    fails nothing; a notice says why the hook had nothing to object to.
//
//	json      starlark-go's json module: encode, decode, indent, encode_indent
//	math      starlark-go's math module
//	struct    starlarkstruct.Make
//	re        the package re (starlark/re): regular expressions on Go's
//	          regexp (RE2: linear time, no backreferences, no lookaround;
//	          flags inline, as (?i)), bounded by the call's limits:
//	    re.compile(pattern) -> a pattern with .match, .search, .fullmatch,
//	        .findall, .finditer, .sub, .split and the attributes pattern
//	        and groups;
//	    re.match, re.search, re.fullmatch, re.findall, re.finditer, re.sub,
//	    re.split take
//	        the pattern (a string or a compiled pattern) first;
//	    re.escape(s) quotes s.
//	    match(s) anchors at the start of s, search(s) finds the first match
//	    anywhere, fullmatch(s) must match all of s; each returns None or a
//	    match with group(*g) (no argument: the whole match; several: a
//	    tuple), groups(default=None) (a tuple), groupdict(default=None),
//	    start(g=0), end(g=0), span(g=0) and string. Offsets are byte
//	    offsets, as Starlark indexes strings. A group that took no part is
//	    None. findall(s) returns the matches as strings when the pattern
//	    has no group, the group when it has one, and tuples of the groups
//	    otherwise (a group that took no part is ""); finditer(s) returns
//	    the matches themselves, as a list. sub(repl, s, count=0)
//	    replaces the first count matches (all when 0) with repl, a template
//	    in which \1 to \99, \g<1> and \g<name> insert a group, \\ a
//	    backslash and \n, \t, \r control characters, or a function called
//	    with the match that returns a string. split(s, maxsplit=0) splits
//	    at each match, putting the pattern's groups between the pieces. As
//	    everywhere in Go's regexp, an empty match next to a previous match
//	    is not a match.
//
// Starlark's universal functions are there, with print going to
// Options.Log at debug level. There is no clock, no randomness, no
// environment, no network and no file access but ctx.repo.
//
// # ctx
//
// A hook is called with one argument, ctx, a frozen value whose
// attributes are built on first use:
//
//	ctx.hook        the x- name the hook was registered under
//	ctx.params      the chain entry's with: mapping, as a dict
//	ctx.node        id, phase, actor, description, produces (a tuple),
//	                required, optional, skippable, opt_in, terminal,
//	                max_attempts; None when there is no node
//	ctx.boundary    "entry" or "exit"
//	ctx.loop        the loop's name
//	ctx.work_item   id, ref, spec_dir (repo-relative), risk_tier, tags
//	ctx.artifacts   a dict from each name the node produces that exists in
//	                the spec folder (either name of an "a.md|b.md" entry)
//	                to its repo-relative path
//	ctx.decisions   the recorded decisions, as a dict
//	ctx.results     the results of the hooks before this one in the chain,
//	                each with hook, status, outcome, messages, data and
//	                retriable
//	ctx.config      the harness config, as dicts and lists
//	ctx.changed     None (reserved for the paths changed against --base)
//	ctx.repo        the repository, through three functions:
//	    read(path)    the file's contents as a string
//	    exists(path)  whether path names a file or directory
//	    glob(pattern) the regular files matching pattern, as a new sorted
//	                  list: segments match as Go's path.Match ("*" and "?"
//	                  stop at "/"), "**" matches any number of whole
//	                  segments; wildcards do not enter .git, symbolic links
//	                  are neither listed nor followed, and a directory that
//	                  cannot be listed fails the glob
//	    Paths are relative to the repository root and slash-separated, and
//	    every access goes through the graph.Context's repo.Checkout. An
//	    absolute path, a path leaving the repository through .., and a path
//	    through a symbolic link that leads outside it (an absolute target
//	    always does) are refused, as an error; only regular files are read,
//	    and a read of a file over Limits.ReadBytes, or one that would take
//	    the call's reads past Limits.ReadTotal, is refused by its size.
//	    Under a read-only evaluation (graph.Files caching), the files a
//	    glob listed are read ahead on other cores once the hook reads the
//	    first of them (see readAhead).
//
// Dicts built from Go maps iterate in key order. Every value ctx reaches
// is frozen: changing one is a Starlark error, so the hook errs, and an
// erring hook blocks.
//
// # Results and errors
//
// A hook returning a result from ok, block, wait or skip yields that
// graph.Result under its x- name. Returning anything else is a block, not
// retriable, naming the type returned. A Starlark error in the call is
// returned as a [*HookError] that names the hook and carries the
// *starlark.EvalError (errors.As reaches it; its message is the position
// and error on one line, then the backtrace); graph.RunChain turns it into
// a block that is not retriable.
//
// # Limits
//
// Each module top level and each hook call runs on its own thread, on its
// own goroutine, under [Limits] (zero fields take [DefaultLimits]):
//
//   - Steps: starlark-go's step budget. Work done inside builtins on the
//     hook's behalf is charged too, before or while it is done, at rates
//     measured so that a charged step takes no longer than a few hundred
//     nanoseconds (BenchmarkChargedStep): an element per eight for
//     functions that walk a sequence (so max(range(1 << 62)) exhausts the
//     budget instead of running for ever), a step per KiB read and per
//     entry a glob visits (64 more per glob call). Comparisons (==, <,
//     ...; rewritten to hidden $== and so on), in, list.index and
//     list.remove, sorted, min and max (key results included), t.eq, and
//     the building of sets and dicts are charged for every element and
//     byte they will compare or hash, measured by identity so that
//     structure shared many times over is counted each time it is used
//     without being walked each time (cost.go); str, repr, formats, the
//     json functions, str.replace, split, join and the list moves of
//     insert and pop for what they scan and write. Measuring stops once it
//     has cost what the call has left.
//   - Deadline: a timer cancels the thread. Starlark notices at its next
//     instruction; a builtin running at that moment finishes first. If the
//     call has still not returned half the deadline later (at least a
//     second), the caller stops waiting: the call is reported as a block
//     and its goroutine, cancelled, is left to end on its own.
//   - Heap: starlark-go has no memory limit and its builtins cannot be
//     interrupted, so memory is bounded two ways. A watchdog samples the Go
//     heap every 2 ms during the call and cancels the thread once the heap
//     has grown by more than Heap since the call began (it collects first,
//     so garbage does not count). And every operation that can build a
//     value much larger than its operands is estimated before it runs and
//     refused if it would take the heap past the limit: + and * (repetition
//     and concatenation of strings, bytes, lists, tuples), % and
//     str.format, str.join, str.replace, str.split, rsplit and splitlines,
//     list.extend, list +=, the set and dict methods that take iterables,
//     list, tuple, sorted, reversed, set, dict, enumerate, zip and bytes
//     over a sequence of known length, str, repr, print and fail (whose
//     estimate counts a value referred to many times once per reference),
//     json.encode, decode and indent, and re.findall, re.sub and re.split.
//     A string is estimated as escaped at worst (six bytes for a control
//     byte in JSON), and a regular expression's matches by their groups.
//     sorted is charged n log n comparisons at the cost of the dearest but
//     one, a regular expression its program size times its groups times
//     its input, so no one builtin runs long.
//     Values and JSON documents nested past 1000 levels are refused by
//     every builtin that walks them recursively, as an error at the line.
//     These operators are reached by rewriting the syntax tree before it is
//     compiled (x * y calls a hidden $mul(x, y); the names start with $, so
//     no module can name them). Integer products are limited to 2^20 bits,
//     and int() and a number json.decode parses to 4300 digits, the
//     quadratic cases.
//   - ReadBytes and ReadTotal bound ctx.repo.read per file and per call.
//
// Exceeding Steps, Deadline or Heap in a hook call is a block, not
// retriable, whose one message names the hook and the limit:
// "x-loop exceeded its step budget of 10000000 steps (stopped at
// .the-loop/hooks/rules.star:4:5)", "x-slow exceeded its deadline of 5s",
// "x-bomb exceeded its memory limit of 256 MiB". At a module's top level it
// is a load failure saying the same.
//
// The heap is the process's, so calls running side by side can be charged
// for each other's memory: a call's verdict stands only when it did not
// trip the limit and the whole process allocated less than Heap while it
// ran (which bounds what the call itself grew the heap by); otherwise it
// runs again alone, from a collected heap. The same inputs give the same
// verdict however many items are checked at once and on however many
// cores.
//
// The process's heap as a whole is bounded too, at 384 MiB (or a call's
// Heap and 64 MiB, were that more): the watchdog and every guarded
// operation measure it, with what the other running calls' guarded
// operations were allowed and may not have allocated yet (each reserves
// its estimate under one lock, so two calls are never both allowed the
// same room). A call abandoned at its deadline keeps its reservation
// until its goroutine ends and its memory until it is collectable, so it
// counts until it is really gone. Exceeding it is "x-h exceeded the
// process's memory limit of 384 MiB (all hook calls together)", judged
// again alone like a call's own memory limit. The first call also sets
// the Go runtime's soft memory limit to 512 MiB, unless one is set
// (GOMEMLIMIT). Peak memory stays under 600 MB resident.
//
// # The budget
//
// A graph.Budget (Options.Budget for the modules' top levels, the
// graph.Context's for hook calls) bounds the rule time of a whole
// evaluation: each call counts from when it starts running, past the
// heap gate, to when its goroutine ends; calls side by side count as the
// processor time they can have had. Once it is spent, running calls
// are stopped ("x-h exceeded the budget of 1m0s of rule time (all
// repository hooks together)") and later ones are not run ("x-h was not
// run: ... is spent"), both blocks that are not retriable; a top level it
// stops fails the load, wrapping graph.ErrBudgetSpent.
//
// # Tracing and rule tests
//
// A hook call whose graph.Context carries a Trace fills it: the print()
// lines in order, each with its position, the Starlark steps the call took,
// and an error's backtrace (hooks run). [RunTests] executes *_test.star
// files as modules are executed, with hook() refused, and calls each
// test_* function with t: t.repo, repo.item and t.run build an in-memory
// repository and run a hook against it through a [TestRunner] (policy's,
// the same path as check); t.eq, t.true, t.status, t.finding and t.fails
// collect failures at the test's line and let the test go on. A test runs
// under the hook limits, its deadline ten hook deadlines, and is not
// charged for the heap its t.run calls grow. Its steps, its hook calls'
// included, are reported: they are the same on every run.
//
// # Concurrency
//
// Load keeps no state between calls and may be called concurrently. The
// hooks it returns are frozen and may be run concurrently; each call has
// its own thread, limits, reads allowance and ctx.
package starlark
