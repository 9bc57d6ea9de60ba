package builtins

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// The self-authorship contract. Every comment the-loop posts carries
// selfCommentMarker, an invisible HTML comment, and every reader drops a body
// carrying it before authorization is even considered: the harness posts with
// the operator's own credentials, so by author alone its comments are
// indistinguishable from the operator's, and without the marker it could
// answer its own gates. The marker is matched exactly and must never change:
// comments posted by earlier versions (and by the Python tool) must stay
// recognisable.
const (
	selfCommentMarker = "<!-- the-loop:agent-comment -->"
	// selfCommentAttribution is the visible half of the same contract, so a
	// human reading the thread knows who wrote the comment too.
	selfCommentAttribution = "🤖 _the-loop, autonomous comment_"
)

// IsSelfAuthored reports whether body carries the-loop's own marker: the
// ingress drops such a comment before it looks at who posted it, as every
// gate does.
func IsSelfAuthored(body string) bool { return isSelfAuthored(body) }

// IsAuthorized reports whether actor is on the allowlist, as the gates
// judge it: a named actor only, an empty list authorizing nobody, logins
// compared case-insensitively and without a leading "@". The ingress uses
// it so that who may drive a work item and whose reply a gate reads can
// never disagree.
func IsAuthorized(actor string, allowed []string) bool { return isAuthorized(actor, allowed) }

// MarkSelfAuthored stamps body as the-loop's own, exactly as the hooks stamp
// what they post, for callers elsewhere (the ledger) that post text
// the-loop composed; see markSelfAuthored. A record of a person's reply is
// not such text and must not be marked: every reader drops a marked body,
// so it could never answer a gate. It carries an envelope instead
// (StampEnvelope), naming who replied.
func MarkSelfAuthored(body string) string { return markSelfAuthored(body) }

// IsSelfAuthoredComment reports whether c is the-loop's own: its body
// carries the marker, or the integration's own identity posted it
// (c.Self) and it is not a record the ledger relayed of a person's words
// (RelayedWords). A relay is the one comment the-loop posts unmarked: a
// gate reads the person's words in it, never the record as the
// operator's. Every reader of a thread applies this before it considers
// who wrote a comment: the gates here, the webhook router, check.
func IsSelfAuthoredComment(c graph.Comment) bool {
	if isSelfAuthored(c.Body) {
		return true
	}
	if !c.Self {
		return false
	}
	_, relay := RelayedWords(c.Body)
	return !relay
}

// isSelfAuthored reports whether body carries the-loop's own marker.
func isSelfAuthored(body string) bool {
	return body != "" && strings.Contains(body, selfCommentMarker)
}

// markSelfAuthored stamps body as the-loop's own: the attribution line and the
// marker are appended after the trimmed text. Idempotent. Apply it only to
// text the-loop composed itself, never to text quoted from a payload: the mark
// asserts authorship, and every reader silently drops what carries it.
func markSelfAuthored(body string) string {
	if isSelfAuthored(body) {
		return body
	}
	return strings.TrimRightFunc(body, fmSpace) + "\n\n" + selfCommentAttribution + "\n" + selfCommentMarker + "\n"
}

// normalizeLogin drops surrounding space and the leading "@" a login may be
// written with, and folds case: GitHub logins are case-insensitive, and
// allowlists and ingress paths spell the same human several ways.
func normalizeLogin(login string) string {
	return strings.ToLower(strings.TrimLeft(strings.TrimSpace(login), "@"))
}

// isAuthorized reports whether actor is on the allowlist. Only a named actor
// can be authorized, and an empty allowlist authorizes nobody: both fail
// closed. Logins compare case-insensitively, ignoring a leading "@".
func isAuthorized(actor string, allowed []string) bool {
	who := normalizeLogin(actor)
	if who == "" {
		return false
	}
	return slices.ContainsFunc(allowed, func(a string) bool { return normalizeLogin(a) == who })
}

// authorizedComments returns the event's comments a gate may read, in order:
// self-authored ones are dropped first, then every comment whose author is
// missing or not on Settings.AuthorizedUsers. A nil event yields nothing, which
// is why human gates read "wait" under check.
func authorizedComments(ctx *graph.Context) []graph.Comment {
	if ctx.Event == nil {
		return nil
	}
	return filterAuthorized(ctx, ctx.Event.Comments)
}

// waitingFor is a gate's wait reason, plus a note when the event carried
// replies that were not read because their authors are not authorized: the
// operator otherwise sees the same message as when nobody replied. The note
// counts them and names the setting, never their text or authors.
func waitingFor(ctx *graph.Context, reason string) string {
	if ctx.Event == nil {
		return reason
	}
	ignored := 0
	for _, c := range ctx.Event.Comments {
		if !IsSelfAuthoredComment(c) && !isAuthorized(c.Author, ctx.Settings.AuthorizedUsers) {
			ignored++
		}
	}
	if ignored == 0 {
		return reason
	}
	return fmt.Sprintf("%s (%d reply(s) not read: their authors are not in the CLI config's routing.authorizedUsers)", reason, ignored)
}

// filterAuthorized applies the gate-reading rule to comments from any source.
// The-loop's own comments go first (IsSelfAuthoredComment): the marker,
// or the integration's own identity on anything but a relay.
//
// A comment that passes and carries a ledger envelope (see ParseEnvelope)
// naming an actor whose github id is authorized too is attributed to that
// person: a reply given on a chat channel is posted to the issue by the
// operator's account, and the gate must record who answered, not who
// posted (the original's decision-103 D4). Attribution only narrows: it
// maps one authorized login to another, and reads the envelope only once
// the poster has passed. An envelope on a stranger's comment is text that
// is never read; one naming an unauthorized or no github id changes
// nothing.
func filterAuthorized(ctx *graph.Context, comments []graph.Comment) []graph.Comment {
	var out []graph.Comment
	for _, c := range comments {
		if IsSelfAuthoredComment(c) {
			continue
		}
		if !isAuthorized(c.Author, ctx.Settings.AuthorizedUsers) {
			if ctx.Log != nil {
				ctx.Log.Debug("ignoring a comment from an unauthorized author", "author", c.Author)
			}
			continue
		}
		if who := envelopeAuthor(c.Body, ctx.Settings.AuthorizedUsers); who != "" {
			if ctx.Log != nil {
				ctx.Log.Debug("attributing a recorded reply to its actor", "poster", c.Author, "actor", who)
			}
			c.Author = who
		}
		if words, ok := RelayedWords(c.Body); ok {
			c.Body = words
		}
		out = append(out, c)
	}
	return out
}

// envelopeAuthor is the github id of the actor body's envelope names when
// that id is authorized, else "".
func envelopeAuthor(body string, allowed []string) string {
	e, ok := ParseEnvelope(body)
	if !ok {
		return ""
	}
	if who := e.Actor["github"]; isAuthorized(who, allowed) {
		return who
	}
	return ""
}

// commentRecords is comments as JSON-natural result data, [{author, body}]:
// what the gates report as data["comments"] and record-feedback reads back.
func commentRecords(comments []graph.Comment) []any {
	out := make([]any, len(comments))
	for i, c := range comments {
		out[i] = map[string]any{"author": c.Author, "body": c.Body}
	}
	return out
}

// commentsFromListing reads the comments an integration's list-comments
// answer carries; see ListedReplies.
func commentsFromListing(listing map[string]any) []graph.Comment {
	var out []graph.Comment
	for _, r := range ListedReplies(listing) {
		out = append(out, r.Comment)
	}
	return out
}

// ListedReplies reads the comments an integration's list-comments answer
// carries, {"comments": [...]}, in order, tolerating the shapes providers
// use: each entry's author is "author" or "user", given as a login string
// or as an object with a "login"; its time is "created_at" or "createdAt"
// in RFC 3339 (a reply whose time is missing or does not parse has a zero
// At); "self": true says the integration's own identity posted it
// (graph.Comment.Self). Entries that are not objects are ignored. An edited comment is read
// as it stands, and "updated_at" (or "updatedAt"), when later than its
// creation, is its Edited time: a gate still open reads the edit, as the
// ingress reads an edited delivery, and a gate the item has left before
// the edit is not handed it (see graph.Reply). No authorization is applied
// here: the gates apply it.
func ListedReplies(listing map[string]any) []graph.Reply {
	raw, _ := listing["comments"].([]any)
	if raw == nil {
		if typed, ok := listing["comments"].([]map[string]any); ok {
			for _, m := range typed {
				raw = append(raw, m)
			}
		}
	}
	var out []graph.Reply
	for _, entry := range raw {
		m, ok := entry.(map[string]any)
		if !ok {
			continue
		}
		body, _ := m["body"].(string)
		self, _ := m["self"].(bool)
		r := graph.Reply{Comment: graph.Comment{Author: listingAuthor(m), Body: body, Self: self}, At: listingTime(m, "created_at", "createdAt")}
		if edited := listingTime(m, "updated_at", "updatedAt"); edited.After(r.At) && !r.At.IsZero() {
			r.Edited = edited
		}
		out = append(out, r)
	}
	return out
}

func listingTime(m map[string]any, keys ...string) time.Time {
	for _, key := range keys {
		if s, ok := m[key].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t
			}
		}
	}
	return time.Time{}
}

func listingAuthor(m map[string]any) string {
	for _, key := range []string{"author", "user"} {
		switch v := m[key].(type) {
		case string:
			if v != "" {
				return v
			}
		case map[string]any:
			if login, _ := v["login"].(string); login != "" {
				return login
			}
		}
	}
	return ""
}
