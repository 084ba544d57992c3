package ctlcore

import (
	"github.com/netlock-go/netlock/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// Servers (docs/controlplane.md, "Lock server death"). The Core pings every server each
// PingPeriod with its term; a ping renews the server's controller lease (lockserver's
// controller_lease: a server grants nothing once its lease ran out). A server that misses
// DeadAfter pings in a row is suspected and no longer pinged; once ServerLease + LeaseMargin have
// passed since the last ping sent to it, it can no longer grant, and it is declared dead. Its
// standby takes over its address: the switch routes the dead server's IP to the standby's port
// (ipv4_lpm, lock_servers), so the clients' retransmissions reach the standby unchanged; the
// standby is told the dead server's epoch (its tokens start above) and a grace of the longest
// lease (the dead server's holders may still hold); every switch lock of the dead server goes
// out and back in through the standby, since its q2 died with the server. A ping answered with
// another process instance (the server restarted) is handled the same way, without the standby.

func (c *Core) pingAll() {
	for _, n := range c.order {
		if s := c.servers[n]; !s.suspect && !s.pinging {
			c.ping(n, nil)
		}
	}
}

// ping pings server n with the Core's term; done (if set) runs when it is answered or failed.
func (c *Core) ping(n uint16, done func()) {
	s := c.servers[n]
	s.pinging = true
	s.lastPing = c.now
	c.serverAdmin(n, wire.Fields{Status: wire.AdminPing}, func(rep wire.Fields, _ []byte, err error) {
		s.pinging = false
		if done != nil {
			defer done()
		}
		if err != nil {
			s.alive = false
			s.misses++
			if s.misses >= c.cfg.DeadAfter && !s.suspect && !s.dead {
				c.suspect(n)
			}
			return
		}
		if s.dead {
			c.log.Info("server answers again", "server", n)
		}
		s.alive, s.dead, s.misses = true, false, 0
		c.serverEpoch(n, rep.Token<<40)
		inst := rep.LeaseMicros
		if s.instance != 0 && inst != s.instance {
			c.serverRestarted(n)
		}
		s.instance = inst
	})
}

// serverEpoch records a token or epoch base a server reported: its epoch is at least token>>40.
func (c *Core) serverEpoch(n uint16, token uint64) {
	if s := c.servers[n]; s != nil {
		s.epoch = max(s.epoch, token>>40)
	}
}

// suspect stops pinging server n and declares it dead once its controller lease has surely run
// out.
func (c *Core) suspect(n uint16) {
	s := c.servers[n]
	s.suspect = true
	wait := s.lastPing.Add(c.cfg.ServerLease + c.cfg.LeaseMargin).Sub(c.now)
	c.log.Warn("server does not answer: suspected; declared dead once its controller lease has run out",
		"server", n, "misses", s.misses, "in", wait)
	c.after(max(wait, 0), func() { c.declareDead(n) })
}

func (c *Core) declareDead(n uint16) {
	s := c.servers[n]
	c.stats.ServerDeaths++
	for i, sb := range c.standbys {
		if sb.Num == n {
			c.standbys = append(c.standbys[:i:i], c.standbys[i+1:]...)
			c.failover(s, sb)
			return
		}
	}
	c.log.Error("server dead and no standby left for it: its locks wait for it to return", "server", n)
	s.suspect, s.dead, s.misses = false, true, 0
}

// failover moves server s's address to standby sb and hands it s's locks.
func (c *Core) failover(s *serverRec, sb Standby) {
	n := s.Num
	c.log.Warn("failing over to the standby", "server", n, "addr", s.Addr, "standby_port", sb.Port, "epoch", s.epoch)
	c.cancelServerTasks(n)
	srv := dataplane.Server{Addr: s.Addr, Port: sb.Port, MAC: sb.MAC}
	hop := dataplane.NextHop{SrcMAC: c.cfg.Rack.SwitchMAC, DstMAC: sb.MAC, Port: sb.Port}
	var route, start func()
	route = func() {
		c.write(true, func(err error) {
			if err != nil {
				c.retry(route)
				return
			}
			s.Port, s.MAC = sb.Port, sb.MAC
			start()
		}, Update{Op: Modify, Entity: Entity{Prefix: netipPrefix32(s), Route: &hop}},
			Update{Op: Modify, Entity: Entity{ServerNum: n, Server: &srv}})
	}
	start = func() {
		grace := c.cfg.Rack.MaxLease + c.cfg.LeaseMargin
		c.serverAdmin(n, wire.Fields{Status: wire.AdminTakeover, Token: s.epoch + 1, LeaseMicros: uint32(grace.Microseconds())},
			func(rep wire.Fields, _ []byte, err error) {
				if err != nil {
					c.retry(start)
					return
				}
				c.serverEpoch(n, rep.Token<<40)
				s.suspect, s.dead, s.misses, s.instance, s.alive = false, false, 0, 0, true
				c.stats.Failovers++
				c.log.Info("standby took over", "server", n, "epoch", rep.Token, "grace", grace)
				for _, lk := range c.locks {
					if lk.server == n && lk.inTable {
						c.moveOut(lk)
					}
				}
			})
	}
	route()
}

// serverRestarted handles server n answering as a new process: its resident marks and q2 are
// gone (its own locks' holders too: a server restarts with a takeover grace of its own).
func (c *Core) serverRestarted(n uint16) {
	c.stats.ServerRestarts++
	c.log.Warn("server restarted: its switch locks go out and back in", "server", n)
	c.cancelServerTasks(n)
	for _, lk := range c.locks {
		if lk.server == n && lk.inTable {
			c.moveOut(lk)
		}
	}
}

// cancelServerTasks stops the moves of server n's locks: one into the switch whose entry is not
// in is undone (the lock stays with the server), the others are restarted by the caller.
func (c *Core) cancelServerTasks(n uint16) {
	for _, lk := range c.locks {
		if lk.server != n || !lk.moving {
			continue
		}
		lk.task++
		if !lk.inTable {
			lk.state = stateServer
			c.endTask(lk)
		}
	}
}
