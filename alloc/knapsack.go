package alloc

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrInvalid is wrapped by every error about bad input (a demand, a region, a Config).
var ErrInvalid = errors.New("invalid input")

// Item is one lock's demand at one priority level on the pool of switch slots.
type Item struct {
	// Lock is the lock id and Level the priority level; items have distinct (Lock, Level).
	// Knapsack ignores Level (each item is on its own); Allocate keeps a lock's levels together.
	Lock  uint32
	Level int
	// Rate is r_i, the lock's request rate (any unit, the same for every item). Finite and >= 0;
	// an item of rate 0 gets no slots (it adds nothing to the objective).
	Rate float64
	// Contention is c_i, the most requests for the lock that are ever outstanding at once. >= 1.
	Contention int
	// Held is the number of slots the lock holds now (0 when it is not in the switch). Only
	// hysteresis reads it: up to min(Held, Contention) of the lock's slots count as incumbent.
	Held int
}

// check reports what is wrong with it, if anything.
func (it Item) check() error {
	switch {
	case math.IsNaN(it.Rate) || math.IsInf(it.Rate, 0) || it.Rate < 0:
		return fmt.Errorf("alloc: lock %d: rate %v: want a finite rate >= 0: %w", it.Lock, it.Rate, ErrInvalid)
	case it.Contention < 1:
		return fmt.Errorf("alloc: lock %d: contention %d: want >= 1: %w", it.Lock, it.Contention, ErrInvalid)
	case it.Held < 0:
		return fmt.Errorf("alloc: lock %d: held %d: want >= 0: %w", it.Lock, it.Held, ErrInvalid)
	case it.Level < 0:
		return fmt.Errorf("alloc: lock %d: level %d: want >= 0: %w", it.Lock, it.Level, ErrInvalid)
	}
	return nil
}

// CheckItems validates items: each one as Item documents, and distinct (Lock, Level).
func CheckItems(items []Item) error {
	seen := make(map[key]struct{}, len(items))
	for _, it := range items {
		if err := it.check(); err != nil {
			return err
		}
		k := key{it.Lock, it.Level}
		if _, dup := seen[k]; dup {
			return fmt.Errorf("alloc: lock %d level %d appears twice: %w", it.Lock, it.Level, ErrInvalid)
		}
		seen[k] = struct{}{}
	}
	return nil
}

// Value is the objective of the paper's problem (1)-(3): the request rate the switch is
// guaranteed to serve, sum of r_i * s_i / c_i, for slots[i] given to items[i]. Slots beyond c_i
// add nothing (a queue of c_i slots already holds every outstanding request).
func Value(items []Item, slots []int) float64 {
	v := 0.0
	for i, it := range items {
		if it.Contention > 0 {
			v += it.Rate * float64(min(slots[i], it.Contention)) / float64(it.Contention)
		}
	}
	return v
}

// part is a run of slots of one item that all have the same value per slot: the incumbent part
// (slots the lock already holds, boosted by hysteresis) or the rest.
type part struct {
	item  int32
	inc   bool
	n     int
	w     float64 // rate * (1+h) for an incumbent part, rate otherwise: value per slot is w / c
	c     int
	lock  uint32
	level int
	order uint64 // Random's key; unused by Knapsack
	grp   int32  // the lock's group (Allocate under Rules)
}

// Knapsack is the paper's Algorithm 3 (MemoryAllocation) with incumbent hysteresis h >= 0: it
// returns the slots s_i of each item for a pool of the given number of slots. Items are taken
// in decreasing r_i / c_i, each getting s_i = min(remaining, c_i); items of rate 0 get nothing.
//
// With h > 0 the up to min(Held_i, c_i) slots a lock already holds are valued at
// (1+h) * r_i / c_i: a lock keeps its slots until another one's ratio exceeds its own by more
// than the factor 1+h. The result is then Algorithm 3 on the boosted values, so its value is at
// least OPT/(1+h), and with unchanged inputs the next call (Held = this result) returns the same
// slots (see the package doc). With h = 0 it is Algorithm 3 exactly (Held only breaks ties, in
// favour of the incumbent).
//
// Ties in value per slot are broken by incumbency, then by lock id: the result is a pure
// function of its inputs. Items must satisfy CheckItems; slots and h must be >= 0.
func Knapsack(items []Item, slots int, h float64) []int {
	parts := make([]part, 0, len(items)+len(items)/8)
	for i, it := range items {
		if it.Rate <= 0 {
			continue
		}
		held := min(it.Held, it.Contention)
		if held > 0 {
			parts = append(parts, part{item: int32(i), inc: true, n: held, w: it.Rate * (1 + h), c: it.Contention, lock: it.Lock, level: it.Level})
		}
		if rest := it.Contention - held; rest > 0 {
			parts = append(parts, part{item: int32(i), n: rest, w: it.Rate, c: it.Contention, lock: it.Lock, level: it.Level})
		}
	}
	slices.SortFunc(parts, byValue)
	return fill(parts, len(items), slots)
}

// byValue orders parts by value per slot w/c, highest first (compared as w_a*c_b against
// w_b*c_a, exact for integer rates below 2^53/c), then incumbents first, then by lock id, then
// by level.
func byValue(a, b part) int {
	l, r := a.w*float64(b.c), b.w*float64(a.c)
	switch {
	case l > r:
		return -1
	case l < r:
		return 1
	case a.inc != b.inc:
		if a.inc {
			return -1
		}
		return 1
	case a.lock != b.lock:
		if a.lock < b.lock {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.level, b.level)
}

// fill walks parts in order, giving each min(remaining, n) slots.
func fill(parts []part, n, slots int) []int {
	out := make([]int, n)
	for _, p := range parts {
		if slots == 0 {
			break
		}
		s := min(slots, p.n)
		out[p.item] += s
		slots -= s
	}
	return out
}

// Random is the strawman of the paper's Figure 13: locks are taken in a random order (not by
// r_i / c_i) and each gets s_i = min(remaining, c_i). The order is a keyed hash of (seed, lock),
// so it is the same in every period for a given seed (no churn between periods) and the
// function stays pure; a lock's levels are taken together, in level order. Items of rate 0 get
// nothing, as in Knapsack; Held is ignored.
func Random(items []Item, slots int, seed uint64) []int {
	return fill(randomParts(items, seed, 0), len(items), slots)
}

func randomParts(items []Item, seed uint64, maxRegion int) []part {
	parts := make([]part, 0, len(items))
	for i, it := range items {
		if it.Rate <= 0 {
			continue
		}
		parts = append(parts, part{item: int32(i), n: capped(it.Contention, maxRegion), lock: it.Lock, level: it.Level,
			order: mix(seed ^ mix(uint64(it.Lock)+1))})
	}
	slices.SortFunc(parts, func(a, b part) int {
		if a.order != b.order {
			return cmp.Compare(a.order, b.order)
		}
		if a.lock != b.lock {
			return cmp.Compare(a.lock, b.lock)
		}
		return cmp.Compare(a.level, b.level)
	})
	return parts
}

// capped is min(n, max), or n if max is 0.
func capped(n, max int) int {
	if max > 0 && n > max {
		return max
	}
	return n
}

// mix is splitmix64's finalizer: a bijection of uint64 with good avalanche.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
