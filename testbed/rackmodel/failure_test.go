package rackmodel

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/alloc"
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
}

func runFailures(t *testing.T, seed uint64, fault Fault, think time.Duration, slots int) *failureRun {
	t.Helper()
	p := small()
	p.ThinkTime = think
	if think > 0 {
		p.Lease = 100 * time.Millisecond // a waiter's late grant is still valid (not after its deadline)
	}
	r, err := New(Config{Params: p, Phase: testbed.PhaseTPCCHigh, Seed: seed, Record: true, Fault: fault})
	if err != nil {
		t.Fatal(err)
	}
	x := &failureRun{r: r, resident: map[uint32]bool{}}
	r.StartControl()
	r.MeasureDemand()
	r.Start()
	r.Run(5 * time.Millisecond)
	if err := r.Quiesce(100*time.Millisecond + 20*think); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Allocate(AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: slots}); err != nil {
		t.Fatal(err)
	}
	for l := range r.installed {
		x.resident[l] = true
	}
	r.Start()
	r.Run(5 * time.Millisecond)
	x.restart = r.Now()
	r.RestartSwitch(2 * time.Millisecond)
	r.Run(30 * time.Millisecond)
	x.afterRestart = r.Counters()
	// The controller's next allocation puts the hot locks back into the switch.
	r.MeasureDemand()
	r.Run(3 * time.Millisecond)
	if err := r.Quiesce(100*time.Millisecond + 20*think); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Allocate(AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: slots}); err != nil {
		t.Fatal(err)
	}
	r.Start()
	r.Run(3 * time.Millisecond)
	// Fail a server at the dangerous moment if there is one within 60ms: one of its locks has
	// waiters and a holder granted less than 1ms ago (who holds on through the failover);
	// server 1 otherwise.
	p = r.Params()
	x.failed = 1
	for end := r.Now() + 60*time.Millisecond; r.Now() < end && !x.contended; {
		r.Run(100 * time.Microsecond)
		now := int64(r.Now())
		for s, h := range r.servers {
			for _, id := range h.idents {
				for _, c := range id.cores {
					for _, l := range c.Locks() {
						in, _ := c.Inspect(l)
						if len(in.Waiters) > 0 && len(in.Holders) > 0 &&
							now-(in.Holders[len(in.Holders)-1].Deadline-int64(p.Lease)) < int64(time.Millisecond) {
							x.contended, x.failed = true, s
						}
					}
				}
			}
		}
	}
	x.beforeServerFails = r.Counters()
	x.failure = r.Now()
	if err := r.FailServer(x.failed); err != nil {
		t.Fatal(err)
	}
	r.Run(40 * time.Millisecond)
	return x
}

// TestFailures: through a switch restart and a lock server failure the checked history has no
// violation of exclusion or fencing; nothing of the restarted switch's locks is granted before
// the leases are waited out; the server's locks are served again by the other server after its
// grace; the rack ends with its locks in a consistent place and every worker can finish.
func TestFailures(t *testing.T) {
	seed := testSeed(t)
	x := runFailures(t, seed, Fault{}, 0, 1000)
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
	find := func(prefix string) (time.Duration, bool) {
		for _, e := range ev {
			if strings.HasPrefix(e.What, prefix) {
				return e.At, true
			}
		}
		return 0, false
	}
	reprog, ok1 := find("switch re-programmed")
	adopted, ok2 := find("leases waited out")
	dead, ok3 := find(fmt.Sprintf("server %d declared dead", x.failed))
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("missing control-plane events")
	}
	p := r.Params()
	if adopted-reprog != 2*p.Lease+p.LeaseMargin {
		t.Errorf("locks adopted %v after the re-programming, want the longest lease + margin %v", adopted-reprog,
			2*p.Lease+p.LeaseMargin)
	}
	if dead-x.failure > time.Duration(p.DeadAfter+1)*p.PingPeriod {
		t.Errorf("server declared dead %v after it failed", dead-x.failure)
	}
	// No grant of a lock the switch held between the restart and the adoption.
	var early int
	for _, e := range r.History() {
		at := e.At.Sub(epoch)
		if e.Kind == history.Granted && x.resident[e.Lock] && at > x.restart+p.RetryTimeout && at < adopted {
			early++
		}
	}
	if early > 0 {
		t.Errorf("%d grants of the restarted switch's locks before their leases were waited out", early)
	}
	if len(x.resident) == 0 {
		t.Fatal("no lock was in the switch when it restarted")
	}
	c := r.Counters()
	if got := c.Sub(x.beforeServerFails); got.Txns == 0 || got.MovedOut == 0 {
		t.Errorf("after the server failure: %d transactions, %d locks moved out of the switch", got.Txns, got.MovedOut)
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
		fault Fault
		think time.Duration
		slots int
	}{
		{"no recovery wait after a switch restart", Fault{NoRecoveryWait: true}, 0, 1000},
		// The hot locks stay on the servers, and holders think long enough (under a long lease)
		// that a waiter's retransmission reaches the new server while the dead server's holder
		// still holds.
		{"no lease wait after a server failure", Fault{NoLeaseWait: true}, 30 * time.Millisecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seed := testSeed(t)
			x := runFailures(t, seed, tc.fault, tc.think, tc.slots)
			r := x.r
			if tc.fault.NoLeaseWait && !x.contended {
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
	for _, c := range r.clients {
		for _, w := range c.workers {
			if w.state != wIdle {
				var lock uint32
				if w.i < len(w.spec) {
					lock = w.spec[w.i].Lock
				}
				_, inSw := r.installed[lock]
				var info string
				for _, id := range r.idents {
					if i, ok := id.cores[r.coreOf(lock)].Inspect(lock); ok {
						info += fmt.Sprintf(" home%d host%d: %+v resident=%v", id.home, id.host.idx, i, id.cores[r.coreOf(lock)].Resident(lock))
					}
				}
				t.Logf("worker %d/%d state %d i %d/%d lock %d (home %d, in switch %v) held %+v pend %d gen %d%s", c.idx, w.idx, w.state, w.i, len(w.spec), lock, r.homeOf(lock), inSw, w.held, w.pend, w.gen, info)
			}
		}
	}
	t.Logf("counters %+v", r.Counters())
}
