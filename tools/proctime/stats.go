//go:build unix

package main

import (
	"slices"
	"time"
)

// median is the middle of ds (the upper middle of an even count); 0 when
// empty.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func minimum(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return slices.Min(ds)
}
