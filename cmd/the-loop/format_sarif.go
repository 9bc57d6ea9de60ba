package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"

	"github.com/the-loop/the-loop/graph"
)

// sarifFormat writes a SARIF 2.1.0 log: one run, the hooks that were
// evaluated as the driver's rules (the-loop/<hook>), and a result per
// finding of every reached node. A node that passes has no result; its
// warnings do.
type sarifFormat struct{}

const sarifSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
	// ColumnKind says how startColumn counts: in characters, as findings do.
	ColumnKind string `json:"columnKind"`
}

// maxSARIFResults is as many results as GitHub's code scanning takes in
// one run; an upload with more is refused whole.
const maxSARIFResults = 25000

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name    string      `json:"name"`
	Version string      `json:"version,omitempty"`
	Rules   []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string      `json:"id"`
	Name             string      `json:"name"`
	ShortDescription sarifText   `json:"shortDescription"`
	Properties       sarifOrigin `json:"properties"`
}

type sarifOrigin struct {
	// Origin is "shipped" for the-loop's own hooks, "repository" for an
	// x- hook the repository declares, "the-loop" for the graph itself.
	Origin string `json:"origin"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string    `json:"level"`
	Message sarifText `json:"message"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          sarifWhere        `json:"properties"`
}

// sarifWhere is which work item and node a result is about, and the
// node's status.
type sarifWhere struct {
	WorkItem string `json:"workItem"`
	Node     string `json:"node"`
	Status   string `json:"status"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

func (sarifFormat) write(out *Output, reports []*graph.StatusReport, view checkView) error {
	rules, index := sarifRules(reports)
	inv := sarifInvocation{ExecutionSuccessful: len(view.Unevaluated) == 0}
	for _, n := range view.Notes {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "note", Message: sarifText{n}})
	}
	for _, f := range view.Unevaluated {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			sarifNotification{Level: "error", Message: sarifText{f.Item + " could not be evaluated: " + f.Err.Error()}})
	}
	results := []sarifResult{}
	left := 0
	for _, r := range reports {
		for _, n := range shown(r) {
			for _, f := range n.Findings {
				if len(results) == maxSARIFResults {
					left++
					continue
				}
				results = append(results, sarifResultOf(r, n, f, index[f.Hook], view.GitHub.Prefix))
			}
		}
	}
	if left > 0 {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "warning",
			Message: sarifText{fmt.Sprintf("%d more finding(s) not written: code scanning takes at most %d results a run", left, maxSARIFResults)}})
	}
	return writeJSON(out, sarifLogOf(view, rules, inv, results))
}

func sarifLogOf(view checkView, rules []sarifRule, inv sarifInvocation, results []sarifResult) sarifLog {
	return sarifLog{
		Schema:  sarifSchema,
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:        sarifTool{Driver: sarifDriver{Name: "the-loop", Version: view.Version, Rules: rules}},
			Invocations: []sarifInvocation{inv},
			Results:     results,
			ColumnKind:  "unicodeCodePoints",
		}},
	}
}

// writeFailure is a log of a run that could not answer: no results, and
// why in the invocation.
func (sarifFormat) writeFailure(out *Output, err error, view checkView) error {
	inv := sarifInvocation{ToolExecutionNotifications: []sarifNotification{{Level: "error", Message: sarifText{"could not run: " + err.Error()}}}}
	return writeJSON(out, sarifLogOf(view, []sarifRule{}, inv, []sarifResult{}))
}

// sarifRules lists, sorted, every hook of the evaluated chains and every
// hook a finding names, and where each is in the list.
func sarifRules(reports []*graph.StatusReport) ([]sarifRule, map[string]int) {
	seen := map[string]bool{}
	for _, r := range reports {
		for _, n := range r.Nodes {
			for _, h := range n.Hooks {
				seen[h.Hook] = true
			}
			for _, f := range n.Findings {
				seen[f.Hook] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for h := range seen {
		names = append(names, h)
	}
	slices.Sort(names)
	rules := make([]sarifRule, len(names))
	index := make(map[string]int, len(names))
	for i, h := range names {
		index[h] = i
		origin, what := "shipped", "the-loop's shipped hook "+h
		switch {
		case graph.IsExtension(h):
			origin, what = "repository", "the repository's own hook "+h
		case h == graph.StateHook:
			origin, what = "the-loop", "the work item's graph state"
		}
		rules[i] = sarifRule{ID: "the-loop/" + h, Name: h, ShortDescription: sarifText{what}, Properties: sarifOrigin{origin}}
	}
	return rules, index
}

var sarifLevels = map[string]string{graph.SeverityError: "error", graph.SeverityWarning: "warning", graph.SeverityNotice: "note"}

func sarifResultOf(r *graph.StatusReport, n graph.NodeReport, f graph.Finding, rule int, prefix string) sarifResult {
	text := findingText(r, f)
	// A finding about no file is about the work item: its spec folder.
	loc := sarifPhysical{ArtifactLocation: sarifArtifact{URI: escapePath(path.Join(prefix, r.Dir)) + "/", URIBaseID: "%SRCROOT%"}}
	if p, ok := repoPath(f.Path); ok {
		loc.ArtifactLocation.URI = escapePath(path.Join(prefix, p))
		if f.Line > 0 {
			loc.Region = &sarifRegion{StartLine: f.Line, StartColumn: f.Column}
		}
	} else if f.Path != "" {
		text += " (" + f.Path + ")"
	}
	level, ok := sarifLevels[f.Severity]
	if !ok {
		level = "note"
	}
	// The same finding on the same item keeps its identity from run to
	// run, wherever its line moves.
	sum := sha256.Sum256([]byte(r.WorkItem + "\x00" + n.Node + "\x00" + f.Hook + "\x00" + f.Path + "\x00" + f.Text))
	return sarifResult{
		RuleID: "the-loop/" + f.Hook, RuleIndex: rule, Level: level, Message: sarifText{text},
		Locations:           []sarifLocation{{PhysicalLocation: loc}},
		PartialFingerprints: map[string]string{"theLoopFinding/v1": hex.EncodeToString(sum[:16])},
		Properties:          sarifWhere{WorkItem: r.WorkItem, Node: n.Node, Status: n.Status},
	}
}
