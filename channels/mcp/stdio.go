package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage bounds one inbound JSON-RPC message, a line.
const MaxMessage = mcp.DefaultMaxLineLength

// Stdio is the transport `the-loop mcp` serves on: newline-delimited
// JSON-RPC read from in and written to out. The SDK's own reader ends the
// session at the first line it cannot decode; this one answers such a
// line with a JSON-RPC error (parse error, or invalid request for a batch
// or a message that is none) and reads on, so that a client's mistake
// never kills the server. The session ends when in does: at EOF, once
// every request read has been answered (a client may write its requests
// and close stdin at once).
//
// Departure from the original (docs/compatibility.md#the-loop-mcp-serves-one-repository-over-stdio): its server is the daemon's, over streamable HTTP.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out, pending: map[jsonrpc.ID]bool{}}
	w.answered = sync.NewCond(&w.mu)
	pr, pw := io.Pipe()
	go func() {
		err := screen(in, pw, w)
		w.drain()
		pw.CloseWithError(err)
	}()
	return &mcp.IOTransport{Reader: pr, Writer: w}
}

// screen copies each line of in that is one JSON-RPC message to pass,
// whole, and answers each other one on out.
func screen(in io.Reader, pass io.Writer, out *lockedWriter) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	over := false // the line has run past MaxMessage: its rest is dropped
	for {
		chunk, err := r.ReadSlice('\n')
		if !over && len(line)+len(chunk) > MaxMessage {
			over, line = true, line[:0]
		}
		if !over {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over {
			if werr := writeError(out, jsonrpc.CodeInvalidRequest, "the message is longer than the-loop reads"); werr != nil {
				return werr
			}
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if code, why := refuse(msg); code != 0 {
				if werr := writeError(out, code, why); werr != nil {
					return werr
				}
			} else {
				if id, ok := isCall(msg); ok {
					out.await(id)
				}
				if _, werr := pass.Write(append(msg, '\n')); werr != nil {
					return werr
				}
			}
		}
		line, over = line[:0], false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// refuse is the JSON-RPC error code for a line that is not one message,
// and why; 0 for one that is.
func refuse(line []byte) (int64, string) {
	switch {
	case !json.Valid(line):
		return jsonrpc.CodeParseError, "the line is not JSON"
	case line[0] == '[':
		return jsonrpc.CodeInvalidRequest, "batches are not supported: send one message a line"
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return jsonrpc.CodeInvalidRequest, "not a JSON-RPC 2.0 message: " + err.Error()
	}
	return 0, ""
}

// isCall is the id of a request that awaits an answer.
func isCall(line []byte) (jsonrpc.ID, bool) {
	msg, err := jsonrpc.DecodeMessage(line)
	if req, ok := msg.(*jsonrpc.Request); err == nil && ok && req.IsCall() {
		return req.ID, true
	}
	return jsonrpc.ID{}, false
}

// writeError writes a JSON-RPC error response with a null id, as the
// specification has for a request whose id could not be read.
func writeError(out io.Writer, code int64, message string) error {
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": message},
	})
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}

// lockedWriter serialises writes: the SDK writes each message in one
// call, and so does screen, so lines never interleave. It also keeps the
// ids of the requests not yet answered.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	pending  map[jsonrpc.ID]bool
	answered *sync.Cond
	failed   bool // a write failed: nothing more will be answered
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) > 0 {
		if msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(p)); err == nil {
			if resp, ok := msg.(*jsonrpc.Response); ok && l.pending[resp.ID] {
				delete(l.pending, resp.ID)
				l.answered.Broadcast()
			}
		}
	}
	n, err := l.w.Write(p)
	if err != nil {
		l.failed = true
		l.answered.Broadcast()
	}
	return n, err
}

// await notes a request the server is to answer.
func (l *lockedWriter) await(id jsonrpc.ID) {
	l.mu.Lock()
	l.pending[id] = true
	l.mu.Unlock()
}

// drain waits until every request noted is answered.
func (l *lockedWriter) drain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) > 0 && !l.failed {
		l.answered.Wait()
	}
}

func (l *lockedWriter) Close() error { return nil }
