package main

// HooksCmd groups the verbs for a repository's own hooks.
type HooksCmd struct {
	Check HooksCheckCmd `cmd:"" help:"Load the repository's hook modules, sandboxed, and check every module and attachment."`
	Run   HooksRunCmd   `cmd:"" help:"Run one hook against a work item, wherever the item is, and show everything it did."`
	Test  HooksTestCmd  `cmd:"" help:"Run the repository's rule tests (*_test.star beside the declared modules)."`
}
