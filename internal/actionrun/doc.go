// Package actionrun runs a composite GitHub Action's action.yml the way a
// runner does, for tests: it evaluates the ${{ }} expressions the file
// uses (inputs, github, runner and steps contexts; ||, &&, !, ==, !=;
// startsWith, endsWith, contains, success, always, failure) and fails
// loudly on any other, skips `uses:` steps after evaluating their `with:`,
// honours `if:`, and runs each `run:` step with bash in its
// working-directory, with the environment a runner sets (GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY, GITHUB_EVENT_PATH, RUNNER_TEMP, ...).
//
//	res, err := actionrun.Run(ctx, actionrun.Config{ActionPath: root, Workspace: repo, ...})
//
// res.Code is the action's exit status; res.Stdout what the steps
// printed (workflow commands included); res.Summary the job summary.
package actionrun
