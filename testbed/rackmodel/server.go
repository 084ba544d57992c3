package rackmodel

import (
	"math"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// serverHost is a lock server machine: ServerCores cores, each serving its requests one at a
// time (ServerCPU each, run to completion), and the identities (server addresses with their
// lock state) it hosts: its own, and a failed server's after a takeover.
type serverHost struct {
	r        *Rack
	idx      int
	port     int
	up       bool
	cpu      []int64 // per core: busy until
	idents   []*identity
	up_, dn_ link
	fr       udpframe.Frame
}

func newServerHost(r *Rack, s int) *serverHost {
	return &serverHost{r: r, idx: s, port: serverPort0 + s, up: true, cpu: make([]int64, r.p.ServerCores)}
}

func (h *serverHost) links() (up, down *link) { return &h.up_, &h.dn_ }

// identity is one lock server address and its locks: a lockcore.Core per core (shard). Its
// fencing tokens are epoch-major (TokenBase = epoch << 40), as the lock server's.
type identity struct {
	r       *Rack
	home    int
	addr    netip.AddrPort
	epoch   uint64
	cores   []*lockcore.Core
	sweepAt []int64
	host    *serverHost
	effs    []lockcore.Effect
}

// newIdentity makes the state of server home at an epoch, with no grants before grantAfter.
func newIdentity(r *Rack, home int, epoch uint64) (*identity, error) {
	return newIdentityAfter(r, home, epoch, 0)
}

func newIdentityAfter(r *Rack, home int, epoch uint64, grantAfter int64) (*identity, error) {
	id := &identity{r: r, home: home, addr: serverAddr(home), epoch: epoch}
	for k := 0; k < r.p.ServerCores; k++ {
		c, err := lockcore.New(lockcore.Config{DefaultLease: r.p.Lease, MaxLease: 2 * r.p.Lease, Priorities: 2,
			TokenBase: epoch << 40, GrantAfter: grantAfter, IdleRetention: 100 * time.Millisecond})
		if err != nil {
			return nil, err
		}
		id.cores = append(id.cores, c)
		id.sweepAt = append(id.sweepAt, math.MaxInt64)
	}
	if grantAfter > 0 {
		for k := range id.cores {
			id.scheduleSweep(k, grantAfter)
		}
	}
	return id, nil
}

// receive takes a frame from the switch.
func (h *serverHost) receive(b []byte) {
	r := h.r
	if !h.up {
		r.stats.ServerDropped++
		return
	}
	var f wire.Fields
	if err := parse(b, &h.fr, &f); err != nil {
		r.stats.Malformed++
		return
	}
	var id *identity
	for _, x := range h.idents {
		if x.addr.Addr() == h.fr.Dst.Addr() {
			id = x
		}
	}
	if id == nil {
		r.stats.Unroutable++
		return
	}
	from := h.fr.Src
	if f.Op.IsControl() {
		// Overflow and queue-empty only from the switch, with the rack key (docs/protocol.md,
		// "Who may send what"); nothing else of the control ops comes over the network here.
		key, ok := wire.RackKey(h.fr.Payload)
		if (f.Op != wire.OpOverflow && f.Op != wire.OpQueueEmpty) || from.Addr() != switchIP || !ok || key != r.key {
			r.stats.ControlRefused++
			return
		}
	}
	k := r.coreOf(f.Lock)
	start := max(r.sim.now, h.cpu[k])
	h.cpu[k] = start + int64(r.p.ServerCPU)
	req := lockcore.Request{Fields: f, From: from}
	r.sim.at(h.cpu[k], func() { id.step(k, &req) })
}

// step runs one request through core k now and sends its effects.
func (id *identity) step(k int, req *lockcore.Request) {
	r := id.r
	if !id.host.up {
		r.stats.ServerDropped++
		return
	}
	now := r.sim.now
	c := id.cores[k]
	switch req.Op {
	case wire.OpOverflow:
		r.stats.Overflows++
	case wire.OpQueueEmpty:
		r.stats.QueueEmpties++
	}
	id.effs = c.Step(now, req, id.effs[:0])
	if r.measure != nil && req.Op == wire.OpAcquire && req.Flags&wire.FlagRetry == 0 {
		r.measure.observe(c, req.Lock)
	}
	id.send(now, id.effs)
	id.scheduleSweep(k, c.NextDeadline())
}

func (id *identity) send(now int64, effs []lockcore.Effect) {
	r := id.r
	for i := range effs {
		e := &effs[i]
		var key *uint64
		if e.Msg.Op.IsControl() {
			key = &r.key
		}
		switch {
		case e.Msg.Op == wire.OpGrant:
			r.stats.ServerGrants++
			r.series.grant(now, false)
		case e.Msg.Op == wire.OpPushBack && e.Msg.Txn != 0:
			r.stats.PushBacks++
		}
		r.hostSend(id.host, id.host.port, now, frame(id.addr, e.To, &e.Msg, key))
	}
}

// scheduleSweep makes sure core k runs Expire at or after due (leases, grace period, idle
// states), as the lock server's sweep timer does.
func (id *identity) scheduleSweep(k int, due int64) {
	if due == math.MaxInt64 || due >= id.sweepAt[k] {
		return
	}
	id.sweepAt[k] = due
	r := id.r
	r.sim.at(due, func() {
		if id.sweepAt[k] != due {
			return // a sweep was scheduled earlier and has run
		}
		id.sweepAt[k] = math.MaxInt64
		if !id.host.up {
			return
		}
		now := max(r.sim.now, id.host.cpu[k])
		c := id.cores[k]
		id.effs = c.Expire(now, id.effs[:0])
		id.send(now, id.effs)
		id.scheduleSweep(k, c.NextDeadline())
	})
}
