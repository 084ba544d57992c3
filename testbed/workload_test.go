package testbed

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/testbed/tpcc"
	"github.com/netlock-go/netlock/wire"
)

// TestWorkloadDeterministic: one seed gives one sequence of lock sets, another seed another one,
// and TPC-C phases draw exactly the generator's transactions.
func TestWorkloadDeterministic(t *testing.T) {
	for _, phase := range []string{PhaseShared, PhaseExclusive, "exclusive/3", "contended/8", PhaseTPCCHigh, PhaseTPCCLow, PhaseCrash} {
		draw := func(seed uint64) [][]client.LockSpec {
			w, err := NewWorkload(phase, 3, 5, seed)
			if err != nil {
				t.Fatal(err)
			}
			var out [][]client.LockSpec
			var buf []client.LockSpec
			for i := 0; i < 200; i++ {
				buf = w.Next(buf)
				out = append(out, slices.Clone(buf))
			}
			return out
		}
		a, b, c := draw(11), draw(11), draw(12)
		if !slices.EqualFunc(a, b, slices.Equal) {
			t.Errorf("%s: seed 11 drew two different sequences", phase)
		}
		if !strings.HasPrefix(phase, PhaseExclusive) && slices.EqualFunc(a, c, slices.Equal) {
			t.Errorf("%s: seeds 11 and 12 drew the same sequence", phase)
		}
	}
	// A TPC-C worker draws its terminal's transactions: worker 4 of a run of 30 warehouses,
	// run seed 7 (the high 32 bits of the worker's seed).
	seed := uint64(7)<<32 ^ 4
	w, _ := NewWorkload(PhaseTPCCLow, 3, 4, seed)
	wl, err := tpcc.New(tpcc.Config{Warehouses: 30, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	term := wl.Terminal(4, seed)
	var x []client.LockSpec
	var tx tpcc.Txn
	for i := 0; i < 100; i++ {
		x = w.Next(x)
		term.Next(&tx)
		if !slices.Equal(x, tx.Locks) {
			t.Fatalf("transaction %d: workload %v, terminal %v", i, x, tx.Locks)
		}
	}
	if term.Home() != 4 {
		t.Errorf("worker 4's home warehouse is %d", term.Home())
	}
	// Workers of one run share the run's constants (one workload); another run seed has others.
	a, _ := tpccRun(30, 7)
	b, _ := tpccRun(30, 7)
	c, _ := tpccRun(30, 8)
	if a != b || a.Constants() == c.Constants() {
		t.Errorf("runs: same seed %p %p, other seed's constants %+v and %+v", a, b, a.Constants(), c.Constants())
	}
	if w.Warehouses() != 30 {
		t.Errorf("tpcc-low with 3 clients: %d warehouses, want 30", w.Warehouses())
	}
	if _, err := NewWorkload("tpcc", 3, 0, 1); err == nil {
		t.Error("NewWorkload accepted an unknown phase")
	}
}

// TestThinkTime: with a think time every committed transaction holds its locks at least that
// long (a timer never fires early), and the report says what was asked and measured.
func TestThinkTime(t *testing.T) {
	const think = 3 * time.Millisecond
	rep, err := Run(context.Background(), Config{Duration: 100 * time.Millisecond, Clients: 1, Workers: 2,
		Phases: []string{"contended/4"}, ThinkTime: think})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Phases[0]
	if p.Txns == 0 {
		t.Fatal("no transaction committed")
	}
	if p.ThinkTime != think || p.Think < think {
		t.Errorf("think time asked %v (want %v), measured mean %v (at least %v)", p.ThinkTime, think, p.Think, think)
	}
	if p.Latency.P50 < think {
		t.Errorf("median transaction %v is shorter than its think time %v", p.Latency.P50, think)
	}
	if _, err := Run(context.Background(), Config{ThinkTime: -time.Millisecond}); err == nil {
		t.Error("Run accepted a negative think time")
	}
}

// TestPhaseLocksIn: the in-sw column counts the phase's own locks in the switch, not those an
// earlier phase left there.
func TestPhaseLocksIn(t *testing.T) {
	events := []history.Event{
		{Kind: history.AcquireSent, Lock: 7},
		{Kind: history.Granted, Lock: 1},
		{Kind: history.Granted, Lock: 2},
		{Kind: history.Granted, Lock: 2},
		{Kind: history.Released, Lock: 3},
	}
	if n := phaseLocksIn(events, []uint32{2, 3, 7, 9}); n != 1 {
		t.Errorf("phaseLocksIn = %d, want 1 (lock 2: granted in the phase and in the switch)", n)
	}
	if n := phaseLocksIn(events, nil); n != 0 {
		t.Errorf("phaseLocksIn with an empty switch = %d", n)
	}
}

// TestReportGrammar: counts of one take the singular.
func TestReportGrammar(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{
		{1, "controller: 1 allocation period, 1 lock moved into the switch, 1 out, 1 move aborted, 1 lease sweep (1 forced release)"},
		{2, "controller: 2 allocation periods, 2 locks moved into the switch, 2 out, 2 moves aborted, 2 lease sweeps (2 forced releases)"},
		{0, "controller: 0 allocation periods, 0 locks moved into the switch, 0 out, 0 moves aborted, 0 lease sweeps (0 forced releases)"},
	} {
		rep := Report{Mode: "rack", Servers: []string{"a"}, Clients: 1, Workers: 1, Controller: &ctlcore.Stats{Periods: c.n,
			MovesIn: c.n, MovesOut: c.n, MovesAborted: c.n, Sweeps: c.n, ForceReleases: c.n}}
		var b strings.Builder
		rep.WriteTable(&b)
		if !strings.Contains(b.String(), c.want+"\n") {
			t.Errorf("table lacks %q:\n%s", c.want, b.String())
		}
		if c.n == 1 && !strings.Contains(b.String(), "1 lock server ([a]), 1 client node x 1 worker\n") {
			t.Errorf("header of one server, client and worker:\n%s", b.String())
		}
	}
}

// TestExclusivePrivate: in exclusive/N a worker cycles over its own N locks, which no other
// worker draws (no contention); exclusive is exclusive/256.
func TestExclusivePrivate(t *testing.T) {
	for _, tc := range []struct {
		phase string
		n     int
	}{{"exclusive/1", 1}, {"exclusive/4", 4}, {PhaseExclusive, 256}} {
		owner := map[uint32]int{}
		for w := range 3 {
			wl, err := NewWorkload(tc.phase, 2, w, 1)
			if err != nil {
				t.Fatal(err)
			}
			mine := map[uint32]bool{}
			var buf []client.LockSpec
			for range 3 * tc.n {
				buf = wl.Next(buf)
				if len(buf) != 1 || buf[0].Mode != wire.Exclusive {
					t.Fatalf("%s: worker %d drew %v", tc.phase, w, buf)
				}
				l := buf[0].Lock
				if o, ok := owner[l]; ok && o != w {
					t.Fatalf("%s: lock %d drawn by workers %d and %d", tc.phase, l, o, w)
				}
				owner[l], mine[l] = w, true
			}
			if len(mine) != tc.n {
				t.Errorf("%s: worker %d drew %d locks, want %d", tc.phase, w, len(mine), tc.n)
			}
		}
	}
}
