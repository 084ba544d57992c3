package engine

import (
	"testing"
	"time"
)

// TestClockNeverGoesBack: the switch clock (ingress timestamps, Tofino timestamps, meters) is
// monotonic whatever Config.Now does. The rack model timed admin packets from its own clock while
// a busy pipeline stamped data packets ahead of it; the clock stepped back, a grant stamped a
// moment before looked granted in the future, and the lease sweep's (now - grant time) mod 2^32
// force-released it at once (a fencing violation at Figure 8's one-lock point).
func TestClockNeverGoesBack(t *testing.T) {
	base := time.Unix(1000, 0)
	steps := []time.Duration{0, 5 * time.Microsecond, 3 * time.Microsecond, -time.Second, 9 * time.Microsecond, 7 * time.Microsecond}
	want := []uint64{0, 5, 5, 5, 9, 9}
	i := 0
	sw := load(t, "testdata/misc.p4", Config{Now: func() time.Time { return base.Add(steps[i]) }})
	for ; i < len(steps); i++ {
		if got := sw.micros(); got != want[i] {
			t.Errorf("reading %d (clock at %v): micros %d, want %d", i, steps[i], got, want[i])
		}
		if got := sw.nanos(); got != want[i]*1000 {
			t.Errorf("reading %d (clock at %v): nanos %d, want %d", i, steps[i], got, want[i]*1000)
		}
	}
}
