package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/the-loop/the-loop/channels/github/githubtest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"the-loop": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar against the real binary.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("..", "..", "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			// The operator's state (the event log) lives under HOME; give
			// each script its own, and no inherited CLI config.
			home := filepath.Join(env.WorkDir, ".home")
			env.Setenv("HOME", home)
			env.Setenv("THE_LOOP_CLI_CONFIG", "")
			env.Setenv("THE_LOOP_HOOK_PATH", "")
			// No script reaches the real GitHub with the operator's token.
			env.Setenv("GH_TOKEN", "")
			env.Setenv("GITHUB_TOKEN", "")
			// Fixture repositories shared with Go tests and the docs.
			repos, err := filepath.Abs(filepath.Join("..", "..", "testdata", "repos"))
			if err != nil {
				return err
			}
			env.Setenv("REPOS", repos)
			demo, err := filepath.Abs(filepath.Join("..", "..", "examples", "demo"))
			if err != nil {
				return err
			}
			env.Setenv("DEMO", demo)
			return os.MkdirAll(home, 0o755)
		},
		Cmds:                scriptCmds,
		RequireExplicitExec: false,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
	})
}

// scriptCmds make what a checkout under review can hold and a txtar
// cannot: a FIFO, and a sparse file of any size; edit a file the binary
// wrote, as its author would; and stand in for GitHub.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// github-fake fixture.json: serve a fake GitHub API with the issues of
	// fixture.json (a githubtest.Fixture) for the rest of the script. Its
	// URL is $GITHUB_API; each call it receives is a line of
	// github-calls.log.
	"github-fake": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: github-fake fixture.json")
		}
		srv := githubtest.NewServer()
		ts.Defer(srv.Close)
		f, err := os.Open(ts.MkAbs(args[0]))
		ts.Check(err)
		defer f.Close()
		ts.Check(srv.Load(f))
		log, err := os.Create(ts.MkAbs("github-calls.log"))
		ts.Check(err)
		ts.Defer(func() { log.Close() })
		srv.SetLog(log)
		ts.Setenv("GITHUB_API", srv.URL)
	},
	// pr-event out.json [body=TEXT] [ref=BRANCH] [number=N] [repo=OWNER/NAME]:
	// write GitHub's own pull_request "opened" example payload (octokit's,
	// testdata/octokit) with those fields set, as a runner's event file.
	"pr-event": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 1 {
			ts.Fatalf("usage: pr-event out.json [body=TEXT] [ref=BRANCH] [number=N] [repo=OWNER/NAME]")
		}
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "octokit", "api.github.com", "pull_request", "opened.payload.json"))
		ts.Check(err)
		var ev map[string]any
		ts.Check(json.Unmarshal(data, &ev))
		pr := ev["pull_request"].(map[string]any)
		for _, a := range args[1:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "body": // \n and \r are a line break's parts, as GitHub keeps them
				pr["body"] = strings.NewReplacer(`\r`, "\r", `\n`, "\n").Replace(v)
			case "ref":
				pr["head"].(map[string]any)["ref"] = v
			case "number":
				n, err := strconv.Atoi(v)
				ts.Check(err)
				ev["number"], pr["number"] = n, n
			case "repo":
				ev["repository"].(map[string]any)["full_name"] = v
			default:
				ts.Fatalf("pr-event: unknown field %s", k)
			}
		}
		out, err := json.Marshal(ev)
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), out, 0o644))
	},
	// mkfifo path
	"mkfifo": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: mkfifo path")
		}
		ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
	},
	// replace regexp text path...: every match of regexp (multi-line) in
	// each file becomes text. Each file must hold a match, so an edit that
	// finds nothing to change fails rather than passing unseen.
	"replace": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 3 {
			ts.Fatalf("usage: replace regexp text path...")
		}
		re, err := regexp.Compile("(?m)" + args[0])
		ts.Check(err)
		for _, p := range args[2:] {
			data, err := os.ReadFile(ts.MkAbs(p))
			ts.Check(err)
			if !re.Match(data) {
				ts.Fatalf("replace: no match for %q in %s", args[0], p)
			}
			ts.Check(os.WriteFile(ts.MkAbs(p), re.ReplaceAllLiteral(data, []byte(args[1])), 0o644))
		}
	},
	// sparse bytes path
	"sparse": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: sparse bytes path")
		}
		n, err := strconv.ParseInt(args[0], 10, 64)
		ts.Check(err)
		f, err := os.Create(ts.MkAbs(args[1]))
		ts.Check(err)
		ts.Check(f.Truncate(n))
		ts.Check(f.Close())
	},
	// append src dst: add src's bytes to the end of dst in one write, as
	// the event log's writer does, creating dst if need be.
	"append": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: append src dst")
		}
		data, err := os.ReadFile(ts.MkAbs(args[0]))
		ts.Check(err)
		f, err := os.OpenFile(ts.MkAbs(args[1]), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		ts.Check(err)
		_, err = f.Write(data)
		ts.Check(err)
		ts.Check(f.Close())
	},
	// waitfor path regexp: wait until the file holds a match (multi-line),
	// such as what a background command has printed so far, so that a
	// script goes on once it has, whatever the timing. It fails only when
	// the match has not come in a minute: something is broken.
	"waitfor": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: waitfor path regexp")
		}
		re, err := regexp.Compile("(?m)" + args[1])
		ts.Check(err)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			data, _ := os.ReadFile(ts.MkAbs(args[0]))
			if re.Match(data) {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("waitfor: no match for %q in %s after a minute; it holds %q", args[1], args[0], data)
			}
		}
	},
}
