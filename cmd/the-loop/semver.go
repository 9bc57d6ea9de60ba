package main

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// semverRE is SemVer 2.0.0's own grammar (semver.org), without the "v"
// Go's module versions carry.
var semverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// semanticVersion is the build's version as SemVer, which SARIF's
// semanticVersion must be and code scanning compares: the module
// version when it is one (a release, or a pseudo-version), else
// 0.0.0-dev with what names the build (its revision, or the ref the
// action built from) as build metadata.
func semanticVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return semverOf(&debug.BuildInfo{})
	}
	return semverOf(bi)
}

func semverOf(bi *debug.BuildInfo) string {
	if v := strings.TrimPrefix(bi.Main.Version, "v"); semverRE.MatchString(v) {
		return v
	}
	if v := strings.TrimPrefix(buildRef, "v"); semverRE.MatchString(v) {
		return v
	}
	ref := buildRef
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			ref = s.Value
			if len(ref) > 12 {
				ref = ref[:12]
			}
		}
	}
	// Build metadata is dot-separated [0-9A-Za-z-]+ identifiers: a ref
	// such as "feature/x_y" becomes "feature.x-y".
	meta := strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-', r == '.':
			return r
		case r == '/':
			return '.'
		}
		return '-'
	}, ref)
	var ids []string
	for id := range strings.SplitSeq(meta, ".") {
		if id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "0.0.0-dev"
	}
	return "0.0.0-dev+" + strings.Join(ids, ".")
}
