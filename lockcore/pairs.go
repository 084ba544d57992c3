package lockcore

import (
	"net/netip"

	"github.com/netlock-go/netlock/wire"
)

// Pairs runs n uncontended exclusive acquire+release pairs through c, over nlocks locks (lock
// i%nlocks, at time 1s), reusing out for the effects. Each pair's txn is one more than the Core's
// last token, which its grant takes: txns never repeat on one Core (a repeated (lock, txn) would
// be a replay of an ended request, not accepted again). It is the unit of the lock-core
// benchmark (docs/targets.md: >= 10M pairs per second per core, no allocation), shared by the Go benchmark
// and `netlock bench core`. It panics if the core does not grant or release as it must.
func Pairs(c *Core, n int, nlocks uint32, out []Effect) []Effect {
	acq := &Request{From: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 1}), 5000)}
	acq.Op, acq.Mode = wire.OpAcquire, wire.Exclusive
	rel := &Request{From: acq.From}
	rel.Op, rel.Mode = wire.OpRelease, wire.Exclusive
	const now = int64(1e9)
	for i := 0; i < n; i++ {
		lock := uint32(i) % nlocks
		acq.Lock, acq.Txn = lock, c.token+1
		out = c.Step(now, acq, out[:0])
		if len(out) != 1 || out[0].Msg.Op != wire.OpGrant {
			panic("lockcore: benchmark acquire was not granted")
		}
		rel.Lock, rel.Txn, rel.Token = lock, acq.Txn, out[0].Msg.Token
		out = c.Step(now, rel, out[:0])
		if len(out) != 1 || out[0].Msg.Flags&wire.FlagReply == 0 {
			panic("lockcore: benchmark release was not acknowledged")
		}
	}
	return out
}
