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
