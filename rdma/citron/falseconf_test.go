package citron

import "testing"

// Fig. 11's claims: with k = 2 every request of L <= 64 units is split into leaves, so there are
// no false conflicts at all; for larger L, k = 2 has far fewer false conflicts than k = 1.
func TestFalseConflicts(t *testing.T) {
	const n, trials = 1 << 20, 8000
	for _, L := range []uint64{1, 7, 33, 64} {
		f, _, err := FalseConflicts(n, L, 2, trials, 1)
		if err != nil || f != 0 {
			t.Fatalf("L=%d k=2: %d false conflicts (%v)", L, f, err)
		}
	}
	for _, L := range []uint64{64, 1000, 20000} {
		f1, _, _ := FalseConflicts(n, L, 1, trials, 2)
		f2, _, _ := FalseConflicts(n, L, 2, trials, 2)
		t.Logf("L=%d: false conflicts k=1 %d, k=2 %d of %d pairs", L, f1, f2, trials)
		if f1 == 0 || f2*5 > f1 {
			t.Fatalf("L=%d: k=1 %d vs k=2 %d", L, f1, f2)
		}
	}
	if _, _, err := FalseConflicts(n, 0, 2, 1, 1); err == nil {
		t.Fatal("L=0 accepted")
	}
}
