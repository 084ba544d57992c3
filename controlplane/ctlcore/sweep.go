package ctlcore

import (
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The lease sweep (docs/controlplane.md, "Lease sweeps"). Every SweepPeriod the Core reads the
// switch's cookie (a restarted switch reads 0) and probes every lock with a switch entry: the
// first probe (level 0, offset 0) returns the lock's counters, which give the queue depth (c_i),
// the grant counter (the token bound of a switch restart) and how many slots each level
// occupies; every occupied slot is probed, and a granted one whose lease ran out on the switch's
// clock, (now - grant time) mod 2^32 > lease µs, is force-released: the switch tells the holder
// (reject lease-expired) and grants onward, as a server's lease expiry does. The rules are
// dataplane.SlotProbes and dataplane.AdminReply.LeaseExpired, which every control plane of the
// switch uses.
//
// The sweep does not repeat a lost queue-empty (dataplane.AdminReply.QueueEmptyOwed): on a link
// slower than a sweep period, a queue-empty and its push-backs may still be on their way when the
// next sweep finds the queue empty, and a second queue-empty then brings back more requests than
// the queue has room for, which overflow to the back of q2 behind later ones (a FIFO violation:
// TestEvictionsSlowServerLinks, seed 3, found it when this rule was tried, on controlplane/simrack;
// the test is testbed/rackmodel's now). The switch's links to its servers are assumed not to lose
// packets (docs/dataplane.md, "Overflow").

func (c *Core) sweep() {
	if c.sweeping {
		return
	}
	c.sweeping = true
	c.stats.Sweeps++
	gen := c.gen
	left := 1
	done := func() {
		if gen != c.gen {
			return
		}
		left--
		if left == 0 {
			c.sweeping = false
		}
	}
	for _, lk := range c.sortedLocks() {
		if lk.inTable {
			left++
			c.sweepLock(lk, done)
		}
	}
	c.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchGetCookie}, func(rep dataplane.AdminReply, err error) {
		if err == nil && rep.Value != c.cookie {
			c.switchRestarted(rep.Value)
			return
		}
		done()
	})
}

// switchRestarted handles a switch whose cookie changed (0: its registers are fresh).
func (c *Core) switchRestarted(cookie uint64) {
	c.log.Warn("the switch's cookie changed: it restarted", "cookie", cookie, "want", c.cookie)
	c.cancelAll("the switch restarted")
	c.takeover()
}

func (c *Core) sweepLock(lk *lockRec, done func()) {
	left := 1
	fin := func() {
		left--
		if left == 0 {
			done()
		}
	}
	check := func(rep dataplane.AdminReply) {
		if !rep.LeaseExpired() {
			return
		}
		left++
		lk.adminSent++
		c.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchForceRelease, Lock: lk.id, Txn: rep.Txn, Token: rep.Token},
			func(f dataplane.AdminReply, err error) {
				if err == nil && f.Result == dataplane.AdminOK {
					c.stats.ForceReleases++
					c.log.Info("lease expired in the switch: force-released", "lock", lk.id, "txn", rep.Txn, "token", rep.Token)
				}
				fin()
			})
	}
	lk.adminSent++
	c.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, Lock: lk.id}, func(head dataplane.AdminReply, err error) {
		if err != nil || head.Result != dataplane.AdminOK {
			fin()
			return
		}
		c.observe(head.Value)
		depth := int(head.Holders) + int(head.Waiting[0]) + int(head.Waiting[1]) + int(head.Buffered)
		lk.depth = max(lk.depth, depth)
		if head.Used[0] > 0 {
			check(head)
		}
		for _, p := range dataplane.SlotProbes(lk.id, head) {
			left++
			lk.adminSent++
			c.switchAdmin(p, func(rep dataplane.AdminReply, err error) {
				if err == nil && rep.Result == dataplane.AdminOK {
					check(rep)
				}
				fin()
			})
		}
		fin()
	})
}

// cancelAll stops every task of the current generation: its pending results and timers are
// ignored from now on. Each move under way logs its end, cancelled for why.
func (c *Core) cancelAll(why string) {
	c.gen++
	c.pending = map[uint64]pendingOp{}
	c.sweeping, c.allocBusy, c.moves, c.recovery = false, false, 0, 0
	c.raising = false
	for _, st := range c.staging {
		st.busy, st.queue, st.barrierWaiters = false, nil, nil
	}
	for _, lk := range c.locks {
		c.endMove(lk, "cancelled", why)
		lk.task++
		lk.moving = false
	}
}
