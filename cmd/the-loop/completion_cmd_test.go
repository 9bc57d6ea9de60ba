package main

import (
	"strconv"
	"testing"
)

func TestTheShellIsAnsweredWhatMayComeNext(t *testing.T) {
	cases := []struct {
		line  string
		point int // COMP_POINT; 0 is the end of the line
		want  string
	}{
		{line: "the-loop gr", want: "graph\n"},
		{line: "the-loop ", want: "check\ncompletion\nconfig\nevents\ngraph\nhooks\ninit\nmcp\nnew\nreply\nserve\nsessions\n"},
		{line: "the-loop graph st", want: "status\n"},
		{line: "the-loop graph st --format json", point: len("the-loop graph st"), want: "status\n"},
		{line: "the-loop check --format ", want: "github\njson\njunit\nsarif\ntable\ntext\n"},
		{line: "the-loop graph status --format ", want: "github\njson\njunit\nmermaid\nsarif\ntable\ntext\n"},
		{line: "the-loop graph show --format ", want: "json\nmermaid\ntext\n"},
		{line: "the-loop check --fail-on ", want: "block\nunmet\n"},
		{line: "the-loop graph show --loop pdlc-p", want: "pdlc-pr-loop\n"},
		{line: "the-loop completion ", want: "bash\nfish\nzsh\n"},
		{line: "the-loop graph status --rec", want: "--recompute\n"},
		{line: "the-loop --ver", want: "--verbose\n--version\n"},
		// work item ids, from the repository the line names
		{line: "the-loop graph status --repo " + demo + " ", want: "issue-12\nissue-21\nissue-27\nissue-31\n"},
		{line: "the-loop --repo=" + demo + " check issue-2", want: "issue-21\nissue-27\n"},
		{line: "the-loop graph advance -v --repo " + demo + " --pr 3 issue-3", want: "issue-31\n"},
		// past the item there is nothing more to name
		{line: "the-loop graph status --repo " + demo + " issue-21 ", want: ""},
		// no repository, no items, and no error either
		{line: "the-loop graph status --repo " + t.TempDir() + "/none ", want: ""},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			env := map[string]string{"COMP_LINE": c.line}
			if c.point > 0 {
				env["COMP_POINT"] = strconv.Itoa(c.point)
			}
			// bash runs the completer with the command, the word and the
			// word before it; none of them is a command line to parse.
			stdout, stderr, code := runCLI(t, env, "the-loop", "x", "y")
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if stdout != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", stdout, c.want)
			}
		})
	}
}
