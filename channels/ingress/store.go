package ingress

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/the-loop/the-loop/channels"
)

// The queue file's buckets. One file holds the queue and the de-duplication
// store so that settling a delivery (its outcome recorded, its id marked,
// its entry removed) is one transaction.
var (
	// bucketQueue maps an acceptance number to an accepted delivery not yet
	// settled. Its keys are the bucket's own sequence, big-endian, so a
	// cursor walks the queue in acceptance order.
	bucketQueue = []byte("queue")
	// bucketIDs maps a delivery id to its record: queued, or processed
	// with its outcome.
	bucketIDs = []byte("ids")
	// bucketSeen maps a settling number to the id settled: the processed
	// ids oldest first, which is the order eviction drops them in.
	bucketSeen = []byte("seen")
	// bucketOutbox maps an acceptance number to the outcome event of a
	// delivery settled but not yet known to be in the event log.
	bucketOutbox = []byte("outbox")
	// bucketMeta holds counters and the file's format.
	bucketMeta = []byte("meta")

	metaSeenCount = []byte("seen-count")
	metaFormat    = []byte("format")
)

// storeFormat is written into a new queue file and checked on open, so a
// file from an incompatible build is refused rather than misread.
const storeFormat = "the-loop-ingress/1"

// States of a delivery id in bucketIDs.
const (
	stateQueued  = "queued"
	stateRouted  = "routed"
	stateDropped = "dropped"
)

// record is what the de-duplication store knows of a delivery id.
type record struct {
	State string `json:"s"`
	// Seq is the delivery's acceptance number.
	Seq uint64 `json:"q"`
	// Seen is its key in bucketSeen once settled.
	Seen   uint64 `json:"n,omitempty"`
	Reason string `json:"r,omitempty"`
}

func (r record) processed() bool { return r.State == stateRouted || r.State == stateDropped }

func getRecord(b *bolt.Bucket, id string) (record, bool, error) {
	v := b.Get([]byte(id))
	if v == nil {
		return record{}, false, nil
	}
	var r record
	if err := json.Unmarshal(v, &r); err != nil {
		return record{}, true, fmt.Errorf("record of delivery %q: %w", id, err)
	}
	return r, true, nil
}

func putRecord(b *bolt.Bucket, id string, r record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return b.Put([]byte(id), v)
}

func seqKey(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func keySeq(k []byte) uint64 {
	if len(k) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(k)
}

// stored is a delivery as the queue keeps it: the Delivery, and what the
// queue read from it once at acceptance.
type stored struct {
	channels.Delivery
	Action string
}

// storedHead is the part of a stored delivery that is not its body.
type storedHead struct {
	ID    string `json:"id"`
	Event string `json:"event"`
	// Channel is the channel the delivery came from, "" for GitHub's
	// webhooks (and every delivery queued before channels were): the
	// processor it is handed to is chosen by it.
	Channel  string    `json:"channel,omitempty"`
	Item     string    `json:"item,omitempty"`
	Action   string    `json:"action,omitempty"`
	Received time.Time `json:"received"`
	// Retries is how many times processing it has failed.
	Retries int `json:"retries,omitempty"`
}

// encodeDelivery lays a delivery out as a length-prefixed JSON head and
// the body's bytes as they came. The body is not re-encoded: encoding/json
// would compact and escape it, and it must stay exactly as signed.
func encodeDelivery(s stored) ([]byte, error) {
	head, err := json.Marshal(storedHead{ID: s.ID, Event: s.Event, Channel: s.Channel, Item: s.Item, Action: s.Action, Received: s.Received, Retries: s.Retries})
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, binary.MaxVarintLen64+len(head)+len(s.Body))
	buf = binary.AppendUvarint(buf, uint64(len(head)))
	buf = append(buf, head...)
	return append(buf, s.Body...), nil
}

// decodeDelivery reverses encodeDelivery. v may be bbolt's memory: the
// result copies what it keeps.
func decodeDelivery(v []byte) (stored, error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)-w) {
		return stored{}, errors.New("queued delivery: bad head length")
	}
	var h storedHead
	if err := json.Unmarshal(v[w:w+int(n)], &h); err != nil {
		return stored{}, fmt.Errorf("queued delivery: %w", err)
	}
	body := append([]byte(nil), v[w+int(n):]...)
	return stored{
		Delivery: channels.Delivery{ID: h.ID, Event: h.Event, Channel: h.Channel, Body: body, Item: h.Item, Received: h.Received, Retries: h.Retries},
		Action:   h.Action,
	}, nil
}

// initStore creates the buckets of a new file and checks the format of an
// old one.
func initStore(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketQueue, bucketIDs, bucketSeen, bucketOutbox, bucketMeta} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	switch f := meta.Get(metaFormat); {
	case f == nil:
		return meta.Put(metaFormat, []byte(storeFormat))
	case string(f) != storeFormat:
		return fmt.Errorf("got format %q, want %q", f, storeFormat)
	}
	return nil
}

// remember marks id processed with its outcome and evicts the oldest
// processed ids past keep. It runs in the transaction that settles the
// delivery.
func remember(tx *bolt.Tx, id string, r record, keep int) error {
	ids, seen, meta := tx.Bucket(bucketIDs), tx.Bucket(bucketSeen), tx.Bucket(bucketMeta)
	n, err := seen.NextSequence()
	if err != nil {
		return err
	}
	r.Seen = n
	if err := seen.Put(seqKey(n), []byte(id)); err != nil {
		return err
	}
	if err := putRecord(ids, id, r); err != nil {
		return err
	}
	count := keySeq(meta.Get(metaSeenCount)) + 1
	for count > uint64(keep) {
		k, v := seen.Cursor().First()
		if k == nil {
			break
		}
		old := string(v)
		// The id may have been forgotten and accepted again since: only
		// the record this entry made is dropped.
		if rec, ok, _ := getRecord(ids, old); ok && rec.processed() && rec.Seen == keySeq(k) {
			if err := ids.Delete(v); err != nil {
				return err
			}
		}
		if err := seen.Delete(k); err != nil {
			return err
		}
		count--
	}
	return meta.Put(metaSeenCount, seqKey(count))
}
