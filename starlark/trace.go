package starlark

import (
	"errors"
	"fmt"

	sl "go.starlark.net/starlark"

	"github.com/the-loop/the-loop/graph"
)

// A traced call keeps at most this much of what it printed: enough to
// debug a rule, bounded for one that prints in a loop.
const (
	maxPrintLines = 10_000
	maxPrintBytes = 1 << 20
)

// printLog is what one traced call printed, each line placed where print
// was called (a nil thread adds a line as it is).
type printLog struct {
	lines   []string
	bytes   int
	dropped int
}

func (p *printLog) add(thread *sl.Thread, msg string) {
	line := msg
	if thread != nil && thread.CallStackDepth() > 1 {
		line = fmt.Sprintf("%s: %s", thread.CallFrame(1).Pos, msg)
	}
	if len(p.lines) >= maxPrintLines || p.bytes+len(line) > maxPrintBytes {
		p.dropped++
		return
	}
	p.lines = append(p.lines, line)
	p.bytes += len(line)
}

// fill writes the call's trace: its prints, steps, and for an error the
// Starlark backtrace.
func (p *printLog) fill(tr *graph.HookTrace, st *callState, err error) {
	tr.Prints = p.lines
	if p.dropped > 0 {
		tr.Prints = append(tr.Prints, fmt.Sprintf("… %d more print() lines were not kept (a traced call keeps %d lines or %d bytes)", p.dropped, maxPrintLines, maxPrintBytes))
	}
	if st.thread != nil {
		tr.Steps = st.thread.ExecutionSteps()
	}
	var ee *sl.EvalError
	if errors.As(err, &ee) {
		tr.Backtrace = ee.Backtrace()
	}
}
