//go:build !tinygo && ((!appengine && linux) || freebsd || darwin || dragonfly || netbsd || openbsd)

package main

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// helpWidth is the width kong wraps help to when it writes to w, worked
// out as kong's guessWidth does on these systems: $COLUMNS when it is a
// number, else the width of the terminal w is (80 for one that says 0),
// else 80. The build constraint is kong's too.
func helpWidth(w io.Writer) int {
	if cols, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil {
		return cols
	}
	if f, ok := w.(*os.File); ok {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil {
			if ws.Col == 0 {
				return 80
			}
			return int(ws.Col)
		}
	}
	return 80
}
