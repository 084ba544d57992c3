package citron

import (
	"fmt"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Geometry of the lock tree: a static quaternary segment tree whose leaves are 64-unit bitmaps.
// A tree of height h (leaves at depth h) covers [0, LeafUnits*4^h); node (d, p), the p-th node of
// depth d counted from the left, covers [p*s, (p+1)*s) with s = LeafUnits*4^(h-d). Its heap index
// (the paper's level-order numbering from 1) is (4^d-1)/3 + p + 1, so CHILD(x,i) = 4x-2+i and
// PARENT(x) = (x+2)/4 hold.
const (
	// Fanout is the number of children of an internal node.
	Fanout = 4
	// LeafUnits is the number of units a leaf covers (one bit each).
	LeafUnits = 64
	// slotBytes is the size of one node: the E word (the paper's node word) and the S word
	// (this implementation's shared-mode state).
	slotBytes  = 16
	slotWords  = 2
	maxHeight  = 24 // 64*4^24 = 2^54 units
	minHeight  = 1
	wordsLimit = verbs.MaxWords
)

// node names a tree node by depth and position in the current tree.
type node struct {
	d int
	p uint64
}

func (n node) String() string { return fmt.Sprintf("(%d,%d)", n.d, n.p) }

// parent is the node's parent (the root has none; callers check d > 0).
func (n node) parent() node { return node{n.d - 1, n.p >> 2} }

// ancestor is the node's ancestor at depth d <= n.d.
func (n node) ancestor(d int) node { return node{d, n.p >> (2 * uint(n.d-d))} }

// child is the node's i-th child.
func (n node) child(i int) node { return node{n.d + 1, n.p<<2 | uint64(i)} }

// covers reports whether n is an ancestor of m or m itself.
func (n node) covers(m node) bool { return n.d <= m.d && m.ancestor(n.d) == n }

// heapIndex is the paper's level-order index from 1.
func (n node) heapIndex() uint64 { return (uint64(1)<<(2*uint(n.d))-1)/3 + n.p + 1 }

// nodeAt returns the node with heap index x >= 1.
func nodeAt(x uint64) node {
	d := 0
	for (uint64(1)<<(2*uint(d+1))-1)/3 < x {
		d++
	}
	return node{d, x - 1 - (uint64(1)<<(2*uint(d))-1)/3}
}

// span is the number of units a node of depth d covers in a tree of height h.
func span(h, d int) uint64 { return LeafUnits << (2 * uint(h-d)) }

// capacity is N for a tree of height h.
func capacity(h int) uint64 { return span(h, 0) }

// bounds is the range [lo, hi) node n covers in a tree of height h.
func bounds(h int, n node) (lo, hi uint64) {
	s := span(h, n.d)
	return n.p * s, (n.p + 1) * s
}

// levelNodes is the number of nodes of depth d.
func levelNodes(d int) uint64 { return 1 << (2 * uint(d)) }

// leafMask is the bitmap of [lo, hi) inside the leaf n of a tree of height h (bit i = unit
// first+i of the leaf).
func leafMask(h int, n node, lo, hi uint64) uint64 {
	first, end := bounds(h, n)
	lo, hi = max(lo, first), min(hi, end)
	if lo >= hi {
		return 0
	}
	w := hi - lo
	var m uint64
	if w == 64 {
		m = ^uint64(0)
	} else {
		m = (uint64(1)<<w - 1)
	}
	return m << (lo - first)
}

// groupMask is the masked-FAA operand (+delta per group) and the field mask of the 8-unit reader
// groups a leaf bitmap touches: group i counts shared holders of units 8i..8i+7.
func groupOperand(bits uint64, delta int64) (add, mask uint64) {
	for i := uint(0); i < 8; i++ {
		if bits>>(8*i)&0xff != 0 {
			f := verbs.Field{Shift: 8 * i, Width: 8}
			add |= f.Add(delta)
			mask |= f.Mask()
		}
	}
	return add, mask
}
