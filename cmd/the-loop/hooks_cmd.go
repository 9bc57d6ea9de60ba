package main

// HooksCmd groups the verbs for a repository's own hooks.
type HooksCmd struct {
	Check HooksCheckCmd `cmd:"" help:"Load the repository's hook modules, sandboxed, and check every module and attachment."`
}
