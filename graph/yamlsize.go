package graph

import "gopkg.in/yaml.v3"

// ExpandedSize is about how many bytes the YAML node n stands for with
// every alias expanded, counting each node it reaches each time it is
// reached but measuring it once, and the first node that takes the total
// past limit (nil when none does). An alias is cheap to write and costs
// its whole target every time it is used, so a few kilobytes of anchors,
// each a list of aliases to the one before, can stand for gigabytes: a
// reader of untrusted YAML asks this before it expands anything.
func ExpandedSize(n *yaml.Node, limit uint64) (uint64, *yaml.Node) {
	return expandedSize(n, limit, map[*yaml.Node]uint64{})
}

func expandedSize(n *yaml.Node, limit uint64, memo map[*yaml.Node]uint64) (uint64, *yaml.Node) {
	if n == nil {
		return 0, nil
	}
	if size, ok := memo[n]; ok {
		return size, nil
	}
	memo[n] = 0 // a cycle costs nothing more
	size := uint64(16 + len(n.Value))
	if n.Kind == yaml.AliasNode {
		target, over := expandedSize(n.Alias, limit, memo)
		if over != nil {
			return target, over
		}
		size += target
	}
	for _, c := range n.Content {
		cs, over := expandedSize(c, limit, memo)
		if over != nil {
			return cs, over
		}
		if size += cs; size > limit {
			return size, c
		}
	}
	if size > limit {
		return size, n
	}
	memo[n] = size
	return size, nil
}
