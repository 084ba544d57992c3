package srvcore

import (
	"cmp"
	"math"
	"slices"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// The control plane's admin sub-operations (wire.AdminYield .. AdminResidents, AdminPing,
// AdminTokenFloor; docs/protocol.md "Control-plane admin operations") and the grant holds around
// them: a standby that waits for its takeover, the grace period, and the controller lease.
//
// Controller terms. Every placement request carries the controller's term in Timestamp; the
// server keeps the largest term it has seen (raised by those requests and by admin pings that
// carry one) and refuses a request with a smaller term (reject not-owner). A controller that
// takes over from a failed one pings every server with a larger term first, so that a slow
// message of the old controller can no longer move a lock.

// holdLocked returns the time before which the shards must grant nothing. c.mu is held.
func (c *Core) holdLocked(now int64) int64 {
	if c.standby || (c.cfg.ControllerLease > 0 && now >= c.leaseUntil) {
		return math.MaxInt64
	}
	return c.graceEnd
}

// Holding reports whether the server holds every grant (a standby before its takeover, a lapsed
// controller lease).
func (c *Core) Holding() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied == math.MaxInt64
}

// Term returns the largest controller term the server has seen.
func (c *Core) Term() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.term
}

// applyHold brings the shards' grant hold in line with the standby flag, the grace period and
// the controller lease.
func (c *Core) applyHold(now int64, out *Out) {
	c.mu.Lock()
	h := c.holdLocked(now)
	if h == c.applied {
		c.mu.Unlock()
		return
	}
	switch {
	case h == math.MaxInt64 && c.cfg.ControllerLease > 0 && !c.standby:
		c.log.Warn("controller lease ran out: holding every grant until the controller pings again")
	case c.applied == math.MaxInt64:
		c.log.Info("grants resume", "grace_end", h)
	}
	c.applied = h
	c.mu.Unlock()
	for _, sh := range c.shards {
		sh.mu.Lock()
		sh.out = sh.core.SetGrantAfter(now, h, sh.out[:0])
		out.Sends = append(out.Sends, sh.out...)
		sh.mu.Unlock()
	}
}

// ping answers wire.AdminPing: it renews the controller lease and raises the term to the ping's;
// the reply carries the epoch (a replacement server is handed it as its takeover epoch), the
// shard count, the term in force, the instance (a restart changes it) and, from a standby that
// took over, wire.PingServing (a controller that did not make the failover learns it so).
func (c *Core) ping(now int64, req *lockcore.Request, out *Out) {
	c.mu.Lock()
	if c.cfg.ControllerLease > 0 {
		c.leaseUntil = now + int64(c.cfg.ControllerLease)
	}
	c.term = max(c.term, req.Timestamp)
	term, epoch := c.term, c.epoch
	var serving uint8
	if c.cfg.Standby && !c.standby {
		serving = wire.PingServing
	}
	c.mu.Unlock()
	c.applyHold(now, out)
	out.send(req.From, wire.Fields{Op: wire.OpAdmin, Status: req.Status, Flags: wire.FlagReply, Lock: req.Lock,
		Txn: req.Txn, Token: epoch, Slots: uint16(len(c.shards)), Timestamp: term, LeaseMicros: c.cfg.Instance,
		Priority: serving})
}

func isPlacement(st wire.Status) bool { return st >= wire.AdminYield && st <= wire.AdminResidents }

func badRequest(req *lockcore.Request) wire.Fields {
	return wire.Fields{Op: wire.OpReject, Status: wire.StatusBadRequest, Lock: req.Lock, Txn: req.Txn, Token: req.Token,
		Timestamp: req.Timestamp}
}

// placement answers the placement sub-operations, after the term fence.
func (c *Core) placement(now int64, req *lockcore.Request, out *Out) {
	c.mu.Lock()
	stale := req.Timestamp < c.term
	if !stale {
		c.term = req.Timestamp
	}
	c.mu.Unlock()
	if stale {
		out.send(req.From, wire.Fields{Op: wire.OpReject, Status: wire.StatusNotOwner, Lock: req.Lock, Txn: req.Txn,
			Token: req.Token, Timestamp: req.Timestamp})
		return
	}
	switch req.Status {
	case wire.AdminYield:
		c.stepLocked(now, req, out)
	case wire.AdminAdopt:
		r := *req
		c.raiseFloor(now, req.Lock, req.Token, false, out, func(now int64, _ uint64, ok bool, out *Out) {
			if !ok {
				out.send(r.From, badRequest(&r))
				return
			}
			c.stepLocked(now, &r, out)
		})
	case wire.AdminStats:
		c.stats(now, req, out)
	case wire.AdminTakeover:
		c.takeover(now, req, out)
	case wire.AdminResidents:
		c.residents(req, out)
	}
}

// stepLocked steps req on its lock's shard.
func (c *Core) stepLocked(now int64, req *lockcore.Request, out *Out) {
	sh := c.ShardOf(req.Lock)
	sh.mu.Lock()
	c.stepShard(now, sh, req, out)
	sh.mu.Unlock()
}

// tokenFloor answers wire.AdminTokenFloor: every token granted afterwards, by the shard of
// req.Lock (Slots 0) or by every shard (Slots 1), is larger than req.Token. A floor beyond half
// of the current epoch moves the server to a new epoch first (persisted), so that the tokens of a
// later restart stay above it. The reply carries the floor in force.
func (c *Core) tokenFloor(now int64, req *lockcore.Request, out *Out) {
	if req.Slots > 1 {
		out.send(req.From, badRequest(req))
		return
	}
	r := *req
	c.raiseFloor(now, req.Lock, req.Token, req.Slots == 1, out, func(_ int64, inForce uint64, ok bool, out *Out) {
		if !ok {
			out.send(r.From, badRequest(&r))
			return
		}
		out.send(r.From, wire.Fields{Op: wire.OpAdmin, Status: r.Status, Flags: wire.FlagReply, Lock: r.Lock, Txn: r.Txn,
			Slots: r.Slots, Token: inForce})
	})
}

// raiseFloor makes every token granted afterwards by the shard of lock (every shard with all)
// larger than floor, moving the server to a later epoch first (persisted: done runs once the
// shell acknowledged it) when floor lies beyond half of the current one. done gets the floor in
// force (the largest of the shards').
func (c *Core) raiseFloor(now int64, lock uint32, floor uint64, all bool, out *Out,
	done func(now int64, inForce uint64, ok bool, out *Out)) {
	apply := func(now int64, floor uint64, out *Out) {
		shards := c.shards
		if !all {
			shards = []*Shard{c.ShardOf(lock)}
		}
		var inForce uint64
		for _, sh := range shards {
			sh.mu.Lock()
			sh.core.RaiseTokenFloor(floor)
			inForce = max(inForce, sh.core.LastToken())
			sh.mu.Unlock()
		}
		done(now, inForce, true, out)
	}
	c.mu.Lock()
	e := c.epoch
	if floor < wire.EpochBase(e)+wire.EpochRefill {
		c.mu.Unlock()
		apply(now, floor, out)
		return
	}
	// Past half of this epoch's range: a later epoch, persisted before any token above floor is
	// granted.
	ne := wire.EpochOf(floor) + 1
	if ne > wire.MaxEpoch {
		c.mu.Unlock()
		done(now, 0, false, out)
		return
	}
	cont := func(now int64, ok bool, out *Out) {
		if !ok {
			done(now, 0, false, out)
			return
		}
		c.raiseAll(wire.EpochBase(ne))
		apply(now, wire.EpochBase(ne), out)
	}
	runNow := c.afterEpochLocked(now, ne, out, cont)
	c.mu.Unlock()
	if runNow {
		cont(now, true, out)
	}
}

// takeover starts a standby (or moves any server's tokens above a failed server's epoch): the
// epoch goes above req.Token, persisted, and grants wait req.LeaseMicros.
func (c *Core) takeover(now int64, req *lockcore.Request, out *Out) {
	c.mu.Lock()
	fresh := c.standby || req.Token >= c.epoch
	if !fresh {
		epoch := c.epoch
		c.mu.Unlock()
		out.send(req.From, wire.Fields{Op: wire.OpAdmin, Status: req.Status, Flags: wire.FlagReply, Lock: req.Lock,
			Txn: req.Txn, Token: epoch, Timestamp: req.Timestamp})
		return
	}
	ne := max(c.epoch+1, req.Token+1)
	r := *req
	cont := func(now int64, ok bool, out *Out) {
		if !ok {
			out.send(r.From, badRequest(&r))
			return
		}
		c.raiseAll(wire.EpochBase(ne))
		c.mu.Lock()
		c.standby = false
		c.graceEnd = now + int64(r.LeaseMicros)*1000
		epoch := c.epoch
		c.mu.Unlock()
		c.log.Info("taking over", "failed_epoch", r.Token, "epoch", epoch, "grace_us", r.LeaseMicros)
		c.applyHold(now, out)
		out.send(r.From, wire.Fields{Op: wire.OpAdmin, Status: r.Status, Flags: wire.FlagReply, Lock: r.Lock,
			Txn: r.Txn, Token: epoch, Timestamp: r.Timestamp})
	}
	if ne > wire.MaxEpoch {
		c.mu.Unlock()
		cont(now, false, out)
		return
	}
	runNow := c.afterEpochLocked(now, ne, out, cont)
	c.mu.Unlock()
	if runNow {
		cont(now, true, out)
	}
}

func (c *Core) stats(now int64, req *lockcore.Request, out *Out) {
	k := int(req.Slots)
	if k == 0 || k > wire.MaxLockStats {
		k = wire.MaxLockStats
	}
	var all []wire.LockStat
	for _, sh := range c.shards {
		sh.mu.Lock()
		all = sh.core.TopLocks(all, k)
		sh.mu.Unlock()
	}
	slices.SortFunc(all, func(a, b wire.LockStat) int {
		if x := cmp.Compare(uint64(b.Requests)+uint64(b.Overflows), uint64(a.Requests)+uint64(a.Overflows)); x != 0 {
			return x
		}
		return cmp.Compare(a.Lock, b.Lock)
	})
	if len(all) > k {
		all = all[:k]
	}
	c.mu.Lock()
	interval := now - c.lastStats
	c.lastStats = now
	c.mu.Unlock()
	var body []byte
	for _, st := range all {
		body = wire.AppendLockStat(body, st)
	}
	out.Bodies = append(out.Bodies, Body{To: req.From, Msg: wire.Fields{Op: wire.OpAdmin, Status: req.Status,
		Flags: wire.FlagReply, Lock: req.Lock, Txn: req.Txn, Token: uint64(max(interval, 0)), Timestamp: req.Timestamp,
		Slots: uint16(len(all))}, Data: body})
}

func (c *Core) residents(req *lockcore.Request, out *Out) {
	k := int(req.Slots)
	if k == 0 || k > wire.MaxResidents {
		k = wire.MaxResidents
	}
	var ids []uint32
	for _, sh := range c.shards {
		sh.mu.Lock()
		ids = sh.core.Residents(ids, req.Lock, k)
		sh.mu.Unlock()
	}
	slices.Sort(ids)
	if len(ids) > k {
		ids = ids[:k]
	}
	body := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		body = append(body, byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
	}
	out.Bodies = append(out.Bodies, Body{To: req.From, Msg: wire.Fields{Op: wire.OpAdmin, Status: req.Status,
		Flags: wire.FlagReply, Lock: req.Lock, Txn: req.Txn, Timestamp: req.Timestamp, Slots: uint16(len(ids))}, Data: body})
}
