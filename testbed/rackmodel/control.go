package rackmodel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/internal/des"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The control plane: one or two controllers (a primary and, with Config.Backup, a backup), each
// the real controller core (controlplane/ctlcore) driven in virtual time, the way the controller's
// shell (controlplane/controller) drives it over P4Runtime and UDP. The model is the shell: it
// hands the core its inputs (Tick at its NextDeadline, Primary, the Result of every effect) and
// carries out its effects on the modelled rack:
//
//   - Write, PushPipeline, GetPipeline, ReadLocks: on the engine's tables and counters, after
//     AdminDelay, answered AdminDelay later (P4Runtime);
//   - SwitchAdmin: an admin packet through the switch's CPU port after AdminDelay, its reply
//     AdminDelay later;
//   - ServerAdmin: a datagram with the rack key from the controller's address (10.0.0.2, UDP port
//     9000+i) through the switch to the server's address, and back, as any host's (with
//     OutOfBandAdmin, AdminDelay each way on a management network instead).
//
// An effect without an answer after EffectTimeout gets ctlcore.ErrTimeout. Everything else the
// controller does (the allocation, the lease sweep, the pings, moving locks, a switch restart's
// recovery, a dead server's failover, a controller takeover) is the core's own.

// ctl is one controller.
type ctl struct {
	r       *Rack
	i       int
	core    *ctlcore.Core
	addr    netip.AddrPort
	alive   bool
	wait    map[uint64]des.Event // effects without a result: their timeouts
	srvWait map[uint64]uint64    // server admin txn -> effect
	srvTxn  map[uint64]uint64    // effect -> server admin txn (forgotten with the effect)
	nadmin  uint16
	tickAt  int64
	tick    des.Event
}

func newCtl(r *Rack, i int) (*ctl, error) {
	p := r.p
	cc := ctlcore.Config{
		Sizing: p.Sizing,
		Rack: dataplane.Rack{Key: r.key, SwitchIP: switchIP, SwitchMAC: switchMAC, DefaultLease: p.Lease,
			MaxLease: 2 * p.Lease},
		Slots:        r.cfg.Alloc.Slots,
		MaxRegion:    p.MaxRegion,
		Strategy:     r.cfg.Alloc.Strategy,
		Hysteresis:   p.Hysteresis,
		Seed:         r.cfg.Alloc.Seed,
		AllocPeriod:  p.AllocPeriod,
		Manual:       p.AllocPeriod == 0,
		SweepPeriod:  p.SweepPeriod,
		PingPeriod:   p.PingPeriod,
		DeadAfter:    p.DeadAfter,
		ServerLease:  p.ServerLease,
		LeaseMargin:  p.LeaseMargin,
		MaxGrantRate: p.SwitchMpps * 1e6, // one grant per pipeline pass at line rate
		PollInterval: p.PollInterval,
		Tenants:      r.cfg.Tenants,
		Log:          slog.New(&eventLog{r: r, ctl: i}),
		TestingKnobs: ctlcore.TestingKnobs{Mutation: r.cfg.TestingKnobs.Mutation},
	}
	// The operator's c_i of a lock not seen deeper (0: the core's default).
	cc.DefaultContention = p.Contention
	cc.SizeEveryLevel = p.SizeEveryLevel
	for _, s := range r.servers {
		if s.standby {
			cc.Standbys = append(cc.Standbys, ctlcore.Standby{Num: uint16(s.idx + 1), Port: s.port, MAC: macFor(s.addr.Addr())})
			continue
		}
		cc.Servers = append(cc.Servers, ctlcore.Server{Num: uint16(s.idx + 1), Addr: s.addr, Port: s.port,
			MAC: macFor(s.addr.Addr())})
	}
	for _, c := range r.clients {
		cc.Hosts = append(cc.Hosts, ctlcore.Host{Prefix: netip.PrefixFrom(c.ip, 32), Port: c.port, MAC: macFor(c.ip)})
	}
	cc.Hosts = append(cc.Hosts, ctlcore.Host{Prefix: netip.PrefixFrom(ctlIP, 32), Port: ctlPort, MAC: macFor(ctlIP)})
	core, err := ctlcore.New(cc)
	if err != nil {
		return nil, fmt.Errorf("rackmodel: controller %d: %w", i, err)
	}
	return &ctl{r: r, i: i, core: core, addr: netip.AddrPortFrom(ctlIP, uint16(ctlUDPPort0+i)), alive: true,
		wait: map[uint64]des.Event{}, srvWait: map[uint64]uint64{}, srvTxn: map[uint64]uint64{}}, nil
}

// step hands the core one input and carries out its effects.
func (c *ctl) step(in ctlcore.Input) {
	if !c.alive {
		return
	}
	for _, e := range c.core.Step(vtime(c.r.k.Now()), in) {
		c.do(e)
	}
	c.schedule()
}

// schedule makes sure a Tick comes at the core's next deadline.
func (c *ctl) schedule() {
	d := c.core.NextDeadline()
	if d.IsZero() {
		return
	}
	at := max(d.Sub(epoch).Nanoseconds(), c.r.k.Now())
	if c.r.k.Pending(c.tick) && c.tickAt <= at {
		return
	}
	c.r.k.Cancel(c.tick)
	c.tickAt = at
	c.tick = c.r.k.At(at, func() { c.step(ctlcore.Tick{}) })
}

// result hands the core the result of one of its effects (the first one: a late answer after a
// timeout is dropped).
func (c *ctl) result(res ctlcore.Result) {
	ev, ok := c.wait[res.ID]
	if !ok {
		return
	}
	c.r.k.Cancel(ev)
	delete(c.wait, res.ID)
	if txn, ok := c.srvTxn[res.ID]; ok {
		delete(c.srvTxn, res.ID)
		delete(c.srvWait, txn)
	}
	c.step(res)
}

// do carries out one effect.
func (c *ctl) do(e ctlcore.Effect) {
	r := c.r
	id := e.EffectID()
	c.wait[id] = r.k.After(int64(r.p.EffectTimeout), func() {
		c.result(ctlcore.Result{ID: id, Err: ctlcore.ErrTimeout})
	})
	d := int64(r.p.AdminDelay)
	later := func(res ctlcore.Result) { r.k.After(d, func() { c.result(res) }) }
	switch e := e.(type) {
	case ctlcore.Write:
		r.k.After(d, func() { later(ctlcore.Result{ID: id, Err: r.sw.apply(e)}) })
	case ctlcore.PushPipeline:
		r.k.After(d, func() {
			if !r.sw.up {
				return // the stream is broken: the timeout answers
			}
			r.sw.pipeFree = 0
			if err := r.sw.load(); err != nil {
				r.log.Error("rackmodel: loading the switch", "err", err)
				later(ctlcore.Result{ID: id, Err: err})
				return
			}
			r.event("pipeline pushed by controller %d", c.i)
			later(ctlcore.Result{ID: id})
		})
	case ctlcore.GetPipeline:
		r.k.After(d, func() {
			if r.sw.up {
				later(ctlcore.Result{ID: id, HasPipeline: r.sw.dp != nil})
			}
		})
	case ctlcore.ReadLocks:
		r.k.After(d, func() {
			if r.sw.up {
				res, err := r.sw.readLocks()
				res.ID, res.Err = id, err
				later(res)
			}
		})
	case ctlcore.SwitchAdmin:
		r.k.After(d, func() {
			if !r.sw.running() {
				return
			}
			c.nadmin++
			req := e.Req
			req.ID = c.nadmin
			rep, err := r.sw.admin(req)
			if err != nil {
				return // no reply: the timeout answers
			}
			later(ctlcore.Result{ID: id, Admin: rep})
		})
	case ctlcore.ServerAdmin:
		msg := e.Msg
		if msg.Status == wire.AdminTakeover && r.cfg.TestingKnobs.NoTakeoverGrace {
			msg.LeaseMicros = 0 // the negative control: the standby waits out nothing
		}
		c.srvWait[msg.Txn], c.srvTxn[id] = id, msg.Txn
		dst := serverAddr(int(e.Server) - 1)
		if r.p.OutOfBandAdmin {
			// The management network delivers to the host the switch routes the address to.
			b := r.frame(c.addr, dst, &msg, nil)
			r.k.After(d, func() {
				if h, ok := r.ports[r.served[dst.Addr()]].(*server); ok {
					h.receive(b)
				}
			})
			return
		}
		r.hostSend(r.ctlHost, ctlPort, r.k.Now(), r.frame(c.addr, dst, &msg, nil))
	default:
		panic(fmt.Sprintf("rackmodel: unknown effect %T", e))
	}
}

// serverAnswer takes a server's answer to a controller's admin request.
func (c *ctl) serverAnswer(f udpframe.Frame) {
	h, err := wire.Parse(f.Payload)
	if err != nil {
		return
	}
	var m wire.Fields
	h.Decode(&m)
	id, ok := c.srvWait[m.Txn]
	if !ok {
		return
	}
	delete(c.srvWait, m.Txn)
	var body []byte
	if len(f.Payload) > wire.ControlLen {
		body = append([]byte(nil), f.Payload[wire.ControlLen:]...)
	}
	if m.Op == wire.OpAdmin && m.Status == wire.AdminStats {
		c.r.noteStats(body, int(m.Slots))
	}
	c.result(ctlcore.Result{ID: id, Server: m, Body: body})
}

// ctlHost is the controllers' machine on the switch's port ctlPort: server admin answers come
// back to it. It has no CPU cost.
type ctlHost struct {
	r        *Rack
	up, down link
}

func (h *ctlHost) links() (up, down *link) { return &h.up, &h.down }
func (h *ctlHost) lossy() bool             { return false }

func (h *ctlHost) receive(b []byte) {
	r := h.r
	var f udpframe.Frame
	if err := udpframe.Parse(b, &f); err != nil {
		r.stats.Malformed++
		return
	}
	i := int(f.Dst.Port()) - ctlUDPPort0
	if f.Dst.Addr() != ctlIP || i < 0 || i >= len(r.ctls) {
		r.stats.Unroutable++
		return
	}
	if r.p.OutOfBandAdmin {
		// Answers travel on the management network.
		r.k.After(int64(r.p.AdminDelay), func() { r.ctls[i].serverAnswer(f) })
		return
	}
	r.ctls[i].serverAnswer(f)
}

// noteStats remembers the locks a server reported (AdminStats): the locks an allocation period
// may move.
func (r *Rack) noteStats(body []byte, n int) {
	recs, err := wire.ParseLockStats(nil, body, n)
	if err != nil {
		return
	}
	for _, st := range recs {
		r.cand[st.Lock] = struct{}{}
	}
}

// Controller returns controller i's core (0: the first primary; 1: the backup).
func (r *Rack) Controller(i int) *ctlcore.Core { return r.ctls[i].core }

// Primary returns the index of the controller that is primary now, or -1.
func (r *Rack) Primary() int {
	if c := r.primary(); c != nil {
		return c.i
	}
	return -1
}

// primary returns the controller that is primary now, or nil.
func (r *Rack) primary() *ctl {
	for _, c := range r.ctls {
		if c.alive && c.core.Phase() != ctlcore.Backup {
			return c
		}
	}
	return nil
}

// SetPrimary tells controller i it is (or is not) the switch's primary controller, as the
// switch's arbitration does.
func (r *Rack) SetPrimary(i int, primary bool) { r.ctls[i].step(ctlcore.Primary{IsPrimary: primary}) }

// Allocation is what an allocation period of the controller did.
type Allocation struct {
	Strategy string `json:"strategy"`
	// Slots is the switch memory the allocator could use; Used what the plan uses.
	Slots int `json:"slots"`
	Used  int `json:"used"`
	// Locks is the number of locks in the switch after the period; MovesIn and MovesOut the
	// locks the period moved; Reported the locks the servers have reported so far (the
	// candidates).
	Locks    int `json:"locks"`
	MovesIn  int `json:"moves_in"`
	MovesOut int `json:"moves_out"`
	Reported int `json:"reported"`
	// Value is the plan's objective (sum r_i s_i / c_i), Best its upper bound (alloc.Plan).
	Value float64 `json:"value"`
	Best  float64 `json:"best"`
}

// ErrNotQuiet is returned by Allocate when workers are in a transaction.
var ErrNotQuiet = errors.New("rackmodel: allocate needs a quiesced rack")

// errNoPeriod is returned by Allocate when the controller cannot start a period (not running:
// a recovery or a takeover is under way; or a period or a move is).
var errNoPeriod = errors.New("rackmodel: the controller cannot run an allocation period now")

// Allocate runs one allocation period of the primary controller (ctlcore.Core.Reallocate: the
// servers' statistics since their last report and the switch's counters, Algorithm 3 or the
// random strawman, the moves) on a quiesced rack, and runs the rack until its moves are done
// (at most limit). Without Config.Alloc.Slots it does nothing.
func (r *Rack) Allocate(limit time.Duration) (Allocation, error) {
	a := Allocation{Strategy: r.cfg.Alloc.Strategy.String(), Slots: r.cfg.Alloc.Slots}
	if r.cfg.Alloc.Slots == 0 {
		return a, nil
	}
	if r.idleWorkers() != len(r.workers) {
		return a, ErrNotQuiet
	}
	c := r.primary()
	if c == nil {
		return a, errNoPeriod
	}
	before := c.core.Stats()
	for _, l := range c.core.SwitchLockIDs() {
		r.cand[l] = struct{}{}
	}
	ok := c.core.Reallocate()
	c.step(ctlcore.Tick{}) // carries out what the period asked for
	if !ok {
		return a, errNoPeriod
	}
	end := r.k.Now() + int64(limit)
	settled := func() bool {
		if c.core.Stats().Periods == before.Periods {
			return false
		}
		for l := range r.cand {
			if p, _ := c.core.LockPlace(l); p != "server" && p != "switch" {
				return false
			}
		}
		return true
	}
	for !settled() {
		if r.k.Now() >= end {
			return a, fmt.Errorf("rackmodel: the allocation's moves did not finish in %v", limit)
		}
		r.runUntil(min(r.k.Now()+int64(r.p.PollInterval), end), nil)
	}
	st := c.core.Stats()
	a.Used, a.Locks, a.Value, a.Best = st.Slots, st.SwitchLocks, st.Value, st.Best
	a.MovesIn, a.MovesOut = int(st.MovesIn-before.MovesIn), int(st.MovesOut-before.MovesOut)
	a.Reported = len(r.cand)
	r.event("allocation period %d: %d locks in the switch (%d moved in, %d out), %d slots", st.Periods, a.Locks,
		a.MovesIn, a.MovesOut, a.Used)
	return a, nil
}

// Evict asks the primary controller to move lock out of the switch now (ctlcore.Core.Evict).
func (r *Rack) Evict(lock uint32) bool {
	c := r.primary()
	if c == nil {
		return false
	}
	ok := c.core.Evict(lock)
	c.step(ctlcore.Tick{})
	return ok
}

// Event is something that happened to the rack: a failure, a step of the control plane.
type Event struct {
	At   time.Duration `json:"at_ns"`
	What string        `json:"what"`
}

// Events returns what happened so far (failures, and the controllers' decisions but those about
// single locks), in order.
func (r *Rack) Events() []Event { return slices.Clone(r.events) }

// Note adds an event (a step of an experiment, for its timeline).
func (r *Rack) Note(format string, args ...any) { r.event(format, args...) }

func (r *Rack) event(format string, args ...any) {
	e := Event{At: r.Now(), What: fmt.Sprintf(format, args...)}
	r.events = append(r.events, e)
	r.log.Info("rackmodel: "+e.What, "at", e.At)
}

// eventLog turns a controller's log into the rack's events: every decision but those about one
// lock (moves, force-releases) and its allocation periods, which go to Config.Logger at Debug. The message comes first, so
// that an event can be found by the core's words ("switch programmed", "failing over to the
// standby", ...).
type eventLog struct {
	r     *Rack
	ctl   int
	attrs []slog.Attr
}

// quiet are the controller's messages about one lock, and its allocation periods (the rack's own
// event, from Allocate, says what a period did).
var quiet = []string{"moving out of the switch", "moving into the switch", "moved out of the switch",
	"moved into the switch", "lease expired in the switch: force-released", "waiting for the server's queue to drain",
	"server admin failed", "allocation period"}

func (h *eventLog) Enabled(_ context.Context, l slog.Level) bool { return true }

func (h *eventLog) Handle(ctx context.Context, rec slog.Record) error {
	r := h.r
	if rec.Level < slog.LevelInfo || slices.Contains(quiet, rec.Message) {
		if r.log.Enabled(ctx, slog.LevelDebug) {
			r.log.Debug("rackmodel: controller: "+rec.Message, "controller", h.ctl, "at", r.Now())
		}
		return nil
	}
	var b strings.Builder
	b.WriteString(rec.Message)
	fmt.Fprintf(&b, " (controller %d", h.ctl)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, ", %s %v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	rec.Attrs(add)
	b.WriteString(")")
	r.event("%s", b.String())
	if rec.Message == "standby took over" {
		// The standby grants once its takeover grace is over.
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key != "server" {
				return true
			}
			n := int(a.Value.Uint64())
			for _, s := range r.servers {
				if s.standby && s.idx+1 == n {
					r.at(s.core.GraceEnd(), func() { r.event("takeover grace over: the standby of server %d grants", n) })
				}
			}
			return false
		})
	}
	return nil
}

func (h *eventLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &eventLog{r: h.r, ctl: h.ctl, attrs: append(slices.Clone(h.attrs), as...)}
}

func (h *eventLog) WithGroup(string) slog.Handler { return h }

// RestartSwitch stops the switch now (every frame it gets is dropped, its state is lost, the
// controllers' streams break) and brings it back after down with fresh registers, empty tables
// and no pipeline, as a rebooted switch; the primary controller's stream then comes back and
// it takes over the switch (ctlcore: a fresh switch is programmed, its locks recovered).
func (r *Rack) RestartSwitch(down time.Duration) {
	r.sw.up, r.sw.dp = false, nil
	r.event("switch down")
	prim := 0
	if c := r.primary(); c != nil {
		prim = c.i
	}
	for _, c := range r.ctls {
		c.step(ctlcore.Primary{IsPrimary: false})
	}
	r.at(r.k.Now()+int64(down), func() {
		r.sw.up, r.sw.pipeFree = true, 0
		r.event("switch back, no pipeline")
		r.ctls[prim].step(ctlcore.Primary{IsPrimary: true})
	})
}

// Recovering reports whether the primary controller is recovering a restarted switch's locks
// (waiting out the leases) or taking the rack over.
func (r *Rack) Recovering() bool {
	c := r.primary()
	return c == nil || c.core.Phase() != ctlcore.Running
}

// FailServer stops server machine s (0-based) now: every frame it gets is dropped and the state
// of the lock servers it runs (its own, and a standby's) is lost.
func (r *Rack) FailServer(s int) error {
	if s < 0 || s >= len(r.mach) {
		return fmt.Errorf("rackmodel: no server %d", s)
	}
	r.mach[s].up = false
	r.event("server %d down", s+1)
	return nil
}

// HealServer brings server machine s (0-based) back after FailServer as a cut that heals, not a
// restart: its lock servers go on with the state they had (epochs, locks, a controller lease that
// ran out meanwhile).
func (r *Rack) HealServer(s int) error {
	if s < 0 || s >= len(r.mach) {
		return fmt.Errorf("rackmodel: no server %d", s)
	}
	r.mach[s].up = true
	r.event("server %d back", s+1)
	for _, sv := range r.servers {
		if sv.m == r.mach[s] {
			sv.scheduleTick()
		}
	}
	return nil
}

// KillController stops controller 0 now; the backup (Config.Backup) is told it is primary after
// delay, as a P4Runtime switch promotes the next controller when the primary's stream ends.
func (r *Rack) KillController(delay time.Duration) {
	r.ctls[0].alive = false
	r.k.Cancel(r.ctls[0].tick)
	r.event("controller 0 down")
	if len(r.ctls) > 1 {
		r.at(r.k.Now()+int64(delay), func() { r.ctls[1].step(ctlcore.Primary{IsPrimary: true}) })
	}
}
