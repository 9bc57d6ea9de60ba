package main

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
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
			// Fixture repositories shared with Go tests and the docs.
			repos, err := filepath.Abs(filepath.Join("..", "..", "testdata", "repos"))
			if err != nil {
				return err
			}
			env.Setenv("REPOS", repos)
			return os.MkdirAll(home, 0o755)
		},
		Cmds:                scriptCmds,
		RequireExplicitExec: false,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
	})
}

// scriptCmds make what a checkout under review can hold and a txtar
// cannot: a FIFO, and a sparse file of any size.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// mkfifo path
	"mkfifo": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: mkfifo path")
		}
		ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
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
}
