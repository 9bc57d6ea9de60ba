package ingress

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// FuzzCheckBoltFile: whatever bytes a queue file holds, the check before
// bbolt maps it ends without a panic, and a file it passes is one bbolt
// can open and read every key of without faulting, which is what the
// check is for.
func FuzzCheckBoltFile(f *testing.F) {
	path := filepath.Join(f.TempDir(), "queue.db")
	queueWithData(f, path, 40)
	sound, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sound)
	f.Add(sound[:len(sound)/2])
	f.Add(sound[:2*os.Getpagesize()])
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 3*os.Getpagesize()))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := checkBoltFile(bytes.NewReader(data), int64(len(data))); err != nil {
			return
		}
		p := filepath.Join(t.TempDir(), "queue.db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		readEverything(t, p)
	})
}

// readEverything opens a queue file the check passed and walks every
// bucket and key, turning a fault in the map into a failure.
func readEverything(t *testing.T, path string) {
	t.Helper()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("the check passed a file bbolt faults on: %v", p)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return // refused is not a fault
	}
	defer db.Close()
	var walk func(b *bolt.Bucket)
	walk = func(b *bolt.Bucket) {
		b.ForEach(func(k, v []byte) error {
			if v == nil {
				if nested := b.Bucket(k); nested != nil {
					walk(nested)
				}
			}
			return nil
		})
	}
	db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
			walk(b)
			return nil
		})
	})
}
