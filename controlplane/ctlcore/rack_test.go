package ctlcore

import (
	"container/heap"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// fakeRack is a shell for Core tests in virtual time: it answers every Effect after a random
// delay of at most maxDelay each way. The switch keeps its tables as far as the tests need (the
// cookie, whether it has a pipeline, which port serves each server); the servers answer every
// admin request, and model what the Core's failure handling must respect: the controller
// lease (a ping renews it on arrival) and, for a standby, the takeover grace.
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

	pipeline   bool
	cookie     uint64
	switchDown bool
	// replyLoss is the probability that a ping's answer from the server on port 1 is lost (the
	// ping itself arrived).
	replyLoss float64
	// busy[lock] is how many more yields of lock find its server's queue not drained.
	busy map[uint32]int
	// onEffect, if set, sees every effect when the Core emits it.
	onEffect func(Effect)
	srv      map[uint16]*fakeServer
	port     map[uint16]int // the port the switch sends server n's traffic to
	entries  map[uint32]dataplane.LockEntry
}

// fakeServer is a lock server (or a standby) as the failure handling sees it.
type fakeServer struct {
	port       int
	standby    bool
	cut        bool      // cut off: nothing reaches it or comes from it (it may still grant)
	leaseUntil time.Time // its controller lease
	// A standby: when the takeover reached it and the grace it was given.
	tookOverAt time.Time
	grace      time.Duration
	epoch      uint64
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

// testConfig is a rack of two servers (ports 1, 2) with standbys (ports 11, 12).
func testConfig() Config {
	sw := netip.MustParseAddr("10.0.0.254")
	cfg := Config{
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
		timeout: 50 * time.Millisecond, srv: map[uint16]*fakeServer{}, port: map[uint16]int{},
		entries: map[uint32]dataplane.LockEntry{}, busy: map[uint32]int{}}
	for _, s := range cfg.Servers {
		r.srv[uint16(s.Port)] = &fakeServer{port: s.Port, leaseUntil: t0.Add(cfg.ServerLease)}
		r.port[s.Num] = s.Port
	}
	for _, s := range cfg.Standbys {
		r.srv[uint16(s.Port)] = &fakeServer{port: s.Port, standby: true}
	}
	r.step(Primary{IsPrimary: true})
	return r
}

// serverAt returns the server process on port p.
func (r *fakeRack) serverAt(p int) *fakeServer { return r.srv[uint16(p)] }

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
	switch e := e.(type) {
	case Write:
		for _, u := range e.Updates {
			switch {
			case u.Entity.Server != nil:
				r.port[u.Entity.ServerNum] = u.Entity.Server.Port
			case u.Entity.Lock != nil && u.Op == Delete:
				delete(r.entries, u.Entity.Lock.Lock)
			case u.Entity.Lock != nil:
				r.entries[u.Entity.Lock.Lock] = *u.Entity.Lock
			}
		}
		r.answer(rtt, Result{ID: e.ID})
	case PushPipeline:
		r.pipeline = true
		r.answer(rtt, Result{ID: e.ID})
	case GetPipeline:
		r.answer(rtt, Result{ID: e.ID, HasPipeline: r.pipeline})
	case ReadLocks:
		res := Result{ID: e.ID, Hits: map[uint32]uint64{}}
		for _, le := range r.entries {
			res.Locks = append(res.Locks, le)
		}
		r.answer(rtt, res)
	case SwitchAdmin:
		if r.switchDown {
			r.timeoutOf(e.ID)
			return
		}
		rep := dataplane.AdminReply{Op: e.Req.Op, Result: dataplane.AdminOK, Lock: e.Req.Lock}
		switch e.Req.Op {
		case wire.AdminSwitchSetCookie:
			r.cookie = e.Req.Value
			rep.Value = e.Req.Value
		case wire.AdminSwitchGetCookie:
			rep.Value = r.cookie
		}
		r.answer(rtt, Result{ID: e.ID, Admin: rep})
	case ServerAdmin:
		s := r.serverAt(r.port[e.Server])
		if r.switchDown || s == nil || s.cut {
			r.timeoutOf(e.ID)
			return
		}
		there := r.now.Add(r.delay())
		back := there.Add(r.delay())
		msg := e.Msg
		rep := wire.Fields{Op: wire.OpAdmin, Status: msg.Status, Flags: wire.FlagReply, Lock: msg.Lock, Txn: msg.Txn,
			Timestamp: msg.Timestamp, Token: msg.Token}
		lost := false
		switch msg.Status {
		case wire.AdminPing:
			rep.Token, rep.LeaseMicros = s.epoch, uint32(s.port)
			if !s.standby && !s.tookOverAt.IsZero() {
				rep.Priority = wire.PingServing
			}
			lost = s.port == 1 && r.rng.Float64() < r.replyLoss
			r.at(there, func() {
				if !s.cut && r.cfg.ServerLease > 0 && there.Add(r.cfg.ServerLease).After(s.leaseUntil) {
					s.leaseUntil = there.Add(r.cfg.ServerLease)
				}
			})
		case wire.AdminTakeover:
			s.epoch = max(s.epoch+1, msg.Token+1)
			rep.Token = s.epoch
			grace := time.Duration(msg.LeaseMicros) * time.Microsecond
			r.at(there, func() {
				if s.standby {
					s.standby, s.tookOverAt, s.grace = false, there, grace
				}
			})
		case wire.AdminYield:
			rep.LeaseMicros, rep.Slots = 0, 0
			if r.busy[msg.Lock] > 0 {
				r.busy[msg.Lock]--
				rep.LeaseMicros = 1 // a holder left
			}
		case wire.AdminResidents, wire.AdminStats:
			rep.Slots = 0
		}
		if lost {
			r.timeoutOf(e.ID)
			return
		}
		sent := r.now
		r.at(back, func() {
			if s.cut {
				// Cut off after it answered: the answer is lost on the way.
				r.at(sent.Add(r.timeout), func() { r.step(Result{ID: e.ID, Err: ErrTimeout}) })
				return
			}
			r.step(Result{ID: e.ID, Server: rep})
		})
	default:
		r.t.Fatalf("unexpected effect %v", e)
	}
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
		if next.Before(r.now) {
			next = r.now
		}
		if next.After(end) || (next.Equal(end) && (len(r.q) == 0 || r.q[0].at.After(end))) {
			r.now = end
			r.step(Tick{})
			if watch != nil {
				watch()
			}
			return
		}
		r.now = next
		if len(r.q) > 0 && !r.q[0].at.After(r.now) {
			e := heap.Pop(&r.q).(ev)
			e.fn()
		} else {
			r.step(Tick{})
		}
		if watch != nil {
			watch()
		}
	}
}
