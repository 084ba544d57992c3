package rackmodel

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/p4/netchain"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

// runNetChain runs a small NetChain rack (TPC-C, high contention) for d and quiesces it.
func runNetChain(t *testing.T, seed uint64, nc NetChain, knobs TestingKnobs, d time.Duration) (*Rack, error) {
	t.Helper()
	r, err := New(Config{Params: small(), Phase: testbed.PhaseTPCCHigh, Seed: seed, Record: true, NetChain: &nc,
		TestingKnobs: knobs})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	r.Run(d)
	return r, r.Quiesce(time.Second)
}

// TestNetChainRack: a NetChain rack commits transactions with the switch alone: every grant is
// the switch's, every acquire is answered once (granted or rejected would-block, then sent again
// after the backoff), every release acknowledged, nothing aborts, and the online checker and
// history.Check (every acquisition with an outcome) find nothing. At high contention with few
// slots some acquires are rejected, and the retries are what the clients wait on.
func TestNetChainRack(t *testing.T) {
	seed := testSeed(t)
	for _, slots := range []int{netchain.DefaultSlots, 256} {
		r, err := runNetChain(t, seed, NetChain{Slots: slots}, TestingKnobs{}, 3*time.Millisecond)
		if err != nil {
			t.Fatalf("%d slots: %v", slots, err)
		}
		c := r.Counters()
		t.Logf("%d slots: %d txns, %d grants, %d rejects, %d switch packets", slots, c.Txns, c.Granted, c.Rejects, c.SwitchPackets)
		for _, e := range []struct {
			ok   bool
			what string
		}{
			{c.Txns > 0 && c.Aborts == 0, "transactions commit, none aborts"},
			{c.ServerGrants == 0 && c.SwitchGrants == c.Granted, "every grant is the switch's"},
			{c.AcquiresSent == c.Granted+c.Rejects, "every acquire is answered once"},
			{c.ReleasesSent == c.ReleaseAcks && c.ReleaseRefused == 0, "every release is acknowledged"},
			{c.Acquisitions == c.Granted, "every grant is a lock of a committed transaction"},
			{c.Retransmits == 0 && c.Stray == 0 && c.EngineErrors == 0 && c.Unroutable == 0 && c.LeasesLost == 0,
				"nothing is sent again, lost or unroutable"},
			{c.Rejects > 0, "contention: some acquires are rejected and retried"},
		} {
			if !e.ok {
				t.Errorf("%d slots: not so: %s (%+v)", slots, e.what, c)
			}
		}
		checkHistories(t, fmt.Sprintf("%d slots", slots), r)
	}
}

// TestNetChainNegativeControl: netchain.p4 granting a held slot must be caught as an exclusion
// violation by both checkers.
func TestNetChainNegativeControl(t *testing.T) {
	const from = "bit<1> ok = (h == 0 || h == hdr.nl.txn) ? 1w1 : 1w0;"
	if strings.Count(string(netchain.Source), from) != 1 {
		t.Fatalf("the mutation site %q is not in netchain.p4 exactly once: update the mutant", from)
	}
	prog := []byte(strings.Replace(string(netchain.Source), from, "bit<1> ok = 1w1;", 1))
	r, err := runNetChain(t, testSeed(t), NetChain{Slots: 256}, TestingKnobs{Program: prog}, time.Millisecond)
	online := hasRule(r.Violations(), "exclusion")
	full := hasRule(history.Check(r.History(), history.Options{}), "exclusion")
	if !online || !full {
		t.Fatalf("a NetChain switch that grants held slots: exclusion violation seen by the online checker %v, "+
			"by history.Check %v (quiesce: %v)", online, full, err)
	}
	t.Logf("caught: %v", r.Violations()[0])
}

// TestNetChainRollback: a NetChain rack whose clients run NetLock's own client code's rule
// (client.NetChainRollback: a rejected acquire sent again at once, a run not granted every lock
// by its deadline rolled back and run again) commits transactions and, under contention, rolls
// some back; every rollback releases what the run held (the online checker and history.Check find
// nothing, every release is acknowledged) and is counted as an abort. The default timeout_slot
// (400 µs) and a short one (50 µs, more rollbacks) on few slots (more collisions), a lock at a
// time and, as client.c, every acquire of a run in one burst (whose hold-and-wait in any order
// the rollbacks must break).
func TestNetChainRollback(t *testing.T) {
	seed := testSeed(t)
	t.Logf("seed %d", seed)
	for _, p := range []client.NetChainPolicy{client.NetChainRollbackPolicy(0), client.NetChainRollbackPolicy(50 * time.Microsecond),
		client.NetChainClientC(0), client.NetChainClientC(50 * time.Microsecond)} {
		r, err := runNetChain(t, seed, NetChain{Slots: 64, Policy: p}, TestingKnobs{}, 3*time.Millisecond)
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		c := r.Counters()
		t.Logf("%v: %d txns, %d rollbacks, %d aborts, %d grants, %d rejects", p, c.Txns, c.Rollbacks, c.Aborts, c.Granted, c.Rejects)
		for _, e := range []struct {
			ok   bool
			what string
		}{
			{c.Txns > 0, "transactions commit"},
			{c.Rollbacks > 0, "contention: some runs are rolled back"},
			{c.Aborts == c.Rollbacks, "every rollback ends (the rack is quiesced) and is the only abort"},
			{c.ServerGrants == 0 && c.SwitchGrants == c.Granted, "every grant is the switch's"},
			{c.AcquiresSent == c.Granted+c.Rejects, "every acquire is answered once"},
			{c.ReleasesSent == c.Granted && c.ReleasesSent == c.ReleaseAcks && c.ReleaseRefused == 0,
				"every grant is released, rolled back or not, and every release acknowledged"},
			{c.Acquisitions < c.Granted, "some grants belong to rolled-back runs"},
			{c.Retransmits == 0 && c.Stray == 0 && c.EngineErrors == 0 && c.Unroutable == 0 && c.LeasesLost == 0,
				"nothing is sent again, lost or unroutable"},
		} {
			if !e.ok {
				t.Errorf("%v: not so: %s (%+v)", p, e.what, c)
			}
		}
		checkHistories(t, fmt.Sprint(p), r)
	}
}

// lockRunSource gives worker w transactions of n exclusive locks of its own (no contention).
type lockRunSource struct {
	w, n uint32
}

func (s lockRunSource) Next(_ time.Duration, t *Txn) {
	t.Locks = t.Locks[:0]
	for i := range s.n {
		t.Locks = append(t.Locks, client.LockSpec{Lock: 1<<20 + s.w<<8 + i, Mode: wire.Exclusive})
	}
	t.Priority, t.Tenant, t.Hold, t.Pause, t.Backoff = 0, 0, 0, 0, 0
}

// TestNetChainRollbackLongTxn: the rollback rule's timeout is sized for client.c's bursts. A
// transaction of 20 locks of its own, taken one at a time (about 7 µs each), outlasts a 50 µs
// timeout on every run even without contention: it is rolled back again and again and never
// commits. Sent in one burst (client.NetChainClientC), the same transactions commit within the
// timeout. Deterministic; no contention, so no reject.
func TestNetChainRollbackLongTxn(t *testing.T) {
	seed := testSeed(t)
	t.Logf("seed %d", seed)
	for _, tc := range []struct {
		p      client.NetChainPolicy
		commit bool
	}{{client.NetChainRollbackPolicy(50 * time.Microsecond), false}, {client.NetChainClientC(50 * time.Microsecond), true}} {
		r, err := New(Config{Params: small(), Seed: seed, Record: true, NetChain: &NetChain{Policy: tc.p},
			Source: func(w int) Source { return lockRunSource{w: uint32(w), n: 20} }})
		if err != nil {
			t.Fatal(err)
		}
		r.Start()
		r.Run(2 * time.Millisecond)
		if err := r.Quiesce(time.Second); err != nil {
			t.Fatalf("%v: %v", tc.p, err)
		}
		c := r.Counters()
		t.Logf("%v: %d txns, %d rollbacks, %d rejects", tc.p, c.Txns, c.Rollbacks, c.Rejects)
		if got := c.Txns > 0; got != tc.commit || c.Rejects != 0 || (!tc.commit && c.Rollbacks == 0) {
			t.Errorf("%v: %d txns, %d rollbacks, %d rejects: want commits %v, no reject, rollbacks if none commits", tc.p,
				c.Txns, c.Rollbacks, c.Rejects, tc.commit)
		}
		if c.ReleasesSent != c.Granted || c.ReleaseAcks != c.Granted {
			t.Errorf("%v: %d grants, %d releases sent, %d acknowledged: want every grant released", tc.p, c.Granted, c.ReleasesSent, c.ReleaseAcks)
		}
		if vs := r.Violations(); len(vs) != 0 {
			t.Errorf("%v: online checker: %v", tc.p, vs[0])
		}
	}
}

// TestClientCNetlock: a netlock rack whose clients run client.c's rule (Config.ClientC: every
// acquire of a run in one burst, a run not granted every lock by its deadline rolled back and run
// again), with the hot locks in the switch, at high contention: transactions commit, the bursts'
// hold-and-wait deadlocks are broken by rollbacks (a short 100 µs timeout makes some), every
// grant is released, and the online checker and history.Check find nothing.
func TestClientCNetlock(t *testing.T) {
	seed := testSeed(t)
	t.Logf("seed %d", seed)
	p := client.NetChainClientC(100 * time.Microsecond)
	x, err := runRackErr(t, Config{Params: small(), Phase: testbed.PhaseTPCCHigh, Seed: seed, Record: true, ClientC: &p},
		alloc.StrategyKnapsack, 64, 2*time.Millisecond, 3*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c := x.r.Counters()
	t.Logf("%v: %d txns, %d rollbacks, %d aborts, %d grants (switch %d), %d locks in the switch", p, c.Txns, c.Rollbacks, c.Aborts,
		c.Granted, c.SwitchGrants, x.alloc.Locks)
	if c.Txns == 0 || c.Rollbacks == 0 || c.SwitchGrants == 0 || c.Rejects != 0 {
		t.Errorf("%v: want commits, rollbacks, switch grants and no reject: %+v", p, c)
	}
	if c.ReleasesSent != c.Granted || c.ReleaseAcks+c.ReleaseRefused != c.ReleasesSent || c.ReleaseRefused != 0 {
		t.Errorf("%v: %d grants, %d releases sent, %d acknowledged, %d refused: want every grant released", p, c.Granted,
			c.ReleasesSent, c.ReleaseAcks, c.ReleaseRefused)
	}
	if vs := x.r.Violations(); len(vs) != 0 {
		t.Errorf("%v: online checker: %v", p, vs[0])
	}
	if vs := history.Check(x.r.History(), history.Options{RequireOutcome: true}); len(vs) != 0 {
		t.Errorf("%v: history.Check: %d violations, first %v", p, len(vs), vs[0])
	}
	if _, err := New(Config{Params: small(), ClientC: &client.NetChainPolicy{Burst: true}}); err == nil {
		t.Error("a burst without the rollback rule's deadline: accepted")
	}
}

// checkHistories fails the test if the online checker or history.Check (every request with an
// outcome) finds a violation in r's recorded run; what names the run.
func checkHistories(t *testing.T, what string, r *Rack) {
	t.Helper()
	if vs := r.Violations(); len(vs) != 0 {
		t.Errorf("%s: online checker: %v", what, vs[0])
	}
	if vs := history.Check(r.History(), history.Options{RequireOutcome: true}); len(vs) != 0 {
		t.Errorf("%s: history.Check: %d violations, first %v", what, len(vs), vs[0])
	}
}
