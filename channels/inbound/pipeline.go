package inbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/channels/deliver"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// Reasons a reply is dropped, as channel.dropped says them.
const (
	// DropUnmapped: the thread is bound to no work item.
	DropUnmapped = "unmapped"
	// DropSelfAuthored: a bot wrote it.
	DropSelfAuthored = channels.DropSelfAuthored
	// DropUnauthorized: its author is no person in routing.authorizedUsers
	// with an id on the channel.
	DropUnauthorized = channels.DropUnauthorizedActor
	// DropUnpublishable: it classified as an event the channel is not
	// granted.
	DropUnpublishable = "unpublishable-event"
	// DropKickoffDisabled: a top-level message on a channel granted
	// work-item.create; the-loop opens no work item from a channel.
	DropKickoffDisabled = "kickoff-disabled"
	// DropChannelDisabled: the channel is not enabled in the CLI config.
	DropChannelDisabled = "channel-disabled"
	// DropUndeliverable: a work-item.reply could not be handed to the
	// session. It is recorded on the ledger all the same, and the outcome
	// is still processed; when the ledger refused it too, it reached
	// nobody, and this is the outcome.
	DropUndeliverable = "undeliverable"
	// DropUnrecorded: a gate.feedback or control.command the ledger
	// refused to record (GitHub said no, not "try later"): the record is
	// the request, so without it nothing was asked of the work item.
	DropUnrecorded = "unrecorded"
)

// Outcomes of a reply the pipeline processed, beside the drop reasons.
const OutcomeProcessed = "processed"

// Acknowledgement moments, as a channel's reactions name them.
const (
	AckReceived  = "received"
	AckCompleted = "completed"
	AckError     = "error"
)

// Channel is one chat channel as the CLI config declares it.
type Channel struct {
	// Name is its key under channels: "slack".
	Name string
	// Enabled is channels.<name>.enabled.
	Enabled bool
	// Publish is what a message on it may become, read through
	// channels.Grants.
	Publish []string
}

// Granted reports whether a message on c may become event.
func (c Channel) Granted(event string) bool { return slices.Contains(c.Publish, event) }

// Ledger records what the pipeline classified; *github.Ledger is one. An
// error for which github.Transient holds is one a later attempt may mend.
type Ledger interface {
	Record(ctx context.Context, e github.Entry) (github.Recorded, error)
}

// Config is what New needs. Link, Channel and Ledger are required.
type Config struct {
	// Link reads work items' graphs. It must be built by route.NewLink from
	// the same route.Config as the router that drives them: then the
	// pipeline reads a graph under the guards the router drives it under.
	Link *route.Link
	// Channel is the channel the pipeline hears.
	Channel Channel
	// Ledger records every classified reply.
	Ledger Ledger
	// Deliver hands a work-item.reply to the work item's session; nil is
	// deliver.Deliver under the CLI config's state root.
	Deliver func(ctx context.Context, b bindings.Binding, m deliver.Message) (deliver.Result, error)
	// Ack acknowledges a reply on its channel at a moment (AckReceived
	// once it is authorized, then AckCompleted or AckError); nil does
	// nothing. Best effort: it cannot change the outcome.
	Ack func(r channels.Reply, moment string)
	// Events receives the channel.* events; nil discards them.
	Events graph.Emitter
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Pipeline classifies, records and delivers replies heard on one channel.
// It is safe for concurrent use.
type Pipeline struct {
	cfg Config
	cli *policy.CLIConfig
}

// New builds a pipeline.
func New(cfg Config) (*Pipeline, error) {
	switch {
	case cfg.Link == nil:
		return nil, errors.New("inbound: no link to read graphs through")
	case cfg.Ledger == nil:
		return nil, errors.New("inbound: no ledger")
	case cfg.Channel.Name == "":
		return nil, errors.New("inbound: no channel")
	}
	cli := cfg.Link.CLI()
	if cfg.Deliver == nil {
		root := cli.StateRoot()
		cfg.Deliver = func(ctx context.Context, b bindings.Binding, m deliver.Message) (deliver.Result, error) {
			return deliver.Deliver(ctx, root, b, m)
		}
	}
	if cfg.Ack == nil {
		cfg.Ack = func(channels.Reply, string) {}
	}
	if cfg.Events == nil {
		cfg.Events = eventlog.Discard
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Pipeline{cfg: cfg, cli: cli}, nil
}

// Link is the link the pipeline reads graphs through.
func (p *Pipeline) Link() *route.Link { return p.cfg.Link }

// Result is what processing one reply decided; `the-loop reply` prints it
// as JSON.
type Result struct {
	// Outcome is OutcomeProcessed, or the reason it was dropped.
	Outcome string `json:"outcome"`
	// Event is the type the reply classified as, when it got that far.
	Event string `json:"event,omitempty"`
	// Gate is what the graph read returned (open, none, unknown), or n/a
	// for a control keyword, which reads none.
	Gate channels.Gate `json:"gate,omitempty"`
	// WorkItem is the work item the thread is bound to.
	WorkItem string `json:"workItem,omitempty"`
	// Mirrored says whether the ledger recorded it; set once recording was
	// tried.
	Mirrored *bool `json:"mirrored,omitempty"`
	// Delivered says whether a work-item.reply reached the session; set
	// once delivery was tried, and only for one.
	Delivered *bool `json:"delivered,omitempty"`
	// Error says what failed: the record, the delivery, or the pipeline.
	Error string `json:"error,omitempty"`
}

// Done reports whether the reply had every effect it asks for: it was
// processed, recorded on the work item's issue, and, for a
// work-item.reply, delivered to the session. A gate.feedback or
// control.command acts through its record alone (the ingress reads it),
// so one that was not recorded was dropped (DropUnrecorded). A
// work-item.reply recorded but not delivered, or delivered but not
// recorded, is processed and not Done: handing it over again would give
// the session the text twice, so the caller says so rather than retrying.
// `the-loop reply` exits 0 only for a Done result.
func (r Result) Done() bool {
	switch {
	case r.Outcome != OutcomeProcessed, r.Mirrored == nil || !*r.Mirrored:
		return false
	case r.Event == channels.EventReply:
		return r.Delivered != nil && *r.Delivered
	}
	return true
}

// Failed is the result of a reply that could not be processed (Process's
// error): it says what a caller may do next. When GitHub failed for now
// the record may be on the issue all the same, so running the reply again
// is safe only where it is looked for first (retryable: ProcessAgain).
func Failed(err error, retryable bool) Result {
	res := Result{Outcome: "error", Error: err.Error()}
	if github.Transient(err) {
		res.Error += "; GitHub failed for now: the record is not known to be on the issue, and nothing was delivered; run the same reply again"
		if !retryable {
			res.Error += " (give --ts, so that a record GitHub took is found rather than posted twice)"
		}
	}
	return res
}

// Process takes one reply through the pipeline. An error means it could
// not be processed and nothing was delivered: the bindings could not be
// read, ctx is done, or the ledger failed transiently (github.Transient)
// to record it, so that processing it again later may succeed (the
// Result then says how far it got: its event, gate and work item, and
// Mirrored false). Everything else, drops included, is a Result.
func (p *Pipeline) Process(ctx context.Context, r channels.Reply) (Result, error) {
	return p.process(ctx, r, false)
}

// ProcessAgain is Process for a reply an earlier attempt may have
// recorded already, whose answer was lost: its record (by the message's
// id, github.RecordID) is looked for on the issue before it is posted, so
// processing a message again never records it twice, and the received
// acknowledgement is not made again. It costs a listing of the issue's
// comments; a reply with no id is recorded as by Process.
func (p *Pipeline) ProcessAgain(ctx context.Context, r channels.Reply) (Result, error) {
	return p.process(ctx, r, true)
}

// process is Process; retried says an earlier attempt at this reply may
// have got as far as recording it or acknowledging it.
func (p *Pipeline) process(ctx context.Context, r channels.Reply, retried bool) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if !p.cfg.Channel.Enabled {
		return p.drop(r, "", DropChannelDisabled, eventlog.LevelWarning), nil
	}
	if r.TopLevel {
		return p.kickoff(r), nil
	}
	b, ok, err := p.cfg.Link.Bindings().ByThread(r.ChannelID, r.Thread)
	if err != nil {
		return Result{}, fmt.Errorf("map the thread %s:%s to a work item: %w", r.ChannelID, r.Thread, err)
	}
	if !ok {
		return p.drop(r, "", DropUnmapped, eventlog.LevelInfo), nil
	}
	work, err := channels.ParseRef(b.Ref)
	if err != nil {
		// The store validates what it binds: a ref that does not parse is
		// a damaged file, not a reply to guess about.
		return Result{}, fmt.Errorf("the thread %s:%s is bound to %q: %w", r.ChannelID, r.Thread, b.Ref, err)
	}
	if r.Bot {
		return p.drop(r, work.String(), DropSelfAuthored, eventlog.LevelDebug), nil
	}
	person, ok := p.cli.PersonOn(p.cfg.Channel.Name, r.Author)
	if !ok {
		// An empty allow-list denies everyone, and an unauthorized reply
		// is neither recorded nor delivered: the record would be a write
		// on the work item on a stranger's behalf.
		p.cfg.Log.Warn("dropping a reply from someone not in routing.authorizedUsers", "channel", p.cfg.Channel.Name, "work_item", work, "actor", r.Author)
		return p.drop(r, work.String(), DropUnauthorized, eventlog.LevelWarning, "actor", r.Author), nil
	}
	if !retried {
		p.cfg.Ack(r, AckReceived)
	}
	kind, gate := p.classify(r, work)
	res := Result{Event: kind, Gate: gate, WorkItem: work.String()}
	var needs []any
	if kind == channels.EventControl && !p.cfg.Channel.Granted(channels.EventGateFeedback) && p.answersOnEntry(r.Text) {
		needs = []any{"needs", channels.EventGateFeedback}
	}
	if !p.cfg.Channel.Granted(kind) || needs != nil {
		// Dropped, never downgraded: a keyword the channel may not run is
		// not handed to the session as prose either.
		p.cfg.Ack(r, AckError)
		out := p.drop(r, work.String(), DropUnpublishable, eventlog.LevelWarning,
			append([]any{"actor", r.Author, "kind", kind, "gate", string(gate)}, needs...)...)
		out.Event, out.Gate = kind, gate
		return out, nil
	}
	p.emit("channel.reply_received", eventlog.LevelInfo, map[string]any{"channel": p.cfg.Channel.Name,
		"work_item": work.String(), "actor": r.Author, "kind": kind, "gate": string(gate)})
	res.Outcome = OutcomeProcessed

	mirrored, err := p.record(ctx, r, work, person, kind, gate, retried, &res)
	if err != nil {
		// GitHub may answer later: nothing is delivered or acknowledged
		// now, and the delivery is processed again.
		res.Outcome, res.Mirrored = "", &mirrored
		return res, err
	}
	res.Mirrored = &mirrored
	if !mirrored && kind != channels.EventReply {
		// The record is the request: without it, nothing was asked.
		res.Outcome = DropUnrecorded
	}
	if kind != channels.EventReply {
		// The record is the request: the ledger's ingress judges a gate
		// answer and applies a control keyword. Delivering it here too
		// would hand the session the text twice, around the gate.
		p.ack(r, mirrored)
		return res, nil
	}
	delivered := p.deliver(ctx, r, b, work, &res)
	res.Delivered = &delivered
	if !mirrored && !delivered {
		// Neither recorded nor handed over: it reached nobody.
		res.Outcome = DropUndeliverable
	}
	p.ack(r, mirrored && delivered)
	return res, nil
}

// classify is the reply's event type and the gate word, in the order
// keyword → gate → reply.
//
// The execute keyword is not a control command here: the ingress hands a
// comment carrying it to the gate the item waits at (phase-selection reads
// it as its answer), so it is a gate answer, read against the graph and
// bounded by the gate.feedback grant like any other.
//
// The keywords are looked for in the text as the ledger records it,
// credentials scrubbed, since that is what the ingress reads them in: a
// keyword glued to a secret is no keyword as written, and stands alone
// once the secret is masked.
//
// Departure from the original (docs/compatibility.md#slack-a-reply-is-classified-before-it-is-recorded): seed 003: a reply is classified, by the graph and the channel's grants.
func (p *Pipeline) classify(r channels.Reply, work channels.Ref) (string, channels.Gate) {
	if c := p.cfg.Link.Vocabulary().Parse(channels.Scrub(r.Text, nil)); c.Ambiguous || (c.Command != "" && c.Command != channels.CommandExecute) {
		// An approval word inside a control comment must not become a gate
		// answer, nor two commands prose: the ingress refuses what is
		// ambiguous, through the seam a typed comment goes through.
		return channels.EventControl, channels.GateNotRead
	}
	read := p.cfg.Link.Gate(work)
	switch read.Gate {
	case channels.GateOpen:
		return channels.EventGateFeedback, read.Gate
	case channels.GateUnknown:
		// Cannot tell: the ledger's ingress, which keeps the graph, judges
		// it when the channel may answer gates; otherwise it stays a reply.
		if p.cfg.Channel.Granted(channels.EventGateFeedback) {
			return channels.EventGateFeedback, read.Gate
		}
	}
	return channels.EventReply, read.Gate
}

// entering are the commands that enter a loop beginning at a human gate:
// the ingress evaluates a gate entered so once with the comment that
// entered it (a contribution states its goal in it). do is not one: the
// ad-hoc loop begins at the agent's work, and its instruction is the
// item's own text.
var entering = []string{channels.CommandStart, channels.CommandContribute}

// answersOnEntry reports whether text is a command that enters the work
// item's loop carrying words beside its keyword: the gate it enters reads
// them as an answer, which only the gate.feedback grant allows.
func (p *Pipeline) answersOnEntry(text string) bool {
	v := p.cfg.Link.Vocabulary()
	text = channels.Scrub(text, nil)
	if !slices.Contains(entering, v.Parse(text).Command) {
		return false
	}
	return strings.ContainsFunc(v.Strip(text), func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) })
}

// record writes the reply on the work item's ledger, under the id of the
// message (github.RecordID), which every attempt at it shares. A failure a
// later attempt may mend is the error, and the reply is not processed
// further; any other is logged and the result says so.
func (p *Pipeline) record(ctx context.Context, r channels.Reply, work channels.Ref, person policy.Person, kind string, gate channels.Gate, retried bool, res *Result) (bool, error) {
	rec, err := p.cfg.Ledger.Record(ctx, github.Entry{Work: work, Type: kind, Source: p.cfg.Channel.Name, Author: r.Author,
		Person: person, Text: r.Text, Gate: gate, At: p.cfg.Now(), ID: github.RecordID(r), Retried: retried})
	if err != nil {
		transient := github.Transient(err)
		p.cfg.Log.Warn("could not record a reply on its work item", "channel", p.cfg.Channel.Name, "work_item", work, "retry", transient, "err", err)
		p.emit("channel.mirror_failed", eventlog.LevelWarning, map[string]any{"channel": p.cfg.Channel.Name,
			"work_item": work.String(), "kind": kind, "retry": transient, "error": err.Error()})
		if transient {
			return false, fmt.Errorf("record the reply on %s: %w", work, err)
		}
		if kind == channels.EventReply {
			res.Error = "record: " + err.Error()
		} else {
			// Say what did not happen: the record is what the ingress
			// reads, and the pipeline moves nothing itself.
			res.Error = fmt.Sprintf("record: %v; so no %s reached %s, and nothing moved", err, kind, work)
		}
		return false, nil
	}
	f := map[string]any{"channel": p.cfg.Channel.Name, "work_item": work.String(), "actor": r.Author, "kind": kind}
	if rec.Found {
		// An earlier attempt posted it, and its answer was lost.
		f["found"] = true
	}
	p.emit("channel.mirrored", eventlog.LevelInfo, f)
	return true, nil
}

func (p *Pipeline) deliver(ctx context.Context, r channels.Reply, b bindings.Binding, work channels.Ref, res *Result) bool {
	m := deliver.Message{Ref: work.String(), Channel: p.cfg.Channel.Name, Thread: r.Thread, TS: r.TS,
		Author: r.Author, Text: r.Text, At: p.cfg.Now().UTC()}
	got, err := p.cfg.Deliver(ctx, b, m)
	if err != nil {
		// The record already carries the answer: say so, and move on.
		p.cfg.Log.Warn("could not deliver a reply to the work item's session", "channel", p.cfg.Channel.Name, "work_item", work, "err", err)
		p.emit("channel.dropped", eventlog.LevelWarning, map[string]any{"channel": p.cfg.Channel.Name,
			"work_item": work.String(), "actor": r.Author, "reason": DropUndeliverable, "error": err.Error()})
		res.Error = joinErr(res.Error, "deliver: "+err.Error())
		return false
	}
	p.emit("channel.delivered", eventlog.LevelInfo, map[string]any{"channel": p.cfg.Channel.Name,
		"work_item": work.String(), "actor": r.Author, "target": got.Target})
	return true
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func (p *Pipeline) ack(r channels.Reply, ok bool) {
	if ok {
		p.cfg.Ack(r, AckCompleted)
	} else {
		p.cfg.Ack(r, AckError)
	}
}

// kickoff answers a top-level message: the original opens a work item from
// one on a channel granted work-item.create. the-loop does not, so such a
// message is dropped, as it would be by a channel without the grant.
func (p *Pipeline) kickoff(r channels.Reply) Result {
	switch {
	case r.Bot:
		return p.drop(r, "", DropSelfAuthored, eventlog.LevelDebug)
	case !p.cfg.Channel.Granted(channels.EventCreate):
		return p.drop(r, "", DropUnpublishable, eventlog.LevelDebug, "kind", channels.EventCreate)
	}
	return p.drop(r, "", DropKickoffDisabled, eventlog.LevelWarning)
}

// drop records a reply not processed, and why.
func (p *Pipeline) drop(r channels.Reply, work, reason, level string, kv ...any) Result {
	f := map[string]any{"channel": p.cfg.Channel.Name, "reason": reason}
	if work != "" {
		f["work_item"] = work
	}
	if r.Thread != "" {
		f["thread"] = r.Thread
	}
	for i := 0; i+1 < len(kv); i += 2 {
		f[kv[i].(string)] = kv[i+1]
	}
	p.emit("channel.dropped", level, f)
	return Result{Outcome: reason, WorkItem: work}
}

func (p *Pipeline) emit(event, level string, fields map[string]any) {
	if err := p.cfg.Events.Emit(event, level, fields); err != nil {
		p.cfg.Log.Warn("could not write event", "event", event, "err", err)
	}
}
