package lockcore

import (
	"net/netip"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// BenchmarkFreedStates measures an uncontended acquire+release pair of a lock not seen for a
// while: each pair makes a state, and an Expire every 1024 pairs frees the states idle for
// IdleRetention (1 µs here) with their unread AdminStats counts (unread.go). read: a TopLocks
// every 64 Ki pairs empties the unread store; unread: no one reads, so the store stays full and
// every freed state's counts are compared with its least busy record (and dropped).
func BenchmarkFreedStates(b *testing.B) {
	for _, bc := range []struct {
		name string
		read bool
	}{{"read", true}, {"unread", false}} {
		b.Run(bc.name, func(b *testing.B) {
			c := mustCore(b, Config{IdleRetention: time.Microsecond, ReplayWindow: -1})
			acq := &Request{From: netip.MustParseAddrPort("10.0.0.1:5000")}
			acq.Op, acq.Mode = wire.OpAcquire, wire.Exclusive
			rel := &Request{From: acq.From}
			rel.Op, rel.Mode = wire.OpRelease, wire.Exclusive
			out := make([]Effect, 0, 8)
			var stats []wire.LockStat
			now := int64(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now += 10
				acq.Lock, acq.Txn = uint32(i)*2654435761, uint64(i+1)
				out = c.Step(now, acq, out[:0])
				rel.Lock, rel.Txn, rel.Token = acq.Lock, acq.Txn, out[0].Msg.Token
				out = c.Step(now, rel, out[:0])
				if i%1024 == 1023 {
					out = c.Expire(now, out[:0])
				}
				if bc.read && i%65536 == 65535 {
					stats = c.TopLocks(stats[:0], wire.MaxLockStats)
				}
			}
		})
	}
}
