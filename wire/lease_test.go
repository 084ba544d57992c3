package wire

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestHolderLease: the holder's share is lease(1-2ρ) rounded down, and with the worst drift the
// holder's end never passes the granter's (the argument in HolderLease's comment, checked with
// exact integers over random leases).
func TestHolderLease(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{0, 0},
		{time.Second, time.Second - time.Millisecond},
		{10 * time.Second, 10*time.Second - 10*time.Millisecond},
		{time.Microsecond, time.Microsecond - 1},
		{1, 0},
	} {
		if got := HolderLease(tc.in); got != tc.want {
			t.Errorf("HolderLease(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	const rho = MaxClockDriftPPM
	for range 100000 {
		lease := time.Duration(r.Int64N(int64(time.Hour)))
		h := HolderLease(lease)
		// Real time of the holder's end: h/(1-ρ); of the granter's: lease/(1+ρ) (from a later
		// instant). In ppm integers: h*1e6*(1e6+ρ) <= lease*1e6*(1e6-ρ).
		lhs := float64(h) * (1e6 + rho)
		rhs := float64(lease) * (1e6 - rho)
		if lhs > rhs {
			t.Fatalf("lease %v: holder %v ends after the granter", lease, h)
		}
	}
}
