package rackmodel

import (
	"testing"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/wire"
)

// classSource draws one-lock exclusive transactions on locks base..base+n-1 in turn, with a
// priority and a tenant, backing off after a reject.
type classSource struct {
	base, n  uint32
	i        uint32
	prio     uint8
	tenant   uint16
	backoff  time.Duration
	hold     time.Duration
	startsAt time.Duration // the first transaction waits until then
}

func (s *classSource) Next(now time.Duration, t *Txn) {
	t.Locks = append(t.Locks[:0], client.LockSpec{Lock: s.base + s.i%s.n, Mode: wire.Exclusive})
	s.i++
	t.Priority, t.Tenant, t.Hold, t.Backoff, t.Pause = s.prio, s.tenant, s.hold, s.backoff, 0
	if now < s.startsAt {
		t.Pause = s.startsAt - now
	}
}

// TestPushBackServesLevelOne answers issue 22's question whether the push-back rule can starve a
// priority level: every worker asks at priority 1 for one lock in the switch; the controller,
// whose statistics do not tell the levels apart, gives level 0 the lock's c_i slots (3) and level
// 1 the minimum region of one, and the switch queue overflows at level 1. Level 1 is served: every
// queue-empty announces level 1's one free slot (in its lease field) and brings back one level-1
// request, and every worker commits. The mirror of TestPushBackFillsLevelZero, where level 0 is
// the used one and a queue-empty brings back up to its region.
func TestPushBackServesLevelOne(t *testing.T) {
	p := small()
	r, err := New(Config{Params: p, Seed: testSeed(t), Alloc: AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: 4},
		Source: func(int) Source { return &classSource{base: 7_000_000, n: 1, prio: 1} }})
	if err != nil {
		t.Fatal(err)
	}
	a, err := warmAllocate(t, r)
	if err != nil || a.Locks != 1 || a.Used != 4 {
		t.Fatalf("allocation %+v, %v: want the one lock in the switch with 4 slots (3 at level 0, 1 at level 1)", a, err)
	}
	c0 := r.Counters()
	w0 := make([]WorkerCounters, len(r.workers))
	for i := range w0 {
		w0[i] = r.WorkerCounters(i)
	}
	r.Start()
	r.Run(3 * time.Millisecond)
	if err := r.Quiesce(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	c := r.Counters().Sub(c0)
	if c.Overflows == 0 || c.QueueEmpties == 0 || c.PushBacks == 0 {
		t.Fatalf("12 level-1 workers on a lock with 3 level-1 slots: %d overflows, %d queue-empties, %d push-backs",
			c.Overflows, c.QueueEmpties, c.PushBacks)
	}
	if c.PushBacks != c.QueueEmpties {
		t.Errorf("%d push-backs for %d queue-empties, want one each (level 1's one slot)", c.PushBacks, c.QueueEmpties)
	}
	if c.SwitchGrants != c.Granted || c.ServerGrants != 0 {
		t.Errorf("grants: %d by the switch, %d by the servers, %d observed: want every one by the switch", c.SwitchGrants,
			c.ServerGrants, c.Granted)
	}
	for i := range w0 {
		if d := r.WorkerCounters(i).Sub(w0[i]); d.Txns == 0 {
			t.Errorf("worker %d starved: %+v", i, d)
		}
	}
	for _, e := range conservationErrors(r, r.Counters()) {
		t.Error(e)
	}
	if v := r.Violations(); len(v) != 0 {
		t.Errorf("%d violations, first %v", len(v), v[0])
	}
}

// TestTenantQuota: the controller installs Config.Tenants as the switch's tenant meters at
// bring-up (ctlcore.Config.Tenants), the workers send Txn.Tenant, and the switch refuses a
// metered tenant's acquires beyond its rate, quota, while another tenant on the same locks is
// never refused. Negative control: without Config.Tenants nobody is refused.
func TestTenantQuota(t *testing.T) {
	const rate, burst = 100_000.0, 8 // acquires per second of tenant 3
	run := 5 * time.Millisecond
	for _, tc := range []struct {
		name    string
		tenants []ctlcore.Tenant
	}{
		{"metered", []ctlcore.Tenant{{ID: 3, Meter: 1, Rate: rate, Burst: burst}}},
		{"negative control: no meter", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := small()
			half := p.Clients * p.Workers / 2
			r, err := New(Config{Params: p, Seed: testSeed(t), Tenants: tc.tenants,
				Alloc: AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: 1000},
				Source: func(w int) Source {
					tenant := uint16(3)
					if w >= half {
						tenant = 4
					}
					return &classSource{base: 7_100_000 + uint32(w)*4, n: 4, tenant: tenant, backoff: 20 * time.Microsecond}
				}})
			if err != nil {
				t.Fatal(err)
			}
			if a, err := warmAllocate(t, r); err != nil || a.Locks != p.Clients*p.Workers*4 {
				t.Fatalf("allocation %+v, %v: want every lock in the switch", a, err)
			}
			before := make([]WorkerCounters, len(r.workers))
			for i := range before {
				before[i] = r.WorkerCounters(i)
			}
			r.Start()
			r.Run(run)
			if err := r.Quiesce(50 * time.Millisecond); err != nil {
				t.Fatal(err)
			}
			var metered, free WorkerCounters
			for i := range before {
				d := r.WorkerCounters(i).Sub(before[i])
				if i < half {
					metered = metered.Add(d)
				} else {
					free = free.Add(d)
				}
			}
			if free.Rejects != 0 || free.Txns == 0 {
				t.Errorf("tenant 4 (no quota): %+v, want commits and no rejects", free)
			}
			if tc.tenants == nil {
				if metered.Rejects != 0 {
					t.Errorf("tenant 3 without a meter: %d rejects", metered.Rejects)
				}
				return
			}
			// The meter's bucket: at most burst plus rate over the run (the warm-up's rest too).
			if limit := uint64(burst + rate*(run+50*time.Millisecond).Seconds()); metered.Granted > limit {
				t.Errorf("tenant 3: %d grants in %v, above its quota (at most %d)", metered.Granted, run, limit)
			}
			if metered.QuotaRejects == 0 || metered.QuotaRejects != metered.Rejects || metered.Txns == 0 {
				t.Errorf("tenant 3 (metered): %+v, want refusals for quota only, and commits", metered)
			}
			if free.Txns < 2*metered.Txns {
				t.Errorf("tenant 4 committed %d, tenant 3 %d: the quota did not hold tenant 3 back", free.Txns, metered.Txns)
			}
			if v := r.Violations(); len(v) != 0 {
				t.Errorf("%d violations, first %v", len(v), v[0])
			}
		})
	}
}

// TestSizeEveryLevel: Params.SizeEveryLevel reaches the controller (ctlcore.Config.SizeEveryLevel):
// with every worker at priority 1 on one lock, the lock's level 1 gets as many slots as its level
// 0 (c_i each); without it, level 1 gets one (the control), and every queue-empty brings back one
// request (TestPushBackServesLevelOne).
func TestSizeEveryLevel(t *testing.T) {
	for _, every := range []bool{false, true} {
		p := small()
		p.SizeEveryLevel = every
		r, err := New(Config{Params: p, Seed: testSeed(t), Alloc: AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: 1000},
			Source: func(int) Source { return &classSource{base: 7_200_000, n: 1, prio: 1} }})
		if err != nil {
			t.Fatal(err)
		}
		a, err := warmAllocate(t, r)
		if err != nil || a.Locks != 1 {
			t.Fatalf("every level %v: allocation %+v, %v: want the lock in the switch", every, a, err)
		}
		res, err := r.sw.readLocks()
		if err != nil {
			t.Fatal(err)
		}
		var sizes [2]uint16
		for _, l := range res.Locks {
			if l.Lock == 7_200_000 {
				sizes = [2]uint16{l.Regions[0].Size, l.Regions[1].Size}
			}
		}
		switch {
		case sizes[0] < 2:
			t.Errorf("every level %v: regions %v: want level 0 sized by the queue of 12 workers", every, sizes)
		case every && sizes[1] != sizes[0]:
			t.Errorf("every level: regions %v, want level 1 as level 0", sizes)
		case !every && sizes[1] != 1:
			t.Errorf("control: regions %v, want level 1 of one slot", sizes)
		}
	}
}
