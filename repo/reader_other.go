//go:build !linux

package repo

// dirCursor is Linux's; elsewhere a Reader reads every file the whole
// way, through os.Root.
type dirCursor struct{}

func newDirCursor(*beneath) *dirCursor { panic("unreachable") }

func (*dirCursor) read(string, int64, func(int64) []byte) ([]byte, error, bool) {
	panic("unreachable")
}

func (*dirCursor) close() {}
