package rackmodel

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/history"
)

// failureRun runs a small rack through a switch restart and then a server failure (the Figure 15
// timeline, shortened), with the whole history recorded, and returns the rack and the times of
// the failures.
type failureRun struct {
	r                 *Rack
	restart, failure  time.Duration
	resident          map[uint32]bool // the locks in the switch when it restarted
	contended         bool            // the server failed while a fresh holder had waiters
	failed            int             // the server that failed
	afterRestart      Counters
	beforeServerFails Counters
	movesOut          uint64 // the controller's moves out before the server failed
}

func runFailures(t *testing.T, seed uint64, knobs TestingKnobs, think time.Duration, slots int) *failureRun {
	t.Helper()
	p := small()
	p.ThinkTime = think
	p.Standbys = true
	if think > 0 {
		p.Lease = 100 * time.Millisecond // a waiter's late grant is still valid (not after its deadline)
	}
	r, err := New(Config{Params: p, Phase: testbed.PhaseTPCCHigh, Seed: seed, Record: true, TestingKnobs: knobs,
		Alloc: AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: slots}})
	if err != nil {
		t.Fatal(err)
	}
	x := &failureRun{r: r, resident: map[uint32]bool{}}
	allocate := func() {
		t.Helper()
		if err := r.Quiesce(100*time.Millisecond + 20*think); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Allocate(time.Second); err != nil {
			t.Fatal(err)
		}
		r.Start()
	}
	r.Start()
	r.Run(5 * time.Millisecond)
	allocate()
	for _, l := range r.Controller(0).SwitchLockIDs() {
		x.resident[l] = true
	}
	r.Run(5 * time.Millisecond)
	x.restart = r.Now()
	r.RestartSwitch(2 * time.Millisecond)
	r.Run(30 * time.Millisecond)
	x.afterRestart = r.Counters()
	// The controller's next allocation puts the hot locks back into the switch.
	r.Run(3 * time.Millisecond)
	allocate()
	r.Run(3 * time.Millisecond)
	// Fail a server at the dangerous moment if there is one within 60ms: one of its locks has
	// waiters and a holder granted less than 1ms ago (who holds on through the failover);
	// server 1 otherwise.
	p = r.Params()
	x.failed = 1
	for end := r.Now() + 60*time.Millisecond; r.Now() < end && !x.contended; {
		r.Run(100 * time.Microsecond)
		now := int64(r.Now())
		for _, sv := range r.servers {
			if sv.standby {
				continue
			}
			for _, l := range serverLocks(sv) {
				in, _ := sv.core.Inspect(l)
				if len(in.Waiters) > 0 && len(in.Holders) > 0 &&
					now-(in.Holders[len(in.Holders)-1].Deadline-int64(p.Lease)) < int64(time.Millisecond) {
					x.contended, x.failed = true, sv.idx
				}
			}
		}
	}
	x.beforeServerFails = r.Counters()
	x.movesOut = r.Controller(0).Stats().MovesOut
	x.failure = r.Now()
	if err := r.FailServer(x.failed); err != nil {
		t.Fatal(err)
	}
	r.Run(40 * time.Millisecond)
	return x
}

// serverLocks returns the locks sv's core has state for.
func serverLocks(sv *server) []uint32 {
	var ls []uint32
	for i := range sv.core.Shards() {
		sh := sv.core.ShardOf(uint32(i))
		sh.Lock()
		ls = append(ls, sh.Core().Locks()...)
		sh.Unlock()
	}
	return ls
}

// TestFailures: through a switch restart and a lock server failure the checked history has no
// violation of exclusion or fencing; nothing of the restarted switch's locks is granted before
// the leases are waited out; the server's locks are served again by its standby after its
// grace; the rack ends with its locks in a consistent place and every worker can finish.
func TestFailures(t *testing.T) {
	seed := testSeed(t)
	x := runFailures(t, seed, TestingKnobs{}, 0, 1000)
	r := x.r
	if err := r.Quiesce(200 * time.Millisecond); err != nil {
		dumpBusy(t, r)
		t.Fatal(err)
	}
	if v := r.Violations(); len(v) > 0 {
		t.Fatalf("online checker: %d violations, first %v", len(v), v[0])
	}
	if v := history.Check(r.History(), history.Options{}); len(v) > 0 {
		t.Fatalf("history.Check: %d violations, first %v", len(v), v[0])
	}
	ev := r.Events()
	var log strings.Builder
	for _, e := range ev {
		log.WriteString(e.At.String() + " " + e.What + "\n")
	}
	t.Logf("events:\n%s", log.String())
	find := func(prefix string, from time.Duration) (time.Duration, bool) {
		for _, e := range ev {
			if e.At >= from && strings.HasPrefix(e.What, prefix) {
				return e.At, true
			}
		}
		return 0, false
	}
	detected, ok1 := find("programming the switch from scratch", x.restart)
	adopted, ok2 := find("switch restart recovered", x.restart)
	dead, ok3 := find("failing over to the standby", x.failure)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("missing control-plane events")
	}
	p := r.Params()
	if w := 2*p.Lease + p.LeaseMargin; adopted-detected < w || adopted-detected > w+time.Millisecond {
		t.Errorf("locks adopted %v after the restart was detected, want the longest lease + margin %v (+ the adopts)",
			adopted-detected, w)
	}
	if d := dead - x.failure; d > time.Duration(p.DeadAfter+2)*p.PingPeriod+p.LeaseMargin {
		t.Errorf("server failed over %v after it failed", d)
	}
	// No grant of a lock the switch held between the restart and the end of the wait (the
	// servers adopt the locks one by one from then on).
	var early int
	for _, e := range r.History() {
		at := e.At.Sub(epoch)
		if e.Kind == history.Granted && x.resident[e.Lock] && at > x.restart+p.RetryTimeout &&
			at < detected+2*p.Lease+p.LeaseMargin {
			early++
			t.Logf("early grant at %v: %v", at, e)
		}
	}
	if early > 0 {
		t.Errorf("%d grants of the restarted switch's locks before their leases were waited out", early)
	}
	if len(x.resident) == 0 {
		t.Fatal("no lock was in the switch when it restarted")
	}
	c := r.Counters()
	if got := c.Sub(x.beforeServerFails); got.Txns == 0 || r.Controller(0).Stats().MovesOut == x.movesOut {
		t.Errorf("after the server failure: %d transactions, no lock moved out of the switch", got.Txns)
	}
	if st := r.Controller(0).Stats(); st.Failovers != 1 || st.Recovered == 0 {
		t.Errorf("controller: %d failovers, %d locks recovered after the restart", st.Failovers, st.Recovered)
	}
	if c.SwitchDropped == 0 || c.ServerDropped == 0 {
		t.Errorf("the failures dropped nothing: switch %d, server %d", c.SwitchDropped, c.ServerDropped)
	}
}

// TestFailureNegativeControls: without the waits the same runs violate exclusion, and both
// checkers see it.
func TestFailureNegativeControls(t *testing.T) {
	for _, tc := range []struct {
		name  string
		knobs TestingKnobs
		think time.Duration
		slots int
	}{
		{"no recovery wait after a switch restart", TestingKnobs{Mutation: ctlcore.MutationSkipRecoveryWait}, 0, 1000},
		// The hot locks stay on the servers, and holders think long enough (under a long lease)
		// that a waiter's retransmission reaches the standby while the dead server's holder
		// still holds.
		{"no takeover grace after a server failure", TestingKnobs{NoTakeoverGrace: true}, 30 * time.Millisecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seed := testSeed(t)
			x := runFailures(t, seed, tc.knobs, tc.think, tc.slots)
			r := x.r
			if tc.knobs.NoTakeoverGrace && !x.contended {
				t.Fatal("the server never had a fresh holder with waiters")
			}
			_ = r.Quiesce(200 * time.Millisecond)
			if v := r.Violations(); !hasRule(v, "exclusion") {
				t.Errorf("online checker: no exclusion violation (%d violations)", len(v))
			}
			if v := history.Check(r.History(), history.Options{}); !hasRule(v, "exclusion") {
				t.Errorf("history.Check: no exclusion violation (%d violations)", len(v))
			}
		})
	}
}

func dumpBusy(t *testing.T, r *Rack) {
	for _, w := range r.workers {
		if w.state == wIdle || w.state == wPausing {
			continue
		}
		var lock uint32
		if w.i < len(w.txn.Locks) {
			lock = w.txn.Locks[w.i].Lock
		}
		place, srv := r.Controller(0).LockPlace(lock)
		var info string
		for _, sv := range r.servers {
			if i, ok := sv.core.Inspect(lock); ok {
				info += fmt.Sprintf(" server %d (standby %v, up %v): %+v", sv.idx+1, sv.standby, sv.m.up, i)
			}
		}
		t.Logf("worker %d state %d lock %d/%d: %d (%s at server %d) held %d pend %d%s", w.gid, w.state, w.i,
			len(w.txn.Locks), lock, place, srv, len(w.held), w.pend, info)
	}
	t.Logf("counters %+v", r.Counters())
}
