package citron

import (
	"fmt"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Generation is one allocation of tree nodes: the initial tree (generation 0) or the nodes a
// scale-up added. Scale-ups never move nodes: the tree of generation g is the leftmost subtree,
// rooted at depth Height_{g+1}-Height_g, of the tree of generation g+1, and generation g+1's
// region holds only the nodes that are not in tree g. Within a region the nodes are stored level
// by level, left to right, one slotBytes slot each, so every level of any node's subtree is at
// most one contiguous block per generation.
type Generation struct {
	// Gen is the generation number (0: the initial tree).
	Gen int
	// Height is the height of the tree of this generation (leaves at depth Height).
	Height int
	// Base is the first slot of this generation's region on the server node.
	Base verbs.Ptr
}

// Layout is the tree of the newest of its generations, the union of their regions.
type Layout struct {
	gens  []Generation
	start [][]uint64 // per generation, per own depth: slot index of the level's first own node
}

// NewLayout builds the layout of gens (oldest first, consecutive numbers from 0, growing heights).
func NewLayout(gens []Generation) (Layout, error) {
	var l Layout
	for i, g := range gens {
		if g.Gen != i {
			return Layout{}, fmt.Errorf("citron: generation %d at position %d", g.Gen, i)
		}
		if g.Height < minHeight || g.Height > maxHeight || i > 0 && g.Height <= gens[i-1].Height {
			return Layout{}, fmt.Errorf("citron: generation %d has height %d", g.Gen, g.Height)
		}
		l.gens = append(l.gens, g)
		l.start = append(l.start, genStarts(gens, i))
	}
	if len(l.gens) == 0 {
		return Layout{}, fmt.Errorf("citron: empty layout")
	}
	return l, nil
}

// ownLo is the first position at own depth d that generation i owns (positions below it belong
// to older generations).
func ownLo(gens []Generation, i, d int) uint64 {
	if i == 0 {
		return 0
	}
	j := gens[i].Height - gens[i-1].Height
	if d < j {
		return 0
	}
	return levelNodes(d - j)
}

func genStarts(gens []Generation, i int) []uint64 {
	st := make([]uint64, gens[i].Height+2)
	for d := 0; d <= gens[i].Height; d++ {
		st[d+1] = st[d] + levelNodes(d) - ownLo(gens, i, d)
	}
	return st
}

// RegionBytes is the size of generation i's region.
func regionBytes(gens []Generation, i int) uint64 {
	st := genStarts(gens, i)
	return st[len(st)-1] * slotBytes
}

// Gen is the newest generation number.
func (l *Layout) Gen() int { return len(l.gens) - 1 }

// Height is the height of the newest tree.
func (l *Layout) Height() int { return l.gens[len(l.gens)-1].Height }

// Capacity is N, the units the newest tree covers.
func (l *Layout) Capacity() uint64 { return capacity(l.Height()) }

// Generations returns a copy of the generations.
func (l *Layout) Generations() []Generation { return append([]Generation(nil), l.gens...) }

// prefix returns the layout of generation g (g <= Gen).
func (l *Layout) prefix(g int) Layout { return Layout{gens: l.gens[:g+1], start: l.start[:g+1]} }

// rootDepth is the depth of generation i's root in the newest tree.
func (l *Layout) rootDepth(i int) int { return l.Height() - l.gens[i].Height }

// owner is the generation that allocated node n of the newest tree.
func (l *Layout) owner(n node) int {
	for i := range l.gens {
		if rd := l.rootDepth(i); n.d >= rd && n.p < levelNodes(n.d-rd) {
			return i
		}
	}
	panic(fmt.Sprintf("citron: node %v outside the tree of height %d", n, l.Height()))
}

// slot is the address of node n of the newest tree.
func (l *Layout) slot(n node) verbs.Ptr {
	i := l.owner(n)
	d := n.d - l.rootDepth(i)
	idx := l.start[i][d] + n.p - ownLo(l.gens, i, d)
	return l.gens[i].Base.Add(idx * slotBytes)
}

// frag is a contiguous run of count slots starting at ptr, holding positions first..first+count-1.
type frag struct {
	ptr   verbs.Ptr
	first uint64
	count uint64
}

// fragments returns the contiguous runs holding positions [lo, hi) of depth d.
func (l *Layout) fragments(d int, lo, hi uint64) []frag {
	var out []frag
	for i := range l.gens {
		rd := l.rootDepth(i)
		if d < rd {
			continue
		}
		gd := d - rd
		olo, ohi := ownLo(l.gens, i, gd), levelNodes(gd)
		a, b := max(lo, olo), min(hi, ohi)
		if a >= b {
			continue
		}
		idx := l.start[i][gd] + a - olo
		out = append(out, frag{ptr: l.gens[i].Base.Add(idx * slotBytes), first: a, count: b - a})
	}
	return out
}

// isLeaf reports whether n is a leaf of the newest tree.
func (l *Layout) isLeaf(n node) bool { return n.d == l.Height() }
