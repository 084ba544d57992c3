package lockcore

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// TestUnreadStats: a lock's AdminStats counts reach TopLocks exactly once, whether or not its
// state was freed (idle retention, or evicted at MaxLocks) before the read. Each case also runs on
// a Core with mutantUnreadForgotten, the behaviour before the unread store (counts freed with the
// state): the negative control must lose exactly the counts of the freed states.
func TestUnreadStats(t *testing.T) {
	sec := int64(time.Second)
	type step struct {
		at   int64
		op   wire.Op
		lock uint32
		txn  uint64
	}
	pair := func(at int64, lock uint32, txn uint64) []step {
		return []step{{at, wire.OpAcquire, lock, txn}, {at, wire.OpRelease, lock, txn}}
	}
	cases := []struct {
		name     string
		maxLocks int
		steps    []step
		readAt   int64
		want     map[uint32]uint32 // requests+overflows reported per lock
		wantLost map[uint32]uint32 // what the negative control reports instead
	}{{
		// recovery_interrupted's case: busy at the start of the interval, freed just before the read.
		name:     "freed by idle retention",
		steps:    append(pair(0, 100, 1), pair(0, 100, 2)...),
		readAt:   sec,
		want:     map[uint32]uint32{100: 4},
		wantLost: map[uint32]uint32{},
	}, {
		name:     "still idle, not freed",
		steps:    pair(0, 100, 1),
		readAt:   sec - 1,
		want:     map[uint32]uint32{100: 2},
		wantLost: map[uint32]uint32{100: 2},
	}, {
		name:     "freed and used again",
		steps:    append(pair(0, 5, 1), append(pair(sec, 5, 2), pair(2*sec+sec/2, 5, 3)...)...),
		readAt:   3 * sec,
		want:     map[uint32]uint32{5: 6},
		wantLost: map[uint32]uint32{5: 2},
	}, {
		name:     "evicted at MaxLocks",
		maxLocks: 1,
		steps:    append(pair(0, 1, 1), pair(sec/2, 2, 2)...),
		readAt:   sec / 2,
		want:     map[uint32]uint32{1: 2, 2: 2},
		wantLost: map[uint32]uint32{2: 2},
	}, {
		name: "overflows",
		steps: []step{{0, wire.OpOverflow, 9, 1}, {0, wire.OpOverflow, 9, 2},
			{0, wire.OpQueueEmpty, 9, 0}},
		readAt:   2 * sec,
		want:     map[uint32]uint32{9: 2},
		wantLost: map[uint32]uint32{},
	}}
	for _, tc := range cases {
		for _, forget := range []bool{false, true} {
			cfg := Config{IdleRetention: time.Second, MaxLocks: tc.maxLocks}
			want := tc.want
			if forget {
				cfg.TestingKnobs.mutant = mutantUnreadForgotten
				want = tc.wantLost
			}
			c := mustCore(t, cfg)
			for _, s := range tc.steps {
				c.Expire(s.at, nil)
				r := &Request{From: clientAddr(1)}
				r.Op, r.Lock, r.Txn, r.Mode, r.Slots = s.op, s.lock, s.txn, wire.Exclusive, 2
				if s.op == wire.OpRelease {
					if info, ok := c.Inspect(s.lock); ok && len(info.Holders) > 0 {
						r.Token = info.Holders[0].Token
					}
				}
				c.Step(s.at, r, nil)
			}
			c.Expire(tc.readAt, nil)
			got := map[uint32]uint32{}
			for _, st := range c.TopLocks(nil, wire.MaxLockStats) {
				got[st.Lock] = st.Requests + st.Overflows
			}
			if !mapsEqual(got, want) {
				t.Errorf("%s (forget %v): reported %v, want %v", tc.name, forget, got, want)
			}
			if again := c.TopLocks(nil, wire.MaxLockStats); len(again) != 0 {
				t.Errorf("%s (forget %v): reported twice: %v", tc.name, forget, again)
			}
			if st := c.Stats(); st.Unread != 0 || st.UnreadDropped != 0 {
				t.Errorf("%s (forget %v): unread %d dropped %d after the read", tc.name, forget, st.Unread, st.UnreadDropped)
			}
		}
	}
}

func mapsEqual(a, b map[uint32]uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestUnreadStatsConserved: under random traffic over many locks, idle retention and reads at
// random times, every request a Core counts is reported by exactly one TopLocks (k large enough
// for all) or dropped at the store's bound, counted: reported + UnreadDroppedRequests equals the
// requests stepped (every request here is counted: long leases, no replays). With the default
// bound nothing is dropped; with a bound of 8 some are.
func TestUnreadStatsConserved(t *testing.T) {
	for _, maxUnread := range []int{0, 8} {
		rng := rand.New(rand.NewPCG(1, uint64(maxUnread)))
		c := mustCore(t, Config{IdleRetention: 100 * time.Millisecond, MaxUnreadStats: maxUnread, ReplayWindow: -1,
			DefaultLease: time.Hour, MaxLease: time.Hour})
		var stepped, reported uint64
		var now int64
		type grant struct{ txn, token uint64 }
		held := map[uint32]grant{}
		var txn uint64
		for round := range 2000 {
			now += int64(rng.IntN(20)) * int64(time.Millisecond)
			c.Expire(now, nil)
			lock := uint32(rng.IntN(300))
			r := &Request{From: clientAddr(1)}
			r.Lock, r.Mode = lock, wire.Exclusive
			if g, ok := held[lock]; ok {
				r.Op, r.Txn, r.Token = wire.OpRelease, g.txn, g.token
				delete(held, lock)
			} else {
				txn++
				r.Op, r.Txn = wire.OpAcquire, txn
			}
			out := c.Step(now, r, nil)
			stepped++
			if len(out) != 1 || (r.Op == wire.OpAcquire) != (out[0].Msg.Op == wire.OpGrant) {
				t.Fatalf("%v: answered %v", r.Fields, out)
			}
			if r.Op == wire.OpAcquire {
				held[lock] = grant{txn, out[0].Msg.Token}
			}
			if round%97 == 0 {
				for _, st := range c.TopLocks(nil, 1<<20) {
					reported += uint64(st.Requests) + uint64(st.Overflows)
				}
			}
		}
		for _, st := range c.TopLocks(nil, 1<<20) {
			reported += uint64(st.Requests) + uint64(st.Overflows)
		}
		st := c.Stats()
		if reported+st.UnreadDroppedRequests != stepped {
			t.Errorf("max unread %d: %d requests stepped, %d reported + %d dropped", maxUnread, stepped, reported,
				st.UnreadDroppedRequests)
		}
		if maxUnread == 0 && st.UnreadDropped != 0 {
			t.Errorf("default bound: %d dropped", st.UnreadDropped)
		}
		if maxUnread == 8 && st.UnreadDropped == 0 {
			t.Errorf("bound 8 never reached: the test does not exercise it")
		}
	}
}

// TestUnreadStatsKeepsBusiest: at the bound the store keeps the busiest freed locks, whatever
// their order.
func TestUnreadStatsKeepsBusiest(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for range 200 {
		n := 1 + rng.IntN(40)
		max := 1 + rng.IntN(10)
		u := unreadStats{max: max}
		var all []wire.LockStat
		var droppedN, droppedReq uint64
		for i := range n {
			s := wire.LockStat{Lock: uint32(i), Requests: uint32(1 + rng.IntN(50))}
			all = append(all, s)
			if d, ok := u.add(s); ok {
				droppedN++
				droppedReq += statTotal(&d)
			}
		}
		got := u.drain(nil)
		if len(got) != min(n, max) || int(droppedN) != n-len(got) {
			t.Fatalf("n %d max %d: kept %d, dropped %d", n, max, len(got), droppedN)
		}
		var keptReq, allReq uint64
		minKept := uint64(1 << 62)
		for _, s := range got {
			keptReq += statTotal(&s)
			minKept = min(minKept, statTotal(&s))
		}
		for _, s := range all {
			allReq += statTotal(&s)
		}
		if keptReq+droppedReq != allReq {
			t.Fatalf("kept %d + dropped %d != %d", keptReq, droppedReq, allReq)
		}
		// Kept: the busiest. Every lock not kept has at most the least busy kept lock's count.
		kept := map[uint32]bool{}
		for _, s := range got {
			kept[s.Lock] = true
		}
		for _, s := range all {
			if !kept[s.Lock] && statTotal(&s) > minKept {
				t.Fatalf("dropped lock %d (%d) busier than a kept one (%d)", s.Lock, statTotal(&s), minKept)
			}
		}
		if u.len() != 0 || len(u.pos) != 0 {
			t.Fatalf("not empty after drain")
		}
	}
}
