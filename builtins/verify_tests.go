package builtins

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/the-loop/the-loop/graph"
)

func init() { register("verify-tests", verifyTests{}) }

const (
	// defaultVerifyTimeoutSeconds bounds a test run when with: sets none.
	defaultVerifyTimeoutSeconds = 900
	// verifyTailLines is how many trailing output lines a failure reports.
	verifyTailLines = 20
	// verifyOutputLimit bounds how much of each output stream is kept.
	verifyOutputLimit = 64 << 10
	// verifyWaitDelay is how long output pipes may outlive the process
	// before they are closed, so a stray grandchild cannot hang the hook.
	verifyWaitDelay = 5 * time.Second
)

// verifyTests runs the node's declared test command and passes when it exits
// 0. It is the only shipped hook that spawns a process, and it never runs
// under check: a read-only evaluation skips it.
//
// The command is with.command. A string is split
// into arguments the way Python's shlex.split does (quotes and backslashes, no
// shell: no pipes, globs or variables); a list is the argument vector as is.
// It runs in the repository root, in its own process group, for at most
// timeoutSeconds; on timeout the whole group is killed.
//
// Outcomes: no command, skip; exit 0, pass; non-zero exit, a retriable block
// naming the command and exit status followed by the last 20 non-empty lines
// of stdout (of stderr when stdout is empty) as info messages; timeout, a
// retriable block naming the limit; a command that cannot start, a
// non-retriable block.
//
// Params: command (string or list of strings), timeoutSeconds (number,
// default 900).
// Data: command (as declared).
type verifyTests struct{}

var (
	_ graph.Hook         = verifyTests{}
	_ graph.ParamChecker = verifyTests{}
)

const verifyTestsName = "verify-tests"

var verifyTestsRules = withRules{"command": withCommand, "timeoutSeconds": withPositive}

func (verifyTests) CheckParams(params map[string]any) error {
	if err := verifyTestsRules.verify(verifyTestsName, params); err != nil {
		return err
	}
	if s, ok := params["command"].(string); ok {
		if _, err := pyShlexSplit(s); err != nil {
			return fmt.Errorf("with.command: %v", err)
		}
	}
	return nil
}

func (verifyTests) Run(ctx *graph.Context) (graph.Result, error) {
	const name = verifyTestsName
	if ctx.ReadOnly {
		return graph.Skip(name, "tests are not run under check"), nil
	}
	declared, argv, err := verifyCommand(ctx)
	if err != nil {
		return graph.Result{}, err
	}
	if len(argv) == 0 {
		return graph.Skip(name, "no test command declared for this node"), nil
	}
	limit, ok := obNumber(ctx.Params["timeoutSeconds"])
	if !ok || limit <= 0 {
		limit = defaultVerifyTimeoutSeconds
	}
	label := fmt.Sprint(declared)
	if list, ok := obStringList(declared); ok {
		label = strings.Join(list, " ")
	}

	run, cancel := context.WithTimeout(context.Background(), time.Duration(limit*float64(time.Second)))
	defer cancel()
	cmd := exec.CommandContext(run, argv[0], argv[1:]...)
	if ctx.Checkout == nil {
		return graph.Result{}, graph.ErrNoCheckout
	}
	cmd.Dir = ctx.Checkout.Root()
	cmd.WaitDelay = verifyWaitDelay
	verifyIsolate(cmd)
	var stdout, stderr verifyTail
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	err = cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case errors.Is(run.Err(), context.DeadlineExceeded):
		// Retriable, as in the reference: a slow run may pass next time.
		return graph.Block(name, graph.Errorf("tests timed out after %ss: %s", strconv.FormatFloat(limit, 'f', -1, 64), label)), nil
	case errors.Is(err, exec.ErrNotFound):
		r := graph.Block(name, graph.Errorf("test command not found: %s", argv[0]))
		r.Retriable = false
		return r, nil
	case errors.As(err, &exitErr):
		msgs := []graph.Message{graph.Errorf("tests failed (%s), exit %d", label, verifyExitCode(exitErr))}
		for _, line := range verifyTailOf(stdout.String(), stderr.String()) {
			msgs = append(msgs, graph.Message{Text: line, Severity: graph.SeverityInfo})
		}
		return graph.Block(name, msgs...), nil
	case err != nil:
		r := graph.Block(name, graph.Errorf("test command could not run: %v", err))
		r.Retriable = false
		return r, nil
	}
	return graph.Pass(name, map[string]any{"command": declared}), nil
}

// verifyCommand resolves with.command to an argument vector; declared is the
// value as written. No command (or an empty one) yields a nil argv.
func verifyCommand(ctx *graph.Context) (declared any, argv []string, err error) {
	switch c := ctx.Params["command"].(type) {
	case nil:
		return nil, nil, nil
	case string:
		argv, err = pyShlexSplit(c)
		if err != nil {
			return nil, nil, fmt.Errorf("with.command: %w", err)
		}
		return c, argv, nil
	default:
		list, ok := obStringList(c)
		if !ok {
			return nil, nil, fmt.Errorf("with.command: got %s, want %s", obRenderValue(c), withCommand.want())
		}
		return c, list, nil
	}
}

// verifyTailOf is the last lines worth reporting: stdout's, or stderr's when
// stdout is blank, without empty lines.
func verifyTailOf(stdout, stderr string) []string {
	out := strings.TrimSpace(stdout)
	if out == "" {
		out = strings.TrimSpace(stderr)
	}
	if out == "" {
		return nil
	}
	lines := strings.Split(out, "\n")
	if len(lines) > verifyTailLines {
		lines = lines[len(lines)-verifyTailLines:]
	}
	var kept []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			kept = append(kept, l)
		}
	}
	return kept
}

// verifyTail keeps the last verifyOutputLimit bytes written to it.
type verifyTail struct{ buf []byte }

func (t *verifyTail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - verifyOutputLimit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *verifyTail) String() string { return string(t.buf) }

// pyShlexSplit splits s into words the way Python's shlex.split does in its
// default POSIX mode: blanks separate words; single quotes keep everything
// literal; double quotes keep everything but a backslash before " or \;
// outside quotes a backslash makes the next character literal; quoted parts
// join adjacent text, and "" is an empty word. There are no comments,
// expansions or operators.
func pyShlexSplit(s string) ([]string, error) {
	var (
		words   []string
		word    strings.Builder
		inWord  bool
		quote   rune // 0, '\'' or '"'
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			if quote == '"' && r != '"' && r != '\\' {
				word.WriteRune('\\')
			}
			word.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				word.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\r' || r == '\n':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case escaped:
		return nil, errors.New("no escaped character after a trailing backslash")
	case quote != 0:
		return nil, errors.New("no closing quotation")
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}
