package repo

import (
	"path"
	"slices"
	"strings"
	"syscall"
)

// Folder is what one directory held when it was listed: the kind of each
// name in it. A caller that asks after many names in one directory (the
// artifacts of a work item, at every node of its loop) asks the kernel
// once, and a name the folder does not hold is answered without a call.
//
// A Folder is a snapshot: a name made after the listing is not in it,
// which for a check of a checkout is the same answer a moment earlier.
// Confinement is not its business. It only ever says a name is absent or
// what kind it is; every read still goes through the checkout.
type Folder struct {
	c     *Checkout
	kinds map[string]Kind
	// prefix is how many bytes the folder adds before a name in the path
	// a lookup asks for: none at the root, "dir/" elsewhere.
	prefix int
}

// maxFolderNames bounds a Folder: a directory of more names than a spec
// folder holds is not kept, and its names are looked up one by one.
const maxFolderNames = 256

// Folder lists the directory rel, or returns nil when a listing cannot
// stand in for lookups: rel does not list (it is missing, not a
// directory, or leads outside), it may be listed but not searched (a
// lookup in it would be refused), it holds more than maxFolderNames (the
// listing stops there), or the checkout is not read through the kernel's
// openat2 (elsewhere an absent name's error is not known without asking).
func (c *Checkout) Folder(rel string) *Folder {
	if c == nil || c.fast == nil || c.mem != nil {
		return nil
	}
	p, err := Clean(rel)
	if err != nil {
		return nil
	}
	kinds := make(map[string]Kind, 8)
	n, err := c.fast.listFolder(p, maxFolderNames, func(name string, kind Kind) {
		kinds[string([]byte(name))] = kind // name is a view of a reused buffer
	})
	if err != nil || n > maxFolderNames {
		return nil
	}
	prefix := 0
	if p != "." {
		prefix = len(p) + 1
	}
	return &Folder{c: c, kinds: kinds, prefix: prefix}
}

// Entries are the folder's names and their kinds, sorted by name, as
// ReadDir lists them.
func (f *Folder) Entries() []Entry {
	out := make([]Entry, 0, len(f.kinds))
	for name, kind := range f.kinds {
		out = append(out, Entry{Name: name, Kind: kind})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// maxNameBytes is the longest name a directory entry may have: a lookup
// of a longer one is refused as too long, which no listing can say.
const maxNameBytes = 255

// maxPathBytes is the longest path the kernel takes (PATH_MAX, 4,096
// bytes, less the NUL that ends it): a longer one is refused as too long,
// whatever the directories on the way hold.
const maxPathBytes = 4095

// Answers reports whether the folder can answer for name: a lookup
// refuses as too long, not as absent, a name no entry could have and a
// path past what the kernel takes, which a folder deep enough meets with
// a name it may well hold.
func (f *Folder) Answers(name string) bool {
	return len(name) <= maxNameBytes && f.prefix+len(name) <= maxPathBytes
}

// Kind is the kind of name in the folder, as listed (a link is
// KindOther); ok is false when the folder holds no such name.
func (f *Folder) Kind(name string) (kind Kind, ok bool) {
	kind, ok = f.kinds[name]
	return kind, ok
}

// Absent is the error op ("stat", "read" or "list") on rel, a path whose
// last element the folder does not hold, would have returned.
func (f *Folder) Absent(op, rel string) error {
	return lookupErr(op, rel, syscall.ENOENT)
}

// SplitClean splits rel into the directory that holds it and its name, as
// the checkout reads it; ok is false for a path the checkout refuses or
// the root itself, which no Folder answers for.
func SplitClean(rel string) (dir, name string, ok bool) {
	p, err := Clean(rel)
	if err != nil || p == "." {
		return "", "", false
	}
	dir, name = path.Split(p)
	if dir == "" {
		return ".", name, true
	}
	return dir[:len(dir)-1], name, true
}
