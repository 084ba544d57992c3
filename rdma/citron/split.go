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
	s := splitter{h: h, l: l, r: r, memo: make(map[splitKey]*entry, 4*(h+1)*k)}
	s.best(node{0, 0}, k)
	out := s.collect(node{0, 0}, k, nil)
	sort.Slice(out, func(i, j int) bool {
		a, _ := bounds(h, out[i])
		b, _ := bounds(h, out[j])
		return a < b
	})
	return out
}

// entry is the best cover of [l, r) ∩ range(x) with at most k nodes: its waste and node count,
// and how it was obtained (x whole, or budgets for x's intersecting children).
type entry struct {
	waste uint64
	count int
	whole bool
	kids  []node
	kidK  []int
}

func (e *entry) better(waste uint64, count int) bool {
	return waste < e.waste || waste == e.waste && count < e.count
}

type splitKey struct {
	n node
	k int
}

type splitter struct {
	h    int
	l, r uint64
	memo map[splitKey]*entry
}

// best covers [l, r) ∩ range(x) with at most k >= 1 nodes of x's subtree; x intersects [l, r).
func (s *splitter) best(x node, k int) *entry {
	key := splitKey{x, k}
	if e, ok := s.memo[key]; ok {
		return e
	}
	lo, hi := bounds(s.h, x)
	e := &entry{count: 1, whole: true}
	s.memo[key] = e
	if x.d == s.h || s.l <= lo && hi <= s.r {
		return e
	}
	e.waste = (hi - lo) - (min(hi, s.r) - max(lo, s.l))
	var kids []node
	for i := 0; i < Fanout; i++ {
		c := x.child(i)
		clo, chi := bounds(s.h, c)
		if clo < s.r && s.l < chi {
			kids = append(kids, c)
		}
	}
	if len(kids) > k {
		return e
	}
	// acc[j]: best cover of the children so far using j nodes (budgets per child).
	type part struct {
		ok    bool
		waste uint64
		alloc []int
	}
	acc := make([]part, k+1)
	acc[0] = part{ok: true}
	for ci, c := range kids {
		next := make([]part, k+1)
		for used := 0; used <= k; used++ {
			if !acc[used].ok {
				continue
			}
			for j := 1; used+j <= k; j++ {
				b := s.best(c, j)
				n := used + b.count
				w := acc[used].waste + b.waste
				if !next[n].ok || w < next[n].waste {
					alloc := make([]int, ci+1)
					copy(alloc, acc[used].alloc)
					alloc[ci] = j
					next[n] = part{ok: true, waste: w, alloc: alloc}
				}
			}
		}
		acc = next
	}
	for n := 1; n <= k; n++ {
		if acc[n].ok && e.better(acc[n].waste, n) {
			e.waste, e.count, e.whole, e.kids, e.kidK = acc[n].waste, n, false, kids, acc[n].alloc
		}
	}
	return e
}

// collect appends the nodes of the best cover of x with budget k.
func (s *splitter) collect(x node, k int, out []node) []node {
	e := s.memo[splitKey{x, k}]
	if e.whole {
		return append(out, x)
	}
	for i, c := range e.kids {
		out = s.collect(c, e.kidK[i], out)
	}
	return out
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
