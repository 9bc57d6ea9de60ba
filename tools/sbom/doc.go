// Command sbom writes a CycloneDX 1.5 software bill of materials for a Go
// binary from the build information the Go linker records in it: the main
// module, every module linked in (after replacements), the Go standard
// library and the build settings (what `go version -m` prints). It reads
// the binary itself or the binary inside a release archive (.tar.gz, .zip),
// so GoReleaser's sboms step can run it on each archive, offline, where
// syft is not installed.
//
//	go run ./tools/sbom -o the-loop_1.2.3_linux_amd64.tar.gz.cdx.json dist/the-loop_1.2.3_linux_amd64.tar.gz
//
// The document is deterministic: no timestamp, and a serial number derived
// from the binary's sha256, so one binary always gets one document.
package main
