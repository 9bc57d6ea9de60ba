// Package corpus builds realistic repositories for benchmarks and
// differential tests: the original Python project's own work items, copied
// as many times as a measurement needs.
//
// The original keeps its 109 work items and its harness directory in its
// own repository; a git mirror of it is on the benchmark machine (never in
// CI). [Load] reads them once from the mirror's HEAD, and [Source.Write]
// lays out a repository of n items named issue-1..issue-n, each a copy of
// one of the 109 in turn, with the workItem field of every graph-state.json
// it carries renamed to match its folder (a state naming another item is
// refused). The text is test data generated at run time: nothing of it is
// committed to this repository.
//
// To write one by hand, see the justfile's corpus recipe.
package corpus

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/repo"
)

// DefaultMirror is where the benchmark machine keeps the git mirror of the
// original project; $THE_LOOP_PY_MIRROR names another copy.
const DefaultMirror = "/work/.mirror/MadaraUchiha-314+the-loop/repo"

// Mirror is the mirror to read: $THE_LOOP_PY_MIRROR, else DefaultMirror.
func Mirror() string {
	if p := os.Getenv("THE_LOOP_PY_MIRROR"); p != "" {
		return p
	}
	return DefaultMirror
}

// ErrNoMirror is wrapped by Load when the mirror or git is not on this
// machine: a caller skips, it does not fail.
var ErrNoMirror = errors.New("no mirror of the original project")

// File is one file of the corpus, its path relative to the work item's
// folder (for an item's files) or to the repository root (for the harness).
type File struct {
	Path string
	Data []byte
}

// Item is one of the original's work items.
type Item struct {
	ID    string
	Files []File
}

// Source is the original's work items, sorted by id, and its .the-loop
// directory. The zero value has no items and writes empty repositories.
type Source struct {
	Items   []Item
	Harness []File
}

// specDir is where the original keeps its work items: its harness config
// leaves workflow.specDir at the default.
const specDir = "docs/specs"

// maxArchive bounds the archive Load reads: the original's items and
// harness come to a few MiB.
const maxArchive = 256 << 20

// Load reads the work items and the harness directory at the mirror's
// HEAD, out of git's object store (`git archive`), so that the mirror's
// working tree, if it has one, does not matter.
func Load(mirror string) (*Source, error) {
	if _, err := os.Stat(mirror); err != nil {
		return nil, fmt.Errorf("%w at %s", ErrNoMirror, mirror)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("%w: git is not installed", ErrNoMirror)
	}
	// Through repo.Git, as every git process the-loop starts: the mirror
	// is bare, named as such, since git finds no bare repository itself.
	out, err := repo.Git(context.Background(), mirror, maxArchive, "--git-dir=.", "archive", "--format=tar", "HEAD", specDir, ".the-loop")
	if err != nil {
		return nil, fmt.Errorf("git archive in %s: %w", mirror, err)
	}
	return read(tar.NewReader(bytes.NewReader(out)))
}

// read collects the regular files of an archive of the original.
func read(tr *tar.Reader) (*Source, error) {
	items := map[string]*Item{}
	s := &Source{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		name := path.Clean(h.Name)
		if rest, ok := strings.CutPrefix(name, specDir+"/"); ok {
			id, rel, inItem := strings.Cut(rest, "/")
			if !inItem {
				continue // the spec root's own files (an index) are no item
			}
			it := items[id]
			if it == nil {
				it = &Item{ID: id}
				items[id] = it
			}
			it.Files = append(it.Files, File{Path: rel, Data: data})
			continue
		}
		s.Harness = append(s.Harness, File{Path: name, Data: data})
	}
	for _, it := range items {
		s.Items = append(s.Items, *it)
	}
	slices.SortFunc(s.Items, func(a, b Item) int { return strings.Compare(a.ID, b.ID) })
	return s, nil
}

// Write lays out at root a repository of n work items, issue-1 to issue-n,
// item k a copy of s.Items[(k-1) % len(s.Items)], and the original's
// .the-loop directory. It writes into root as it is (an existing file of
// the same name is replaced) and runs no git.
func (s *Source) Write(root string, n int) error {
	for _, f := range s.Harness {
		if err := writeFile(filepath.Join(root, filepath.FromSlash(f.Path)), f.Data); err != nil {
			return err
		}
	}
	if n > 0 && len(s.Items) == 0 {
		return errors.New("the corpus has no work items to copy")
	}
	for k := 1; k <= n; k++ {
		src := s.Items[(k-1)%len(s.Items)]
		id := fmt.Sprintf("issue-%d", k)
		dir := filepath.Join(root, filepath.FromSlash(specDir), id)
		for _, f := range src.Files {
			data := f.Data
			if path.Base(f.Path) == "graph-state.json" {
				var err error
				if data, err = renameState(data, src.ID, id); err != nil {
					return fmt.Errorf("%s/%s: %w", src.ID, f.Path, err)
				}
			}
			if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.Path)), data); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteOriginal lays out at root the original's work items under their
// own names, byte for byte (their graph-state.json files are the Python
// tool's own), and its .the-loop directory.
func (s *Source) WriteOriginal(root string) error {
	for _, f := range s.Harness {
		if err := writeFile(filepath.Join(root, filepath.FromSlash(f.Path)), f.Data); err != nil {
			return err
		}
	}
	for _, it := range s.Items {
		for _, f := range it.Files {
			if err := writeFile(filepath.Join(root, filepath.FromSlash(specDir), it.ID, filepath.FromSlash(f.Path)), f.Data); err != nil {
				return err
			}
		}
	}
	return nil
}

// renameState is a state file with its top-level workItem (and the copies
// of it its history records) renamed from one id to another, byte for byte
// otherwise; it fails unless the result names the new id.
func renameState(data []byte, from, to string) ([]byte, error) {
	field := regexp.MustCompile(`("workItem"\s*:\s*)"` + regexp.QuoteMeta(from) + `"`)
	out := field.ReplaceAll(data, []byte(`${1}"`+to+`"`))
	var st struct {
		WorkItem string `json:"workItem"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return nil, err
	}
	if st.WorkItem != to {
		return nil, fmt.Errorf("workItem is %q after renaming, want %q", st.WorkItem, to)
	}
	return out, nil
}

func writeFile(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, data, 0o644)
}

// Markdown is every Markdown file of the work items, by "<item>/<path>",
// as written (front matter included): what the reader benchmarks and the
// differential tests of graph and builtins run over.
func (s *Source) Markdown() map[string]string {
	out := map[string]string{}
	for _, it := range s.Items {
		for _, f := range it.Files {
			if strings.HasSuffix(f.Path, ".md") {
				out[it.ID+"/"+f.Path] = string(f.Data)
			}
		}
	}
	return out
}
