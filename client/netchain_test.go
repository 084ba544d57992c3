package client

import (
	"slices"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

func TestNetChainLocks(t *testing.T) {
	const slots = 8
	in := []LockSpec{{100, wire.Shared}, {3, wire.Exclusive}, {100, wire.Shared}, {7, wire.Shared}}
	got := NetChainLocks(slices.Clone(in), slots)
	seen := map[uint32]bool{}
	for i, l := range got {
		switch {
		case l.Mode != wire.Exclusive:
			t.Errorf("%v: not exclusive", l)
		case l.Lock >= slots:
			t.Errorf("%v: beyond %d slots", l, slots)
		case seen[l.Lock]:
			t.Errorf("%v: named twice", l)
		case i > 0 && got[i-1].Lock > l.Lock:
			t.Errorf("%v: out of order in %v", l, got)
		}
		seen[l.Lock] = true
	}
	for _, l := range in {
		if !seen[NetChainSlot(l.Lock, slots)] {
			t.Errorf("lock %d (slot %d) missing from %v", l.Lock, NetChainSlot(l.Lock, slots), got)
		}
	}
	// The slots spread a table's rows: 1000 TPC-C-like ids of one table and warehouse over 64
	// slots use most of them.
	used := map[uint32]bool{}
	for row := range uint32(1000) {
		used[NetChainSlot(3<<28|1<<21|row, 64)] = true
	}
	if len(used) < 60 {
		t.Errorf("1000 rows on %d of 64 slots", len(used))
	}
	if NetChainSlot(12345, 0) != 12345 {
		t.Error("no slots: the lock id itself")
	}
}

func TestNetChainBackoff(t *testing.T) {
	us := time.Microsecond
	b := NetChainBackoff{Base: 5 * us, Max: 40 * us}
	for _, tc := range []struct {
		rejects int
		want    time.Duration
	}{{1, 5 * us}, {2, 10 * us}, {3, 20 * us}, {4, 40 * us}, {5, 40 * us}, {100, 40 * us}} {
		if got := b.Delay(tc.rejects, nil); got != tc.want {
			t.Errorf("reject %d: %v, want %v", tc.rejects, got, tc.want)
		}
		// Equal jitter: in [d/2, d].
		lo := b.Delay(tc.rejects, func(int64) int64 { return 0 })
		hi := b.Delay(tc.rejects, func(n int64) int64 { return n })
		if lo != tc.want/2 || hi != tc.want {
			t.Errorf("reject %d: jitter range [%v, %v], want [%v, %v]", tc.rejects, lo, hi, tc.want/2, tc.want)
		}
	}
	if d := (NetChainBackoff{}).Delay(1, nil); d != DefaultNetChainBackoff.Base {
		t.Errorf("zero backoff: %v, want the default's %v", d, DefaultNetChainBackoff.Base)
	}
}

// TestNetChainPolicy: the two rules' answers, one table. The rollback rule's numbers are
// client.c's: resend at once, timeout max(timeout_slot, 2 x think time) from the run's start (a
// rerun's from the rollback's end), a rerun after r x slot / 400 x 30 µs in integer µs.
func TestNetChainPolicy(t *testing.T) {
	us := time.Microsecond
	fixed := func(v int64) func(int64) int64 { return func(int64) int64 { return v } }
	backoff := NetChainPolicy{}
	custom := NetChainPolicy{Backoff: NetChainBackoff{Base: 5 * us, Max: 40 * us}}
	rb400, rb1000 := NetChainRollbackPolicy(0), NetChainRollbackPolicy(1000*us)
	for _, tc := range []struct {
		name        string
		p           NetChainPolicy
		rejects     int
		resend      time.Duration // jitter nil
		start, prev time.Duration
		rerun       bool
		hold        time.Duration
		deadline    time.Duration // -1: none
		r           int64         // the rerun wait's draw
		wait        time.Duration
		str         string
	}{
		{"backoff, first reject", backoff, 1, 5 * us, 100 * us, 0, false, 0, -1, 9, 0, "backoff 5µs-320µs"},
		{"backoff, 8th reject: at the cap", backoff, 8, 320 * us, 100 * us, 0, false, 0, -1, 9, 0, "backoff 5µs-320µs"},
		{"backoff, custom", custom, 4, 40 * us, 0, 0, true, time.Millisecond, -1, 3, 0, "backoff 5µs-40µs"},
		{"rollback default: at once, 400 µs", rb400, 1, 0, 100 * us, 0, false, 0, 500 * us, 0, 0, "rollback 400µs"},
		{"rollback: never backs off", rb400, 50, 0, 100 * us, 0, false, 0, 500 * us, 1, 30 * us, "rollback 400µs"},
		{"rollback: the largest wait", rb400, 1, 0, 100 * us, 0, false, 0, 500 * us, 9, 270 * us, "rollback 400µs"},
		{"rollback: a rerun's timer runs from the rollback's end", rb400, 1, 0, 900 * us, 700 * us, true, 0, 1100 * us, 5, 150 * us, "rollback 400µs"},
		{"rollback: twice the hold when longer", rb400, 1, 0, 0, 0, false, 300 * us, 600 * us, 2, 60 * us, "rollback 400µs"},
		{"rollback 1000: integer µs", rb1000, 1, 0, 0, 0, false, 0, 1000 * us, 1, 60 * us, "rollback 1ms"},
		{"rollback 1000: r=3", rb1000, 1, 0, 0, 0, false, 0, 1000 * us, 3, 210 * us, "rollback 1ms"},
		{"rollback 1000: r=9", rb1000, 1, 0, 0, 0, false, 0, 1000 * us, 9, 660 * us, "rollback 1ms"},
		{"client.c as written: a burst, the same rule", NetChainClientC(0), 3, 0, 100 * us, 0, false, 0, 500 * us, 4, 120 * us, "rollback 400µs, burst"},
		{"client.c with -O 1000", NetChainClientC(1000 * us), 1, 0, 0, 0, false, 0, 1000 * us, 2, 150 * us, "rollback 1ms, burst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Resend(tc.rejects, nil); got != tc.resend {
				t.Errorf("Resend(%d) = %v, want %v", tc.rejects, got, tc.resend)
			}
			at, ok := tc.p.Deadline(tc.start, tc.prev, tc.rerun, tc.hold)
			if want := tc.deadline >= 0; ok != want || (ok && at != tc.deadline) {
				t.Errorf("Deadline = %v, %v, want %v (ok %v)", at, ok, tc.deadline, want)
			}
			if got := tc.p.RerunWait(fixed(tc.r)); got != tc.wait {
				t.Errorf("RerunWait(r=%d) = %v, want %v", tc.r, got, tc.wait)
			}
			if got := tc.p.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
		})
	}
	// The draw is rand() % 10: RerunWait asks for [0, 9].
	var asked int64 = -1
	rb400.RerunWait(func(n int64) int64 { asked = n; return 0 })
	if asked != 9 {
		t.Errorf("RerunWait draws from [0, %d], want [0, 9]", asked)
	}
}
