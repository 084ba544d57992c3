package alloc

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// W is a level-0 want.
func W(lock uint32, l int) Want { return Want{Lock: lock, Len: l} }

func TestPlanPoolTable(t *testing.T) {
	R := func(lock uint32, start, l int) Region { return Region{Lock: lock, Start: start, Len: l} }
	for _, tc := range []struct {
		name   string
		size   int
		old    []Region
		want   []Want
		layout []Region
		moves  int
		window [2]int
		only   bool // check only the invariants (checkPlan)
	}{
		{name: "empty pool: first fit, largest first",
			size: 10, want: []Want{W(1, 2), W(2, 5), W(3, 2)},
			layout: []Region{R(2, 0, 5), R(1, 5, 2), R(3, 7, 2)}},
		{name: "unchanged stays, delete frees, new goes to the lowest gap that fits",
			size: 10, old: []Region{R(1, 0, 3), R(2, 3, 3), R(3, 6, 2)}, want: []Want{W(1, 3), W(3, 2), W(4, 3)},
			layout: []Region{R(1, 0, 3), R(4, 3, 3), R(3, 6, 2)}},
		{name: "shrink keeps its start",
			size: 10, old: []Region{R(1, 2, 5)}, want: []Want{W(1, 2)},
			layout: []Region{R(1, 2, 2)}},
		{name: "grow in place into the free slots after",
			size: 10, old: []Region{R(1, 0, 2), R(2, 6, 2)}, want: []Want{W(1, 6), W(2, 2)},
			layout: []Region{R(1, 0, 6), R(2, 6, 2)}},
		{name: "grow blocked: placed again by first fit",
			size: 10, old: []Region{R(1, 0, 2), R(2, 2, 2)}, want: []Want{W(1, 4), W(2, 2)},
			layout: []Region{R(2, 2, 2), R(1, 4, 4)}},
		{name: "grow to the end of the pool",
			size: 10, old: []Region{R(1, 6, 2)}, want: []Want{W(1, 4)},
			layout: []Region{R(1, 6, 4)}},
		{name: "fragmented: compaction moves the one lock between two gaps",
			size: 10, old: []Region{R(1, 0, 3), R(2, 4, 2), R(3, 7, 3)}, want: []Want{W(1, 3), W(2, 2), W(3, 3), W(4, 2)},
			layout: []Region{R(1, 0, 3), R(2, 3, 2), R(4, 5, 2), R(3, 7, 3)}, moves: 1, window: [2]int{3, 7}},
		{name: "compaction picks the window with the fewest stayers, not the shortest",
			// gaps of 1 at 2, 4 and 9; new lock of 2: window [2,5) holds lock 2 (one stayer),
			// window [4,10) holds lock 3 (one stayer) but is longer.
			size: 10, old: []Region{R(1, 0, 2), R(2, 3, 1), R(3, 5, 4)}, want: []Want{W(1, 2), W(2, 1), W(3, 4), W(5, 2)},
			layout: []Region{R(1, 0, 2), R(2, 2, 1), R(5, 3, 2), R(3, 5, 4)}, moves: 1, window: [2]int{2, 5}},
		{name: "a resized lock in the window costs no move",
			size: 8, old: []Region{R(1, 0, 2), R(2, 3, 3), R(3, 7, 1)}, want: []Want{W(1, 2), W(2, 2), W(3, 1), W(4, 3)},
			only: true},
		{name: "whole pool",
			size: 6, old: []Region{R(1, 1, 1), R(2, 3, 1), R(3, 5, 1)}, want: []Want{W(1, 1), W(2, 1), W(3, 1), W(4, 3)},
			only: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlanPool(tc.size, tc.old, tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkPlan(tc.size, tc.old, tc.want, p); err != nil {
				t.Fatal(err)
			}
			if tc.only {
				t.Logf("layout %v, moves %d, window %v", p.Regions, p.Moves, p.Window)
				return
			}
			if !slices.Equal(p.Regions, tc.layout) || p.Moves != tc.moves || p.Window != tc.window {
				t.Fatalf("got %v moves %d window %v\nwant %v moves %d window %v", p.Regions, p.Moves, p.Window, tc.layout, tc.moves, tc.window)
			}
		})
	}
}

func TestPlanPoolErrors(t *testing.T) {
	R := func(lock uint32, start, l int) Region { return Region{Lock: lock, Start: start, Len: l} }
	for _, tc := range []struct {
		name string
		size int
		old  []Region
		want []Want
	}{
		{"negative size", -1, nil, nil},
		{"overlap", 10, []Region{R(1, 0, 3), R(2, 2, 2)}, nil},
		{"outside", 10, []Region{R(1, 8, 3)}, nil},
		{"empty region", 10, []Region{R(1, 2, 0)}, nil},
		{"lock twice in the layout", 10, []Region{R(1, 0, 1), R(1, 2, 1)}, nil},
		{"lock wanted twice", 10, nil, []Want{W(1, 1), W(1, 2)}},
		{"negative want", 10, nil, []Want{W(1, -1)}},
		{"too much", 10, nil, []Want{W(1, 6), W(2, 5)}},
	} {
		if _, err := PlanPool(tc.size, tc.old, tc.want); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// checkPlan is the oracle for a PoolPlan: a valid layout holding exactly the wanted lengths,
// and changes that say exactly what differs (moves only for locks whose length is unchanged).
func checkPlan(size int, old []Region, want []Want, p PoolPlan) error {
	if err := CheckLayout(size, p.Regions); err != nil {
		return err
	}
	if !slices.IsSortedFunc(p.Regions, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) }) {
		return fmt.Errorf("regions not sorted: %v", p.Regions)
	}
	w := map[key]int{}
	for _, x := range want {
		if x.Len > 0 {
			w[x.key()] = x.Len
		}
	}
	got := map[key]Region{}
	for _, r := range p.Regions {
		got[r.key()] = r
		if w[r.key()] != r.Len {
			return fmt.Errorf("region %v has %d slots, wants %d", r.key(), r.Len, w[r.key()])
		}
	}
	if len(got) != len(w) {
		return fmt.Errorf("%d locks laid out, %d wanted", len(got), len(w))
	}
	o := map[key]Region{}
	for _, r := range old {
		o[r.key()] = r
	}
	// Replay the changes on the old layout: it must give the new one.
	replay := map[key]Region{}
	for k, v := range o {
		replay[k] = v
	}
	moves := 0
	lastKind := ChangeKind(0)
	for _, c := range p.Changes {
		if c.Kind < lastKind {
			return fmt.Errorf("changes out of order: %v", p.Changes)
		}
		lastKind = c.Kind
		ck := key{c.Lock, c.Level}
		prev, had := replay[ck]
		switch c.Kind {
		case Delete:
			if !had || prev != c.From {
				return fmt.Errorf("delete of %v, layout had %v", c.From, prev)
			}
			delete(replay, ck)
		case Insert:
			if had || c.To.key() != ck {
				return fmt.Errorf("insert of %v which is there (or mislabelled)", ck)
			}
			replay[ck] = c.To
		case Resize, Move:
			if !had || prev != c.From || c.From.key() != ck || c.To.key() != ck {
				return fmt.Errorf("%v of %v, layout had %v", c.Kind, c.From, prev)
			}
			if (c.Kind == Move) != (c.From.Len == c.To.Len) || c.From == c.To {
				return fmt.Errorf("%v from %v to %v", c.Kind, c.From, c.To)
			}
			if c.Kind == Move {
				moves++
			}
			replay[ck] = c.To
		}
	}
	if len(replay) != len(got) {
		return fmt.Errorf("replayed changes give %d locks, layout has %d", len(replay), len(got))
	}
	for k, v := range got {
		if replay[k] != v {
			return fmt.Errorf("%v: replayed %v, layout %v", k, replay[k], v)
		}
	}
	if moves != p.Moves {
		return fmt.Errorf("Moves = %d, %d move changes", p.Moves, moves)
	}
	return nil
}

// poolInstance draws a fragmented pool of 6..24 slots: an old layout with random gaps, and new
// lengths for it (kept, deleted, shrunk or grown) plus new locks, within the pool.
func poolInstance(seed uint64) (int, []Region, []Want) {
	r := rand.New(rand.NewPCG(seed, 0x1a))
	size := 6 + r.IntN(19)
	var old []Region
	for at := r.IntN(3); at < size; {
		l := 1 + r.IntN(4)
		if at+l > size {
			break
		}
		old = append(old, Region{Lock: uint32(len(old)/2 + 1), Level: len(old) % 2, Start: at, Len: l})
		at += l + r.IntN(3)
	}
	var want []Want
	total := 0
	for _, o := range old {
		l := o.Len
		switch r.IntN(6) {
		case 0:
			l = 0
		case 1:
			l = max(1, l-1-r.IntN(2))
		case 2:
			l += 1 + r.IntN(3)
		}
		want = append(want, Want{Lock: o.Lock, Level: o.Level, Len: l})
		total += l
	}
	for n := r.IntN(4); n > 0; n-- {
		want = append(want, Want{Lock: uint32(100 + n), Level: r.IntN(2), Len: 1 + r.IntN(5)})
		total += want[len(want)-1].Len
	}
	r.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
	for total > size { // drop from the end until it fits
		total -= want[len(want)-1].Len
		want = want[:len(want)-1]
	}
	return size, old, want
}

// TestPlanPoolRandom checks the oracle on many random pools.
func TestPlanPoolRandom(t *testing.T) {
	compacted := 0
	n := instances(20000)
	for k := range n {
		seed := *flagSeed + uint64(k)
		size, old, want := poolInstance(seed)
		p, err := PlanPool(size, old, want)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := checkPlan(size, old, want, p); err != nil {
			t.Fatalf("seed %d: %v\nold %v want %v\ngot %v\nre-run: go test ./alloc -run TestPlanPoolRandom -alloc.seed=SEED -alloc.n=1", seed, err, old, want, p.Regions)
		}
		if p.Compacted {
			compacted++
		}
	}
	if compacted == 0 {
		t.Fatal("no instance needed compaction: the generator does not exercise it")
	}
	t.Logf("%d pools, %d needed compaction", n, compacted)
}

// TestPlanPoolStarved: with no budget for the window search, plans are still valid (the best
// of the packed window and the sequential plan) and say that the search was cut short.
func TestPlanPoolStarved(t *testing.T) {
	defer func(f func(int) int) { compactBudget = f }(compactBudget)
	compactBudget = func(int) int { return 0 }
	exhausted := 0
	for k := range instances(5000) {
		seed := *flagSeed + uint64(k)
		size, old, want := poolInstance(seed)
		p, err := PlanPool(size, old, want)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := checkPlan(size, old, want, p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if p.Exhausted {
			exhausted++
		}
	}
	if exhausted == 0 {
		t.Fatal("no plan reported an exhausted search")
	}
}

// firstFitState recomputes steps 1 and 2 of PlanPool independently (first fit by a linear scan
// instead of the segment tree) and returns a compactor over the result (nil when first fit
// placed everything) and PlanPool's own plan.
func firstFitState(size int, old []Region, want []Want) (*compactor, PoolPlan) {
	p, err := PlanPool(size, old, want)
	if err != nil {
		panic(err)
	}
	wantLen := map[key]int{}
	for _, w := range want {
		if w.Len > 0 {
			wantLen[w.key()] = w.Len
		}
	}
	oldSorted := slices.Clone(old)
	slices.SortFunc(oldSorted, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
	stayer := map[key]bool{}
	var layout, pending, unplaced []Region
	inOld := map[key]bool{}
	for i, r := range oldSorted {
		inOld[r.key()] = true
		w, ok := wantLen[r.key()]
		switch {
		case !ok:
		case w == r.Len:
			layout = append(layout, r)
			stayer[r.key()] = true
		case w < r.Len:
			layout = append(layout, Region{r.Lock, r.Level, r.Start, w})
		default:
			limit := size
			for _, n := range oldSorted[i+1:] {
				if _, ok := wantLen[n.key()]; ok {
					limit = n.Start
					break
				}
			}
			if r.Start+w <= limit {
				layout = append(layout, Region{r.Lock, r.Level, r.Start, w})
			} else {
				pending = append(pending, Region{Lock: r.Lock, Level: r.Level, Len: w})
			}
		}
	}
	for _, w := range want {
		if !inOld[w.key()] && w.Len > 0 {
			pending = append(pending, Region{Lock: w.Lock, Level: w.Level, Len: w.Len})
		}
	}
	slices.SortFunc(pending, func(a, b Region) int {
		if a.Len != b.Len {
			return cmp.Compare(b.Len, a.Len)
		}
		return a.key().compare(b.key())
	})
	for _, q := range pending {
		slices.SortFunc(layout, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
		at, done := 0, false
		for _, r := range append(layout, Region{Start: size}) {
			if r.Start-at >= q.Len {
				q.Start = at
				layout = append(layout, q)
				done = true
				break
			}
			at = max(at, r.End())
		}
		if !done {
			unplaced = append(unplaced, q)
		}
	}
	slices.SortFunc(layout, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
	if (len(unplaced) == 0) == p.Compacted {
		panic(fmt.Sprintf("first fit left %v unplaced, PlanPool's window is %v", unplaced, p.Window))
	}
	if len(unplaced) == 0 {
		return nil, p
	}
	var gaps []Region
	at := 0
	st := make([]bool, len(layout))
	for i, r := range layout {
		if r.Start > at {
			gaps = append(gaps, Region{Start: at, Len: r.Start - at})
		}
		at = r.End()
		st[i] = stayer[r.key()]
	}
	if at < size {
		gaps = append(gaps, Region{Start: at, Len: size - at})
	}
	return newCompactor(size, layout, st, newFirstFit(gaps), unplaced, 1<<30), p
}

// bruteWindows tries every window (every run of regions and gaps of the first-fit layout) both
// ways, packed and relocating, and returns the least cost (stayers taken out of place) of any
// feasible one.
func bruteWindows(c *compactor) int {
	need := 0
	for _, u := range c.unplaced {
		need += u.Len
	}
	st := map[key]bool{}
	for i, r := range c.regs {
		st[r.key()] = c.stayer[i]
	}
	segs := segments(c.regs, c.size, st)
	best := -1
	for a := range segs {
		free, cost := 0, 0
		for b := a; b < len(segs); b++ {
			free += segs[b].free
			cost += segs[b].cost
			if free >= need && (best < 0 || cost < best) {
				best = cost
			}
			if w, ok := c.relocate(segs[a].start, segs[b].end); ok && (best < 0 || w.cost < best) {
				best = w.cost
			}
		}
	}
	// Global relocations: between any two stayers (or the pool's ends).
	var bounds []Region
	for i, r := range c.regs {
		if c.stayer[i] {
			bounds = append(bounds, r)
		}
	}
	for p := 0; p <= len(bounds); p++ {
		for q := p; q <= len(bounds); q++ {
			lo, hi := 0, c.size
			if p > 0 {
				lo = bounds[p-1].End()
			}
			if q < len(bounds) {
				hi = bounds[q].Start
			}
			if hi <= lo {
				continue
			}
			if w, left := c.relocateAll(lo, hi); len(left) == 0 && (best < 0 || w.cost < best) {
				best = w.cost
			}
		}
	}
	return best
}

// windowMoves is the number of stayers whose start changes when segs[i..j] is packed from its
// start.
func windowMoves(segs []segment, i, j int) int {
	at, moves := segs[i].start, 0
	for _, s := range segs[i : j+1] {
		if s.free > 0 {
			continue
		}
		if s.cost == 1 && s.start != at {
			moves++
		}
		at += s.end - s.start
	}
	return moves
}

// checkWindows compares the cost of choose's window with every window of every instance that
// needs compaction and returns the first instance where some window takes out fewer stayers.
func checkWindows(choose func(*compactor) window, first uint64, n int) (string, int) {
	checked := 0
	for k := range n {
		seed := first + uint64(k)
		size, old, want := poolInstance(seed)
		c, _ := firstFitState(size, old, want)
		if c == nil {
			continue
		}
		checked++
		got := choose(c)
		if best := bruteWindows(c); got.cost > best || got.moves > got.cost {
			return fmt.Sprintf("seed %d: window [%d,%d) takes out %d stayers (moves %d), the best window %d (old %v want %v)", seed, got.lo, got.hi, got.cost, got.moves, best, old, want), checked
		}
	}
	return "", checked
}

// TestCompactionWindowMinimal proves the compaction minimal among single windows: on every
// instance that needs compaction, brute force over every window, packed or relocating, finds
// none that takes fewer stayers out of place than the plan (which may also be a sequence of
// windows); and PlanPool reports that plan's hull and moves (a stayer placed back at its own
// start is not a move).
func TestCompactionWindowMinimal(t *testing.T) {
	n := instances(20000)
	choose := func(c *compactor) window { w, _ := c.choose(); return w }
	msg, checked := checkWindows(choose, *flagSeed, n)
	if msg != "" {
		t.Fatalf("%s\nre-run: go test ./alloc -run TestCompactionWindowMinimal -alloc.seed=SEED -alloc.n=1", msg)
	}
	for k := range n {
		seed := *flagSeed + uint64(k)
		size, old, want := poolInstance(seed)
		c, p := firstFitState(size, old, want)
		if c == nil {
			if p.Moves != 0 {
				t.Fatalf("seed %d: %d moves without compaction", seed, p.Moves)
			}
			continue
		}
		w, exhausted := c.choose()
		if exhausted || p.Exhausted {
			t.Fatalf("seed %d: budget exhausted on a small pool", seed)
		}
		if hull := [2]int{w.lo, w.hi}; (w.hi > w.lo && hull != p.Window) || w.moves != p.Moves {
			t.Fatalf("seed %d: plan window %v moves %d, recomputed [%d,%d) moves %d", seed, p.Window, p.Moves, w.lo, w.hi, w.moves)
		}
	}
	if checked < n/20 {
		t.Fatalf("only %d of %d instances needed compaction", checked, n)
	}
	t.Logf("%d instances needed compaction; no window moves fewer locks than the chosen one", checked)
}

// TestCompactionNegativeControl: packing the cheapest window without relocating (the simpler
// rule) and taking the leftmost feasible packed window must both be caught by the brute force.
func TestCompactionNegativeControl(t *testing.T) {
	packedOnly := func(c *compactor) window { w, _ := c.packed(); return w }
	leftmost := func(c *compactor) window {
		save := c.unplaced
		need := 0
		for _, u := range save {
			need += u.Len
		}
		segs := segments(c.regs, c.size, c.isStayer)
		free := 0
		for j := range segs {
			free += segs[j].free
			if free >= need {
				cost := 0
				for _, sg := range segs[:j+1] {
					cost += sg.cost
				}
				return window{lo: 0, hi: segs[j].end, cost: cost, moves: windowMoves(segs, 0, j)}
			}
		}
		return window{}
	}
	for name, choose := range map[string]func(*compactor) window{"packed only": packedOnly, "leftmost": leftmost} {
		msg, _ := checkWindows(choose, *flagSeed, max(instances(20000), 2000))
		if msg == "" {
			t.Errorf("%s: passed the minimality check", name)
			continue
		}
		t.Logf("%s: caught: %s", name, msg)
	}
}

// globalMinMoves is the fewest stayers (locks whose length is unchanged) that any layout must
// move: for k = 0, 1, ... it tries every set of k stayers to move and packs them together with
// every other wanted lock (new, resized, grown: free to go anywhere) into the gaps the
// remaining stayers leave, exactly (backtracking bin packing).
func globalMinMoves(size int, old []Region, want []Want) int {
	w := map[key]int{}
	for _, x := range want {
		if x.Len > 0 {
			w[x.key()] = x.Len
		}
	}
	var stayers []Region
	var free []int // lengths of locks placed anywhere
	inOld := map[key]bool{}
	for _, r := range old {
		inOld[r.key()] = true
		if l, ok := w[r.key()]; ok {
			if l == r.Len {
				stayers = append(stayers, r)
			} else {
				free = append(free, l)
			}
		}
	}
	for _, x := range want {
		if !inOld[x.key()] && x.Len > 0 {
			free = append(free, x.Len)
		}
	}
	slices.SortFunc(stayers, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
	n := len(stayers)
	for k := 0; k <= n; k++ {
		found := false
		var rec func(start int, moved []int)
		rec = func(start int, moved []int) {
			if found {
				return
			}
			if len(moved) == k {
				items := slices.Clone(free)
				var gaps []int
				at := 0
				isMoved := map[int]bool{}
				for _, m := range moved {
					isMoved[m] = true
					items = append(items, stayers[m].Len)
				}
				for i, s := range stayers {
					if isMoved[i] {
						continue
					}
					if s.Start > at {
						gaps = append(gaps, s.Start-at)
					}
					at = s.End()
				}
				if at < size {
					gaps = append(gaps, size-at)
				}
				if binPack(items, gaps) {
					found = true
				}
				return
			}
			for i := start; i < n; i++ {
				rec(i+1, append(moved, i))
			}
		}
		rec(0, nil)
		if found {
			return k
		}
	}
	return -1
}

// binPack reports whether items fit into bins of the given capacities.
func binPack(items, bins []int) bool {
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b int) int { return cmp.Compare(b, a) })
	bins = slices.Clone(bins)
	var rec func(i int) bool
	rec = func(i int) bool {
		if i == len(items) {
			return true
		}
		tried := map[int]bool{}
		for b := range bins {
			if bins[b] >= items[i] && !tried[bins[b]] {
				tried[bins[b]] = true
				bins[b] -= items[i]
				if rec(i + 1) {
					return true
				}
				bins[b] += items[i]
			}
		}
		return false
	}
	return rec(0)
}

// TestCompactionAgainstGlobalOptimum measures the window rule against the fewest moves of any
// layout (exponential search; small pools only). The planner can never beat the global optimum
// (that would be a bug in one of the two); how often it matches it is logged for the docs.
func TestCompactionAgainstGlobalOptimum(t *testing.T) {
	n := instances(20000)
	var compacted, optimal, excess, worst int
	for k := range n {
		seed := *flagSeed + uint64(k)
		size, old, want := poolInstance(seed)
		p, err := PlanPool(size, old, want)
		if err != nil {
			t.Fatal(err)
		}
		g := globalMinMoves(size, old, want)
		if p.Moves < g {
			t.Fatalf("seed %d: plan moves %d < global optimum %d: the oracle or the plan is wrong", seed, p.Moves, g)
		}
		if !p.Compacted {
			if g != 0 && p.Moves != 0 {
				t.Fatalf("seed %d: no compaction but %d moves", seed, p.Moves)
			}
			continue
		}
		compacted++
		if p.Moves == g {
			optimal++
		} else {
			excess += p.Moves - g
			worst = max(worst, p.Moves-g)
		}
	}
	t.Logf("%d pools (seeds %d..%d), %d needed compaction: the window plan moved the fewest locks of any layout in %d (%.1f%%); in the others %d extra moves in total, at most %d in one pool",
		n, *flagSeed, *flagSeed+uint64(n)-1, compacted, optimal, 100*float64(optimal)/float64(max(compacted, 1)), excess, worst)
}
