package lockcore

import (
	"testing"

	"github.com/netlock-go/netlock/wire"
)

// TestMembershipScansLinear (issue 18, item 6): queueing n waiters on one lock, each acquire
// followed by a retransmission of it, with retransmissions of the holder's acquire among them,
// then withdrawing every thousandth waiter and releasing the holder (which grants the next
// waiter), compares O(n) entries in all (the scans of locks with up to indexMin members), not
// O(n^2) (every acquire scanned the whole queue for a duplicate: 100k waiters, 0.5 s stalls). It
// counts compared entries, not time. The negative control disables the index: the same work with
// 2000 waiters compares more than n^2/2 entries.
func TestMembershipScansLinear(t *testing.T) {
	const n = 100_000
	if got := queueWork(t, n, 0); got > 20*n {
		t.Errorf("%d waiters: %d entries compared, want at most %d", n, got, 20*n)
	} else {
		t.Logf("%d waiters: %d entries compared (%.1f per waiter)", n, got, float64(got)/n)
	}
	const small = 2000
	if got := queueWork(t, small, -1); got < small*small/2 {
		t.Errorf("without the index, %d waiters: %d entries compared, want more than %d (negative control)",
			small, got, small*small/2)
	} else {
		t.Logf("without the index, %d waiters: %d entries compared", small, got)
	}
}

// queueWork runs TestMembershipScansLinear's sequence with n waiters on a Core whose indexMin knob is k and
// returns the entries compared by membership scans.
func queueWork(t *testing.T, n, k int) uint64 {
	cfg := Config{MaxWaiters: n + 1}
	cfg.TestingKnobs.indexMin = k
	c := mustCore(t, cfg)
	r := &Request{From: clientAddr(1)}
	r.Mode, r.Lock = wire.Exclusive, 7
	var out []Effect
	step := func(op wire.Op, txn, token uint64) []Effect {
		r.Op, r.Txn, r.Token = op, txn, token
		out = c.Step(0, r, out[:0])
		return out
	}
	holder := step(wire.OpAcquire, 1, 0)[0].Msg.Token
	for txn := uint64(2); txn <= uint64(n)+1; txn++ {
		for n := 0; n < 2; n++ { // the acquire and its retransmission
			if len(step(wire.OpAcquire, txn, 0)) != 0 {
				t.Fatalf("txn %d, copy %d: not queued quietly: %v", txn, n, out)
			}
		}
		if txn%5 == 0 {
			// A retransmitted acquire of the holder gets its grant again.
			if e := step(wire.OpAcquire, 1, 0); len(e) != 1 || e[0].Msg.Token != holder {
				t.Fatalf("holder's retransmission: %v", e)
			}
		}
	}
	withdrawn := 0
	for txn := uint64(3); txn <= uint64(n)+1; txn += 1000 {
		withdrawn++
		if e := step(wire.OpRelease, txn, 0); len(e) != 1 || e[0].Msg.Flags&wire.FlagReply == 0 {
			t.Fatalf("withdrawal of txn %d: %v", txn, e)
		}
	}
	if e := step(wire.OpRelease, 1, holder); len(e) != 2 || e[1].Msg.Op != wire.OpGrant || e[1].Msg.Txn != 2 {
		t.Fatalf("release: %v", e)
	}
	if st := c.Stats(); st.Waiters != n-1-withdrawn || st.Holders != 1 {
		t.Fatalf("%d waiters and %d holders left, want %d and 1", st.Waiters, st.Holders, n-1-withdrawn)
	}
	return c.scanned
}

// TestRenumber: a lock whose queue never empties for 2^32 arrivals renumbers its waiters
// instead of wrapping their arrival numbers (the index finds waiters by them).
func TestRenumber(t *testing.T) {
	for _, k := range []int{0, -1} {
		cfg := Config{}
		cfg.TestingKnobs.indexMin = k
		c := mustCore(t, cfg)
		r := &Request{From: clientAddr(1)}
		r.Op, r.Mode, r.Lock = wire.OpAcquire, wire.Exclusive, 3
		var out []Effect
		for txn := uint64(1); txn <= 20; txn++ {
			r.Txn, r.Priority = txn, uint8(txn%3)
			out = c.Step(0, r, out[:0])
			if txn == 10 {
				c.locks.get(3).seq = 1<<32 - 3 // three arrivals before the wrap
			}
		}
		l := c.locks.get(3)
		if l.seq > 20 {
			t.Fatalf("indexMin %d: seq %d after the wrap, want renumbered", k, l.seq)
		}
		for txn := uint64(2); txn <= 20; txn++ {
			if c.waiterAt(l, txn) < 0 {
				t.Fatalf("indexMin %d: txn %d not found after renumbering", k, txn)
			}
		}
		info, _ := c.Inspect(3)
		for i := 1; i < len(info.Waiters); i++ {
			if info.Waiters[i].Priority < info.Waiters[i-1].Priority {
				t.Fatalf("indexMin %d: queue out of priority order: %+v", k, info.Waiters)
			}
		}
	}
}
