package lockserver

import (
	"fmt"
	"sync/atomic"

	"github.com/netlock-go/netlock/internal/rdmaproto"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/tablehandle"
	"github.com/netlock-go/netlock/rdma/verbs"
	"github.com/netlock-go/netlock/wire"
)

// Modes of the RDMA tier (RDMAConfig.Mode, config key rdma.mode).
const (
	// RDMAModeALock keeps the RDMA-backed locks as ALocks (SPAA '24): exclusive only, the
	// server's node in the local cohort with CPU atomics, remote clients in the remote cohort.
	RDMAModeALock = "alock"
	// RDMAModeRW keeps them as RMA-RW locks (HPDC '16, rdma/rma): shared requests are shared.
	// Every node (the server's and each remote client's) is an element of the lock tree with its
	// own node-level queue per lock (CPU atomics); the machine-level queue and the reader
	// counters live in the server's memory and are taken with NIC atomics (loopback on the
	// server's node).
	RDMAModeRW = "rw"
)

// rwTable is the RMA-RW table of a tier in RW mode.
type rwTable struct {
	tbl  *rma.Table
	pool *rma.TablePool
}

func newRWTable(node *emu.Node, stop *atomic.Bool, locks int, p rma.TableParams) (*rwTable, error) {
	tbl, err := rma.NewTable(node.NewEndpoint(), locks, p)
	if err != nil {
		return nil, fmt.Errorf("rdma table: %w", err)
	}
	view := tbl.NodeView(node.ID(), node.Alloc)
	pool := view.NewPool(func() verbs.Endpoint { return rdmaproto.Wrap(node.NewEndpoint(), stop, nil) })
	return &rwTable{tbl: tbl, pool: pool}, nil
}

// busy reports whether lock is held or wanted by a writer (for a shared try) or by anyone (an
// exclusive try), from the server's memory (loads only: never a conflict with NIC atomics).
func (t *rwTable) busy(node *emu.Node, lock uint32, shared bool) bool {
	return t.tbl.Busy(int(lock), !shared, func(p verbs.Ptr) uint64 { return node.Load(p.Offset()) })
}

// handles is where the tier's table handles come from and go back to: the RMA-RW pool in RW mode,
// else the ALock pool.
func (r *rdmaTier) handles() tablehandle.Source {
	src := tablehandle.Source{ALock: r.pool, Table: r.tbl}
	if r.rw != nil {
		src.RW = r.rw.pool
	}
	return src
}

// holder serves one core grant of an RDMA lock in RW mode: it takes the RMA-RW lock in the
// grant's mode on a handle of its own (so the shared grants the core makes at once are held at
// once), sends the grant unless the holder ended meanwhile, waits until the core ends the
// holder, and releases. The core only makes compatible grants, so holders of one lock never
// wait for each other except as the lock itself orders them. On shutdown a grant not yet sent is
// answered reject shutdown; one already sent stays the client's until its lease ends.
func (r *rdmaTier) holder(lock uint32, p *pending) {
	r.proxies.Add(1)
	defer r.proxies.Add(-1)
	rl := &r.locks[lock]
	h, err := r.rw.pool.Get()
	if err != nil {
		r.s.log.Error("rdma holder handle", "lock", lock, "err", err)
		r.abandonGrant(rl, p)
		return
	}
	rl.mu.Lock()
	shared := p.grant.Msg.Mode == wire.Shared
	rl.mu.Unlock()
	take := !r.unsafeNoALock()
	if take {
		r.beforeLock(lock)
	}
	if err := rdmaproto.Do(func() error {
		switch {
		case !take:
			return nil
		case shared:
			return h.RLock(int(lock))
		}
		return h.Lock(int(lock))
	}); err != nil {
		r.abandonGrant(rl, p) // shutting down; the handle is discarded with the table
		return
	}
	rl.mu.Lock()
	stopping := r.serveLocked(rl, p)
	if !stopping {
		rl.remove(p)
	}
	rl.mu.Unlock()
	if stopping {
		r.abandonGrant(rl, p)
		return
	}
	if take {
		if err := rdmaproto.Do(func() error { return h.Unlock(int(lock)) }); err != nil {
			return
		}
	}
	_ = r.rw.pool.Put(h)
}

// remove takes p out of the queue (rl.mu held).
func (rl *rlock) remove(p *pending) {
	for i, q := range rl.q {
		if q == p {
			rl.q = append(rl.q[:i], rl.q[i+1:]...)
			break
		}
	}
	if len(rl.q) == 0 {
		rl.q = nil
	}
}

// abandonGrant ends one RW-mode grant on shutdown (or when no handle can be made): a grant not
// sent yet is answered reject shutdown.
func (r *rdmaTier) abandonGrant(rl *rlock, p *pending) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if !p.held && !p.ended {
		m := p.grant.Msg
		m.Op, m.Status, m.Flags, m.LeaseMicros = wire.OpReject, wire.StatusShutdown, m.Flags&wire.FlagForwarded, 0
		p.ended = true
		rej := lockcore.Effect{To: p.grant.To, Msg: m}
		r.send(&rej)
	}
	rl.remove(p)
}
