package ctlcore

import (
	"cmp"
	"slices"
	"time"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// Moving a lock (docs/controlplane.md, "Moving a lock"). Every step is idempotent and is retried
// after the poll interval when it fails, so a move survives lost messages; a move is one task of
// its lock (lockRec.task): starting another, or the failure handling, makes the callbacks of the
// old one stale.
//
// Out of the switch (lock L, server S, entry E on index i):
//
//	pause    MODIFY E -> lock_pause: new acquires go to S's q2 (counted by the switch), the
//	         switch sends no queue-empty for L, its queue only drains
//	yield    S marks L resident (a standby that took S's place learns it here)
//	barrier  through S's staging entry: every push-back S sent for L before (in answer to a
//	         queue-empty sent before the pause) has reached the switch, and none will follow
//	drain    probe until L has no holder, no waiter and no occupied slot (the lease sweep
//	         force-releases expired holders meanwhile)
//	reset    AdminSwitchReset(L): the queue forgotten; the reply's grant counter bounds every
//	         token the switch granted for L: F = (counter>>SlotBits + 1) << SlotBits
//	floor    AdminTokenFloor(S, L, F) (before the delete: a controller taking over later may adopt
//	         a lock found resident without an entry without knowing F)
//	delete   DELETE E: requests now reach S unchanged (new acquires dropped until the adopt)
//	adopt    AdminAdopt(S, L, F): q2 joins S's queue in its order, S grants
//
// Into the switch (L owned by S, to index i with regions R), once the move's turn at S's staging
// entry has come (the moves of S's locks take it one at a time, the hottest first; the move
// holds it from the yield to the stage):
//
//	yield    S marks L resident: new acquires dropped (the clients retransmit), the holders and
//	         waiters S has are served; polled until S has none left and nothing buffered
//	stage    through S's staging entry lent to index i: AdminSwitchReset and
//	         AdminSwitchTokenBase(S's last token): the switch's tokens for L start above S's
//	insert   INSERT L -> lock_hit(i, R, S): the switch grants L from now on, its q1 and S's q2
//	         empty and its count of buffered requests 0

type moveStep uint8

const (
	stepPause moveStep = iota
	stepYield
	stepBarrier
	stepDrain
	stepReset
	stepFloor
	stepDelete
	stepAdopt
)

// moveRec is a move under way, for its log line: every move logs one line at INFO when it ends,
// with its outcome (moved, abandoned, cancelled), its duration and why; its steps log at DEBUG.
type moveRec struct {
	into    bool // into the switch (else out of it)
	started time.Time
	from    moveStep // a move out resumed by a controller that took over starts past the pause
}

func (m *moveRec) dir() string {
	if m.into {
		return "into the switch"
	}
	return "out of the switch"
}

// startMove records that a move of lk starts. A move still recorded (one that a failure
// cancelled and the caller restarts) ends first, cancelled.
func (c *Core) startMove(lk *lockRec, into bool, from moveStep) {
	if lk.mv != nil {
		c.endMove(lk, "cancelled", "a new move of the lock replaces it")
	}
	lk.mv = &moveRec{into: into, started: c.now, from: from}
	c.log.Debug("move starts", "lock", lk.id, "server", lk.server, "dir", lk.mv.dir(), "from", from)
}

// endMove logs the end of lk's move, once: outcome "moved", "abandoned" (at WARN) or "cancelled",
// why (may be empty) and extra attributes.
func (c *Core) endMove(lk *lockRec, outcome, why string, attrs ...any) {
	m := lk.mv
	if m == nil {
		return
	}
	lk.mv = nil
	args := append([]any{"lock", lk.id, "server", lk.server, "outcome", outcome, "took", c.now.Sub(m.started)}, attrs...)
	if why != "" {
		args = append(args, "why", why)
	}
	if m.from != stepPause {
		args = append(args, "resumed_at", m.from)
	}
	if outcome == "abandoned" {
		c.log.Warn("move "+m.dir(), args...)
		return
	}
	c.log.Info("move "+m.dir(), args...)
}

// Stop ends the Core's life: the moves still under way are cancelled, each logged at DEBUG, and
// one INFO line counts them (a controller stopped in the middle of an allocation period would
// otherwise log a line per move).
func (c *Core) Stop(now time.Time) {
	c.now = now
	in, out := 0, 0
	for _, lk := range c.locks {
		m := lk.mv
		if m == nil {
			continue
		}
		if m.into {
			in++
		} else {
			out++
		}
		lk.mv = nil
		c.log.Debug("move "+m.dir(), "lock", lk.id, "server", lk.server, "outcome", "cancelled", "took",
			now.Sub(m.started), "why", "the controller stopped")
	}
	if in+out > 0 {
		c.log.Info("stopping: moves cancelled", "into_switch", in, "out_of_switch", out)
	}
}

// beginTask starts a new task of lk and returns its number.
func (c *Core) beginTask(lk *lockRec) uint64 {
	lk.task++
	if !lk.moving {
		lk.moving = true
		c.moves++
	}
	return lk.task
}

// endTask ends lk's current task.
func (c *Core) endTask(lk *lockRec) {
	if lk.moving {
		lk.moving = false
		c.moves--
	}
	if f := lk.onDone; f != nil {
		lk.onDone = nil
		f()
	}
}

// moveOut moves lk (in the switch) back to its server.
func (c *Core) moveOut(lk *lockRec) { c.moveOutFrom(lk, stepPause) }

// moveOutFrom runs the move out from step on (a controller that takes over resumes a move).
func (c *Core) moveOutFrom(lk *lockRec, step moveStep) {
	t := c.beginTask(lk)
	lk.state = stateMovingOut
	c.startMove(lk, false, step)
	c.outStep(lk, t, step, 0)
}

func (c *Core) outStep(lk *lockRec, t uint64, step moveStep, floor uint64) {
	if lk.task != t {
		return
	}
	again := func() { c.retry(func() { c.outStep(lk, t, step, floor) }) }
	next := func(f uint64) {
		if lk.task == t {
			c.outStep(lk, t, step+1, f)
		}
	}
	switch step {
	case stepPause:
		if lk.paused {
			next(floor)
			return
		}
		e := lk.entry()
		e.Paused = true
		c.write(false, func(err error) {
			if err != nil {
				again()
				return
			}
			lk.paused = true
			next(floor)
		}, Update{Op: Modify, Entity: Entity{Lock: &e}})
	case stepYield:
		c.serverAdmin(lk.server, wire.Fields{Status: wire.AdminYield, Lock: lk.id}, func(_ wire.Fields, _ []byte, err error) {
			if err != nil {
				again()
				return
			}
			next(floor)
		})
	case stepBarrier:
		if c.cfg.TestingKnobs.Mutation == MutationSkipBarrier {
			next(floor)
			return
		}
		c.barrier(lk.server, func() { next(floor) })
	case stepDrain:
		if c.cfg.TestingKnobs.Mutation == MutationSkipDrain {
			next(floor)
			return
		}
		lk.adminSent++
		c.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, Lock: lk.id}, func(rep dataplane.AdminReply, err error) {
			if err != nil || rep.Result != dataplane.AdminOK {
				again()
				return
			}
			c.observe(rep.Value)
			if rep.Holders != 0 || rep.Waiting != [dataplane.Levels]uint16{} || rep.Used != [dataplane.Levels]uint16{} {
				again()
				return
			}
			next(floor)
		})
	case stepReset:
		lk.adminSent++
		c.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchReset, Lock: lk.id}, func(rep dataplane.AdminReply, err error) {
			if err != nil || rep.Result != dataplane.AdminOK {
				again()
				return
			}
			c.observe(rep.Value)
			sb := c.sz.SlotBits()
			next((rep.Value>>sb + 1) << sb)
		})
	case stepFloor:
		if c.cfg.TestingKnobs.Mutation == MutationSkipFloor {
			next(0)
			return
		}
		c.serverAdmin(lk.server, wire.Fields{Status: wire.AdminTokenFloor, Lock: lk.id, Token: floor},
			func(rep wire.Fields, _ []byte, err error) {
				if err != nil || rep.Token < floor {
					again()
					return
				}
				c.serverEpoch(lk.server, rep.Token)
				next(floor)
			})
	case stepDelete:
		e := lk.entry()
		c.write(false, func(err error) {
			if err != nil && !isNotFound(err) {
				again()
				return
			}
			lk.inTable, lk.paused = false, false
			c.freeIndex(lk.index)
			next(floor)
		}, Update{Op: Delete, Entity: Entity{Lock: &e}})
	case stepAdopt:
		c.serverAdmin(lk.server, wire.Fields{Status: wire.AdminAdopt, Lock: lk.id, Token: floor},
			func(rep wire.Fields, _ []byte, err error) {
				if err != nil || rep.Priority != 0 {
					again()
					return
				}
				c.serverEpoch(lk.server, rep.Token)
				lk.state = stateServer
				c.stats.MovesOut++
				c.endMove(lk, "moved", "", "floor", floor)
				c.endTask(lk)
			})
	}
}

// moveIn moves lk (owned by its server) into the switch with regions r. The moves of a server's
// locks take its staging entry one at a time (allocate starts them hottest first), and the
// server yields lk only when lk's turn has come: a yielded lock serves no new request until its
// switch entry is in (the server drops its acquires, the clients back off and retransmit), so
// it must not wait its turn yielded (it used to: the software rack's throughput fell to 0 for
// the median 0.4 s a move waited for its turn: docs/controlplane.md, "Moving a lock").
func (c *Core) moveIn(lk *lockRec, r [dataplane.Levels]dataplane.Region) {
	t := c.beginTask(lk)
	lk.state = stateMovingIn
	c.startMove(lk, true, stepPause)
	n := lk.server
	c.withStaging(n, func(release func()) {
		if lk.task != t {
			// Cancelled while it waited (cancelServerTasks): nothing was yielded.
			release()
			return
		}
		i, ok := c.takeIndex()
		if !ok {
			release()
			c.endMove(lk, "abandoned", "no free lock index")
			c.stats.MovesAborted++
			lk.state = stateServer
			c.endTask(lk)
			return
		}
		start := c.now
		var yield func()
		yield = func() {
			c.serverAdmin(n, wire.Fields{Status: wire.AdminYield, Lock: lk.id}, func(rep wire.Fields, _ []byte, err error) {
				if lk.task != t {
					c.freeIndex(i)
					release()
					return
				}
				if err == nil && ((rep.LeaseMicros == 0 && rep.Slots == 0) || c.cfg.TestingKnobs.Mutation == MutationSkipYieldDrain) {
					c.moveInStage(lk, t, i, r, rep.Token, release)
					return
				}
				c.log.Debug("waiting for the server's queue to drain", "lock", lk.id, "own", rep.LeaseMicros, "buffered", rep.Slots, "err", err)
				if c.now.Sub(start) > c.cfg.MoveTimeout {
					c.freeIndex(i)
					release()
					c.abortMoveIn(lk, t, "the server's queue did not drain")
					return
				}
				c.retry(yield)
			})
		}
		yield()
	})
}

// startMovesIn starts the moves of ins into the switch, the hottest first (by r_i, then lock id):
// they take their servers' staging entries in that order.
func (c *Core) startMovesIn(ins []*lockRec, want map[uint32]*[dataplane.Levels]dataplane.Region) {
	slices.SortFunc(ins, func(a, b *lockRec) int {
		if x := cmp.Compare(b.rate, a.rate); x != 0 {
			return x
		}
		return cmp.Compare(a.id, b.id)
	})
	for _, lk := range ins {
		if lk.state == stateServer && !lk.moving {
			c.moveIn(lk, *want[lk.id])
		}
	}
}

// abortMoveIn gives a move in up: the server takes the lock back (nothing reached the switch).
func (c *Core) abortMoveIn(lk *lockRec, t uint64, why string) {
	c.endMove(lk, "abandoned", why)
	c.stats.MovesAborted++
	var adopt func()
	adopt = func() {
		c.serverAdmin(lk.server, wire.Fields{Status: wire.AdminAdopt, Lock: lk.id}, func(_ wire.Fields, _ []byte, err error) {
			if lk.task != t {
				return
			}
			if err != nil {
				c.retry(adopt)
				return
			}
			lk.state = stateServer
			c.endTask(lk)
		})
	}
	adopt()
}

// moveInStage prepares index i for lk (reset, token base above the server's last token) through
// the server's staging entry, which the move holds (release gives it back), then inserts lk's
// entry.
func (c *Core) moveInStage(lk *lockRec, t uint64, i uint32, r [dataplane.Levels]dataplane.Region, lastToken uint64,
	release func()) {
	n := lk.server
	st := c.staging[n]
	lent := stagingEntry(n, i)
	sb := c.sz.SlotBits()
	steps := []stagingStep{
		{write: &lent},
		{admin: dataplane.AdminRequest{Op: wire.AdminSwitchReset, Lock: lent.Lock}},
		// The reply is the grant counter as a token: the next token, one grant later, must be
		// above the server's last.
		{admin: dataplane.AdminRequest{Op: wire.AdminSwitchTokenBase, Lock: lent.Lock, Value: lastToken},
			accept: func(rep dataplane.AdminReply) bool {
				if rep.Value>>sb < lastToken>>sb {
					return false
				}
				c.observe(rep.Value)
				return true
			}},
		{write: &st.home},
	}
	if c.cfg.TestingKnobs.Mutation == MutationSkipTokenBase {
		steps = append(steps[:2], steps[3])
	}
	live := func() bool { return lk.task == t }
	c.stagingSteps(steps, live, func() {
		// The move was cancelled (server failure): put the staging entry back, free the index.
		c.write(false, func(error) { release() }, Update{Op: Modify, Entity: Entity{Lock: &st.home}})
		c.freeIndex(i)
	}, func() {
		// The insert goes out before the next move's yield.
		c.moveInInsert(lk, t, i, r)
		release()
	})
}

// stagingStep is one step of an operation through a server's staging entry: a write of the
// entry (write set) or a switch admin request whose OK reply accept (if set) must also take.
type stagingStep struct {
	write  *dataplane.LockEntry
	admin  dataplane.AdminRequest
	accept func(dataplane.AdminReply) bool
}

// stagingSteps runs steps in order, each tried again after the poll interval until it succeeds,
// then calls done. live (if set) is asked before every attempt: once it says no, the run ends
// with gone (if set) instead.
func (c *Core) stagingSteps(steps []stagingStep, live func() bool, gone func(), done func()) {
	var step func(k int)
	step = func(k int) {
		if live != nil && !live() {
			if gone != nil {
				gone()
			}
			return
		}
		if k == len(steps) {
			done()
			return
		}
		again := func() { c.retry(func() { step(k) }) }
		st := steps[k]
		if st.write != nil {
			c.write(false, func(err error) {
				if err != nil {
					again()
					return
				}
				step(k + 1)
			}, Update{Op: Modify, Entity: Entity{Lock: st.write}})
			return
		}
		c.switchAdmin(st.admin, func(rep dataplane.AdminReply, err error) {
			if err != nil || rep.Result != dataplane.AdminOK || (st.accept != nil && !st.accept(rep)) {
				again()
				return
			}
			step(k + 1)
		})
	}
	step(0)
}

func (c *Core) moveInInsert(lk *lockRec, t uint64, i uint32, r [dataplane.Levels]dataplane.Region) {
	if lk.task != t {
		c.freeIndex(i)
		return
	}
	e := dataplane.LockEntry{Lock: lk.id, Index: i, Regions: r, Server: lk.server}
	op := Insert
	var insert func()
	insert = func() {
		c.write(false, func(err error) {
			if lk.task != t {
				return
			}
			if err != nil {
				if isAlreadyExists(err) {
					op = Modify
				}
				c.retry(insert)
				return
			}
			lk.inTable, lk.paused, lk.index, lk.regions = true, false, i, r
			lk.lastHits, lk.adminSent = 0, 0
			lk.state = stateSwitch
			c.stats.MovesIn++
			c.endMove(lk, "moved", "", "index", i, "regions", r)
			c.endTask(lk)
		}, Update{Op: op, Entity: Entity{Lock: &e}})
	}
	insert()
}

// barrier makes sure that every push-back server n sent before it has reached the switch:
// through n's staging entry (unpaused for the purpose, queue reset) the switch is told that one
// request is buffered, so it sends n a queue-empty of the staging lock; n answers it with a
// push-back without a request, after every push-back it sent before (one socket, in order), and
// the switch's count goes back to 0 when it arrives (docs/controlplane.md, "The barrier").
//
// Barriers are shared: fn joins the barrier queued for n if one is queued and has not started
// (it starts after fn was asked for, so it covers fn's push-backs too); otherwise it queues one.
// A failover moves every switch lock of the dead server out at once, and one barrier each,
// taken one at a time through the staging entry, made that take seconds.
func (c *Core) barrier(n uint16, fn func()) {
	st0 := c.staging[n]
	st0.barrierWaiters = append(st0.barrierWaiters, fn)
	if len(st0.barrierWaiters) > 1 {
		return
	}
	c.withStaging(n, func(release func()) {
		waiters := st0.barrierWaiters
		st0.barrierWaiters = nil
		fn := func() {
			for _, w := range waiters {
				w()
			}
		}
		st := c.staging[n]
		open := st.home
		open.Paused = false
		reset := dataplane.AdminRequest{Op: wire.AdminSwitchReset, Lock: open.Lock}
		setBuffered := dataplane.AdminRequest{Op: wire.AdminSwitchSetBuffered, Lock: open.Lock, Value: 1}
		finish := func() {
			c.stagingSteps([]stagingStep{{write: &st.home}}, nil, nil, func() {
				c.stats.Barriers++
				release()
				fn()
			})
		}
		var ask func(from []stagingStep)
		ask = func(from []stagingStep) {
			c.stagingSteps(from, nil, nil, func() {
				polls := 0
				var poll func()
				poll = func() {
					c.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, Lock: open.Lock}, func(rep dataplane.AdminReply, err error) {
						switch {
						case err != nil || rep.Result != dataplane.AdminOK:
							c.retry(poll)
						case rep.Buffered == 0:
							finish()
						default:
							polls++
							if polls*int(c.cfg.PollInterval) > int(c.cfg.PingPeriod)*c.cfg.DeadAfter {
								// No echo yet (a lost queue-empty, a server away): ask again.
								c.retry(func() { ask([]stagingStep{{admin: reset}, {admin: setBuffered}}) })
								return
							}
							c.retry(poll)
						}
					})
				}
				poll()
			})
		}
		ask([]stagingStep{{write: &open}, {admin: reset}, {admin: setBuffered}})
	})
}
