package github

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeGH puts testdata/gh on PATH as gh, and returns the directory its
// runs are recorded in and answered from (see the script). answers are
// the runs' answers in order: stdout, and optionally "exit N" and stderr
// after a line "---".
func fakeGH(t *testing.T, answers ...string) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("testdata", "gh"))
	if err != nil {
		t.Fatal(err)
	}
	bin, runs := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "gh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_GH_DIR", runs)
	for i, a := range answers {
		n := strconv.Itoa(i + 1)
		out, failure, _ := strings.Cut(a, "---\n")
		os.WriteFile(filepath.Join(runs, "answer."+n), []byte(out), 0o644)
		if code, stderr, ok := strings.Cut(failure, "\n"); ok {
			os.WriteFile(filepath.Join(runs, "exit."+n), []byte(strings.TrimPrefix(code, "exit ")), 0o644)
			os.WriteFile(filepath.Join(runs, "stderr."+n), []byte(stderr), 0o644)
		}
	}
	return runs
}

// run is what fake gh run n was given: its arguments and its stdin.
func run(t *testing.T, runs string, n int) ([]string, string) {
	t.Helper()
	argv, err := os.ReadFile(filepath.Join(runs, "argv."+strconv.Itoa(n)))
	if err != nil {
		t.Fatalf("gh run %d: %v", n, err)
	}
	stdin, _ := os.ReadFile(filepath.Join(runs, "stdin."+strconv.Itoa(n)))
	return strings.Split(strings.TrimSuffix(string(argv), "\n"), "\n"), string(stdin)
}

func cliIntegration(t *testing.T) (*Integration, *waits) {
	t.Helper()
	w := &waits{}
	in, err := New(Options{Transport: TransportCLI, Sleep: w.sleep, Env: env(nil)})
	if err != nil || in.Available() != nil || in.Transport() != TransportCLI {
		t.Fatalf("got %v %v", err, in.Available())
	}
	return in, w
}

var ghHeaders = []string{"-H", "Accept: application/vnd.github+json", "-H", "X-GitHub-Api-Version: 2022-11-28"}

func TestTheCLITransportRunsGhAPIWithTheBodyOnStdin(t *testing.T) {
	runs := fakeGH(t, `{"id": 5, "user": {"login": "me"}, "body": "hi", "created_at": "2026-03-09T10:00:00Z"}`)
	in, _ := cliIntegration(t)
	res, err := in.Call(OpAddComment, map[string]any{"ref": "github:acme/shop#3", "body": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	argv, stdin := run(t, runs, 1)
	want := slices.Concat([]string{"api", "--method", "POST"}, ghHeaders, []string{"--input", "-", "repos/acme/shop/issues/3/comments"})
	if !slices.Equal(argv, want) || stdin != `{"body":"hi\n\n🤖 _the-loop, autonomous comment_\n\u003c!-- the-loop:agent-comment --\u003e\n"}` {
		t.Errorf("gh %q with %q, want gh %q", argv, stdin, want)
	}
	if res["id"] != int64(5) || res["author"] != "me" {
		t.Errorf("result %v", res)
	}
}

func TestTheCLITransportPaginatesAndReadsEveryPage(t *testing.T) {
	runs := fakeGH(t, `{"login": "b"}`, `[{"id": 1, "user": {"login": "a"}, "body": "one", "created_at": "2026-03-09T10:00:00Z"}]`+"\n"+
		`[{"id": 2, "user": {"login": "b"}, "body": "two", "created_at": "2026-03-09T10:01:00Z"}]`)
	in, _ := cliIntegration(t)
	res, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"})
	if err != nil {
		t.Fatal(err)
	}
	cs := res["comments"].([]any)
	if len(cs) != 2 || cs[1].(map[string]any)["author"] != "b" {
		t.Fatalf("comments %v", cs)
	}
	if cs[0].(map[string]any)["self"] != nil || cs[1].(map[string]any)["self"] != true {
		t.Errorf("comments %v: want the second, by gh's own login b, self", cs)
	}
	// gh api user: who gh is logged in as, asked before the listing.
	argv, _ := run(t, runs, 1)
	if want := slices.Concat([]string{"api", "--method", "GET"}, ghHeaders, []string{"user"}); !slices.Equal(argv, want) {
		t.Errorf("gh %q, want %q", argv, want)
	}
	argv, _ = run(t, runs, 2)
	want := slices.Concat([]string{"api", "--method", "GET"}, ghHeaders, []string{"--paginate", "repos/acme/shop/issues/3/comments?per_page=100"})
	if !slices.Equal(argv, want) {
		t.Errorf("gh %q, want %q", argv, want)
	}
}

func TestTheCLITransportAddsLabelsAndSwapsThePhaseLabel(t *testing.T) {
	runs := fakeGH(t, `[{"name": "bug"}, {"name": "loop:requirements"}, {"name": "loop:design"}]`, `[{"name": "bug"}, {"name": "loop:design"}]`)
	in, _ := cliIntegration(t)
	res, err := in.Call(OpSetLabels, map[string]any{"ref": "github:acme/shop#3", "labels": []any{"loop:design"}, "replacePrefix": "loop:"})
	if err != nil || len(res["labels"].([]any)) != 2 {
		t.Fatalf("got %v, %v", res, err)
	}
	argv, stdin := run(t, runs, 1)
	if argv[2] != "POST" || argv[len(argv)-1] != "repos/acme/shop/issues/3/labels" || stdin != `{"labels":["loop:design"]}` {
		t.Errorf("first run: %q %q", argv, stdin)
	}
	argv, _ = run(t, runs, 2)
	if argv[2] != "DELETE" || argv[len(argv)-1] != "repos/acme/shop/issues/3/labels/loop:requirements" {
		t.Errorf("second run: %q", argv)
	}
}

func TestAFailedGhRunIsNamedWithItsStatus(t *testing.T) {
	runs := fakeGH(t, "---\nexit 1\ngh: Not Found (HTTP 404)\n")
	in, w := cliIntegration(t)
	_, err := in.Call(OpListLabels, map[string]any{"ref": "github:acme/shop#9"})
	var ge *Error
	if !errors.As(err, &ge) || ge.Status != 404 {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"github list-labels github:acme/shop#9: GET /repos/acme/shop/issues/9/labels: 404 Not Found", "gh: Not Found (HTTP 404)", "exit status 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if len(w.got()) != 0 {
		t.Error("a 404 was retried")
	}
	if _, err := os.Stat(filepath.Join(runs, "argv.2")); err == nil {
		t.Error("gh ran again")
	}
}

func TestTheCLITransportWaitsOutARateLimitGhReports(t *testing.T) {
	fakeGH(t, "---\nexit 1\ngh: You have exceeded a secondary rate limit. (HTTP 403)\n", `[]`)
	in, w := cliIntegration(t)
	if _, err := in.Call(OpListLabels, map[string]any{"ref": "github:acme/shop#3"}); err != nil {
		t.Fatal(err)
	}
	if got := w.got(); !slices.Equal(got, []time.Duration{time.Minute}) {
		t.Errorf("waited %v", got)
	}
}

func TestAGhThatHangsIsStopped(t *testing.T) {
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "gh"), []byte("#!/bin/sh\nexec sleep 30\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	in, err := New(Options{Transport: TransportCLI, RequestTimeout: 50 * time.Millisecond, Sleep: (&waits{}).sleep})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = in.Call(OpAddComment, map[string]any{"ref": "github:acme/shop#3", "body": "x"})
	if err == nil || !strings.Contains(err.Error(), "gh api did not answer within 50ms") || time.Since(start) > 10*time.Second {
		t.Errorf("got %v after %s", err, time.Since(start))
	}
}

func TestCappedOutputKeepsItsCapWhenCopiedInto(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		c := &capped{max: 1000, quiet: quiet}
		// io.Copy is how os/exec fills a command's Stdout.
		io.Copy(c, strings.NewReader(strings.Repeat("x", 1<<20)))
		if len(c.Bytes()) > 1000 || !c.over {
			t.Errorf("quiet %v: kept %d bytes, over %v; want at most 1000, over", quiet, len(c.Bytes()), c.over)
		}
	}
}
