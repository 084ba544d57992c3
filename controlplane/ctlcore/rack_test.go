package ctlcore

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/lockserver/srvcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// fakeRack is a shell for Core tests in virtual time over a rack of real cores
// (rackcores_test.go): the switch is p4/netlock.p4 on the P4 engine, the servers and standbys are
// srvcore cores. It answers every Effect after a random delay of at most maxDelay each way: the
// switch's (writes, pipeline, lock table, admin packets) are carried out when emitted, a server
// admin request when it arrives (through the switch's route table, from the controllers' port),
// its answer after the way back. What the Core's failure handling must respect (the controller
// lease a ping renews on arrival, a standby's takeover grace) is the servers' own; the rack only
// scripts the failures (a cut server, a switch that answers nothing, lost ping answers) and
// observes the servers (heldFrom, tookOverAt, grace).
type fakeRack struct {
	t        *testing.T
	rng      *rand.Rand
	core     *Core
	cfg      Config
	now      time.Time
	q        evHeap
	seq      uint64
	maxDelay time.Duration
	timeout  time.Duration // the shell's deadline for an answer (ErrTimeout)

	sw coreSwitch
	// switchDown: the switch processes and answers nothing (its P4Runtime stream too).
	switchDown bool
	// replyLoss is the probability that a ping's answer from the server on port 1 is lost (the
	// ping itself arrived).
	replyLoss float64
	// busy[lock] is how many more yields of lock find its server's queue not drained: a client
	// holds the lock at its server from the first yield and releases it after the busy-th.
	busy    map[uint32]int
	holders map[uint32]*fakeHolder
	// onEffect, if set, sees every effect when the Core emits it.
	onEffect func(Effect)
	srv      map[int]*fakeServer // by port
	// admin collects the answer of the server admin request being carried out (its txn).
	admin struct {
		txn  uint64
		got  bool
		msg  wire.Fields
		body []byte
	}
}

// fakeServer is a lock server process (a server or a standby) on a switch port.
type fakeServer struct {
	port    int
	standby bool // started as a standby
	cut     bool // cut off: nothing reaches it or comes from it (it may still grant)
	core    *srvcore.Core
	// heldFrom is when the core began holding every grant (its controller lease ran out), zero
	// while it may grant.
	heldFrom time.Time
	// A standby: when the takeover reached it and the grace its core holds grants for.
	tookOverAt time.Time
	grace      time.Duration
}

// fakeHolder is a client holding a busy lock at its server.
type fakeHolder struct {
	txn, token uint64
	srv        *fakeServer
}

type ev struct {
	at  time.Time
	seq uint64
	fn  func()
}

type evHeap []ev

func (h evHeap) Len() int { return len(h) }
func (h evHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h evHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *evHeap) Push(x any)   { *h = append(*h, x.(ev)) }
func (h *evHeap) Pop() any {
	o := *h
	e := o[len(o)-1]
	*h = o[:len(o)-1]
	return e
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testConfig is a rack of two servers (ports 1, 2) with standbys (ports 11, 12), its switch
// program sized to 16 lock indices and 32 slots.
func testConfig() Config {
	sw := netip.MustParseAddr("10.0.0.254")
	cfg := Config{
		Sizing: dataplane.Sizing{Locks: 16, PartBits: 3},
		Rack: dataplane.Rack{Key: 0x5eed, SwitchIP: sw, SwitchMAC: dataplane.MAC{2, 0, 0, 0, 0, 1},
			DefaultLease: 100 * time.Millisecond, MaxLease: 200 * time.Millisecond},
		Cookie:      7,
		PingPeriod:  20 * time.Millisecond,
		DeadAfter:   3,
		ServerLease: 60 * time.Millisecond,
		LeaseMargin: 5 * time.Millisecond,
		SweepPeriod: 10 * time.Millisecond,
		AllocPeriod: time.Hour,
	}
	for n := uint16(1); n <= 2; n++ {
		a := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), wire.Port)
		cfg.Servers = append(cfg.Servers, Server{Num: n, Addr: a, Port: int(n), MAC: dataplane.MAC{2, 0, 0, 0, 1, byte(n)}})
		cfg.Standbys = append(cfg.Standbys, Standby{Num: n, Port: 10 + int(n), MAC: dataplane.MAC{2, 0, 0, 0, 2, byte(n)}})
	}
	return cfg
}

func newFakeRack(t *testing.T, cfg Config, seed uint64) *fakeRack {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeRack{t: t, rng: rand.New(rand.NewPCG(seed, 1)), core: c, cfg: c.cfg, now: t0, maxDelay: time.Millisecond,
		timeout: 50 * time.Millisecond, srv: map[int]*fakeServer{}, busy: map[uint32]int{},
		holders: map[uint32]*fakeHolder{}}
	r.sw = coreSwitch{cfg: &r.cfg, now: func() time.Time { return r.now }}
	add := func(port int, standby bool) {
		// The instance is the port: the ping answers say which process answered.
		core, err := newServerCore(&r.cfg, uint32(port), standby, 0, 0, r.mono())
		if err != nil {
			t.Fatal(err)
		}
		r.srv[port] = &fakeServer{port: port, standby: standby, core: core}
	}
	for _, s := range cfg.Servers {
		add(s.Port, false)
	}
	for _, s := range cfg.Standbys {
		add(s.Port, true)
	}
	r.step(Primary{IsPrimary: true})
	return r
}

// serverAt returns the server process on port p.
func (r *fakeRack) serverAt(p int) *fakeServer { return r.srv[p] }

// mono is the rack's monotonic clock (ns since t0), the servers' now.
func (r *fakeRack) mono() int64 { return r.now.Sub(t0).Nanoseconds() }

func (r *fakeRack) at(at time.Time, fn func()) {
	r.seq++
	heap.Push(&r.q, ev{at: at, seq: r.seq, fn: fn})
}

func (r *fakeRack) delay() time.Duration { return time.Duration(r.rng.Int64N(int64(r.maxDelay) + 1)) }

func (r *fakeRack) step(in Input) {
	for _, e := range r.core.Step(r.now, in) {
		r.handle(e)
	}
}

// answer delivers res after d.
func (r *fakeRack) answer(d time.Duration, res Result) {
	r.at(r.now.Add(d), func() { r.step(res) })
}

func (r *fakeRack) timeoutOf(id uint64) {
	r.answer(r.timeout, Result{ID: id, Err: ErrTimeout})
}

func (r *fakeRack) handle(e Effect) {
	if r.onEffect != nil {
		r.onEffect(e)
	}
	rtt := r.delay() + r.delay()
	r.sw.down = r.switchDown
	switch e := e.(type) {
	case Write:
		r.answer(rtt, Result{ID: e.ID, Err: r.sw.write(e)})
	case PushPipeline:
		if r.switchDown {
			r.answer(rtt, Result{ID: e.ID, Err: errUnavailable})
			return
		}
		if err := r.sw.load(); err != nil {
			r.t.Fatal(err)
		}
		r.answer(rtt, Result{ID: e.ID})
	case GetPipeline:
		if r.switchDown {
			r.answer(rtt, Result{ID: e.ID, Err: errUnavailable})
			return
		}
		r.answer(rtt, Result{ID: e.ID, HasPipeline: r.sw.dp != nil})
	case ReadLocks:
		r.answer(rtt, r.sw.readLocks(e.ID))
	case SwitchAdmin:
		rep, outs, ok, err := r.sw.admin(e.Req)
		if err != nil {
			r.t.Fatal(err)
		}
		r.switchOut(outs)
		if !ok {
			r.timeoutOf(e.ID)
			return
		}
		r.answer(rtt, Result{ID: e.ID, Admin: rep})
	case ServerAdmin:
		sent := r.now
		there := r.now.Add(r.delay())
		back := there.Add(r.delay())
		lossy := e.Msg.Status == wire.AdminPing && r.rng.Float64() < r.replyLoss
		timeout := func() { r.at(sent.Add(r.timeout), func() { r.step(Result{ID: e.ID, Err: ErrTimeout}) }) }
		r.at(there, func() {
			s, rep, body, ok := r.serverAdmin(e.Server, e.Msg)
			if !ok || (lossy && s.port == 1) {
				timeout()
				return
			}
			r.at(back, func() {
				if s.cut {
					timeout() // cut off after it answered: the answer is lost on the way
					return
				}
				r.step(Result{ID: e.ID, Server: rep, Body: body})
			})
		})
	default:
		r.t.Fatalf("unexpected effect %v", e)
	}
}

// serverAdmin sends a controller's admin request to server n's address through the switch and
// returns the process that answered and its answer; ok is false when none comes.
func (r *fakeRack) serverAdmin(n uint16, m wire.Fields) (s *fakeServer, rep wire.Fields, body []byte, ok bool) {
	r.sw.down = r.switchDown
	var dst netip.AddrPort
	for _, sv := range r.cfg.Servers {
		if sv.Num == n {
			dst = sv.Addr
		}
	}
	if !r.sw.running() || !dst.IsValid() {
		return nil, rep, nil, false
	}
	outs, err := r.sw.process(rackCtlPort, rackFrame(&r.cfg, rackCtl, dst, &m))
	if err != nil {
		r.t.Fatal(err)
	}
	r.admin.txn, r.admin.got = m.Txn, false
	defer func() { r.admin.txn = 0 }()
	for _, o := range outs {
		p := r.srv[o.Port]
		if p == nil || p.cut {
			continue
		}
		if m.Status == wire.AdminYield {
			r.holdBusy(p, m.Lock)
		}
		var fr udpframe.Frame
		var mm wire.Fields
		if !parseFrame(o.Data, &fr, &mm) {
			continue
		}
		before := p.core.GraceEnd()
		r.serve(p, fr.Payload, fr.Src)
		if !r.admin.got {
			continue
		}
		if m.Status == wire.AdminTakeover && p.standby && p.tookOverAt.IsZero() && p.core.GraceEnd() != before {
			p.tookOverAt = r.now
			p.grace = time.Duration(p.core.GraceEnd() - r.mono())
		}
		if m.Status == wire.AdminYield {
			r.releaseBusy(m.Lock)
		}
		return p, r.admin.msg, r.admin.body, true
	}
	return nil, rep, nil, false
}

// holdBusy makes a client hold a busy lock at its server p before its first yield arrives.
func (r *fakeRack) holdBusy(p *fakeServer, lock uint32) {
	if r.busy[lock] == 0 || r.holders[lock] != nil {
		return
	}
	h := &fakeHolder{txn: uint64(lock) + 1000, srv: p}
	r.holders[lock] = h
	addr := r.addrOf(p)
	m := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: h.txn, Timestamp: uint64(r.mono())}
	r.serve(p, rackFrame(&r.cfg, rackClient, addr, &m)[udpframe.HeaderLen:], rackClient)
	if h.token == 0 {
		r.t.Fatalf("busy lock %d: its client was not granted at port %d", lock, p.port)
	}
}

// releaseBusy counts a yield of a busy lock; after the last one its client releases.
func (r *fakeRack) releaseBusy(lock uint32) {
	h := r.holders[lock]
	if h == nil || r.busy[lock] == 0 {
		return
	}
	if r.busy[lock]--; r.busy[lock] > 0 {
		return
	}
	m := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: lock, Txn: h.txn, Token: h.token,
		Timestamp: uint64(r.mono())}
	r.serve(h.srv, rackFrame(&r.cfg, rackClient, r.addrOf(h.srv), &m)[udpframe.HeaderLen:], rackClient)
}

// serve hands a datagram from from to s's core and carries out what it asks: answers to the
// controller are collected, grants to the busy locks' clients remembered, what goes to the
// switch sent through it; the epoch to persist is acknowledged at once.
func (r *fakeRack) serve(s *fakeServer, payload []byte, from netip.AddrPort) {
	var out srvcore.Out
	s.core.Handle(r.mono(), payload, from, &out)
	r.apply(s, &out)
}

func (r *fakeRack) apply(s *fakeServer, out *srvcore.Out) {
	carryOut(s.core, r.mono(), out, func(to netip.AddrPort, m wire.Fields, body []byte) { r.send(s, to, m, body) })
	r.watchHold(s)
}

func (r *fakeRack) send(s *fakeServer, to netip.AddrPort, m wire.Fields, body []byte) {
	switch {
	case to == rackCtl:
		if r.admin.txn == m.Txn && !r.admin.got {
			r.admin.got, r.admin.msg, r.admin.body = true, m, body
		}
	case m.Op == wire.OpGrant:
		if h := r.holders[m.Lock]; h != nil && h.txn == m.Txn {
			h.token = m.Token
		}
	case m.Op == wire.OpPushBack && !s.cut:
		r.sw.down = r.switchDown
		if !r.sw.running() {
			return
		}
		outs, err := r.sw.process(s.port, rackFrame(&r.cfg, r.addrOf(s), to, &m))
		if err != nil {
			r.t.Fatal(err)
		}
		r.switchOut(outs)
	}
}

// addrOf returns the address of s's server (a standby's: the server it stands by for).
func (r *fakeRack) addrOf(s *fakeServer) netip.AddrPort {
	n := uint16(0)
	for _, sv := range r.cfg.Servers {
		if sv.Port == s.port {
			n = sv.Num
		}
	}
	for _, sb := range r.cfg.Standbys {
		if sb.Port == s.port {
			n = sb.Num
		}
	}
	for _, sv := range r.cfg.Servers {
		if sv.Num == n {
			return sv.Addr
		}
	}
	return netip.AddrPort{}
}

// switchOut delivers what the switch sent out to the server processes (queue-empties,
// overflows); the rest (answers to clients) goes nowhere.
func (r *fakeRack) switchOut(outs []engine.Output) {
	for _, o := range outs {
		s := r.srv[o.Port]
		if s == nil || s.cut {
			continue
		}
		var fr udpframe.Frame
		var m wire.Fields
		if parseFrame(o.Data, &fr, &m) && (m.Op == wire.OpQueueEmpty || m.Op == wire.OpOverflow) {
			r.serve(s, fr.Payload, fr.Src)
		}
	}
}

// watchHold notes when s's core began holding every grant.
func (r *fakeRack) watchHold(s *fakeServer) {
	switch held := s.core.Holding(); {
	case held && s.heldFrom.IsZero():
		s.heldFrom = r.now
	case !held:
		s.heldFrom = time.Time{}
	}
}

// tickServers runs the servers' cores whose deadline has come; it reports whether one ran.
func (r *fakeRack) tickServers() bool {
	ran := false
	for _, port := range sortedKeys(r.srv) {
		s := r.srv[port]
		if d := s.core.NextDeadline(); d != math.MaxInt64 && d <= r.mono() {
			var out srvcore.Out
			s.core.Tick(r.mono(), &out)
			r.apply(s, &out)
			ran = true
		}
	}
	return ran
}

// serverDeadline returns the servers' earliest deadline (zero: none).
func (r *fakeRack) serverDeadline() time.Time {
	d := int64(math.MaxInt64)
	for _, s := range r.srv {
		d = min(d, s.core.NextDeadline())
	}
	if d == math.MaxInt64 {
		return time.Time{}
	}
	return t0.Add(time.Duration(d))
}

// run lets time pass until end, calling watch after every step.
func (r *fakeRack) run(end time.Time, watch func()) {
	for {
		next := end
		if len(r.q) > 0 && r.q[0].at.Before(next) {
			next = r.q[0].at
		}
		if d := r.core.NextDeadline(); !d.IsZero() && d.Before(next) {
			next = d
		}
		if d := r.serverDeadline(); !d.IsZero() && d.Before(next) {
			next = d
		}
		if next.Before(r.now) {
			next = r.now
		}
		if next.After(end) || (next.Equal(end) && (len(r.q) == 0 || r.q[0].at.After(end))) {
			r.now = end
			r.tickServers()
			r.step(Tick{})
			if watch != nil {
				watch()
			}
			return
		}
		r.now = next
		switch {
		case len(r.q) > 0 && !r.q[0].at.After(r.now):
			e := heap.Pop(&r.q).(ev)
			e.fn()
		case r.tickServers():
		default:
			r.step(Tick{})
		}
		if watch != nil {
			watch()
		}
	}
}
