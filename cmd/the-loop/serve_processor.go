package main

import (
	"log/slog"
	"os"

	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// newProcessor builds what serve hands each accepted delivery to: the
// router, driving bound work items through the integration the operator's
// config declares (none: the graph still moves, and nothing is posted).
func newProcessor(events *eventlog.Log, cli *policy.CLIConfig, log *slog.Logger) (*route.Router, error) {
	in, err := github.Configured(cli, os.Getenv)
	if err != nil {
		return nil, err
	}
	return route.New(route.Config{CLI: cli, Integration: in, Log: log, Events: events})
}
