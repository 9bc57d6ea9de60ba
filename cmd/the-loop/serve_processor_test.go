package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// TestServesSlackPipelineReadsThroughTheRoutersLink pins serve's wiring to
// the drift guard: the pipeline that classifies Slack replies reads graphs
// through the very link the router drives them through.
func TestServesSlackPipelineReadsThroughTheRoutersLink(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cli.yaml")
	os.WriteFile(cfg, []byte("state:\n  root: "+filepath.Join(dir, "state")+"\nrouting:\n  authorizedUsers: [alice]\nchannels:\n  slack:\n    enabled: true\n    read:\n      mode: events\n    publish: [work-item.reply, gate.feedback]\n"), 0o644)
	t.Setenv("SLACK_SIGNING_SECRET", "shh")
	cli, err := policy.LoadCLIConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServed(eventlog.Discard, cli, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if s.slack == nil || s.slack.Pipeline().Link() != s.router.Link {
		t.Fatal("the Slack pipeline does not read through the router's link")
	}
	if len(s.routes()) != 1 {
		t.Error("the Slack endpoint is not served")
	}
}
