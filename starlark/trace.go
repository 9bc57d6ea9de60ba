package starlark

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

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
	// maxLines and maxBytes bound what is kept; zero is maxPrintLines and
	// maxPrintBytes.
	maxLines, maxBytes int
}

func newPrintLog(maxLines, maxBytes int) *printLog {
	return &printLog{maxLines: maxLines, maxBytes: maxBytes}
}

func (p *printLog) add(thread *sl.Thread, msg string) {
	line := msg
	if thread != nil && thread.CallStackDepth() > 1 {
		line = fmt.Sprintf("%s: %s", thread.CallFrame(1).Pos, msg)
	}
	if len(p.lines) >= cmp.Or(p.maxLines, maxPrintLines) || p.bytes+len(line) > cmp.Or(p.maxBytes, maxPrintBytes) {
		p.dropped++
		return
	}
	p.lines = append(p.lines, line)
	p.bytes += len(line)
}

// kept is what was kept, and a last line saying how much was not.
func (p *printLog) kept() []string {
	out := slices.Clone(p.lines)
	if p.dropped > 0 {
		out = append(out, p.droppedLine())
	}
	return out
}

func (p *printLog) droppedLine() string {
	return fmt.Sprintf("… %d more print() lines were not kept (at most %d lines or %d bytes are)", p.dropped, cmp.Or(p.maxLines, maxPrintLines), cmp.Or(p.maxBytes, maxPrintBytes))
}

// fill writes the call's trace: its prints, steps, and for an error the
// Starlark backtrace.
func (p *printLog) fill(tr *graph.HookTrace, st *callState, err error) {
	tr.Prints = p.kept()
	if st.thread != nil {
		tr.Steps = st.thread.ExecutionSteps()
	}
	var ee *sl.EvalError
	if errors.As(err, &ee) {
		tr.Backtrace = ee.Backtrace()
	}
}
