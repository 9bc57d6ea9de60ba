package route_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/policy"
)

// A router is built once from the operator's configuration and processes
// each delivery the ingress accepted; a delivery about a work item nobody
// bound is dropped, and changes nothing.
func Example() {
	state, _ := os.MkdirTemp("", "state")
	defer os.RemoveAll(state)
	config := filepath.Join(state, "cli-config.yaml")
	os.WriteFile(config, []byte("version: \"0.5.0\"\nstate:\n  root: "+state+"\neventLog:\n  enabled: false\nrouting:\n  authorizedUsers: [alice]\n"), 0o600)
	cli, err := policy.LoadCLIConfig(config)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := route.New(route.Config{CLI: cli})
	if err != nil {
		fmt.Println(err)
		return
	}
	body := []byte(`{"action": "created", "repository": {"full_name": "acme/shop"},
		"issue": {"number": 12}, "comment": {"id": 1, "body": "Approved", "created_at": "2026-05-02T10:00:00Z", "user": {"login": "alice"}}}`)
	out, err := r.Process(context.Background(), channels.Delivery{ID: "d-1", Event: "issue_comment", Body: body, Item: channels.ItemOf(body)})
	fmt.Println(out.Routed, out.Reason, out.Fields["work_items"], err)
	// Output: false no-work-item [github:acme/shop#12] <nil>
}
