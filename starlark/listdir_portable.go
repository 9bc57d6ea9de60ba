//go:build !linux

package starlark

// listDir calls visit with the name and kind of each entry of the
// directory at path and returns how many there were. Without the raw
// records Linux gives, it reads os.DirEntry values; openDir refuses a
// symbolic link put where the directory was, where the system can.
func listDir(path string, visit func(name string, kind entryKind)) (int, error) {
	f, err := openDir(path)
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
