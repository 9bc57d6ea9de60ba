// Package graphs holds the process loops the-loop ships and the default
// harness config, embedded in the binary so that no file outside it is needed
// at run time.
//
// # The loops
//
// Four loops ship, listed in [Names]:
//
//   - pdlc-work-item-loop, the outer loop one work item walks, from
//     phase-selection to complete;
//   - pdlc-pr-loop, the inner loop each delivering pull request walks;
//     the outer loop's implementation node waits for all of them;
//   - pdlc-contribution-loop, for joining a work item someone else owns;
//   - pdlc-adhoc-loop, for a small task run without the spec process.
//
// To get a loop's source, call [Loop] with its name; compiling and validating
// it is the graph package's job. An unknown name gives an error wrapping
// [io/fs.ErrNotExist], so callers can test for it with errors.Is. [FileName]
// gives the file name a loop is stored and reported under.
//
// A repository cannot replace these loops. It can only append its own x- hooks
// to the boundaries they declare, which the policy package arranges.
//
// # The default harness config
//
// [DefaultHarnessConfig] returns the commented YAML that adoption writes to
// .the-loop/harness-config.yaml. Inside its ticketing.github block two lines,
// each indented by four spaces,
//
//	owner: ""
//	repo: ""
//
// are placeholders that the scaffolder fills in line by line, which keeps the
// file's comments intact; keep them in exactly that form.
//
// # Compatibility
//
// Every loop and the default config mean the same as the files the Python
// the-loop ships: the same node ids, fields, hook chains, hook parameters,
// edges and skip sets, and the same config keys and values. The parity tests
// compare them against a local mirror of that project when one is present.
//
// Everything here is read-only and safe for concurrent use; the package
// imports nothing else from this module.
package graphs
