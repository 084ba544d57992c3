package lockcore

import (
	"flag"
	"net/netip"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// heldCore returns a Core holding n exclusive locks (ids 0..n-1) granted at time 0 with staggered
// leases: lock i's lease ends at (i+1) ms, so a sweep every millisecond finds one lock expired.
func heldCore(b *testing.B, n int) (*Core, *Request) {
	c := mustCore(b, Config{DefaultLease: time.Second, MaxLease: time.Hour})
	r := &Request{From: netip.MustParseAddrPort("10.0.0.1:5000")}
	r.Op, r.Mode = wire.OpAcquire, wire.Exclusive
	out := make([]Effect, 0, 8)
	for i := 0; i < n; i++ {
		r.Lock, r.Txn, r.LeaseMicros = uint32(i), uint64(i+1), uint32((i+1)*1000)
		if out = c.Step(0, r, out[:0]); len(out) != 1 || out[0].Msg.Op != wire.OpGrant {
			b.Fatal("not granted")
		}
	}
	return c, r
}

var heldN = flag.Int("held", 1_000_000, "held locks of BenchmarkExpire1MHeld")

// BenchmarkExpire1MHeld: one million held locks with staggered leases; each op advances the
// clock by 1 ms and sweeps (Expire), which ends exactly one lease, and re-acquires that lock
// with a lease 1000 s long (so a million stay held). "heap" is Core.Expire; "walk" is the
// reference measured in the same run: the same sweep done by visiting every held lock, as
// Expire did before it kept a deadline heap.
func BenchmarkExpire1MHeld(b *testing.B) {
	n := *heldN
	for _, mode := range []string{"heap", "walk"} {
		b.Run(mode, func(b *testing.B) {
			c, r := heldCore(b, n)
			out := make([]Effect, 0, 8)
			r.LeaseMicros = 1000 * 1000 * 1000 // 1000 s
			var expired int
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now := int64(i%n+1) * int64(time.Millisecond)
				if i >= n {
					now += int64(i/n) * 1000 * int64(time.Second)
				}
				if mode == "walk" {
					walkSink += c.walkExpired(now)
				}
				out = c.Expire(now, out[:0])
				expired += len(out)
				r.Lock, r.Txn = uint32(i%n), uint64(n+i+1)
				out = c.Step(now, r, out[:0])
			}
			b.ReportMetric(float64(expired)/float64(b.N), "expired/op")
		})
	}
}

// walkExpired visits every lock with holders and counts the holders whose lease ended at now:
// the work of a sweep that walks the held locks (the reference of BenchmarkExpire1MHeld).
func (c *Core) walkExpired(now int64) int {
	n := 0
	for _, l := range c.dl {
		for i := range l.holders {
			if l.holders[i].deadline <= now {
				n++
			}
		}
	}
	return n
}

// walkSink keeps the reference walk's result alive.
var walkSink int
