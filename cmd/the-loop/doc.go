// Command the-loop enforces a spec-driven development process on a
// repository: `the-loop check` answers what each work item has met, and the
// graph verbs move one through its loop.
//
// The command is thin by design: each verb lives in its own *_cmd.go, parses
// its flags with kong, calls one method of policy.Engine and formats the
// answer. To start fast, a plain command line is read by the same tags
// without building kong's model (plain.go), and help is printed as kong
// rendered it at build time (help_static.go); tests hold both to kong. Output formats for check are a registry (format*.go) that the
// --format enum is built from. Every error reaches one exit point, report in
// cli.go: 0 success, 1 a negative answer (exitCode), 2 could not run.
//
// main delegates to run(args, stdout, stderr), so tests can call the whole
// program in-process; testdata/script/*.txtar drive the real binary through
// testscript (main_test.go).
package main
