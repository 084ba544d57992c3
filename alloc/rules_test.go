package alloc

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// rulesInstance draws up to 5 locks over 2 levels (some with demand at one level only) with
// c in 1..3, integer rates 0..20, and a pool of 0..14 slots.
func rulesInstance(seed uint64) ([]Item, int) {
	r := rand.New(rand.NewPCG(seed, 0x12))
	var items []Item
	for lock := range 1 + r.IntN(5) {
		for level := range 2 {
			if r.IntN(3) > 0 {
				items = append(items, Item{Lock: uint32(lock), Level: level, Rate: float64(r.IntN(21)), Contention: 1 + r.IntN(3)})
			}
		}
	}
	return items, r.IntN(15)
}

// bruteRules is the best value (exact) of any allocation that follows r: each lock out, or in
// with MinRegion..min(c, MaxRegion) slots at each level with demand and MinRegion at the others.
func bruteRules(items []Item, slots int, r Rules) *big.Rat {
	byLock := map[uint32][]int{}
	var locks []uint32
	for i, it := range items {
		if _, ok := byLock[it.Lock]; !ok {
			locks = append(locks, it.Lock)
		}
		byLock[it.Lock] = append(byLock[it.Lock], i)
	}
	best := new(big.Rat)
	s := make([]int, len(items))
	var lockRec func(k, left int)
	lockRec = func(k, left int) {
		if k == len(locks) {
			if v := exactValue(items, s); v.Cmp(best) > 0 {
				best = v
			}
			return
		}
		lockRec(k+1, left) // out
		idx := byLock[locks[k]]
		entry := r.MinRegion * (r.Levels - len(idx)) // levels without demand
		var levelRec func(j, left int)
		levelRec = func(j, left int) {
			if j == len(idx) {
				lockRec(k+1, left)
				return
			}
			i := idx[j]
			for n := r.MinRegion; n <= max(r.MinRegion, capped(items[i].Contention, r.MaxRegion)) && n <= left; n++ {
				s[i] = n
				levelRec(j+1, left-n)
			}
			s[i] = 0
		}
		if entry <= left {
			levelRec(0, left-entry)
		}
	}
	lockRec(0, slots)
	return best
}

// shareSlots maps shares back onto items.
func shareSlots(items []Item, shares []Share) []int {
	got := map[key]int{}
	for _, sh := range shares {
		got[key{sh.Lock, sh.Level}] = sh.Slots
	}
	s := make([]int, len(items))
	for i, it := range items {
		s[i] = got[key{it.Lock, it.Level}]
	}
	return s
}

// plainRules is the simpler greedy for the negative comparison: r/c order, a lock's entry
// charged when its first slot part comes (no entry parts).
func plainRules(items []Item, slots int, r Rules) []Share {
	groups, grpOf := groupItems(items)
	var parts []part
	for i, it := range items {
		if it.Rate > 0 {
			parts = append(parts, part{item: int32(i), n: capped(it.Contention, r.MaxRegion), w: it.Rate, c: it.Contention, lock: it.Lock, level: it.Level, grp: grpOf[i]})
		}
	}
	slices.SortFunc(parts, byValue)
	return fillRules(parts, nil, nil, groups, items, slots, r)
}

// TestAllocateWithoutMinIsKnapsack: without MinRegion and MaxRegion, Allocate is Knapsack over
// every (lock, level), whatever the levels and the hysteresis.
func TestAllocateWithoutMinIsKnapsack(t *testing.T) {
	for k := range instances(3000) {
		seed := *flagSeed + uint64(k)
		r := rand.New(rand.NewPCG(seed, 0x31))
		items, slots := rulesInstance(seed)
		items = withHeld(items, slots, r)
		h := []float64{0, 0.5}[r.IntN(2)]
		want := Knapsack(items, slots, h)
		if got := shareSlots(items, Allocate(items, slots, h, Rules{Levels: 2})); !slices.Equal(got, want) {
			t.Fatalf("seed %d: Allocate %v, Knapsack %v", seed, got, want)
		}
	}
}

// TestAllocateMaxRegionOptimal: a cap on regions keeps the problem a fractional knapsack (one
// more bound per item), and Allocate stays optimal: brute force, exact.
func TestAllocateMaxRegionOptimal(t *testing.T) {
	n := instances(1000)
	for k := range n {
		seed := *flagSeed + uint64(k)
		items, slots := rulesInstance(seed)
		rules := Rules{Levels: 2, MaxRegion: 2}
		shares := Allocate(items, slots, 0, rules)
		if err := checkRules(shares, slots, rules); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if got, want := exactValue(items, shareSlots(items, shares)), bruteRules(items, slots, rules); got.Cmp(want) != 0 {
			t.Fatalf("seed %d: value %s, optimum %s (items %+v, S=%d)", seed, got, want, items, slots)
		}
	}
	t.Logf("Allocate with MaxRegion 2 equals the brute-force optimum on %d instances", n)
}

// TestAllocateMinRegion measures the greedy under netlock.p4's minimum region (a fixed charge
// per lock) against the brute-force optimum: it never beats it (a check of both), follows the
// rules, and is optimal at least as often as the plain greedy without entry parts. The figures
// go to the package doc.
func TestAllocateMinRegion(t *testing.T) {
	n := instances(3000)
	rules := Rules{Levels: 2, MinRegion: 1}
	var optimal, plainOptimal int
	worst, plainWorst := 1.0, 1.0
	var example string
	for k := range n {
		seed := *flagSeed + uint64(k)
		items, slots := rulesInstance(seed)
		best := bruteRules(items, slots, rules)
		ratio := func(shares []Share) (float64, bool) {
			if err := checkRules(shares, slots, rules); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			v := exactValue(items, shareSlots(items, shares))
			if v.Cmp(best) > 0 {
				t.Fatalf("seed %d: value %s beats the brute-force optimum %s", seed, v, best)
			}
			if best.Sign() == 0 {
				return 1, true
			}
			f, _ := new(big.Rat).Quo(v, best).Float64()
			return f, v.Cmp(best) == 0
		}
		f, ok := ratio(Allocate(items, slots, 0, rules))
		if ok {
			optimal++
		} else if f < worst {
			worst = f
			example = fmt.Sprintf("seed %d: %.3f of the optimum (items %+v, S=%d)", seed, f, items, slots)
		}
		pf, pok := ratio(plainRules(items, slots, rules))
		if pok {
			plainOptimal++
		}
		plainWorst = min(plainWorst, pf)
	}
	if optimal < plainOptimal {
		t.Fatalf("entry parts made the greedy worse: optimal in %d instances, plain greedy %d", optimal, plainOptimal)
	}
	t.Logf("MinRegion 1, 2 levels, %d instances (seeds %d..%d): optimal in %d (%.1f%%), worst %.3f of the optimum; the plain greedy: optimal in %d (%.1f%%), worst %.3f",
		n, *flagSeed, *flagSeed+uint64(n)-1, optimal, 100*float64(optimal)/float64(n), worst, plainOptimal, 100*float64(plainOptimal)/float64(n), plainWorst)
	if example != "" {
		t.Logf("worst: %s", example)
	}
}
