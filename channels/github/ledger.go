package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// The ledger is where a message heard on a chat channel is written down:
// a comment on the work item's issue, posted through the integration
// before anything else happens to the message, so that the work item stays
// the one record of what was said wherever it was said.
//
// How the comment is written is the security design. the-loop posts with
// the operator's own credential, and what that credential's login posts
// is the-loop's own to every reader (Integration.Identity), marked or not,
// with one exception: a relay, a record of a person's words carrying a
// gate.feedback or control.command envelope. A relay is read as a typed
// comment is, every guard running on it, and the gate reads the person's
// quoted words in it (builtins.RelayedWords), never the record's own line.
// So
//
//   - a work-item.reply, which the pipeline delivers to the session itself,
//     is recorded marked as the-loop's own and with its control keywords
//     defanged: read back, it is dropped, and never delivered or executed
//     a second time;
//   - a gate.feedback or control.command is recorded as a relay, unmarked
//     (Integration.AddRelay, the one unmarked comment the integration
//     posts), keywords intact: the ingress reads it, and the gate or the
//     control seam judges it. That is how a chat channel moves a work
//     item: through the ledger, never around it.
//
// Every record quotes the message (credentials scrubbed), says visibly who
// sent it on which channel, and carries the ledger envelope naming the
// event, the channel and the person (builtins.StampEnvelope), which the
// gates use to attribute the answer to the person rather than to the
// operator's account.
//
// A record is posted once. GitHub's answer to a POST can be lost on the
// way (a 502 from a proxy, a dropped connection) after the comment was
// made, so a POST that fails that way (Transient) is tried again, with a
// growing pause, only once the comments have been searched for
// the record: the envelope names the event it records (Entry.ID), the
// same on every attempt, and a comment carrying it is the record already
// posted.

// Entry is one message to record.
type Entry struct {
	// Work is the work item whose issue the record is posted on.
	Work channels.Ref
	// Type is the event the message became: channels.EventReply,
	// EventGateFeedback or EventControl.
	Type string
	// Source is the channel it was heard on ("slack").
	Source string
	// Author is the sender's id on that channel.
	Author string
	// Person is who the operator's config says the sender is; its ids go
	// in the envelope. Zero when the config names nobody with Author.
	Person policy.Person
	// Text is the message as written.
	Text string
	// Gate is what the pipeline's read of the graph returned; a
	// gate.feedback recorded because the read was GateUnknown is
	// attributed as a reply, since no open gate was seen.
	Gate channels.Gate
	// At is when it was heard; the envelope's ts.
	At time.Time
	// ID names the event recorded, the same on every attempt at recording
	// it (a Slack message by its channel and ts, RecordID): it goes in the
	// envelope, and is what a retry finds its record by. Without one a
	// failed POST is not tried again, since nothing could tell whether it
	// landed.
	ID string
	// Retried says an earlier attempt at recording it may have posted it
	// (its delivery is being processed again): the issue is searched for
	// the record before the first POST as well.
	Retried bool
}

// RecordID is the ledger id of a message heard on a channel: the channel,
// the room and the message's own id there, which Slack keeps for every
// delivery of the message. "" when the message has no id of its own.
func RecordID(r channels.Reply) string {
	if r.Channel == "" || r.ChannelID == "" || r.TS == "" {
		return ""
	}
	return r.Channel + ":" + r.ChannelID + ":" + r.TS
}

// Ledger records entries on GitHub through an integration. It is safe for
// concurrent use.
type Ledger struct {
	integration graph.Integration
	vocabulary  channels.Vocabulary
	environ     []string
	// attempts bounds the POSTs of one record; sleep waits between them.
	attempts int
	sleep    func(ctx context.Context, d time.Duration) error

	mu sync.Mutex
	// self is the login the ledger's posts appear under, once one has
	// been answered: a record found by its id must be by it.
	self string
}

// LedgerAttempts is how many times one record is POSTed at most: the
// pauses between are 1s and 2s.
const LedgerAttempts = 3

// NewLedger is a ledger posting through in. Replies are defanged against
// every control keyword cli configures, whether or not control keywords
// are on now: a record outlives the setting.
func NewLedger(in graph.Integration, cli *policy.CLIConfig) *Ledger {
	return &Ledger{integration: in, vocabulary: channels.NewVocabulary(cli.ControlKeyword), attempts: LedgerAttempts, sleep: sleep}
}

// MaxCommentChars is the longest comment GitHub accepts.
const MaxCommentChars = 65536

// Recorded is what a record became on GitHub.
type Recorded struct {
	// CommentID is the comment's id.
	CommentID int64
	// Found says the record was already on the issue, posted by an earlier
	// attempt whose answer was lost: nothing was posted now.
	Found bool
	// Posts is how many POSTs were made.
	Posts int
}

// Record posts e on its work item's issue. An error means nothing was
// recorded, as far as GitHub said: no integration, GitHub refused, the
// entry is not one the ledger records, or GitHub kept failing
// transiently (Transient then says so of the error, and an earlier POST
// may have landed: a later Record of the same entry, Retried, finds it).
//
// An entry with an ID whose POST fails transiently is POSTed again, up to
// LedgerAttempts times, with a pause of 1s, then 2s, each time after the
// issue's comments were searched for a comment whose envelope carries the
// ID: when one is there, that is the record, and nothing more is posted.
// A search that fails ends the attempts with its error. ctx bounds the
// pauses.
func (l *Ledger) Record(ctx context.Context, e Entry) (Recorded, error) {
	if e.Work.IsZero() {
		return Recorded{}, errors.New("ledger: no work item to record on")
	}
	body, err := l.Body(e)
	if err != nil {
		return Recorded{}, err
	}
	if n := utf8.RuneCountInString(body); n > MaxCommentChars {
		// Cut short, a gate answer would say less than the person did:
		// refused whole, and said so.
		return Recorded{}, fmt.Errorf("ledger: the record on %s would be %d characters, over the %d GitHub takes in a comment: not recorded", e.Work, n, MaxCommentChars)
	}
	params := map[string]any{"ref": e.Work.String(), "body": body}
	if e.Type != channels.EventReply {
		// A person's words for a gate or the control seam: the one kind
		// of comment the-loop posts unmarked (Integration.AddRelay).
		params[ParamRelay] = true
	}
	look := e.Retried && e.ID != ""
	for posts := 1; ; posts++ {
		if look {
			found, ok, err := l.find(e)
			if err != nil {
				return Recorded{Posts: posts - 1}, fmt.Errorf("ledger: look for the record %s on %s before posting it: %w", e.ID, e.Work, err)
			}
			if ok {
				found.Posts = posts - 1
				return found, nil
			}
		}
		res, err := l.integration.Call(OpAddComment, params)
		if err == nil {
			id, _ := intParam(res["id"])
			if author, _ := res["author"].(string); author != "" {
				l.mu.Lock()
				l.self = author
				l.mu.Unlock()
			}
			return Recorded{CommentID: id, Posts: posts}, nil
		}
		err = fmt.Errorf("ledger: record on %s: %w", e.Work, err)
		if e.ID == "" || !Transient(err) || posts >= l.attempts {
			return Recorded{Posts: posts}, err
		}
		if serr := l.sleep(ctx, backoff(posts)); serr != nil {
			return Recorded{Posts: posts}, err
		}
		look = true
	}
}

// find is the comment on e's issue that records e: the first whose
// envelope carries e's ID and source, and, once the ledger knows the
// login its posts appear under, that is by it. Someone who can comment
// on the issue could otherwise write the envelope of a message the ledger
// has yet to record, and have it never recorded; they could never make a
// record say what the message did not.
//
// Departure from the original (docs/compatibility.md#slack-a-record-github-fails-to-take-is-retried-not-lost): a record GitHub failed to take is looked for and posted again, not lost.
func (l *Ledger) find(e Entry) (Recorded, bool, error) {
	res, err := l.integration.Call(OpListComments, map[string]any{"ref": e.Work.String()})
	if err != nil {
		return Recorded{}, false, err
	}
	l.mu.Lock()
	self := l.self
	l.mu.Unlock()
	list, _ := res["comments"].([]any)
	for _, item := range list {
		c, _ := item.(map[string]any)
		body, _ := c["body"].(string)
		author, _ := c["author"].(string)
		env, ok := builtins.ParseEnvelope(body)
		if !ok || env.ID != e.ID || env.Source != e.Source || (self != "" && author != self) {
			continue
		}
		id, _ := intParam(c["id"])
		return Recorded{CommentID: id, Found: true}, true, nil
	}
	return Recorded{}, false, nil
}

// Body is the comment that records e.
func (l *Ledger) Body(e Entry) (string, error) {
	text := inert(channels.Scrub(e.Text, l.environ))
	env := builtins.Envelope{Type: e.Type, Source: e.Source, Actor: e.actor(), TS: e.stamp(), ID: e.ID}
	switch e.Type {
	case channels.EventReply:
		head := fmt.Sprintf("💬 **the-loop** recorded a reply from %s, sent on the **%s** channel and delivered to the work item's session:", e.who(), e.Source)
		body := builtins.MarkSelfAuthored(head + "\n\n" + quote(l.vocabulary.Defang(text)))
		return builtins.StampEnvelope(body, env), nil
	case channels.EventGateFeedback, channels.EventControl:
		what := "an answer to the open gate"
		switch {
		case e.Type == channels.EventControl:
			what = "a control command"
		case e.Gate == channels.GateUnknown:
			// The pipeline saw no gate; the ingress, which keeps the
			// graph, judges whether it answers one.
			what = "a reply"
		}
		head := fmt.Sprintf("💬 **the-loop** recorded %s from %s, sent on the **%s** channel. The loop reads it from here:", what, e.who(), e.Source)
		return builtins.StampEnvelope(head+"\n\n"+quote(text), env), nil
	}
	return "", fmt.Errorf("ledger: %q is not an event the ledger records from a channel", e.Type)
}

// who is the visible attribution: the person's label and the id they
// sent from, or the id alone.
func (e Entry) who() string {
	native := e.Source + ":" + e.Author
	if label := e.Person.Label(); len(e.Person.IDs) > 0 && label != native {
		return fmt.Sprintf("`%s` (`%s`)", label, native)
	}
	return fmt.Sprintf("`%s`", native)
}

// actor is the envelope's actor: every id the config gives the person,
// and at least the one they sent from.
func (e Entry) actor() map[string]string {
	ids := map[string]string{}
	for ch, id := range e.Person.IDs {
		if id != "" {
			ids[ch] = id
		}
	}
	if ids[e.Source] == "" && e.Author != "" {
		ids[e.Source] = e.Author
	}
	return ids
}

func (e Entry) stamp() string {
	if e.At.IsZero() {
		return ""
	}
	return e.At.UTC().Format(time.RFC3339)
}

// inert is text with every HTML comment opener written as an entity, so
// the record's invisible parts are the-loop's alone: the envelope read is
// the first in the body (builtins.ParseEnvelope), which a message could
// otherwise write ahead of the-loop's, naming another person, and the
// self-authored marker in a message would hide its record from the
// ingress. The entity reads as the same "<!--" on GitHub, and neither
// '<' nor '&' joins a control keyword, so the keywords read the same.
func inert(text string) string { return strings.ReplaceAll(text, "<!--", "&lt;!--") }

// quote is text as a Markdown block quote, line by line: what the gates
// read as the sender's own words in a record (builtins.RelayedWords).
func quote(text string) string {
	lines := strings.Split(strings.ReplaceAll(strings.TrimRight(text, "\n"), "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}
