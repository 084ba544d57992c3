package lockcore

import (
	"math/rand/v2"
	"testing"
)

// TestTableAgainstMap runs random puts and deletes against a Go map, with keys drawn from a small
// range so that probe runs collide and wrap around.
func TestTableAgainstMap(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		rng := rand.New(rand.NewPCG(seed, 7))
		tb := newTable()
		ref := map[uint32]*lockState{}
		for i := 0; i < 200_000; i++ {
			k := uint32(rng.IntN(3000))
			if i%3 == 0 {
				k *= 1 << 22 // keys whose hashes differ only in high bits
			}
			if _, ok := ref[k]; ok && rng.IntN(2) == 0 {
				tb.del(k)
				delete(ref, k)
			} else if !ok {
				v := &lockState{id: k}
				tb.put(k, v)
				ref[k] = v
			}
			if i%997 == 0 {
				if tb.n != len(ref) {
					t.Fatalf("seed %d step %d: n=%d want %d", seed, i, tb.n, len(ref))
				}
				for k, v := range ref {
					if got := tb.get(k); got != v {
						t.Fatalf("seed %d step %d: get(%d)=%p want %p", seed, i, k, got, v)
					}
				}
				seen := 0
				tb.each(func(*lockState) { seen++ })
				if seen != len(ref) {
					t.Fatalf("seed %d: each saw %d, want %d", seed, seen, len(ref))
				}
			}
			if probe := uint32(rng.IntN(3000)); ref[probe] == nil && tb.get(probe) != nil {
				t.Fatalf("seed %d step %d: get(%d) found a deleted key", seed, i, probe)
			}
		}
	}
}
