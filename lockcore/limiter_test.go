package lockcore

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// TestSharedLimiterOneQuota (issue 18, item 6): two Cores sharing one SharedLimiter enforce one
// quota: tenant 1 may have 3 requests outstanding and tenant 2 may make 4 acquires a second, at
// the two Cores together. The negative control is the former arrangement, a limiter per Core
// (Config.Quotas), under which the two Cores admit twice as much.
func TestSharedLimiterOneQuota(t *testing.T) {
	quotas := map[uint16]Quota{1: {MaxOutstanding: 3}, 2: {MaxRate: 4}}
	shared, err := NewSharedLimiter(Quota{}, quotas)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		cfg      Config
		out, acq int // admitted of tenant 1's 8 acquires, of tenant 2's 8
	}{
		{"shared limiter", Config{Limiter: shared}, 3, 4},
		{"a limiter per Core (negative control)", Config{Quotas: quotas}, 6, 8},
	} {
		cores := [2]*Core{mustCore(t, tc.cfg), mustCore(t, tc.cfg)}
		admitted := func(tenant uint16, lock uint32) int {
			n := 0
			for i := 0; i < 8; i++ {
				r := &Request{From: clientAddr(1)}
				r.Op, r.Mode, r.Tenant, r.Lock, r.Txn = wire.OpAcquire, wire.Shared, tenant, lock, uint64(i+1)
				out := cores[i%2].Step(int64(i)*int64(time.Millisecond), r, nil)
				if len(out) == 1 && out[0].Msg.Op == wire.OpGrant {
					n++
				} else if len(out) != 1 || out[0].Msg.Status != wire.StatusQuota {
					t.Fatalf("%s: tenant %d: %v", tc.name, tenant, out)
				}
			}
			return n
		}
		if n := admitted(1, 10); n != tc.out {
			t.Errorf("%s: tenant 1 (3 outstanding) had %d of 8 acquires granted, want %d", tc.name, n, tc.out)
		}
		if n := admitted(2, 20); n != tc.acq {
			t.Errorf("%s: tenant 2 (4 a second) had %d of 8 acquires granted, want %d", tc.name, n, tc.acq)
		}
		// A release at one Core frees quota at the other.
		if tc.cfg.Limiter == nil {
			continue
		}
		info, _ := cores[0].Inspect(10)
		r := &Request{From: clientAddr(1)}
		r.Op, r.Lock, r.Txn, r.Token, r.Tenant = wire.OpRelease, 10, info.Holders[0].Txn, info.Holders[0].Token, 1
		cores[0].Step(0, r, nil)
		r.Op, r.Mode, r.Txn, r.Token, r.Lock = wire.OpAcquire, wire.Shared, 100, 0, 11
		if out := cores[1].Step(0, r, nil); len(out) != 1 || out[0].Msg.Op != wire.OpGrant {
			t.Errorf("after a release at Core 0, tenant 1's acquire at Core 1: %v, want a grant", out)
		}
		if n := shared.Outstanding(1); n != 3 {
			t.Errorf("tenant 1 has %d outstanding, want 3", n)
		}
	}
}

// TestSharedLimiterConcurrent: goroutines admitting and giving back requests of one tenant
// through a SharedLimiter never hold more than its MaxOutstanding at once, and within one
// instant (one rate window) never get more than MaxRate admitted. Run it with -race.
func TestSharedLimiterConcurrent(t *testing.T) {
	const max, rate, workers, each = 5, 1000, 8, 2000
	lim, err := NewSharedLimiter(Quota{}, map[uint16]Quota{7: {MaxOutstanding: max}, 8: {MaxRate: rate}})
	if err != nil {
		t.Fatal(err)
	}
	var held, peak, admitted atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if lim.Admit(int64(i), 7) {
					n := held.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					held.Add(-1)
					lim.Leave(7)
				}
				if lim.Admit(1, 8) {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > max || p == 0 {
		t.Errorf("tenant 7: %d requests held at once, want 1..%d", p, max)
	}
	if n := lim.Outstanding(7); n != 0 {
		t.Errorf("tenant 7: %d outstanding after every request left, want 0", n)
	}
	if n := admitted.Load(); n != rate {
		t.Errorf("tenant 8: %d admitted in one window, want %d", n, rate)
	}
}

func TestLimiterConfig(t *testing.T) {
	lim, err := NewSharedLimiter(Quota{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Limiter: lim, Quotas: map[uint16]Quota{1: {MaxRate: 1}}}, "lockcore: quotas and a limiter: the limiter has the quotas"},
		{Config{Limiter: lim, DefaultQuota: Quota{MaxOutstanding: 1}}, "lockcore: quotas and a limiter: the limiter has the quotas"},
		{Config{Quotas: map[uint16]Quota{3: {MaxRate: -1}}}, "lockcore: quota of tenant 3: negative bound"},
		{Config{DefaultQuota: Quota{MaxOutstanding: -1}}, "lockcore: default quota: negative bound"},
	} {
		if _, err := New(tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("New(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := NewSharedLimiter(Quota{MaxRate: -2}, nil); err == nil {
		t.Error("NewSharedLimiter with a negative bound: no error")
	}
}

// TestQuotaWindowClockSkew: of the Cores sharing a limiter, one may read its clock before
// another yet be admitted after it: a now slightly before the window's start counts in that
// window (it used to start a new one, and with several Cores the rate was not bounded); a now a
// second or more before it (a reset clock) starts a new window.
func TestQuotaWindowClockSkew(t *testing.T) {
	q := quotaState{q: Quota{MaxRate: 2}}
	ms := int64(time.Millisecond)
	for i, tc := range []struct {
		now  int64
		want bool
	}{{1000 * ms, true}, {999 * ms, true}, {998 * ms, false}, {1999 * ms, false}, {2000 * ms, true},
		{500 * ms, true}, {600 * ms, true}, {700 * ms, false}} {
		if got := q.admit(tc.now); got != tc.want {
			t.Fatalf("#%d: admit(%v) = %v, want %v", i, time.Duration(tc.now), got, tc.want)
		}
	}
}
