package citron

import "sort"

// splitRange is step 1: choose at most k nodes of a tree of height h that together cover
// [l, r) (inside the tree) and minimize the covered but unrequested units, counting leaves as
// exact (their masks lock only the requested bits). The paper formulates this as a tree knapsack
// solved in O(k^2 log N) but does not give the algorithm; this is a memoized dynamic program over
// the at most two partially covered nodes per level: a node inside [l, r), and a leaf, is best
// locked as one node; a partial internal node either is locked whole or splits its budget over
// its intersecting children. Ties go to fewer nodes, then to the higher split (deterministic).
// The result is in ascending order of left boundary (the global lock order).
func splitRange(h int, l, r uint64, k int) []node {
	s := splitter{h: h, l: l, r: r, memo: map[splitKey]cover{}}
	c, ok := s.best(node{0, 0}, k)
	if !ok {
		panic("citron: no cover") // k >= 1 always covers with the root
	}
	out := append([]node(nil), c.nodes...)
	sort.Slice(out, func(i, j int) bool {
		a, _ := bounds(h, out[i])
		b, _ := bounds(h, out[j])
		return a < b
	})
	return out
}

type cover struct {
	waste uint64
	nodes []node
}

func (c cover) better(o cover) bool {
	if c.waste != o.waste {
		return c.waste < o.waste
	}
	return len(c.nodes) < len(o.nodes)
}

type splitKey struct {
	n node
	k int
}

type splitter struct {
	h    int
	l, r uint64
	memo map[splitKey]cover
}

// best covers [l, r) ∩ range(x) with at most k nodes of x's subtree; x intersects [l, r).
func (s *splitter) best(x node, k int) (cover, bool) {
	if k < 1 {
		return cover{}, false
	}
	key := splitKey{x, k}
	if c, ok := s.memo[key]; ok {
		return c, len(c.nodes) > 0
	}
	lo, hi := bounds(s.h, x)
	one := cover{nodes: []node{x}}
	if x.d == s.h || s.l <= lo && hi <= s.r {
		s.memo[key] = one
		return one, true
	}
	one.waste = (hi - lo) - (min(hi, s.r) - max(lo, s.l))
	res := one
	// Children intersecting [l, r), each needing at least one node.
	var kids []node
	for i := 0; i < Fanout; i++ {
		c := x.child(i)
		clo, chi := bounds(s.h, c)
		if clo < s.r && s.l < chi {
			kids = append(kids, c)
		}
	}
	if len(kids) <= k {
		// dp over the children: acc[j] = best cover of the children so far with j nodes.
		acc := make([]*cover, k+1)
		acc[0] = &cover{}
		for _, c := range kids {
			next := make([]*cover, k+1)
			for used, a := range acc {
				if a == nil {
					continue
				}
				for j := 1; used+j <= k; j++ {
					b, ok := s.best(c, j)
					if !ok {
						continue
					}
					cand := cover{waste: a.waste + b.waste, nodes: append(append([]node(nil), a.nodes...), b.nodes...)}
					if cur := next[len(cand.nodes)]; cur == nil || cand.better(*cur) {
						next[len(cand.nodes)] = &cand
					}
				}
			}
			acc = next
		}
		for _, c := range acc {
			if c != nil && c.better(res) {
				res = *c
			}
		}
	}
	s.memo[key] = res
	return res, true
}

// conflicts reports whether two node sets of exclusive requests on [l1,r1) and [l2,r2) would
// block each other in a tree of height h: some pair of nodes is ancestor/descendant, or the same
// internal node, or the same leaf with overlapping masks.
func conflicts(h int, a []node, l1, r1 uint64, b []node, l2, r2 uint64) bool {
	for _, x := range a {
		for _, y := range b {
			switch {
			case x == y && x.d == h:
				if leafMask(h, x, l1, r1)&leafMask(h, y, l2, r2) != 0 {
					return true
				}
			case x.covers(y) || y.covers(x):
				return true
			}
		}
	}
	return false
}
