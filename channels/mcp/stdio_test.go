package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	mcpserver "github.com/the-loop/the-loop/channels/mcp"
)

// session writes lines to a server over Stdio, closes its input and
// returns every line it answered, once Run has returned.
func session(t *testing.T, cfg mcpserver.Config, lines ...string) []map[string]any {
	t.Helper()
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := mcpserver.New(cfg).Run(context.Background(), mcpserver.Stdio(in, pw))
		pw.Close()
		done <- err
	}()
	var out []map[string]any
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("the server wrote a line that is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run at EOF: %v, want nil", err)
	}
	return out
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

func TestALineThatIsNoMessageIsAnsweredAndTheSessionGoesOn(t *testing.T) {
	root, config := demo(t, "")
	got := session(t, mcpserver.Config{Repo: root, CLIConfig: config},
		initialize, initialized,
		`not json`,
		`[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`,
		`{"hello":"world"}`,
		`{"jsonrpc":"2.0","id":2,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"graph_status","arguments":{"work_item":"issue-27"}}}`,
	)
	byID := map[float64]map[string]any{}
	var nulls []float64
	for _, m := range got {
		switch id := m["id"].(type) {
		case float64:
			byID[id] = m
		case nil:
			nulls = append(nulls, m["error"].(map[string]any)["code"].(float64))
		}
	}
	if want := []float64{-32700, -32600, -32600}; len(nulls) != 3 || nulls[0] != want[0] || nulls[1] != want[1] || nulls[2] != want[2] {
		t.Errorf("errors with a null id: got codes %v, want %v", nulls, want)
	}
	if _, ok := byID[2]["error"]; !ok {
		t.Errorf("an unknown method: got %v, want a JSON-RPC error", byID[2])
	}
	res, ok := byID[3]["result"].(map[string]any)
	if !ok || res["isError"] == true || !strings.Contains(res["content"].([]any)[0].(map[string]any)["text"].(string), `"currentNode": "design-approval"`) {
		t.Errorf("the call after the bad lines: got %v, want issue-27's status", byID[3])
	}
}

func TestEOFEndsTheSessionOnceEveryRequestIsAnswered(t *testing.T) {
	root, config := demo(t, "")
	lines := []string{initialize, initialized}
	for i := range 8 {
		lines = append(lines, `{"jsonrpc":"2.0","id":`+string(rune('a'-'a'+'2'+i))+`,"method":"tools/call","params":{"name":"list_work_items","arguments":{}}}`)
	}
	got := session(t, mcpserver.Config{Repo: root, CLIConfig: config}, lines...)
	if len(got) != 9 {
		t.Fatalf("got %d answers, want the initialize answer and 8 calls'", len(got))
	}
}
