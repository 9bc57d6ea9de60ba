package main

import (
	"context"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// newProcessor builds what serve hands each accepted delivery to.
//
// replaced by channels/route at merge: until the router exists every
// delivery is dropped as no-work-item, having checked nothing.
func newProcessor(events *eventlog.Log, cli *policy.CLIConfig) (channels.Processor, error) {
	return dropAll{}, nil
}

// dropAll is the stand-in processor. replaced by channels/route at merge.
type dropAll struct{}

func (dropAll) Process(context.Context, channels.Delivery) (channels.Outcome, error) {
	return channels.Outcome{Reason: channels.DropNoWorkItem}, nil
}
