package graph

import "fmt"

// txn is one change to a work item made under its lock: the state read
// under the lock, and the events the change emits. Its apply is the
// executor of transitions (see transition.go): it appends a transition's
// events durably before it writes the state that records them, so a crash
// between the two leaves events the next run repeats, never an item that
// moved without them. Events emitted after the last write (what an entry
// chain's hooks did) are appended when the change ends.
type txn struct {
	rt      *Runtime
	item    WorkItem
	st      *State
	pending []emission
}

// emission is one event a transition or an entry chain emits, waiting
// for the executor to append it.
type emission struct {
	event, level string
	fields       map[string]any
}

// emit buffers an event until the next write, or the change's end.
func (tx *txn) emit(event, level string, fields map[string]any) {
	tx.pending = append(tx.pending, emission{event, level, fields})
}

// apply is the executor: the one place a move of a work item touches the
// world. It takes the transition's state as the change's own, then makes
// the move real in the order effects documents:
//
//  1. the transition's events are appended to the event log and synced
//     (Syncer), so that they are on disk before anything records the move;
//  2. the state is written atomically (temp file, fsync, rename);
//  3. the entry chain of the node entered runs, acting: its outbound hooks
//     call out and log-entry writes the execution-log line. What it finds
//     is said in the step, and its events are appended when the change
//     ends (entry chains do not gate, so nothing they find moves the item).
//
// A failed state write stops there and is returned: no entry chain runs
// for a move that was not recorded.
func (tx *txn) apply(tr *transition) (*Step, error) {
	tx.st = tr.state
	tx.pending = append(tx.pending, tr.effects.events...)
	if tr.effects.write {
		if err := tx.commit(); err != nil {
			return nil, err
		}
	}
	step := tr.step
	if tr.effects.enter != "" {
		tx.rt.runEntry(tx, &step, tr.effects.enter)
	}
	return &step, nil
}

// commit appends the buffered events, durably, then writes the state.
// Events that cannot be appended or synced (a full disk) stop it before
// the write: the events are the record of the move, and a move without
// its record is what the order exists to prevent. Whenever the state is
// not written after some of its events were appended, the log says so
// (as far as it still can), so that its reader does not take them for a
// move that happened.
//
// Departure from the original (docs/compatibility.md#a-move-whose-events-cannot-be-written-is-not-made): a move whose events cannot be appended is not written.
func (tx *txn) commit() error {
	notWritten := func(err error) {
		tx.rt.emit("graph.state_write_failed", "error", map[string]any{"work_item": tx.item.Ref, "error": err.Error()})
	}
	if appended, err := tx.flush(true); err != nil {
		if appended > 0 {
			notWritten(err)
		}
		return fmt.Errorf("%s was not moved, because the move's events could not be recorded: %w", tx.item.Ref, err)
	}
	err := tx.st.Save(tx.rt.Checkout, tx.rt.StateDir(tx.item))
	if err != nil {
		notWritten(err)
	}
	return err
}

// flush appends the buffered events; durable makes them reach the disk
// before it returns. It stops at the first event that cannot be appended,
// and says how many were.
func (tx *txn) flush(durable bool) (appended int, err error) {
	events := tx.pending
	tx.pending = nil
	if len(events) == 0 {
		return 0, nil
	}
	for i, e := range events {
		if err := tx.rt.emitter().Emit(e.event, e.level, e.fields); err != nil {
			return i, fmt.Errorf("%s (%d of %d events appended): %w", e.event, i, len(events), err)
		}
	}
	if s, ok := tx.rt.Events.(Syncer); ok && durable {
		if err := s.Sync(); err != nil {
			return len(events), fmt.Errorf("syncing %d events: %w", len(events), err)
		}
	}
	return len(events), nil
}

// flushLate appends the events emitted after the change's last write
// (what an entry chain's hooks did). They record no move, so a log that
// cannot take them is said, and fails nothing.
func (tx *txn) flushLate() {
	if _, err := tx.flush(false); err != nil {
		tx.rt.log().Warn("could not write event", "err", err)
	}
}

// locked loads id's state under its lock and hands fn the change; events
// fn emits after its last commit are appended when it returns.
func (rt *Runtime) locked(id string, fn func(tx *txn) error) error {
	item, err := rt.WorkItem(id)
	if err != nil {
		return err
	}
	return rt.lockedItem(item, fn)
}

// lockedCreating is locked for a verb that writes the state whatever it
// decides (advance, force): an item with no spec folder is a new one, whose
// folder is created first, as the original's verbs do.
func (rt *Runtime) lockedCreating(id string, fn func(tx *txn) error) error {
	item, create, err := rt.creating(id)
	if err != nil {
		return err
	}
	if create != nil {
		if item, err = create(); err != nil {
			return err
		}
	}
	return rt.lockedItem(item, fn)
}

// lockedItem is locked for a caller that already described the item.
func (rt *Runtime) lockedItem(item WorkItem, fn func(tx *txn) error) error {
	return rt.withLock(item, func() error {
		st, err := LoadState(rt.Checkout, rt.StateDir(item), item.ID)
		if err != nil {
			return err
		}
		tx := &txn{rt: rt, item: item, st: st}
		defer tx.flushLate()
		return fn(tx)
	})
}
