package lockcore

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// TestReplayMemAgainstList checks the replay memory (ring, hash chains, growth, forgetting by time
// and by capacity) against a plain list of every end: of the last max ends, the latest of a
// (lock, txn), if it ended less than a window ago. Capacities from 1 to past several ring
// doublings, few keys (long chains, repeated keys), seeded and default hash keys.
func TestReplayMemAgainstList(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with go test ./lockcore -run ReplayMemAgainstList -seed %d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	for _, max := range []int{1, 2, 5, 63, 64, 65, 1000, 5000} {
		window := int64(1 + rng.IntN(3000))
		r := newReplayMem(window, max, uint64(rng.IntN(2))*rng.Uint64())
		var list []ended
		var now int64
		forgotten := 0
		for i := 0; i < 30_000; i++ {
			now += int64(rng.IntN(3))
			lock, txn := uint32(rng.IntN(8)), uint64(rng.IntN(60))
			if rng.IntN(2) == 0 {
				e := ended{lock: lock, txn: txn, token: rng.Uint64(), at: now, status: wire.Status(rng.IntN(11))}
				// The list's view of what add forgets: the oldest of max, if within its window.
				if len(list) >= max && now-list[len(list)-max].at < window {
					forgotten++
				}
				if r.add(e.lock, e.txn, e.token, e.at, e.status) {
					forgotten--
				}
				list = append(list, e)
				continue
			}
			var want *ended
			for j := len(list) - 1; j >= 0 && j >= len(list)-max; j-- {
				if list[j].lock == lock && list[j].txn == txn {
					if now-list[j].at < window {
						want = &list[j]
					}
					break
				}
			}
			got := r.find(lock, txn, now)
			switch {
			case (got == nil) != (want == nil):
				t.Fatalf("max %d step %d: find(%d, %d) = %v, want %v", max, i, lock, txn, got, want)
			case got != nil && (got.token != want.token || got.at != want.at || got.status != want.status):
				t.Fatalf("max %d step %d: find(%d, %d) = %+v, want %+v", max, i, lock, txn, *got, *want)
			}
			if r.len() > max {
				t.Fatalf("max %d: %d remembered", max, r.len())
			}
		}
		if forgotten != 0 {
			t.Errorf("max %d: forgot-within-window reports off by %d", max, forgotten)
		}
	}
}
