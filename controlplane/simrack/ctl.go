package simrack

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// ctl is one controller: a Core and the shell that carries out its effects in the simulated
// rack. P4Runtime operations take AdminDelay each way; admin packets go through the engine's CPU
// port; server admin requests leave from the controller's own address on port 250 and come back
// there, through the switch, like any datagram.
type ctl struct {
	s       *Sim
	core    *ctlcore.Core
	num     int
	alive   bool
	wait    map[uint64]bool   // effects without a Result yet
	admin   map[uint16]uint64 // admin request id -> effect
	srvWait map[uint64]uint64 // server admin txn -> effect
	tickAt  int64
	nadmin  uint16
}

// step hands the Core one input and carries out its effects.
func (c *ctl) step(in ctlcore.Input) {
	if !c.alive {
		return
	}
	if p, ok := in.(ctlcore.Primary); ok && p.IsPrimary {
		c.s.primary = c.num
	}
	for _, e := range c.core.Step(c.s.Now(), in) {
		c.do(e)
	}
	c.schedule()
}

// schedule makes sure a Tick comes at the Core's next deadline.
func (c *ctl) schedule() {
	d := c.core.NextDeadline()
	if d.IsZero() {
		return
	}
	at := max(d.UnixNano(), c.s.now)
	if c.tickAt > c.s.now && c.tickAt <= at {
		return
	}
	c.tickAt = at
	c.s.at(time.Duration(at-c.s.now), func() {
		if c.tickAt == at {
			c.tickAt = 0
		}
		c.step(ctlcore.Tick{})
	})
}

func (c *ctl) result(r ctlcore.Result) {
	if !c.wait[r.ID] {
		return
	}
	delete(c.wait, r.ID)
	c.step(r)
}

func (c *ctl) do(e ctlcore.Effect) {
	s := c.s
	id := e.EffectID()
	c.wait[id] = true
	s.at(s.cfg.Timeout, func() { c.result(ctlcore.Result{ID: id, Err: ctlcore.ErrTimeout}) })
	later := func(r ctlcore.Result) { s.at(s.cfg.AdminDelay, func() { c.result(r) }) }
	switch e := e.(type) {
	case ctlcore.Write:
		s.at(s.cfg.AdminDelay, func() { later(ctlcore.Result{ID: id, Err: s.apply(e)}) })
	case ctlcore.PushPipeline:
		s.at(s.cfg.AdminDelay, func() {
			if s.sw == nil {
				return
			}
			if err := s.loadSwitch(); err != nil {
				later(ctlcore.Result{ID: id, Err: err})
				return
			}
			s.hasP4 = true
			later(ctlcore.Result{ID: id})
		})
	case ctlcore.GetPipeline:
		s.at(s.cfg.AdminDelay, func() {
			if s.sw != nil {
				later(ctlcore.Result{ID: id, HasPipeline: s.hasP4})
			}
		})
	case ctlcore.ReadLocks:
		s.at(s.cfg.AdminDelay, func() {
			if s.sw != nil {
				r, err := s.readLocks()
				r.ID, r.Err = id, err
				later(r)
			}
		})
	case ctlcore.SwitchAdmin:
		s.at(s.cfg.AdminDelay, func() {
			if s.sw == nil || !s.hasP4 {
				return
			}
			c.nadmin++
			req := e.Req
			req.ID = c.nadmin
			c.admin[req.ID] = id
			res, err := s.sw.PacketOut(req.PacketOut(nil, s.cfg.Key))
			if err != nil {
				s.counts.EngineErrors++
				return
			}
			s.deliver(res)
		})
	case ctlcore.ServerAdmin:
		sv := s.ctlServerAddr(e.Server)
		msg := e.Msg
		c.srvWait[msg.Txn] = id
		b := append(wire.Append(nil, &msg), make([]byte, wire.AuthLen)...)
		wire.SetRackKey(b, s.cfg.Key)
		s.send(ctlPort, netip.AddrPortFrom(s.plan.ctlIP, 9000+uint16(c.num)), sv, b)
	default:
		panic(fmt.Sprintf("simrack: unknown effect %T", e))
	}
}

// ctlServerAddr is server n's address (the controller's configuration: it does not change at a
// failover, the route does).
func (s *Sim) ctlServerAddr(n uint16) netip.AddrPort {
	return netip.AddrPortFrom(s.srvAddr(n), wire.Port)
}

func (s *Sim) srvAddr(n uint16) netip.Addr {
	if sv := s.srv[n]; sv != nil {
		return sv.addr.Addr()
	}
	return netip.Addr{}
}

// ctlRecv takes the datagrams for the controllers' address: server admin answers.
func (s *Sim) ctlRecv(f udpframe.Frame) {
	h, err := wire.Parse(f.Payload)
	if err != nil {
		return
	}
	var m wire.Fields
	h.Decode(&m)
	i := int(f.Dst.Port()) - 9000
	if i < 0 || i >= len(s.ctls) {
		return
	}
	c := s.ctls[i]
	id, ok := c.srvWait[m.Txn]
	if !ok {
		return
	}
	delete(c.srvWait, m.Txn)
	var body []byte
	if len(f.Payload) > wire.ControlLen {
		body = append([]byte(nil), f.Payload[wire.ControlLen:]...)
	}
	c.result(ctlcore.Result{ID: id, Server: m, Body: body})
}

// packetIn takes an admin reply from the switch's CPU port.
func (s *Sim) packetIn(b []byte) {
	_, _, frame, err := dataplane.ParsePacketIn(b)
	if err != nil {
		return
	}
	rep, err := dataplane.ParseAdminReply(frame)
	if err != nil {
		return
	}
	for _, c := range s.ctls {
		if id, ok := c.admin[rep.ID]; ok {
			delete(c.admin, rep.ID)
			s.at(s.cfg.AdminDelay, func() { c.result(ctlcore.Result{ID: id, Admin: rep}) })
			return
		}
	}
}

// apply carries out a Write on the engine's runtime API.
func (s *Sim) apply(w ctlcore.Write) error {
	if s.sw == nil {
		return errors.New("simrack: switch down")
	}
	for _, u := range w.Updates {
		e := u.Entity
		var err error
		switch {
		case e.Rack != nil:
			err = s.sw.SetRack(*e.Rack)
		case e.Server != nil:
			err = s.sw.SetServer(e.ServerNum, *e.Server)
		case e.Route != nil:
			err = s.sw.AddRoute(e.Prefix, *e.Route)
		case e.Lock != nil:
			if u.Op == ctlcore.Delete {
				if err = s.sw.DeleteLock(e.Lock.Lock); errors.Is(err, engine.ErrNotFound) {
					err = fmt.Errorf("%w: %v", ctlcore.ErrNotFound, err)
				}
			} else {
				err = s.sw.SetLock(*e.Lock)
			}
		case e.Tenant != nil:
			err = s.sw.SetTenantLimit(e.Tenant.ID, e.Tenant.Meter, e.Tenant.Rate, e.Tenant.Burst)
		default:
			s.sw.AddPortSession(e.ClonePort)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readLocks reads the lock table and its direct counters.
func (s *Sim) readLocks() (ctlcore.Result, error) {
	t, err := s.sw.Table(dataplane.TableLock)
	if err != nil {
		return ctlcore.Result{}, err
	}
	r := ctlcore.Result{Hits: map[uint32]uint64{}}
	for _, e := range t.Entries() {
		le, err := dataplane.ParseLockEntry(e.Match[0].Value, e.Action, e.Args)
		if err != nil {
			return ctlcore.Result{}, err
		}
		r.Locks = append(r.Locks, le)
		r.Hits[le.Lock] = e.Packets
	}
	return r, nil
}
