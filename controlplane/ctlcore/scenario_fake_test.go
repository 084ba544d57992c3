package ctlcore

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// scriptRack is the scenario tests' scripted rack: a switch with its tables and the registers the
// Core reads and writes, lock server processes (the servers and their standbys) with the admin
// answers of lockserver/srvcore, and clients whose acquires and releases the scenario issues one
// by one. It is small on purpose: one exclusive mode, one priority level, one shard per server.
//
// It also checks what the Core must keep (docs/controlplane.md): every grant of a lock, by the
// switch or by a server, is recorded with its token and lease, and a grant made while another
// grant of the same lock is still held (not released, force-released or expired), or a token not
// above every earlier token of the lock, is reported as a VIOLATION line in the output. A
// holder keeps its grant until it releases it or its lease ends, whatever the switch forgets (an
// admin reset, a restart): that is what the drain, the leases waited out and the grace are for.
type scriptRack struct {
	cfg     Config // validated (the first Core's)
	sb      uint   // the token's slot bits
	now     time.Time
	timeout time.Duration // the shell's deadline for an answer

	sw     fakeSwitch
	procs  []*fakeProc       // the servers, then their standbys
	home   map[uint32]uint16 // the server number a client addresses for a lock
	grants map[uint32][]*fakeGrant
	maxTok map[uint32]uint64

	// primary names the controller the switch takes P4Runtime writes and packet-outs from (the
	// last one told it is primary): the others' are refused, as the switch refuses a backup's.
	primary string

	events evHeap
	seq    uint64
	out    func(format string, args ...any) // prints a line of the command's output
	bad    int                              // violations seen
}

type fakeSwitch struct {
	down     bool
	pipeline bool
	rack     *dataplane.Rack
	cookie   uint64
	clones   map[int]bool
	servers  map[uint16]dataplane.Server
	routes   map[netip.Prefix]dataplane.NextHop
	tenants  map[uint16]Tenant
	entries  map[uint32]dataplane.LockEntry
	hits     map[uint32]uint64
	regs     map[uint32]*fakeRegs // by lock index
}

// fakeRegs are the per-index registers of netlock.p4 as the fake keeps them: the grant counter
// (seq: the next grant's token is (seq+1)<<SlotBits | slot), the holder, the waiters (level 0)
// and the switch's count of requests buffered at the server.
type fakeRegs struct {
	seq      uint64
	holder   *fakeGrant
	waiters  []fakeReq
	buffered int
}

type fakeReq struct {
	txn   uint64
	lease time.Duration
}

type fakeGrant struct {
	lock       uint32
	txn, token uint64
	by         string
	at, until  time.Time
	ended      bool
}

func (g *fakeGrant) live(now time.Time) bool { return !g.ended && now.Before(g.until) }

// fakeProc is a lock server process (a server or a standby) on a switch port.
type fakeProc struct {
	name     string
	port     int
	standby  bool // a standby before its takeover: grants nothing
	serving  bool // a standby that took over: its ping answers say wire.PingServing
	cut      bool // nothing of the rack reaches it, nothing comes from it
	drop     int  // the next drop admin answers it sends are lost
	mute     bool // drops queue-empties (the barrier's echo never comes)
	echo     time.Duration
	epoch    uint64
	term     uint64
	last     uint64 // the last token (lockcore.Core.LastToken)
	instance uint32
	// leaseUntil is its controller lease (Config.ServerLease > 0); graceEnd the end of its
	// takeover grace.
	leaseUntil, graceEnd time.Time
	locks                map[uint32]*fakeSrvLock
	counts               map[uint32]*wire.LockStat
	statsAt              time.Time
}

type fakeSrvLock struct {
	// placed: a yield or an adopt set the lock's mode (lockcore's modes), resident says which.
	placed   bool
	resident bool
	holder   *fakeGrant
	waiters  []fakeReq
	q2       []fakeReq
}

func newScriptRack(cfg Config, now time.Time, timeout time.Duration, out func(string, ...any)) *scriptRack {
	f := &scriptRack{cfg: cfg, sb: cfg.sizing().SlotBits(), now: now, timeout: timeout, out: out,
		home: map[uint32]uint16{}, grants: map[uint32][]*fakeGrant{}, maxTok: map[uint32]uint64{}}
	f.sw.clones = map[int]bool{}
	f.wipeSwitch()
	for _, s := range cfg.Servers {
		p := &fakeProc{name: fmt.Sprintf("server %d", s.Num), port: s.Port, instance: uint32(s.Num)}
		if cfg.ServerLease > 0 {
			p.leaseUntil = now.Add(cfg.ServerLease)
		}
		f.addProc(p)
	}
	for _, s := range cfg.Standbys {
		f.addProc(&fakeProc{name: fmt.Sprintf("standby %d", s.Num), port: s.Port, standby: true,
			instance: 100 + uint32(s.Num)})
	}
	return f
}

func (f *scriptRack) addProc(p *fakeProc) {
	p.locks, p.counts, p.statsAt = map[uint32]*fakeSrvLock{}, map[uint32]*wire.LockStat{}, f.now
	p.last = wire.EpochBase(p.epoch)
	f.procs = append(f.procs, p)
}

// wipeSwitch forgets the tables, the registers and the cookie (a pipeline push, a restart).
func (f *scriptRack) wipeSwitch() {
	f.sw.rack, f.sw.cookie = nil, 0
	f.sw.servers, f.sw.routes = map[uint16]dataplane.Server{}, map[netip.Prefix]dataplane.NextHop{}
	f.sw.tenants, f.sw.entries = map[uint16]Tenant{}, map[uint32]dataplane.LockEntry{}
	f.sw.hits, f.sw.regs = map[uint32]uint64{}, map[uint32]*fakeRegs{}
}

func (f *scriptRack) proc(name string) *fakeProc {
	for _, p := range f.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

func (f *scriptRack) procAt(port int) *fakeProc {
	for _, p := range f.procs {
		if p.port == port {
			return p
		}
	}
	return nil
}

func (f *scriptRack) reg(index uint32) *fakeRegs {
	r := f.sw.regs[index]
	if r == nil {
		r = &fakeRegs{}
		f.sw.regs[index] = r
	}
	return r
}

func (p *fakeProc) lock(id uint32) *fakeSrvLock {
	l := p.locks[id]
	if l == nil {
		l = &fakeSrvLock{}
		p.locks[id] = l
	}
	return l
}

func (p *fakeProc) count(id uint32) *wire.LockStat {
	s := p.counts[id]
	if s == nil {
		s = &wire.LockStat{Lock: id}
		p.counts[id] = s
	}
	return s
}

// at runs fn at t (now when t is not later).
func (f *scriptRack) at(t time.Time, fn func()) {
	if !t.After(f.now) {
		fn()
		return
	}
	f.seq++
	heap.Push(&f.events, ev{at: t, seq: f.seq, fn: fn})
}

func (f *scriptRack) ms(t time.Time) string { return t.Sub(t0).String() }

// routed returns the process that traffic to server n's address reaches through the switch, or
// nil.
func (f *scriptRack) routed(n uint16) *fakeProc {
	if f.sw.down || !f.sw.pipeline {
		return nil
	}
	for _, s := range f.cfg.Servers {
		if s.Num != n {
			continue
		}
		hop, ok := f.sw.routes[netip.PrefixFrom(s.Addr.Addr(), 32)]
		if !ok {
			return nil
		}
		if p := f.procAt(hop.Port); p != nil && !p.cut {
			return p
		}
	}
	return nil
}

// serverOf returns the process the switch sends a lock's overflow and queue-empty to
// (lock_servers), or nil.
func (f *scriptRack) serverOf(e dataplane.LockEntry) *fakeProc {
	s, ok := f.sw.servers[e.Server]
	if !ok {
		return nil
	}
	if p := f.procAt(s.Port); p != nil && !p.cut {
		return p
	}
	return nil
}

// grants

func (f *scriptRack) grant(lock uint32, r fakeReq, token uint64, by string) *fakeGrant {
	for _, g := range f.grants[lock] {
		if g.live(f.now) {
			f.bad++
			f.out("  VIOLATION two holders of lock %d: txn %d (%s token %d) while txn %d (%s token %d) holds until %s",
				lock, r.txn, by, token, g.txn, g.by, g.token, f.ms(g.until))
		}
	}
	if token <= f.maxTok[lock] {
		f.bad++
		f.out("  VIOLATION token %d of lock %d (%s) not above %d", token, lock, by, f.maxTok[lock])
	}
	f.maxTok[lock] = max(f.maxTok[lock], token)
	lease := r.lease
	if lease == 0 {
		lease = f.cfg.Rack.DefaultLease
	}
	g := &fakeGrant{lock: lock, txn: r.txn, token: token, by: by, at: f.now, until: f.now.Add(min(lease, f.cfg.Rack.MaxLease))}
	f.grants[lock] = append(f.grants[lock], g)
	f.out("  grant lock %d txn %d token %d by %s until %s", lock, r.txn, token, by, f.ms(g.until))
	return g
}

// switch side

func (f *scriptRack) switchServe(e dataplane.LockEntry) {
	r := f.reg(e.Index)
	if r.holder == nil && len(r.waiters) > 0 && !wire.IsReservedLock(e.Lock) {
		w := r.waiters[0]
		r.waiters = r.waiters[1:]
		r.seq++
		size := uint64(max(e.Regions[0].Size, 1))
		slot := uint64(e.Regions[0].Left) + (r.seq-1)%size
		r.holder = f.grant(e.Lock, w, r.seq<<f.sb|slot, "switch")
	}
	if r.holder == nil && len(r.waiters) == 0 && r.buffered > 0 && !e.Paused {
		f.queueEmpty(e, int(e.Regions[0].Size))
	}
}

// queueEmpty: the switch asks e's server for up to free requests buffered in its q2; a staging
// lock's queue-empty is the controller's barrier, answered with a push-back without a request.
func (f *scriptRack) queueEmpty(e dataplane.LockEntry, free int) {
	p := f.serverOf(e)
	if p == nil || p.mute {
		return
	}
	arrive := func(fn func()) { f.at(f.now.Add(p.echo), fn) }
	if wire.IsReservedLock(e.Lock) {
		arrive(func() {
			if cur, ok := f.sw.entries[e.Lock]; ok {
				r := f.reg(cur.Index)
				r.buffered = max(r.buffered-1, 0)
				f.out("  %s echoes the barrier of staging %d", p.name, e.Lock-wire.ReservedLockBase)
			}
		})
		return
	}
	sl := p.lock(e.Lock)
	if sl.placed && !sl.resident {
		return // a late queue-empty of a lock that left the switch
	}
	n := min(free, len(sl.q2))
	back := slices.Clone(sl.q2[:n])
	sl.q2 = sl.q2[n:]
	for _, rq := range back {
		arrive(func() {
			cur, ok := f.sw.entries[e.Lock]
			if !ok {
				f.out("  push-back of lock %d txn %d from %s: no switch entry, dropped", e.Lock, rq.txn, p.name)
				return
			}
			r := f.reg(cur.Index)
			r.buffered = max(r.buffered-1, 0)
			r.waiters = append(r.waiters, rq)
			f.out("  %s pushes back lock %d txn %d", p.name, e.Lock, rq.txn)
			f.switchServe(cur)
		})
	}
}

// server side

// canGrant says whether p may grant now: not a standby waiting for its takeover, not in a grace,
// and within its controller lease. A server cut off from the rack decides so too (clients on its
// side of the cut may still reach it: acquire direct).
func (f *scriptRack) canGrant(p *fakeProc) bool {
	return !p.standby && !f.now.Before(p.graceEnd) && (f.cfg.ServerLease == 0 || f.now.Before(p.leaseUntil))
}

func (f *scriptRack) serve(p *fakeProc, id uint32) {
	sl := p.lock(id)
	if sl.holder != nil && !sl.holder.live(f.now) {
		if !sl.holder.ended {
			f.out("  lease of lock %d txn %d ended at %s", id, sl.holder.txn, p.name)
			sl.holder.ended = true
		}
		sl.holder = nil
	}
	if sl.holder == nil && len(sl.waiters) > 0 && f.canGrant(p) {
		w := sl.waiters[0]
		sl.waiters = sl.waiters[1:]
		p.last++
		sl.holder = f.grant(id, w, p.last, p.name)
	}
}

// tick expires the servers' leases and grants what their holds allowed meanwhile.
func (f *scriptRack) tick() {
	for _, p := range f.procs {
		ids := make([]uint32, 0, len(p.locks))
		for id := range p.locks {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			f.serve(p, id)
		}
	}
}

// next returns the fake's next event, lease end or end of a hold with waiters (zero: none).
func (f *scriptRack) next() time.Time {
	var n time.Time
	take := func(t time.Time) {
		if t.After(f.now) && (n.IsZero() || t.Before(n)) {
			n = t
		}
	}
	if len(f.events) > 0 {
		take(f.events[0].at)
	}
	for _, p := range f.procs {
		for _, sl := range p.locks {
			if sl.holder != nil && !sl.holder.ended {
				take(sl.holder.until)
			}
			if len(sl.waiters) > 0 {
				take(p.graceEnd)
			}
		}
	}
	return n
}

// runDue runs the events due now; it reports whether there was one.
func (f *scriptRack) runDue() bool {
	ran := false
	for len(f.events) > 0 && !f.events[0].at.After(f.now) {
		e := heap.Pop(&f.events).(ev)
		e.fn()
		ran = true
	}
	return ran
}

// clients

// acquire is a client's acquire of lock id: through the switch, or (direct) straight to the
// process of its server, past any cut.
func (f *scriptRack) acquire(id uint32, r fakeReq, direct bool) {
	if e, ok := f.sw.entries[id]; ok && !f.sw.down && !direct {
		f.sw.hits[id]++
		reg := f.reg(e.Index)
		switch {
		case e.Paused:
			f.overflow(e, r, "paused")
		case reg.holder == nil && len(reg.waiters) == 0:
			reg.waiters = append(reg.waiters, r)
			f.switchServe(e)
		case 1+len(reg.waiters) < int(e.Regions[0].Size):
			reg.waiters = append(reg.waiters, r)
			f.out("  lock %d txn %d waits in the switch", id, r.txn)
		default:
			reg.buffered++
			f.overflow(e, r, "the switch queue is full")
		}
		return
	}
	n, ok := f.home[id]
	if !ok {
		f.out("  lock %d has no server (name it with server=)", id)
		return
	}
	p := f.routed(n)
	if direct {
		p = f.proc(fmt.Sprintf("server %d", n))
	}
	if p == nil {
		f.out("  acquire of lock %d txn %d lost: server %d unreachable", id, r.txn, n)
		return
	}
	sl := p.lock(id)
	c := p.count(id)
	c.Requests++
	if sl.resident {
		f.out("  acquire of lock %d txn %d dropped by %s: switch-resident", id, r.txn, p.name)
		return
	}
	sl.waiters = append(sl.waiters, r)
	c.Depth = max(c.Depth, uint16(len(sl.waiters)+len(sl.q2)+btoi(sl.holder != nil)))
	f.serve(p, id)
	if sl.holder == nil || sl.holder.txn != r.txn {
		f.out("  lock %d txn %d waits at %s", id, r.txn, p.name)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (f *scriptRack) overflow(e dataplane.LockEntry, r fakeReq, why string) {
	p := f.serverOf(e)
	if p == nil {
		f.out("  overflow of lock %d txn %d lost: its server is unreachable", e.Lock, r.txn)
		return
	}
	sl := p.lock(e.Lock)
	p.count(e.Lock).Overflows++
	if sl.placed && !sl.resident {
		// Adopted back already: an overflow is an acquire (lockcore.Core.Step).
		sl.waiters = append(sl.waiters, r)
		f.out("  lock %d txn %d overflows to %s (%s), an acquire there", e.Lock, r.txn, p.name, why)
		f.serve(p, e.Lock)
		return
	}
	sl.q2 = append(sl.q2, r)
	f.out("  lock %d txn %d overflows to %s's q2 (%s)", e.Lock, r.txn, p.name, why)
}

// release is a client's release of lock id (direct: straight to its server's process).
func (f *scriptRack) release(id uint32, txn uint64, direct bool) {
	var g *fakeGrant
	for _, x := range f.grants[id] {
		if x.txn == txn && !x.ended {
			g = x
		}
	}
	if g == nil {
		f.out("  lock %d txn %d holds nothing", id, txn)
		return
	}
	if !g.live(f.now) {
		f.out("  lock %d txn %d: its lease ended at %s", id, txn, f.ms(g.until))
		g.ended = true
		return
	}
	g.ended = true
	if g.by == "switch" {
		e, ok := f.sw.entries[id]
		if ok && !f.sw.down && f.reg(e.Index).holder == g {
			f.sw.hits[id]++
			f.reg(e.Index).holder = nil
			f.out("  lock %d txn %d released at the switch", id, txn)
			f.switchServe(e)
			return
		}
		f.out("  lock %d txn %d released; the switch no longer knew the grant", id, txn)
		return
	}
	for _, p := range f.procs {
		if p.name == g.by {
			if p.cut && !direct {
				f.out("  release of lock %d txn %d lost: %s is cut off", id, txn, p.name)
				g.ended = false
				return
			}
			sl := p.lock(id)
			p.count(id).Requests++
			if sl.holder == g {
				sl.holder = nil
			}
			f.out("  lock %d txn %d released at %s", id, txn, p.name)
			f.serve(p, id)
		}
	}
}

// answering effects

var (
	errUnavailable = errors.New("switch unavailable")
	errNotPrimary  = errors.New("permission denied: not the primary controller")
)

// answer carries out e against the fake and returns its Result, how long after now the shell
// would deliver it (the timeout, for a request nobody answers) and a description for the output.
func (f *scriptRack) answer(from string, e Effect) (Result, time.Duration, string) {
	if _, ok := e.(ServerAdmin); !ok && from != f.primary {
		return Result{ID: e.EffectID(), Err: errNotPrimary}, 0, "error: " + errNotPrimary.Error()
	}
	switch e := e.(type) {
	case Write:
		err := f.write(e)
		if err != nil {
			return Result{ID: e.ID, Err: err}, 0, "error: " + err.Error()
		}
		return Result{ID: e.ID}, 0, "ok"
	case PushPipeline:
		if f.sw.down {
			return Result{ID: e.ID, Err: errUnavailable}, 0, "error: " + errUnavailable.Error()
		}
		f.sw.pipeline = true
		f.wipeSwitch()
		return Result{ID: e.ID}, 0, "ok"
	case GetPipeline:
		if f.sw.down {
			return Result{ID: e.ID, Err: errUnavailable}, 0, "error: " + errUnavailable.Error()
		}
		if f.sw.pipeline {
			return Result{ID: e.ID, HasPipeline: true}, 0, "pipeline installed"
		}
		return Result{ID: e.ID}, 0, "no pipeline"
	case ReadLocks:
		if f.sw.down || !f.sw.pipeline {
			return Result{ID: e.ID, Err: errUnavailable}, 0, "error: " + errUnavailable.Error()
		}
		res := Result{ID: e.ID, Hits: map[uint32]uint64{}}
		var desc []string
		for _, id := range sortedKeys(f.sw.entries) {
			le := f.sw.entries[id]
			res.Locks = append(res.Locks, le)
			res.Hits[id] = f.sw.hits[id]
			desc = append(desc, fmt.Sprintf("[%s hits %d]", Entity{Lock: &le}, f.sw.hits[id]))
		}
		if len(desc) == 0 {
			return res, 0, "no entries"
		}
		return res, 0, strings.Join(desc, " ")
	case SwitchAdmin:
		if f.sw.down || !f.sw.pipeline || f.sw.rack == nil {
			return Result{ID: e.ID, Err: ErrTimeout}, f.timeout, "timeout"
		}
		rep, desc := f.switchAdmin(e.Req)
		return Result{ID: e.ID, Admin: rep}, 0, desc
	case ServerAdmin:
		p := f.routed(e.Server)
		if p == nil {
			return Result{ID: e.ID, Err: ErrTimeout}, f.timeout, "timeout"
		}
		rep, body, desc := f.serverAdmin(p, e.Msg)
		if p.drop > 0 {
			p.drop--
			return Result{ID: e.ID, Err: ErrTimeout}, f.timeout, "answer lost: " + desc
		}
		return Result{ID: e.ID, Server: rep, Body: body}, 0, desc
	}
	return Result{ID: e.EffectID(), Err: fmt.Errorf("unknown effect %T", e)}, 0, "unknown effect"
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// write applies a Write: an atomic one all or nothing, another update by update (the first
// refusal is the error, as the shell reports a batch).
func (f *scriptRack) write(w Write) error {
	if f.sw.down {
		return errUnavailable
	}
	if !f.sw.pipeline {
		return errors.New("no pipeline")
	}
	if w.Atomic {
		for _, u := range w.Updates {
			if err := f.update(u, true); err != nil {
				return err
			}
		}
	}
	var first error
	for _, u := range w.Updates {
		if err := f.update(u, false); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// update checks (dry) or applies u.
func (f *scriptRack) update(u Update, dry bool) error {
	e := u.Entity
	check := func(exists bool) error {
		switch {
		case u.Op == Insert && exists:
			return fmt.Errorf("%w: %s", ErrAlreadyExists, e)
		case u.Op != Insert && !exists:
			return fmt.Errorf("%w: %s", ErrNotFound, e)
		}
		return nil
	}
	var err error
	switch {
	case e.Rack != nil:
		if !dry {
			r := *e.Rack
			f.sw.rack = &r
		}
	case e.Server != nil:
		_, ok := f.sw.servers[e.ServerNum]
		if err = check(ok); err == nil && !dry {
			if u.Op == Delete {
				delete(f.sw.servers, e.ServerNum)
			} else {
				f.sw.servers[e.ServerNum] = *e.Server
			}
		}
	case e.Route != nil:
		_, ok := f.sw.routes[e.Prefix]
		if err = check(ok); err == nil && !dry {
			if u.Op == Delete {
				delete(f.sw.routes, e.Prefix)
			} else {
				f.sw.routes[e.Prefix] = *e.Route
			}
		}
	case e.Lock != nil:
		_, ok := f.sw.entries[e.Lock.Lock]
		if err = check(ok); err == nil && !dry {
			switch u.Op {
			case Delete:
				delete(f.sw.entries, e.Lock.Lock)
				delete(f.sw.hits, e.Lock.Lock)
			case Insert:
				f.sw.entries[e.Lock.Lock] = *e.Lock
				f.sw.hits[e.Lock.Lock] = 0
			default:
				f.sw.entries[e.Lock.Lock] = *e.Lock
			}
		}
	case e.Tenant != nil:
		_, ok := f.sw.tenants[e.Tenant.ID]
		if err = check(ok); err == nil && !dry {
			if u.Op == Delete {
				delete(f.sw.tenants, e.Tenant.ID)
			} else {
				f.sw.tenants[e.Tenant.ID] = *e.Tenant
			}
		}
	default:
		ok := f.sw.clones[e.ClonePort]
		if err = check(ok); err == nil && !dry {
			f.sw.clones[e.ClonePort] = u.Op != Delete
		}
	}
	return err
}

func (f *scriptRack) micros() uint32 { return uint32(f.now.Sub(t0) / time.Microsecond) }

func (f *scriptRack) switchAdmin(q dataplane.AdminRequest) (dataplane.AdminReply, string) {
	rep := dataplane.AdminReply{Op: q.Op, Result: dataplane.AdminOK, Lock: q.Lock, Now: f.micros()}
	switch q.Op {
	case wire.AdminSwitchGetCookie:
		rep.Value = f.sw.cookie
		return rep, fmt.Sprintf("cookie %#x", rep.Value)
	case wire.AdminSwitchSetCookie:
		f.sw.cookie = q.Value
		rep.Value = q.Value
		return rep, "ok"
	}
	e, ok := f.sw.entries[q.Lock]
	if !ok {
		rep.Result = dataplane.AdminNoLock
		return rep, "no such lock"
	}
	f.sw.hits[q.Lock]++
	r := f.reg(e.Index)
	sb := f.sb
	switch q.Op {
	case wire.AdminSwitchProbe:
		rep.Value = r.seq << sb
		rep.Holders = uint16(btoi(r.holder != nil))
		rep.Waiting[0] = uint16(len(r.waiters))
		rep.Used[0] = uint16(btoi(r.holder != nil) + len(r.waiters))
		rep.Buffered = uint16(r.buffered)
		desc := fmt.Sprintf("counter %d holders %d waiting %d used %d buffered %d", rep.Value, rep.Holders,
			rep.Waiting[0], rep.Used[0], rep.Buffered)
		if q.Level == 0 && q.Offset == 0 && r.holder != nil {
			g := r.holder
			rep.Live, rep.Txn, rep.Token = true, g.txn, g.token
			rep.Lease = uint32(g.until.Sub(g.at) / time.Microsecond)
			rep.GrantTime = uint32(g.at.Sub(t0) / time.Microsecond)
			desc += fmt.Sprintf(" slot txn %d token %d granted %s lease %v", g.txn, g.token, f.ms(g.at), g.until.Sub(g.at))
		} else if q.Level == 0 && q.Offset > 0 && int(q.Offset) <= len(r.waiters) {
			rep.Live, rep.Txn = true, r.waiters[q.Offset-1].txn
			desc += fmt.Sprintf(" slot txn %d waiting", rep.Txn)
		}
		return rep, desc
	case wire.AdminSwitchReset:
		forgot := btoi(r.holder != nil) + len(r.waiters)
		r.holder, r.waiters, r.buffered = nil, nil, 0
		rep.Value = r.seq << sb
		if forgot > 0 {
			return rep, fmt.Sprintf("counter %d (forgot %d requests)", rep.Value, forgot)
		}
		return rep, fmt.Sprintf("counter %d", rep.Value)
	case wire.AdminSwitchForceRelease:
		if r.holder == nil || r.holder.txn != q.Txn || r.holder.token != q.Token {
			rep.Result = dataplane.AdminNotHeld
			return rep, "not held"
		}
		r.holder.ended = true
		r.holder = nil
		f.out("  the switch force-releases lock %d txn %d", q.Lock, q.Txn)
		f.switchServe(e)
		return rep, "ok"
	case wire.AdminSwitchTokenBase:
		r.seq = max(r.seq, q.Value>>sb)
		rep.Value = r.seq << sb
		return rep, fmt.Sprintf("counter %d", rep.Value)
	case wire.AdminSwitchSetBuffered:
		r.buffered = int(q.Value)
		rep.Value = q.Value
		if r.holder == nil && len(r.waiters) == 0 && r.buffered > 0 && !e.Paused {
			f.queueEmpty(e, int(e.Regions[0].Size))
		}
		return rep, "ok"
	}
	rep.Result = dataplane.AdminBadRequest
	return rep, "bad request"
}

func isPlacementOp(s wire.Status) bool { return s >= wire.AdminYield && s <= wire.AdminResidents }

func (f *scriptRack) serverAdmin(p *fakeProc, m wire.Fields) (wire.Fields, []byte, string) {
	rep := wire.Fields{Op: wire.OpAdmin, Status: m.Status, Flags: wire.FlagReply, Lock: m.Lock, Txn: m.Txn,
		Timestamp: m.Timestamp}
	if isPlacementOp(m.Status) {
		if m.Timestamp < p.term {
			rep.Op, rep.Status = wire.OpReject, wire.StatusNotOwner
			return rep, nil, fmt.Sprintf("%s rejects: not-owner (term %d < %d)", p.name, m.Timestamp, p.term)
		}
		p.term = m.Timestamp
	}
	status := func(sl *fakeSrvLock) string {
		rep.Token = p.last
		rep.LeaseMicros = uint32(btoi(sl.holder != nil) + len(sl.waiters))
		rep.Slots = uint16(len(sl.q2))
		rep.Priority = uint8(btoi(sl.resident))
		s := fmt.Sprintf("last token %d own %d q2 %d", p.last, rep.LeaseMicros, rep.Slots)
		if sl.resident {
			s += " resident"
		}
		return s
	}
	switch m.Status {
	case wire.AdminPing:
		p.term = max(p.term, m.Timestamp)
		if f.cfg.ServerLease > 0 {
			p.leaseUntil = f.now.Add(f.cfg.ServerLease)
		}
		rep.Token, rep.Timestamp, rep.LeaseMicros, rep.Slots = p.epoch, p.term, p.instance, 1
		desc := fmt.Sprintf("epoch %d term %d instance %d", p.epoch, p.term, p.instance)
		if p.serving {
			rep.Priority = wire.PingServing
			desc += " serving"
		}
		return rep, nil, desc
	case wire.AdminTokenFloor:
		p.last = max(p.last, m.Token)
		rep.Token = p.last
		return rep, nil, fmt.Sprintf("floor %d", p.last)
	case wire.AdminYield:
		sl := p.lock(m.Lock)
		sl.placed, sl.resident = true, true
		return rep, nil, status(sl)
	case wire.AdminAdopt:
		sl := p.lock(m.Lock)
		p.last = max(p.last, m.Token)
		if !sl.placed || sl.resident {
			sl.placed, sl.resident = true, false
			sl.waiters = append(sl.waiters, sl.q2...)
			sl.q2 = nil
		}
		f.serve(p, m.Lock)
		return rep, nil, status(sl)
	case wire.AdminStats:
		var recs []wire.LockStat
		for _, id := range sortedKeys(p.counts) {
			recs = append(recs, *p.counts[id])
		}
		slices.SortStableFunc(recs, func(a, b wire.LockStat) int {
			return cmp.Compare(uint64(b.Requests)+uint64(b.Overflows), uint64(a.Requests)+uint64(a.Overflows))
		})
		recs = recs[:min(len(recs), int(m.Slots))]
		iv := f.now.Sub(p.statsAt)
		p.counts, p.statsAt = map[uint32]*wire.LockStat{}, f.now
		rep.Slots, rep.Token = uint16(len(recs)), uint64(iv)
		var body []byte
		desc := fmt.Sprintf("%d locks over %v", len(recs), iv)
		for _, s := range recs {
			body = wire.AppendLockStat(body, s)
			desc += fmt.Sprintf(" [lock %d requests %d overflows %d depth %d declared %d]", s.Lock, s.Requests,
				s.Overflows, s.Depth, s.Declared)
		}
		return rep, body, desc
	case wire.AdminTakeover:
		if p.standby || m.Token >= p.epoch {
			p.epoch = max(p.epoch+1, m.Token+1)
			p.last = max(p.last, wire.EpochBase(p.epoch))
			p.serving = p.serving || p.standby
			p.standby = false
			p.graceEnd = f.now.Add(time.Duration(m.LeaseMicros) * time.Microsecond)
			f.out("  %s takes over with epoch %d, grants nothing until %s", p.name, p.epoch, f.ms(p.graceEnd))
		}
		rep.Token = p.epoch
		return rep, nil, fmt.Sprintf("epoch %d", p.epoch)
	case wire.AdminResidents:
		var ids []uint32
		for _, id := range sortedKeys(p.locks) {
			if p.locks[id].resident && id >= m.Lock && len(ids) < int(m.Slots) {
				ids = append(ids, id)
			}
		}
		var body []byte
		for _, id := range ids {
			body = append(body, byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
		}
		rep.Slots = uint16(len(ids))
		return rep, body, fmt.Sprintf("resident %v", ids)
	}
	rep.Op, rep.Status = wire.OpReject, wire.StatusBadRequest
	return rep, nil, "bad request"
}

// describe prints the fake's state: the switch's entries and registers, the servers, the live
// grants.
func (f *scriptRack) describe(b *strings.Builder) {
	sw := &f.sw
	switch {
	case sw.down:
		b.WriteString("switch: down\n")
	case !sw.pipeline:
		b.WriteString("switch: no pipeline\n")
	default:
		fmt.Fprintf(b, "switch: cookie %#x, %d entries\n", sw.cookie, len(sw.entries))
	}
	for _, id := range sortedKeys(sw.entries) {
		e := sw.entries[id]
		r := f.reg(e.Index)
		fmt.Fprintf(b, "  %s hits %d: counter %d", Entity{Lock: &e}, sw.hits[id], r.seq<<f.sb)
		if r.holder != nil {
			fmt.Fprintf(b, " holder txn %d", r.holder.txn)
		}
		if len(r.waiters) > 0 {
			fmt.Fprintf(b, " waiters %d", len(r.waiters))
		}
		if r.buffered > 0 {
			fmt.Fprintf(b, " buffered %d", r.buffered)
		}
		b.WriteString("\n")
	}
	for _, p := range f.procs {
		fmt.Fprintf(b, "%s port %d: epoch %d term %d last token %d", p.name, p.port, p.epoch, p.term, p.last)
		switch {
		case p.standby:
			b.WriteString(" standby")
		case p.cut:
			b.WriteString(" cut off")
		}
		if p.graceEnd.After(f.now) {
			fmt.Fprintf(b, " grace until %s", f.ms(p.graceEnd))
		}
		if f.cfg.ServerLease > 0 && !p.standby && !f.now.Before(p.leaseUntil) {
			b.WriteString(" controller lease ran out")
		}
		for _, id := range sortedKeys(p.locks) {
			sl := p.locks[id]
			var parts []string
			if sl.resident {
				parts = append(parts, "resident")
			}
			if sl.holder != nil && !sl.holder.ended {
				parts = append(parts, fmt.Sprintf("holder txn %d", sl.holder.txn))
			}
			if len(sl.waiters) > 0 {
				parts = append(parts, fmt.Sprintf("waiters %d", len(sl.waiters)))
			}
			if len(sl.q2) > 0 {
				parts = append(parts, fmt.Sprintf("q2 %d", len(sl.q2)))
			}
			if len(parts) > 0 {
				fmt.Fprintf(b, "; lock %d %s", id, strings.Join(parts, " "))
			}
		}
		b.WriteString("\n")
	}
	for _, id := range sortedKeys(f.grants) {
		for _, g := range f.grants[id] {
			if g.live(f.now) {
				fmt.Fprintf(b, "held: lock %d txn %d token %d by %s until %s\n", id, g.txn, g.token, g.by, f.ms(g.until))
			}
		}
	}
	if f.bad > 0 {
		fmt.Fprintf(b, "violations: %d\n", f.bad)
	}
}
