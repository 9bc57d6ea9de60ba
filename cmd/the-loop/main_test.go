package main

import (
	"os"
	"path/filepath"
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
		RequireExplicitExec: false,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
	})
}
