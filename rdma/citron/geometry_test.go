package citron

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Scenario 1: index arithmetic and sizing.
func TestTreeArithmetic(t *testing.T) {
	for x := uint64(1); x < 5000; x++ {
		n := nodeAt(x)
		if n.heapIndex() != x {
			t.Fatalf("nodeAt(%d) = %v, index %d", x, n, n.heapIndex())
		}
		for i := 0; i < Fanout; i++ {
			c := n.child(i)
			if c.heapIndex() != 4*x-2+uint64(i) || (c.heapIndex()+2)/4 != x || c.parent() != n {
				t.Fatalf("CHILD/PARENT broken at %d,%d", x, i)
			}
		}
	}
	tests := []struct {
		n      uint64
		height int
		nodes  uint64
		bytes  uint64
	}{
		{1 << 10, 2, 21, 21 * 8},
		{1 << 28, 11, 5592405, 44739240},
	}
	for _, tc := range tests {
		h := 0
		for capacity(h) < tc.n {
			h++
		}
		g := []Generation{{Gen: 0, Height: h}}
		nodes := regionBytes(g, 0) / slotBytes
		if h != tc.height || nodes != tc.nodes || nodes*8 != tc.bytes {
			t.Errorf("N=%d: height %d, %d nodes (%d B of paper-format words)", tc.n, h, nodes, nodes*8)
		}
	}
	// A node's range is its parent's quarter.
	h := 4
	for x := uint64(2); x < (1<<(2*uint(h+1))-1)/3; x++ {
		n := nodeAt(x)
		lo, hi := bounds(h, n)
		plo, phi := bounds(h, n.parent())
		q := (phi - plo) / 4
		if lo != plo+uint64(n.p%4)*q || hi-lo != q {
			t.Fatalf("%v: [%d,%d) in parent [%d,%d)", n, lo, hi, plo, phi)
		}
	}
}

// Scenario 2: the range split.
func TestSplitRange(t *testing.T) {
	h := 4 // N = 16384
	N := capacity(h)
	t.Run("small-ranges-are-leaves", func(t *testing.T) {
		for l := uint64(0); l+64 <= N; l += 37 {
			for L := uint64(1); L <= 64; L++ {
				ns := splitRange(h, l, l+L, 2)
				if len(ns) > 2 {
					t.Fatalf("[%d,%d): %v", l, l+L, ns)
				}
				var covered uint64
				for _, n := range ns {
					if n.d != h {
						t.Fatalf("[%d,%d): internal node %v", l, l+L, ns)
					}
					covered += uint64(popcount(leafMask(h, n, l, l+L)))
				}
				if covered != L {
					t.Fatalf("[%d,%d): masks cover %d units", l, l+L, covered)
				}
			}
		}
	})
	t.Run("middle-of-tree", func(t *testing.T) {
		ns := splitRange(h, N/2-1, N/2+1, 2)
		if len(ns) != 2 || ns[0] != (node{h, N/128 - 1}) || ns[1] != (node{h, N / 128}) {
			t.Fatalf("got %v", ns)
		}
		if m0, m1 := leafMask(h, ns[0], N/2-1, N/2+1), leafMask(h, ns[1], N/2-1, N/2+1); m0 != 1<<63 || m1 != 1 {
			t.Fatalf("masks %#x %#x", m0, m1)
		}
		if one := splitRange(h, N/2-1, N/2+1, 1); len(one) != 1 || one[0] != (node{0, 0}) {
			t.Fatalf("k=1 should take the root (the strawman): %v", one)
		}
	})
	t.Run("aligned-256", func(t *testing.T) {
		ns := splitRange(h, 512, 768, 2)
		if len(ns) != 1 || ns[0] != (node{h - 1, 2}) {
			t.Fatalf("got %v", ns)
		}
	})
	t.Run("brute-force", func(t *testing.T) {
		rng := rand.New(rand.NewSource(1))
		hh := 2 // 21 nodes, N = 1024
		all := []node{}
		for x := uint64(1); x <= 21; x++ {
			all = append(all, nodeAt(x))
		}
		for it := 0; it < 400; it++ {
			l := uint64(rng.Intn(1024))
			r := l + 1 + uint64(rng.Intn(int(1024-l)))
			for k := 1; k <= 3; k++ {
				got := splitRange(hh, l, r, k)
				w, ok := waste(hh, got, l, r)
				if !ok || len(got) > k {
					t.Fatalf("[%d,%d) k=%d: invalid cover %v", l, r, k, got)
				}
				if best := bruteBest(hh, all, l, r, k); w != best {
					t.Fatalf("[%d,%d) k=%d: waste %d, brute force %d (%v)", l, r, k, w, best, got)
				}
			}
		}
	})
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// waste checks that ns is a cover of [l, r) by pairwise non-nested nodes that each intersect it
// and returns the covered-but-unrequested units of its internal nodes.
func waste(h int, ns []node, l, r uint64) (uint64, bool) {
	var w, covered uint64
	for i, x := range ns {
		lo, hi := bounds(h, x)
		if hi <= l || r <= lo {
			return 0, false
		}
		for _, y := range ns[i+1:] {
			if x.covers(y) || y.covers(x) {
				return 0, false
			}
		}
		in := min(hi, r) - max(lo, l)
		covered += in
		if x.d != h {
			w += hi - lo - in
		}
	}
	return w, covered == r-l
}

func bruteBest(h int, all []node, l, r uint64, k int) uint64 {
	best := ^uint64(0)
	var rec func(i int, cur []node)
	rec = func(i int, cur []node) {
		if w, ok := waste(h, cur, l, r); ok && w < best {
			best = w
		}
		if len(cur) == k {
			return
		}
		for j := i; j < len(all); j++ {
			lo, hi := bounds(h, all[j])
			if hi <= l || r <= lo {
				continue
			}
			rec(j+1, append(cur, all[j]))
		}
	}
	rec(0, nil)
	return best
}

// Scenario 6: meet in the middle covers every ancestor/descendant pair for heights up to 12 and
// m in 1..5 (depths suffice: one path); the paper's other reading, distances m, 2m, ..., from
// the parent's parent, is caught by the same check (so the test can fail).
func TestMITMCoverage(t *testing.T) {
	covered := func(set func(n node, m int) []node) (bad int) {
		for h := 1; h <= 12; h++ {
			for m := 1; m <= 5; m++ {
				for dd := 1; dd <= h; dd++ { // notifier depth (leaf allowed)
					n := node{dd, 0}
					notified := map[int]bool{}
					for _, a := range set(n, m) {
						notified[a.d] = true
					}
					for dx := 0; dx < dd; dx++ { // checker: internal ancestor
						from, to := checkDepths(node{dx, 0}, h, m)
						hit := false
						for d := from; d <= to; d++ {
							hit = hit || notified[d]
						}
						if !hit {
							bad++
						}
					}
				}
			}
		}
		return bad
	}
	if bad := covered(notifySet); bad != 0 {
		t.Fatalf("%d uncovered checker/notifier pairs", bad)
	}
	everyM := func(n node, m int) []node {
		var out []node
		for d := n.d - m; d >= 0; d -= m {
			out = append(out, n.ancestor(d))
		}
		return out
	}
	if bad := covered(everyM); bad == 0 {
		t.Fatal("the distances-m,2m reading should leave pairs uncovered")
	}
	// Examples: m=4, a leaf at depth 11 notifies depths 10, 6, 3 (2 replaced by 3).
	got := fmt.Sprint(notifySet(node{11, 0}, 4))
	if got != "[(10,0) (6,0) (3,0)]" {
		t.Fatalf("notify set %s", got)
	}
}

// Layouts across scale-ups: every node of the newest tree has its own slot inside its
// generation's region, and level fragments list exactly the slots of the positions asked for.
func TestLayoutGenerations(t *testing.T) {
	heights := []int{2, 3, 5, 6}
	var gens []Generation
	base := uint64(4096)
	for i, h := range heights {
		g := Generation{Gen: i, Height: h, Base: verbs.MakePtr(0, base)}
		gens = append(gens, g)
		base += regionBytes(gens, i)
	}
	l, err := NewLayout(gens)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[verbs.Ptr]node{}
	H := l.Height()
	for d := 0; d <= H; d++ {
		for p := uint64(0); p < levelNodes(d); p++ {
			n := node{d, p}
			s := l.slot(n)
			if o, dup := seen[s]; dup {
				t.Fatalf("%v and %v share slot %v", n, o, s)
			}
			seen[s] = n
			g := gens[l.owner(n)]
			end := g.Base.Offset() + regionBytes(gens, g.Gen)
			if s.Offset() < g.Base.Offset() || s.Offset()+slotBytes > end {
				t.Fatalf("%v: slot %v outside generation %d", n, s, g.Gen)
			}
		}
		// Fragments of an arbitrary window.
		lo, hi := levelNodes(d)/3, levelNodes(d)-levelNodes(d)/5
		var n uint64
		for _, f := range l.fragments(d, lo, hi) {
			for i := uint64(0); i < f.count; i++ {
				if l.slot(node{d, f.first + i}) != f.ptr.Add(i*slotBytes) {
					t.Fatalf("depth %d: fragment %+v slot %d", d, f, i)
				}
			}
			n += f.count
		}
		if n != hi-lo {
			t.Fatalf("depth %d: fragments hold %d of %d positions", d, n, hi-lo)
		}
	}
	if len(seen) != int((levelNodes(H+1)-1)/3) {
		t.Fatalf("%d slots", len(seen))
	}
	// The old trees are leftmost subtrees: generation 0's root is the node at depth 4, pos 0.
	if l.slot(node{H - heights[0], 0}) != gens[0].Base {
		t.Fatal("generation 0 root moved")
	}
}
