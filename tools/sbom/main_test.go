package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// The test binary is a Go binary with build info: its own modules are
// what the document must list.
func selfBinary(t *testing.T) []byte {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTheDocumentListsTheBinarysModulesAndToolchain(t *testing.T) {
	bin := selfBinary(t)
	doc, err := document(bin)
	if err != nil {
		t.Fatal(err)
	}
	var b bom
	if err := json.Unmarshal(doc, &b); err != nil {
		t.Fatal(err)
	}
	bi, _ := debug.ReadBuildInfo()
	if b.BOMFormat != "CycloneDX" || b.SpecVersion != "1.5" || !strings.HasPrefix(b.SerialNumber, "urn:uuid:") {
		t.Errorf("header %q %q %q", b.BOMFormat, b.SpecVersion, b.SerialNumber)
	}
	if b.Metadata.Component.Name != bi.Main.Path || b.Metadata.Component.Hashes[0].Content != sha256Hex(bin) {
		t.Errorf("metadata.component %+v", b.Metadata.Component)
	}
	purls := map[string]bool{}
	for _, c := range b.Components {
		purls[c.PURL] = true
	}
	if !purls["pkg:golang/stdlib@"+bi.GoVersion] {
		t.Errorf("no stdlib@%s component", bi.GoVersion)
	}
	for _, d := range bi.Deps {
		m := d
		if m.Replace != nil {
			m = m.Replace
		}
		if p := "pkg:golang/" + m.Path + "@" + m.Version; !purls[p] {
			t.Errorf("no component %s", p)
		}
	}
	if len(b.Dependencies) != len(b.Components)+1 || len(b.Dependencies[0].DependsOn) != len(b.Components) {
		t.Errorf("dependencies: %d entries, the main one depends on %d; want %d and %d",
			len(b.Dependencies), len(b.Dependencies[0].DependsOn), len(b.Components)+1, len(b.Components))
	}
	again, _ := document(bin)
	if !bytes.Equal(doc, again) {
		t.Errorf("two documents of one binary differ")
	}
}

func TestTheBinaryIsReadFromInsideAReleaseArchive(t *testing.T) {
	bin := selfBinary(t)
	want, err := document(bin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	for name, data := range map[string][]byte{"README.md": []byte("# x\n"), "the-loop": bin} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg})
		tw.Write(data)
	}
	tw.Close()
	zw.Close()
	var zbuf bytes.Buffer
	w := zip.NewWriter(&zbuf)
	f, _ := w.Create("the-loop.exe")
	f.Write(bin)
	w.Close()
	os.WriteFile(filepath.Join(dir, "a_linux_amd64.tar.gz"), tgz.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "a_windows_amd64.zip"), zbuf.Bytes(), 0o644)
	for _, name := range []string{"a_linux_amd64.tar.gz", "a_windows_amd64.zip"} {
		out := filepath.Join(dir, name+".cdx.json")
		var stderr bytes.Buffer
		if code := run([]string{"-o", out, filepath.Join(dir, name)}, nil, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr.String())
		}
		got, _ := os.ReadFile(out)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the document differs from the binary's own", name)
		}
	}
}

func TestAnArchiveWithoutTheBinaryIsRefused(t *testing.T) {
	dir := t.TempDir()
	var zbuf bytes.Buffer
	w := zip.NewWriter(&zbuf)
	f, _ := w.Create("README.md")
	f.Write([]byte("# x\n"))
	w.Close()
	p := filepath.Join(dir, "a.zip")
	os.WriteFile(p, zbuf.Bytes(), 0o644)
	var stderr bytes.Buffer
	if code := run([]string{p}, nil, &stderr); code != 1 || !strings.Contains(stderr.String(), "holds no the-loop") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
