package alloc

import (
	"cmp"
	"fmt"
	"slices"
)

// Region is the contiguous range [Start, Start+Len) of the pooled queue that holds the queue of
// lock Lock at priority level Level. A lock has at most one region per level.
type Region struct {
	Lock  uint32
	Level int
	Start int
	Len   int
}

// End is one past the region's last slot.
func (r Region) End() int { return r.Start + r.Len }

// key identifies a region: (lock, level).
type key struct {
	lock  uint32
	level int
}

func (r Region) key() key { return key{r.Lock, r.Level} }

func (k key) compare(o key) int {
	if k.lock != o.lock {
		return cmp.Compare(k.lock, o.lock)
	}
	return cmp.Compare(k.level, o.level)
}

func (k key) String() string { return fmt.Sprintf("%d@%d", k.lock, k.level) }

// Want is the number of slots lock Lock should have at level Level after a period (0: none).
type Want struct {
	Lock  uint32
	Level int
	Len   int
}

func (w Want) key() key { return key{w.Lock, w.Level} }

// ChangeKind says what happens to one lock's region in a plan.
type ChangeKind uint8

// The kinds of change, in the order a plan lists them.
const (
	// Delete: the lock leaves the pool (its requests go to its lock server).
	Delete ChangeKind = iota + 1
	// Resize: the lock's length changes; its start may change too.
	Resize
	// Move: same length, new start. Only compaction moves a lock whose length did not change.
	Move
	// Insert: the lock enters the pool.
	Insert
)

func (k ChangeKind) String() string {
	switch k {
	case Delete:
		return "delete"
	case Resize:
		return "resize"
	case Move:
		return "move"
	case Insert:
		return "insert"
	}
	return fmt.Sprintf("ChangeKind(%d)", uint8(k))
}

// Change is one region (lock, level) before (From, zero for Insert) and after (To, zero for
// Delete).
type Change struct {
	Kind  ChangeKind
	Lock  uint32
	Level int
	From  Region
	To    Region
}

// PoolPlan is the new layout of one pool and how to get there from the old one.
//
// Destinations may overlap the old regions of other changes, so a controller applies a plan as
// one batch: pause and drain every lock with a change (except Insert), write every new region,
// then resume. Locks without a change keep their region and are never paused.
type PoolPlan struct {
	// Regions is the new layout, sorted by Start; regions are disjoint and inside the pool.
	Regions []Region
	// Changes lists deletes, resizes, moves and inserts, in that order, each sorted by lock.
	Changes []Change
	// Moves is the number of Move changes: locks whose allocation did not change but whose
	// region had to move (compaction).
	Moves int
	// Compacted is set when first fit could not place every lock and step 3 ran.
	Compacted bool
	// Window is the hull [Window[0], Window[1]) of the windows compaction packed or relocated
	// into (empty when it only relocated locks that are not stayers, or did not run).
	Window [2]int
	// Exhausted is set when the search for the cheapest window ran out of its budget (a very
	// fragmented pool) and the plan packs the cheapest window instead (see compactor).
	Exhausted bool
}

// PlanPool lays out a pool of size slots for the new lengths want, starting from the old layout
// (disjoint regions inside the pool, distinct locks, Len >= 1). Locks absent from want (or with
// Len 0) leave. The sum of want's lengths must not exceed size; then a layout always exists.
//
// The rule, in this order:
//  1. A lock whose length is unchanged keeps its region (a "stayer"). A lock that shrinks keeps
//     its start. A lock that grows keeps its start when the slots after it are free (up to the
//     next old region that stays in the pool); otherwise it is placed again.
//  2. New locks and growers that could not grow in place are placed by first fit (the lowest
//     gap that fits), largest first (first fit decreasing), ties by lock id.
//  3. If some do not fit, compaction: the planner picks one window of the pool (a run of
//     consecutive regions and gaps) whose gaps add up to the unplaced lengths and which holds
//     the fewest stayers (then the shortest, then the lowest), and packs everything in the
//     window, in address order, followed by the unplaced locks, from the window's start.
//
// Moves counts the stayers whose start changed. Among all single-window compactions of the
// first-fit layout, none moves fewer stayers (the window is found exactly, by two pointers in
// O(n)). Fewer moves can exist in general, but finding the fewest over every possible layout
// is NP-hard (deciding whether zero moves suffice is bin packing of the new regions into the
// gaps); the package doc reports how often the window plan is optimal on small instances.
func PlanPool(size int, old []Region, want []Want) (PoolPlan, error) {
	if err := checkPool(size, old, want); err != nil {
		return PoolPlan{}, err
	}
	old = slices.Clone(old)
	slices.SortFunc(old, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
	wantLen := make(map[key]int, len(want))
	for _, w := range want {
		if w.Len > 0 {
			wantLen[w.key()] = w.Len
		}
	}

	// Step 1: stayers, shrinkers and growers in place; the old regions that remain, in address
	// order, bound the growth of the one before them.
	type fixed struct {
		Region
		stayer bool
	}
	var (
		fix     []fixed  // regions placed in step 1, in address order
		pending []Region // growers placed again, then new locks (Start unset)
		inOld   = make(map[key]Region, len(old))
	)
	for i, r := range old {
		inOld[r.key()] = r
		w, ok := wantLen[r.key()]
		switch {
		case !ok:
			continue
		case w == r.Len:
			fix = append(fix, fixed{r, true})
		case w < r.Len:
			fix = append(fix, fixed{Region{r.Lock, r.Level, r.Start, w}, false})
		default:
			limit := size
			for _, n := range old[i+1:] {
				if _, stays := wantLen[n.key()]; stays {
					limit = n.Start
					break
				}
			}
			if r.Start+w <= limit {
				fix = append(fix, fixed{Region{r.Lock, r.Level, r.Start, w}, false})
			} else {
				pending = append(pending, Region{Lock: r.Lock, Level: r.Level, Len: w})
			}
		}
	}
	for _, w := range want {
		if _, ok := inOld[w.key()]; !ok && w.Len > 0 {
			pending = append(pending, Region{Lock: w.Lock, Level: w.Level, Len: w.Len})
		}
	}
	slices.SortFunc(pending, byLenDesc)

	// Step 2: first fit into the gaps between the fixed regions.
	var gaps []Region // Lock unused
	at := 0
	for _, f := range fix {
		if f.Start > at {
			gaps = append(gaps, Region{Start: at, Len: f.Start - at})
		}
		at = f.End()
	}
	if at < size {
		gaps = append(gaps, Region{Start: at, Len: size - at})
	}
	ff := newFirstFit(gaps)
	var placed, unplaced []Region
	for _, p := range pending {
		g := ff.find(p.Len)
		if g < 0 {
			unplaced = append(unplaced, p)
			continue
		}
		p.Start = ff.take(g, p.Len)
		placed = append(placed, p)
	}

	var plan PoolPlan
	final := make([]Region, 0, len(fix)+len(pending))
	stayer := make(map[key]bool, len(fix))
	for _, f := range fix {
		final = append(final, f.Region)
		stayer[f.key()] = f.stayer
	}
	final = append(final, placed...)
	slices.SortFunc(final, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })

	// Step 3: compaction of one window.
	if len(unplaced) > 0 {
		st := make([]bool, len(final))
		for i, r := range final {
			st[i] = stayer[r.key()]
		}
		c := newCompactor(size, final, st, ff, unplaced, compactBudget(len(final)+len(ff.gaps)))
		w, exhausted := c.choose()
		if w.placed == nil {
			return PoolPlan{}, fmt.Errorf("alloc: no compaction window fits the unplaced locks in a pool of %d (internal error)", size)
		}
		plan.Compacted, plan.Exhausted = true, exhausted
		if w.hi > w.lo {
			plan.Window = [2]int{w.lo, w.hi}
		}
		moved := make(map[key]Region, len(w.placed))
		for _, r := range w.placed {
			moved[r.key()] = r
		}
		next := make([]Region, 0, len(final)+len(unplaced))
		for _, r := range final {
			if m, ok := moved[r.key()]; ok {
				r = m
			}
			next = append(next, r)
		}
		for _, u := range unplaced {
			next = append(next, moved[u.key()])
		}
		final = next
		slices.SortFunc(final, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
	}
	plan.Regions = final

	// Changes.
	for _, r := range old {
		if _, ok := wantLen[r.key()]; !ok {
			plan.Changes = append(plan.Changes, Change{Kind: Delete, Lock: r.Lock, Level: r.Level, From: r})
		}
	}
	var resizes, moves, inserts []Change
	for _, r := range final {
		o, ok := inOld[r.key()]
		switch {
		case !ok:
			inserts = append(inserts, Change{Kind: Insert, Lock: r.Lock, Level: r.Level, To: r})
		case o.Len != r.Len:
			resizes = append(resizes, Change{Kind: Resize, Lock: r.Lock, Level: r.Level, From: o, To: r})
		case o.Start != r.Start:
			moves = append(moves, Change{Kind: Move, Lock: r.Lock, Level: r.Level, From: o, To: r})
		}
	}
	byLock := func(a, b Change) int { return key{a.Lock, a.Level}.compare(key{b.Lock, b.Level}) }
	slices.SortFunc(plan.Changes, byLock)
	for _, cs := range [][]Change{resizes, moves, inserts} {
		slices.SortFunc(cs, byLock)
		plan.Changes = append(plan.Changes, cs...)
	}
	plan.Moves = len(moves)
	return plan, nil
}

// compactBudget is the work the single-window search of a compaction may do, for a first-fit
// layout of n regions and gaps (a variable so that a test can starve it).
var compactBudget = func(n int) int { return 16*n + 4096 }

// checkPool validates PlanPool's arguments.
func checkPool(size int, old []Region, want []Want) error {
	if size < 0 {
		return fmt.Errorf("alloc: pool size %d: %w", size, ErrInvalid)
	}
	if err := CheckLayout(size, old); err != nil {
		return err
	}
	seen := make(map[key]struct{}, len(want))
	total := 0
	for _, w := range want {
		if w.Len < 0 {
			return fmt.Errorf("alloc: region %v: length %d: %w", w.key(), w.Len, ErrInvalid)
		}
		if _, dup := seen[w.key()]; dup {
			return fmt.Errorf("alloc: region %v wanted twice: %w", w.key(), ErrInvalid)
		}
		seen[w.key()] = struct{}{}
		total += w.Len
	}
	if total > size {
		return fmt.Errorf("alloc: %d slots wanted in a pool of %d: %w", total, size, ErrInvalid)
	}
	return nil
}

// CheckLayout reports whether regions form a valid layout of a pool of size slots: Len >= 1,
// inside [0, size), pairwise disjoint, one region per lock.
func CheckLayout(size int, regions []Region) error {
	rs := slices.Clone(regions)
	slices.SortFunc(rs, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
	seen := make(map[key]struct{}, len(rs))
	at := 0
	for _, r := range rs {
		if r.Len < 1 || r.Start < 0 || r.End() > size {
			return fmt.Errorf("alloc: region %v [%d,%d) outside a pool of %d or empty: %w", r.key(), r.Start, r.End(), size, ErrInvalid)
		}
		if r.Start < at {
			return fmt.Errorf("alloc: region %v at %d overlaps the one before: %w", r.key(), r.Start, ErrInvalid)
		}
		if _, dup := seen[r.key()]; dup {
			return fmt.Errorf("alloc: two regions for %v: %w", r.key(), ErrInvalid)
		}
		seen[r.key()] = struct{}{}
		at = r.End()
	}
	return nil
}

// segment is a region or a gap of a layout, as a compaction window sees it: a stayer costs one
// move if it lies in the window, a gap contributes its free slots.
type segment struct {
	start, end int
	cost       int
	free       int
}

// segments cuts [0, size) into the regions of layout (sorted, disjoint) and the gaps between.
func segments(layout []Region, size int, stayer map[key]bool) []segment {
	segs := make([]segment, 0, 2*len(layout)+1)
	at := 0
	for _, r := range layout {
		if r.Start > at {
			segs = append(segs, segment{start: at, end: r.Start, free: r.Start - at})
		}
		c := 0
		if stayer[r.key()] {
			c = 1
		}
		segs = append(segs, segment{start: r.Start, end: r.End(), cost: c})
		at = r.End()
	}
	if at < size {
		segs = append(segs, segment{start: at, end: size, free: size - at})
	}
	return segs
}

// bestWindow returns the run segs[i..j] whose free slots add up to at least need with the least
// cost, then the least length, then the lowest i; (-1, -1) if no run has enough. For each i the
// shortest feasible run starting at i is the cheapest one starting at i (costs are >= 0), and its
// end never decreases as i grows: two pointers find every such run in O(len(segs)).
func bestWindow(segs []segment, need int) (int, int) {
	bi, bj := -1, -1
	bestCost, bestLen := 0, 0
	j, free, cost := -1, 0, 0
	for i := range segs {
		for free < need && j+1 < len(segs) {
			j++
			free += segs[j].free
			cost += segs[j].cost
		}
		if free < need {
			break
		}
		if l := segs[j].end - segs[i].start; bi < 0 || cost < bestCost || (cost == bestCost && l < bestLen) {
			bi, bj, bestCost, bestLen = i, j, cost, l
		}
		free -= segs[i].free
		cost -= segs[i].cost
	}
	return bi, bj
}

// firstFit finds the lowest gap of at least a given length in O(log gaps): a segment tree holds
// the longest gap of each range of gaps. Placing a region takes slots from the start of its gap.
type firstFit struct {
	gaps []Region
	tree []int // tree[1] is the root; leaves start at n
	n    int
}

func newFirstFit(gaps []Region) *firstFit {
	n := 1
	for n < len(gaps) {
		n *= 2
	}
	f := &firstFit{gaps: gaps, tree: make([]int, 2*n), n: n}
	for i, g := range gaps {
		f.tree[n+i] = g.Len
	}
	for i := n - 1; i >= 1; i-- {
		f.tree[i] = max(f.tree[2*i], f.tree[2*i+1])
	}
	return f
}

// find returns the index of the lowest gap with at least l slots, or -1.
func (f *firstFit) find(l int) int {
	if len(f.gaps) == 0 || f.tree[1] < l {
		return -1
	}
	i := 1
	for i < f.n {
		if f.tree[2*i] >= l {
			i = 2 * i
		} else {
			i = 2*i + 1
		}
	}
	return i - f.n
}

// set changes gap g to [start, start+l).
func (f *firstFit) set(g, start, l int) {
	f.gaps[g].Start, f.gaps[g].Len = start, l
	i := f.n + g
	f.tree[i] = l
	for i /= 2; i >= 1; i /= 2 {
		f.tree[i] = max(f.tree[2*i], f.tree[2*i+1])
	}
}

// take removes l slots from the start of gap g and returns where they start.
func (f *firstFit) take(g, l int) int {
	s := f.gaps[g].Start
	f.gaps[g].Start += l
	f.gaps[g].Len -= l
	i := f.n + g
	f.tree[i] = f.gaps[g].Len
	for i /= 2; i >= 1; i /= 2 {
		f.tree[i] = max(f.tree[2*i], f.tree[2*i+1])
	}
	return s
}
