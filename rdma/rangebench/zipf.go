package rangebench

import (
	"math"
	"math/rand"
	"sync"
)

// Zipf draws integers in [0, n) with P(rank r) proportional to 1/r^theta, for any theta in
// [0, 1) (0: uniform), with the method of Gray et al. ("Quickly generating billion-record
// synthetic databases", SIGMOD '94) that YCSB uses. The paper's "Zipfian-0.9 distribution on
// [0, N-L]" does not say whether ranks are scrambled. Unscrambled, rank r is value r-1: the
// hottest starts are the lowest addresses, so hot ranges overlap and share every tree node above
// them. Scrambled (YCSB's default generator), rank r is a fixed pseudo-random value, so hot starts
// are spread over the space.
type Zipf struct {
	rng                 *rand.Rand
	n                   uint64
	theta, alpha, zetan float64
	eta, halfPowTheta   float64
	scramble            bool
}

// NewZipf returns a generator for [0, n) with skew theta; scramble spreads the ranks.
func NewZipf(rng *rand.Rand, n uint64, theta float64, scramble bool) *Zipf {
	z := &Zipf{rng: rng, n: n, theta: theta, scramble: scramble}
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
	r := z.rank()
	if z.scramble && z.theta != 0 {
		return fnv64(r) % z.n
	}
	return r
}

// fnv64 is FNV-1a over the 8 bytes of x (YCSB scrambles ranks with an FNV hash too).
func fnv64(x uint64) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < 8; i++ {
		h ^= x >> (8 * i) & 0xff
		h *= 1099511628211
	}
	return h
}

func (z *Zipf) rank() uint64 {
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
