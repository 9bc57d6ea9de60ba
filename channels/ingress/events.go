package ingress

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"

	bolt "go.etcd.io/bbolt"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/eventlog"
)

// dropLevels are the levels routing.dropped is logged at, by reason, as the
// original router logs them: the drops that are routine are debug, an
// actor refused is a warning.
var dropLevels = map[string]string{
	channels.DropDisabledEvent:     eventlog.LevelDebug,
	channels.DropDuplicateDelivery: eventlog.LevelInfo,
	channels.DropNoWorkItem:        eventlog.LevelDebug,
	channels.DropSelfAuthored:      eventlog.LevelDebug,
	channels.DropUnauthorizedActor: eventlog.LevelWarning,
	DropFailed:                     eventlog.LevelError,
}

// ownFields are the fields the ingress sets on an outcome event; a
// Processor's Fields cannot replace them.
var ownFields = map[string]bool{"gh_event": true, "delivery_id": true, "reason": true, "channel": true, "channel_event": true, "retries": true}

// envelopeFields are the event log's own keys, which no field may use.
var envelopeFields = map[string]bool{"ts": true, "source": true, "event": true, "level": true, "pid": true}

// baseFields are the fields every event about a delivery carries.
func baseFields(s stored) map[string]any {
	f := map[string]any{"gh_event": s.Event, "delivery_id": s.ID}
	if s.Channel != "" {
		// Not GitHub's: the event is the channel's own.
		delete(f, "gh_event")
		f["channel"], f["channel_event"] = s.Channel, s.Event
	}
	if s.Item != "" {
		f["work_item"] = s.Item
	}
	if s.Action != "" {
		f["action"] = s.Action
	}
	return f
}

func withReason(f map[string]any, reason string) map[string]any {
	f["reason"] = reason
	return f
}

// outcome is an outcome event as the outbox keeps it until the line is in
// the log.
type outcome struct {
	Event  string         `json:"event"`
	Level  string         `json:"level"`
	Fields map[string]any `json:"fields"`
	// Offset is the event log's size before the line was written: where a
	// search for it after a crash starts.
	Offset int64 `json:"offset"`
}

func (o outcome) reason() string {
	r, _ := o.Fields["reason"].(string)
	return r
}

func (o outcome) id() string {
	r, _ := o.Fields["delivery_id"].(string)
	return r
}

// outcomeEvent is the event that says what processing s decided.
func (q *Queue) outcomeEvent(s stored, out channels.Outcome, perr error) outcome {
	f := baseFields(s)
	if s.Retries > 0 {
		// Settled after failing: how often is part of what happened.
		f["retries"] = s.Retries
	}
	if perr != nil {
		f["reason"] = DropFailed
		f["error"] = perr.Error()
		return outcome{Event: "routing.dropped", Level: dropLevels[DropFailed], Fields: f}
	}
	for k, v := range out.Fields {
		if ownFields[k] || envelopeFields[k] {
			q.opts.Logger.Warn("processor field ignored: the ingress sets it", "field", k, "delivery_id", s.ID)
			continue
		}
		f[k] = v
	}
	if out.Routed {
		if out.Reason != "" {
			f["reason"] = out.Reason
		}
		return outcome{Event: "routing.routed", Fields: f}
	}
	f["reason"] = out.Reason
	return outcome{Event: "routing.dropped", Level: dropLevels[out.Reason], Fields: f}
}

// emit logs an event; a failure to log is a diagnostic, never a failed
// delivery.
func (q *Queue) emit(event, level string, fields map[string]any) bool {
	if err := q.opts.Log.Emit(event, level, fields); err != nil {
		q.opts.Logger.Error("cannot write the event log", "event", event, "err", err)
		return false
	}
	return true
}

func (q *Queue) emitEvent(o outcome) bool { return q.emit(o.Event, o.Level, o.Fields) }

// logSize is the event log's size now, 0 when it has none.
func (q *Queue) logSize() int64 {
	p := q.opts.Log.Path()
	if p == "" {
		return 0
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// replayOutbox writes the outcome events a crash kept out of the log. An
// outbox entry is made in the transaction that settles a delivery and
// deleted after its line is written; one still there may or may not have
// its line, so the log is read from where the entry says the line would
// be, and only the missing lines are written. Each processed delivery thus
// has one outcome line, unless the log was rotated in between.
func (q *Queue) replayOutbox() error {
	var pending []outcome
	keys := [][]byte{}
	err := q.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOutbox).ForEach(func(k, v []byte) error {
			var o outcome
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.UseNumber()
			if err := dec.Decode(&o); err != nil {
				q.opts.Logger.Error("unreadable outbox entry dropped", "err", err)
			} else {
				pending = append(pending, o)
			}
			keys = append(keys, append([]byte(nil), k...))
			return nil
		})
	})
	if err != nil || len(keys) == 0 {
		return err
	}
	logged, err := q.loggedOutcomes(pending)
	if err != nil {
		return err
	}
	for _, o := range pending {
		if !logged[outcomeKey{o.Event, o.id(), o.reason()}] {
			q.emitEvent(o)
		}
	}
	return q.updateDB(func(tx *bolt.Tx) error {
		ob := tx.Bucket(bucketOutbox)
		for _, k := range keys {
			if err := ob.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// outcomeKey identifies an outcome line. A duplicate delivery's drop shares
// the event and the id, never the reason.
type outcomeKey struct{ event, id, reason string }

// loggedOutcomes reads the event log from the earliest offset of pending
// and says which of their lines it holds. A log shorter than an offset has
// been rotated or truncated: it is read whole.
func (q *Queue) loggedOutcomes(pending []outcome) (map[outcomeKey]bool, error) {
	found := map[outcomeKey]bool{}
	p := q.opts.Log.Path()
	if p == "" {
		return found, nil
	}
	want := map[outcomeKey]bool{}
	from := pending[0].Offset
	for _, o := range pending {
		want[outcomeKey{o.Event, o.id(), o.reason()}] = true
		from = min(from, o.Offset)
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return found, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() < from {
		from = 0
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, err
	}
	errDone := errors.New("all found")
	torn, err := eventlog.Read(f, func(line []byte) error {
		if !bytes.Contains(line, []byte(`"delivery_id"`)) {
			return nil
		}
		var rec struct {
			Event      string `json:"event"`
			DeliveryID string `json:"delivery_id"`
			Reason     string `json:"reason"`
		}
		if json.Unmarshal(line, &rec) == nil {
			if k := (outcomeKey{rec.Event, rec.DeliveryID, rec.Reason}); want[k] {
				found[k] = true
			}
		}
		if len(found) == len(want) {
			return errDone
		}
		return nil
	})
	if torn > 0 {
		// A write a crash or a full disk cut short: its line is no
		// outcome, and the outcome is written again.
		q.opts.Logger.Warn("torn lines in the event log skipped", "path", p, "torn", torn)
	}
	if err != nil && err != errDone {
		return nil, err
	}
	return found, nil
}
