// Package github is the GitHub integration: how the-loop's own calls reach
// GitHub. The outbound hooks comment and label through it, check reads a
// work item's replies (and a pull request's reviews) through it, and the
// webhook side reacts to comments and requests reviews through it.
//
// An [*Integration] implements graph.Integration. Build one from the
// operator's CLI config with [FromConfig] (integrations.github: transport,
// api.tokenEnv, api.baseUrl, cli.binary), or with [Configured] for a verb
// that moves an item, which gets graph.NoIntegration unless the config
// declares the block. [New] takes the same settings as [Options].
//
// Hooks call [Integration.Call] with an operation name and parameters (see
// Call for the table); Go callers use the typed methods, which take a
// context: [Integration.AddComment], [Integration.AddRelay],
// [Integration.Comments], [Integration.Reviews], [Integration.Labels],
// [Integration.AddLabels], [Integration.SetLabels],
// [Integration.RemoveLabel], [Integration.RequestReviewers],
// [Integration.AddReaction], [Integration.User] and
// [Integration.Identity]. An issue or pull request is a [Ref],
// github:OWNER/REPO#N, read strictly by [ParseRef].
//
// # What the-loop posts is the-loop's own
//
// the-loop posts with the operator's credential, and the operator is
// usually on routing.authorizedUsers: by author alone, its comments are
// the operator's, and read back they could answer the very gates they
// report on. Two rules keep it from answering itself. Every comment the
// integration posts carries the self-authored marker
// (builtins.MarkSelfAuthored): AddComment adds it to whatever a caller
// composed, the audit comments of graph force and graph skip included.
// The one exception is the ledger's record of a person's words for a gate
// or the control seam, which must be read, and so goes up unmarked through
// AddRelay, which refuses any other body. And a comment by the login the
// credential authenticates is the-loop's own even without the marker:
// [Integration.Identity] asks GitHub once (GET /user; gh api user over
// the cli transport) and keeps the answer in the operator's state root
// ([IdentityFile]), and list-comments, list-review-comments and
// list-reviews say which entries are that login's ("self"), which the
// gates drop unless they are relays (builtins.IsSelfAuthoredComment). A
// listing fails when the login cannot be learned, rather than hand a gate
// the-loop's echo as the operator's answer; a credential that is no
// user's (a GitHub App's installation token, answered 403) has no login,
// and its comments, by its bot, are told by the marker.
//
// # Transports
//
// api is REST over net/http with a token read from the environment
// variables api.tokenEnv names (GH_TOKEN, then GITHUB_TOKEN by default), at
// api.baseUrl (https://api.github.com by default; a GitHub Enterprise host,
// or a test server). cli is the gh binary's `gh api`, inheriting the
// operator's gh login. auto is api when a token is set, else cli when gh
// is on PATH. An explicit transport is honoured as given and never falls
// back to the other. With no usable transport the integration is
// unavailable: every call fails with an error wrapping
// graph.ErrIntegrationUnavailable that names what is missing, which the
// outbound hooks turn into a warning, and [Integration.Available] says so
// before any call.
//
// The api transport is a small REST client of its own (api.go) rather
// than google/go-github. Both transports answer one shape, a raw request
// for a method and a path (the api transport over HTTP, the cli transport
// through gh api), so that every operation is written once, in ops.go;
// go-github's typed calls would split that in two. It needs a handful of
// endpoints, and the retry and pagination rules above, which go-github
// leaves to its caller anyway.
//
// # Limits
//
// Every request has a timeout, and every call through Call a deadline. A
// rate limit is waited out: a Retry-After header, an exhausted primary
// limit's reset time, or a secondary limit's message (a minute, then
// longer), a bounded number of times and for a bounded total wait, after
// which the error names the limit. A request that can be repeated (every
// one but posting a comment) is also retried after a 5xx or a dropped
// connection. A comment is not, since its POST may have landed though its
// answer was lost; the [Ledger] retries its own records, after searching
// the issue for them by their envelope id, and [Transient] tells such a
// failure from a refusal. Answers are read up to a size; a listing follows GitHub's
// pagination only to links under the API root, up to [MaxComments]. An
// error is an [*Error] naming the operation, the ref, the request and the
// status, and never the token.
//
// # Check runs
//
// [Integration.CreateCheckRun] reports a finished check run (check
// --check-run): a create with the first [MaxAnnotationsPerRequest]
// annotations, an update for each further batch, the last completing it
// with its conclusion. Bodies follow the REST description's checks/create
// and checks/update request schemas (testdata/openapi holds them; the
// tests validate every body against them). A create is not repeated
// blindly after a 5xx: it is looked for by its external id first. A 403
// that is not a rate limit is [ErrCheckRunForbidden], the token lacking
// checks: write.
//
// Labels are only ever added (POST), never replaced: set-labels adds the
// new phase label and then takes off the other labels carrying the
// phase prefix, leaving every label people put there.
//
// The package githubtest is a fake GitHub for tests.
package github
