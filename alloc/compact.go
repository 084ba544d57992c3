package alloc

import (
	"cmp"
	"slices"
	"sort"
)

// compactor chooses the compaction of PlanPool's step 3, when first fit could not place some
// locks. A stayer is a lock whose length did not change; taking one out of place costs one
// move. Every other lock in the pool (new, resized, grown) is reprogrammed anyway and may go
// anywhere for free.
//
// The candidates, each a complete plan:
//
//   - Relocate all: every lock that is not a stayer, and the unplaced ones, placed again by first
//     fit decreasing into the gaps between the stayers. Cost 0.
//   - Sequential windows: what relocate-all could not place is placed one lock at a time, longest
//     first, each by packing the cheapest window (fewest stayers, then shortest, then lowest)
//     whose gaps hold it. A stayer moved once is free to move again.
//   - Single windows. A window W = [lo, hi) is a run of regions and gaps of the first-fit layout.
//     Packed: everything inside W, then the unplaced locks, packed from lo (the cheapest such W
//     is found by two pointers, see bestWindow; always feasible). Relocating: the regions inside
//     W and the unplaced locks placed by first fit decreasing into the gaps outside W and W
//     itself (one gap), regions outside W staying; or, for W between two stayers, every lock
//     that is not a stayer relocated likewise. The cost of a window is the number of stayers
//     inside it. For each cost c = 0, 1, ... below the best candidate so far, the search tries
//     every window holding exactly c stayers (a run of c consecutive stayers, with any start
//     after the stayer before the run and any end before the stayer after it: first fit
//     decreasing is not monotone in the window, so narrower windows are tried too).
//
// The plan is the cheapest candidate, then the one with the fewest moves (a stayer placed
// back at its own start is not a move). The single-window search does at most a budget of
// work, proportional to the pool's regions; past it the best plan found so far is used and
// PoolPlan.Exhausted says so. Without exhaustion no single window takes fewer stayers out of
// place than the plan (checked against brute force over every window).
type compactor struct {
	size     int
	regs     []Region // the first-fit layout, sorted by Start
	stayer   []bool   // parallel to regs
	isStayer map[key]bool
	ff       *firstFit // gaps of the first-fit layout
	ffStay   *firstFit // gaps between the stayers alone
	unplaced []Region
	budget   int

	movable []Region // the locks that are not stayers and the unplaced ones, in byLenDesc order
	scratch []Region // relocateAll's pool
}

// newCompactor takes the first-fit layout (sorted, with stayer flags), its first-fit state and
// the locks first fit could not place.
func newCompactor(size int, regs []Region, stayer []bool, ff *firstFit, unplaced []Region, budget int) *compactor {
	c := &compactor{size: size, regs: regs, stayer: stayer, ff: ff, unplaced: unplaced, budget: budget,
		isStayer: make(map[key]bool, len(regs))}
	var stayers []Region
	for i, r := range regs {
		if stayer[i] {
			c.isStayer[r.key()] = true
			stayers = append(stayers, r)
		}
	}
	c.ffStay = newFirstFit(gapsOf(stayers, size))
	for i, r := range regs {
		if !stayer[i] {
			c.movable = append(c.movable, r)
		}
	}
	c.movable = append(c.movable, unplaced...)
	slices.SortFunc(c.movable, byLenDesc)
	return c
}

// gapsOf returns the gaps of a sorted layout of a pool of size slots.
func gapsOf(layout []Region, size int) []Region {
	var gaps []Region
	at := 0
	for _, r := range layout {
		if r.Start > at {
			gaps = append(gaps, Region{Start: at, Len: r.Start - at})
		}
		at = r.End()
	}
	if at < size {
		gaps = append(gaps, Region{Start: at, Len: size - at})
	}
	return gaps
}

// window is a candidate plan: where each relocated lock goes, and the hull [lo, hi) of the
// windows it packed or relocated into.
type window struct {
	lo, hi int
	cost   int      // stayers taken out of place
	moves  int      // stayers whose start changes
	placed []Region // every lock the plan places, with its new start
}

// better reports whether w is a better plan than found (nil: none yet).
func better(w window, found *window) bool {
	switch {
	case found == nil:
		return true
	case w.cost != found.cost:
		return w.cost < found.cost
	case w.moves != found.moves:
		return w.moves < found.moves
	}
	return w.hi-w.lo < found.hi-found.lo
}

// packed is the plan of the cheapest packed window (bestWindow). It always exists when the
// unplaced lengths fit in the pool's free slots.
func (c *compactor) packed() (window, bool) {
	need := 0
	for _, u := range c.unplaced {
		need += u.Len
	}
	segs := segments(c.regs, c.size, c.isStayer)
	i, j := bestWindow(segs, need)
	if i < 0 {
		return window{}, false
	}
	w := window{lo: segs[i].start, hi: segs[j].end}
	ra, rb := c.inside(w.lo, w.hi)
	cur := w.lo
	for k := ra; k < rb; k++ {
		r := c.regs[k]
		if c.stayer[k] {
			w.cost++
			if r.Start != cur {
				w.moves++
			}
		}
		r.Start = cur
		cur += r.Len
		w.placed = append(w.placed, r)
	}
	for _, u := range c.unplaced {
		u.Start = cur
		cur += u.Len
		w.placed = append(w.placed, u)
	}
	return w, true
}

// inside returns the range regs[ra:rb] of regions inside [lo, hi).
func (c *compactor) inside(lo, hi int) (int, int) {
	ra := sort.Search(len(c.regs), func(k int) bool { return c.regs[k].Start >= lo })
	rb := sort.Search(len(c.regs), func(k int) bool { return c.regs[k].End() > hi })
	return ra, max(ra, rb)
}

// byLenDesc orders first fit decreasing: longest first, ties by (lock, level).
func byLenDesc(a, b Region) int {
	if a.Len != b.Len {
		return cmp.Compare(b.Len, a.Len)
	}
	return a.key().compare(b.key())
}

// relocate tries the local relocating plan of window [lo, hi): first fit decreasing of the
// window's regions and the unplaced locks into the gaps of the first-fit layout outside the
// window and the window itself.
func (c *compactor) relocate(lo, hi int) (window, bool) {
	ra, rb := c.inside(lo, hi)
	pool := make([]Region, 0, rb-ra+len(c.unplaced))
	pool = append(pool, c.regs[ra:rb]...)
	pool = append(pool, c.unplaced...)
	slices.SortFunc(pool, byLenDesc)
	w, left := c.ffd(c.ff, pool, lo, hi)
	return w, len(left) == 0
}

// relocateAll tries the global relocating plan of window [lo, hi) (empty, or from a stayer's
// end to a stayer's start): every lock that is not a stayer, the unplaced ones and the stayers
// inside the window, placed by first fit decreasing into the gaps between the other stayers and
// the window. It also returns the locks it could not place.
func (c *compactor) relocateAll(lo, hi int) (window, []Region) {
	ra, rb := c.inside(lo, hi)
	var extra []Region // the stayers inside the window
	for k := ra; k < rb && hi > lo; k++ {
		if c.stayer[k] {
			extra = append(extra, c.regs[k])
		}
	}
	slices.SortFunc(extra, byLenDesc)
	pool := c.scratch[:0]
	i := 0
	for _, r := range c.movable { // merge two byLenDesc lists
		for i < len(extra) && byLenDesc(extra[i], r) < 0 {
			pool = append(pool, extra[i])
			i++
		}
		pool = append(pool, r)
	}
	pool = append(pool, extra[i:]...)
	c.scratch = pool
	return c.ffd(c.ffStay, pool, lo, hi)
}

// ffd places pool (in byLenDesc order) by first fit decreasing into the gaps of ff outside [lo, hi) and the window
// itself (as one gap), and leaves ff as it found it. It returns the plan of what it placed and
// the locks that did not fit; the cost counts the stayers placed, the moves those placed away
// from their start.
func (c *compactor) ffd(ff *firstFit, pool []Region, lo, hi int) (window, []Region) {
	w := window{lo: lo, hi: hi}
	gs := ff.gaps
	ga := sort.Search(len(gs), func(k int) bool { return gs[k].Start >= lo })
	gb := sort.Search(len(gs), func(k int) bool { return gs[k].Start >= hi })
	type saved struct{ g, start, l int }
	var undo []saved
	set := func(g, start, l int) {
		undo = append(undo, saved{g, gs[g].Start, gs[g].Len})
		ff.set(g, start, l)
	}
	for g := ga; g < gb; g++ { // gaps inside the window are part of it
		if gs[g].Len > 0 {
			set(g, gs[g].Start, 0)
		}
	}
	c.budget -= len(pool) + (gb - ga) + 1
	var left []Region
	wcur := lo
	for _, r := range pool {
		old := r.Start
		g := ff.find(r.Len)
		switch {
		case g >= 0 && gs[g].Start < lo:
			r.Start = gs[g].Start
			set(g, gs[g].Start+r.Len, gs[g].Len-r.Len)
		case wcur+r.Len <= hi:
			r.Start = wcur
			wcur += r.Len
		case g >= 0:
			r.Start = gs[g].Start
			set(g, gs[g].Start+r.Len, gs[g].Len-r.Len)
		default:
			left = append(left, r)
			continue
		}
		if c.isStayer[r.key()] {
			w.cost++
			if r.Start != old {
				w.moves++
			}
		}
		w.placed = append(w.placed, r)
	}
	for k := len(undo) - 1; k >= 0; k-- {
		ff.set(undo[k].g, undo[k].start, undo[k].l)
	}
	return w, left
}

// sequential is the relocate-all plan completed one lock at a time by packed windows.
func (c *compactor) sequential() window {
	first, left := c.relocateAll(0, 0)
	if len(left) == 0 {
		return first
	}
	// The layout after relocate-all: the stayers and what it placed.
	layout := make([]Region, 0, len(c.regs)+len(c.unplaced))
	origin := make(map[key]int, len(c.regs))
	for k, r := range c.regs {
		if c.stayer[k] {
			layout = append(layout, r)
			origin[r.key()] = r.Start
		}
	}
	layout = append(layout, first.placed...)
	slices.SortFunc(layout, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
	cost := map[key]bool{} // stayers still in place (taking them out costs a move)
	for l := range origin {
		cost[l] = true
	}
	w := window{lo: c.size, hi: 0}
	for _, u := range left {
		segs := segments(layout, c.size, cost)
		c.budget -= len(segs)
		i, j := bestWindow(segs, u.Len)
		if i < 0 { // cannot happen when the wanted lengths fit the pool
			return window{cost: len(c.regs) + 1}
		}
		lo, hi := segs[i].start, segs[j].end
		w.lo, w.hi = min(w.lo, lo), max(w.hi, hi)
		next := layout[:0:0]
		var in []Region
		for _, r := range layout {
			if r.Start >= lo && r.End() <= hi {
				in = append(in, r)
			} else {
				next = append(next, r)
			}
		}
		cur := lo
		for _, r := range append(in, u) {
			if cost[r.key()] && r.Start != cur {
				delete(cost, r.key())
			}
			r.Start = cur
			cur += r.Len
			next = append(next, r)
		}
		slices.SortFunc(next, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
		layout = next
	}
	w.placed = layout
	for _, r := range layout {
		if s, ok := origin[r.key()]; ok && s != r.Start {
			w.moves++
		}
	}
	w.cost = w.moves
	return w
}

// choose returns the compaction plan and whether the single-window search ran out of budget.
func (c *compactor) choose() (window, bool) {
	best, ok := c.packed()
	if !ok {
		return window{}, false
	}
	if seq := c.sequential(); better(seq, &best) {
		best = seq
	}
	segs := segments(c.regs, c.size, c.isStayer)
	// sIdx holds the indices of the stayers' segments, with sentinels -1 and len(segs).
	sIdx := []int{-1}
	for k, sg := range segs {
		if sg.cost == 1 {
			sIdx = append(sIdx, k)
		}
	}
	sIdx = append(sIdx, len(segs))
	nst := len(sIdx) - 2
	edge := func(k int, start bool) int { // the window bound next to stayer k of sIdx
		switch {
		case k == 0:
			return 0
		case k == nst+1:
			return c.size
		case start:
			return segs[sIdx[k]].end
		}
		return segs[sIdx[k]].start
	}
	for cost := 0; cost < best.cost; cost++ {
		var found *window
		// Runs of cost consecutive stayers p+1..p+cost (numbered as in sIdx); a window starts
		// after stayer p and ends before stayer p+cost+1.
		for p := 0; p+cost <= nst; p++ {
			aLo, aHi := sIdx[p]+1, sIdx[p+1]
			bLo, bHi := sIdx[p+cost], sIdx[p+cost+1]-1
			if cost == 0 {
				aHi, bLo = sIdx[p+1]-1, sIdx[p]+1
			}
			for a := aLo; a <= aHi; a++ {
				for b := max(a, bLo); b <= bHi; b++ {
					if c.budget <= 0 {
						return best, true
					}
					if w, ok := c.relocate(segs[a].start, segs[b].end); ok && w.cost == cost && better(w, found) {
						found = &w
					}
				}
			}
			if lo, hi := edge(p, true), edge(p+cost+1, false); hi > lo {
				if c.budget <= 0 {
					return best, true
				}
				if w, left := c.relocateAll(lo, hi); len(left) == 0 && w.cost == cost && better(w, found) {
					found = &w
				}
			}
		}
		if found != nil {
			return *found, false
		}
	}
	return best, false
}
