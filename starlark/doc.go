// Package starlark is the sandboxed host for a repository's own hooks,
// written in Starlark: it executes the modules a repository declares,
// collects their hook() registrations into a per-repository table, and runs
// each hook call under a step budget, a deadline and a memory watchdog with
// a frozen ctx whose only window on the world is a repository reader.
package starlark
