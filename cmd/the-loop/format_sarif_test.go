package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestTheSARIFFormatOnTheDemo(t *testing.T) {
	golden(t, "demo.sarif", demoReport(t, nil, "sarif"))
}

func TestTheSARIFOutputIsValidSARIF210(t *testing.T) {
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
	env, _ := actionsEnv(t)
	for name, env := range map[string]map[string]string{"plain": nil, "actions": env} {
		out := demoReport(t, env, "sarif")
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSARIFHasNoResultForAPassingNodeButKeepsItsWarning(t *testing.T) {
	out := demoReport(t, nil, "sarif")
	if !strings.Contains(out, `"ruleId": "the-loop/x-tests-beside"`) || !strings.Contains(out, `"level": "warning"`) {
		t.Errorf("the demo's warning from a passing rule is not a result:\n%s", out)
	}
	if strings.Contains(out, `"kind": "pass"`) || strings.Contains(out, `"status": "pass"`) && !strings.Contains(out, "x-tests-beside") {
		t.Errorf("a passing node has a result of its own")
	}
}
