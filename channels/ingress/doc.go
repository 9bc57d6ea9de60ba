// Package ingress is the transport half of `the-loop serve`: it receives
// GitHub webhook deliveries over HTTP, makes each one it accepts durable
// before answering, and hands them to a [channels.Processor] in order per
// work item.
//
// # The pieces
//
//   - [NewHandler] is the http.Handler: POST to the webhook path, GET
//     /healthz. It verifies X-Hub-Signature-256 over the exact bytes of the
//     body (never the SHA-1 header), bounds the body at [MaxBody], refuses a
//     payload that is not application/json, and passes the rest to
//     Queue.Accept. Every refusal is a webhook.rejected event.
//   - [Queue] is the durable queue and the de-duplication store, one bbolt
//     file (QueueFile under the state root). [Queue.Accept] drops an event
//     type not enabled (disabled-event) and an id it knows
//     (duplicate-delivery), and commits the rest, fsync'd, before it
//     returns. [Queue.Run] processes what is queued: one delivery at a time
//     per work item, in acceptance order, Options.Workers at once.
//   - [Serve] wires the two to a listener and shuts down gracefully. It
//     bounds what unknown callers may hold ([Limits]): connections (a full
//     table closes one still sending its head, of the address holding the
//     most), room for bodies being read (claimed by Content-Length; a
//     newcomer cuts the largest claims of the address claiming the most),
//     and the pace of headers and bodies.
//   - [OpenQueue] checks the queue file before bbolt maps it (every page
//     number against the file's end, then bbolt's own consistency check)
//     and renames a damaged one beside it, starting afresh. Every read and
//     write of the file turns a memory fault into [ErrFaulted]: the
//     delivery is answered 500 and Serve stops, never a SIGSEGV.
//
// To run the ingress, use Serve. To test a Processor against it, open a
// Queue on a temporary file, Accept deliveries, and Run it.
//
// # The guarantee
//
// A delivery answered 202 and queued is processed, and gets exactly one
// outcome: a routing.routed or routing.dropped event with its delivery_id,
// however often the process is killed and restarted. The outcome is
// recorded, the id marked processed and the delivery taken out of the queue
// in one transaction; the event is put in an outbox in that same
// transaction and written to the event log right after it; on restart the
// outbox is checked against the log (from the offset it recorded), so a
// line a kill kept out is written and one already there is not. Two
// things fall outside this: a log rotated between the crash and the restart
// cannot be searched, so a line may then be written a second time; and the
// webhook.received of a delivery committed the instant before a kill can
// be missing (its outcome is not).
//
// What the Processor does is at-least-once: a delivery being processed
// when the process dies, or processed and not yet recorded, is processed
// again on restart. A Processor whose effects must not repeat makes them
// idempotent on Delivery.ID; Delivery.Retries and Delivery.Resumed say
// when an earlier attempt may have acted. A Processor error means the
// delivery changed nothing, and it is not lost: it stays queued, ahead of
// its work item's later deliveries, and is processed again after a pause
// that doubles with each failure (Options.RetryBase up to
// Options.RetryMax), each failure counted in the queue file and logged as
// routing.retrying. After Options.MaxTries failures in one run it is
// parked (routing.parked) until the queue is next opened, and its work
// item's later deliveries go on. Only an entry that cannot be read back
// is dropped (routing.dropped, reason processing-failed, its id released
// for a redelivery). A shutdown
// lets deliveries being processed finish (Options.DrainTimeout, then their
// context is cancelled and, if they fail, they stay queued) and leaves the
// rest queued.
//
// The de-duplication store remembers the last Options.Keep processed ids;
// an id forgotten is processed again if it comes back.
package ingress
