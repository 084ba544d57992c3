package alloc

import (
	"fmt"
	"slices"
)

// Rules are the data plane's constraints on an allocation. netlock.p4 keeps one pooled queue
// whose regions serve every priority level; a lock in the switch has one region per level, of
// 1..32767 slots (dataplane.MaxRegion; docs/dataplane.md, lock_table):
// Rules{Levels: 2, MinRegion: 1, MaxRegion: 32767}. On netlock switch a release may walk a whole
// region in one packet and the engine bounds the passes per packet, so regions there should stay
// well below 500 slots per level (docs/dataplane.md, "Passes per operation"): a smaller MaxRegion.
type Rules struct {
	// Levels is the number of priority levels, >= 1; items have Level < Levels.
	Levels int
	// MinRegion is the fewest slots a lock in the switch has at every level, even one without
	// demand; 0: a level gets a region only when its demand gets slots.
	MinRegion int
	// MaxRegion caps a region; 0: no cap.
	MaxRegion int
}

func (r Rules) check() error {
	if r.Levels < 1 || r.Levels > 255 {
		return fmt.Errorf("alloc: %d priority levels: want 1..255: %w", r.Levels, ErrInvalid)
	}
	if r.MinRegion < 0 || r.MaxRegion < 0 || (r.MaxRegion > 0 && r.MinRegion > r.MaxRegion) {
		return fmt.Errorf("alloc: region bounds %d..%d: %w", r.MinRegion, r.MaxRegion, ErrInvalid)
	}
	return nil
}

// Share is the number of slots of lock Lock at level Level.
type Share struct {
	Lock  uint32
	Level int
	Slots int
}

// Allocate is Algorithm 3 under Rules, with hysteresis h (see Knapsack): slots are handed out
// in decreasing value per slot, each (lock, level) up to min(c, MaxRegion) slots.
//
// With MinRegion > 0 a lock in the switch has MinRegion slots at every level, so entering
// costs Levels*MinRegion slots (counted towards its levels' shares) whatever they serve: a
// fixed charge. Each lock then has an entry bundle: its entry slots together with its most
// valuable further slots, as many as raise the bundle's value per slot (the usual greedy for a
// knapsack with setup costs). Bundles are ordered with the remaining slot parts by value per
// slot; a bundle whose entry no longer fits is skipped with the rest of its lock. The result
// lists every region the switch needs, including the MinRegion slots of levels without demand,
// ordered by (lock, level).
//
// Without MinRegion this is Algorithm 3 on items capped at MaxRegion, which is optimal (the
// cap is a bound of the same LP). With it no greedy is optimal (see the package doc for how far
// from optimal this one is measured to be).
func Allocate(items []Item, slots int, h float64, r Rules) []Share {
	groups, _ := groupItems(items)
	parts := make([]part, 0, len(items)+len(groups))
	var flat []part // the bundles' parts, back to back
	var bundles []span
	cost := r.MinRegion * r.Levels
	var lockParts []part
	for g, grp := range groups {
		lockParts = lockParts[:0]
		entry, held := 0.0, false
		for _, i := range grp.items {
			it := items[i]
			total := capped(it.Contention, r.MaxRegion)
			hd := min(it.Held, total)
			if r.MinRegion > 0 {
				first := min(r.MinRegion, total)
				boost := 1.0
				if it.Held > 0 {
					boost, held = 1+h, true
				}
				entry += boost * it.Rate * float64(first) / float64(it.Contention)
				total -= first
				hd = max(0, min(hd-first, total))
			}
			if hd > 0 {
				lockParts = append(lockParts, part{item: i, inc: true, n: hd, w: it.Rate * (1 + h), c: it.Contention, lock: it.Lock, level: it.Level, grp: int32(g)})
			}
			if rest := total - hd; rest > 0 {
				lockParts = append(lockParts, part{item: i, n: rest, w: it.Rate, c: it.Contention, lock: it.Lock, level: it.Level, grp: int32(g)})
			}
		}
		if r.MinRegion == 0 {
			parts = append(parts, lockParts...)
			continue
		}
		slices.SortFunc(lockParts, byValue)
		n, k := cost, 0
		for k < len(lockParts) && lockParts[k].w*float64(n) > entry*float64(lockParts[k].c) { // the part's value per slot beats the bundle's
			entry += lockParts[k].w * float64(lockParts[k].n) / float64(lockParts[k].c)
			n += lockParts[k].n
			k++
		}
		bundles = append(bundles, span{int32(len(flat)), int32(len(flat) + k)})
		flat = append(flat, lockParts[:k]...)
		// A bundle's value per slot is w/c = entry/n.
		parts = append(parts, part{item: -int32(len(bundles)), inc: held, n: n, w: entry, c: n, lock: grp.lock, level: -1, grp: int32(g)})
		parts = append(parts, lockParts[k:]...)
	}
	slices.SortFunc(parts, byValue)
	return fillRules(parts, flat, bundles, groups, items, slots, r)
}

// span is the range flat[lo:hi] of a bundle's parts.
type span struct{ lo, hi int32 }

// group is a lock's items with a positive rate, in level order.
type group struct {
	lock  uint32
	items []int32
}

// groupItems groups the items of positive rate by lock (in lock order) and returns each item's
// group (-1 for rate 0).
func groupItems(items []Item) ([]group, []int32) {
	idx := make([]int32, 0, len(items))
	for i, it := range items {
		if it.Rate > 0 {
			idx = append(idx, int32(i))
		}
	}
	slices.SortFunc(idx, func(a, b int32) int {
		return key{items[a].Lock, items[a].Level}.compare(key{items[b].Lock, items[b].Level})
	})
	grpOf := make([]int32, len(items))
	for i := range grpOf {
		grpOf[i] = -1
	}
	var groups []group
	for k := 0; k < len(idx); {
		j := k
		for j < len(idx) && items[idx[j]].Lock == items[idx[k]].Lock {
			grpOf[idx[j]] = int32(len(groups))
			j++
		}
		groups = append(groups, group{lock: items[idx[k]].Lock, items: idx[k:j:j]})
		k = j
	}
	return groups, grpOf
}

// AllocateRandom is Random under Rules: locks in the seeded random order, each level getting
// min(remaining, c, MaxRegion) after the lock's entry (as in Allocate).
func AllocateRandom(items []Item, slots int, seed uint64, r Rules) []Share {
	groups, grpOf := groupItems(items)
	parts := randomParts(items, seed, r.MaxRegion)
	for k := range parts {
		parts[k].grp = grpOf[parts[k].item]
	}
	return fillRules(parts, nil, nil, groups, items, slots, r)
}

// fillRules walks parts in order under r. A part with item -k is the entry bundle of its lock:
// the lock's entry, then the parts flat[bundles[k-1]]. A slot part of a lock not yet in the
// switch brings it in (AllocateRandom has no bundles).
func fillRules(parts, flat []part, bundles []span, groups []group, items []Item, slots int, r Rules) []Share {
	alloc := make([]int, len(items))
	const (
		unseen = iota
		in
		out
	)
	status := make([]uint8, len(groups))
	var phantom []Share // MinRegion slots of levels without an item
	enter := func(g int32) bool {
		if r.MinRegion > 0 {
			cost := r.MinRegion * r.Levels
			if cost > slots {
				status[g] = out
				return false
			}
			slots -= cost
			l := 0
			for _, j := range groups[g].items { // in level order
				for ; l < items[j].Level; l++ {
					phantom = append(phantom, Share{Lock: groups[g].lock, Level: l, Slots: r.MinRegion})
				}
				alloc[j] = r.MinRegion
				l = items[j].Level + 1
			}
			for ; l < r.Levels; l++ {
				phantom = append(phantom, Share{Lock: groups[g].lock, Level: l, Slots: r.MinRegion})
			}
		}
		status[g] = in
		return true
	}
	give := func(p part) {
		i := p.item
		if g := min(slots, p.n, capped(items[i].Contention, r.MaxRegion)-alloc[i]); g > 0 {
			alloc[i] += g
			slots -= g
		}
	}
	for _, p := range parts {
		if slots == 0 {
			break
		}
		switch st := status[p.grp]; {
		case st == out:
			continue
		case p.item < 0:
			if st == unseen && enter(p.grp) {
				b := bundles[-p.item-1]
				for _, q := range flat[b.lo:b.hi] {
					give(q)
				}
			}
			continue
		case st == unseen && !enter(p.grp):
			continue
		}
		give(p)
	}
	shares := make([]Share, 0, len(items)+len(phantom))
	for i, it := range items {
		if alloc[i] > 0 {
			shares = append(shares, Share{Lock: it.Lock, Level: it.Level, Slots: alloc[i]})
		}
	}
	shares = append(shares, phantom...)
	slices.SortFunc(shares, func(a, b Share) int { return key{a.Lock, a.Level}.compare(key{b.Lock, b.Level}) })
	return shares
}
