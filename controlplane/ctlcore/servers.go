package ctlcore

import (
	"math"
	"slices"
	"time"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// Servers (docs/controlplane.md, "Lock server death"). The Core pings every server each
// PingPeriod with its term, whether or not earlier pings are still unanswered; a ping renews the
// server's controller lease (lockserver's controller_lease: a server grants nothing once its
// lease ran out). A ping unanswered for a PingPeriod is a miss (liveness); a server that misses
// DeadAfter pings in a row is suspected and no longer pinged (pings sent while the switch lost
// requests are not counted: liveness.forgive). It is declared dead once its controller lease
// has run out (deadWait), and its standby takes over its address: the switch routes the dead server's IP to the standby's port (ipv4_lpm,
// lock_servers), so the clients' retransmissions reach the standby unchanged; the standby is
// told the dead server's epoch (its tokens start above) and a grace (takeoverGrace: until every
// lease the dead server may have granted has ended); every switch lock of the dead server goes
// out and back in through the standby, since its q2 died with the server. A ping answered with
// another process instance (the server restarted) is handled the same way, without the standby.

// maxPending bounds the unanswered pings liveness remembers (the oldest are forgotten).
const maxPending = 64

// liveness is the ping record of one server, a pure decision: times are arguments.
//
// A ping sent at T is missed once a PingPeriod has passed without its answer and the switch,
// which carries the pings, has answered a request sent at T or later: a switch that is down or
// restarting does not make its servers look dead (the switch restart is handled on its own, and
// taking both servers for dead on it was a bug of the software rack). The misses in a row are
// the pings missed since the last answer: an answer to a ping sent at T makes every ping sent
// up to T moot (the server was alive after they were sent).
//
// Invariant: pending is sorted by send time, and every entry is later than the send time of
// the last answered ping.
type liveness struct {
	pending  []time.Time // send times of the pings not answered since the last answer, oldest first
	answered time.Time   // send time of the latest ping answered
}

// sent records a ping sent at at (at is not before any earlier ping's).
func (l *liveness) sent(at time.Time) {
	if len(l.pending) == maxPending {
		l.pending = append(l.pending[:0], l.pending[1:]...)
	}
	l.pending = append(l.pending, at)
}

// answer records the answer to the ping sent at at.
func (l *liveness) answer(at time.Time) {
	i := 0
	for i < len(l.pending) && !l.pending[i].After(at) {
		i++
	}
	l.pending = append(l.pending[:0], l.pending[i:]...)
	if at.After(l.answered) {
		l.answered = at
	}
}

// misses returns the pings missed in a row at now, with period the PingPeriod and switchOK the
// send time of the latest switch request the switch answered.
func (l *liveness) misses(now time.Time, period time.Duration, switchOK time.Time) int {
	n := 0
	for _, t := range l.pending {
		if now.Sub(t) < period || switchOK.Before(t) {
			break
		}
		n++
	}
	return n
}

// forgive forgets the unanswered pings sent before at: the switch, which carries them, lost
// requests sent around then, so their silence says nothing about the server. Without it, the
// first switch answer after an outage (a sweep or a move step between two ping ticks) made
// every ping of the outage a miss, and a healthy server was failed over
// (TestSwitchOutageEndsWithOtherRequest).
func (l *liveness) forgive(at time.Time) {
	i := 0
	for i < len(l.pending) && l.pending[i].Before(at) {
		i++
	}
	l.pending = append(l.pending[:0], l.pending[i:]...)
}

// reset forgets the unanswered pings (a takeover starts counting again).
func (l *liveness) reset() { l.pending = l.pending[:0] }

// takeoverGrace is how long a standby that takes over a server, told so at now, must grant
// nothing: until every lease the server it replaces may have granted has ended. lastPing is
// when the Core last sent that server a ping (answered or not: an answer can be lost after the
// ping renewed the server's controller lease).
//
// Safety (serverLease > 0): the server grants nothing once serverLease has passed since the
// last ping reached it (lockserver's controller_lease), and that ping left the Core at
// lastPing; a ping's delay in the shell (the Core records when it emits the ping, not when the
// datagram leaves) and in the network and the difference of the two clocks' rates are within
// margin (an assumption of the deployment: LeaseMargin must cover them). So its last grant is before lastPing + serverLease + margin, and every lease it
// granted ends maxLease after its grant at the latest: by lastPing + serverLease + maxLease +
// margin. The standby counts the grace from when the takeover reaches it, after now, so it
// grants nothing before that bound. Counting from the last ping answered instead would be
// shorter and wrong: a ping whose answer was lost renewed the lease all the same
// (MutationGraceFromAnswer, caught by TestTakeoverGraceCoversLeases).
//
// Without a controller lease (serverLease 0) nothing bounds the server's last grant (a server
// cut off, not dead, keeps granting): the Core assumes it died when it was suspected and the
// grace is a whole maxLease + margin from now.
func takeoverGrace(now, lastPing time.Time, serverLease, maxLease, margin time.Duration) time.Duration {
	if serverLease <= 0 {
		return maxLease + margin
	}
	return max(lastPing.Add(serverLease+maxLease+margin).Sub(now), 0)
}

// deadWait is how long after its suspicion at now a server is declared dead (its standby takes
// its address and its switch locks move out). With a controller lease, not before that lease has
// run out since the last ping sent to it (+ margin): until then a server that is slow, not dead,
// may still grant, push back and answer queue-empties, and the move-out of its switch locks must
// not meet any of that (lockserver's Config.ControllerLease states this contract). The standby's
// grace (takeoverGrace) ends later still, so this costs the first grant nothing. Without a
// controller lease, margin after the last ping sent to it.
func deadWait(now, lastPing time.Time, serverLease, margin time.Duration) time.Duration {
	return max(lastPing.Add(serverLease+margin).Sub(now), 0)
}

func (c *Core) pingAll() {
	if c.lastSwitchSent.IsZero() || c.now.Sub(c.lastSwitchSent) >= c.cfg.PingPeriod {
		// Evidence that the switch carries the pings (liveness): a cookie read, its answer
		// ignored otherwise (the sweep acts on a changed cookie).
		c.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchGetCookie}, func(dataplane.AdminReply, error) {})
	}
	for _, n := range c.order {
		s := c.servers[n]
		if s.suspect {
			continue
		}
		m := s.live.misses(c.now, c.cfg.PingPeriod, c.switchOK)
		if m > 0 {
			s.alive = false
		}
		if m >= c.cfg.DeadAfter && !s.dead {
			c.suspect(n, m)
			continue
		}
		c.ping(n, nil)
	}
}

// ping pings server n with the Core's term; done (if set) runs when it is answered or failed.
func (c *Core) ping(n uint16, done func()) {
	s := c.servers[n]
	at := c.now
	s.lastPing = at
	s.live.sent(at)
	c.serverAdmin(n, wire.Fields{Status: wire.AdminPing}, func(rep wire.Fields, _ []byte, err error) {
		if done != nil {
			defer done()
		}
		if err != nil || s.suspect {
			return
		}
		if s.dead {
			c.log.Info("server answers again", "server", n)
		}
		s.live.answer(at)
		s.alive, s.dead = true, false
		c.learnServing(n, rep)
		c.serverEpoch(n, wire.EpochBase(rep.Token))
		if rep.Timestamp > c.term {
			c.raiseTerm(rep.Timestamp)
		}
		inst := rep.LeaseMicros
		if s.instance != 0 && inst != s.instance {
			c.serverRestarted(n)
		}
		s.instance = inst
	})
}

// serverEpoch records a token or epoch base a server reported: its epoch is at least
// wire.EpochOf(token).
func (c *Core) serverEpoch(n uint16, token uint64) {
	if s := c.servers[n]; s != nil {
		s.epoch = max(s.epoch, wire.EpochOf(token))
	}
}

// suspect stops pinging server n (it missed misses pings in a row) and declares it dead after
// deadWait.
func (c *Core) suspect(n uint16, misses int) {
	s := c.servers[n]
	s.suspect, s.alive = true, false
	c.stats.Suspicions++
	wait := deadWait(c.now, s.lastPing, c.cfg.ServerLease, c.cfg.LeaseMargin)
	c.log.Warn("server does not answer: suspected", "server", n, "misses", misses,
		"last_answered_ping", s.live.answered, "declared_dead_in", wait)
	c.after(wait, func() { c.declareDead(n) })
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
	s.suspect, s.dead = false, true
	s.live.reset()
}

// failover moves server s's address to standby sb and hands it s's locks.
func (c *Core) failover(s *serverRec, sb Standby) {
	n := s.Num
	c.log.Warn("failing over to the standby", "server", n, "addr", s.Addr, "standby_port", sb.Port, "epoch", s.epoch)
	c.cancelServerTasks(n, "its server fails over")
	var route, start func()
	route = func() {
		c.write(true, func(err error) {
			if err != nil {
				c.retry(route)
				return
			}
			s.Port, s.MAC = sb.Port, sb.MAC
			start()
		}, c.routeUpdates(n, sb.Port, sb.MAC)...)
	}
	lastPing := s.lastPing
	if c.cfg.TestingKnobs.Mutation == MutationGraceFromAnswer {
		lastPing = s.live.answered
	}
	start = func() {
		grace := takeoverGrace(c.now, lastPing, c.cfg.ServerLease, c.cfg.Rack.MaxLease, c.cfg.LeaseMargin)
		// Rounded up: the standby must not count a microsecond less.
		us := (grace + time.Microsecond - 1) / time.Microsecond
		c.serverAdmin(n, wire.Fields{Status: wire.AdminTakeover, Token: s.epoch + 1, LeaseMicros: uint32(min(us, math.MaxUint32))},
			func(rep wire.Fields, _ []byte, err error) {
				if err != nil {
					c.retry(start)
					return
				}
				c.serverEpoch(n, wire.EpochBase(rep.Token))
				s.suspect, s.dead, s.instance, s.alive = false, false, 0, true
				s.live.reset()
				c.stats.Failovers++
				c.log.Info("standby took over", "server", n, "epoch", rep.Token, "grace", grace)
				for _, lk := range c.sortedLocks() {
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
	c.cancelServerTasks(n, "its server restarted")
	for _, lk := range c.sortedLocks() {
		if lk.server == n && lk.inTable {
			c.moveOut(lk)
		}
	}
}

// cancelServerTasks stops the moves of server n's locks: one into the switch whose entry is not
// in is undone (the lock stays with the server), the others are restarted by the caller. Each
// cancelled move logs its end, saying why.
func (c *Core) cancelServerTasks(n uint16, why string) {
	for _, lk := range c.sortedLocks() {
		if lk.server != n || !lk.moving {
			continue
		}
		c.endMove(lk, "cancelled", why)
		lk.task++
		if !lk.inTable {
			lk.state = stateServer
			c.endTask(lk)
		}
	}
}

// routeUpdates are the route of server n's address and its server entry (Modify), both to port
// with MAC mac: where the switch sends the clients' requests and the overflows, queue-empties and
// pings of server n.
func (c *Core) routeUpdates(n uint16, port int, mac dataplane.MAC) []Update {
	s := c.servers[n]
	srv := dataplane.Server{Addr: s.Addr, Port: port, MAC: mac}
	hop := dataplane.NextHop{SrcMAC: c.cfg.Rack.SwitchMAC, DstMAC: mac, Port: port}
	return []Update{{Op: Modify, Entity: Entity{Prefix: netipPrefix32(s), Route: &hop}},
		{Op: Modify, Entity: Entity{ServerNum: n, Server: &srv}}}
}

// standby returns the standby of server n the Core may still fail over to.
func (c *Core) standby(n uint16) (Standby, bool) {
	for _, sb := range c.standbys {
		if sb.Num == n {
			return sb, true
		}
	}
	return Standby{}, false
}

// learnServing handles a ping answer of server n (through the switch's route of its address)
// that says wire.PingServing: n's standby took over the address, in a failover this Core did
// not make (another controller's, before this one took over). The standby is n's server from now
// on, for good: a bring-up routes the address to it, and the old server, never routed or pinged
// again, stays fenced (its controller lease has run out; its epoch is below the standby's). The
// switch's route, which the answer came through, is the record of the failover while the switch
// keeps its state; after a switch restart, the standby's own answer to locate's ping.
func (c *Core) learnServing(n uint16, rep wire.Fields) {
	if rep.Priority != wire.PingServing {
		return
	}
	sb, ok := c.standby(n)
	if !ok {
		return
	}
	c.standbys = slices.DeleteFunc(c.standbys, func(x Standby) bool { return x.Num == n })
	s := c.servers[n]
	c.log.Warn("a standby serves the server's address (a failover by an earlier controller)", "server", n,
		"standby_port", sb.Port, "epoch", rep.Token)
	s.Port, s.MAC, s.instance = sb.Port, sb.MAC, 0
	c.stats.FailoversLearned++
}

// locate finds, after a bring-up (which routed the address of every server that still has a
// standby to the standby: bringUpUpdates), which process serves each such address, then calls
// next. The standby answers a ping: with wire.PingServing it took over in a failover that this
// Core did not make (or forgot: a controller restarted) and keeps the address (learnServing);
// otherwise, or when it stays silent for DeadAfter pings, the address goes back to the server
// (docs/controlplane.md, "Lock server death"). The switch that restarted lost the route that
// recorded the failover; the standby's answer is the record that is left.
func (c *Core) locate(next func()) {
	sbs := slices.Clone(c.standbys)
	left := len(sbs)
	if left == 0 {
		next()
		return
	}
	done := func() {
		left--
		if left == 0 {
			next()
		}
	}
	for _, sb := range sbs {
		c.probeStandby(sb, 0, done)
	}
}

func (c *Core) probeStandby(sb Standby, tries int, done func()) {
	n := sb.Num
	c.serverAdmin(n, wire.Fields{Status: wire.AdminPing}, func(rep wire.Fields, _ []byte, err error) {
		switch {
		case err == nil && rep.Priority == wire.PingServing:
			c.learnServing(n, rep)
			c.serverEpoch(n, wire.EpochBase(rep.Token))
			done()
			return
		case err != nil && tries+1 < c.cfg.DeadAfter:
			c.retry(func() { c.probeStandby(sb, tries+1, done) })
			return
		case err != nil:
			c.log.Warn("the standby does not answer: routing the address to its server", "server", n, "err", err)
		}
		s := c.servers[n]
		var route func()
		route = func() {
			c.write(true, func(err error) {
				if err != nil {
					c.retry(route)
					return
				}
				done()
			}, c.routeUpdates(n, s.Port, s.MAC)...)
		}
		route()
	})
}
