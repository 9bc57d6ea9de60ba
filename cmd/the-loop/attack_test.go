package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Resource attacks, each run as a whole process over a checkout that
// carries it: the process must end by itself, well inside a hook's
// deadline plus its grace, with the answer it owes and a peak resident
// set under maxRSS, whatever the hook or config asked for.
const (
	maxRSS  = 600 << 20
	maxWall = 60 * time.Second // a kill only past this: 5 s deadline + 2.5 s grace, with room for a slow machine
)

// attackBinary is the-loop as a separate program. The test binary serves
// (see TestMain) unless it carries the race detector, whose memory would
// be measured instead of the-loop's; then a plain build is made once.
var attackBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "the-loop-attack")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "the-loop")
	if !raceEnabled {
		exe, err := os.Executable()
		if err != nil {
			return "", err
		}
		return bin, os.Symlink(exe, bin)
	}
	out, err := exec.Command("go", "build", "-o", bin, "github.com/the-loop/the-loop/cmd/the-loop").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// attackResult is one process's end.
type attackResult struct {
	code           int
	stdout, stderr string
	rss            int64 // peak resident set, bytes
	wall           time.Duration
}

func attack(t *testing.T, dir string, args ...string) attackResult {
	t.Helper()
	return attackWith(t, dir, nil, args...)
}

// attackWith is attack with more of the environment set (GOMAXPROCS=2
// unless env says otherwise).
func attackWith(t *testing.T, dir string, env []string, args ...string) attackResult {
	t.Helper()
	bin, err := attackBinary()
	if err != nil {
		t.Skip("cannot build the-loop to measure it:", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir(), "THE_LOOP_CLI_CONFIG=", "GOMAXPROCS=2"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(maxWall, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	timer.Stop()
	r := attackResult{stdout: stdout.String(), stderr: stderr.String(), wall: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rss = ru.Maxrss << 10 // kilobytes on Linux
	}
	if r.code == -1 {
		t.Fatalf("the-loop %s did not end within %s; killed", strings.Join(args, " "), maxWall)
	}
	if r.rss > maxRSS {
		t.Errorf("the-loop %s peaked at %d MiB resident; want under %d MiB", strings.Join(args, " "), r.rss>>20, maxRSS>>20)
	}
	t.Logf("exit %d, %s, peak %d MiB", r.code, r.wall.Round(time.Millisecond), r.rss>>20)
	return r
}

// hookRepo writes a repository whose x-rule, from rules (a .star file),
// runs at the exit of implementation for the items given, each at
// implementation with its tasks ticked, so that x-rule decides the node.
func hookRepo(t *testing.T, rules string, items ...string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		".git/HEAD":                     "ref: refs/heads/main\n",
		".the-loop/harness-config.yaml": "graph:\n  hooks:\n    modules:\n      - path: .the-loop/hooks/rules.star\n    attach:\n      - {hook: x-rule, node: implementation}\n",
		".the-loop/hooks/rules.star":    rules,
	}
	for _, id := range items {
		files["docs/specs/"+id+"/tasks.md"] = "---\nstatus: approved\n---\n## Task list\n\n- [x] done\n"
		files["docs/specs/"+id+"/graph-state.json"] = `{"version": 1, "workItem": "` + id + `", "currentNode": "implementation"}`
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// implementation returns each item's verdict at implementation, and its
// messages, from check --all --format json.
func implementation(t *testing.T, stdout string) map[string]string {
	t.Helper()
	var reports []struct {
		WorkItem string `json:"workItem"`
		Nodes    []struct {
			Node     string   `json:"node"`
			Status   string   `json:"status"`
			Messages []string `json:"messages"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(stdout), &reports); err != nil {
		t.Fatalf("check's JSON: %v\n%s", err, stdout)
	}
	out := map[string]string{}
	for _, r := range reports {
		for _, n := range r.Nodes {
			if n.Node == "implementation" {
				out[r.WorkItem] = n.Status + ": " + strings.Join(n.Messages, " | ")
			}
		}
	}
	return out
}

func hookBody(body string) string {
	return "def _rule(ctx):\n    " + body + "\n    return ok()\n\nhook(\"x-rule\", _rule)\n"
}

func TestAHookCannotCrashOrExhaustTheProcess(t *testing.T) {
	for _, c := range []struct {
		name, body, want string
	}{
		{"json.decode of a million brackets", `json.decode("[" * 1500000 + "]" * 1500000)`, "json.decode: refused a value nested more than 1000 deep"},
		{"json.encode of a string that escapes sixfold", `json.encode("\x01" * 110000000)`, "x-rule exceeded its memory limit of 256 MiB"},
		{"re.split whose groups fan out", `re.split("(a?)" * 200, "b" * 20000)`, "x-rule exceeded its memory limit of 256 MiB"},
		{"str of a deep list", "l = []\n    for i in range(100000):\n        l = [l]\n    str(l)", "str: refused a value nested more than 1000 deep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := attack(t, hookRepo(t, hookBody(c.body), "issue-1"), "check", "--all", "--format", "json")
			got := implementation(t, r.stdout)["issue-1"]
			if r.code != 1 || !strings.HasPrefix(got, "block: ") || !strings.Contains(got, c.want) {
				t.Errorf("exit %d, implementation %q; want a block saying %q\nstderr: %s", r.code, got, c.want, r.stderr)
			}
		})
	}
}

func TestAModuleCannotCrashOrExhaustTheProcessAsItLoads(t *testing.T) {
	t.Run("json.decode of a million brackets at the top level", func(t *testing.T) {
		root := hookRepo(t, "json.decode(\"[\" * 1500000 + \"]\" * 1500000)\nhook(\"x-rule\", lambda ctx: ok())\n", "issue-1")
		r := attack(t, root, "check", "--all")
		if r.code != 2 || !strings.Contains(r.stderr, ".the-loop/hooks/rules.star:1:") || !strings.Contains(r.stderr, "nested more than 1000 deep") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("a chain of 600 failing loads", func(t *testing.T) {
		root := hookRepo(t, "load(\"//l0.star\", \"x\")\nhook(\"x-rule\", lambda ctx: ok())\n", "issue-1")
		for i := range 600 {
			os.WriteFile(filepath.Join(root, fmt.Sprintf("l%d.star", i)), fmt.Appendf(nil, "load(\"//l%d.star\", \"x\")\n", i+1), 0o644)
		}
		os.WriteFile(filepath.Join(root, "l600.star"), []byte("x = undefined_thing\n"), 0o644)
		r := attack(t, root, "check", "--all")
		if r.code != 2 || !strings.Contains(r.stderr, "load() chains more than 64 files deep") || len(r.stderr) > 4<<10 {
			t.Errorf("exit %d, %d bytes: %.300s", r.code, len(r.stderr), r.stderr)
		}
	})
	t.Run("aliases fanning half a megabyte out 300 times", func(t *testing.T) {
		root := hookRepo(t, "hook(\"x-rule\", lambda ctx: ok())\n", "issue-1")
		var b strings.Builder
		b.WriteString("graph:\n  hooks:\n    modules:\n      - path: .the-loop/hooks/rules.star\n    attach:\n      - {hook: x-rule, node: implementation, with: {big: &a \"")
		b.WriteString(strings.Repeat("a", 1<<19))
		b.WriteString("\"}}\n")
		for range 300 {
			b.WriteString("      - {hook: x-rule, node: implementation, with: {big: *a}}\n")
		}
		os.WriteFile(filepath.Join(root, ".the-loop/harness-config.yaml"), []byte(b.String()), 0o644)
		r := attack(t, root, "graph", "hooks")
		if r.code != 2 || !strings.Contains(r.stderr, ".the-loop/harness-config.yaml:") || !strings.Contains(r.stderr, "once its aliases are expanded") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
}

// TestMemoryHungryHooksGiveOneVerdictRunAfterRun: eight items whose hooks
// each hold 150 MB, under the 256 MiB limit, pass every time, however the
// items are scheduled; and the process stays within maxRSS meanwhile.
func TestMemoryHungryHooksGiveOneVerdictRunAfterRun(t *testing.T) {
	var items []string
	for i := range 8 {
		items = append(items, fmt.Sprintf("item-%d", i))
	}
	root := hookRepo(t, hookBody("parts = []\n    for i in range(150):\n        parts.append(\"x\" * (1 << 20))"), items...)
	// What is judged is memory: the operator's deadline, far past the
	// default, keeps a busy machine from deciding a verdict.
	config := filepath.Join(t.TempDir(), "cli-config.yaml")
	if err := os.WriteFile(config, []byte("routing: {graph: {hookLimits: {seconds: 120}, hookBudget: {seconds: 3600}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, procs := range []string{"1", "2", "8"} {
		r := attackWith(t, root, []string{"GOMAXPROCS=" + procs, "THE_LOOP_CLI_CONFIG=" + config}, "check", "--all", "--format", "json")
		for _, id := range items {
			if got := implementation(t, r.stdout)[id]; got != "pass: " {
				t.Errorf("on %s cores, %s: implementation %q; want pass", procs, id, got)
			}
		}
	}
}

// TestSpecialFilesAreRefusedAtOnceAndCheaply: a state file that is a FIFO,
// a link to /dev/zero or a sparse file of gigabytes, an artifact that is a
// FIFO, front matter whose aliases stand for a billion values: each is
// named or passed over at once, never read.
func TestSpecialFilesAreRefusedAtOnceAndCheaply(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, item string)
		code int
		want string
	}{
		{"a FIFO for a state file", func(t *testing.T, item string) {
			os.Remove(filepath.Join(item, "graph-state.json"))
			if err := syscall.Mkfifo(filepath.Join(item, "graph-state.json"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, 2, "graph-state.json: cannot be read: not a regular file"},
		{"a state file linked to /dev/zero", func(t *testing.T, item string) {
			os.Remove(filepath.Join(item, "graph-state.json"))
			os.Symlink("/dev/zero", filepath.Join(item, "graph-state.json"))
		}, 2, "graph-state.json: cannot be read: leads outside the checkout"},
		{"a 3 GB sparse state file", func(t *testing.T, item string) {
			if err := os.Truncate(filepath.Join(item, "graph-state.json"), 3<<30); err != nil {
				t.Fatal(err)
			}
		}, 2, "graph-state.json: cannot be read: 3221225472 bytes, over the limit"},
		{"a FIFO for an artifact", func(t *testing.T, item string) {
			if err := syscall.Mkfifo(filepath.Join(item, "design.md"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, 1, ""},
		{"front matter of a billion laughs", func(t *testing.T, item string) {
			var b strings.Builder
			b.WriteString("---\nstatus: approved\na0: &a0 [x,x,x,x,x,x,x,x,x,x]\n")
			for i := 1; i < 9; i++ {
				fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
			}
			b.WriteString("---\n# Requirements\n")
			os.WriteFile(filepath.Join(item, "requirements.md"), []byte(b.String()), 0o644)
		}, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := hookRepo(t, "hook(\"x-rule\", lambda ctx: ok())\n", "issue-1")
			c.make(t, filepath.Join(root, "docs", "specs", "issue-1"))
			r := attack(t, root, "check", "--all")
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d saying %q", r.code, r.stderr, c.code, c.want)
			}
		})
	}
}

// TestAnAbandonedHookHoldsUpNoOther: with a short deadline, one item's
// hook is stuck in a scan that outlasts it; it is abandoned and reported,
// and the other items are checked as ever, without waiting for it.
func TestAnAbandonedHookHoldsUpNoOther(t *testing.T) {
	root := hookRepo(t, hookBody("if ctx.work_item.id == \"a-stuck\":\n        re.search(\"(a|b|c|d|e|f){200}z\", \"a\" * 2000000)"), "a-stuck", "b-fine", "c-fine")
	config := filepath.Join(t.TempDir(), "cli-config.yaml")
	os.WriteFile(config, []byte("version: \"0.5.0\"\nrouting:\n  graph:\n    hookLimits: {seconds: 0.2}\n"), 0o644)
	r := attack(t, root, "check", "--all", "--format", "json", "--config", config)
	got := implementation(t, r.stdout)
	if !strings.Contains(got["a-stuck"], "x-rule exceeded its deadline of 200ms; it did not stop when cancelled and was abandoned") ||
		got["b-fine"] != "pass: " || got["c-fine"] != "pass: " {
		t.Errorf("exit %d, implementation %q", r.code, got)
	}
	if r.wall > 20*time.Second {
		t.Errorf("took %s: the other items waited for the abandoned one", r.wall)
	}
}

// TestTheMemoryLimitHoldsForTheWholeProcess: the memory limit is the
// process's, not each call's. Items whose hooks each build most of their
// own limit at once, side by side on 2 and 8 cores, and items whose hooks
// are abandoned at their deadline still holding it, beside and before
// items that build as much again, keep the process under maxRSS (attack
// checks it). A hook that passes alone passes side by side; beside an
// abandoned call still holding its memory, it may be stopped by the
// process's limit, and by nothing else.
func TestTheMemoryLimitHoldsForTheWholeProcess(t *testing.T) {
	config := filepath.Join(t.TempDir(), "cli-config.yaml")
	if err := os.WriteFile(config, []byte("routing: {graph: {hookLimits: {seconds: 120}, hookBudget: {seconds: 3600}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var items []string
	for i := range 8 {
		items = append(items, fmt.Sprintf("item-%d", i))
	}
	wide := hookRepo(t, hookBody("s = \"x\" * (220 << 20)\n    if len(s) != 220 << 20:\n        fail(\"short\")"), items...)
	for _, procs := range []string{"2", "8"} {
		r := attackWith(t, wide, []string{"GOMAXPROCS=" + procs, "THE_LOOP_CLI_CONFIG=" + config}, "check", "--all", "--format", "json")
		for _, id := range items {
			if got := implementation(t, r.stdout)[id]; got != "pass: " {
				t.Errorf("on %s cores, %s: implementation %q; want pass", procs, id, got)
			}
		}
	}

	short := filepath.Join(t.TempDir(), "cli-config.yaml")
	if err := os.WriteFile(short, []byte("routing: {graph: {hookLimits: {seconds: 3, steps: 1000000000000}, hookBudget: {seconds: 3600}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	held := hookRepo(t, hookBody("keep = \"x\" * (200 << 20)\n    if ctx.work_item.id.startswith(\"a-\"):\n        re.search(\"(a|b|c|d|e|f){200}z\", \"a\" * 2000000)\n    if len(keep) != 200 << 20:\n        fail(\"short\")"),
		"a-1", "a-2", "a-3", "b-1", "b-2", "b-3")
	r := attackWith(t, held, []string{"GOMAXPROCS=2", "THE_LOOP_CLI_CONFIG=" + short}, "check", "--all", "--format", "json")
	got := implementation(t, r.stdout)
	for _, id := range []string{"a-1", "a-2", "a-3"} {
		if !strings.Contains(got[id], "x-rule exceeded its deadline of 3s") && !strings.Contains(got[id], "x-rule exceeded the process's memory limit") {
			t.Errorf("%s: implementation %q; want a block at its deadline", id, got[id])
		}
	}
	// What decides these is memory, or a loaded machine's deadline.
	for _, id := range []string{"b-1", "b-2", "b-3"} {
		if got[id] != "pass: " && !strings.Contains(got[id], "x-rule exceeded the process's memory limit") && !strings.Contains(got[id], "x-rule exceeded its deadline of 3s") {
			t.Errorf("%s: implementation %q; want pass, or a block by the process's memory limit", id, got[id])
		}
	}
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
}

// TestModulesCannotHoldMemoryTogetherPastTheLimit: each module's top level
// keeps most of its memory limit in a global, which lives as long as the
// process; three of them would hold more than the process may, so the
// load fails naming the process's limit, within maxRSS.
func TestModulesCannotHoldMemoryTogetherPastTheLimit(t *testing.T) {
	root := hookRepo(t, "keep = \"x\" * (200 << 20)\nhook(\"x-rule\", lambda ctx: ok(str(len(keep))))\n", "issue-1")
	decl := "graph:\n  hooks:\n    modules:\n      - path: .the-loop/hooks/rules.star\n"
	for i := range 3 {
		name := fmt.Sprintf(".the-loop/hooks/m%d.star", i)
		os.WriteFile(filepath.Join(root, name), fmt.Appendf(nil, "keep = \"x\" * (200 << 20)\nhook(\"x-m%d\", lambda ctx: ok(str(len(keep))))\n", i), 0o644)
		decl += "      - path: " + name + "\n"
	}
	decl += "    attach:\n      - {hook: x-rule, node: implementation}\n"
	os.WriteFile(filepath.Join(root, ".the-loop/harness-config.yaml"), []byte(decl), 0o644)
	r := attack(t, root, "check", "--all")
	if r.code != 2 || !strings.Contains(r.stderr, "exceeded the process's memory limit of 384 MiB (all hook calls together) as it loaded") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}
