package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the document to this file (atomically) instead of stdout")
	name := fs.String("binary", "the-loop", "the binary's name inside an archive (.exe is tried too)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sbom [-o file] [-binary name] BINARY|ARCHIVE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	src := fs.Arg(0)
	bin, err := readBinary(src, *name)
	if err != nil {
		fmt.Fprintf(stderr, "sbom: %v\n", err)
		return 1
	}
	doc, err := document(bin)
	if err != nil {
		fmt.Fprintf(stderr, "sbom: %s: %v\n", src, err)
		return 1
	}
	if *out == "" {
		_, err = stdout.Write(doc)
	} else {
		err = writeAtomic(*out, doc)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sbom: %v\n", err)
		return 1
	}
	return 0
}

// maxBinary bounds what is read into memory: the-loop is tens of MB.
const maxBinary = 512 << 20

// readBinary returns the bytes of the binary at p, or of the one named
// name (or name.exe) inside the archive at p.
func readBinary(p, name string) ([]byte, error) {
	switch {
	case strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz"):
		return fromTarGz(p, name)
	case strings.HasSuffix(p, ".zip"):
		return fromZip(p, name)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, p)
}

func readBounded(r io.Reader, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBinary+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if len(b) > maxBinary {
		return nil, fmt.Errorf("%s is over %d bytes", what, maxBinary)
	}
	return b, nil
}

func isBinary(member, name string) bool {
	base := path.Base(member)
	return base == name || base == name+".exe"
}

func fromTarGz(p, name string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s holds no %s", p, name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if h.Typeflag == tar.TypeReg && isBinary(h.Name, name) {
			return readBounded(tr, p+":"+h.Name)
		}
	}
}

func fromZip(p, name string) ([]byte, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !f.Mode().IsRegular() || !isBinary(f.Name, name) {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s:%s: %w", p, f.Name, err)
		}
		defer r.Close()
		return readBounded(r, p+":"+f.Name)
	}
	return nil, fmt.Errorf("%s holds no %s", p, name)
}

func writeAtomic(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".sbom-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

// serial is a urn:uuid derived from the binary's sha256 (version 8,
// "custom", RFC 9562): the same binary, the same document.
func serial(bin []byte) string {
	h := sha256.Sum256(bin)
	u := h[:16]
	u[6] = u[6]&0x0f | 0x80
	u[8] = u[8]&0x3f | 0x80
	x := hex.EncodeToString(u)
	return fmt.Sprintf("urn:uuid:%s-%s-%s-%s-%s", x[0:8], x[8:12], x[12:16], x[16:20], x[20:32])
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
