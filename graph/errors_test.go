package graph

import (
	"errors"
	"fmt"
	"testing"
)

// The package-level errors are built without fmt; they must read and match
// as the fmt.Errorf they replace did.
func TestPackageErrorsAreAsFmtMadeThem(t *testing.T) {
	for _, tc := range []struct {
		got, want error
		is        error
	}{
		{errNone, fmt.Errorf("%w: the none integration makes no outbound calls", ErrIntegrationUnavailable), ErrIntegrationUnavailable},
		{ErrTooMuchRead, fmt.Errorf("the work item's files come to more than %d bytes in all", MaxEvaluationBytes), ErrTooMuchRead},
	} {
		if tc.got.Error() != tc.want.Error() {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
		if !errors.Is(tc.got, tc.is) || !errors.Is(fmt.Errorf("wrapped: %w", tc.got), tc.is) {
			t.Errorf("%q is not %q", tc.got, tc.is)
		}
		if errors.Unwrap(tc.got) != errors.Unwrap(tc.want) {
			t.Errorf("%q unwraps to %v, want %v", tc.got, errors.Unwrap(tc.got), errors.Unwrap(tc.want))
		}
	}
	if _, err := (NoIntegration{}).Call("post", nil); err != errNone {
		t.Errorf("NoIntegration.Call = %v, want errNone", err)
	}
}
