package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/the-loop/the-loop/repo"
)

// StateFile is the graph state's file name inside a spec folder.
const StateFile = "graph-state.json"

// LockFile serialises graph-state writers.
const LockFile = "graph-state.lock"

// StateVersion is the newest graph-state format this build understands.
const StateVersion = 1

// timeLayout matches the original's isoformat() of a UTC second.
const timeLayout = "2006-01-02T15:04:05+00:00"

// Timestamp renders t the way graph-state.json records times.
func Timestamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(timeLayout) }

// NodeRecord is what the state remembers about one node.
type NodeRecord struct {
	Attempts  int    `json:"attempts"`
	Outcome   string `json:"outcome"`
	EnteredAt string `json:"enteredAt"`
	ExitedAt  string `json:"exitedAt"`
	LastBlock string `json:"lastBlock"`
	Forced    bool   `json:"forced"`
	// By is who answered a human gate the item left, as the gate read it
	// (the authors of the replies it passed on, comma-separated). The
	// original records no such key; it reads past it, and check names it
	// in a recorded approval it could not verify.
	By string `json:"by,omitempty"`
}

// State is a work item's graph-state.json: where the item is, and what was
// declared or decided on the way. It is a cache, never an authority: check
// --recompute ignores it, and an agent editing it cannot pass a gate.
type State struct {
	Version     int                       `json:"version"`
	WorkItem    string                    `json:"workItem"`
	CurrentNode string                    `json:"currentNode"`
	Nodes       map[string]*NodeRecord    `json:"nodes"`
	Decisions   map[string]any            `json:"decisions"`
	Forced      []map[string]any          `json:"forced"`
	Parked      map[string]any            `json:"parked"`
	Session     map[string]any            `json:"session"`
	Completions map[string]any            `json:"completions"`
	Skips       map[string]map[string]any `json:"skips"`
	OptIns      map[string]map[string]any `json:"optIns"`
	Surface     string                    `json:"surface"`
	Loop        string                    `json:"loop"`

	// extra keeps top-level keys this build does not know, so a rewrite
	// loses nothing another tool recorded.
	extra map[string]json.RawMessage
	// order and added are the key orders Save writes in (stateformat.go).
	order *fileOrder
	added keyOrder
}

// NewState is the state of an item that has not entered the graph.
func NewState(workItem string) *State {
	s := &State{Version: StateVersion, WorkItem: workItem}
	s.normalise()
	return s
}

func (s *State) normalise() {
	if s.Nodes == nil {
		s.Nodes = map[string]*NodeRecord{}
	}
	if s.Decisions == nil {
		s.Decisions = map[string]any{}
	}
	if s.Forced == nil {
		s.Forced = []map[string]any{}
	}
	if s.Completions == nil {
		s.Completions = map[string]any{}
	}
	if s.Skips == nil {
		s.Skips = map[string]map[string]any{}
	}
	if s.OptIns == nil {
		s.OptIns = map[string]map[string]any{}
	}
}

// knownStateKeys are the top-level keys of a graph-state document, in the
// order the reference writes them.
var knownStateKeys = []string{"version", "workItem", "currentNode", "nodes", "decisions", "forced",
	"parked", "session", "completions", "skips", "optIns", "surface", "loop"}

// ParseState decodes a graph-state document. path is used in errors only.
// A document from a newer version, or one whose known keys have the wrong
// shape, is a *StateError: the runtime must not guess at it.
//
// Departure from the original (docs/compatibility.md#a-corrupt-graph-statejson-is-exit-2-and-kept-as-it-is): a state that is no JSON object is an error, not an absent state to rebuild and overwrite.
func ParseState(path string, data []byte, workItem string) (*State, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &StateError{Path: path, Msg: "not a valid graph-state document (want a JSON object)", Err: err}
	}
	if raw == nil {
		return nil, &StateError{Path: path, Msg: "not a valid graph-state document (want a JSON object, got null)"}
	}
	s := &State{Version: StateVersion, WorkItem: workItem}
	if v, ok := raw["version"]; ok {
		var n float64
		if err := json.Unmarshal(v, &n); err != nil || n != float64(int(n)) {
			return nil, &StateError{Path: path, Msg: fmt.Sprintf("version: got %s, want a whole number", v)}
		}
		if int(n) > StateVersion {
			return nil, &StateError{Path: path, Msg: fmt.Sprintf("written by a newer the-loop (state version %d, this build reads up to %d); upgrade the-loop", int(n), StateVersion)}
		}
	}
	// Decode the known keys one at a time so the error names the key.
	type target struct {
		key string
		ptr any
	}
	// The original writes null for an absent parked/session; other keys
	// tolerate null as "empty" too.
	for _, t := range []target{
		{"workItem", &s.WorkItem}, {"currentNode", &s.CurrentNode}, {"nodes", &s.Nodes},
		{"decisions", &s.Decisions}, {"forced", &s.Forced}, {"parked", &s.Parked},
		{"session", &s.Session}, {"completions", &s.Completions}, {"skips", &s.Skips},
		{"optIns", &s.OptIns}, {"surface", &s.Surface}, {"loop", &s.Loop},
	} {
		v, ok := raw[t.key]
		if !ok || string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, t.ptr); err != nil {
			return nil, &StateError{Path: path, Msg: fmt.Sprintf("key %s has the wrong shape", t.key), Err: err}
		}
	}
	for k := range s.Nodes {
		if s.Nodes[k] == nil {
			delete(s.Nodes, k)
		}
	}
	for k, v := range raw {
		if !slices.Contains(knownStateKeys, k) {
			if s.extra == nil {
				s.extra = map[string]json.RawMessage{}
			}
			s.extra[k] = v
		}
	}
	s.Version = StateVersion
	s.order = &fileOrder{data: bytes.Clone(data)}
	s.normalise()
	return s, nil
}

// MaxStateBytes bounds a graph-state file: the original's are a few
// kilobytes, and one that is a sparse file of gigabytes is refused by its
// size before it is read.
const MaxStateBytes = 4 << 20

// LoadState reads the graph state in the checkout directory dir
// (repository-relative). A missing file is a fresh state; one that cannot
// be read (not a regular file, too large, a link out of the checkout) or
// is corrupt is a *StateError naming the file, which is left untouched for
// whoever must look at it.
func LoadState(co *repo.Checkout, dir, workItem string) (*State, error) {
	rel := path.Join(dir, StateFile)
	data, err := co.ReadFile(rel, MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return NewState(workItem), nil
	}
	if err != nil {
		return nil, &StateError{Path: rel, Msg: "cannot be read", Err: repo.Cause(err)}
	}
	return ParseState(rel, data, workItem)
}

// LoadStateIn is LoadState for a read-only evaluation: a state file its
// folder's listing shows is absent is a fresh state without asking, and
// any other is read as LoadState reads it.
func LoadStateIn(files *Files, dir, workItem string) (*State, error) {
	if files.absent("read", path.Join(dir, StateFile)) != nil {
		return NewState(workItem), nil
	}
	return LoadState(files.co, dir, workItem)
}

// MarshalJSON writes the known keys in the original's order, then any keys
// another tool recorded, sorted.
//
// Departure from the original (docs/compatibility.md#keys-the-tool-does-not-know-are-kept): unknown top-level keys are written back, not dropped.
func (s *State) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	write := func(k string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		return nil
	}
	type kv struct {
		k string
		v any
	}
	for _, f := range []kv{
		{"version", s.Version}, {"workItem", s.WorkItem}, {"currentNode", s.CurrentNode},
		{"nodes", s.Nodes}, {"decisions", s.Decisions}, {"forced", s.Forced}, {"parked", s.Parked},
		{"session", s.Session}, {"completions", s.Completions}, {"skips", s.Skips},
		{"optIns", s.OptIns}, {"surface", s.Surface}, {"loop", s.Loop},
	} {
		if err := write(f.k, f.v); err != nil {
			return nil, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.extra)) {
		if err := write(k, s.extra[k]); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Save writes the state atomically into the checkout directory dir: a
// crash leaves either the old file or the new one and never a torn one
// (see repo.Checkout.WriteFile). A state over MaxStateBytes, which
// LoadState would refuse, is a *StateError, and nothing is written.
func (s *State) Save(co *repo.Checkout, dir string) error {
	s.normalise()
	data, err := s.format()
	if err != nil {
		return fmt.Errorf("encode graph state: %w", err)
	}
	rel := path.Join(dir, StateFile)
	if len(data) > MaxStateBytes {
		// LoadState would refuse it, and the item could then never be
		// judged or moved again: the move fails, and the file stays.
		return &StateError{Path: rel, Msg: fmt.Sprintf("not written: the new state is %d bytes, over the %d MiB a state file is read up to; the item stays where the file says", len(data), MaxStateBytes>>20)}
	}
	return co.WriteFile(rel, data, 0o644)
}

// MaxStoredMessage bounds a message the state keeps (lastBlock, a parked
// reason): a hook's 30 MB block message is reported whole, but stored cut.
const MaxStoredMessage = 4 << 10

// storedText is msg as the state keeps it: the checkout's location (which
// error texts may carry) dropped, so the committed file names no machine's
// paths, and cut at MaxStoredMessage on a character boundary.
func storedText(msg, root string) string {
	if root != "" {
		msg = strings.ReplaceAll(msg, root+string(filepath.Separator), "")
		msg = strings.ReplaceAll(msg, root, ".")
	}
	if len(msg) <= MaxStoredMessage {
		return msg
	}
	cut := boundary(msg, MaxStoredMessage)
	return fmt.Sprintf("%s… (%d more bytes not kept)", msg[:cut], len(msg)-cut)
}

// Record returns node's record, creating it.
func (s *State) Record(node string) *NodeRecord {
	r, ok := s.Nodes[node]
	if !ok {
		r = &NodeRecord{}
		s.Nodes[node] = r
		s.noteKey("nodes", node)
	}
	return r
}

func (s *State) enter(node string, now time.Time) {
	r := s.Record(node)
	if r.EnteredAt == "" {
		r.EnteredAt = Timestamp(now)
	}
	r.Attempts++
	s.CurrentNode = node
	s.Parked = nil
}

func (s *State) exit(node, outcome string, now time.Time) {
	r := s.Record(node)
	r.Outcome = outcome
	r.ExitedAt = Timestamp(now)
}

func (s *State) park(node, reason string, now time.Time) {
	s.Parked = map[string]any{"node": node, "reason": reason, "since": Timestamp(now)}
}

// noteBlock records a blocking message and reports whether it repeats the
// previous one: the same finding twice means the agent is not converging.
func (s *State) noteBlock(node, msg string) bool {
	r := s.Record(node)
	repeated := msg != "" && r.LastBlock == msg
	r.LastBlock = msg
	return repeated
}

// clone is a copy of s that a transition may change without changing s:
// everything a transition adds to or replaces is copied, and what it only
// reads (the unknown keys, the key order read from the file) is shared.
// Decisions, skip and opt-in declarations are records a transition adds
// whole and never edits, so their maps are copied one level deep.
func (s *State) clone() *State {
	c := *s
	c.Nodes = make(map[string]*NodeRecord, len(s.Nodes))
	for id, r := range s.Nodes {
		rec := *r
		c.Nodes[id] = &rec
	}
	c.Decisions = maps.Clone(s.Decisions)
	c.Forced = slices.Clone(s.Forced)
	c.Parked = maps.Clone(s.Parked)
	c.Session = maps.Clone(s.Session)
	c.Completions = maps.Clone(s.Completions)
	c.Skips = maps.Clone(s.Skips)
	c.OptIns = maps.Clone(s.OptIns)
	if s.added != nil {
		c.added = make(keyOrder, len(s.added))
		for k, v := range s.added {
			c.added[k] = slices.Clone(v)
		}
	}
	c.normalise()
	return &c
}
