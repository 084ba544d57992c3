package ctlcore

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// lockState is where a lock is, as the Core sees it.
type lockState uint8

const (
	// stateServer: server-owned (the default of every lock).
	stateServer lockState = iota
	// stateMovingIn: its server yielded it; the switch entry is not in yet.
	stateMovingIn
	// stateSwitch: in the switch (lock_hit).
	stateSwitch
	// stateMovingOut: paused in the switch, draining, on its way back to its server.
	stateMovingOut
	// stateRecovering: the switch that held it restarted; its server takes it back after the
	// leases.
	stateRecovering
)

func (s lockState) String() string {
	return [...]string{"server", "moving-in", "switch", "moving-out", "recovering"}[s]
}

// lockRec is what the Core knows of one lock.
type lockRec struct {
	id     uint32
	server uint16
	state  lockState
	// The switch entry, when inTable: index, regions, paused.
	inTable bool
	paused  bool
	index   uint32
	regions [dataplane.Levels]dataplane.Region
	// task numbers the lock's migration: a callback of an older one is stale; moving says one
	// is under way.
	task   uint64
	moving bool
	// mv is the move under way (its direction and start) until its end is logged (endMove);
	// nil when none is.
	mv *moveRec
	// onDone, if set, runs once when the current task completes (an allocation period waits for
	// its moves out).
	onDone func()
	// Statistics of the current period: requests per second (the last period's), the deepest
	// queue seen, the largest declared contention, the lock_hits counter at the last read, the
	// admin packets the Core sent about the lock since (they hit the entry's counter too).
	rate      float64
	depth     int
	declared  int
	lastHits  uint64
	adminSent uint64
	seen      uint64 // the last allocation period the lock was reported or placed
	// recent holds c_i of the last periods: the contention estimate is their maximum, so that a
	// region does not shrink and grow with the noise of one period.
	recent [4]int
}

// sortedLocks returns the locks the Core knows, by id: every loop that emits effects or hands
// out something in turn walks them so, so that a Core's effects depend only on its inputs (not on
// map order: the scenario tests' golden output and the simulated rack's seeds rely on it).
func (c *Core) sortedLocks() []*lockRec {
	lks := make([]*lockRec, 0, len(c.locks))
	for _, lk := range c.locks {
		lks = append(lks, lk)
	}
	slices.SortFunc(lks, func(a, b *lockRec) int { return cmp.Compare(a.id, b.id) })
	return lks
}

func (c *Core) lock(id uint32) *lockRec {
	lk := c.locks[id]
	if lk == nil {
		lk = &lockRec{id: id}
		c.locks[id] = lk
	}
	return lk
}

func (lk *lockRec) entry() dataplane.LockEntry {
	return dataplane.LockEntry{Lock: lk.id, Index: lk.index, Regions: lk.regions, Server: lk.server, Paused: lk.paused}
}

// serverRec is what the Core knows of one server.
type serverRec struct {
	Server
	alive    bool      // no ping missed since its last answer
	live     liveness  // its pings, answered and not
	suspect  bool      // no longer pinged: about to be declared dead
	dead     bool      // declared dead, no standby left: pinged again in case it returns
	lastPing time.Time // when the last ping was sent
	epoch    uint64    // its token epoch (pings, floors)
	instance uint32    // its process instance (pings): a change is a restart
}

// stagingRec is a server's staging entry and the queue of the operations that use it one at a
// time (barriers, resets and token bases of indices).
type stagingRec struct {
	num   uint16
	home  dataplane.LockEntry
	busy  bool
	queue []func(release func())
	// barrierWaiters wait for the next barrier that starts (one queued, not yet started, when
	// not empty): a barrier satisfies every waiter that asked before it started, so waiters
	// that ask together share one.
	barrierWaiters []func()
}

// withStaging runs fn when server n's staging entry is free; fn calls release when done.
func (c *Core) withStaging(n uint16, fn func(release func())) {
	st := c.staging[n]
	gen := c.gen
	var release func()
	release = func() {
		if gen != c.gen {
			return
		}
		if len(st.queue) == 0 {
			st.busy = false
			return
		}
		next := st.queue[0]
		st.queue = st.queue[1:]
		next(release)
	}
	if st.busy {
		st.queue = append(st.queue, fn)
		return
	}
	st.busy = true
	fn(release)
}

// Stats are the Core's counters.
type Stats struct {
	// Takeovers counts the times the Core became primary; BringUps the switches it programmed
	// from scratch; Recovered the locks of restarted switches handed back to their servers.
	Takeovers, BringUps, Recovered uint64
	// MovesIn and MovesOut count completed migrations; MovesAborted moves into the switch given
	// up (the server's queue did not drain in MoveTimeout, or the server failed).
	MovesIn, MovesOut, MovesAborted uint64
	// Barriers counts completed barriers with a server.
	Barriers uint64
	// Sweeps counts lease sweeps; ForceReleases the grants they ended.
	Sweeps, ForceReleases uint64
	// Periods counts allocation periods that ran; Value and Best are the last plan's objective and
	// its upper bound (alloc.Plan), Slots the slots it used.
	Periods     uint64
	Value, Best float64
	Slots       int
	// Suspicions counts servers that missed DeadAfter pings in a row; ServerDeaths servers
	// declared dead; Failovers standbys that took over; ServerRestarts servers found restarted.
	Suspicions, ServerDeaths, Failovers, ServerRestarts uint64
	// FailoversLearned counts standbys found serving their server's address (wire.PingServing)
	// after a failover this Core did not make.
	FailoversLearned uint64
	// TermRaises counts the moves of the controller term above one a server reported
	// (raiseTerm).
	TermRaises uint64
	// Effects by kind, and those that failed.
	Writes, WriteErrors, SwitchAdmin, SwitchAdminErrors, ServerAdmin, ServerAdminErrors uint64
	// SwitchLocks is the number of locks in the switch now.
	SwitchLocks int
}

// Stats returns the Core's counters.
func (c *Core) Stats() Stats {
	s := c.stats
	s.SwitchLocks = c.switchLocks()
	return s
}

func (c *Core) switchLocks() int {
	n := 0
	for _, lk := range c.locks {
		if lk.inTable {
			n++
		}
	}
	return n
}

// LockPlace says where a lock is: "server", "moving-in", "switch", "moving-out" or
// "recovering", and its server.
func (c *Core) LockPlace(id uint32) (string, uint16) {
	lk := c.locks[id]
	if lk == nil {
		return stateServer.String(), 0
	}
	return lk.state.String(), lk.server
}

// SwitchLockIDs returns the locks with a switch entry, in ascending order.
func (c *Core) SwitchLockIDs() []uint32 {
	var ids []uint32
	for id, lk := range c.locks {
		if lk.inTable {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// resetPlacement forgets every switch entry (a fresh switch has none): indices and slots free,
// every lock its server's until the takeover that calls it learns otherwise. That includes a lock
// an earlier generation was recovering: its recovery's timers and callbacks are stale, and the
// takeover recovers it again if its server still lists it resident. (Keeping such a lock
// recovering left it so for good when its adopt had reached the server before primacy was lost:
// never recovered again, never considered for the switch; testdata/recovery_interrupted.)
func (c *Core) resetPlacement() {
	for _, lk := range c.locks {
		c.endMove(lk, "cancelled", "the switch's entries are gone")
		lk.inTable, lk.paused = false, false
		lk.task++
		lk.state = stateServer
	}
	c.free = c.free[:0]
	maxServer := 0
	for n := range c.servers {
		maxServer = max(maxServer, int(n))
	}
	for i := c.sz.Locks - 1; i >= maxServer; i-- {
		c.free = append(c.free, uint32(i))
	}
	_ = c.pool.Restore(nil)
}

// slotBase is the first pool slot the allocator hands out (below it: the staging slots).
func (c *Core) slotBase() int {
	maxServer := 0
	for n := range c.servers {
		maxServer = max(maxServer, int(n))
	}
	return 2 * maxServer
}

// layout is the pool layout of the locks with switch entries, for alloc.Allocator.Restore.
func (c *Core) layout() []alloc.Region {
	base := c.slotBase()
	var out []alloc.Region
	for _, lk := range c.sortedLocks() {
		if !lk.inTable {
			continue
		}
		for lv, r := range lk.regions {
			out = append(out, alloc.Region{Lock: lk.id, Level: lv, Start: int(r.Left) - base, Len: int(r.Size)})
		}
	}
	return out
}

// takeIndex returns a free lock index; ok is false when none is left.
func (c *Core) takeIndex() (uint32, bool) {
	if len(c.free) == 0 {
		return 0, false
	}
	i := c.free[len(c.free)-1]
	c.free = c.free[:len(c.free)-1]
	return i, true
}

func (c *Core) freeIndex(i uint32) { c.free = append(c.free, i) }

// reconcile takes over a switch that kept its state: its lock table says which locks are in it
// (a paused one was on its way out), the servers say which locks they hold resident (one without
// an entry was on its way in, or out past its delete); every move under way is finished or undone
// (docs/controlplane.md, "Controller death").
func (c *Core) reconcile() {
	c.log.Info("the switch kept its state: rebuilding from its lock table and the servers", "cookie", c.cookie)
	c.emit(ReadLocks{ID: c.id()}, func(r Result) {
		if r.Err != nil {
			c.log.Warn("reading the lock table failed; retrying", "err", r.Err)
			c.after(c.cfg.SweepPeriod, c.reconcile)
			return
		}
		c.resetPlacement()
		used := map[uint32]bool{}
		var fixes []Update
		for _, e := range r.Locks {
			if wire.IsReservedLock(e.Lock) {
				n := uint16(e.Lock - wire.ReservedLockBase)
				if st := c.staging[n]; st != nil && e != st.home {
					home := st.home
					fixes = append(fixes, Update{Op: Modify, Entity: Entity{Lock: &home}})
				}
				continue
			}
			lk := c.lock(e.Lock)
			lk.inTable, lk.paused, lk.index, lk.regions, lk.server = true, e.Paused, e.Index, e.Regions, e.Server
			lk.lastHits, lk.adminSent = r.Hits[e.Lock], 0
			lk.state = stateSwitch
			if e.Paused {
				lk.state = stateMovingOut
			}
			used[e.Index] = true
		}
		c.free = slices.DeleteFunc(c.free, func(i uint32) bool { return used[i] })
		if err := c.pool.Restore(c.layout()); err != nil {
			c.log.Error("the switch's regions are not a valid layout", "err", err)
		}
		finish := func() {
			c.listResidents(func(res map[uint16][]uint32) {
				resident := map[uint32]uint16{}
				for _, n := range c.order {
					for _, id := range res[n] {
						resident[id] = n
					}
				}
				var orphans []*lockRec
				for _, id := range slices.Sorted(maps.Keys(resident)) {
					lk := c.lock(id)
					if !lk.inTable {
						lk.server = resident[id]
						orphans = append(orphans, lk)
					}
				}
				for _, lk := range c.sortedLocks() {
					switch {
					case lk.inTable && lk.paused:
						c.moveOutFrom(lk, stepPause)
					case lk.inTable && resident[lk.id] != lk.server:
						// In the switch, not resident at its server: the server restarted and lost
						// its q2 with the mark. Out and back in.
						c.log.Warn("switch lock not resident at its server: moving it out", "lock", lk.id, "server", lk.server)
						c.moveOutFrom(lk, stepPause)
					}
				}
				c.run()
				c.recoverOrphans(orphans)
			})
		}
		if len(fixes) == 0 {
			finish()
			return
		}
		c.writeStaging(fixes, finish)
	})
}

// recoverOrphans hands back to their servers the locks a controller taking over finds resident
// at their servers without a switch entry. It cannot tell which of three histories left them
// so: a move in that never inserted the entry (the switch granted nothing), a move out past its
// delete (drained, its floor given), or a switch that restarted under another controller which
// died or lost primacy before it recovered them (holders of the lost switch may still hold,
// with tokens no floor covers yet). It treats every one as the last, which is safe for all
// three: a token floor above every token the switch may have granted (recoveryFloor, as of now)
// and the longest lease waited out from now before the server grants the lock again.
func (c *Core) recoverOrphans(lks []*lockRec) {
	if len(lks) == 0 {
		return
	}
	floor := c.recoveryFloor(c.now)
	wait := c.cfg.Rack.MaxLease + c.cfg.LeaseMargin
	if c.cfg.TestingKnobs.Mutation == MutationSkipRecoveryWait {
		wait = 0
	}
	c.log.Warn("locks resident at their servers without a switch entry: recovering them after the leases",
		"locks", len(lks), "wait", wait, "token_floor", floor)
	for _, lk := range lks {
		c.endMove(lk, "cancelled", "its lock is recovered after the leases")
		lk.task++
		lk.state = stateRecovering
	}
	c.recovery += len(lks)
	c.after(wait, func() {
		for _, lk := range lks {
			c.adoptRecovered(lk, floor)
		}
	})
}

// writeStaging puts staging entries back home (Modify, or Insert where one is missing).
func (c *Core) writeStaging(fixes []Update, next func()) {
	left := len(fixes)
	for _, u := range fixes {
		c.write(false, func(err error) {
			if err != nil {
				c.write(false, func(error) {}, Update{Op: Insert, Entity: u.Entity})
			}
			left--
			if left == 0 {
				next()
			}
		}, u)
	}
}

// listResidents asks every server for its resident locks (paged), retrying a server a few times;
// fn gets what answered.
func (c *Core) listResidents(fn func(map[uint16][]uint32)) {
	res := map[uint16][]uint32{}
	left := len(c.order)
	var page func(n uint16, from uint32, tries int)
	page = func(n uint16, from uint32, tries int) {
		c.serverAdmin(n, wire.Fields{Status: wire.AdminResidents, Lock: from, Slots: wire.MaxResidents},
			func(rep wire.Fields, body []byte, err error) {
				var ids []uint32
				if err == nil {
					ids, err = wire.ParseLockIDs(nil, body, int(rep.Slots))
				}
				if err != nil {
					if tries < c.cfg.DeadAfter {
						c.retry(func() { page(n, from, tries+1) })
						return
					}
					c.log.Warn("server did not list its resident locks", "server", n, "err", err)
					ids = nil
				}
				res[n] = append(res[n], ids...)
				if len(ids) == wire.MaxResidents && ids[len(ids)-1] < ^uint32(0) {
					page(n, ids[len(ids)-1]+1, 0)
					return
				}
				left--
				if left == 0 {
					fn(res)
				}
			})
	}
	if left == 0 {
		fn(res)
		return
	}
	for _, n := range c.order {
		page(n, 0, 0)
	}
}
