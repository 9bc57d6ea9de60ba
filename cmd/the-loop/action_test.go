package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/the-loop/the-loop/channels/github/githubtest"
	"github.com/the-loop/the-loop/internal/actionrun"
	"gopkg.in/yaml.v3"
)

// The GitHub Action (action.yml at the repository root), run step by step
// by the emulated runner of internal/actionrun on a fixture repository
// with a git history: a base branch main, and a pull request branch.

func actionRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// prCheckout makes the fixture's upstream (main: testdata/action/repo.txtar;
// branch: main plus pr's files, one commit), and a workspace cloned from
// it with its whole history and the branch's head checked out, as
// actions/checkout with fetch-depth: 0 leaves it. It returns the
// workspace and the head's sha.
func prCheckout(t *testing.T, branch string, pr map[string]string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	ar, err := txtar.ParseFile(filepath.Join("testdata", "action", "repo.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	up := filepath.Join(t.TempDir(), "upstream")
	base := map[string]string{}
	for _, f := range ar.Files {
		base[f.Name] = string(f.Data)
	}
	writeFiles(t, up, base)
	git(t, up, "init", "-q", "-b", "main")
	git(t, up, "add", ".")
	git(t, up, "commit", "-q", "-m", "base")
	git(t, up, "checkout", "-q", "-b", branch)
	writeFiles(t, up, pr)
	git(t, up, "add", ".")
	git(t, up, "commit", "-q", "-m", "the pull request")
	git(t, up, "checkout", "-q", "main")
	ws := filepath.Join(t.TempDir(), "workspace")
	git(t, filepath.Dir(ws), "clone", "-q", up, ws)
	git(t, ws, "checkout", "-q", "--detach", "origin/"+branch)
	return ws, git(t, ws, "rev-parse", "HEAD")
}

// prEvent is a pull_request event body of the shape octokit's
// pull_request.opened example has, cut to the fields the action reads.
func prEvent(number int, branch, body string) map[string]any {
	return map[string]any{
		"action": "opened",
		"number": number,
		"pull_request": map[string]any{
			"number": number,
			"body":   body,
			"head":   map[string]any{"ref": branch},
			"base":   map[string]any{"ref": "main"},
		},
		"repository": map[string]any{"full_name": "acme/shorty"},
	}
}

func runAction(t *testing.T, c actionrun.Config) *actionrun.Result {
	t.Helper()
	if c.ActionPath == "" {
		c.ActionPath = actionRoot(t)
	}
	if c.Temp == "" {
		c.Temp = t.TempDir()
	}
	if c.EventName == "" {
		c.EventName = "pull_request"
	}
	if c.Repository == "" {
		c.Repository = "acme/shorty"
	}
	if c.ServerURL == "" {
		c.ServerURL = "https://github.com"
	}
	if c.APIURL == "" {
		c.APIURL = "http://127.0.0.1:1" // nothing: a scenario that reads GitHub sets its stand-in
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a cold build on a busy machine
	defer cancel()
	res, err := actionrun.Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s to the verdict; steps: %+v\nstdout:\n%s\nstderr:\n%s", res.Elapsed, res.Steps, res.Stdout, res.Stderr)
	return res
}

// readmeWith is the with: of the-loop's step in the README's GitHub
// Actions workflow: the scenarios run the action as the README tells a
// reader to wire it.
func readmeWith(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(actionRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "**GitHub Actions**")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	block, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no yaml block under **GitHub Actions**")
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(block), &wf); err != nil {
		t.Fatalf("README's workflow: %v", err)
	}
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "the-loop/the-loop@") {
				with := map[string]string{}
				for k, v := range s.With {
					with[k] = v
				}
				return with
			}
		}
	}
	t.Fatal("the README's workflow has no the-loop/the-loop step")
	return nil
}

const longGo = "package x\n// one\n// two\n// three\n// four\n"

// (a) A pull request that rewrites its own rule to pass everything is
// judged by the base branch's rule: caught, exit 1.
func TestTheActionJudgesAPullRequestThatEditsItsOwnRuleByTheBasesRule(t *testing.T) {
	ws, sha := prCheckout(t, "weaken-rule", map[string]string{
		".the-loop/hooks/rules.star":         "hook(\"x-short-files\", lambda ctx: ok())\n",
		"src/long.go":                        longGo,
		"docs/specs/issue-1/requirements.md": "# Requirements\n\nshorter files\n",
	})
	res := runAction(t, actionrun.Config{Workspace: ws, SHA: sha, ActionRef: "main", Event: prEvent(7, "weaken-rule", ""), With: readmeWith(t)})
	if res.Code != 1 {
		t.Errorf("exit %d, want 1 (the base's rule blocks)", res.Code)
	}
	for _, want := range []string{
		"src/long.go has 5 lines; at most 3 are allowed",
		"::notice title=the-loop::this change edits the gate's own files (.the-loop/hooks/rules.star)",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if !strings.Contains(res.Summary, "issue-1") {
		t.Errorf("the job summary does not name issue-1:\n%s", res.Summary)
	}
}

// (b) A code-only pull request that closes #31 from branch issue-31-fix is
// judged by issue-31's gates, and only by its items'.
func TestTheActionJudgesACodeOnlyPullRequestByItsOwnWorkItem(t *testing.T) {
	ws, sha := prCheckout(t, "issue-31-fix", map[string]string{"src/long.go": longGo})
	res := runAction(t, actionrun.Config{Workspace: ws, SHA: sha, ActionRef: "main",
		Event: prEvent(8, "issue-31-fix", "Shorter files.\n\nCloses #31"), With: readmeWith(t)})
	if res.Code != 1 {
		t.Errorf("exit %d, want 1 (issue-31's rule blocks)", res.Code)
	}
	for _, want := range []string{"issue-31", "src/long.go has 5 lines"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.Stdout)
		}
	}
	if strings.Contains(res.Stdout, "issue-32") || strings.Contains(res.Summary, "issue-32") {
		t.Errorf("issue-32 is not this pull request's and was judged")
	}
}

// (c) A pull request on an item whose approval gate has an authorized
// reply on its issue: the action reads the replies through GitHub (the
// stand-in at GITHUB_API_URL) with the job's token, and the gate passes.
func TestTheActionReadsApprovedGatesAsPassWithReplies(t *testing.T) {
	srv := githubtest.NewServer()
	defer srv.Close()
	srv.SetToken("job-token")
	srv.AddIssue("acme/shorty#3", githubtest.Issue{Comments: []githubtest.Comment{
		{Author: "alice", Body: "Approved", CreatedAt: time.Date(2026, 3, 9, 11, 5, 0, 0, time.UTC)},
	}})
	ws, sha := prCheckout(t, "issue-3-wording", map[string]string{
		"docs/specs/issue-3/requirements.md": strings.Replace(readFixture(t, "docs/specs/issue-3/requirements.md"), "answer 410", "answer 410 Gone", 1),
	})
	temp := t.TempDir()
	cfg := filepath.Join(temp, "cli.yaml")
	writeFiles(t, temp, map[string]string{"cli.yaml": "routing:\n  authorizedUsers: [alice]\n"})
	with := readmeWith(t)
	with["fail-on"], with["args"] = "unmet", "--config "+cfg
	res := runAction(t, actionrun.Config{Workspace: ws, SHA: sha, ActionRef: "main", Temp: temp,
		APIURL: srv.URL, Token: "job-token", Event: prEvent(9, "issue-3-wording", ""), With: with})
	if res.Code != 0 {
		t.Errorf("exit %d, want 0 (the approved gate passes with its reply read)", res.Code)
	}
	for _, unwanted := range []string{"no authorized feedback", "not verified"} {
		if strings.Contains(res.Stdout, unwanted) {
			t.Errorf("stdout says %q, though the approval was read:\n%s", unwanted, res.Stdout)
		}
	}
	if len(srv.Calls()) == 0 {
		t.Errorf("the gate passed without a call to the GitHub stand-in")
	}
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "action", "repo.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	t.Fatalf("no %s in repo.txtar", name)
	return ""
}

// --- the release path: action/install.sh against a release laid out as
// GoReleaser lays it out (.goreleaser.yaml), served over HTTP.

var releaseBinary struct {
	once sync.Once
	path string
	err  error
}

// releaseRef is what the test release's binary says in --version: proof
// that the check step ran the downloaded binary and not a build.
const releaseRef = "release-under-test"

func builtReleaseBinary(t *testing.T) string {
	t.Helper()
	releaseBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "the-loop-release")
		if err != nil {
			releaseBinary.err = err
			return
		}
		releaseBinary.path = filepath.Join(dir, "the-loop")
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-X main.buildRef="+releaseRef, "-o", releaseBinary.path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			releaseBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if releaseBinary.err != nil {
		t.Fatal(releaseBinary.err)
	}
	return releaseBinary.path
}

// runnerPlatform is this machine as RUNNER_OS, RUNNER_ARCH, and as
// GoReleaser's os and arch.
func runnerPlatform(t *testing.T) (string, string, string) {
	t.Helper()
	osName := map[string]string{"linux": "Linux", "darwin": "macOS"}[runtime.GOOS]
	arch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		t.Skipf("no release is built for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return osName, arch, runtime.GOOS + "_" + runtime.GOARCH
}

// fakeRelease writes dir/TAG/ as GoReleaser's release for tag: the
// archive the_loop_VERSION_OS_ARCH.tar.gz (the binary and README.md at its
// root) and checksums.txt, "SUM  NAME" per line, sorted by name. edit
// may change checksums.txt's text before it is written.
func fakeRelease(t *testing.T, tag string, edit func(sums string, archive string) string) string {
	t.Helper()
	_, _, plat := runnerPlatform(t)
	bin := builtReleaseBinary(t)
	dir := t.TempDir()
	rel := filepath.Join(dir, tag)
	if err := os.MkdirAll(rel, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := fmt.Sprintf("the-loop_%s_%s.tar.gz", strings.TrimPrefix(tag, "v"), plat)
	f, err := os.Create(filepath.Join(rel, archive))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name string
		mode int64
		data []byte
	}{{"README.md", 0o644, []byte("# the-loop\n")}, {"the-loop", 0o755, data}} {
		if err := tw.WriteHeader(&tar.Header{Name: m.name, Mode: m.mode, Size: int64(len(m.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, zw, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	sum := func(name string) string {
		b, err := os.ReadFile(filepath.Join(rel, name))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}
	// Another platform's archive, as a real release also lists.
	other := fmt.Sprintf("the-loop_%s_windows_arm64.zip", strings.TrimPrefix(tag, "v"))
	sums := fmt.Sprintf("%s  %s\n", sum(archive), archive)
	line := fmt.Sprintf("%s  %s\n", strings.Repeat("0", 64), other)
	if archive < other {
		sums += line
	} else {
		sums = line + sums
	}
	if edit != nil {
		sums = edit(sums, archive)
	}
	if err := os.WriteFile(filepath.Join(rel, "checksums.txt"), []byte(sums), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func serveRelease(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// runInstall runs action/install.sh REF DEST as the action's first step
// does, against the release served at url.
func runInstall(t *testing.T, ref, url string) (dest, stdout, stderr string, code int) {
	t.Helper()
	osName, arch, _ := runnerPlatform(t)
	temp := t.TempDir()
	dest = filepath.Join(temp, "the-loop")
	cmd := exec.Command("bash", filepath.Join(actionRoot(t), "action", "install.sh"), ref, dest)
	cmd.Env = append(os.Environ(), "RUNNER_OS="+osName, "RUNNER_ARCH="+arch, "RUNNER_TEMP="+temp,
		"THE_LOOP_RELEASE_URL="+url, "GITHUB_OUTPUT=")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatal(err)
	}
	return dest, out.String(), errb.String(), code
}

// On a release tag the action downloads the release's archive for the
// runner, verifies it, and runs that binary: no Go build.
func TestTheActionOnAReleaseTagRunsTheVerifiedReleaseBinary(t *testing.T) {
	osName, arch, _ := runnerPlatform(t)
	url := serveRelease(t, fakeRelease(t, "v0.9.0", nil))
	ws, sha := prCheckout(t, "weaken-rule", map[string]string{
		".the-loop/hooks/rules.star": "hook(\"x-short-files\", lambda ctx: ok())\n",
		"src/long.go":                longGo,
	})
	env := append(os.Environ(), "THE_LOOP_RELEASE_URL="+url, "PATH="+os.Getenv("PATH"))
	res := runAction(t, actionrun.Config{Workspace: ws, SHA: sha, ActionRef: "v0.9.0", OS: osName, Arch: arch,
		Event: prEvent(7, "weaken-rule", ""), Env: filterEnv(env)})
	if res.Code != 1 || !strings.Contains(res.Stdout, "src/long.go has 5 lines") {
		t.Errorf("exit %d; want 1 and the base rule's finding", res.Code)
	}
	if !strings.Contains(res.Stdout, "("+releaseRef+")") {
		t.Errorf("--version does not say %s: the check did not run the release binary", releaseRef)
	}
	for _, s := range res.Steps {
		if strings.HasPrefix(s.Name, "Build") && !s.Skipped {
			t.Errorf("step %q ran on a release tag", s.Name)
		}
	}
	if !strings.Contains(res.Stderr, "sha256") || !strings.Contains(res.Stderr, "verified against checksums.txt") {
		t.Errorf("install.sh did not say what it verified")
	}
}

func filterEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GITHUB_") && !strings.HasPrefix(kv, "RUNNER_") {
			out = append(out, kv)
		}
	}
	return out
}

func TestInstallRefusesAnArchiveWhoseChecksumDoesNotMatch(t *testing.T) {
	bad := strings.Repeat("ab", 32)
	var archive, good string
	dir := fakeRelease(t, "v1.2.3", func(sums, a string) string {
		archive = a
		for _, l := range strings.Split(sums, "\n") {
			if strings.HasSuffix(l, "  "+a) {
				good = strings.Fields(l)[0]
				return strings.Replace(sums, l, bad+"  "+a, 1)
			}
		}
		t.Fatal("no line for the archive")
		return ""
	})
	dest, stdout, stderr, code := runInstall(t, "v1.2.3", serveRelease(t, dir))
	if code == 0 {
		t.Fatalf("exit 0 on a checksum that does not match; stdout %q", stdout)
	}
	want := fmt.Sprintf("the-loop: %s: sha256 %s does not match %s in checksums.txt of v1.2.3; refusing to run it\n", archive, good, bad)
	if stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("an unverified binary was put at %s", dest)
	}
	if strings.Contains(stdout, "source=") {
		t.Errorf("stdout %q answers a source after a refusal", stdout)
	}
}

func TestInstallRefusesWhatItCannotVerify(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(sums, archive string) string
		drop bool // the archive itself is missing from the release
		want string
	}{
		{"no line in checksums.txt", func(sums, a string) string {
			var keep []string
			for _, l := range strings.SplitAfter(sums, "\n") {
				if !strings.HasSuffix(l, "  "+a+"\n") {
					keep = append(keep, l)
				}
			}
			return strings.Join(keep, "")
		}, false, "checksums.txt of v1.2.3 has no line for the-loop_1.2.3_"},
		{"no archive", nil, true, "cannot download "},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fakeRelease(t, "v1.2.3", c.edit)
			if c.drop {
				matches, _ := filepath.Glob(filepath.Join(dir, "v1.2.3", "*.tar.gz"))
				for _, m := range matches {
					os.Remove(m)
				}
			}
			dest, _, stderr, code := runInstall(t, "v1.2.3", serveRelease(t, dir))
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want nonzero and %q", code, stderr, c.want)
			}
			if _, err := os.Stat(dest); !os.IsNotExist(err) {
				t.Errorf("a binary was put at %s", dest)
			}
		})
	}
	t.Run("no release at all", func(t *testing.T) {
		_, _, stderr, code := runInstall(t, "v1.2.3", serveRelease(t, t.TempDir()))
		if code == 0 || !strings.Contains(stderr, "cannot download ") || !strings.Contains(stderr, "/v1.2.3/checksums.txt") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// A branch, a commit or a moving major tag has no release: build.
func TestInstallAnswersBuildForARefThatIsNotARelease(t *testing.T) {
	for _, ref := range []string{"main", "v1", "v1.2", "0123456789abcdef0123456789abcdef01234567", "v1.2.3; rm -rf /"} {
		dest, stdout, stderr, code := runInstall(t, ref, "http://127.0.0.1:1")
		if code != 0 || stdout != "source=build\n" || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and source=build", ref, code, stdout, stderr)
		}
		if _, err := os.Stat(dest); !os.IsNotExist(err) {
			t.Errorf("%s: a binary was put at %s", ref, dest)
		}
	}
}
