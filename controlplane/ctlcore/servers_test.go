package ctlcore

import (
	"fmt"
	"testing"
	"time"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// TestLivenessMisses: a ping is missed once unanswered for a period while the switch answered
// a request sent after it; the misses in a row end at an answer.
func TestLivenessMisses(t *testing.T) {
	const period = 10 * time.Millisecond
	type op struct {
		sent, answer int // ms; -1: none
	}
	for _, tc := range []struct {
		name     string
		ops      []op
		now      int
		switchOK int
		want     int
	}{
		{"nothing sent", nil, 100, 100, 0},
		{"one pending, younger than a period", []op{{95, -1}}, 100, 100, 0},
		{"one pending, exactly a period", []op{{90, -1}}, 100, 100, 1},
		{"three unanswered", []op{{70, -1}, {80, -1}, {90, -1}}, 100, 100, 3},
		{"the newest not yet a period old", []op{{70, -1}, {80, -1}, {95, -1}}, 100, 100, 2},
		{"answered resets", []op{{70, -1}, {80, -1}, {-1, 80}, {90, -1}}, 100, 100, 1},
		{"a late answer of an old ping keeps the later misses", []op{{60, -1}, {70, -1}, {80, -1}, {-1, 60}}, 100, 100, 2},
		{"switch silent since before the pings", []op{{70, -1}, {80, -1}, {90, -1}}, 100, 65, 0},
		{"switch answered a request sent after the first", []op{{70, -1}, {80, -1}, {90, -1}}, 100, 75, 1},
		{"an answer of a ping not recorded as pending", []op{{70, -1}, {-1, 75}, {80, -1}}, 100, 100, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l liveness
			for _, o := range tc.ops {
				if o.sent >= 0 {
					l.sent(ms(o.sent))
				}
				if o.answer >= 0 {
					l.answer(ms(o.answer))
				}
			}
			if got := l.misses(ms(tc.now), period, ms(tc.switchOK)); got != tc.want {
				t.Errorf("misses = %d, want %d (pending %v)", got, tc.want, l.pending)
			}
		})
	}
}

// TestLivenessBounded: a server that never answers while the switch is silent leaves at most
// maxPending pings on record.
func TestLivenessBounded(t *testing.T) {
	var l liveness
	for i := range 10 * maxPending {
		l.sent(ms(i))
	}
	if len(l.pending) != maxPending || !l.pending[0].Equal(ms(9*maxPending)) {
		t.Fatalf("%d pending from %v", len(l.pending), l.pending[0])
	}
	if got := l.misses(ms(20*maxPending), time.Millisecond, ms(20*maxPending)); got != maxPending {
		t.Fatalf("misses %d", got)
	}
}

// TestTakeoverGraceTable: the grace and the wait before a server is declared dead.
func TestTakeoverGraceTable(t *testing.T) {
	const maxLease, margin = 2 * time.Second, 50 * time.Millisecond
	for _, tc := range []struct {
		now, lastPing int // ms
		serverLease   time.Duration
		grace, dead   time.Duration
	}{
		// No controller lease: a whole lease from the takeover; declared margin after the last ping.
		{1000, 900, 0, maxLease + margin, 0},
		{1000, 980, 0, maxLease + margin, 30 * time.Millisecond},
		// With one: until the last ping + server lease + max lease + margin; declared dead once
		// the server lease ran out since the last ping (+ margin).
		{1000, 900, 500 * time.Millisecond, 900*time.Millisecond + maxLease + margin - 1000*time.Millisecond + 500*time.Millisecond, 450 * time.Millisecond},
		{1000, 990, 100 * time.Millisecond, 90*time.Millisecond + maxLease + margin, 140 * time.Millisecond},
		// Long after: nothing left to wait.
		{5000, 900, 500 * time.Millisecond, 0, 0},
	} {
		t.Run(fmt.Sprintf("%d/%d/%v", tc.now, tc.lastPing, tc.serverLease), func(t *testing.T) {
			if g := takeoverGrace(ms(tc.now), ms(tc.lastPing), tc.serverLease, maxLease, margin); g != tc.grace {
				t.Errorf("grace %v, want %v", g, tc.grace)
			}
			if d := deadWait(ms(tc.now), ms(tc.lastPing), tc.serverLease, margin); d != tc.dead {
				t.Errorf("dead wait %v, want %v", d, tc.dead)
			}
		})
	}
}

// failoverRun cuts server 1 off at a random moment (it keeps running and may grant until its
// controller lease runs out) and returns the fake rack after its standby took over, when it was
// cut off, when it was suspected, and the last ping sent to it then.
func failoverRun(t *testing.T, m Mutation, seed uint64, replyLoss float64) (r *fakeRack, cut, suspected, lastPing time.Time) {
	t.Helper()
	cfg := testConfig()
	cfg.TestingKnobs.Mutation = m
	r = newFakeRack(t, cfg, seed)
	r.replyLoss = replyLoss
	watch := func() {
		if suspected.IsZero() && r.core.servers[1].suspect {
			suspected, lastPing = r.now, r.core.servers[1].lastPing
		}
	}
	r.run(ms(300), watch)
	if r.core.Phase() != Running {
		t.Fatalf("seed %d: phase %s after 300ms", seed, r.core.Phase())
	}
	cut = ms(300 + r.rng.IntN(100))
	r.run(cut, watch)
	r.serverAt(1).cut = true
	r.run(ms(1500), watch)
	if r.core.Stats().Failovers != 1 || r.serverAt(11).tookOverAt.IsZero() {
		t.Fatalf("seed %d: no failover: %+v", seed, r.core.Stats())
	}
	if r.serverAt(1).heldFrom.IsZero() {
		t.Fatalf("seed %d: the cut-off server still grants at %v", seed, r.now.Sub(t0))
	}
	return r, cut, suspected, lastPing
}

// graceViolation says whether the standby of server 1 may grant before every lease the cut-off
// server may have granted has ended: its last grant is just before its controller lease ran out,
// with the longest lease.
func graceViolation(r *fakeRack) (time.Duration, bool) {
	old, sb := r.serverAt(1), r.serverAt(11)
	leasesEnd := old.heldFrom.Add(r.cfg.Rack.MaxLease)
	first := sb.tookOverAt.Add(sb.grace)
	return leasesEnd.Sub(first), first.Before(leasesEnd)
}

// TestTakeoverGraceCoversLeases: over random cut-off times, message delays and lost ping
// answers, the standby never grants before every lease of the server it replaces could have
// ended; and it does not wait much longer than that (the grace is counted from the last ping
// sent, not from the declaration of death). Negative control: counting the grace from the last
// ping answered is caught (a ping whose answer was lost renewed the server's lease).
func TestTakeoverGraceCoversLeases(t *testing.T) {
	seeds := uint64(200)
	if raceEnabled {
		seeds = 40
	}
	for seed := range seeds {
		r, _, _, lastPing := failoverRun(t, NoMutation, seed, 0.3)
		if by, bad := graceViolation(r); bad {
			t.Fatalf("seed %d (rerun: failoverRun(t, NoMutation, %d, 0.3)): the standby may grant %v before the "+
				"old server's leases end", seed, seed, by)
		}
		sb := r.serverAt(11)
		bound := lastPing.Add(r.cfg.ServerLease + r.cfg.Rack.MaxLease + r.cfg.LeaseMargin + 2*r.maxDelay)
		if sb.tookOverAt.Add(sb.grace).After(bound) {
			t.Fatalf("seed %d: the standby grants from %v, later than the last ping + server lease + max lease + "+
				"margin (%v)", seed, sb.tookOverAt.Add(sb.grace).Sub(t0), bound.Sub(t0))
		}
	}
	t.Run("negative control: grace from the last answer", func(t *testing.T) {
		caught := 0
		for seed := range seeds {
			r, _, _, _ := failoverRun(t, MutationGraceFromAnswer, seed, 0.3)
			if _, bad := graceViolation(r); bad {
				caught++
			}
		}
		t.Logf("caught in %d of %d runs", caught, seeds)
		if caught == 0 {
			t.Fatal("a grace counted from the last answered ping was never caught")
		}
	})
}

// TestDetectionWithinPingPeriods: a server cut off is suspected within DeadAfter + 1 ping
// periods (plus the message delays), however long the shell's admin timeout.
func TestDetectionWithinPingPeriods(t *testing.T) {
	for seed := range uint64(50) {
		r, cut, suspected, _ := failoverRun(t, NoMutation, seed, 0)
		limit := time.Duration(r.cfg.DeadAfter+1)*r.cfg.PingPeriod + 2*r.maxDelay
		if suspected.IsZero() || suspected.Sub(cut) > limit {
			t.Fatalf("seed %d: cut at %v, suspected at %v (limit %v after the cut; admin timeout %v)",
				seed, cut.Sub(t0), suspected.Sub(t0), limit, r.timeout)
		}
		if d := suspected.Sub(cut); d < time.Duration(r.cfg.DeadAfter-1)*r.cfg.PingPeriod {
			t.Fatalf("seed %d: suspected %v after the cut: too early for %d misses", seed, d, r.cfg.DeadAfter)
		}
	}
}

// TestSwitchOutageSuspectsNoServer: while the switch (which carries the pings) answers nothing,
// unanswered pings are not misses: no server is suspected, and both are pinged again after.
func TestSwitchOutageSuspectsNoServer(t *testing.T) {
	cfg := testConfig()
	cfg.ServerLease = 0
	r := newFakeRack(t, cfg, 1)
	r.run(ms(300), nil)
	r.switchDown = true
	r.run(ms(300+int(10*cfg.DeadAfter)*int(cfg.PingPeriod/time.Millisecond)), nil)
	r.switchDown = false
	r.run(ms(1500), nil)
	st := r.core.Stats()
	if st.Suspicions != 0 || st.ServerDeaths != 0 {
		t.Fatalf("suspected during a switch outage: %+v", st)
	}
	for _, n := range r.core.order {
		if !r.core.servers[n].alive {
			t.Errorf("server %d not alive after the outage", n)
		}
	}
}

// TestSwitchOutageEndsWithOtherRequest: the outage ends and the first switch request answered is
// not pingAll's own (a sweep, a probe, a move step sent between two ping ticks), at every offset
// of the recovery within a ping period, with and without a controller lease. The pings lost in
// the outage must not count as misses then either (they were counted, and a healthy server was
// failed over, before the switch's answers were watched for gaps).
func TestSwitchOutageEndsWithOtherRequest(t *testing.T) {
	for _, lease := range []time.Duration{0, 60 * time.Millisecond} {
		for off := 0; off < 20; off++ {
			t.Run(fmt.Sprintf("lease=%v/offset=%dms", lease, off), func(t *testing.T) {
				cfg := testConfig()
				cfg.ServerLease = lease
				r := newFakeRack(t, cfg, uint64(off)+1)
				r.run(ms(300), nil)
				r.switchDown = true
				up := ms(300 + 10*cfg.DeadAfter*int(cfg.PingPeriod/time.Millisecond) + off)
				r.run(up, nil)
				r.switchDown = false
				asked := false
				r.run(ms(1500), func() {
					if !asked && !r.now.Before(up) {
						asked = true
						r.core.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchGetCookie},
							func(dataplane.AdminReply, error) {})
					}
				})
				if st := r.core.Stats(); st.Suspicions != 0 || st.ServerDeaths != 0 {
					t.Fatalf("a server suspected after a switch outage: %+v", st)
				}
			})
		}
	}
}

// TestConfigDeadAfterBound: DeadAfter above the unanswered pings remembered could never be
// reached (no server would ever be suspected), so New refuses it.
func TestConfigDeadAfterBound(t *testing.T) {
	for _, tc := range []struct {
		deadAfter int
		ok        bool
	}{{1, true}, {maxPending, true}, {maxPending + 1, false}, {-1, false}} {
		cfg := testConfig()
		cfg.DeadAfter = tc.deadAfter
		if _, err := New(cfg); (err == nil) != tc.ok {
			t.Errorf("DeadAfter %d: err %v, want ok %v", tc.deadAfter, err, tc.ok)
		}
	}
}
