//go:build !linux

package repo

import (
	"io/fs"
	"os"
)

// beneath is Linux's openat2 fast path; elsewhere every operation goes
// through os.Root.
type beneath struct{}

func openBeneath(string) *beneath { return nil }

func (b *beneath) close() {}

func (b *beneath) read(string, int64, func(int64) []byte) ([]byte, error) { panic("unreachable") }

func (b *beneath) stat(string, bool) (fs.FileInfo, error) { panic("unreachable") }

func (b *beneath) list(string, func(string, Kind)) (int, error) { panic("unreachable") }

func (b *beneath) openLock(string) (*os.File, error) { panic("unreachable") }

func (b *beneath) openFinal(string, int, uint64) (*os.File, error) { panic("unreachable") }

func (b *beneath) listFolder(string, int, func(string, Kind)) (int, error) {
	panic("unreachable")
}
