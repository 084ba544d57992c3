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
