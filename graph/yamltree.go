package graph

import (
	"encoding/binary"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// A YAML tree is a parsed YAML document in a compact binary form: kinds,
// tags, values and positions, nothing else. Parsing YAML is most of the cost
// of compiling a loop, and the shipped loops never change after the build,
// so they are embedded pre-parsed (see graphs/) and compiled from the tree
// by exactly the code that compiles YAML, with the same lines in every error.

const treeMagic = "tl-yaml-tree-1\n"

// EncodeYAMLTree parses src and returns its tree form.
func EncodeYAMLTree(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	out := []byte(treeMagic)
	return appendTree(out, &doc), nil
}

func appendTree(b []byte, n *yaml.Node) []byte {
	if n.Kind == yaml.AliasNode {
		n = n.Alias // a tree has no aliases: the value is inlined
	}
	b = append(b, byte(n.Kind))
	b = binary.AppendUvarint(b, uint64(n.Line))
	b = binary.AppendUvarint(b, uint64(n.Column))
	b = appendString(b, n.Tag)
	b = appendString(b, n.Value)
	b = binary.AppendUvarint(b, uint64(len(n.Content)))
	for _, c := range n.Content {
		b = appendTree(b, c)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadTree = errors.New("not a YAML tree")

// decodeYAMLTree rebuilds the node tree EncodeYAMLTree wrote.
func decodeYAMLTree(data []byte) (*yaml.Node, error) {
	if len(data) < len(treeMagic) || string(data[:len(treeMagic)]) != treeMagic {
		return nil, errBadTree
	}
	d := treeDecoder{data: data[len(treeMagic):]}
	n := d.node(0)
	if d.err != nil || len(d.data) != 0 {
		return nil, fmt.Errorf("%w: truncated or trailing bytes", errBadTree)
	}
	return n, nil
}

type treeDecoder struct {
	data []byte
	err  error
	// tags interns the handful of distinct tags; slab amortises node
	// allocation. Both matter: a loop is a few thousand small nodes.
	tags map[string]string
	slab []yaml.Node
}

func (d *treeDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.err = errBadTree
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *treeDecoder) string() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.data)) {
		d.err = errBadTree
		return ""
	}
	s := string(d.data[:n])
	d.data = d.data[n:]
	return s
}

func (d *treeDecoder) tag() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.data)) {
		d.err = errBadTree
		return ""
	}
	raw := d.data[:n]
	d.data = d.data[n:]
	if t, ok := d.tags[string(raw)]; ok {
		return t
	}
	if d.tags == nil {
		d.tags = map[string]string{}
	}
	t := string(raw)
	d.tags[t] = t
	return t
}

func (d *treeDecoder) node(depth int) *yaml.Node {
	if d.err != nil || len(d.data) == 0 || depth > 256 {
		d.err = errBadTree
		return &yaml.Node{}
	}
	if len(d.slab) == 0 {
		d.slab = make([]yaml.Node, 256)
	}
	n := &d.slab[0]
	d.slab = d.slab[1:]
	n.Kind = yaml.Kind(d.data[0])
	d.data = d.data[1:]
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode, yaml.MappingNode, yaml.ScalarNode:
	default: // aliases are inlined when a tree is written
		d.err = errBadTree
		return n
	}
	n.Line = int(d.uvarint())
	n.Column = int(d.uvarint())
	n.Tag = d.tag()
	n.Value = d.string()
	count := d.uvarint()
	if d.err != nil || count > uint64(len(d.data)) {
		d.err = errBadTree
		return n
	}
	n.Content = make([]*yaml.Node, count)
	for i := range n.Content {
		n.Content[i] = d.node(depth + 1)
	}
	return n
}

// CompileTree compiles a loop from its tree form; file names the YAML it was
// made from, for errors.
func CompileTree(file string, tree []byte, reg Registry) (*Graph, error) {
	doc, err := decodeYAMLTree(tree)
	if err != nil {
		return nil, &ConfigError{File: file, Msg: "cannot read the pre-parsed graph", Err: err}
	}
	return compileDocument(file, doc, reg)
}
