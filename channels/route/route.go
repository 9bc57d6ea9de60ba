package route

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/channels/deliver"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// Reasons a delivery that passed the ingress's own guards is dropped, beside
// channels.DropNoWorkItem, DropSelfAuthored and DropUnauthorizedActor. Each
// is a decision a redelivery would reach again, so none is an error.
const (
	// DropNotANewComment: not a reply. Only what a person writes asks
	// anything of the graph: a comment written, a review submitted, or one
	// of them edited, deleted or dismissed (see edits.go); an issue
	// labelled or a pull request opened asks nothing.
	DropNotANewComment = "not-a-new-comment"
	// DropControlAmbiguous: the comment carried two different control
	// keywords, so neither was applied and it went nowhere else.
	DropControlAmbiguous = "control-ambiguous"
	// DropControlRejected: a control keyword that could not be honoured
	// (see the control.rejected event for why).
	DropControlRejected = "control-rejected"
	// DropGraphDisabled: routing.graph.enabled is false.
	DropGraphDisabled = "graph-disabled"
	// DropAwaitingStart: the work item has not been started, and
	// routing.control.requireStartCommand says it must be.
	DropAwaitingStart = "awaiting-start"
	// DropPaused and DropStopped: its last control command held it.
	DropPaused  = "paused"
	DropStopped = "stopped"
	// DropForeignCheckout: the bound checkout's origin is not the work
	// item's repository, so its spec folders belong to another project.
	DropForeignCheckout = "foreign-checkout"
	// DropNoCheckout: the work item is bound to a chat thread and no
	// checkout, so there is no graph to hand a comment to.
	DropNoCheckout = "no-checkout"
	// DropNoSpecDir: the work item has no spec folder in its checkout.
	DropNoSpecDir = "no-spec-dir"
	// DropNotAtGate: the work item was not at a human gate. The router no
	// longer drops such a comment (it is delivered, then the node is
	// advanced: see Router.Process); the reason stays for readers of
	// event logs written before.
	DropNotAtGate = "not-at-gate"
	// DropReplayed: the ingress already acted on this comment; a delivery
	// carrying it again, under whatever delivery id, changes nothing.
	DropReplayed = "replayed-comment"
	// DropStale: the comment was written before what it would act on
	// began: before the gate the item waits at was entered, or before the
	// control command last applied was written. It answered something
	// else, or nothing.
	DropStale = "stale-comment"
)

// OpAddReaction is the integration operation reactions go through, the
// GitHub integration's: params {ref (the issue or pull request the comment
// is on), github.ParamCommentID (int64), content (a GitHub reaction name)}.
const OpAddReaction = github.OpAddReaction

// Config is what New needs. Only CLI is required.
type Config struct {
	// CLI is the operator's configuration: the allowlist, the control
	// keywords, the reactions, the state root the bindings live in.
	CLI *policy.CLIConfig
	// Integration performs the outbound calls, the graph's and the
	// reactions'; nil means the none integration.
	Integration graph.Integration
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// Events receives the router's events and the graph's; nil discards
	// them.
	Events graph.Emitter
	// Bindings, when set, replaces the bindings of CLI's state root.
	Bindings *bindings.Store
	// Identity, when set, answers the login of the account Integration
	// posts with, as github.Integration.Identity does ("" when it is no
	// user's). A comment by that login is the-loop's own even without the
	// marker, unless it is a ledger relay of a person's words. New asks it
	// at once, in the background, and logs what it answered. Nil tells
	// the-loop's comments by the marker alone: right only when nothing
	// posts with the credential of an authorized login.
	Identity func(ctx context.Context) (string, error)
	// Deliver hands an ordinary comment on a work item at an agent's node
	// to the work item's target; nil is deliver.Deliver under CLI's state
	// root.
	Deliver func(ctx context.Context, b bindings.Binding, m deliver.Message) (deliver.Result, error)
}

// Router processes webhook deliveries: it finds the bound work item a
// delivery concerns, refuses what the-loop wrote itself and what no
// authorized person did, applies control keywords and hands an authorized
// comment to the gate the work item waits at. It implements
// channels.Processor and is safe for concurrent use; deliveries concerning
// one work item are processed one at a time, whichever issue or pull
// request they arrived on.
type Router struct {
	*Link

	mu    sync.Mutex
	items map[string]*sync.Mutex // per work item, by channels.Ref.Key

	// reactions are posted by one goroutine, in the order asked, so that
	// a slow GitHub never holds up what a comment asks of the graph.
	reactions chan func()
	pending   sync.WaitGroup

	identity func(ctx context.Context) (string, error) // Config.Identity
}

var _ channels.Processor = (*Router)(nil)

// New builds a router on the Link NewLink builds from cfg. The CLI config
// is read once: a router serves the configuration it was built with.
func New(cfg Config) (*Router, error) {
	l, err := NewLink(cfg)
	if err != nil {
		return nil, err
	}
	r := &Router{
		Link:      l,
		items:     map[string]*sync.Mutex{},
		reactions: make(chan func(), maxPendingReactions),
		identity:  cfg.Identity,
	}
	go r.postReactions()
	if len(r.cli.AuthorizedUsers()) == 0 {
		r.log.Warn("routing.authorizedUsers names no GitHub login: no comment will be acted on until it names someone")
	}
	if r.identity != nil {
		go r.learnIdentity()
	}
	return r, nil
}

// identityAtStart bounds the router's first question of who the-loop
// posts as.
const identityAtStart = 30 * time.Second

// learnIdentity asks, once the router is built, who the-loop posts as,
// so that the first comment need not wait for it, and says what it
// learned. A failure is logged, and the login asked again with the first
// comment that needs it: never a reason not to serve.
func (r *Router) learnIdentity() {
	ctx, cancel := context.WithTimeout(context.Background(), identityAtStart)
	defer cancel()
	login, err := r.identity(ctx)
	switch {
	case err != nil:
		r.log.Warn("could not learn the GitHub login the-loop posts with; it is asked again with the next comment, and until then a comment by an authorized login is kept for a retry", "err", err)
	case login == "":
		r.log.Info("the GitHub credential is no user's: the-loop's comments are told by their marker")
	case builtins.IsAuthorized(login, r.cli.AuthorizedUsers()):
		// The usual set-up, so that the ledger's relays of chat answers
		// land; but the operator typing on GitHub as that login is not
		// heard, and should know it.
		r.log.Warn("the-loop posts on GitHub as "+login+", which routing.authorizedUsers names: that login's comments are the-loop's own and answer nothing (but the ledger's relays of chat answers); answer gates on GitHub from another account", "login", login)
	default:
		r.log.Info("the-loop posts on GitHub as "+login+": that login's comments are the-loop's own, but for the ledger's relays", "login", login)
	}
}

// Process decides what one delivery does, in the original tool's order:
// the work item it concerns must be bound (no-work-item), what the-loop or
// a bot wrote is dropped (self-authored: its marker, a bot, or a comment
// by the login the-loop posts with that is not a ledger relay), then anyone not on
// routing.authorizedUsers (unauthorized-actor; an empty list denies
// everyone, and so does an event that names nobody). A new comment that
// passes is then a control command, an answer for the gate the work item
// waits at, or, at an agent's node, a message delivered to the work item's
// target before the node is advanced.
//
// An error means the delivery could not be processed and may be tried
// again, the graph left as it was: the bindings could not be read or
// written, the bound checkout could not be opened (a broken harness
// config, an unreadable state file, a repository hook that cannot load),
// the item's lock stayed held, its state could not be written, the login
// the-loop posts with could not be learned for an authorized author's
// comment, or ctx was done. (A start whose graph faulted keeps its start record: applying it
// again changes nothing.) Everything else, refusals included, is an
// Outcome.
func (r *Router) Process(ctx context.Context, d channels.Delivery) (channels.Outcome, error) {
	in := readDelivery(d)
	t, candidates, err := r.target(in)
	if err != nil {
		return channels.Outcome{}, err
	}
	if t == nil {
		fields := map[string]any{"work_items": candidates}
		if len(candidates) == 0 {
			fields = nil
		}
		return dropped(channels.DropNoWorkItem, fields), nil
	}
	if in.kind == kindClosed {
		// An end injects nothing and GitHub lets only those who may close
		// or merge do it: it is heard whoever (or whatever bot) acted, as
		// the original hears it.
		return r.closed(ctx, in, t)
	}
	why := in.selfAuthored()
	if why == "" {
		// Departure from the original (docs/compatibility.md#a-comment-by-the-tokens-own-login-is-self-authored-marker-or-not): a comment by the token's login is the-loop's own, marker or not.
		own, err := r.byIdentity(ctx, in)
		if err != nil {
			r.log.Warn("could not learn the login the-loop posts with, so this comment cannot be told from the-loop's own; keeping it for a retry", "delivery", d.ID, "work_item", t.work, "actor", in.actor, "err", err)
			return channels.Outcome{}, err
		}
		if own {
			why = "identity"
		}
	}
	if why != "" {
		r.log.Debug("dropping the-loop's own comment", "delivery", d.ID, "work_item", t.work, "why", why)
		return dropped(channels.DropSelfAuthored, t.fields(in, "why", why)), nil
	}
	if !builtins.IsAuthorized(in.actor, r.cli.AuthorizedUsers()) {
		r.log.Warn("dropping an event from someone not in routing.authorizedUsers", "delivery", d.ID, "work_item", t.work, "actor", in.actor)
		return dropped(channels.DropUnauthorizedActor, t.fields(in)), nil
	}
	if in.kind == kindOther || in.comment == nil {
		return dropped(DropNotANewComment, t.fields(in, "gh_action", in.p.Action)), nil
	}
	unlock, out, done, err := r.lockFresh(ctx, in, t)
	if done {
		return out, err
	}
	defer unlock()
	if out, done := r.revised(in, t); done {
		return out, nil
	}
	// The signature covers the body, not the delivery id: a captured
	// delivery sent again under a new id is the same comment, and is
	// refused as one, whatever gate the item waits at now.
	if t.binding.HasActed(in.ackID()) {
		return dropped(DropReplayed, t.fields(in, "comment_id", in.comment.ID)), nil
	}
	if in.comment.CreatedAt.IsZero() {
		return dropped(DropStale, t.fields(in, "why", "the comment says not when it was written")), nil
	}

	c := r.vocabulary.Parse(commandText(in.comment.Body))
	switch {
	case c.Ambiguous:
		return r.ambiguous(in, t, c), nil
	case c.Command == channels.CommandExecute:
		// execute answers the phase-selection gate: the gate itself reads
		// the keyword, so the comment goes on to it. It arms nothing, and
		// so is not recorded as the item's control state.
		r.emit("control.command", "info", map[string]any{"work_item": t.work.String(), "command": c.Command,
			"actor": in.actor, "via": "comment", "effect": "handed-to-graph", "delivery_id": d.ID})
	case c.Command != "":
		return r.acted(in, t)(r.control(ctx, in, t, c.Command))
	}
	return r.acted(in, t)(r.answer(ctx, in, t))
}

// acted records, when the outcome is routed and is more than a gate
// waiting on the comment, that the ingress acted on the comment: a replay
// or an edit of it is refused from then on, since a comment answers a gate
// at most once. A comment the gate waited on is not recorded, so that an
// edit of it is read again. A failure to record is logged; what the
// comment did stands.
func (r *Router) acted(in *inbound, t *target) func(channels.Outcome, error) (channels.Outcome, error) {
	return func(out channels.Outcome, err error) (channels.Outcome, error) {
		if err == nil && out.Routed && !waitedOn(out) {
			if rerr := r.bindings.Acted(t.work, in.ackID()); rerr != nil {
				r.log.Warn("could not record the comment acted on; a replay of it would be read again", "work_item", t.work, "comment_id", in.comment.ID, "err", rerr)
			}
		}
		return out, err
	}
}

// target is the bound work item the delivery concerns: the issue or pull
// request it is on, when that is bound; else, for a pull request, the first
// bound work item it delivers, whose inner loop for that pull request is
// then meant. candidates are the refs looked for, for the drop's event.
func (r *Router) target(in *inbound) (t *target, candidates []string, err error) {
	if in.entity.IsZero() {
		return nil, nil, nil
	}
	// Anyone can comment, and a pull request's description can name
	// thousands of issues: the bindings are read once, and a bounded
	// number of linked refs looked up.
	all, err := r.bindings.List()
	if err != nil {
		return nil, nil, err
	}
	bound := make(map[string]*bindings.Binding, len(all))
	for i := range all {
		if ref, err := channels.ParseRef(all[i].Ref); err == nil {
			bound[ref.Key()] = &all[i]
		}
	}
	look := func(ref channels.Ref) *bindings.Binding {
		candidates = append(candidates, ref.String())
		return bound[ref.Key()]
	}
	if b := look(in.entity); b != nil {
		return wrap(in.entity, channels.Ref{}, b), candidates, nil
	}
	if !in.pullRequest {
		return nil, candidates, nil
	}
	linked := LinkedWorkItems(in.entity, in.prBody, in.prBranch)
	if len(linked) > maxLinked {
		linked = linked[:maxLinked]
	}
	for _, ref := range linked {
		if b := look(ref); b != nil {
			return wrap(ref, in.entity, b), candidates, nil
		}
	}
	return nil, candidates, nil
}

// ItemOf names the work item a payload concerns: the bound work item it
// would be processed for (a pull request's comments the work item it
// delivers), else the issue or pull request itself (channels.ItemOf). The
// ingress orders deliveries by it, so that what is said on a work item's
// issue and on its pull requests is processed in the order it arrived.
func (r *Router) ItemOf(body []byte) string {
	in := readDelivery(channels.Delivery{Body: body})
	if t, _, err := r.target(in); err == nil && t != nil {
		return t.work.String()
	}
	return channels.ItemOf(body)
}

// maxLinked bounds the work items a pull request is looked up as
// delivering: its branch's, then the first its description closes.
const maxLinked = 32

// wrap is the target of a binding found for work; the work item is named
// as it was bound, however the payload spelled it.
func wrap(work, pr channels.Ref, b *bindings.Binding) *target {
	if b == nil {
		return nil
	}
	if bound, err := channels.ParseRef(b.Ref); err == nil {
		work = bound
	}
	return &target{work: work, pr: pr, binding: *b}
}

// refresh rereads t's binding; ok is false when it was unbound meanwhile.
func (r *Router) refresh(t *target) (ok bool, err error) {
	b, ok, err := r.bindings.Lookup(t.work)
	if ok {
		t.binding = b
	}
	return ok, err
}

// lock serializes the deliveries of one work item.
func (r *Router) lock(work channels.Ref) func() {
	r.mu.Lock()
	m, ok := r.items[work.Key()]
	if !ok {
		m = &sync.Mutex{}
		r.items[work.Key()] = m
	}
	r.mu.Unlock()
	m.Lock()
	return m.Unlock
}

func (r *Router) ambiguous(in *inbound, t *target, c channels.Control) channels.Outcome {
	r.log.Warn("ignoring a comment carrying conflicting control keywords; re-state the one meant", "work_item", t.work, "commands", c.Matched)
	r.emit("control.ambiguous", "warning", map[string]any{"work_item": t.work.String(), "actor": in.actor,
		"commands": c.Matched, "delivery_id": in.d.ID})
	r.react(in, policy.ReactionError)
	return dropped(DropControlAmbiguous, t.fields(in, "commands", c.Matched))
}

func (r *Router) emit(event, level string, fields map[string]any) {
	if err := r.events.Emit(event, level, fields); err != nil {
		r.log.Warn("could not write event", "event", event, "err", err)
	}
}

func dropped(reason string, fields map[string]any) channels.Outcome {
	return channels.Outcome{Reason: reason, Fields: fields}
}

func routed(fields map[string]any) channels.Outcome {
	return channels.Outcome{Routed: true, Fields: fields}
}

// target is the work item a delivery is about, and its binding.
type target struct {
	// work is the bound work item.
	work channels.Ref
	// pr is the pull request the delivery came on when it is not work
	// itself: its inner loop is the one meant. Zero otherwise.
	pr      channels.Ref
	binding bindings.Binding
}

// selector addresses the loop a comment on the delivery's entity answers:
// the pull request's inner loop for a linked pull request, else the work
// item's own.
func (t *target) selector() policy.Selector {
	if t.pr.IsZero() {
		return policy.Selector{Ref: t.work.String()}
	}
	s := policy.Selector{PR: t.pr.Number, Ref: t.pr.String()}
	if !t.pr.SameRepository(t.work) {
		s.PRRepo = t.pr.Repository()
	}
	return s
}

// fields are what every outcome about t says, and kv more.
func (t *target) fields(in *inbound, kv ...any) map[string]any {
	f := map[string]any{"work_item": t.work.String()}
	if !t.pr.IsZero() {
		f["pull_request"] = t.pr.String()
	}
	if in.actor != "" {
		f["actor"] = in.actor
	}
	for i := 0; i+1 < len(kv); i += 2 {
		f[kv[i].(string)] = kv[i+1]
	}
	return f
}

// inbound is what the router reads of a delivery.
type inbound struct {
	d channels.Delivery
	p payload
	// entity is the issue or pull request the delivery is on.
	entity channels.Ref
	// pullRequest is set when entity is a pull request; prBody and
	// prBranch are its description and head branch ("" when the payload
	// does not carry them).
	pullRequest      bool
	prBody, prBranch string
	// actor is who acted: the comment's author, else the event's sender.
	actor string
	// bot is set when actor is a bot account.
	bot bool
	// comment is the comment, nil for an event that carries none; a
	// review is read as one.
	comment *comment
	// kind and source are what the event and action say the delivery is.
	kind   kind
	source source
	// sender is who performed the action: for an edit, who edited.
	sender account
	// reacted are the reaction moments already posted.
	reacted map[string]bool
}

type payload struct {
	Action      string       `json:"action"`
	Issue       *issue       `json:"issue"`
	PullRequest *pullRequest `json:"pull_request"`
	Comment     *comment     `json:"comment"`
	Review      *review      `json:"review"`
	Sender      account      `json:"sender"`
}

type issue struct {
	Number      int             `json:"number"`
	Body        string          `json:"body"`
	PullRequest json.RawMessage `json:"pull_request"`
}

type pullRequest struct {
	Number int    `json:"number"`
	Body   string `json:"body"`
	Merged bool   `json:"merged"`
	Head   struct {
		Ref string `json:"ref"`
	} `json:"head"`
}

type comment struct {
	ID        int64     `json:"id"`
	Body      string    `json:"body"`
	User      account   `json:"user"`
	CreatedAt time.Time `json:"created_at"`
}

type account struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

// readDelivery reads a delivery's payload, tolerating what it does not
// need: a field of another shape reads as absent, which every guard below
// answers by refusing.
func readDelivery(d channels.Delivery) *inbound {
	in := &inbound{d: d}
	_ = json.Unmarshal(d.Body, &in.p)
	in.kind, in.source = kindOf(d.Event, in.p.Action)
	in.sender = in.p.Sender
	// The subject is the issue or pull request the payload is on, never
	// d.Item: that is the ingress's ordering key, which names the work
	// item a pull request delivers.
	in.entity, _ = channels.ParseRef(channels.ItemOf(d.Body))
	switch p := in.p; {
	case p.Issue != nil && isSet(p.Issue.PullRequest):
		in.pullRequest, in.prBody = true, p.Issue.Body
	case p.Issue == nil && p.PullRequest != nil:
		in.pullRequest, in.prBody, in.prBranch = true, p.PullRequest.Body, p.PullRequest.Head.Ref
	}
	if in.source == sourceReview {
		in.p.Comment = nil
		if in.p.Review != nil {
			in.p.Comment = in.p.Review.asComment()
		}
	}
	switch {
	case in.p.Comment != nil:
		in.comment = in.p.Comment
		in.actor, in.bot = in.comment.User.Login, isBot(in.comment.User.Login, in.comment.User.Type)
	default:
		in.actor, in.bot = in.p.Sender.Login, isBot(in.p.Sender.Login, in.p.Sender.Type)
	}
	return in
}

// isSet reports whether a JSON member is present and not null: GitHub marks
// an issue that is a pull request by giving it a pull_request object.
func isSet(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// selfAuthored says why the delivery is the-loop's own by what it says,
// "" when it does not: its comment carries the-loop's marker, or a bot
// acted. (Router.byIdentity tells it by who posted it: the-loop posts with
// the operator's credentials.)
func (in *inbound) selfAuthored() string {
	switch {
	case in.comment != nil && builtins.IsSelfAuthored(in.comment.Body):
		return "marker"
	case in.bot:
		return "bot"
	}
	return ""
}

// byIdentity reports whether the delivery's comment is the-loop's own by
// who posted it: the integration's own login (Config.Identity), on
// anything but a ledger relay (builtins.IsSelfAuthoredComment). When the
// login cannot be learned, a comment by someone not authorized is not
// ours to judge (it is dropped as unauthorized next); any other is a
// fault, kept for a retry: it may be the-loop's echo, or the operator's
// own word, and neither may be guessed.
func (r *Router) byIdentity(ctx context.Context, in *inbound) (bool, error) {
	if r.identity == nil || in.comment == nil || !builtins.IsSelfAuthoredComment(graph.Comment{Body: in.comment.Body, Self: true}) {
		return false, nil
	}
	me, err := r.identity(ctx)
	switch {
	case err != nil && !builtins.IsAuthorized(in.actor, r.cli.AuthorizedUsers()):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("route: learn the login the-loop posts with: %w", err)
	}
	return me != "" && strings.EqualFold(strings.TrimPrefix(in.actor, "@"), strings.TrimPrefix(me, "@")), nil
}

// commandText is the part of a comment body control keywords are looked
// for in: the person's own words in a record the ledger relayed from a chat
// channel (as the gates read it, builtins.RelayedWords), so that the
// record's attribution line can never be read as a command; the whole body
// otherwise.
func commandText(body string) string {
	if words, ok := builtins.RelayedWords(body); ok {
		return words
	}
	return body
}

// lockFresh takes t's work item lock and reads its binding again under it:
// bindings change under a running server, and what is decided must be
// decided on the one in force now. done is set, with the outcome or error
// to return, when there is nothing more to do; the lock is then already
// released. Otherwise the caller holds it until it calls unlock.
func (r *Router) lockFresh(ctx context.Context, in *inbound, t *target) (unlock func(), out channels.Outcome, done bool, err error) {
	unlock = r.lock(t.work)
	if err := ctx.Err(); err != nil {
		unlock()
		return nil, channels.Outcome{}, true, err
	}
	switch ok, err := r.refresh(t); {
	case err != nil:
		unlock()
		return nil, channels.Outcome{}, true, err
	case !ok:
		unlock()
		return nil, dropped(channels.DropNoWorkItem, t.fields(in)), true, nil
	}
	return unlock, channels.Outcome{}, false, nil
}
