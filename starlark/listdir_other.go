//go:build !linux

package starlark

import "os"

// listDir calls visit with the name and kind of each entry of the
// directory at path and returns how many there were. Without the raw
// records Linux gives, it relies on each entry's type, as
// filepath.WalkDir does.
func listDir(path string, visit func(name string, kind entryKind)) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	for _, e := range entries {
		kind := kindOther
		switch {
		case e.IsDir():
			kind = kindDir
		case e.Type().IsRegular():
			kind = kindRegular
		}
		visit(e.Name(), kind)
	}
	return len(entries), err
}
