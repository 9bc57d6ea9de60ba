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
	Follow     bool     `short:"f" help:"After the records written so far, print those appended, across the log's rotation, until interrupted."`
	MaxRecords int      `name:"max-records" short:"n" help:"Stop after printing this many records (0: no limit); with --follow too." placeholder:"N"`
	Format     string   `enum:"text,json" default:"text" help:"Output format: text (a line per record) or json (the records as written, a line each)."`
	File       string   `type:"path" help:"The log to read (default: the CLI config's eventLog.path, else <state.root>/logs/events.jsonl)." placeholder:"FILE"`
	List       bool     `help:"Print the catalog of event types and their fields instead (with --event, the types it selects)."`
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
place), until it is interrupted or has printed --max-records.

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
			fmt.Fprintf(out.Stderr, "the-loop: no event log at %s yet\n", path)
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
	f := eventlog.Filter{WorkItems: c.WorkItem, Events: c.Event, Level: c.Level}
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

// catalogEntry is one event type as --list --format json prints it.
type catalogEntry struct {
	Name        string         `json:"name"`
	Level       string         `json:"level"`
	Description string         `json:"description"`
	Fields      []catalogField `json:"fields"`
}

type catalogField struct {
	Name string `json:"name"`
	Doc  string `json:"doc,omitempty"`
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
		if len(c.Event) > 0 && !anyMatches(c.Event, e.Name) {
			continue
		}
		if c.Format == "json" {
			entry := catalogEntry{Name: e.Name, Level: e.Level, Description: e.Description}
			for _, fl := range e.Fields {
				entry.Fields = append(entry.Fields, catalogField(fl))
			}
			data, err := json.Marshal(entry)
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

func anyMatches(patterns []string, event string) bool {
	for _, p := range patterns {
		if eventlog.MatchEvent(p, event) {
			return true
		}
	}
	return false
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
