package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoRepository is wrapped by Find when no directory holds a marker.
var ErrNoRepository = errors.New("no repository")

// Find returns the repository holding dir: dir itself or its nearest
// parent in which one of markers (paths such as ".git") exists, in any
// form. A marker that is a broken link or a directory where a file should
// be still marks the root, so that whoever reads it reports it rather than
// the walk passing it by.
func Find(dir string, markers ...string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; {
		for _, m := range markers {
			if _, err := os.Lstat(filepath.Join(d, filepath.FromSlash(m))); err == nil {
				return d, nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%w: neither %s nor any directory above it holds %s", ErrNoRepository, abs, joinOr(markers))
		}
		d = parent
	}
}

func joinOr(ss []string) string {
	switch len(ss) {
	case 0:
		return "a marker"
	case 1:
		return ss[0]
	}
	out := ""
	for i, s := range ss {
		switch {
		case i == len(ss)-1:
			out += " or " + s
		case i > 0:
			out += ", " + s
		default:
			out += s
		}
	}
	return out
}
