//go:build linux

package repo

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestAnOpenBeneathTheRootIsRetriedWhenTheKernelAsksAndNoMore(t *testing.T) {
	for _, c := range []struct {
		name    string
		answers []error // what each call says; after the last, success
		want    error
		calls   int
	}{
		{"a rename raced a dot-dot once", []error{unix.EAGAIN}, nil, 2},
		{"interrupted, then raced", []error{unix.EINTR, unix.EAGAIN, unix.EINTR}, nil, 4},
		{"a lease that never clears", repeat(unix.EAGAIN, 50), unix.EAGAIN, raceRetries + 1},
		{"not found is an answer", []error{unix.ENOENT}, unix.ENOENT, 1},
		{"outside is an answer", []error{unix.EXDEV}, unix.EXDEV, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			fd, err := retryingOpen(func() (int, error) {
				calls++
				if calls <= len(c.answers) {
					return -1, c.answers[calls-1]
				}
				return 7, nil
			})
			if err != c.want || calls != c.calls || (err == nil) != (fd == 7) {
				t.Errorf("fd %d, err %v after %d calls; want err %v after %d", fd, err, calls, c.want, c.calls)
			}
		})
	}
}

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}
