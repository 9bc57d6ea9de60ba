package graphs

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

//go:embed pdlc-work-item-loop.yaml pdlc-pr-loop.yaml pdlc-contribution-loop.yaml pdlc-adhoc-loop.yaml
var loops embed.FS

//go:embed harness-config.default.yaml
var defaultHarnessConfig []byte

// Names lists the shipped loops: the outer work-item loop first, then the
// pull-request loop, the contribution loop and the ad-hoc loop. Callers must
// not modify it.
var Names = []string{
	"pdlc-work-item-loop",
	"pdlc-pr-loop",
	"pdlc-contribution-loop",
	"pdlc-adhoc-loop",
}

// FileName is the file a loop is stored under: name plus ".yaml". It does not
// check that the loop exists.
func FileName(name string) string { return name + ".yaml" }

// Loop returns the YAML source of the shipped loop called name. The returned
// slice is a fresh copy the caller may keep or modify. For a name that is not
// shipped the error wraps fs.ErrNotExist and lists the loops that are.
func Loop(name string) ([]byte, error) {
	if err := checkShipped(name); err != nil {
		return nil, err
	}
	return loops.ReadFile(FileName(name))
}

// DefaultHarnessConfig returns the harness config `the-loop init` writes into
// an adopted repository. The returned slice is a fresh copy.
func DefaultHarnessConfig() []byte {
	return append([]byte(nil), defaultHarnessConfig...)
}

// checkShipped refuses a name that is not a shipped loop, listing the ones that are.
func checkShipped(name string) error {
	if slices.Contains(Names, name) {
		return nil
	}
	return fmt.Errorf("unknown loop %q, want one of %s: %w", name, strings.Join(Names, ", "), fs.ErrNotExist)
}
