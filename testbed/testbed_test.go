package testbed

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/testbed/tpcc"
	"github.com/netlock-go/netlock/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParsePhase(t *testing.T) {
	for _, tc := range []struct {
		in         string
		warehouses int
		pool       int
		private    int
		err        bool
	}{
		{in: "shared"}, {in: "exclusive", private: 256}, {in: "exclusive/1", private: 1}, {in: "exclusive/256", private: 256},
		{in: "contended/16", pool: 16}, {in: "tpcc-high", warehouses: 3}, {in: "tpcc-low", warehouses: 30},
		{in: "contended/0", err: true}, {in: "tpcc", err: true}, {in: "exclusive/0", err: true},
		{in: "exclusive/257", err: true}, {in: "exclusive/4x", err: true},
	} {
		s, err := parsePhase(tc.in, 3)
		if (err != nil) != tc.err || (err == nil && (s.warehouses != tc.warehouses || s.pool != tc.pool || s.private != tc.private)) {
			t.Errorf("parsePhase(%q) = %+v, %v", tc.in, s, err)
		}
	}
}

// TestTPCCLockSets: the demo's TPC-C draws all five transactions of testbed/tpcc (which checks
// them against the specification), from the worker's home warehouse, each as distinct locks in
// ascending order.
func TestTPCCLockSets(t *testing.T) {
	g, err := newTPCCGen(4, 6, 7, 99)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var locks []client.LockSpec
	for i := 0; i < 5000; i++ {
		var kind string
		locks, kind = g.next(locks)
		kinds[kind]++
		for j := 1; j < len(locks); j++ {
			if locks[j].Lock <= locks[j-1].Lock {
				t.Fatalf("%s: locks %#x, %#x out of order", kind, locks[j-1].Lock, locks[j].Lock)
			}
		}
		if tb, w, _ := tpcc.Decode(locks[0].Lock); w != 6%4 && !(tb == tpcc.TableItem && w == 0) {
			t.Fatalf("%s: first lock %v of warehouse %d, home %d", kind, tb, w, 6%4)
		}
	}
	for _, k := range tpcc.Kinds {
		if kinds[k.String()] == 0 {
			t.Errorf("no %v in 5000 transactions: %v", k, kinds)
		}
	}
	if len(kinds) != len(tpcc.Kinds) {
		t.Errorf("kinds %v", kinds)
	}
}

// TestDemoLoopback runs every phase briefly against lock servers on loopback UDP (no switch) and
// checks that each phase committed transactions, that the servers granted every acquisition and
// that the history holds no violation.
func TestDemoLoopback(t *testing.T) {
	var progress strings.Builder
	rep, err := Run(context.Background(), Config{Loopback: true, Duration: 150 * time.Millisecond, Clients: 2, Workers: 2, TenantRate: 10,
		Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Phases) != len(DefaultPhases) || rep.Mode != "loopback" {
		t.Fatalf("%s: %d phases, want %d", rep.Mode, len(rep.Phases), len(DefaultPhases))
	}
	for _, p := range rep.Phases {
		var grants uint64
		for _, g := range p.Grants {
			grants += g
		}
		if p.Txns == 0 || grants < p.LockOps || p.ServerGrants != p.LockOps || p.SwitchGrants != 0 {
			t.Errorf("phase %s: %d txns, %d lock acquires, %d grants counted by the servers, %d/%d by server/switch",
				p.Name, p.Txns, p.LockOps, grants, p.ServerGrants, p.SwitchGrants)
		}
		checkClasses(t, p)
		checkRejects(t, p)
		if p.Events == 0 || len(p.Violations) != 0 {
			t.Errorf("phase %s: %d history events, violations %v", p.Name, p.Events, p.Violations)
		}
	}
	if crash := rep.Phases[len(rep.Phases)-1]; crash.Name != PhaseCrash || crash.Expiries != crashLocks {
		t.Errorf("crash phase: %d lease expiries, want %d (every lock of the crashed holder)", crash.Expiries, crashLocks)
	}
	if !strings.Contains(progress.String(), "tpcc-low") {
		t.Errorf("no progress line for tpcc-low in %q", progress.String())
	}
	var table strings.Builder
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "contended/1") {
		t.Errorf("table lacks a phase:\n%s", table.String())
	}
}

// rackTestConfig is a short rack demo: a warm-up of several allocation periods per phase so that
// the controller has moved the phase's hot locks before the measured window opens. The request
// rates under the race detector on a loaded machine are a few per second per lock, so MinRate is
// low, but above the exclusive phase's 1024 private locks (hundreds of moves would keep the
// controller busy through the next phases).
func rackTestConfig() Config {
	return Config{Duration: 300 * time.Millisecond, Warmup: 1500 * time.Millisecond, AllocPeriod: 150 * time.Millisecond,
		MinRate: 5, Clients: 2, Workers: 2, TenantRate: 20}
}

// hotPhases are the phases whose locks are few and hot: the controller must put them in the
// switch.
var hotPhases = map[string]bool{PhaseShared: true, "contended/8": true, "contended/1": true, PhasePriority: true,
	PhaseTenants: true, PhaseQuota: true, PhaseCrash: true}

// TestDemoRuns runs every phase of the rack demo briefly (the switch running p4/netlock.p4, the
// controller, two lock servers, client nodes) and checks what the demo claims: every phase made
// progress (transactions committed over the whole phase: a short measured window on a loaded
// machine may see none), the acquisitions add up by who granted them, the switch granted a part
// of every hot phase, the servers agree (they sent at least the grants attributed to them), the
// crashed holder's leases ran out, and no phase's history holds a violation.
func TestDemoRuns(t *testing.T) {
	var progress strings.Builder
	cfg := rackTestConfig()
	cfg.Progress = &progress
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Phases) != len(DefaultPhases) || rep.Mode != "rack" {
		t.Fatalf("%s: %d phases, want %d", rep.Mode, len(rep.Phases), len(DefaultPhases))
	}
	if rep.Pipeline == "" {
		t.Errorf("the report does not name the switch's pipeline")
	}
	var table strings.Builder
	rep.WriteTable(&table)
	t.Log(table.String())
	for _, p := range rep.Phases {
		if p.AllTxns == 0 {
			t.Errorf("phase %s: no transaction committed", p.Name)
		}
		if p.SwitchGrants+p.ServerGrants != p.LockOps || p.UnknownGrants != 0 {
			t.Errorf("phase %s: %d acquisitions, %d by the switch, %d by the servers, %d unseen", p.Name, p.LockOps,
				p.SwitchGrants, p.ServerGrants, p.UnknownGrants)
		}
		var sent uint64
		for _, g := range p.Grants {
			sent += g
		}
		if sent < p.ServerGrants {
			t.Errorf("phase %s: the servers counted %d grants, the clients took %d from them", p.Name, sent, p.ServerGrants)
		}
		// Over the whole phase: on a loaded machine the short measured window may see no transaction.
		if hotPhases[p.Name] && p.AllSwitchGrants == 0 {
			t.Errorf("phase %s: the switch granted nothing (%d transactions, %d locks in the switch)", p.Name, p.AllTxns,
				p.SwitchLocks)
		}
		checkClasses(t, p)
		checkRejects(t, p)
		if p.Events == 0 || len(p.Violations) != 0 {
			t.Errorf("phase %s: %d history events, violations %v", p.Name, p.Events, p.Violations)
		}
	}
	if crash := rep.Phases[len(rep.Phases)-1]; crash.Name != PhaseCrash || crash.Expiries != crashLocks {
		t.Errorf("crash phase: %d lease expiries, want %d (every lock of the crashed holder)", crash.Expiries, crashLocks)
	}
	if c := rep.Controller; c == nil || c.MovesIn == 0 {
		t.Errorf("controller: %+v: no lock moved into the switch", c)
	}
	if !strings.Contains(progress.String(), "tpcc-low") || !strings.Contains(progress.String(), "switch") {
		t.Errorf("no progress line for tpcc-low in %q", progress.String())
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{Clients: 50}, {Workers: -1}, {Phases: []string{"nope"}}, {Servers: 17},
		{Loopback: true, UDPPorts: true}, {Loopback: true, Mutation: ctlcore.MutationSkipDrain}, {Lease: -time.Second},
		{Loopback: true, Pipeline: engine.PipelineGenerated}} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("Run accepted %+v", c)
		}
	}
}

// TestDemoCatchesBrokenController is the negative control of TestDemoRuns's history check: the
// rack demo with a controller that moves locks without the token base (into the switch) or the
// token floor (back to a server) must report fencing violations, so a run that reports none
// has checked something.
func TestDemoCatchesBrokenController(t *testing.T) {
	for _, m := range []struct {
		name string
		m    ctlcore.Mutation
	}{{"skip token base", ctlcore.MutationSkipTokenBase}, {"skip token floor", ctlcore.MutationSkipFloor}} {
		t.Run(m.name, func(t *testing.T) {
			cfg := rackTestConfig()
			cfg.Mutation = m.m
			cfg.Phases = []string{"contended/8", "contended/1", "contended/2"}
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Violations() == 0 {
				var table strings.Builder
				rep.WriteTable(&table)
				t.Errorf("the broken controller went unnoticed:\n%s", table.String())
			}
		})
	}
}

// TestSourceTracker: a grant the servers sent is the servers'; any other grant the client reads is
// the switch's; the first grant of an acquisition decides; other datagrams are ignored.
func TestSourceTracker(t *testing.T) {
	grant := func(lock uint32, txn uint64) []byte {
		return wire.Append(nil, &wire.Fields{Op: wire.OpGrant, Lock: lock, Txn: txn, Token: 1})
	}
	other := func(op wire.Op, lock uint32, txn uint64) []byte {
		return wire.Append(nil, &wire.Fields{Op: op, Lock: lock, Txn: txn})
	}
	for _, tc := range []struct {
		name    string
		servers [][]byte // sent by the servers first
		client  [][]byte // then read by the client
		want    Source
	}{
		{"switch", nil, [][]byte{grant(1, 7)}, SourceSwitch},
		{"server", [][]byte{grant(1, 7)}, [][]byte{grant(1, 7)}, SourceServer},
		{"server grant of another txn", [][]byte{grant(1, 8)}, [][]byte{grant(1, 7)}, SourceSwitch},
		{"server grant of another lock", [][]byte{grant(2, 7)}, [][]byte{grant(1, 7)}, SourceSwitch},
		{"first grant decides", nil, [][]byte{grant(1, 7), grant(1, 7)}, SourceSwitch},
		{"server release is no grant", [][]byte{other(wire.OpRelease, 1, 7)}, [][]byte{grant(1, 7)}, SourceSwitch},
		{"not seen", nil, [][]byte{other(wire.OpReject, 1, 7), {1, 2, 3}}, SourceUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := newServerSent()
			for _, b := range tc.servers {
				ss.observe(b)
			}
			tr := newSourceTracker(ss)
			for _, b := range tc.client {
				tr.observe(b)
			}
			if got := tr.take(1, 7); got != tc.want {
				t.Errorf("source %d, want %d", got, tc.want)
			}
			if got := tr.take(1, 7); got != SourceUnknown {
				t.Errorf("after take: source %d, want unknown", got)
			}
		})
	}
}

// TestRunNode runs two client nodes (`netlock loadgen`'s core) against lock servers on loopback and
// checks their merged history; a crash phase and a node outside the rack are refused.
func TestRunNode(t *testing.T) {
	cfg := Config{Loopback: true, Servers: 2, Clients: 1}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	rg, err := startLoopback(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rg.close()
	for _, bad := range []NodeConfig{{Servers: rg.addrs, Node: 1, Nodes: 1, Phases: []string{PhaseCrash}},
		{Servers: rg.addrs, Node: 3, Nodes: 2}, {Node: 1, Nodes: 1}} {
		if _, err := RunNode(context.Background(), bad); err == nil {
			t.Errorf("RunNode accepted %+v", bad)
		}
	}
	phases := []string{"contended/2", PhaseTPCCHigh}
	reps := make([]NodeReport, 2)
	errs := make(chan error, 2)
	for i := range reps {
		go func() {
			var err error
			reps[i], err = RunNode(context.Background(), NodeConfig{Servers: rg.addrs, Node: i + 1, Nodes: 2, Workers: 2,
				Duration: 200 * time.Millisecond, Phases: phases, Local: "127.0.0.1:0", Record: true})
			errs <- err
		}()
	}
	for range reps {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var events []history.Event
	for _, r := range reps {
		if len(r.Phases) != len(phases) {
			t.Fatalf("node %d: %d phases", r.Node, len(r.Phases))
		}
		for _, p := range r.Phases {
			if p.Txns == 0 || p.LockOps < p.Txns || len(p.Events) == 0 || p.Errors != 0 {
				t.Errorf("node %d phase %s: %+v", r.Node, p.Name, p)
			}
			events = append(events, p.Events...)
		}
	}
	if vs := history.Check(events, history.Options{}); len(vs) != 0 {
		t.Errorf("%d violations, first %v", len(vs), vs[0])
	}
}

// checkClasses: a phase with worker classes (priority, tenants, quota) reports each class, the classes add up
// to the phase, and neither class starves: each committed transactions over the phase (the
// switch's queue-empty announces each level's free slots, and level 1's region may be one slot).
func checkClasses(t *testing.T, p PhaseResult) {
	t.Helper()
	switch p.Name {
	case PhasePriority:
		if len(p.Classes) != 2 || p.Classes[0].Priority != 0 || p.Classes[1].Priority != 1 {
			t.Fatalf("phase %s: classes %+v, want high (priority 0) and low (priority 1)", p.Name, p.Classes)
		}
	case PhaseTenants, PhaseQuota:
		if len(p.Classes) != 2 || p.Classes[0].Workers <= p.Classes[1].Workers || p.Classes[0].Tenant == p.Classes[1].Tenant {
			t.Fatalf("phase %s: classes %+v, want two tenants, the first with more workers", p.Name, p.Classes)
		}
	default:
		if len(p.Classes) != 0 {
			t.Errorf("phase %s: classes %v in a phase without classes", p.Name, p.Classes)
		}
		return
	}
	var txns, all uint64
	workers := 0
	for _, c := range p.Classes {
		if c.AllTxns == 0 || c.Workers == 0 {
			t.Errorf("phase %s: class %s starved: %d workers, %d transactions over the phase", p.Name, c.Name, c.Workers,
				c.AllTxns)
		}
		txns += c.Txns
		all += c.AllTxns
		workers += c.Workers
	}
	if txns != p.Txns || all != p.AllTxns || workers != p.Workers {
		t.Errorf("phase %s: classes add up to %d txns (%d over the phase), %d workers; the phase has %d (%d), %d",
			p.Name, txns, all, workers, p.Txns, p.AllTxns, p.Workers)
	}
}

// checkRejects: no phase has errors, and only the quota phase has rejects: there the larger tenant
// must meet its quota.
func checkRejects(t *testing.T, p PhaseResult) {
	t.Helper()
	switch {
	case p.Errors != 0:
		t.Errorf("phase %s: %d errors, the first: %s", p.Name, p.Errors, p.FirstError)
	case p.Name == PhaseQuota && (len(p.Classes) == 0 || p.Classes[0].AllRejects == 0):
		// Over the whole phase: on a loaded machine the short measured window may stay below the quota.
		t.Errorf("phase %s: the larger tenant was never refused for its quota (classes %+v)", p.Name, p.Classes)
	case p.Name != PhaseQuota && p.Rejects != 0:
		t.Errorf("phase %s: %d rejects", p.Name, p.Rejects)
	}
}
