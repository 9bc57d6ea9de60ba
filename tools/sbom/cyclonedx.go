package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"net/url"
	"runtime/debug"
	"strings"
)

// The CycloneDX 1.5 JSON shapes this tool writes: the subset of the
// specification's bom-1.5.schema.json that a Go binary's build info fills.
type bom struct {
	BOMFormat    string       `json:"bomFormat"`
	SpecVersion  string       `json:"specVersion"`
	SerialNumber string       `json:"serialNumber"`
	Version      int          `json:"version"`
	Metadata     metadata     `json:"metadata"`
	Components   []component  `json:"components"`
	Dependencies []dependency `json:"dependencies"`
}

type metadata struct {
	Tools     tools     `json:"tools"`
	Component component `json:"component"`
}

type tools struct {
	Components []component `json:"components"`
}

type component struct {
	Type       string     `json:"type"`
	BOMRef     string     `json:"bom-ref,omitempty"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Hashes     []hash     `json:"hashes,omitempty"`
	Properties []property `json:"properties,omitempty"`
}

type hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type dependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn,omitempty"`
}

// document is the CycloneDX JSON for the Go binary bin.
func document(bin []byte) ([]byte, error) {
	bi, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		return nil, fmt.Errorf("read Go build info: %w", err)
	}
	mainMod := bi.Main
	if mainMod.Path == "" { // a command of the Go distribution itself
		mainMod.Path = bi.Path
	}
	main := moduleComponent("application", &mainMod)
	main.Hashes = []hash{{Alg: "SHA-256", Content: sha256Hex(bin)}}
	for _, s := range bi.Settings {
		main.Properties = append(main.Properties, property{Name: "go:build:" + s.Key, Value: s.Value})
	}
	// The standard library is linked in too, at the toolchain's version:
	// its vulnerabilities are the binary's.
	std := component{
		Type:    "library",
		Name:    "stdlib",
		Version: bi.GoVersion,
		PURL:    "pkg:golang/stdlib@" + url.PathEscape(bi.GoVersion),
	}
	std.BOMRef = std.PURL
	comps := []component{std}
	deps := []string{std.BOMRef}
	for _, m := range bi.Deps { // sorted by path, as the linker writes them
		c := moduleComponent("library", m)
		comps = append(comps, c)
		deps = append(deps, c.BOMRef)
	}
	b := bom{
		BOMFormat:    "CycloneDX",
		SpecVersion:  "1.5",
		SerialNumber: serial(bin),
		Version:      1,
		Metadata: metadata{
			Tools:     tools{Components: []component{{Type: "application", Name: "the-loop tools/sbom"}}},
			Component: main,
		},
		Components:   comps,
		Dependencies: []dependency{{Ref: main.BOMRef, DependsOn: deps}},
	}
	for _, c := range comps {
		b.Dependencies = append(b.Dependencies, dependency{Ref: c.BOMRef})
	}
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// moduleComponent describes module m (or what replaces it) as a package
// URL, pkg:golang/PATH@VERSION; the go.sum hash goes in a property, since
// it is a hash of the module's file tree, not of an artifact.
func moduleComponent(typ string, m *debug.Module) component {
	if m.Replace != nil {
		m = m.Replace
	}
	v := m.Version
	if v == "" {
		v = "(devel)"
	}
	c := component{Type: typ, Name: m.Path, Version: v, PURL: purl(m.Path, v)}
	c.BOMRef = c.PURL
	if m.Sum != "" {
		c.Properties = []property{{Name: "go:sum", Value: m.Sum}}
	}
	return c
}

// purl is the package URL of a Go module: each path segment escaped and
// its case kept (Go module paths are case-sensitive); no version for a
// build that has none.
func purl(modPath, version string) string {
	segs := strings.Split(modPath, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	p := "pkg:golang/" + strings.Join(segs, "/")
	if version == "(devel)" {
		return p
	}
	return p + "@" + url.PathEscape(version)
}
