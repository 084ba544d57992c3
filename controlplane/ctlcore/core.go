package ctlcore

import (
	"container/heap"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// Phase is where the Core stands.
type Phase uint8

const (
	// Backup: not the switch's primary controller; the Core does nothing.
	Backup Phase = iota
	// TakingOver: primary, learning the state of the switch and the servers (or programming a
	// fresh switch).
	TakingOver
	// Recovering: the switch restarted; its locks wait out the leases before their servers take
	// them back.
	Recovering
	// Running: sweeps, pings and allocation periods.
	Running
)

func (p Phase) String() string {
	switch p {
	case Backup:
		return "backup"
	case TakingOver:
		return "taking-over"
	case Recovering:
		return "recovering"
	case Running:
		return "running"
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// Core is the controller's decision logic: a pure state machine. Step takes an Input at a time
// now and returns the Effects the shell must carry out; nothing else happens inside (no I/O, no
// goroutines, no clock: time is an argument). It is not safe for concurrent use.
type Core struct {
	cfg    Config
	log    *slog.Logger
	sz     dataplane.Sizing
	now    time.Time
	out    []Effect
	nextID uint64

	pending map[uint64]pendingOp
	timers  timerHeap
	tseq    uint64

	primary bool
	phase   Phase
	gen     uint64 // bumped at every loss of primacy and every takeover
	term    uint64
	// termSeen is the largest controller term a server reported (ping answers); raising says a
	// move above it (raiseTerm) waits for its confirming write.
	termSeen uint64
	raising  bool
	cookie   uint64

	servers  map[uint16]*serverRec
	order    []uint16 // server numbers in configuration order
	standbys []Standby
	locks    map[uint32]*lockRec
	free     []uint32 // free lock indices (a stack)
	pool     *alloc.Allocator
	staging  map[uint16]*stagingRec

	// The largest switch token counter observed (as a token) and when.
	maxToken   uint64
	maxTokenAt time.Time

	lastHitsAt time.Time // when the lock_hits counters were last read

	// lastSwitchSent is when the latest switch admin request was sent, switchOK the send time
	// of the latest one the switch answered (liveness: the switch carries the pings).
	lastSwitchSent, switchOK time.Time

	sweeping  bool
	allocBusy bool // an allocation period (statistics, plan, moves) is under way
	moves     int  // migrations in flight
	recovery  int  // locks waiting for restart recovery

	stats Stats
}

type pendingOp struct {
	gen uint64
	fn  func(Result)
}

// New returns a Core in the Backup phase: it acts once told it is primary.
func New(cfg Config) (*Core, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	sz := cfg.sizing()
	c := &Core{cfg: cfg, log: cfg.Log, sz: sz, pending: map[uint64]pendingOp{}, servers: map[uint16]*serverRec{},
		locks: map[uint32]*lockRec{}, staging: map[uint16]*stagingRec{}}
	maxServer := uint16(0)
	for _, s := range cfg.Servers {
		c.servers[s.Num] = &serverRec{Server: s}
		c.order = append(c.order, s.Num)
		maxServer = max(maxServer, s.Num)
	}
	c.standbys = append([]Standby(nil), cfg.Standbys...)
	for n := range c.servers {
		c.staging[n] = &stagingRec{num: n, home: stagingEntry(n, 0)}
	}
	for i := sz.Locks - 1; i >= int(maxServer); i-- {
		c.free = append(c.free, uint32(i))
	}
	var err error
	c.pool, err = alloc.New(alloc.Config{Slots: cfg.Slots, Rules: alloc.Rules{Levels: dataplane.Levels, MinRegion: 1,
		MaxRegion: cfg.MaxRegion}, Hysteresis: cfg.Hysteresis, Strategy: cfg.Strategy, Seed: cfg.Seed})
	if err != nil {
		return nil, fmt.Errorf("ctlcore: %w", err)
	}
	return c, nil
}

// stagingEntry is server n's staging entry of the switch (docs/controlplane.md, "Staging
// entries"): reserved lock id ReservedLockBase+n, index n-1 (or index, when it is lent to a lock
// index for a reset and a token base), its two reserved slots 2(n-1) and 2(n-1)+1.
func stagingEntry(n uint16, index uint32) dataplane.LockEntry {
	if index == 0 {
		index = uint32(n - 1)
	}
	base := 2 * uint32(n-1)
	return dataplane.LockEntry{Lock: wire.ReservedLockBase + uint32(n), Index: index, Server: n, Paused: true,
		Regions: [dataplane.Levels]dataplane.Region{{Left: base, Size: 1}, {Left: base + 1, Size: 1}}}
}

// Phase returns the Core's phase.
func (c *Core) Phase() Phase { return c.phase }

// Term returns the controller term the Core uses with the servers.
func (c *Core) Term() uint64 { return c.term }

// Step applies one input at time now and returns the effects to carry out. The returned slice
// belongs to the caller.
func (c *Core) Step(now time.Time, in Input) []Effect {
	if now.After(c.now) {
		c.now = now
	}
	switch in := in.(type) {
	case Tick:
	case Primary:
		c.setPrimary(in.IsPrimary)
	case Result:
		op, ok := c.pending[in.ID]
		if ok {
			delete(c.pending, in.ID)
			if op.gen == c.gen {
				op.fn(in)
			}
		}
	}
	c.runTimers()
	out := c.out
	c.out = nil
	return out
}

// NextDeadline returns when the Core next needs a Tick (the zero time: no timer).
func (c *Core) NextDeadline() time.Time {
	for len(c.timers) > 0 && c.timers[0].gen != c.gen {
		heap.Pop(&c.timers)
	}
	if len(c.timers) == 0 {
		return time.Time{}
	}
	return c.timers[0].at
}

// Pending returns the number of effects that wait for their Result.
func (c *Core) Pending() int { return len(c.pending) }

func (c *Core) id() uint64 {
	c.nextID++
	return c.nextID
}

func (c *Core) emit(e Effect, fn func(Result)) {
	c.out = append(c.out, e)
	c.pending[e.EffectID()] = pendingOp{gen: c.gen, fn: fn}
}

// write sends updates (atomic when asked) and calls fn with the outcome.
func (c *Core) write(atomic bool, fn func(error), ups ...Update) {
	c.stats.Writes++
	c.emit(Write{ID: c.id(), Updates: ups, Atomic: atomic}, func(r Result) {
		if r.Err != nil {
			c.stats.WriteErrors++
		}
		fn(r.Err)
	})
}

func (c *Core) switchAdmin(req dataplane.AdminRequest, fn func(dataplane.AdminReply, error)) {
	c.stats.SwitchAdmin++
	sent := c.now
	c.lastSwitchSent = sent
	c.emit(SwitchAdmin{ID: c.id(), Req: req}, func(r Result) {
		if r.Err == nil && sent.After(c.switchOK) {
			if !c.switchOK.IsZero() && sent.Sub(c.switchOK) > 2*c.cfg.PingPeriod {
				// A gap in the answered switch requests (pingAll sends one every PingPeriod):
				// the switch lost those sent in between, and the pings sent before this one
				// may have been lost with them. They are not misses (liveness.forgive).
				for _, s := range c.servers {
					s.live.forgive(sent)
				}
			}
			c.switchOK = sent
		}
		if r.Err == nil && r.Admin.Result == dataplane.AdminBadRequest {
			r.Err = fmt.Errorf("switch admin %d of lock %d: bad request", req.Op, req.Lock)
		}
		if r.Err != nil {
			c.stats.SwitchAdminErrors++
		}
		fn(r.Admin, r.Err)
	})
}

// serverAdmin sends msg (with the Core's term in Timestamp) to server n.
func (c *Core) serverAdmin(n uint16, msg wire.Fields, fn func(wire.Fields, []byte, error)) {
	msg.Op = wire.OpAdmin
	if msg.Status != wire.AdminTokenFloor && msg.Status != wire.AdminResetLock {
		msg.Timestamp = c.term
	}
	msg.Txn = c.nextID + 1
	c.stats.ServerAdmin++
	c.emit(ServerAdmin{ID: c.id(), Server: n, Msg: msg}, func(r Result) {
		err := r.Err
		if err == nil && (r.Server.Op != wire.OpAdmin || r.Server.Status != msg.Status) {
			err = fmt.Errorf("server %d refused admin %d of lock %d: %s", n, msg.Status, msg.Lock, r.Server.String())
		}
		if err != nil {
			c.stats.ServerAdminErrors++
			c.log.Debug("server admin failed", "server", n, "admin", msg.Status, "lock", msg.Lock, "err", err)
		}
		fn(r.Server, r.Body, err)
	})
}

// timers

type timer struct {
	at  time.Time
	seq uint64
	gen uint64
	fn  func()
}

type timerHeap []timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// after runs fn d from now (within this generation).
func (c *Core) after(d time.Duration, fn func()) {
	c.tseq++
	heap.Push(&c.timers, timer{at: c.now.Add(d), seq: c.tseq, gen: c.gen, fn: fn})
}

func (c *Core) runTimers() {
	for len(c.timers) > 0 && !c.timers[0].at.After(c.now) {
		t := heap.Pop(&c.timers).(timer)
		if t.gen == c.gen {
			t.fn()
		}
	}
}

// every runs fn every d while the generation lasts.
func (c *Core) every(d time.Duration, fn func()) {
	var tick func()
	tick = func() {
		fn()
		c.after(d, tick)
	}
	c.after(d, tick)
}

// retry runs fn after the poll interval (a step that failed, to be tried again).
func (c *Core) retry(fn func()) { c.after(c.cfg.PollInterval, fn) }

// lifecycle

func (c *Core) setPrimary(p bool) {
	if p == c.primary {
		return
	}
	c.primary = p
	why := "this controller lost primacy"
	if p {
		why = "this controller became primary"
	}
	c.cancelAll(why)
	if !p {
		c.phase = Backup
		c.log.Warn("not primary any more: standing by")
		return
	}
	c.stats.Takeovers++
	c.takeover()
}

// takeover learns the switch's and the servers' state as the new primary, or programs a fresh
// switch (docs/controlplane.md, "Controller death", "Switch restart").
func (c *Core) takeover() {
	c.phase = TakingOver
	c.log.Info("primary: taking over the rack")
	for _, n := range c.order {
		s := c.servers[n]
		s.suspect = false
		s.live.reset()
	}
	c.emit(GetPipeline{ID: c.id()}, func(r Result) {
		if r.Err != nil {
			c.log.Warn("get pipeline failed; retrying", "err", r.Err)
			c.after(c.cfg.SweepPeriod, c.takeover)
			return
		}
		if !r.HasPipeline {
			c.fresh("no pipeline")
			return
		}
		// The rack must be set for admin packets to pass; setting it again is harmless.
		c.write(false, func(err error) {
			if err != nil {
				c.fresh(fmt.Sprintf("setting the rack failed: %v", err))
				return
			}
			c.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchGetCookie}, func(rep dataplane.AdminReply, err error) {
				switch {
				case err != nil:
					c.fresh(fmt.Sprintf("no cookie: %v", err))
				case rep.Value == 0:
					c.fresh("cookie 0: the switch's registers are fresh")
				default:
					c.cookie = rep.Value
					c.startPings(c.reconcile)
				}
			})
		}, Update{Op: Modify, Entity: Entity{Rack: &c.cfg.Rack}})
	})
}

// startPings takes the next controller term (bumpTerm), starts the periodic pings, then calls
// next. The switch must route: the servers are reached through it.
func (c *Core) startPings(next func()) {
	c.bumpTerm(func() {
		c.every(c.cfg.PingPeriod, c.pingAll)
		next()
	})
}

// bumpTerm learns the largest controller term of the servers, takes the next one, and announces
// it (a ping with the term), then calls next. Servers that do not answer get the term later,
// with the pings.
func (c *Core) bumpTerm(next func()) {
	n := len(c.order)
	seen := max(c.term, c.termSeen)
	done := 0
	for _, num := range c.order {
		c.serverAdmin(num, wire.Fields{Status: wire.AdminPing}, func(rep wire.Fields, _ []byte, err error) {
			if err == nil {
				seen = max(seen, rep.Timestamp)
				c.learnServing(num, rep)
			}
			done++
			if done < n {
				return
			}
			c.term = seen + 1
			c.log.Info("controller term", "term", c.term)
			announced := 0
			for _, num := range c.order {
				c.ping(num, func() {
					announced++
					if announced == n {
						next()
					}
				})
			}
		})
	}
}

// raiseTerm handles a ping answer that reports a controller term above the Core's: another
// controller's term reached that server and not the others when the Core took its own (it did
// not answer then), or an earlier primary raised its term after the Core's takeover had learned
// it. A server refuses every placement request below its term, so without this the Core's moves
// of that server's locks were refused forever. The Core moves above seen, but only after a
// P4Runtime write the switch took (the switch takes writes from its primary alone): a deposed
// primary that still runs learns the larger term too, and its write is refused, so it never
// raises its term past the fence (docs/controlplane.md, "Election and takeover"). The new term
// is announced with a ping to every server that is not suspected.
func (c *Core) raiseTerm(seen uint64) {
	c.termSeen = max(c.termSeen, seen)
	if c.raising || c.termSeen <= c.term {
		return
	}
	c.raising = true
	c.log.Warn("a server has seen a larger controller term: confirming primacy to move above it", "term", c.term,
		"seen", c.termSeen)
	c.write(false, func(err error) {
		c.raising = false
		if err != nil {
			c.log.Warn("the switch refused the confirming write: keeping the term (a deposed primary must not raise it)",
				"term", c.term, "seen", c.termSeen, "err", err)
			return
		}
		if c.termSeen <= c.term {
			return
		}
		c.term = c.termSeen + 1
		c.stats.TermRaises++
		c.log.Info("controller term raised above the servers'", "term", c.term)
		for _, n := range c.order {
			if !c.servers[n].suspect {
				c.ping(n, nil)
			}
		}
	}, Update{Op: Modify, Entity: Entity{Rack: &c.cfg.Rack}})
}

// fresh programs a switch whose state is gone (or never was): the pipeline, the tables, the
// staging entries, the cookie; then the locks its servers hold for it recover.
func (c *Core) fresh(why string) {
	c.log.Warn("programming the switch from scratch", "why", why)
	c.stats.BringUps++
	gen := c.gen
	detected := c.now
	cookie := c.cfg.Cookie
	if cookie == 0 {
		cookie = uint64(c.now.UnixNano()) | 1
	}
	c.emit(PushPipeline{ID: c.id(), Cookie: cookie}, func(r Result) {
		if r.Err != nil {
			c.log.Error("pipeline push failed; retrying", "err", r.Err)
			c.after(c.cfg.SweepPeriod, func() { c.fresh(why) })
			return
		}
		c.upsert(func(err error) {
			if err != nil {
				c.log.Error("bring-up writes failed; starting again", "err", err)
				c.after(c.cfg.SweepPeriod, func() { c.fresh(why) })
				return
			}
			c.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchSetCookie, Value: cookie}, func(_ dataplane.AdminReply, err error) {
				if err != nil {
					c.log.Error("setting the cookie failed; starting again", "err", err)
					c.after(c.cfg.SweepPeriod, func() { c.fresh(why) })
					return
				}
				if gen != c.gen {
					return
				}
				c.cookie = cookie
				c.locate(func() { c.startPings(func() { c.afterFresh(detected) }) })
			})
		}, c.bringUpUpdates()...)
	})
}

// upsert writes ups (not atomically) and, if some of them found their entity already there,
// writes them all again as modifications: the bring-up must succeed on a switch that kept part
// of its state (a P4Runtime pipeline push keeps the clone sessions, as bmv2 does; a controller
// that died halfway through a bring-up left entries behind).
func (c *Core) upsert(fn func(error), ups ...Update) {
	c.write(false, func(err error) {
		if err == nil || !isAlreadyExists(err) {
			fn(err)
			return
		}
		mod := make([]Update, len(ups))
		for i, u := range ups {
			if u.Op == Insert {
				u.Op = Modify
			}
			mod[i] = u
		}
		c.log.Info("bring-up: entries already there, writing them again as modifications", "err", err)
		c.write(false, fn, mod...)
	}, ups...)
}

// bringUpUpdates are the writes of docs/dataplane.md's bring-up, in its order: the rack, clone
// sessions for every port, the servers, the routes, the tenants, the staging entries.
func (c *Core) bringUpUpdates() []Update {
	ups := []Update{{Op: Modify, Entity: Entity{Rack: &c.cfg.Rack}}}
	ports := map[int]bool{}
	addPort := func(p int) {
		if !ports[p] {
			ports[p] = true
			ups = append(ups, Update{Op: Insert, Entity: Entity{ClonePort: p}})
		}
	}
	for _, n := range c.order {
		addPort(c.servers[n].Port)
	}
	for _, s := range c.standbys {
		addPort(s.Port)
	}
	for _, h := range c.cfg.Hosts {
		addPort(h.Port)
	}
	for _, n := range c.order {
		// A server that still has a standby is routed to the standby first (locate): a standby
		// grants nothing until its takeover, and one that took over must keep the address.
		port, mac := c.servers[n].Port, c.servers[n].MAC
		if sb, ok := c.standby(n); ok {
			port, mac = sb.Port, sb.MAC
		}
		rs := c.routeUpdates(n, port, mac)
		rs[0].Op, rs[1].Op = Insert, Insert
		ups = append(ups, rs[1], rs[0]) // the server entry, then the route (docs/dataplane.md's order)
	}
	for _, h := range c.cfg.Hosts {
		hop := dataplane.NextHop{SrcMAC: c.cfg.Rack.SwitchMAC, DstMAC: h.MAC, Port: h.Port}
		ups = append(ups, Update{Op: Insert, Entity: Entity{Prefix: h.Prefix, Route: &hop}})
	}
	for i := range c.cfg.Tenants {
		ups = append(ups, Update{Op: Insert, Entity: Entity{Tenant: &c.cfg.Tenants[i]}})
	}
	for _, n := range c.stagingOrder() {
		e := c.staging[n].home
		ups = append(ups, Update{Op: Insert, Entity: Entity{Lock: &e}})
	}
	return ups
}

// afterFresh: every lock the switch held is gone with it. The locks its servers keep resident
// wait out the leases the old switch may have granted, then go back to their servers
// (docs/controlplane.md, "Switch restart").
func (c *Core) afterFresh(detected time.Time) {
	c.resetPlacement()
	c.phase = Recovering
	c.listResidents(func(res map[uint16][]uint32) {
		total := 0
		for _, ids := range res {
			total += len(ids)
		}
		floor := uint64(0)
		if total > 0 {
			floor = c.recoveryFloor(detected)
		}
		wait := detected.Add(c.cfg.Rack.MaxLease + c.cfg.LeaseMargin).Sub(c.now)
		if c.cfg.TestingKnobs.Mutation == MutationSkipRecoveryWait {
			wait = 0
		}
		c.log.Info("switch programmed", "cookie", c.cookie, "locks_to_recover", total, "wait", wait, "token_floor", floor)
		c.recovery = total
		if total == 0 {
			c.run()
			return
		}
		c.after(max(wait, 0), func() {
			for _, n := range c.order {
				for _, id := range res[n] {
					lk := c.lock(id)
					lk.server = n
					lk.state = stateRecovering
					c.adoptRecovered(lk, floor)
				}
			}
		})
	})
}

// adoptRecovered hands a lock of a restarted switch back to its server, above floor.
func (c *Core) adoptRecovered(lk *lockRec, floor uint64) {
	c.serverAdmin(lk.server, wire.Fields{Status: wire.AdminAdopt, Lock: lk.id, Token: floor}, func(_ wire.Fields, _ []byte, err error) {
		if err != nil {
			c.retry(func() { c.adoptRecovered(lk, floor) })
			return
		}
		lk.state = stateServer
		c.stats.Recovered++
		c.recovery--
		if c.recovery == 0 {
			c.log.Info("switch restart recovered: every lock back on its server")
			c.run()
		}
	})
}

// recoveryFloor is the token floor of the locks a lost switch held, as of detected: tokenBound
// when the Core has observed the switch's token counters (or restored an observation). A Core
// that never did (a backup that became primary just as the switch restarted, without a state
// file) falls back to the servers' next epochs, wire.EpochBase(epoch+1): the switch's tokens for a lock
// start at its server's last token, within the server's epoch, so this covers them unless the
// switch granted the lock more than 2^(40-SlotBits) times since it moved in (docs/controlplane.md,
// "Switch restart").
func (c *Core) recoveryFloor(detected time.Time) uint64 {
	f := c.tokenBound(detected)
	if c.maxTokenAt.IsZero() {
		for _, s := range c.servers {
			f = max(f, wire.EpochBase(s.epoch+1))
		}
	}
	return f
}

// tokenBound bounds every token the switch may have granted before detected: the largest token
// counter observed, plus MaxGrantRate grants for every second between that observation and
// detected, as the next token value (docs/controlplane.md, "Switch restart").
func (c *Core) tokenBound(detected time.Time) uint64 {
	if c.maxTokenAt.IsZero() {
		if c.maxToken == 0 {
			c.log.Warn("no switch token counter was ever observed: the floors of the lost switch's locks are the " +
				"servers' next epochs (restore an observation with Core.Observe, the controller's state file)")
		}
		return 0
	}
	dt := detected.Sub(c.maxTokenAt).Seconds()
	grants := math.Ceil(max(dt, 0)*c.cfg.MaxGrantRate) + 2
	seq := float64(c.maxToken>>c.sz.SlotBits()) + grants
	if seq >= float64(uint64(1)<<(64-c.sz.SlotBits())) {
		return math.MaxUint64
	}
	return uint64(seq) << c.sz.SlotBits()
}

// Observe hands the Core an observation of the switch's token counters saved by an earlier
// controller (Checkpoint): the largest one and when it was read. The Core keeps the larger.
func (c *Core) Observe(maxToken uint64, at time.Time) {
	if maxToken > c.maxToken || (maxToken == c.maxToken && at.After(c.maxTokenAt)) {
		c.maxToken, c.maxTokenAt = maxToken, at
	}
}

// Checkpoint returns the largest switch token counter observed and when, for the shell to save
// (Observe restores it).
func (c *Core) Checkpoint() (uint64, time.Time) { return c.maxToken, c.maxTokenAt }

func (c *Core) observe(v uint64) {
	if v >= c.maxToken {
		c.maxToken, c.maxTokenAt = v, c.now
	}
}

// run starts the periodic work.
func (c *Core) run() {
	if c.phase == Running {
		return
	}
	c.phase = Running
	c.log.Info("running", "servers", len(c.order), "switch_locks", c.switchLocks())
	c.every(c.cfg.SweepPeriod, c.sweep)
	if !c.cfg.Manual {
		c.every(c.cfg.AllocPeriod, c.allocate)
	}
}

func (c *Core) stagingOrder() []uint16 {
	ns := make([]uint16, 0, len(c.staging))
	for n := range c.staging {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}
