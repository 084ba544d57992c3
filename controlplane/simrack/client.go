package simrack

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/testbed/hostshim"
	"github.com/netlock-go/netlock/wire"
)

// client is a simulated lock client: one acquisition at a time, retransmitted every RTO with
// the retry flag until answered, held, released (retransmitted until acknowledged or refused),
// then a think time. It gives back grants it did not ask for (the client library does), and
// withdraws a request it gives up on. It records what it observes for package history.
type client struct {
	s    *Sim
	i    int
	addr netip.AddrPort
	rng  *rand.Rand
	name string
	n    uint64
	cur  *op
}

type opState uint8

const (
	acquiring opState = iota
	holding
	releasing
)

type op struct {
	lock     uint32
	mode     wire.Mode
	prio     uint8
	txn      uint64
	ts       int64 // the acquire's timestamp: the lease counts from it
	first    int64
	token    uint64
	deadline int64
	state    opState
	gen      int // bumps at every state change: stale timers do nothing
}

func newClient(s *Sim, i int) *client {
	a := hostshim.DefaultPlan.Client(i)
	return &client{s: s, i: i, addr: netip.AddrPortFrom(a, uint16(40000+i)),
		rng: rand.New(rand.NewPCG(s.cfg.Seed, uint64(i))), name: fmt.Sprintf("c%d", i)}
}

func (c *client) start() { c.s.at(c.s.cfg.Think(c.rng), c.next) }

// serverOf is the address a client sends lock requests to: its server's (lock mod servers).
func (c *client) serverOf(lock uint32) netip.AddrPort {
	n := uint16(lock%uint32(c.s.cfg.Servers)) + 1
	return c.s.ctlServerAddr(n)
}

func (c *client) next() {
	lock, mode, prio := c.s.cfg.Pick(c.rng, c.i)
	c.n++
	o := &op{lock: lock, mode: mode, prio: prio, txn: uint64(c.i)<<32 | c.n, ts: c.s.now, first: c.s.now}
	c.cur = o
	c.s.rec.Record(history.Event{Kind: history.AcquireSent, Lock: lock, Txn: o.txn, Mode: mode, Priority: prio,
		At: c.s.Now(), Client: c.name})
	c.sendAcquire(o, false)
}

func (c *client) send(to netip.AddrPort, m wire.Fields) {
	c.s.send(c.i, c.addr, to, wire.Append(nil, &m))
}

func (c *client) sendAcquire(o *op, retry bool) {
	m := wire.Fields{Op: wire.OpAcquire, Mode: o.mode, Priority: o.prio, Lock: o.lock, Txn: o.txn, Timestamp: uint64(o.ts),
		LeaseMicros: uint32(c.s.cfg.Lease.Microseconds())}
	if retry {
		m.Flags = wire.FlagRetry
	}
	c.send(c.serverOf(o.lock), m)
	c.arm(o)
}

// arm schedules the retransmission of o's current request.
func (c *client) arm(o *op) {
	gen := o.gen
	c.s.at(c.s.cfg.RTO, func() {
		if c.cur != o || o.gen != gen {
			return
		}
		switch o.state {
		case acquiring:
			if c.s.now-o.first > int64(c.s.cfg.GiveUp) {
				c.send(c.serverOf(o.lock), wire.Fields{Op: wire.OpRelease, Mode: o.mode, Priority: o.prio, Lock: o.lock, Txn: o.txn})
				c.s.rec.Record(history.Event{Kind: history.Abandoned, Lock: o.lock, Txn: o.txn, At: c.s.Now(), Client: c.name})
				c.s.counts.Abandoned++
				c.done(o)
				return
			}
			c.sendAcquire(o, true)
		case releasing:
			c.sendRelease(o)
		}
	})
}

func (c *client) sendRelease(o *op) {
	c.send(c.serverOf(o.lock), wire.Fields{Op: wire.OpRelease, Mode: o.mode, Priority: o.prio, Lock: o.lock, Txn: o.txn,
		Token: o.token})
	c.arm(o)
}

func (c *client) done(o *op) {
	o.gen++
	c.cur = nil
	c.s.at(c.s.cfg.Think(c.rng), c.next)
}

// recv takes a datagram for the client.
func (c *client) recv(f udpframe.Frame) {
	if f.Dst != c.addr {
		return
	}
	h, err := wire.Parse(f.Payload)
	if err != nil {
		return
	}
	var m wire.Fields
	h.Decode(&m)
	o := c.cur
	mine := o != nil && m.Lock == o.lock && m.Txn == o.txn
	switch m.Op {
	case wire.OpGrant:
		c.s.accept.ObserveSent(f.Payload)
		if !mine || o.state != acquiring {
			if !mine || m.Token != o.token {
				// A grant nobody waits for (a request given up, a stale duplicate): give it back.
				c.s.counts.StrayGrants++
				c.send(f.Src, wire.Fields{Op: wire.OpRelease, Mode: m.Mode, Priority: m.Priority, Lock: m.Lock, Txn: m.Txn,
					Token: m.Token})
			}
			return
		}
		o.token = m.Token
		o.deadline = o.ts + int64(m.LeaseMicros)*1000
		o.state = holding
		o.gen++
		c.s.counts.Acquired++
		c.s.rec.Record(history.Event{Kind: history.Granted, Lock: o.lock, Txn: o.txn, Mode: m.Mode, Token: m.Token,
			Deadline: time.Unix(0, o.deadline), At: c.s.Now(), Client: c.name})
		gen := o.gen
		c.s.at(c.s.cfg.Hold(c.rng), func() {
			if c.cur != o || o.gen != gen {
				return
			}
			at := min(c.s.now, o.deadline)
			c.s.rec.Record(history.Event{Kind: history.Released, Lock: o.lock, Txn: o.txn, At: time.Unix(0, at), Client: c.name})
			o.state = releasing
			o.gen++
			c.sendRelease(o)
		})
	case wire.OpReject:
		if !mine {
			return
		}
		switch {
		case o.state == acquiring && m.Token == 0:
			c.s.counts.Rejected++
			c.s.rec.Record(history.Event{Kind: history.Rejected, Lock: o.lock, Txn: o.txn, At: c.s.Now(), Client: c.name})
			c.done(o)
		case o.state == holding && m.Token == o.token && m.Status == wire.StatusLeaseExpired:
			// The lease ran out in the switch (a force-release) or the server.
			c.s.counts.Lost++
			c.s.rec.Record(history.Event{Kind: history.Lost, Lock: o.lock, Txn: o.txn,
				At: time.Unix(0, min(c.s.now, o.deadline)), Client: c.name})
			c.done(o)
		case o.state == releasing:
			c.done(o) // not-holder or lease-expired: the grant is over either way
		}
	case wire.OpRelease:
		if mine && o.state == releasing && m.Flags&wire.FlagReply != 0 {
			c.done(o)
		}
	}
}

// crash makes the client stop dead: it never sends anything again (a lock it holds or will be
// granted is never released).
func (c *client) crash() {
	c.s.ports[c.i] = func(udpframe.Frame) {}
	if o := c.cur; o != nil {
		o.gen++
	}
	c.cur = &op{gen: -1}
}
