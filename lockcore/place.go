package lockcore

import (
	"cmp"
	"math"
	"slices"

	"github.com/netlock-go/netlock/wire"
)

// This file holds what the control plane needs of a Core to move locks between the switch and
// the server (docs/controlplane.md, "Moving a lock"): the per-lock mode set by wire.AdminYield and
// wire.AdminAdopt, the reserved lock ids of the controller's barrier, the per-lock counts behind
// wire.AdminStats (kept past the lock's state until they are read: unread.go), and grant holds
// (a standby server, a takeover grace, a lapsed controller lease).
//
// Modes. A lock the control plane never placed follows the plain rules. AdminYield makes it
// switch-resident: a new acquire that reaches the Core is dropped (counted in
// Stats.ResidentDropped; the client retransmits it and the retransmission goes through the
// switch once the lock is there), while retransmissions of requests the Core holds or queues are
// answered as usual, and releases, renewals and lease expiry go on, so the lock's own queue
// drains. AdminAdopt makes it server-owned again: the requests buffered in q2 join the queue in
// their order (after the waiters the Core has, which are older: a resident lock takes no new
// waiters) and the head is granted; from then on an overflow of the lock (one the switch sent
// before the lock left it) is an acquire, and a queue-empty is ignored. Modes are kept until the
// next AdminYield or AdminAdopt, whatever happens to the lock's state (idle retention frees the
// state, not the mode).

// reserved handles a request for a lock id reserved for the control plane: an overflow or a
// queue-empty is answered with a push-back without a request (the switch's count goes back; a
// queue-empty answered so is the controller's barrier), anything else is dropped.
func (c *Core) reserved(r *Request, out []Effect) []Effect {
	switch r.Op {
	case wire.OpOverflow, wire.OpQueueEmpty:
		return append(out, Effect{To: r.From, Msg: wire.Fields{Op: wire.OpPushBack, Lock: r.Lock}})
	}
	c.stats.Unexpected++
	return out
}

// known reports whether r's txn holds or waits for r's lock (a retransmission).
func (c *Core) known(r *Request) bool {
	l := c.locks.get(r.Lock)
	if l == nil || l.inIdle {
		return false
	}
	return c.holderAt(l, r.Txn) >= 0 || c.waiterAt(l, r.Txn) >= 0
}

// keepUnread moves the AdminStats counts of l, a state about to be freed, to the unread store,
// counting what the store's bound drops.
func (c *Core) keepUnread(l *lockState) {
	dropped, ok := c.unread.add(wire.LockStat{Lock: l.id, Requests: l.nreq, Overflows: l.novf, Depth: l.depth,
		Declared: l.declared})
	if ok {
		c.stats.UnreadDropped++
		c.stats.UnreadDroppedRequests += statTotal(&dropped)
	}
}

// count counts r for AdminStats in its lock's state l before r is applied: its depth
// afterwards is at most one more than now.
func (l *lockState) count(r *Request, overflow bool) {
	if overflow {
		if l.novf < math.MaxUint32 {
			l.novf++
		}
	} else if l.nreq < math.MaxUint32 {
		l.nreq++
	}
	if r.Op == wire.OpRelease || r.Op == wire.OpLeaseProbe {
		return
	}
	if r.Slots > l.declared {
		l.declared = r.Slots
	}
	if d := l.depthNow(); d < math.MaxUint16 && d+1 > l.depth {
		l.depth = d + 1
	}
}

// depthNow is the number of the lock's requests outstanding at the Core (capped to 16 bits).
func (l *lockState) depthNow() uint16 {
	return uint16(min(len(l.holders)+len(l.waiters)-l.whead+len(l.overflow)-l.ohead, math.MaxUint16))
}

func (c *Core) setMode(lock uint32, resident bool) {
	if c.modes == nil {
		c.modes = make(map[uint32]bool)
	}
	c.modes[lock] = resident
}

// Resident reports whether lock is switch-resident (AdminYield without a later AdminAdopt).
func (c *Core) Resident(lock uint32) bool { return c.modes[lock] }

// Adopted reports whether lock was adopted back (AdminAdopt without a later AdminYield): its
// overflows are taken as acquires.
func (c *Core) Adopted(lock uint32) bool {
	res, ok := c.modes[lock]
	return ok && !res
}

// Residents appends to dst the switch-resident locks with ids >= from, in ascending order, at
// most max of them.
func (c *Core) Residents(dst []uint32, from uint32, max int) []uint32 {
	var ids []uint32
	for l, res := range c.modes {
		if res && l >= from {
			ids = append(ids, l)
		}
	}
	slices.Sort(ids)
	if len(ids) > max {
		ids = ids[:max]
	}
	return append(dst, ids...)
}

// LockLoad returns the requests of lock at the Core: holders and waiters (own), and buffered
// in q2.
func (c *Core) LockLoad(lock uint32) (own, buffered int) {
	l := c.locks.get(lock)
	if l == nil || l.inIdle {
		return 0, 0
	}
	return len(l.holders) + len(l.waiters) - l.whead, len(l.overflow) - l.ohead
}

// lockStatus answers AdminYield and AdminAdopt (wire.AdminAdopt documents the fields).
func (c *Core) lockStatus(r *Request, out []Effect) []Effect {
	own, buf := c.LockLoad(r.Lock)
	m := wire.Fields{Op: wire.OpAdmin, Status: r.Status, Flags: wire.FlagReply, Lock: r.Lock, Txn: r.Txn,
		Token: c.token, Timestamp: r.Timestamp, LeaseMicros: uint32(min(own, math.MaxUint32)),
		Slots: uint16(min(buf, math.MaxUint16))}
	if c.modes[r.Lock] {
		m.Priority = 1
	}
	return append(out, Effect{To: r.From, Msg: m})
}

// adopt makes lock server-owned: its q2 joins its queue, in order, and the head is granted.
func (c *Core) adopt(now int64, lock uint32, out []Effect) []Effect {
	c.setMode(lock, false)
	l := c.locks.get(lock)
	if l == nil || l.inIdle || l.ohead == len(l.overflow) {
		return out
	}
	for i := l.ohead; i < len(l.overflow); i++ {
		e := l.overflow[i]
		c.stats.Buffered--
		if c.holderAt(l, e.txn) >= 0 || c.waiterAt(l, e.txn) >= 0 {
			// The switch forwarded a copy of a request the Core holds or queues (its client
			// retransmitted through the switch): one request, kept where it is.
			c.stats.Duplicates++
			if c.quotas && c.cfg.TestingKnobs.mutant != mutantQ2Uncharged {
				c.leaveTenant(e.tenant)
			}
			continue
		}
		e.token = 0
		c.queue(l, l.insertPos(e.prio), e)
		c.stats.Waiters++
		c.stats.Queued++
		c.stats.Adopted++
	}
	l.overflow, l.ohead = l.overflow[:0], 0
	out = c.advance(now, l, out)
	if d := l.depthNow(); d > l.depth {
		l.depth = d
	}
	c.maybeFree(l)
	return out
}

// TopLocks appends to dst the AdminStats records of the k locks with the most requests and
// overflows since the previous call, most first (ties by lock id), and starts the next interval:
// every lock's counts go to zero and its depth to its current depth. The counts of the locks
// whose state was freed since the previous call are reported too (unread.go), summed with those
// of a new state of the same lock, and the unread store is emptied: every count reaches one
// call, once. A lock beyond the k busiest is not reported and its counts are reset all the same.
func (c *Core) TopLocks(dst []wire.LockStat, k int) []wire.LockStat {
	var all []wire.LockStat
	merge := c.unread.len() > 0
	c.locks.each(func(l *lockState) {
		if l.nreq|l.novf != 0 {
			st := wire.LockStat{Lock: l.id, Requests: l.nreq, Overflows: l.novf, Depth: l.depth,
				Declared: l.declared}
			if merge {
				if u, ok := c.unread.take(l.id); ok {
					mergeStat(&st, &u)
				}
			}
			all = append(all, st)
		}
		l.nreq, l.novf, l.declared = 0, 0, 0
		l.depth = l.depthNow()
	})
	all = c.unread.drain(all)
	slices.SortFunc(all, func(a, b wire.LockStat) int {
		if c := cmp.Compare(uint64(b.Requests)+uint64(b.Overflows), uint64(a.Requests)+uint64(a.Overflows)); c != 0 {
			return c
		}
		return cmp.Compare(a.Lock, b.Lock)
	})
	if len(all) > k {
		all = all[:k]
	}
	return append(dst, all...)
}

// SetGrantAfter holds every grant until t (ns): a standby holds them until its takeover
// (math.MaxInt64), a takeover waits out the failed server's leases, a server whose controller
// lease lapsed holds them until it is renewed. A t at or before now lifts the hold at once and
// grants what waits.
func (c *Core) SetGrantAfter(now, t int64, out []Effect) []Effect {
	c.now = now
	c.cfg.GrantAfter = t
	if now >= t {
		if c.paused {
			out = c.unpause(now, out)
		}
		return out
	}
	c.paused = true
	return out
}

// GrantAfter returns the time before which the Core grants nothing (0: no hold).
func (c *Core) GrantAfter() int64 {
	if !c.paused {
		return 0
	}
	return c.cfg.GrantAfter
}
