// Package policy wires a repository to the engine: it reads the
// repository's harness config and the operator's CLI config, validates both
// against their embedded JSON Schemas, resolves where work items live, and
// serves every verb through an [Engine].
//
// # The engine
//
// [Open] reads a repository (it never writes). [Engine.Check] evaluates work
// items purely, on every core ([Engine.CheckEach] hands each report over as
// it is done, in item order, so that a caller writing them out holds a few,
// not all); [Engine.Advance], [Engine.Complete],
// [Engine.Run], [Engine.Skip] and [Engine.Force] move one, on the loop its
// state records ([Engine.Runtime] says which: the work-item loop, the
// contribution or ad-hoc loop when the state names one, or the pull-request
// loop for a [Selector] with PR set). The shipped loops are compiled once per
// process, on first use, by [Loop]. Inbound comments for a human gate come
// as a *graph.Event, which package channels reads from a webhook payload,
// an event file or the command line.
//
// The ingress (the-loop serve, package channels/route) drives a bound
// checkout with the same engine, opened with Options{CLI, NoAdopt, Moves}: it
// proves the checkout is the work item's repository ([CheckoutOrigin])
// before it opens it, adopts it under that repository's name
// ([Engine.AdoptAs], seed 002's second call site), enters an item's loop
// ([Engine.Start]) and reads whether a person answers the node it stands
// at ([Engine.Position]) before it hands a comment to [Engine.Advance].
//
// Adopting is best effort wherever a move does it (the moving verbs,
// [Engine.AdoptAs]): a repository that cannot be adopted (a .the-loop that
// is a file, unwritable, or a link) is moved on the per-key defaults, with
// a note, a warning and the harness.config_scaffold_failed event. An engine
// opened with Options.Moves also moves a repository whose .the-loop leads
// out of the checkout, on the built-in defaults; one that only reads
// refuses it. [Engine.Init], asked for exactly that write, fails instead.
//
// Two verbs write outside an item's state: [Engine.Init] adopts the
// repository (the harness config, the spec directory), and [Engine.NewItem]
// starts a work item, drafting the artifacts its loop's gates will ask for
// from the compiled loop itself: every artifact a node of the default walk
// produces, with the sections, lock and front matter its validate-artifacts
// entries want.
//
// # A repository's own hooks
//
// [ReadDeclaration] parses graph.hooks without executing anything. Each
// shipped loop the repository walks gets the attachments whose node it has
// (an attachment to a node no shipped loop has is refused, with the nearest
// node suggested). To check a declaration before a verb trips on it, use
// [Engine.CheckDeclaration] (executes nothing: the modules' files, the
// attachments' nodes and boundaries; config validate) or
// [Engine.CheckHooks] (also loads the modules in the sandbox and applies
// every attachment; hooks check). Both report every fault, each a
// *graph.ConfigError at its file and line, and the warnings of a
// declaration that works but not as its author may think.
// [Engine.Hooks] lists the declaration for graph hooks, with what can be
// told without reading a module. [Engine.Trial] runs one hook against an
// item as check would, wherever the item is (hooks run), and
// [Engine.RuleTests] runs the repository's *_test.star files, each t.run a
// Trial over a repository held in memory (hooks test).
//
// # Configuration
//
// Two files configure the-loop, and which is which depends on direction:
// a repository's harness config configures work done on that repository; the
// CLI config configures the operator's machine. Neither ever supplies a key
// of the other: no checkout can say who may drive a daemon, and no machine
// setting says where a repository keeps its specs (except the explicit
// routing.graph.specDir override).
//
// # The harness config
//
// .the-loop/harness-config.yaml at the repository root (the older name
// .the-loop/config.yaml is read when the current one is absent). Load it
// with LoadCheckoutHarness(checkout), or LoadHarnessConfig(root). It is read
// through the checkout's confinement (package repo): a file that exists
// but is not a regular file inside the repository (a dangling link, a link
// out, a directory, a FIFO) is a *graph.ConfigError naming it, never the
// defaults, and aliases that would expand the document past 16 MiB are
// refused at the alias. A repository without one is not an error: every
// accessor then answers its default and Initialized reports false.
// The CLI reads only the keys in HarnessReads; everything else in the file
// is the agent's.
//
//	key                           accessor                 default
//	workflow.specDir              SpecDir, ResolveSpecDir  DefaultSpecDir ("docs/specs")
//	workflow.phaseLabelPrefix     PhaseLabelPrefix         DefaultPhaseLabelPrefix ("loop:")
//	ticketing.github.owner/repo   OriginRepo               "" (unknown; callers fail closed)
//	notifications                 Notifications            empty
//	graph.hooks                   HooksBlock               absent (raw; parsed elsewhere)
//	reviews.critics               Critics                  none
//	testing.integrationTestGlobs  IntegrationTestGlobs     none
//	customInstructions            CustomInstructions       empty
//
// The spec directory comes from the repository, so it is resolved with
// containment: ResolveSpecDir refuses an absolute path, a ".." escape and a
// symlink leading outside the repository, each as a *graph.ConfigError with
// Key "workflow.specDir" that says what to write instead. The directory
// itself need not exist yet.
//
// # The CLI config
//
// cli-config.yaml, from the first of: the --config argument,
// $THE_LOOP_CLI_CONFIG, ~/.the-loop/cli-config.yaml. Load it with
// LoadCLIConfig(flag); FindCLIConfig only reports which file would be read.
// A file named by the flag or the variable must exist; finding nothing
// anywhere means defaults. One in the working directory is never read (in
// CI that is the checkout under review, and its settings would be the
// change's own); CLIConfig.Ignored names it, and Open says so in a note.
//
//	key                                   accessor          default
//	routing.authorizedUsers               People, PersonOn  none (nothing human-authored is acted on)
//	  ids on one channel                  AuthorizedOn      none
//	  GitHub logins                       AuthorizedUsers   none
//	routing.graph.enabled                 GraphEnabled      true
//	routing.graph.repoHooks               RepoHooks         true
//	routing.graph.hookPath                HookPath          none, then $THE_LOOP_HOOK_PATH
//	routing.graph.hookLimits.steps        HookStepBudget    10,000,000
//	routing.graph.hookLimits.seconds      HookDeadline      5s
//	routing.graph.hookBudget.seconds      HookBudget        60s (all hooks of one evaluation)
//	routing.graph.specDir                 SpecDirOverride   "" (no override)
//	routing.control.keywords.<command>    ControlKeyword    "the-loop <command>"
//	routing.control.keywords.execute      ExecuteKeyword    "the-loop execute"
//	routing.control.enabled               ControlEnabled    true
//	routing.control.requireStartCommand   RequireStartCommand true
//	routing.reactions.enabled             ReactionsEnabled  true
//	routing.reactions.<moment>            Reaction          eyes, hooray, confused ("" turns one off)
//	state.root                            StateRoot         ~/.the-loop
//	eventLog.path, eventLog.enabled       EventLogPath/...  <state root>/logs/events.jsonl, true
//	integrations.github                   Integration       "none" unless the block is declared
//
// Each routing.authorizedUsers entry is one [Person]: a bare string is a
// GitHub login, a mapping names the person's id on every channel they act
// on ({github: jc1993, slack: U0456GHIJKL, name: John}; name is the one key
// that is not a channel). Authorization is per channel and never crosses
// one: the router and the gates read AuthorizedUsers, the GitHub logins
// only, so a person with only a slack id authorizes nothing on GitHub, and
// a chat channel resolves who wrote a message with PersonOn, from the id
// the channel vouches for. An entry naming no id authorizes nobody.
//
// The channels block (Channels, raw) is read by the channel packages:
// channels.slack by channels/slack, whose subscribe, publish (the grants,
// default work-item.reply), read.mode (poll, socket, events, off),
// signingSecretEnv, apiBaseUrl and reactions the schema declares with their
// defaults. Its older events and authorizedUsers keys still load but are
// not read (issue-309): they became subscribe and the slack ids of person
// entries.
//
// The integrations.github block itself (transport, api.tokenEnv,
// api.baseUrl, cli.binary) is read by channels/github, which builds the
// integration Options.Integration and Options.Replies take.
//
// A CLI config that still carries a key an older format used
// (webhooks.ghWebhook.routing, polling.stateFile, integrations.slack, the
// per-feature ghBinary keys) or declares a version older than
// CurrentCLIConfigVersion is refused, naming the key and its replacement:
// ignoring a value the operator set would silently change what their
// machine does.
//
// # Errors and schemas
//
// Both files are validated against JSON Schemas embedded in this package
// (HarnessSchema, CLISchema; draft 2020-12). They accept every file the
// original tool's schemas accept, with the same property names, types, enums
// and additionalProperties strictness, plus this implementation's keys:
// routing.graph.hookPath, routing.graph.hookLimits and
// routing.graph.hookBudget. One relaxation: the
// harness schema requires no top-level section, because a partial file means
// "defaults for the rest", exactly as a missing file does.
//
// Every failure to read a config is a *graph.ConfigError: File (repository
// relative for the harness config), Line when known, Key as a dotted path
// with list positions ("graph.hooks.attach[0].boundary"), and a message in
// "got X, want Y" form. Loading never writes.
//
// Loaded configs are immutable and safe for concurrent use.
package policy
