package rangebench

import (
	"math"
	"math/rand"
	"testing"

	"go.uber.org/goleak"
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

// The atomic-time knob: 250 ns is the default model, and faster same-word atomics speed CITRON
// up on hot neighbouring ranges (its notifications and Occ updates hit the same few words).
func TestAtomicTime(t *testing.T) {
	if CostWithAtomic(250) != Cost() {
		t.Fatalf("CostWithAtomic(250) = %+v, want Cost() %+v", CostWithAtomic(250), Cost())
	}
	run := func(ns int64) Result {
		r, err := Run(Config{Scheme: CITRON, L: 1, Alpha: 0.9, Hotspot: true, Threads: 24, AtomicNS: ns,
			Warmup: 20_000, Duration: 100_000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.AtomicNS != ns {
			t.Fatalf("result atomic time %d, want %d", r.AtomicNS, ns)
		}
		return r
	}
	slow, fast := run(250), run(50)
	t.Logf("CITRON L=1, 24 threads, unscrambled: %.2f M/s at 250 ns, %.2f M/s at 50 ns", slow.Throughput/1e6, fast.Throughput/1e6)
	if fast.Throughput < 1.2*slow.Throughput {
		t.Fatalf("50 ns atomics: %.0f/s, not above 250 ns: %.0f/s", fast.Throughput, slow.Throughput)
	}
	if s := AtomicSweep(Options{Threads: []int{6}, Schemes: []string{CITRON}}, []int64{250, 50}); len(s) != 6 || !s[0].Hotspot || s[5].AtomicNS != 50 {
		t.Fatalf("sweep %+v", s)
	}
}
