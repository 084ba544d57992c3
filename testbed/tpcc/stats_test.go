package tpcc

import (
	"math"
	"math/bits"
	"os"
	"strconv"
	"testing"
	"time"
)

// testSeed is the seed of a randomized test: TPCC_SEED if set, else the clock. It is logged so a
// failure can be replayed with TPCC_SEED.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("TPCC_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("TPCC_SEED=%q: %v", v, err)
		}
		s = n
	}
	t.Logf("seed %d (rerun with TPCC_SEED=%d)", s, s)
	return s
}

// zCrit is the one-sided normal quantile the statistical checks reject at: 4.75 sigma, about
// 1e-6, so that a correct generator fails about once in a million runs per check, while the
// negative controls (wrong mixes, wrong constants) land hundreds of sigmas away.
const zCrit = 4.75

// chiCrit is the chi-square critical value for df degrees of freedom at zCrit (Wilson-Hilferty).
func chiCrit(df int) float64 {
	k := float64(df)
	v := 1 - 2/(9*k) + zCrit*math.Sqrt(2/(9*k))
	return k * v * v * v
}

// chiSquare is Pearson's statistic of observed counts against expected probabilities (summing
// to 1) for n draws, after merging consecutive categories until each expects at least 20; it
// returns the statistic and the degrees of freedom.
func chiSquare(obs []float64, p []float64) (float64, int) {
	n := 0.0
	for _, o := range obs {
		n += o
	}
	var chi float64
	cells := 0
	var o, e float64
	for i := range obs {
		o += obs[i]
		e += p[i] * n
		if e >= 20 || i == len(obs)-1 {
			if e > 0 {
				chi += (o - e) * (o - e) / e
				cells++
			} else if o > 0 {
				return math.Inf(1), cells
			}
			o, e = 0, 0
		}
	}
	return chi, max(1, cells-1)
}

// nuRandPMF is the exact distribution of NURand(a, x, y, c) for a = 2^k - 1, indexed by value-x:
// for b uniform in [x, y] and u uniform in [0, a], u|b keeps b's bits above k and ORs its low
// bits: the low bits s of the result are a superset of b's, with probability 2^popcount(b&a) /
// (a+1) each.
func nuRandPMF(a, x, y, c int) []float64 {
	if a&(a+1) != 0 {
		panic("nuRandPMF: a must be 2^k-1")
	}
	n := y - x + 1
	p := make([]float64, n)
	for b := x; b <= y; b++ {
		low, high := b&a, b&^a
		w := float64(int(1)<<bits.OnesCount(uint(low))) / float64(a+1) / float64(n)
		for s := low; ; s = (s + 1) | low {
			z := high | s
			p[(z+c)%n] += w
			if s == a {
				break
			}
		}
	}
	return p
}
