package rackmodel

import (
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

// The controller's tests (they were controlplane/simrack's): the rack model configured as the
// controller's test rack (ctlRack): two lock servers of one core, six clients of one worker each
// doing one acquisition at a time, a small switch program (64 locks, 4 x 64 slots), 10µs links,
// 1s leases, and the controller's periods of tens of milliseconds (allocation every 200ms). They
// run the controller's core under load, loss and failures for seconds of virtual time and check
// every history with package history (exclusion, fencing and, where the acceptance order is
// known, FIFO).

var (
	ctlSeedFlag = flag.Uint64("ctl.seed", 0, "run the controller's randomized tests with this seed only")
	ctlVerbose  = flag.Bool("ctl.log", false, "log the controllers' decisions")
)

// ctlSeeds returns the seeds a randomized controller test runs: n of them (one under the race
// detector), or -ctl.seed.
func ctlSeeds(n int) []uint64 {
	if *ctlSeedFlag != 0 {
		return []uint64{*ctlSeedFlag}
	}
	if raceEnabled {
		n = 1
	}
	var out []uint64
	for i := 1; i <= n; i++ {
		out = append(out, uint64(i))
	}
	return out
}

// picker chooses a client's next lock, mode and priority.
type picker func(r *rand.Rand, now time.Duration) (uint32, wire.Mode, uint8)

// ctlRack is the controller's test rack: every parameter but the workload.
type ctlRack struct {
	Config
	pick        picker
	hold, think func(r *rand.Rand) time.Duration
}

// pickSource is a client of the controller's test rack: one lock per transaction, held for hold,
// then think before the next one.
type pickSource struct {
	rng  *rand.Rand
	c    *ctlRack
	lock [1]client.LockSpec
}

func (s *pickSource) Next(now time.Duration, t *Txn) {
	l, m, prio := s.c.pick(s.rng, now)
	s.lock[0] = client.LockSpec{Lock: l, Mode: m}
	t.Locks, t.Priority = append(t.Locks[:0], s.lock[0]), prio
	t.Hold, t.Pause = s.c.hold(s.rng), s.c.think(s.rng)
}

func ctlConfig(seed uint64) *ctlRack {
	c := &ctlRack{Config: Config{Seed: seed, Record: true, Params: Params{
		Clients: 6, Workers: 1, Servers: 2, ServerCores: 1,
		// The links cost 10µs; nothing else costs (1ns: the smallest cost that is not a default).
		ServerCPU: time.Nanosecond, ClientCPU: time.Nanosecond, HostLatency: time.Nanosecond, LinkGbps: 1e6,
		Propagation: 10 * time.Microsecond, SwitchLatency: time.Nanosecond, PassLatency: time.Nanosecond,
		Lease: time.Second, RetryTimeout: 20 * time.Millisecond, MaxAttempts: -1, GiveUp: 20 * time.Second,
		SweepPeriod: 50 * time.Millisecond, PingPeriod: 50 * time.Millisecond, DeadAfter: ctlcore.DefaultDeadAfter,
		LeaseMargin: 50 * time.Millisecond, PollInterval: 5 * time.Millisecond, AllocPeriod: 200 * time.Millisecond,
		Hysteresis: 0.3, AdminDelay: 50 * time.Microsecond, Sizing: dataplane.Sizing{Locks: 64, PartBits: 6}, MaxRegion: 8,
	}, Alloc: AllocSpec{Slots: 64*4 - 4}},
		pick:  hot,
		hold:  func(r *rand.Rand) time.Duration { return time.Duration(200+r.IntN(1800)) * time.Microsecond },
		think: func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(1000)) * time.Microsecond },
	}
	if *ctlVerbose {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return c
}

// newCtlRack builds the rack of c and lets its clients start.
func newCtlRack(t *testing.T, c *ctlRack, setup func(*Rack)) *Rack {
	t.Helper()
	cfg := c.Config
	cfg.Source = func(w int) Source { return &pickSource{rng: rand.New(rand.NewPCG(c.Seed, uint64(w+1))), c: c} }
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(r)
	}
	r.Start()
	return r
}

// hot is a contended workload: four hot locks (mostly exclusive, priorities 0 and 1) and a few
// cold ones.
func hot(r *rand.Rand, _ time.Duration) (uint32, wire.Mode, uint8) {
	lock := uint32(100 + r.IntN(4))
	if r.IntN(8) == 0 {
		lock = uint32(1000 + r.IntN(16))
	}
	return lock, wire.Mode(min(r.IntN(4), 1)), uint8(r.IntN(2))
}

// shifting is a workload whose hot set changes every period: hot locks move into the switch and
// cold ones out while the clients run. Locks 100-131 are the candidates, four hot at a time;
// a tenth of the requests go to cold locks 1000-1059; a third are shared; priorities 0 and 1.
func shifting(period time.Duration) picker {
	return func(r *rand.Rand, now time.Duration) (uint32, wire.Mode, uint8) {
		phase := int(now / period)
		lock := uint32(100 + (phase*4)%32 + r.IntN(4))
		if r.IntN(10) == 0 {
			lock = uint32(1000 + r.IntN(60))
		}
		return lock, wire.Mode(min(r.IntN(3), 1)), uint8(r.IntN(2))
	}
}

// spread is a workload over 48 locks, each hot enough to go into the switch.
func spread(r *rand.Rand, _ time.Duration) (uint32, wire.Mode, uint8) {
	return uint32(200 + r.IntN(48)), wire.Mode(min(r.IntN(4), 1)), uint8(r.IntN(2))
}

// every runs fn every d of virtual time.
func every(r *Rack, d time.Duration, fn func()) {
	var tick func()
	tick = func() {
		fn()
		r.at(r.k.Now()+int64(d), tick)
	}
	r.at(r.k.Now()+int64(d), tick)
}

// evicting evicts one of the hot locks that is in the switch every d.
func evicting(d time.Duration) func(*Rack) {
	return func(r *Rack) {
		rng := rand.New(rand.NewPCG(r.cfg.Seed, 99))
		every(r, d, func() { r.Evict(uint32(100 + rng.IntN(4))) })
	}
}

// ctlCheck checks the history (abandoned acquisitions allowed; FIFO against the acceptance order
// when fifo).
func ctlCheck(r *Rack, fifo bool) []history.Violation {
	return r.Check(history.Options{AllowAbandoned: true}, fifo)
}

func ctlReport(t *testing.T, r *Rack, vs []history.Violation, seed uint64, name string) {
	t.Helper()
	p := max(r.Primary(), 0)
	st := r.Controller(p).Stats()
	c := r.Counters()
	t.Logf("seed %d: acquired %d (switch grants %d, server grants %d), rejected %d, lost %d, abandoned %d, dropped %d, "+
		"duplicated %d, stray %d; moves in %d out %d aborted %d, barriers %d, force-releases %d, periods %d, failovers %d",
		seed, c.Granted, c.SwitchGrants, c.ServerGrants, c.Rejects, c.LeasesLost, c.Abandoned, c.Dropped, c.Duplicated,
		c.Stray, st.MovesIn, st.MovesOut, st.MovesAborted, st.Barriers, st.ForceReleases, st.Periods, st.Failovers)
	if len(vs) > 0 {
		for i, v := range vs {
			if i < 10 {
				t.Error(v)
			}
		}
		t.Errorf("%d violations (rerun: go test ./testbed/rackmodel -run '%s' -ctl.seed=%d -ctl.log)", len(vs), name, seed)
	}
}

// TestMigrationsUnderLoad: the hot set moves every 600ms, so locks move into the switch and back
// out while six clients take them under 5% loss and 5% duplication. Every acquisition is checked:
// exclusion, fencing order and FIFO against the rack's acceptance order (the switch's accept log
// merged with the servers').
func TestMigrationsUnderLoad(t *testing.T) {
	for _, seed := range ctlSeeds(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := ctlConfig(seed)
			c.Params.Loss, c.Params.Dup = 0.05, 0.05
			c.pick = shifting(600 * time.Millisecond)
			r := newCtlRack(t, c, nil)
			r.Run(4 * time.Second)
			ctlReport(t, r, ctlCheck(r, true), seed, "TestMigrationsUnderLoad")
			st, cn := r.Controller(0).Stats(), r.Counters()
			if st.MovesIn < 8 || st.MovesOut < 4 || cn.SwitchGrants == 0 || cn.ServerGrants == 0 {
				t.Errorf("too little happened: %+v, %+v", st, cn)
			}
		})
	}
}

// TestEvictionsUnderLoad: hot, contended locks are taken out of the switch every 120ms while
// clients queue for them (and the allocator brings them back): every move out pauses, waits for
// the server's push-backs, drains, and hands q2 over in order. Checked with FIFO.
func TestEvictionsUnderLoad(t *testing.T) {
	for _, seed := range ctlSeeds(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := ctlConfig(seed)
			c.Params.Loss, c.Params.Dup = 0.02, 0.02
			r := newCtlRack(t, c, evicting(120*time.Millisecond))
			r.Run(4 * time.Second)
			ctlReport(t, r, ctlCheck(r, true), seed, "TestEvictionsUnderLoad")
			if st := r.Controller(0).Stats(); st.MovesOut < 10 {
				t.Errorf("only %d moves out", st.MovesOut)
			}
		})
	}
}

// slowServerLinks makes push-backs linger: one-slot regions (overflow and push-back all the time)
// and 3ms between the switch and the servers, and the controller talks to the servers on a
// management network of its own (so that its own requests do not follow the push-backs).
func slowServerLinks(c *ctlRack) {
	c.Params.MaxRegion = 1
	c.Params.ServerPropagation = 3 * time.Millisecond
	c.Params.OutOfBandAdmin = true
}

// TestEvictionsSlowServerLinks is TestEvictionsUnderLoad where push-backs are in flight for a
// long time when a lock is paused: the barrier must wait for them (its negative control is
// skip-barrier in TestControllerNegativeControls).
func TestEvictionsSlowServerLinks(t *testing.T) {
	for _, seed := range ctlSeeds(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := ctlConfig(seed)
			slowServerLinks(c)
			r := newCtlRack(t, c, evicting(60*time.Millisecond))
			r.Run(3 * time.Second)
			ctlReport(t, r, ctlCheck(r, true), seed, "TestEvictionsSlowServerLinks")
		})
	}
}

// TestControllerNegativeControls runs the controller's core with one rule broken at a time
// (ctlcore.Mutation, TestingKnobs.Mutation) in a scenario that exercises it; the checker must
// report each.
func TestControllerNegativeControls(t *testing.T) {
	if raceEnabled {
		t.Skip("single-goroutine simulation: the negative controls run without the race detector (make test's second pass)")
	}
	restart := func(r *Rack) {
		r.at(r.k.Now()+int64(1500*time.Millisecond), func() { r.RestartSwitch(20 * time.Millisecond) })
	}
	for _, tc := range []struct {
		name  string
		m     ctlcore.Mutation
		setup func(*Rack)
		cfg   func(*ctlRack)
		fifo  bool
	}{
		{"skip-drain", ctlcore.MutationSkipDrain, evicting(60 * time.Millisecond), nil, false},
		{"skip-barrier", ctlcore.MutationSkipBarrier, evicting(60 * time.Millisecond), slowServerLinks, true},
		{"skip-token-base", ctlcore.MutationSkipTokenBase, nil, nil, false},
		{"skip-floor", ctlcore.MutationSkipFloor, evicting(60 * time.Millisecond), nil, false},
		{"skip-yield-drain", ctlcore.MutationSkipYieldDrain, evicting(60 * time.Millisecond), nil, false},
		{"skip-recovery-wait", ctlcore.MutationSkipRecoveryWait, restart, func(c *ctlRack) {
			c.hold = func(r *rand.Rand) time.Duration { return time.Duration(50+r.IntN(100)) * time.Millisecond }
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caught := 0
			for _, seed := range ctlSeeds(3) {
				c := ctlConfig(seed)
				c.TestingKnobs.Mutation = tc.m
				if tc.cfg != nil {
					tc.cfg(c)
				}
				r := newCtlRack(t, c, tc.setup)
				r.Run(3 * time.Second)
				vs := ctlCheck(r, tc.fifo)
				rules := map[string]int{}
				for _, v := range vs {
					rules[v.Rule]++
				}
				t.Logf("seed %d: %d violations %v; %+v", seed, len(vs), rules, r.Counters())
				if len(vs) > 0 {
					caught++
				}
			}
			if caught == 0 {
				t.Errorf("mutation %s was not caught", tc.name)
			}
		})
	}
}

// ctlFailureCheck checks a run with failures: exclusion and fencing (not FIFO: requests the
// failure lost are accepted again later, out of their first order), and progress after the
// failure.
func ctlFailureCheck(t *testing.T, r *Rack, seed uint64, name string, after time.Duration) {
	t.Helper()
	ctlReport(t, r, ctlCheck(r, false), seed, name)
	late := 0
	for _, e := range r.History() {
		if e.Kind == history.Granted && e.At.Sub(epoch) > after {
			late++
		}
	}
	if late == 0 {
		t.Errorf("nothing granted after the failure")
	}
}

// TestSwitchRestart: the switch restarts under load (its state lost). The controller programs it
// again, waits out the leases the old switch may have granted, hands its locks to their servers
// above the old switch's tokens, and later moves them back in.
func TestSwitchRestart(t *testing.T) {
	for _, seed := range ctlSeeds(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := ctlConfig(seed)
			c.Params.Loss = 0.02
			r := newCtlRack(t, c, nil)
			r.Run(1500 * time.Millisecond)
			before := r.Controller(0).SwitchLockIDs()
			r.RestartSwitch(100 * time.Millisecond)
			failAt := r.Now()
			r.Run(6 * time.Second)
			st := r.Controller(0).Stats()
			ctlFailureCheck(t, r, seed, "TestSwitchRestart", failAt+3*time.Second)
			if len(before) == 0 || st.BringUps < 2 || st.Recovered == 0 || len(r.Controller(0).SwitchLockIDs()) == 0 {
				t.Errorf("switch locks before %v, after %v; %+v", before, r.Controller(0).SwitchLockIDs(), st)
			}
		})
	}
}

// TestServerDeath: server 1 dies under load; the controller stops pinging it, waits for its
// controller lease to run out, routes its address to its standby, hands the standby the dead
// server's epoch and a grace, and moves server 1's switch locks out and back in through the
// standby.
func TestServerDeath(t *testing.T) {
	for _, seed := range ctlSeeds(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := ctlConfig(seed)
			c.Params.Standbys = true
			c.Params.ServerLease = 300 * time.Millisecond
			r := newCtlRack(t, c, nil)
			r.Run(1500 * time.Millisecond)
			if err := r.FailServer(0); err != nil {
				t.Fatal(err)
			}
			failAt := r.Now()
			r.Run(7 * time.Second)
			st := r.Controller(0).Stats()
			ctlFailureCheck(t, r, seed, "TestServerDeath", failAt+4*time.Second)
			if st.Failovers != 1 || st.ServerDeaths != 1 {
				t.Errorf("failovers %d deaths %d", st.Failovers, st.ServerDeaths)
			}
		})
	}
}

// TestControllerDeath: the primary controller dies in the middle of the moves of a shifting
// workload; the backup takes over from what the switch and the servers hold (a paused entry is a
// move out to finish, a resident lock without an entry goes back to its server) with a newer
// term.
func TestControllerDeath(t *testing.T) {
	for _, seed := range ctlSeeds(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := ctlConfig(seed)
			c.Backup = true
			c.pick = shifting(300 * time.Millisecond)
			r := newCtlRack(t, c, nil)
			r.Run(1450 * time.Millisecond)
			r.KillController(50 * time.Millisecond)
			r.Run(4 * time.Second)
			ctlReport(t, r, ctlCheck(r, true), seed, "TestControllerDeath")
			b := r.Controller(1)
			if b.Phase() != ctlcore.Running || b.Term() <= r.Controller(0).Term() || b.Stats().MovesIn == 0 {
				t.Errorf("backup %s term %d (old %d), %+v", b.Phase(), b.Term(), r.Controller(0).Term(), b.Stats())
			}
		})
	}
}

// TestCrashedHolderSwept: a client takes a hot switch lock and never releases it; the lease
// sweep force-releases it once its lease ran out in the switch, and the others get the lock.
func TestCrashedHolderSwept(t *testing.T) {
	c := ctlConfig(1)
	c.Params.Lease = 300 * time.Millisecond
	r := newCtlRack(t, c, nil)
	r.Run(1500 * time.Millisecond)
	r.CrashWorker(0)
	r.Run(3 * time.Second)
	ctlReport(t, r, ctlCheck(r, true), 1, "TestCrashedHolderSwept")
	if st := r.Controller(0).Stats(); st.ForceReleases == 0 {
		t.Errorf("no force-release: %+v", st)
	}
}

// TestSwitchRestartPrimacyMoves: the switch restarts; the backup wins the election first (it
// reconnected first, as in testbed/softrack), programs the fresh switch and starts recovering the
// lost switch's locks, then the primary takes over again in the middle of that recovery. It finds
// those locks resident at their servers without a switch entry and must hand them back only after
// the leases and above the lost switch's tokens (it used to adopt them at once with floor 0, as if
// they were the end of a move out: fencing violations; this test fails without
// ctlcore's recoverOrphans).
func TestSwitchRestartPrimacyMoves(t *testing.T) {
	for _, seed := range ctlSeeds(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := ctlConfig(seed)
			c.Backup = true
			r := newCtlRack(t, c, nil)
			r.Run(1500 * time.Millisecond)
			before := r.Controller(0).SwitchLockIDs()
			r.RestartSwitch(100 * time.Millisecond)
			failAt := r.Now()
			// Scheduled after RestartSwitch's own promotion of controller 0 at the same instant.
			r.at(r.k.Now()+int64(100*time.Millisecond), func() {
				r.SetPrimary(0, false)
				r.SetPrimary(1, true)
			})
			r.at(r.k.Now()+int64(400*time.Millisecond), func() {
				r.SetPrimary(1, false)
				r.SetPrimary(0, true)
			})
			r.Run(6 * time.Second)
			ctlFailureCheck(t, r, seed, "TestSwitchRestartPrimacyMoves", failAt+3*time.Second)
			b, p := r.Controller(1).Stats(), r.Controller(0).Stats()
			if len(before) == 0 || b.BringUps != 1 || p.Recovered == 0 || r.Controller(0).Phase() != ctlcore.Running {
				t.Errorf("switch locks before %v; backup %+v; primary %s %+v", before, b, r.Controller(0).Phase(), p)
			}
		})
	}
}

// TestServerDeathSharesBarriers: a server dies with many of its locks in the switch; the
// failover moves them all out at once, and their barriers through the server's staging entry
// are shared (a barrier covers every move that asked for one before it started) instead of one
// each, taken one at a time (seconds for hundreds of locks: the software rack's Figure 15
// stalled on it). The history is checked as in TestServerDeath.
func TestServerDeathSharesBarriers(t *testing.T) {
	for _, seed := range ctlSeeds(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := ctlConfig(seed)
			c.pick = spread
			c.Params.Standbys = true
			c.Params.ServerLease = 300 * time.Millisecond
			r := newCtlRack(t, c, nil)
			r.Run(1500 * time.Millisecond)
			before := r.Controller(0).Stats()
			if err := r.FailServer(0); err != nil {
				t.Fatal(err)
			}
			failAt := r.Now()
			r.Run(7 * time.Second)
			st := r.Controller(0).Stats()
			ctlFailureCheck(t, r, seed, "TestServerDeathSharesBarriers", failAt+4*time.Second)
			if st.Failovers != 1 {
				t.Fatalf("failovers %d", st.Failovers)
			}
			outs, barriers := st.MovesOut-before.MovesOut, st.Barriers-before.Barriers
			t.Logf("after the death: %d moves out, %d barriers", outs, barriers)
			if outs < 8 {
				t.Fatalf("only %d moves out after the death: the test needs many switch locks", outs)
			}
			// One barrier each would be as many barriers as moves out (the allocator's own
			// moves of the surviving server, later, share less).
			if barriers*4 > outs*3 {
				t.Errorf("%d barriers for %d moves out: the failover's barriers were not shared", barriers, outs)
			}
		})
	}
}

// TestFailoverOutlivesController: server 1 is cut off (not dead: it comes back later with its
// state) and the primary fails it over to its standby; then the primary dies and the backup,
// which never made the failover, takes over; the switch restarts, under the backup (after it
// took over from the switch's routes) or as it takes over (it never sees those routes). The
// backup must keep server 1's address at the standby (ctlcore's learnServing and locate): the
// old server, back on the network, is never routed to or pinged again, so its controller lease
// stays lapsed and it grants nothing. Before ctlcore's fix the backup's bring-up routed the
// address back to the old server, whose pings renewed its lease: it granted with its old epoch
// beside the standby. (It was controlplane/simrack's.)
func TestFailoverOutlivesController(t *testing.T) {
	for _, atTakeover := range []bool{false, true} {
		for _, seed := range ctlSeeds(2) {
			t.Run(fmt.Sprintf("restart-at-takeover=%v/%d", atTakeover, seed), func(t *testing.T) {
				c := ctlConfig(seed)
				c.Backup = true
				c.Params.Standbys = true
				c.Params.ServerLease = 300 * time.Millisecond
				r := newCtlRack(t, c, nil)
				r.Run(1500 * time.Millisecond)
				var old *server
				for _, sv := range r.servers {
					if sv.idx == 0 && !sv.standby {
						old = sv
					}
				}
				if err := r.FailServer(0); err != nil {
					t.Fatal(err)
				}
				r.Run(2 * time.Second)
				if st := r.Controller(0).Stats(); st.Failovers != 1 {
					t.Fatalf("primary: failovers %d", st.Failovers)
				}
				r.KillController(50 * time.Millisecond)
				if !atTakeover {
					r.Run(time.Second)
				}
				r.RestartSwitch(100 * time.Millisecond)
				if err := r.HealServer(0); err != nil { // the cut heals: the old server is back, with its state
					t.Fatal(err)
				}
				grants := old.core.Stats().Grants
				failAt := r.Now()
				r.Run(4 * time.Second)
				ctlFailureCheck(t, r, seed, "TestFailoverOutlivesController", failAt+2*time.Second)
				b := r.Controller(1).Stats()
				if b.FailoversLearned != 1 || b.Failovers != 0 || b.BringUps != 1 {
					t.Errorf("backup: %+v", b)
				}
				if g := old.core.Stats().Grants; g != grants {
					t.Errorf("the old server 1 granted %d times after it came back", g-grants)
				}
			})
		}
	}
}
