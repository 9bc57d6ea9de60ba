//go:build tinygo || appengine || (!linux && !freebsd && !darwin && !dragonfly && !netbsd && !openbsd)

package main

import "io"

// helpWidth is the width kong wraps help to: on these systems, always 80.
func helpWidth(io.Writer) int { return 80 }
