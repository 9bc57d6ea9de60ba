package actionrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is one run of the action: what a workflow and a runner supply.
type Config struct {
	ActionPath string            // the action's checkout (GITHUB_ACTION_PATH)
	ActionRef  string            // github.action_ref: a branch, a tag, a commit
	Workspace  string            // GITHUB_WORKSPACE: the repository checked out
	Temp       string            // RUNNER_TEMP
	With       map[string]string // the step's with:
	EventName  string            // GITHUB_EVENT_NAME
	Event      map[string]any    // the event body, written to GITHUB_EVENT_PATH
	SHA        string
	Ref        string // GITHUB_REF
	Repository string // owner/name
	ServerURL  string
	APIURL     string
	Token      string // github.token
	OS, Arch   string // runner.os, runner.arch: Linux, X64 unless set
	// Env is the process environment each step starts from (PATH, HOME,
	// GOCACHE, ...); the runner's variables are set over it. Nil is this
	// process's own, less its GITHUB_* and RUNNER_* variables.
	Env []string
}

// Step is what a run made of one step.
type Step struct {
	Name    string
	Skipped bool // its if: was false, or it is a uses: step
	Code    int  // the script's exit status
	Elapsed time.Duration
}

// Result is the action's outcome.
type Result struct {
	Code    int
	Stdout  string
	Stderr  string
	Summary string
	Steps   []Step
	Elapsed time.Duration
}

type action struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	Author      string         `yaml:"author"`
	Branding    map[string]any `yaml:"branding"`
	Outputs     map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Inputs map[string]struct {
		Description        string `yaml:"description"`
		Required           bool   `yaml:"required"`
		Default            string `yaml:"default"`
		DeprecationMessage string `yaml:"deprecationMessage"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID               string            `yaml:"id"`
			Name             string            `yaml:"name"`
			Uses             string            `yaml:"uses"`
			If               string            `yaml:"if"`
			With             map[string]string `yaml:"with"`
			Shell            string            `yaml:"shell"`
			WorkingDirectory string            `yaml:"working-directory"`
			Env              map[string]string `yaml:"env"`
			Run              string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// Run runs ActionPath/action.yml under c. An error is the emulator's (an
// expression it does not know, a step it cannot start); a step that fails
// is Result.Code.
func Run(ctx context.Context, c Config) (*Result, error) {
	start := time.Now()
	data, err := os.ReadFile(filepath.Join(c.ActionPath, "action.yml"))
	if err != nil {
		return nil, err
	}
	var a action
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("action.yml: %w", err)
	}
	if a.Runs.Using != "composite" {
		return nil, fmt.Errorf("action.yml: runs.using %q, want composite", a.Runs.Using)
	}
	for k := range c.With {
		if _, ok := a.Inputs[k]; !ok {
			return nil, fmt.Errorf("with: %s is not an input of action.yml", k)
		}
	}
	if c.OS == "" {
		c.OS = "Linux"
	}
	if c.Arch == "" {
		c.Arch = "X64"
	}
	eventPath := filepath.Join(c.Temp, "event.json")
	ev, err := json.Marshal(c.Event)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(eventPath, ev, 0o644); err != nil {
		return nil, err
	}
	var event any
	_ = json.Unmarshal(ev, &event)
	github := map[string]any{
		"action_path": c.ActionPath, "action_ref": c.ActionRef, "action_repository": "the-loop/the-loop",
		"event": event, "event_name": c.EventName, "event_path": eventPath,
		"sha": c.SHA, "ref": c.Ref, "repository": c.Repository,
		"repository_owner": strings.Split(c.Repository, "/")[0],
		"server_url":       c.ServerURL, "api_url": c.APIURL, "workspace": c.Workspace, "token": c.Token,
		"base_ref": "", "head_ref": "",
	}
	if pr, ok := c.Event["pull_request"].(map[string]any); ok && strings.HasPrefix(c.EventName, "pull_request") {
		github["base_ref"] = dig(pr, "base", "ref")
		github["head_ref"] = dig(pr, "head", "ref")
	}
	runner := map[string]any{"os": c.OS, "arch": c.Arch, "temp": c.Temp}
	steps := map[string]any{}
	inputs := map[string]any{}
	ev2 := &evaluator{status: "success"}
	ev2.lookup = func(path []string) (value, error) {
		var ctxv map[string]any
		switch path[0] {
		case "inputs":
			ctxv = inputs
		case "github":
			ctxv = github
		case "runner":
			ctxv = runner
		case "steps":
			if len(path) == 4 && path[2] == "outputs" {
				s, _ := steps[path[1]].(map[string]any)
				return s[path[3]], nil
			}
			return nil, fmt.Errorf("steps context: only steps.ID.outputs.NAME is known, got %s", strings.Join(path, "."))
		default:
			return nil, fmt.Errorf("context %q is not one this emulator knows", path[0])
		}
		if len(path) < 2 {
			return nil, fmt.Errorf("%s alone is not a value", path[0])
		}
		v, ok := ctxv[path[1]]
		if !ok {
			return nil, fmt.Errorf("%s.%s is not known", path[0], path[1])
		}
		for _, k := range path[2:] {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		return v, nil
	}
	for name, in := range a.Inputs {
		v, ok := c.With[name]
		if !ok {
			var err error
			if v, err = ev2.expand(in.Default); err != nil {
				return nil, fmt.Errorf("inputs.%s default: %w", name, err)
			}
		}
		inputs[name] = v
	}
	base := c.Env
	if base == nil {
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GITHUB_") && !strings.HasPrefix(kv, "RUNNER_") {
				base = append(base, kv)
			}
		}
	}
	runnerEnv := []string{
		"CI=true", "GITHUB_ACTIONS=true",
		"GITHUB_EVENT_NAME=" + c.EventName, "GITHUB_EVENT_PATH=" + eventPath,
		"GITHUB_WORKSPACE=" + c.Workspace, "GITHUB_SHA=" + c.SHA, "GITHUB_REF=" + c.Ref,
		"GITHUB_REPOSITORY=" + c.Repository, "GITHUB_REPOSITORY_OWNER=" + github["repository_owner"].(string),
		"GITHUB_SERVER_URL=" + c.ServerURL, "GITHUB_API_URL=" + c.APIURL,
		"GITHUB_BASE_REF=" + github["base_ref"].(string), "GITHUB_HEAD_REF=" + github["head_ref"].(string),
		"GITHUB_ACTION_PATH=" + c.ActionPath, "GITHUB_ACTION_REF=" + c.ActionRef,
		"RUNNER_TEMP=" + c.Temp, "RUNNER_OS=" + c.OS, "RUNNER_ARCH=" + c.Arch,
	}
	res := &Result{}
	var stdout, stderr, summary bytes.Buffer
	for i, s := range a.Runs.Steps {
		name := s.Name
		if name == "" {
			name = s.Uses
		}
		ok, err := ev2.condition(s.If)
		if err != nil {
			return nil, fmt.Errorf("step %d (%s) if: %w", i+1, name, err)
		}
		if s.Uses != "" { // evaluated, so that an unknown expression fails, but not run: Go is here
			for k, v := range s.With {
				if _, err := ev2.expand(v); err != nil {
					return nil, fmt.Errorf("step %d (%s) with.%s: %w", i+1, name, k, err)
				}
			}
			res.Steps = append(res.Steps, Step{Name: name, Skipped: true})
			continue
		}
		if !ok {
			res.Steps = append(res.Steps, Step{Name: name, Skipped: true})
			continue
		}
		if s.Shell != "bash" {
			return nil, fmt.Errorf("step %d (%s): shell %q, want bash", i+1, name, s.Shell)
		}
		dir := c.Workspace
		if s.WorkingDirectory != "" {
			wd, err := ev2.expand(s.WorkingDirectory)
			if err != nil {
				return nil, fmt.Errorf("step %d (%s) working-directory: %w", i+1, name, err)
			}
			if !filepath.IsAbs(wd) {
				wd = filepath.Join(c.Workspace, wd)
			}
			dir = wd
		}
		env := append(append([]string{}, base...), runnerEnv...)
		for k, v := range s.Env {
			x, err := ev2.expand(v)
			if err != nil {
				return nil, fmt.Errorf("step %d (%s) env.%s: %w", i+1, name, k, err)
			}
			env = append(env, k+"="+x)
		}
		script, err := ev2.expand(s.Run)
		if err != nil {
			return nil, fmt.Errorf("step %d (%s) run: %w", i+1, name, err)
		}
		stepDir := filepath.Join(c.Temp, fmt.Sprintf("_step%d", i+1))
		if err := os.MkdirAll(stepDir, 0o755); err != nil {
			return nil, err
		}
		out, sum := filepath.Join(stepDir, "output"), filepath.Join(stepDir, "summary")
		for _, f := range []string{out, sum} {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				return nil, err
			}
		}
		scriptPath := filepath.Join(stepDir, "script.sh")
		if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
			return nil, err
		}
		env = append(env, "GITHUB_OUTPUT="+out, "GITHUB_STEP_SUMMARY="+sum)
		// As a runner runs shell: bash.
		cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", scriptPath)
		cmd.Dir, cmd.Env = dir, env
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		t0 := time.Now()
		err = cmd.Run()
		st := Step{Name: name, Elapsed: time.Since(t0)}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			st.Code = exit.ExitCode()
		} else if err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, name, err)
		}
		res.Steps = append(res.Steps, st)
		if b, err := os.ReadFile(sum); err == nil {
			summary.Write(b)
		}
		if s.ID != "" {
			outs, err := readOutputs(out)
			if err != nil {
				return nil, fmt.Errorf("step %d (%s) GITHUB_OUTPUT: %w", i+1, name, err)
			}
			steps[s.ID] = outs
		}
		if st.Code != 0 {
			ev2.status = "failure"
			res.Code = st.Code
		}
	}
	res.Stdout, res.Stderr, res.Summary = stdout.String(), stderr.String(), summary.String()
	res.Elapsed = time.Since(start)
	return res, nil
}

func dig(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}

// readOutputs reads a GITHUB_OUTPUT file: NAME=VALUE lines, and
// NAME<<DELIM ... DELIM blocks.
func readOutputs(path string) (map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	outs := map[string]any{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var lines []string
			for sc.Scan() && sc.Text() != delim {
				lines = append(lines, sc.Text())
			}
			outs[k] = strings.Join(lines, "\n")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			if line == "" {
				continue
			}
			return nil, fmt.Errorf("line %q is neither NAME=VALUE nor NAME<<DELIMITER", line)
		}
		outs[k] = v
	}
	return outs, sc.Err()
}
