package eventlog

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzRead holds Read to its contract on any bytes: every record it hands
// over is one JSON object from a whole line, and every non-blank line is
// either a record or counted torn.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		"", "{}\n", `{"a":1}` + "\n" + `{"b`, "\n\n{}\n", `{"a":1}{"b":2}` + "\n", "[1]\n{}", "\x00\x00\n{}\n", "\u00a0{}\n", "\v{}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs int
		torn, err := Read(bytes.NewReader(data), func(rec []byte) error {
			var m map[string]any
			if json.Unmarshal(rec, &m) != nil || m == nil {
				t.Fatalf("handed %q, not a JSON object", rec)
			}
			if bytes.ContainsRune(rec, '\n') {
				t.Fatalf("handed %q, more than a line", rec)
			}
			recs++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.Trim(l, " \t\r")) > 0 {
				lines++
			}
		}
		if recs+torn != lines {
			t.Fatalf("%d records and %d torn of %d non-blank lines in %q", recs, torn, lines, data)
		}
	})
}
