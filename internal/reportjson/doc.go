// Package reportjson writes the-loop's JSON answers as `--format json`
// prints them: encoding/json's bytes, indented by two spaces with HTML
// left as it is, and check reports written by hand for speed, byte for
// byte what encoding/json would write (see Encoder).
//
// To write one answer, use Marshal. To write a list of reports an
// element at a time, as check --all does, keep one Encoder per list and
// Append each. AppendString and AppendStringKeepHTML are encoding/json's
// string encodings, HTML-safe and not; AppendFloat is its float64's.
//
// The CLI (cmd/the-loop) and the MCP server (channels/mcp) both write
// through it, so a tool's answer is its verb's.
package reportjson
