package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestTheSARIFFormatOnTheDemo(t *testing.T) {
	golden(t, "demo.sarif", demoReport(t, nil, "sarif"))
}

// sarifValidator compiles the SARIF 2.1.0 schema.
func sarifValidator(t *testing.T) *jsonschema.Schema {
	t.Helper()
	schemaFile := filepath.Join("testdata", "sarif-schema-2.1.0.json")
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(sarifSchema, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(sarifSchema)
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

func validSARIF(t *testing.T, schema *jsonschema.Schema, out string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := schema.Validate(inst); err != nil {
		t.Errorf("not SARIF 2.1.0: %v", err)
	}
}

func TestTheSARIFOutputIsValidSARIF210(t *testing.T) {
	schema := sarifValidator(t)
	env, _ := actionsEnv(t)
	for name, env := range map[string]map[string]string{"plain": nil, "actions": env} {
		t.Run(name, func(t *testing.T) { validSARIF(t, schema, demoReport(t, env, "sarif")) })
	}
}

func TestARunThatCouldNotAnswerIsStillValidSARIF(t *testing.T) {
	stdout, _, code := runCLI(t, nil, "check", "--all", "--repo", demo, "--base=-x", "--format", "sarif")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	validSARIF(t, sarifValidator(t), stdout)
	var log sarifLog
	if err := json.Unmarshal([]byte(stdout), &log); err != nil {
		t.Fatal(err)
	}
	inv := log.Runs[0].Invocations[0]
	if inv.ExecutionSuccessful || len(inv.ToolExecutionNotifications) != 1 || !strings.Contains(inv.ToolExecutionNotifications[0].Message.Text, "could not run") {
		t.Errorf("got %+v", inv)
	}
}

func TestSARIFHasNoResultForAPassingNodeButKeepsItsWarning(t *testing.T) {
	var log sarifLog
	if err := json.Unmarshal([]byte(demoReport(t, nil, "sarif")), &log); err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, r := range log.Runs[0].Results {
		if r.Properties.Status == "pass" && r.Level != "warning" {
			t.Errorf("a passing node has a result that is not a warning: %+v", r)
		}
		warned = warned || r.RuleID == "the-loop/x-tests-beside" && r.Level == "warning" && r.Properties.Status == "pass"
	}
	if !warned {
		t.Error("the demo's warning from a passing rule is not a result")
	}
}

func TestAPathIsNeverAURIOfItsOwn(t *testing.T) {
	for p, want := range map[string]string{
		"javascript:alert(1).txt": "javascript%3Aalert%281%29.txt",
		"docs/a b#c?.md":          "docs/a%20b%23c%3F.md",
	} {
		if got := escapePath(p); got != want {
			t.Errorf("%s: got %s, want %s", p, got, want)
		}
	}
}
