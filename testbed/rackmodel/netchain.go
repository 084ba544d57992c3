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
// every acquire sent to the switch as a try, and a rejected acquire sent again after
// client.NetChainBackoff's wait, holding the locks it has (the slots are taken in one global
// order, so the retries cannot deadlock). A NetChain grant has no lease.
type NetChain struct {
	// Slots is the switch's lock slots (the program's NETCHAIN_SLOTS). Default
	// netchain.DefaultSlots.
	Slots int
	// Backoff is the clients' wait before they retry a rejected acquire. Default
	// client.DefaultNetChainBackoff.
	Backoff client.NetChainBackoff
}

// ncState is a NetChain rack's own state.
type ncState struct {
	cfg NetChain
	rng *rand.Rand // the backoff's jitter
}

func newNCState(cfg NetChain, seed uint64) *ncState {
	if cfg.Slots <= 0 {
		cfg.Slots = netchain.DefaultSlots
	}
	if cfg.Backoff.Base <= 0 {
		cfg.Backoff = client.DefaultNetChainBackoff
	}
	return &ncState{cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x6e63))}
}

// jitter is the backoff's uniform draw in [0, n].
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

// ncRetry takes a NetChain reject of the worker's acquire in flight: true if the acquire is
// retried after the backoff (a would-block), false if the transaction must abort (any other
// refusal).
func (w *worker) ncRetry(err error) bool {
	r := w.rack()
	if r.nc == nil || !errors.Is(err, clientcore.ErrWouldBlock) {
		return false
	}
	w.rejects++
	d := r.nc.cfg.Backoff.Delay(w.rejects, r.nc.jitter)
	w.state = wBackoff
	r.at(r.k.Now()+int64(d), func() {
		if !w.crashed && w.state == wBackoff {
			w.acquire()
		}
	})
	return true
}
