// Package lazyregexp is a regular expression compiled on first use.
//
// A package-level regexp.MustCompile runs in every process that links the
// package, whatever the process goes on to do: the-loop --version paid for
// some forty expressions of hooks, parsers and integrations it never
// runs (about 4,000 allocations, a third of all package initialisation). A
// *Regexp from [New] costs nothing until a method is called; the first
// call compiles it, once, safely from any goroutine.
//
//	var issueID = lazyregexp.New(`^issue-(\d+)$`)
//
//	if m := issueID.FindStringSubmatch(id); m != nil { ... }
//
// The methods are those of *regexp.Regexp that the module uses; add one
// when a caller needs it. An expression that does not compile panics on
// first use, as MustCompile would at start-up; in a test binary it is
// compiled in New, so that a bad expression fails every test of its
// package rather than only the one that reaches it. This is the go
// command's own internal/lazyregexp, for the same reason.
package lazyregexp
