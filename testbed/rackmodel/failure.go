package rackmodel

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// Failures and the control plane's answers to them (paper section 4.5, Figure 15), as the real
// controller (controlplane/ctlcore, docs/controlplane.md) does them, on the model's clock:
//
//   - Switch restart. The switch drops everything from the restart until it is back, then comes
//     back with a fresh program (empty tables, zero registers) and forwards nothing until the
//     controller pushes the pipeline. The controller's sweep (every SweepPeriod) finds the
//     pipeline gone, programs the switch from scratch (rack, servers, routes, clone sessions,
//     cookie) at once, so that the locks that live on the servers are served again; the locks
//     that were in the switch are switch-resident at their servers (wire.AdminYield: their
//     acquires are dropped, the clients retransmit), and only once MaxLease + LeaseMargin have
//     passed since the detection (every lease the lost switch granted has run out) does the
//     controller hand each of them back to its server (wire.AdminAdopt) with a token floor above
//     every token the lost switch can have granted (the largest grant counter the sweeps saw,
//     plus the switch's line rate for the time since). Hot locks go back into the switch at the
//     next allocation (Allocate).
//   - Lock server death. The controller pings every server each PingPeriod; one that misses
//     DeadAfter pings in a row is declared dead, and its locks move to another server: the
//     switch routes the dead server's address to the other machine, which serves it from a
//     fresh state with the next token epoch and grants nothing for MaxLease + LeaseMargin (the
//     dead server's holders may still hold); every switch lock of the dead server goes out of
//     the switch (paused, drained, adopted by the new server above the switch's tokens, entry
//     deleted), since its q2 died with the server.
//
// Model simplifications: the controller's table writes and admin packets take no virtual time;
// a ping is answered at once by a live server and never by a dead one (no network loss); a dead
// server stays dead (the model has no controller lease at the servers: it does not need one, a
// dead server grants nothing).

// errSwitchDown is the answer of a switch that is down or has no pipeline to an admin packet.
var errSwitchDown = errors.New("the switch is down or has no pipeline")

// Event is something that happened to the rack: a failure, a step of the control plane.
type Event struct {
	At   time.Duration `json:"at_ns"`
	What string        `json:"what"`
}

// Events returns what happened so far (failures and the control plane's steps), in order.
func (r *Rack) Events() []Event { return slices.Clone(r.events) }

func (r *Rack) event(format string, args ...any) {
	e := Event{At: time.Duration(r.sim.now), What: fmt.Sprintf(format, args...)}
	r.events = append(r.events, e)
	r.log.Info("rackmodel: "+e.What, "at", e.At)
}

// control is the model's controller state (StartControl).
type control struct {
	on         bool
	gen        uint64 // bumped when the switch restarts: pending tasks of an older generation stop
	cookie     uint64
	maxToken   uint64 // the largest switch grant counter the sweeps saw (as a token)
	maxTokenAt int64
	floors     map[int]uint64 // per home: the largest token floor handed to its server
	misses     []int          // per server host: pings missed in a row
	dead       []bool
	recovering bool
}

// ctlAddr is the controller's address: answers to its admin requests are addressed there.
var ctlAddr = netip.AddrPortFrom(netip.MustParseAddr("10.0.0.2"), wire.Port)

// StartControl starts the controller's periodic tasks: the sweep every SweepPeriod (the
// switch's cookie, the grant counters of the switch locks, a force-release of every switch
// holder whose lease ran out on the switch's clock) and the pings of the servers every
// PingPeriod. Without it the rack has no failure handling (and costs no sweep).
func (r *Rack) StartControl() {
	if r.ctl.on {
		return
	}
	r.ctl.on = true
	r.ctl.cookie = 0x6e6c_636f_6f6b_6965 ^ r.cfg.Seed
	r.sw.setCookie(r.ctl.cookie)
	r.ctl.misses = make([]int, len(r.servers))
	r.ctl.dead = make([]bool, len(r.servers))
	r.every(r.p.SweepPeriod, r.sweep)
	r.every(r.p.PingPeriod, r.ping)
}

// every runs fn every d from now on.
func (r *Rack) every(d time.Duration, fn func()) {
	var tick func()
	tick = func() {
		fn()
		r.sim.at(r.sim.now+int64(d), tick)
	}
	r.sim.at(r.sim.now+int64(d), tick)
}

// RestartSwitch stops the switch now (every frame it gets is dropped, its state is lost) and
// brings it back after down with a fresh program and no pipeline, as a rebooted switch.
func (r *Rack) RestartSwitch(down time.Duration) {
	r.sw.up = false
	r.event("switch down")
	r.sim.at(r.sim.now+int64(down), func() {
		if err := r.sw.load(); err != nil {
			r.log.Error("rackmodel: reloading the switch", "err", err)
			return
		}
		r.sw.up, r.sw.pipeline, r.sw.pipeFree = true, false, 0
		r.event("switch back, no pipeline")
	})
}

// FailServer stops server machine s now: every frame it gets is dropped, its lock state is lost.
func (r *Rack) FailServer(s int) error {
	if s < 0 || s >= len(r.servers) {
		return fmt.Errorf("rackmodel: no server %d", s)
	}
	r.servers[s].up = false
	r.event("server %d down", s)
	return nil
}

func (s *vswitch) setCookie(c uint64) {
	if _, err := s.admin(dataplane.AdminRequest{Op: wire.AdminSwitchSetCookie, ID: 3, Value: c}); err != nil {
		s.r.log.Error("rackmodel: setting the cookie", "err", err)
	}
}

// sweep is the controller's periodic sweep.
func (r *Rack) sweep() {
	sw := r.sw
	switch {
	case !sw.up:
		return // the stream to the switch is broken; try again next period
	case !sw.pipeline:
		r.fresh("no pipeline")
		return
	}
	if rep, err := sw.admin(dataplane.AdminRequest{Op: wire.AdminSwitchGetCookie, ID: 4}); err != nil || rep.Value != r.ctl.cookie {
		r.fresh("cookie changed")
		return
	}
	now := r.sim.now
	for _, l := range r.installedLocks() {
		head, err := sw.admin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, ID: 5, Lock: l})
		if err != nil || head.Result != dataplane.AdminOK {
			continue
		}
		if head.Value >= r.ctl.maxToken {
			r.ctl.maxToken, r.ctl.maxTokenAt = head.Value, now
		}
		for lv := range dataplane.Levels {
			for off := range int(head.Used[lv]) {
				rep := head
				if lv != 0 || off != 0 {
					rep, err = sw.admin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, ID: 6, Lock: l, Level: uint8(lv),
						Offset: uint16(off)})
					if err != nil || rep.Result != dataplane.AdminOK {
						continue
					}
				}
				if rep.Live && rep.Token != 0 && rep.Now-rep.GrantTime > rep.Lease {
					f, err := sw.admin(dataplane.AdminRequest{Op: wire.AdminSwitchForceRelease, ID: 7, Lock: l, Txn: rep.Txn,
						Token: rep.Token})
					if err == nil && f.Result == dataplane.AdminOK {
						r.stats.ForceReleases++
					}
				}
			}
		}
	}
}

func (r *Rack) installedLocks() []uint32 {
	ls := make([]uint32, 0, len(r.installed))
	for l := range r.installed {
		ls = append(ls, l)
	}
	slices.Sort(ls)
	return ls
}

// fresh programs a restarted switch from scratch and starts the recovery of the locks it held.
func (r *Rack) fresh(why string) {
	detected := r.sim.now
	r.ctl.gen++
	r.sw.pipeline = true
	if err := r.sw.program(); err != nil {
		r.log.Error("rackmodel: programming the switch", "err", err)
		return
	}
	r.sw.setCookie(r.ctl.cookie)
	r.installed = map[uint32]dataplane.LockEntry{}
	// The locks the lost switch held: switch-resident at their servers.
	var residents [][2]uint32 // home, lock
	for _, id := range r.idents {
		for _, c := range id.cores {
			for _, l := range c.Residents(nil, 0, math.MaxInt) {
				residents = append(residents, [2]uint32{uint32(id.home), l})
			}
		}
	}
	floor := r.tokenBound(detected)
	wait := int64(r.maxLease() + r.p.LeaseMargin)
	if r.cfg.Fault.NoRecoveryWait {
		wait = 0
	}
	r.event("switch re-programmed (%s); %d switch locks wait out the leases until +%v", why, len(residents),
		time.Duration(wait))
	r.ctl.recovering = len(residents) > 0
	gen := r.ctl.gen
	r.sim.at(detected+wait, func() {
		if gen != r.ctl.gen {
			return
		}
		for _, hl := range residents {
			r.adopt(r.idents[hl[0]], hl[1], floor)
		}
		r.ctl.recovering = false
		r.event("leases waited out: %d locks adopted by their servers (token floor %d)", len(residents), floor)
	})
}

// Recovering reports whether a switch restart's recovery is waiting out the leases.
func (r *Rack) Recovering() bool { return r.ctl.recovering }

func (r *Rack) maxLease() time.Duration { return 2 * r.p.Lease }

// tokenBound bounds every token the lost switch can have granted before detected: the largest
// grant counter seen, plus one grant per pipeline pass at line rate since it was seen (as
// ctlcore's tokenBound, with the switch's line rate as the grant rate).
func (r *Rack) tokenBound(detected int64) uint64 {
	bits := r.p.Sizing.SlotBits()
	dt := float64(max(detected-r.ctl.maxTokenAt, 0)) / 1e9
	grants := uint64(math.Ceil(dt*r.p.SwitchMpps*1e6)) + 2
	return ((r.ctl.maxToken >> bits) + grants) << bits
}

// adminServer runs a control-plane admin request on lock's core of id now (no virtual time) and
// sends what it makes besides the reply to the controller.
func (r *Rack) adminServer(id *identity, f wire.Fields) {
	k := r.coreOf(f.Lock)
	f.Op = wire.OpAdmin
	req := lockcore.Request{Fields: f, From: ctlAddr}
	effs := id.cores[k].Step(r.sim.now, &req, nil)
	effs = slices.DeleteFunc(effs, func(e lockcore.Effect) bool { return e.To == ctlAddr })
	id.send(r.sim.now, effs)
	id.scheduleSweep(k, id.cores[k].NextDeadline())
}

// adopt makes lock server-owned at id above floor (wire.AdminAdopt). The controller remembers
// the largest floor it gave each server: a takeover's epoch must be above it.
func (r *Rack) adopt(id *identity, lock uint32, floor uint64) {
	if r.ctl.floors == nil {
		r.ctl.floors = map[int]uint64{}
	}
	r.ctl.floors[id.home] = max(r.ctl.floors[id.home], floor)
	r.adminServer(id, wire.Fields{Status: wire.AdminAdopt, Lock: lock, Token: floor})
}

// ping pings every server host; one that misses DeadAfter pings in a row is declared dead.
func (r *Rack) ping() {
	for s, h := range r.servers {
		if r.ctl.dead[s] {
			continue
		}
		if h.up {
			r.ctl.misses[s] = 0
			continue
		}
		r.ctl.misses[s]++
		if r.ctl.misses[s] >= r.p.DeadAfter {
			r.ctl.dead[s] = true
			r.failover(h)
		}
	}
}

// failover moves the identities (addresses and locks) of dead host h to another live host.
func (r *Rack) failover(h *serverHost) {
	var to *serverHost
	for _, o := range r.servers {
		if o.up && o != h {
			to = o
			break
		}
	}
	if to == nil {
		r.event("server %d dead and no server left: its locks wait", h.idx)
		return
	}
	grace := int64(r.maxLease() + r.p.LeaseMargin)
	if r.cfg.Fault.NoLeaseWait {
		grace = 0
	}
	moved := h.idents
	h.idents = nil
	for _, old := range moved {
		after := int64(0)
		if grace > 0 {
			after = r.sim.now + grace
		}
		// The next epoch, above every token the dead server can have granted: its epoch's, and
		// the floors the controller raised it to (a switch restart's token bound can span
		// epochs).
		epoch := max(old.epoch, r.ctl.floors[old.home]>>40) + 1
		id, err := newIdentityAfter(r, old.home, epoch, after)
		if err != nil {
			r.log.Error("rackmodel: failover", "err", err)
			return
		}
		id.host = to
		to.idents = append(to.idents, id)
		r.idents[old.home] = id
		if r.sw.up && r.sw.pipeline {
			if err := r.sw.setServer(id); err != nil {
				r.log.Error("rackmodel: failover", "err", err)
			}
		}
		n := 0
		for _, l := range r.installedLocks() {
			if int(r.installed[l].Server) == old.home {
				r.moveOut(l)
				n++
			}
		}
		r.event("server %d declared dead: its locks move to server %d (epoch %d, no grants for %v); %d switch locks move out",
			h.idx, to.idx, id.epoch, time.Duration(grace), n)
		home := old.home
		r.sim.at(r.sim.now+grace, func() { r.event("grace over: server %d grants server %d's locks", to.idx, home) })
	}
}

// moveOut takes a switch lock out of the switch while clients run (docs/dataplane.md, "Moving a
// lock"): the entry is paused (new acquires go to the server's q2), the sweep probes it until
// its switch queue is empty, then its server adopts it above the switch's tokens and the entry
// is deleted.
func (r *Rack) moveOut(lock uint32) {
	e, ok := r.installed[lock]
	if !ok {
		return
	}
	e.Paused = true
	if err := r.sw.dp.SetLock(e); err != nil {
		r.log.Error("rackmodel: pausing a lock", "lock", lock, "err", err)
		return
	}
	r.installed[lock] = e
	gen := r.ctl.gen
	var poll func()
	poll = func() {
		if gen != r.ctl.gen {
			return
		}
		head, err := r.sw.admin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, ID: 8, Lock: lock})
		if err != nil || head.Result != dataplane.AdminOK || head.Holders > 0 || head.Waiting != [dataplane.Levels]uint16{} ||
			head.Used != [dataplane.Levels]uint16{} {
			r.sim.at(r.sim.now+int64(r.p.SweepPeriod), poll)
			return
		}
		bits := r.p.Sizing.SlotBits()
		floor := ((head.Value >> bits) + 1) << bits
		r.adopt(r.idents[e.Server], lock, floor)
		if err := r.sw.dp.DeleteLock(lock); err != nil {
			r.log.Error("rackmodel: deleting a lock entry", "lock", lock, "err", err)
		}
		delete(r.installed, lock)
		r.stats.MovedOut++
	}
	poll()
}
