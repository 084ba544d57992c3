package rackmodel

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/p4"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

var seedFlag = flag.Uint64("rackmodel.seed", 0, "run the randomized rack tests with this seed only (0: a new seed per run, printed on failure)")

// testSeed returns the seed of a randomized test, from -rackmodel.seed or the clock, and logs how to
// run it again when the test fails.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())%1_000_000 + 1
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d (again: go test ./testbed/rackmodel -run '%s' -rackmodel.seed=%d)", seed, t.Name(), seed)
		}
	})
	return seed
}

// small is a rack small enough for the race detector: 3 clients x 4 workers, 2 servers of 2 cores,
// a program with 2048 locks and 4 x 1024 slots.
func small() Params {
	return Params{Clients: 3, Workers: 4, Servers: 2, ServerCores: 2, Sizing: dataplane.Sizing{Locks: 2048, PartBits: 10}}
}

// run is one rack run: warm-up with every lock on the servers, the controller's allocation
// period on the quiesced rack, measured run, quiesce.
type run struct {
	r            *Rack
	alloc        Allocation
	warm, window Counters // the counters of the warm-up and of the run after the allocation
}

func runRack(t *testing.T, cfg Config, strategy alloc.Strategy, slots int, warm, dur time.Duration) *run {
	t.Helper()
	x, err := runRackErr(t, cfg, strategy, slots, warm, dur)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// runRackErr is runRack that returns the error of the last Quiesce (a broken rack may hang).
func runRackErr(t *testing.T, cfg Config, strategy alloc.Strategy, slots int, warm, dur time.Duration) (*run, error) {
	t.Helper()
	cfg.Alloc = AllocSpec{Strategy: strategy, Slots: slots, Seed: 7}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := &run{r: r}
	r.Start()
	r.Run(warm)
	if err := r.Quiesce(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	out.warm = r.Counters()
	if out.alloc, err = r.Allocate(time.Second); err != nil {
		t.Fatal(err)
	}
	r.ResetLatency()
	r.Start()
	r.Run(dur)
	err = r.Quiesce(50 * time.Millisecond)
	out.window = r.Counters().Sub(out.warm)
	return out, err
}

// conservationErrors lists what breaks conservation in counters c of a quiesced rack without
// faults: every acquire answered once, every release acknowledged once, every grant made
// observed once, nothing dropped, refused or sent again.
func conservationErrors(r *Rack, c Counters) []string {
	var errs []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	check(c.AcquiresSent == c.Granted+c.Rejects, "%d acquires sent, %d granted + %d rejected", c.AcquiresSent, c.Granted, c.Rejects)
	check(c.ReleasesSent == c.ReleaseAcks+c.ReleaseRefused, "%d releases sent, %d acknowledged + %d refused", c.ReleasesSent, c.ReleaseAcks, c.ReleaseRefused)
	check(c.SwitchGrants+c.ServerGrants == c.Granted+c.DupAnswers, "%d grants made (switch %d, servers %d), %d observed + %d again",
		c.SwitchGrants+c.ServerGrants, c.SwitchGrants, c.ServerGrants, c.Granted, c.DupAnswers)
	check(c.Acquisitions == c.Granted, "%d locks of committed transactions, %d grants", c.Acquisitions, c.Granted)
	check(c.Retransmits == 0 && c.DupAnswers == 0 && c.Stray == 0, "retransmits %d, answers again %d, stray %d", c.Retransmits, c.DupAnswers, c.Stray)
	check(c.Rejects == 0 && c.ReleaseRefused == 0 && c.Aborts == 0 && c.LeasesLost == 0, "rejects %d, releases refused %d, aborts %d, leases lost %d",
		c.Rejects, c.ReleaseRefused, c.Aborts, c.LeasesLost)
	check(c.EngineErrors == 0 && c.PacketIns == 0 && c.Malformed == 0 && c.Unroutable == 0 && c.ControlRefused == 0,
		"engine errors %d, packet-ins %d, malformed %d, unroutable %d, control refused %d", c.EngineErrors, c.PacketIns,
		c.Malformed, c.Unroutable, c.ControlRefused)
	check(c.Txns > 0 && c.Granted > 0, "nothing committed")
	if d := r.sw.drops(); d != [dataplane.DropReasons]uint64{} {
		errs = append(errs, fmt.Sprintf("the switch dropped packets: %v", d))
	}
	return errs
}

func TestParamsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Params
	}{
		{"clients", Params{Clients: 101}},
		{"workers", Params{Workers: -1}},
		{"servers", Params{Servers: 101}},
		{"cores", Params{ServerCores: 257}},
		{"negative cost", Params{ServerCPU: -1}},
		{"negative think", Params{ThinkTime: -time.Microsecond}},
		{"link rate", Params{LinkGbps: -40}},
		{"region", Params{MaxRegion: dataplane.MaxRegion + 1}},
		{"sizing", Params{Sizing: dataplane.Sizing{PartBits: 17}}},
		{"loss", Params{Loss: 1}},
		{"retry", Params{RetryTimeout: time.Millisecond, MaxRetryTimeout: time.Microsecond}},
		{"negative delay", Params{AdminDelay: -1}},
		{"contention", Params{Contention: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(Config{Params: tc.p}); err == nil {
				t.Errorf("New accepted %+v", tc.p)
			}
		})
	}
	if _, err := New(Config{Params: small(), Phase: "nope"}); err == nil {
		t.Error("New accepted an unknown phase")
	}
	if _, err := New(Config{Params: small(), Alloc: AllocSpec{Slots: small().Sizing.Slots()}}); err == nil {
		t.Error("New accepted an allocation of the whole pool (the controller keeps two staging slots per server)")
	}
	p := PaperParams()
	if p.Clients != 10 || p.Servers != 2 || p.ServerCores != 8 || p.ServerCPU != 444*time.Nanosecond {
		t.Errorf("PaperParams %+v: not the paper's testbed", p)
	}
}

// TestConservation runs every workload with every allocation and checks, on the quiesced rack,
// that every request was answered exactly once, that the switch and the servers made exactly the
// grants the clients observed, that nothing was dropped, and that both the online checker and
// history.Check find no violation of exclusion or fencing in the whole history.
func TestConservation(t *testing.T) {
	phases := []string{testbed.PhaseTPCCLow, testbed.PhaseTPCCHigh, "contended/4", testbed.PhaseShared, testbed.PhaseExclusive}
	if raceEnabled {
		phases = phases[1:3]
	}
	allocs := []struct {
		name     string
		strategy alloc.Strategy
		slots    int
	}{{"servers-only", alloc.StrategyKnapsack, 0}, {"knapsack", alloc.StrategyKnapsack, 400}, {"random", alloc.StrategyRandom, 400}}
	for _, phase := range phases {
		for _, a := range allocs {
			t.Run(strings.ReplaceAll(phase, "/", "")+"/"+a.name, func(t *testing.T) {
				seed := testSeed(t)
				x := runRack(t, Config{Params: small(), Phase: phase, Seed: seed, Record: true}, a.strategy, a.slots,
					time.Millisecond, 2*time.Millisecond)
				all := x.r.Counters()
				for _, e := range conservationErrors(x.r, all) {
					t.Error(e)
				}
				if a.slots == 0 && all.SwitchGrants != 0 {
					t.Errorf("no lock in the switch, yet it made %d grants", all.SwitchGrants)
				}
				// (The exclusive phase's locks rotate: what the warm-up measured is not used again.)
				if a.slots > 0 && a.strategy == alloc.StrategyKnapsack && phase != testbed.PhaseExclusive &&
					x.window.SwitchGrants == 0 {
					t.Errorf("knapsack put %d locks in the switch and it granted nothing", x.alloc.Locks)
				}
				if v := x.r.Violations(); len(v) != 0 {
					t.Errorf("online checker: %v", v)
				}
				if v := history.Check(x.r.History(), history.Options{RequireOutcome: true}); len(v) != 0 {
					t.Errorf("history.Check: %d violations, first %v", len(v), v[0])
				}
			})
		}
	}
}

// TestDeterministic: a seed determines the run, down to every counter, latency and sample.
func TestDeterministic(t *testing.T) {
	seed := testSeed(t)
	once := func(seed uint64) string {
		x := runRack(t, Config{Params: small(), Seed: seed}, alloc.StrategyKnapsack, 300, time.Millisecond, time.Millisecond)
		acq, txn := x.r.Latency()
		return fmt.Sprintf("%+v %+v %+v %v", x.r.Counters(), acq, txn, x.r.Now())
	}
	a, b, c := once(seed), once(seed), once(seed+1)
	if a != b {
		t.Errorf("seed %d gave two runs:\n%s\n%s", seed, a, b)
	}
	if a == c {
		t.Errorf("seeds %d and %d gave the same run", seed, seed+1)
	}
}

// TestCostModel: one worker, one lock, no contention: the acquire latency is exactly the sum of
// the model's costs on its path, through the switch (lock in the switch) or through the switch to
// the lock's server and back.
func TestCostModel(t *testing.T) {
	// The controller's pings and sweeps would share the path now and then: none in the window.
	p := Params{Clients: 1, Workers: 1, Servers: 1, ServerCores: 1, Sizing: dataplane.Sizing{Locks: 128, PartBits: 6},
		PingPeriod: time.Hour, SweepPeriod: time.Hour}
	p.fill()
	ser := func(n int) int64 { return int64(float64((n+20)*8)/p.LinkGbps + 0.5) }
	const frameLen = 14 + 20 + 8 + wire.Len
	hop := ser(frameLen) + int64(p.Propagation) // one link, one direction
	toSwitch := int64(p.ClientCPU) + int64(p.HostLatency) + hop
	fromSwitch := int64(p.SwitchLatency) + hop + int64(p.HostLatency) + int64(p.ClientCPU)
	serverTurn := int64(p.SwitchLatency) + hop + int64(p.HostLatency) + int64(p.ServerCPU) + int64(p.HostLatency) + hop
	for _, tc := range []struct {
		name  string
		slots int
		want  int64
	}{
		{"switch", 64, toSwitch + fromSwitch},
		{"server", 0, toSwitch + serverTurn + fromSwitch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := runRack(t, Config{Params: p, Phase: "contended/1"}, alloc.StrategyKnapsack, tc.slots, time.Millisecond,
				time.Millisecond)
			lo, hi := x.r.lat.req.Min(), x.r.lat.req.Max()
			if lo != time.Duration(tc.want) || hi != time.Duration(tc.want) {
				t.Errorf("acquire latency min %v max %v, want exactly %v", lo, hi, time.Duration(tc.want))
			}
			if sw := x.window.SwitchGrants == x.window.Granted; sw != (tc.slots > 0) {
				t.Errorf("switch grants %d of %d", x.window.SwitchGrants, x.window.Granted)
			}
		})
	}
}

// TestThinkTime: a transaction holds its locks for the think time (once, or after every grant
// with ThinkEachLock), so a closed loop of n workers commits at most n/think transactions per
// second, and every transaction lasts longer than its think times (with ThinkEachLock at least
// one: a TPC-C Stock-Level holds one lock, testbed/tpcc).
func TestThinkTime(t *testing.T) {
	const think = 50 * time.Microsecond
	for _, each := range []bool{false, true} {
		t.Run(fmt.Sprintf("each=%v", each), func(t *testing.T) {
			p := small()
			p.ThinkTime, p.ThinkEachLock = think, each
			thinks := time.Duration(1)
			x := runRack(t, Config{Params: p, Phase: testbed.PhaseTPCCLow, Seed: testSeed(t)}, alloc.StrategyKnapsack, 300,
				time.Millisecond, 4*time.Millisecond)
			if lo := x.r.lat.txn.Min(); lo <= thinks*think {
				t.Errorf("shortest transaction %v, not longer than %d think times of %v", lo, thinks, think)
			}
			workers := p.Clients * p.Workers
			if max := float64(workers) * (4 * time.Millisecond).Seconds() / (thinks * think).Seconds(); float64(x.window.Txns) > max {
				t.Errorf("%d transactions in 4ms with %d workers thinking %v: more than %.0f", x.window.Txns, workers,
					thinks*think, max)
			}
			for _, e := range conservationErrors(x.r, x.r.Counters()) {
				t.Error(e)
			}
		})
	}
}

// TestLittlesLaw: in a closed loop without think time, every worker is always in a transaction,
// so throughput times mean transaction latency is the number of workers (Little's law), up to
// the transactions that straddle the window's ends.
func TestLittlesLaw(t *testing.T) {
	p := small()
	x := runRack(t, Config{Params: p, Phase: testbed.PhaseTPCCLow, Seed: testSeed(t)}, alloc.StrategyKnapsack, 300,
		time.Millisecond, 8*time.Millisecond)
	_, txn := x.r.Latency()
	secs := (8 * time.Millisecond).Seconds()
	n := float64(x.window.Txns) / secs * txn.Mean.Seconds()
	workers := float64(p.Clients * p.Workers)
	if n < 0.9*workers || n > 1.1*workers {
		t.Errorf("throughput x latency = %.2f workers, want %v +-10%%", n, workers)
	}
}

// mutants of p4/netlock.p4 that break exclusion (the last one is a site of dataplane's
// differential test).
var mutants = []struct{ name, from, to string }{
	{"shared-ignores-exclusive-holder", "meta.compat = (xheld == 0 && wx0 == 0) ? 8w1 : 8w0;", "meta.compat = (wx0 == 0) ? 8w1 : 8w0;"},
	{"exclusive-ignores-holders", "            meta.compat = (nhold == 0) ? 8w1 : 8w0;\n        } else if (level == 0) {",
		"            meta.compat = 1;\n        } else if (level == 0) {"},
	{"walk-grants-exclusive-to-holders", "                meta.compat = (nhold == 0) ? 8w1 : 8w0;\n            } else {\n                meta.compat = (xheld == 0) ? 8w1 : 8w0;",
		"                meta.compat = 1;\n            } else {\n                meta.compat = (xheld == 0) ? 8w1 : 8w0;"},
}

func mutant(t *testing.T, from, to string) []byte {
	t.Helper()
	if strings.Count(string(p4.Netlock), from) != 1 {
		t.Fatalf("the mutation site %q is not in p4/netlock.p4 exactly once: update the mutant", from)
	}
	return []byte(strings.Replace(string(p4.Netlock), from, to, 1))
}

// TestNegativeControls: each fault breaks one property and the check that guards it must see it:
// mutants of the switch program break exclusion (online checker and history.Check), moving locks
// into the switch without a token base breaks fencing, a lost grant breaks conservation.
func TestNegativeControls(t *testing.T) {
	type tc struct {
		name  string
		knobs TestingKnobs
		phase string
		rule  string // "conservation" or a history rule
	}
	var cases []tc
	for _, m := range mutants {
		cases = append(cases, tc{m.name, TestingKnobs{Program: mutant(t, m.from, m.to)}, testbed.PhaseTPCCHigh, "exclusion"})
	}
	cases = append(cases,
		tc{"skip-token-base", TestingKnobs{Mutation: ctlcore.MutationSkipTokenBase}, "contended/4", "fencing"},
		tc{"lost-grant", TestingKnobs{DropGrant: 5}, "contended/4", "conservation"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := testSeed(t)
			p := small()
			p.RetryTimeout = 200 * time.Microsecond
			// A broken rack need not break on every seed (and may stall first): it must within a
			// few.
			for seed := base; seed < base+10; seed++ {
				x, err := runRackErr(t, Config{Params: p, Phase: c.phase, Seed: seed, Record: true, TestingKnobs: c.knobs},
					alloc.StrategyKnapsack, 400, time.Millisecond, 3*time.Millisecond)
				if c.rule == "conservation" {
					if errs := conservationErrors(x.r, x.r.Counters()); len(errs) != 0 {
						t.Logf("caught with seed %d: %s", seed, errs[0])
						return
					}
					continue
				}
				online := hasRule(x.r.Violations(), c.rule)
				full := hasRule(history.Check(x.r.History(), history.Options{}), c.rule)
				if online != full {
					t.Fatalf("seed %d: %s violation seen by the online checker %v, by history.Check %v", seed, c.rule, online, full)
				}
				if online {
					t.Logf("caught with seed %d (stalled: %v): %v", seed, err != nil, x.r.Violations()[0])
					return
				}
			}
			t.Errorf("%s: no %s violation seen in 10 seeds from %d", c.name, c.rule, base)
		})
	}
}

func hasRule(vs []history.Violation, rule string) bool {
	for _, v := range vs {
		if v.Rule == rule {
			return true
		}
	}
	return false
}

// TestCheckerAgreesWithHistory: on the same runs, clean and broken, the online checker and
// history.Check report the same rules.
func TestCheckerAgreesWithHistory(t *testing.T) {
	faults := []TestingKnobs{{}, {Program: mutant(t, mutants[0].from, mutants[0].to)},
		{Program: mutant(t, mutants[2].from, mutants[2].to)}, {Mutation: ctlcore.MutationSkipTokenBase}}
	phases := []string{testbed.PhaseTPCCHigh, "contended/2", testbed.PhaseShared}
	if raceEnabled {
		phases = phases[:1]
	}
	for i, f := range faults {
		for _, phase := range phases {
			seed := testSeed(t)
			x := runRack(t, Config{Params: small(), Phase: phase, Seed: seed, Record: true, TestingKnobs: f}, alloc.StrategyKnapsack,
				400, time.Millisecond, 2*time.Millisecond)
			for _, rule := range []string{"exclusion", "fencing", "double-grant"} {
				a, b := hasRule(x.r.Violations(), rule), hasRule(history.Check(x.r.History(), history.Options{}), rule)
				if a != b {
					t.Errorf("fault %d, %s, seed %d: %s online %v, history.Check %v", i, phase, seed, rule, a, b)
				}
			}
		}
	}
}

// TestPushBackFillsLevelZero pins down how an overflowing switch lock drains q2: netlock.p4
// announces each level's free slots in queue-empty (level 0's in slots, level 1's in lease), so
// with the workers all at level 0 a queue-empty brings back as many requests as level 0's region
// holds, not the one slot of level 1 (the controller's default for the level the workloads do not
// use; before 2026-11-29 queue-empty announced min(size0, size1) = 1 and this lock took back one
// request per queue-empty).
func TestPushBackFillsLevelZero(t *testing.T) {
	p := small()
	r, err := New(Config{Params: p, Phase: "contended/1", Seed: testSeed(t),
		Alloc: AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: 4}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := warmAllocate(t, r)
	if err != nil || a.Locks != 1 {
		t.Fatalf("allocation %+v, %v: want the one lock in the switch", a, err)
	}
	c0 := r.Counters()
	r.Start()
	r.Run(3 * time.Millisecond)
	if err := r.Quiesce(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	c := r.Counters().Sub(c0)
	if c.Overflows == 0 || c.QueueEmpties == 0 {
		t.Fatalf("12 workers on a lock with 4 slots never overflowed: %+v", c)
	}
	if c.PushBacks <= c.QueueEmpties || c.PushBacks > 4*c.QueueEmpties {
		t.Errorf("%d push-backs for %d queue-empties, want more than one each and at most the 4 slots", c.PushBacks, c.QueueEmpties)
	}
	for _, e := range conservationErrors(r, r.Counters()) {
		t.Error(e)
	}
}

// TestDefaultContention: Params.Contention is the controller's c_i of a lock whose queue it never
// saw deeper (ctlcore.Config.DefaultContention): with one private lock per worker (queues of one)
// every lock in the switch gets that many level-0 slots; without it, one (the control).
func TestDefaultContention(t *testing.T) {
	for _, tc := range []struct{ contention, want int }{{0, 1}, {5, 5}} {
		p := small()
		p.Contention = tc.contention
		r, err := New(Config{Params: p, Phase: "exclusive/1", Seed: testSeed(t),
			Alloc: AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		a, err := warmAllocate(t, r)
		locks := p.Clients * p.Workers
		if err != nil || a.Locks != locks {
			t.Fatalf("contention %d: allocation %+v, %v: want the %d locks in the switch", tc.contention, a, err, locks)
		}
		// Each lock: tc.want slots at level 0, the minimum region of one at level 1.
		if want := locks * (tc.want + 1); a.Used != want {
			t.Errorf("contention %d: %d slots used for %d locks, want %d", tc.contention, a.Used, locks, want)
		}
	}
}

// warmAllocate runs r for a millisecond of load, quiesces it and runs one allocation period.
func warmAllocate(t *testing.T, r *Rack) (Allocation, error) {
	t.Helper()
	r.Start()
	r.Run(time.Millisecond)
	if err := r.Quiesce(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	return r.Allocate(time.Second)
}
