//go:build linux

package repo

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOnlyFilesystemsTheKernelChecksAreListed(t *testing.T) {
	for _, c := range []struct {
		name  string
		magic int64
		want  bool
	}{
		{"ext4", unix.EXT4_SUPER_MAGIC, true},
		{"xfs", unix.XFS_SUPER_MAGIC, true},
		{"btrfs", unix.BTRFS_SUPER_MAGIC, true},
		{"tmpfs", unix.TMPFS_MAGIC, true},
		{"overlayfs", unix.OVERLAYFS_SUPER_MAGIC, true},
		{"FUSE, whose server may decide each lookup", unix.FUSE_SUPER_MAGIC, false},
		{"NFS", unix.NFS_SUPER_MAGIC, false},
		{"SMB", unix.SMB2_SUPER_MAGIC, false},
		{"9p", unix.V9FS_MAGIC, false},
	} {
		if got := kernelChecked(c.magic); got != c.want {
			t.Errorf("%s: listed %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAFolderIsListedWhereTheKernelChecksLookups keeps the listing from
// being switched off unnoticed where the tests run: a checkout on ext4,
// tmpfs and the like lists its folders.
func TestAFolderIsListedWhereTheKernelChecksLookups(t *testing.T) {
	root := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil || !kernelChecked(st.Type) {
		t.Skipf("the temporary directory is on a filesystem of type %#x, not listed", st.Type)
	}
	if err := os.MkdirAll(filepath.Join(root, "specs", "item"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, dir := range []string{".", "specs", "specs/item"} {
		if c.Folder(dir) == nil {
			t.Errorf("%s was not listed", dir)
		}
	}
}

// TestAFolderOnAnotherFilesystemIsNotListed: the filesystem checked is the
// root's, so a folder on one mounted beneath it is looked up name by name.
func TestAFolderOnAnotherFilesystemIsNotListed(t *testing.T) {
	root := t.TempDir()
	mnt := filepath.Join(root, "specs")
	if err := os.MkdirAll(filepath.Join(mnt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	if err := os.MkdirAll(filepath.Join(mnt, "item"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.fast == nil || !c.fast.lists {
		t.Skip("the root is not listed here")
	}
	for _, dir := range []string{"specs", "specs/item"} {
		if c.Folder(dir) != nil {
			t.Errorf("%s, on another filesystem, was listed", dir)
		}
	}
	if _, err := c.Stat("specs/item"); err != nil {
		t.Errorf("a folder on another filesystem cannot be read: %v", err)
	}
}
