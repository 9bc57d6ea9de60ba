package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

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

// sarifDriver names the tool: version and semanticVersion are the
// build's SemVer (code scanning compares them), fullName what --version
// says.
type sarifDriver struct {
	Name            string      `json:"name"`
	FullName        string      `json:"fullName,omitempty"`
	Version         string      `json:"version"`
	SemanticVersion string      `json:"semanticVersion"`
	InformationURI  string      `json:"informationUri"`
	Rules           []sarifRule `json:"rules"`
}

// sarifRule is a hook as code scanning shows it: what it checks, and
// what to do, from the words docs/hooks.md is made of (hook_docs.go).
type sarifRule struct {
	ID               string      `json:"id"`
	Name             string      `json:"name"`
	ShortDescription sarifText   `json:"shortDescription"`
	FullDescription  sarifText   `json:"fullDescription"`
	Help             sarifHelp   `json:"help"`
	HelpURI          string      `json:"helpUri"`
	Properties       sarifOrigin `json:"properties"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
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
// node's status. ReportOnly is a finding of a hook check ran past its
// stopped chain (--all-findings), which changed no verdict; its level is
// note.
type sarifWhere struct {
	WorkItem string `json:"workItem"`
	// WorkItems are every item the finding is on (at most
	// maxListedItems, WorkItemCount all of them), the first being
	// WorkItem: a finding several items share is one result.
	WorkItems     []string `json:"workItems"`
	WorkItemCount int      `json:"workItemCount"`
	Node          string   `json:"node"`
	Status        string   `json:"status"`
	ReportOnly    bool     `json:"reportOnly,omitempty"`
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

func (sarifFormat) start(out *Output, view checkView) reportWriter {
	return &sarifWriter{out: out, view: view, seen: map[string]bool{}, index: map[findingKey]int{}}
}

// sarifWriter keeps the findings, at most maxSARIFResults of them, and the
// hooks the rule table lists, until finish: the table comes first in the
// log, and a result names its rule by its place in the table. finish then
// writes the log around the results, encoding one at a time.
type sarifWriter struct {
	out      *Output
	view     checkView
	seen     map[string]bool // every hook of the evaluated chains and findings
	findings []sarifFinding
	index    map[findingKey]int // the findings' places, by identity
	left     int                // findings past maxSARIFResults
	// unshown are the repository hooks whose verdict the reports do not
	// show, and why: notifications of the invocation.
	unshown []sarifNotification
}

func (w *sarifWriter) report(r *graph.StatusReport) error {
	for _, n := range r.Nodes {
		for _, h := range n.Hooks {
			w.seen[h.Hook] = true
		}
		for _, f := range n.Findings {
			w.seen[f.Hook] = true
		}
	}
	seen := map[findingKey]int{}
	for _, n := range shown(r) {
		for _, f := range n.Findings {
			// One result for a finding several items share, as the
			// github format has one annotation.
			k := keyOf(f)
			k.nth = seen[k]
			seen[keyOf(f)]++
			if i, ok := w.index[k]; ok {
				w.findings[i].items.add(r.WorkItem, n.Node)
				continue
			}
			if len(w.findings) == maxSARIFResults {
				w.left++
				continue
			}
			w.index[k] = len(w.findings)
			w.findings = append(w.findings, sarifFindingOf(r, n, f, w.view.GitHub.Prefix))
		}
	}
	for _, u := range r.Unshown() {
		w.unshown = append(w.unshown, sarifNotification{Level: "note", Message: sarifText{unshownText(r, u)}})
	}
	return nil
}

func (w *sarifWriter) finish(view checkView) error {
	rules, index := sarifRules(w.seen)
	inv := sarifInvocation{ExecutionSuccessful: len(view.Unevaluated) == 0}
	for _, n := range view.Notes {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "note", Message: sarifText{n}})
	}
	for _, f := range view.Unevaluated {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			sarifNotification{Level: "error", Message: sarifText{f.Item + " could not be evaluated: " + f.Err.Error()}})
	}
	inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, w.unshown...)
	if w.left > 0 {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "warning",
			Message: sarifText{fmt.Sprintf("%d more finding(s) not written: code scanning takes at most %d results a run", w.left, maxSARIFResults)}})
	}
	log := sarifLogOf(view, rules, inv, []sarifResult{})
	if len(w.findings) == 0 {
		return writeJSON(w.out, log)
	}
	// The log with no results, opened where they go: each result is
	// encoded there as the encoder of the whole log would indent it.
	var doc bytes.Buffer
	if err := jsonEncoder(&doc, "").Encode(log); err != nil {
		return err
	}
	const empty = `"results": []`
	at := bytes.Index(doc.Bytes(), []byte(empty))
	if at < 0 {
		return errors.New("sarif: the log has no results array")
	}
	head, tail := doc.Bytes()[:at+len(empty)-1], doc.Bytes()[at+len(empty)-1:]
	if _, err := w.out.raw.Write(jsonSafe(head)); err != nil {
		return err
	}
	const indent = "        " // the results' depth in the log
	var b bytes.Buffer
	enc := jsonEncoder(&b, indent)
	for i, f := range w.findings {
		b.Reset()
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n" + indent)
		if err := enc.Encode(f.result(index[f.hook])); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		if _, err := w.out.raw.Write(jsonSafe(b.Bytes())); err != nil {
			return err
		}
	}
	_, err := w.out.raw.Write(jsonSafe(append([]byte("\n"+indent[2:]), tail...)))
	return err
}

func sarifLogOf(view checkView, rules []sarifRule, inv sarifInvocation, results []sarifResult) sarifLog {
	return sarifLog{
		Schema:  sarifSchema,
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: sarifDriver{Name: "the-loop", FullName: view.Version, Version: semanticVersion(),
				SemanticVersion: semanticVersion(), InformationURI: projectURL, Rules: rules}},
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

// sarifRules lists, sorted, the hooks seen (every hook of the evaluated
// chains and every hook a finding names), and where each is in the list.
func sarifRules(seen map[string]bool) ([]sarifRule, map[string]int) {
	names := make([]string, 0, len(seen))
	for h := range seen {
		names = append(names, h)
	}
	slices.Sort(names)
	rules := make([]sarifRule, len(names))
	index := make(map[string]int, len(names))
	for i, h := range names {
		index[h] = i
		origin := "shipped"
		switch {
		case graph.IsExtension(h):
			origin = "repository"
		case h == graph.StateHook:
			origin = "the-loop"
		}
		a, _ := hookAbout(h)
		url := hookDocURL(h)
		rules[i] = sarifRule{ID: "the-loop/" + h, Name: h,
			ShortDescription: sarifText{a.Summary},
			FullDescription:  sarifText{a.Summary + " " + a.Checks},
			Help: sarifHelp{
				Text:     a.Checks + "\n\nTo fix: " + a.Fix + "\n\nSee " + url,
				Markdown: "**" + h + "**: " + a.Summary + "\n\n" + a.Checks + "\n\n**To fix:** " + a.Fix + "\n\n[More](" + url + ")",
			},
			HelpURI: url, Properties: sarifOrigin{origin}}
	}
	return rules, index
}

var sarifLevels = map[string]string{graph.SeverityError: "error", graph.SeverityWarning: "warning", graph.SeverityNotice: "note"}

// sarifFinding is a result as the log keeps it until the rule table is
// known: its rule by name, and nothing built that encoding can build.
type sarifFinding struct {
	hook, level, text, fingerprint string
	loc                            sarifPhysical
	where                          sarifWhere
	// items are the work items it is on; text is what the hook said
	// and where, the items put in front of it when the result is made.
	items itemList
}

func sarifFindingOf(r *graph.StatusReport, n graph.NodeReport, f graph.Finding, prefix string) sarifFinding {
	text := f.Text
	// A finding about no file is about the work item: it points at the
	// item's first artifact, line 1 (code scanning shows a result only
	// on a file's line), or at its spec folder when it has none.
	loc := sarifPhysical{ArtifactLocation: sarifArtifact{URI: escapePath(path.Join(prefix, r.Dir)) + "/", URIBaseID: "%SRCROOT%"},
		Region: &sarifRegion{StartLine: 1}}
	if r.Artifact != "" {
		loc.ArtifactLocation.URI = escapePath(path.Join(prefix, r.Artifact))
	}
	if p, ok := repoPath(f.Path); ok {
		loc.ArtifactLocation.URI = escapePath(path.Join(prefix, p))
		if f.Line > 0 {
			loc.Region = &sarifRegion{StartLine: f.Line, StartColumn: f.Column}
		}
	} else if f.Path != "" {
		text += " (" + f.Path + ")"
	}
	text += reportOnlyTag(f)
	level, ok := sarifLevels[f.Severity]
	if !ok || f.ReportOnly {
		level = "note"
	}
	// The same finding on the same item keeps its identity from run to
	// run, wherever its line moves.
	sum := sha256.Sum256([]byte(r.WorkItem + "\x00" + n.Node + "\x00" + f.Hook + "\x00" + f.Path + "\x00" + f.Text))
	sf := sarifFinding{hook: f.Hook, level: level, text: text, fingerprint: hex.EncodeToString(sum[:16]), loc: loc,
		where: sarifWhere{WorkItem: r.WorkItem, Node: n.Node, Status: n.Status, ReportOnly: f.ReportOnly}}
	sf.items.add(r.WorkItem, f.Node)
	return sf
}

// result is the finding as the log's result, rule its place in the table.
func (s sarifFinding) result(rule int) sarifResult {
	where := s.where
	where.WorkItems, where.WorkItemCount = s.items.items, s.items.count()
	msg := fmt.Sprintf("%s · %s: %s", s.items, strings.Join(s.items.nodes, ", "), s.text)
	return sarifResult{
		RuleID: "the-loop/" + s.hook, RuleIndex: rule, Level: s.level, Message: sarifText{msg},
		Locations:           []sarifLocation{{PhysicalLocation: s.loc}},
		PartialFingerprints: map[string]string{"theLoopFinding/v1": s.fingerprint},
		Properties:          where,
	}
}
