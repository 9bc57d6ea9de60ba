package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// EventsCmd is `the-loop events`.
type EventsCmd struct {
	WorkItem   []string `name:"work-item" sep:"none" help:"Only records about this work item, such as github:acme/widgets#15 (repeatable: any of them)." placeholder:"REF"`
	Event      []string `name:"event" aliases:"type" sep:"none" help:"Only this event type, or every type of a namespace: graph or graph. selects graph.advanced, graph.parked, ...; a pattern with * ? [ is a glob (repeatable: any of them)." placeholder:"TYPE"`
	Since      string   `help:"Only records written at or after this: an RFC 3339 time, a day (2026-07-22), or a duration before now (30m, 2h, 1d)." placeholder:"WHEN"`
	Until      string   `help:"Only records written before this, as --since takes it." placeholder:"WHEN"`
	Level      string   `help:"Only records of this level or a more severe one: debug, info, warning, error." placeholder:"LEVEL"`
	Source     []string `sep:"none" help:"Only records written by this process: cli or serve (repeatable: any of them)." placeholder:"NAME"`
	DeliveryID []string `name:"delivery-id" sep:"none" help:"Only records about this webhook delivery, its X-GitHub-Delivery id: one delivery from arrival to outcome (repeatable: any of them)." placeholder:"ID"`
	Follow     bool     `short:"f" help:"After the records written so far, print those appended, across the log's rotation, until interrupted."`
	// Departure from the original (docs/compatibility.md#every-match-not-the-last-50): every match is printed; -n stops after the first N.
	MaxRecords int `name:"max-records" short:"n" help:"Stop after printing this many records (0: no limit); with --follow too." placeholder:"N"`
	// Departure from the original (docs/compatibility.md#json-is-json-lines-and-there-is-no-table): text or JSON lines as written; no table, no array.
	Format string `enum:"text,json" default:"text" help:"Output format: text (a line per record) or json (the records as written, a line each)."`
	File   string `type:"path" help:"The log to read (default: the CLI config's eventLog.path, else <state.root>/logs/events.jsonl)." placeholder:"FILE"`
	List   bool   `aliases:"types" help:"Print the catalog of event types and their fields instead (with --event, the types it selects)."`
}

func (c *EventsCmd) Help() string {
	return `events prints the operator's event log: what the-loop did on this machine,
one record a line, oldest first. It reads the log the CLI config names
(eventLog.path, else <state.root>/logs/events.jsonl) and, before it, the
files logrotate rotated it to (events.jsonl-DATE, then events.jsonl.N down
to .1, compressed or not). It reads nothing else: no repository, no
checkout.

The filters narrow what is printed, and a record must pass them all:
--work-item and --event take any of their values; --level keeps that level
and the more severe ones; --since and --until bound when it was written.

--format json prints the records byte for byte as they were written, for
jq or an agent; text prints ts, level, source, event and work item, then
the other fields as key=value. A line that is not a whole record (what a
crash cut short) is skipped and counted on stderr, never an error.

--follow goes on printing records as they are appended, following the log
when it is rotated (renamed or removed and created again, or cut back in
place), until it is interrupted, --until has passed, or it has printed
--max-records.

--list prints the catalog: every event type, its default level, what it
means and the fields its records carry.`
}

// errEnough stops a read that has printed --max-records.
var errEnough = errors.New("enough records")

func (c *EventsCmd) Run(g *Globals, out *Output) error {
	if c.MaxRecords < 0 {
		return fmt.Errorf("--max-records: got %d, want 0 or more", c.MaxRecords)
	}
	if c.List {
		return c.list(out)
	}
	f, err := c.filter(time.Now())
	if err != nil {
		return err
	}
	path := c.File
	if path == "" {
		cli, err := policy.LoadCLIConfig(g.Config)
		if err != nil {
			return err
		}
		path = cli.EventLogPath()
	}
	w := out.raw
	if c.Format == "text" {
		w = out.Stdout
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	printed := 0
	print := func(rec []byte) error {
		if c.Format == "text" {
			bw.WriteString(eventlog.Text(rec))
		} else {
			bw.Write(rec)
		}
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
		if c.Follow {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		if printed++; c.MaxRecords > 0 && printed >= c.MaxRecords {
			return errEnough
		}
		return nil
	}
	var skipped int
	if c.Follow {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		skipped, err = eventlog.Follow(ctx, path, f, 0, print)
	} else {
		if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
			if rotated, _ := eventlog.Rotated(path); len(rotated) == 0 {
				fmt.Fprintf(out.Stderr, "the-loop: no event log at %s yet\n", path)
			}
		}
		skipped, err = eventlog.Query(path, f, print)
	}
	if ferr := bw.Flush(); err == nil || errors.Is(err, errEnough) {
		err = ferr
	}
	if skipped > 0 {
		fmt.Fprintf(out.Stderr, "the-loop: skipped %d unreadable %s\n", skipped, plural(skipped, "line", "lines"))
	}
	return err
}

// filter is the Filter the flags ask for, times relative to now.
func (c *EventsCmd) filter(now time.Time) (eventlog.Filter, error) {
	f := eventlog.Filter{WorkItems: c.WorkItem, Events: c.Event, Level: c.Level, Sources: c.Source, DeliveryIDs: c.DeliveryID}
	for _, b := range []struct {
		flag, value string
		to          *time.Time
	}{{"--since", c.Since, &f.Since}, {"--until", c.Until, &f.Until}} {
		if b.value == "" {
			continue
		}
		t, err := eventlog.ParseTime(b.value, now)
		if err != nil {
			return f, fmt.Errorf("%s: %w", b.flag, err)
		}
		*b.to = t
	}
	if err := f.Validate(); err != nil {
		return f, fmt.Errorf("--%w", err)
	}
	return f, nil
}

// list prints the catalog, or the part of it --event selects.
func (c *EventsCmd) list(out *Output) error {
	f := eventlog.Filter{Events: c.Event}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("--%w", err)
	}
	w := out.raw
	if c.Format == "text" {
		w = out.Stdout
	}
	bw := bufio.NewWriter(w)
	for _, e := range eventlog.Catalog {
		if !f.SelectsEvent(e.Name) {
			continue
		}
		if c.Format == "json" {
			data, err := json.Marshal(e)
			if err != nil {
				return err
			}
			bw.Write(append(data, '\n'))
			continue
		}
		writeCatalogText(bw, e)
	}
	return bw.Flush()
}

// writeCatalogText prints one event type: its name and level, what it
// means, and a line per field.
func writeCatalogText(w io.Writer, e eventlog.EventType) {
	fmt.Fprintf(w, "%s (%s)\n", e.Name, e.Level)
	fmt.Fprintf(w, "    %s\n", e.Description)
	for _, f := range e.Fields {
		if f.Doc == "" {
			fmt.Fprintf(w, "    - %s\n", f.Name)
		} else {
			fmt.Fprintf(w, "    - %s: %s\n", f.Name, f.Doc)
		}
	}
	io.WriteString(w, "\n")
}

// plural is one or many as n asks.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
