package rangebench

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/rdma/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Every scheme runs, makes progress and is deterministic for a seed.
func TestSchemesRun(t *testing.T) {
	for _, sc := range Schemes {
		for _, L := range []uint64{1, 16, 256} {
			cfg := Config{Scheme: sc, N: 1 << 16, L: L, Alpha: 0.9, Threads: 12, Warmup: 20_000, Duration: 100_000, Seed: 1}
			r, err := Run(cfg)
			if err != nil {
				t.Fatalf("%s L=%d: %v", sc, L, err)
			}
			t.Logf("%-8s L=%-3d %8.3f Mops/s p50 %6.0f p99 %7.0f ns, %.1f verbs %.1f msgs %.3f aborts per op", sc, L, r.Throughput/1e6, r.P50, r.P99, r.VerbsPerOp, r.MessagesPerOp, r.AbortsPerOp)
			if r.Ops == 0 {
				t.Fatalf("%s L=%d: no operation completed", sc, L)
			}
			again, _ := Run(cfg)
			if again.Ops != r.Ops || again.P99 != r.P99 {
				t.Fatalf("%s L=%d: not deterministic (%d vs %d ops)", sc, L, r.Ops, again.Ops)
			}
		}
	}
}

// The Zipf generator follows 1/(i+1)^theta: the ratio of the frequencies of values 0 and 9 is
// 10^theta, and theta 0 is uniform.
func TestZipf(t *testing.T) {
	for _, theta := range []float64{0, 0.5, 0.9} {
		z := NewZipf(rand.New(rand.NewSource(1)), 1000, theta, false)
		var c [1000]int
		for i := 0; i < 400000; i++ {
			c[z.Next()]++
		}
		want := math.Pow(10, theta)
		got := float64(c[0]) / float64(c[9])
		if math.Abs(got-want)/want > 0.15 {
			t.Errorf("theta %v: P(0)/P(9) = %.2f, want %.2f", theta, got, want)
		}
	}
}

// The same-word atomic time reaches the model: CostWithSameWord changes only SameWordAtomic
// (and the window below 250 ns), bad values are refused, halving it speeds CITRON up on hot
// neighbouring ranges (its notifications hit the same two ancestor words), and it leaves the
// server-CPU manager, which issues no atomics, exactly as it was (the negative control).
func TestSameWordTime(t *testing.T) {
	want := Cost()
	want.SameWordAtomic = 250
	if got := CostWithSameWord(250); got != want {
		t.Fatalf("CostWithSameWord(250) = %+v, want %+v", got, want)
	}
	for _, bad := range []Config{
		{Scheme: CITRON, L: 1, Threads: 1, SameWordNS: -1},
		{Scheme: CITRON, L: 1, Threads: 1, SameWordNS: 1},
		{Scheme: CITRON, L: 1, Threads: 1, SameWordNS: 100, Cost: Cost()},
	} {
		if _, err := Run(bad); err == nil {
			t.Errorf("same-word time %d (explicit cost %v) accepted", bad.SameWordNS, bad.Cost != (sim.Cost{}))
		}
	}
	tests := []struct {
		scheme string
		// lo, hi bound the throughput at 125 ns over that at 250 ns.
		lo, hi float64
	}{
		{CITRON, 1.2, 20},
		{Server, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.scheme, func(t *testing.T) {
			run := func(ns int64) Result {
				r, err := Run(Config{Scheme: tc.scheme, L: 1, Alpha: 0.9, Hotspot: true, Threads: 96, SameWordNS: ns,
					Warmup: 20_000, Duration: 100_000, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				if r.SameWordNS != ns {
					t.Fatalf("result same-word time %d, want %d", r.SameWordNS, ns)
				}
				return r
			}
			slow, fast := run(250), run(125)
			x := fast.Throughput / slow.Throughput
			t.Logf("L=1, 96 threads, unscrambled, seed 1: %.3f M/s at 250 ns, %.3f M/s at 125 ns (x%.2f)", slow.Throughput/1e6, fast.Throughput/1e6, x)
			if x < tc.lo || x > tc.hi {
				t.Fatalf("throughput ratio %.3f outside [%v, %v]", x, tc.lo, tc.hi)
			}
		})
	}
}

// The sweep has one Fig. 6 sweep per same-word time, in the order given, all unscrambled, and
// its table has a column per time (the default model first, then slowest to fastest) and a
// row per claim of MicroClaims.
func TestAtomicSweepShape(t *testing.T) {
	times := []int64{50, 0, 250}
	o := Options{Threads: []int{6, 24}, Schemes: Schemes}
	s := AtomicSweep(o, times)
	per := len(MicroSweep(o))
	if len(s) != len(times)*per {
		t.Fatalf("%d points, want %d", len(s), len(times)*per)
	}
	var rs []Result
	for i, c := range s {
		if !c.Hotspot || c.SameWordNS != times[i/per] {
			t.Fatalf("point %d: %+v", i, c)
		}
		rs = append(rs, Result{Scheme: c.Scheme, L: c.L, Threads: c.Threads, SameWordNS: c.SameWordNS,
			Throughput: float64(1e6 * (1 + i%7)), P99: float64(1000 + i)})
	}
	var b strings.Builder
	if err := AtomicClaims(&b, rs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if want := 2 + len(MicroClaims(rs)); len(lines) != want {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), want, b.String())
	}
	if !strings.HasSuffix(lines[0], "| default (hashed unit, 250 ns) | 250 ns | 50 ns |") {
		t.Fatalf("header %q", lines[0])
	}
	for _, l := range lines {
		if n := strings.Count(l, "|"); n != 2+len(times)+1 {
			t.Fatalf("%d cells in %q", n-1, l)
		}
	}
}
