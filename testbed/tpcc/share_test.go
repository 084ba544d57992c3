package tpcc

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/alloc"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestAnalyzeSynthetic: a hand-computed trace. T1 {A, B}, T2 {A}, T3 {B, C}, T4 {A, C}; A wholly
// in the switch, C half: of 7 requests the switch grants A's 3 and half of C's 2, s = 4/7;
// transactions wholly in the switch: T2 (1) and T4 (0.5), 1.5 of 4.
func TestAnalyzeSynthetic(t *testing.T) {
	const A, B, C = 1, 2, 3
	var tr Trace
	tr.Add(0, []uint32{A, B})
	tr.Add(1, []uint32{A})
	tr.Add(0, []uint32{B, C})
	tr.Add(2, []uint32{A, C})
	s := Analyze(&tr, NewAlloc(map[uint32]float64{A: 1, C: 0.5}, 3))
	if s.Txns != 4 || s.Requests != 7 || !near(s.Switch, 4) || !near(s.S, 4.0/7) || !near(s.Whole, 1.5/4) || s.Locks != 2 {
		t.Fatalf("share %+v", s)
	}
	if !near(s.ServerBound(), 7.0/3) {
		t.Errorf("server bound %v, want 7/3", s.ServerBound())
	}
	// r = 0.25: 1/(1 - 4/7 * 3/4) = 7/4; pipelined 1/(1 - 3/8 * 3/4) = 32/23.
	if got := s.LatencyBound(0.25, false); !near(got, 7.0/4) {
		t.Errorf("sequential latency bound %v, want 7/4", got)
	}
	if got := s.LatencyBound(0.25, true); !near(got, 32.0/23) {
		t.Errorf("pipelined latency bound %v, want 32/23", got)
	}
	if got := s.LatencyBound(0, false); !near(got, s.ServerBound()) {
		t.Errorf("free switch grants: latency bound %v, want the server bound %v", got, s.ServerBound())
	}
	base := Analyze(&tr, NewAlloc(map[uint32]float64{B: 1}, 1))
	if !near(base.S, 2.0/7) || !near(s.ServerBoundOver(base), (5.0/7)/(3.0/7)) {
		t.Errorf("base %+v, over %v", base, s.ServerBoundOver(base))
	}
	// Controls: nothing in the switch gives no gain, everything an unbounded one.
	if z := Analyze(&tr, Alloc{}); z.S != 0 || z.ServerBound() != 1 || z.LatencyBound(0.5, true) != 1 {
		t.Errorf("empty allocation: %+v", z)
	}
	if f := Analyze(&tr, NewAlloc(map[uint32]float64{A: 1, B: 1, C: 1}, 3)); f.S != 1 || !math.IsInf(f.ServerBound(), 1) || f.Whole != 1 {
		t.Errorf("full allocation: %+v", f)
	}
	var buf bytes.Buffer
	if err := s.Report(&buf, 0.25); err != nil || !strings.Contains(buf.String(), "s = 57.1%") || !strings.Contains(buf.String(), "2.33x") {
		t.Errorf("report %q, %v", buf.String(), err)
	}
}

// TestAllocateSynthetic: a hot lock H asked by 4 terminals 100 times, cold locks asked once each
// by one terminal. The knapsack (r/c: 25 against 1) gives H its 4 slots first, then one cold
// lock per slot; the random strategy does not prefer H; a lock limit keeps H.
func TestAllocateSynthetic(t *testing.T) {
	const H = 1000
	var tr Trace
	for i := range 100 {
		tr.Add(i%4, []uint32{H, uint32(i)})
	}
	ds := tr.Demands()
	if len(ds) != 101 || ds[100].Lock != H || ds[100].Requests != 100 || ds[100].Terminals != 4 || ds[0].Terminals != 1 {
		t.Fatalf("demands %v", ds[len(ds)-2:])
	}
	a := Allocate(ds, AllocConfig{Slots: 6})
	if a.Fraction(H) != 1 || a.Locks() != 3 || a.Slots() != 6 {
		t.Fatalf("knapsack over 6 slots: %v", a)
	}
	if s := Analyze(&tr, a); !near(s.S, 102.0/200) {
		t.Errorf("knapsack share %v, want 102/200", s.S)
	}
	if a := Allocate(ds, AllocConfig{Slots: 2}); a.Fraction(H) != 0.5 || a.Locks() != 1 {
		t.Errorf("knapsack over 2 slots: %v, want half of H", a)
	}
	if a := Allocate(ds, AllocConfig{Slots: 6, MaxLocks: 1}); a.Locks() != 1 || a.Fraction(H) != 1 {
		t.Errorf("knapsack with one lock: %v", a)
	}
	// Negative control: random allocation over the same slots misses H for most seeds.
	missed := 0
	for seed := range uint64(50) {
		r := Allocate(ds, AllocConfig{Slots: 6, Strategy: alloc.StrategyRandom, Seed: seed})
		if r.Slots() > 6 {
			t.Fatalf("random uses %d slots", r.Slots())
		}
		if r.Fraction(H) == 0 {
			missed++
		}
	}
	if missed < 25 {
		t.Errorf("random allocation found the hot lock in %d of 50 seeds", 50-missed)
	}
	// A contention cap of 2: H needs 2 slots, then 4 cold locks fit.
	if a := Allocate(ds, AllocConfig{Slots: 6, MaxContention: 2}); a.Fraction(H) != 1 || a.Locks() != 5 {
		t.Errorf("knapsack with contention capped at 2: %d locks, H %v", a.Locks(), a.Fraction(H))
	}
}

// TestGenerate: Generate draws round-robin from terminals 0..n-1 and the trace records them.
func TestGenerate(t *testing.T) {
	wl := mustNew(t, Config{Warehouses: 2, Seed: 1})
	var tr Trace
	wl.Generate(&tr, 3, 10, 7)
	if tr.Txns() != 30 {
		t.Fatalf("%d transactions", tr.Txns())
	}
	n := 0
	for i := range tr.Txns() {
		term, locks := tr.Txn(i)
		if term != i%3 || len(locks) == 0 {
			t.Fatalf("txn %d: terminal %d, %d locks", i, term, len(locks))
		}
		n += len(locks)
	}
	if n != tr.Requests() {
		t.Errorf("requests %d, locks %d", tr.Requests(), n)
	}
}
