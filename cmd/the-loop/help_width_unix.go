//go:build !tinygo && ((!appengine && linux) || freebsd || darwin || dragonfly || netbsd || openbsd)

package main

import (
	"io"
	"os"
	"strconv"
	"syscall"
	"unsafe"
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
		var dimensions [4]uint16
		if _, _, errno := syscall.Syscall6(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ),
			uintptr(unsafe.Pointer(&dimensions)), 0, 0, 0); errno == 0 {
			if dimensions[1] == 0 {
				return 80
			}
			return int(dimensions[1])
		}
	}
	return 80
}
