package ingress

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ErrFaulted is a queue whose file faulted under its memory map (changed
// or damaged while serve ran): nothing more is read from it or written to
// it, and Serve stops. The next start checks the file.
var ErrFaulted = errors.New("the queue file faulted: it was damaged or changed while serve ran")

// allocSlack is what bbolt may grow its file by past what it uses: twice
// its allocation step.
const allocSlack = 32 << 20

// maxCheckReports bounds the problems bbolt's check reports that are kept.
const maxCheckReports = 5

// openDB opens the queue file at path for OpenQueue. A file that is
// damaged (see inspectFile, then bbolt's own open and consistency check)
// is renamed beside it, to path.corrupt-<UTC time>, with an error in the
// log and a server.queue_quarantined event, and a new, empty queue is
// opened in its place: serve must keep answering GitHub, and the file is
// kept for the operator to read.
//
// Departure from the original (docs/compatibility.md#ingress-what-one-caller-may-hold-and-a-damaged-queue-file): a damaged queue file is set aside and serve starts empty.
func openDB(path string, opts Options) (*bolt.DB, error) {
	err := inspectFile(path, opts.MaxQueueFile)
	var db *bolt.DB
	if err == nil {
		db, err = openBolt(path)
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, ErrLocked
		}
		if err == nil {
			err = checkBolt(db)
			if err != nil {
				db.Close()
			}
		} else if !errors.As(err, new(*damaged)) && isBoltRefusal(err) {
			err = &damaged{err.Error()}
		}
	}
	if d := (*damaged)(nil); errors.As(err, &d) {
		if err := quarantine(path, d, opts); err != nil {
			return nil, err
		}
		db, err = openBolt(path)
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, ErrLocked
		}
	}
	if err != nil {
		return nil, err
	}
	return db, nil
}

// isBoltRefusal is bbolt refusing a file it read: not bbolt's, of another
// version, or failing its checksums.
func isBoltRefusal(err error) bool {
	return errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrVersionMismatch) ||
		errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrInvalidMapping)
}

// openBolt opens the queue file, a panic or memory fault of bbolt's over a
// damaged file being a *damaged error.
func openBolt(path string) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			db, err = nil, damagef("bbolt could not open it: %v", p)
		}
	}()
	return bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
}

// checkBolt runs bbolt's consistency check over the whole file, which
// inspectFile has already shown to be in bounds: it finds what the walk
// does not (keys out of order, pages leaked or freed twice). Its work is
// bounded by the file's size, which is bounded.
func checkBolt(db *bolt.DB) error {
	var problems []string
	err := db.View(func(tx *bolt.Tx) error {
		// bbolt checks in a goroutine of its own and recovers its panics;
		// every error it sends must be taken, or it blocks.
		for err := range tx.Check() {
			if len(problems) < maxCheckReports {
				problems = append(problems, err.Error())
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return damagef("bbolt's consistency check failed: %v", problems)
	}
	return nil
}

// quarantine renames the damaged file at path beside it and says so,
// loudly: the deliveries it held, answered 202, are not processed unless
// the operator recovers them from it.
func quarantine(path string, d *damaged, opts Options) error {
	dst := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(path, dst); err != nil {
		return fmt.Errorf("the queue file is damaged (%s) and could not be moved aside: %w", d.why, err)
	}
	opts.Logger.Error("THE QUEUE FILE IS DAMAGED: it was moved aside and serve starts with an empty queue; deliveries it held are not processed unless you recover them from it",
		"why", d.why, "moved_to", dst)
	emit(opts, "server.queue_quarantined", map[string]any{"path": path, "moved_to": dst, "why": d.why})
	return nil
}

// guard runs fn, a read or write of the file, with a memory fault under
// bbolt's map made a panic and any panic an error. After one the file and
// bbolt's locks are in a state nobody knows: the queue is marked faulted,
// and nothing touches the file again.
func (q *Queue) guard(fn func() error) (err error) {
	if q.faulted.Load() {
		return ErrFaulted
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrFaulted, p)
			q.fault(err)
		}
	}()
	return fn()
}

func (q *Queue) view(fn func(*bolt.Tx) error) error {
	return q.guard(func() error { return q.db.View(fn) })
}

func (q *Queue) updateDB(fn func(*bolt.Tx) error) error {
	return q.guard(func() error { return q.db.Update(fn) })
}

// fault marks the queue faulted, once: processing stops, and Faulted's
// channel is closed so that Serve stops too.
func (q *Queue) fault(err error) {
	if !q.faulted.CompareAndSwap(false, true) {
		return
	}
	q.opts.Logger.Error("THE QUEUE FILE FAULTED: no delivery is accepted or processed until serve is started again, which checks the file and moves a damaged one aside", "err", err)
	q.sched.stop()
	close(q.faultedCh)
}

func (q *Queue) isFaulted() bool { return q != nil && q.faulted.Load() }

// Faulted is closed once the queue's file has faulted (see ErrFaulted).
func (q *Queue) Faulted() <-chan struct{} { return q.faultedCh }
