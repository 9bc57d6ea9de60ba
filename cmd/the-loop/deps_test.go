package main

import (
	"os/exec"
	"strings"
	"testing"
)

// unlinked are packages the binary must not link: each one's package
// initialisation runs in every process that links it, --version included,
// whether or not the verb uses it (see policy/jsonschema.go). Tests may
// import them.
var unlinked = []string{
	"github.com/santhosh-tekuri/jsonschema", // the tests' oracle for policy's validator
	"golang.org/x/text/message",             // its message printer
}

func TestTheBinaryDoesNotLinkStartUpWeight(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for dep := range strings.SplitSeq(string(out), "\n") {
		for _, u := range unlinked {
			if strings.HasPrefix(dep, u) {
				t.Errorf("the-loop links %s", dep)
			}
		}
	}
}
