package rangebench

import (
	"math"
	"math/rand"
	"sync"
)

// Zipf draws integers in [0, n) with P(i) proportional to 1/(i+1)^theta, for any theta in
// [0, 1) (0: uniform), with the method of Gray et al. ("Quickly generating billion-record
// synthetic databases", SIGMOD '94) that YCSB uses. Rank 1 is value 0: the paper's "Zipfian-0.9
// distribution on [0, N-L]" does not say whether ranks are scrambled; we do not scramble, so
// the hottest starts are the lowest addresses and neighbouring hot ranges overlap.
type Zipf struct {
	rng                 *rand.Rand
	n                   uint64
	theta, alpha, zetan float64
	eta, halfPowTheta   float64
}

// NewZipf returns a generator for [0, n) with skew theta.
func NewZipf(rng *rand.Rand, n uint64, theta float64) *Zipf {
	z := &Zipf{rng: rng, n: n, theta: theta}
	if theta == 0 {
		return z
	}
	z.zetan = zeta(n, theta)
	zeta2 := zeta(2, theta)
	z.alpha = 1 / (1 - theta)
	z.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/z.zetan)
	z.halfPowTheta = 1 + math.Pow(0.5, theta)
	return z
}

var zetaCache sync.Map // [2]float64{n, theta} -> float64

func zeta(n uint64, theta float64) float64 {
	key := [2]float64{float64(n), theta}
	if v, ok := zetaCache.Load(key); ok {
		return v.(float64)
	}
	var s float64
	for i := uint64(1); i <= n; i++ {
		s += 1 / math.Pow(float64(i), theta)
	}
	zetaCache.Store(key, s)
	return s
}

// Next draws one value.
func (z *Zipf) Next() uint64 {
	if z.theta == 0 {
		return uint64(z.rng.Int63n(int64(z.n)))
	}
	u := z.rng.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.halfPowTheta:
		return 1
	}
	v := uint64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(v, z.n-1)
}
