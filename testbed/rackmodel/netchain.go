package rackmodel

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/client/clientcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/netchain"
	"github.com/netlock-go/netlock/wire"
)

// NetChain makes the rack the paper's NetChain baseline (NetLock, SIGCOMM'20, section 6.1 and
// Figures 10 and 11): the switch runs p4/netchain/netchain.p4 on the engine instead of netlock.p4
// (one slot per lock, every lock exclusive, no queue: an acquire of a held slot is rejected
// would-block), the lock servers and the controller take no part ("NetChain only uses the switch,
// and does not use any servers for lock processing"), and every client worker runs package
// client's NetChain rules: its transaction's locks mapped onto the slots (client.NetChainLocks),
// every acquire sent to the switch as a try, and a rejected acquire handled by Policy
// (client.NetChainPolicy): by default sent again after client.NetChainBackoff's wait, holding the
// locks it has (the slots are taken in one global order, so the retries cannot deadlock); with
// client.NetChainRollback, NetLock's own client code's rule: sent again at once, and a run of the
// transaction not granted every lock by its deadline is rolled back (every held lock released,
// the acquire in flight sent again on every reject until granted, then released at once; each
// rollback counted in Counters.Rollbacks and Aborts), then the same transaction runs again after
// the policy's wait. A NetChain grant has no lease.
type NetChain struct {
	// Slots is the switch's lock slots (the program's NETCHAIN_SLOTS). Default
	// netchain.DefaultSlots.
	Slots int
	// Policy is the clients' rule for rejects. The zero value is the hold-and-backoff rule with
	// client.DefaultNetChainBackoff.
	Policy client.NetChainPolicy
}

// ncState is a NetChain rack's own state.
type ncState struct {
	cfg NetChain
	rng *rand.Rand // the backoff's jitter and the rerun wait's draw
}

func newNCState(cfg NetChain, seed uint64) *ncState {
	if cfg.Slots <= 0 {
		cfg.Slots = netchain.DefaultSlots
	}
	return &ncState{cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x6e63))}
}

// jitter is the policy's uniform draw in [0, n].
func (n *ncState) jitter(x int64) int64 {
	if x <= 0 {
		return 0
	}
	return n.rng.Int64N(x + 1)
}

// bringUpNetChain loads netchain.p4 (TestingKnobs.Program replaces it) and writes its routes: a
// /32 to every host of the rack. It plays the control plane of a program that has no other.
func (r *Rack) bringUpNetChain() error {
	s := r.sw
	cfg := engine.Config{
		TofinoConstraints: true,
		Now:               func() time.Time { return vtime(s.now) },
	}
	sw, err := netchain.Load(r.cfg.TestingKnobs.Program, r.nc.cfg.Slots, cfg)
	if err != nil {
		return fmt.Errorf("rackmodel: %w", err)
	}
	route := func(a netip.Addr, port int) error {
		return sw.AddRoute(netip.PrefixFrom(a, 32), dataplane.NextHop{SrcMAC: switchMAC, DstMAC: macFor(a), Port: port})
	}
	for _, c := range r.clients {
		if err := route(c.ip, c.port); err != nil {
			return err
		}
	}
	for _, sv := range r.servers {
		if !sv.standby {
			if err := route(sv.addr.Addr(), sv.port); err != nil {
				return err
			}
		}
	}
	s.nc = sw
	return nil
}

// ncRoute is a NetChain client's route: every lock to the switch.
func ncRoute(uint32) (netip.AddrPort, error) { return netip.AddrPortFrom(switchIP, wire.Port), nil }

// ncRetry takes a NetChain reject of the acquire h: true if its lock is asked for again after
// the policy's wait (a would-block; at once with the rollback rule, also while the run rolls
// back), false if the transaction must abort (any other refusal).
func (w *worker) ncRetry(h *hold, err error) bool {
	r := w.rack()
	if r.nc == nil || !errors.Is(err, clientcore.ErrWouldBlock) {
		return false
	}
	h.rejects++
	d := r.nc.cfg.Policy.Resend(h.rejects, r.nc.jitter)
	if d <= 0 {
		w.send(h.idx, h)
		return true
	}
	if w.ncBurst() {
		id := w.id
		r.at(r.k.Now()+int64(d), func() {
			if !w.crashed && w.id == id {
				w.send(h.idx, h)
			}
		})
		return true
	}
	w.state = wBackoff
	r.at(r.k.Now()+int64(d), func() {
		if !w.crashed && (w.state == wBackoff || w.rolling) {
			w.send(h.idx, h)
		}
	})
	return true
}

// runRule is the clients' rule for a run of a transaction (Rack.run): a NetChain rack's
// NetChain.Policy or a netlock rack's Config.ClientC, and the uniform draw in [0, n] its waits
// take (a NetChain rack's: the backoff's jitter).
type runRule struct {
	p    client.NetChainPolicy
	draw func(n int64) int64
}

// ncBurst reports whether the worker sends every acquire of a run at once
// (client.NetChainPolicy.Burst).
func (w *worker) ncBurst() bool {
	r := w.rack()
	return r.run != nil && r.run.p.Burst
}

// ncArm sets the deadline of the run of the transaction that begins now (the rollback rule; the
// backoff rule has none). rerun: it runs again after a rollback, whose timer it keeps.
func (w *worker) ncArm(rerun bool) {
	r := w.rack()
	if r.run == nil {
		return
	}
	now := r.k.Now()
	at, ok := r.run.p.Deadline(time.Duration(now), time.Duration(w.rolledBack), rerun, w.txn.Hold)
	if !ok {
		return
	}
	id := w.id
	r.at(max(int64(at), now), func() { w.ncDeadline(id) })
}

// ncDeadline is the deadline of the run id: if it has not been granted every lock, it rolls
// back (ncRollback).
func (w *worker) ncDeadline(id uint64) {
	if w.crashed || w.id != id || w.rolling || w.got >= len(w.txn.Locks) {
		return
	}
	switch w.state {
	case wAcquiring, wBackoff, wThinking:
	default:
		return
	}
	w.rack().stats.Rollbacks++
	w.ncRollback()
}

// ncRollback rolls the run back: every held lock is released now, the acquires out are left to
// finish (acquired releases a grant at once, ncRetry sends a rejected one again), and
// ncRollbackDone starts the rerun once nothing is held or out.
func (w *worker) ncRollback() {
	w.rolling = true
	w.state = wRollback
	w.releaseHeld()
	w.ncRollbackDone()
}

// ncRollbackDone ends a rollback once every release is answered and no acquire is in flight:
// the rolled-back run counts as an abort, and the same transaction runs again after the
// policy's wait (its latency, if it commits, counts from its first run).
func (w *worker) ncRollbackDone() {
	if !w.rolling || w.pend > 0 || w.out > 0 {
		return
	}
	r := w.rack()
	now := r.k.Now()
	w.rolling = false
	r.stats.Aborts++
	w.stats.Aborts++
	w.rerun, w.rolledBack = true, now
	w.state = wPausing
	r.at(now+int64(r.run.p.RerunWait(r.run.draw)), func() {
		if w.state == wPausing {
			w.begin()
		}
	})
}
