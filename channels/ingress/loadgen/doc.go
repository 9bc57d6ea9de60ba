// Package loadgen puts the webhook ingress under load and checks what it
// did: tools/loadwebhook and the ingress package's benchmark and crash test
// drive it.
//
// [Run] sends a [Config]'s signed issue_comment deliveries to a [Target]
// from several goroutines, each owning some work items and sending an
// item's deliveries one after the other, with a share resending an id
// already answered. With a [Restarter] target it can kill -9 the server
// mid-way and start it again; senders retry what failed, keeping the id, as
// GitHub's redelivery does. It then reads the server's event log and its
// processor's record and reports p50/p99 times to the 202 and to
// processed, and any delivery answered 202 that was not processed, had no
// or several outcome events, or was processed out of its item's order.
//
// The server is the ingress with a processor that records each delivery
// to a file: in this process ([StartInProcess]) or in a child process
// ([StartChild]) that is the same executable started again with an
// environment that makes [IsChild] true, whose main (or TestMain) then
// calls [ChildMain]. Nothing in the-loop's own CLI starts one.
package loadgen
