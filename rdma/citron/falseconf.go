package citron

import (
	"fmt"
	"math/rand"
)

// FalseConflicts is the paper's false-conflict experiment (section 4.6, Fig. 11) for exclusive
// requests of length L in a tree of capacity n (rounded up to 64*4^h): trials times, two requests
// with independent uniform starts on [0, n-L] are split into at most k nodes; a false conflict is
// a pair whose ranges do not overlap but whose nodes conflict (ancestor/descendant, the same
// internal node, or the same leaf with overlapping masks). It returns the counts of false and of
// true (overlapping) conflicts; the paper's rate is false / (2*trials), "the number of false
// conflicts divided by the number of all lock requests".
func FalseConflicts(n, L uint64, k, trials int, seed int64) (falseConf, trueConf int, err error) {
	h := heightFor(n)
	n = capacity(h)
	if L == 0 || L > n || k < 1 {
		return 0, 0, fmt.Errorf("citron: false conflicts: L=%d in N=%d, k=%d", L, n, k)
	}
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < trials; i++ {
		a := uint64(rng.Int63n(int64(n - L + 1)))
		b := uint64(rng.Int63n(int64(n - L + 1)))
		overlap := a < b+L && b < a+L
		if overlap {
			trueConf++
			continue
		}
		na, nb := splitRange(h, a, a+L, k), splitRange(h, b, b+L, k)
		if conflicts(h, na, a, a+L, nb, b, b+L) {
			falseConf++
		}
	}
	return falseConf, trueConf, nil
}
