package wire_test

import (
	"testing"

	"github.com/netlock-go/netlock/wire"
)

func TestLockStatRoundTrip(t *testing.T) {
	in := []wire.LockStat{{Lock: 1, Requests: 2, Overflows: 3, Depth: 4, Declared: 5},
		{Lock: 0xFFFFFFFF, Requests: 1 << 31, Overflows: 7, Depth: 65535}}
	var b []byte
	for _, s := range in {
		b = wire.AppendLockStat(b, s)
	}
	if len(b) != len(in)*wire.LockStatLen {
		t.Fatalf("%d bytes", len(b))
	}
	out, err := wire.ParseLockStats(nil, b, len(in))
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if out[i] != in[i] {
			t.Errorf("record %d: %+v, want %+v", i, out[i], in[i])
		}
	}
	if _, err := wire.ParseLockStats(nil, b[:len(b)-1], len(in)); err != wire.ErrBody {
		t.Errorf("short body: %v", err)
	}
	if _, err := wire.ParseLockStats(nil, b, wire.MaxLockStats+1); err != wire.ErrBody {
		t.Errorf("too many records: %v", err)
	}
	ids, err := wire.ParseLockIDs(nil, []byte{0, 0, 0, 7, 0xff, 0xff, 0xff, 0}, 2)
	if err != nil || len(ids) != 2 || ids[0] != 7 || ids[1] != 0xffffff00 {
		t.Errorf("ids %v %v", ids, err)
	}
	if _, err := wire.ParseLockIDs(nil, []byte{1, 2, 3}, 1); err != wire.ErrBody {
		t.Errorf("short ids: %v", err)
	}
}

func TestReservedLocks(t *testing.T) {
	for l, want := range map[uint32]bool{0: false, wire.ReservedLockBase - 1: false, wire.ReservedLockBase: true,
		0xFFFFFFFF: true} {
		if wire.IsReservedLock(l) != want {
			t.Errorf("IsReservedLock(%#x) != %v", l, want)
		}
	}
}

func FuzzParseLockStats(f *testing.F) {
	f.Add(wire.AppendLockStat(nil, wire.LockStat{Lock: 9, Requests: 1}), 1)
	f.Add([]byte{}, 3)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		out, err := wire.ParseLockStats(nil, b, n)
		if err != nil {
			return
		}
		var back []byte
		for _, s := range out {
			back = wire.AppendLockStat(back, s)
		}
		if string(back) != string(b[:n*wire.LockStatLen]) {
			t.Fatalf("round trip differs")
		}
		_, _ = wire.ParseLockIDs(nil, b, n)
	})
}
