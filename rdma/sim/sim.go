// Package sim is the virtual-time emulated RDMA fabric: the same verbs semantics as rdma/emu,
// executed by a deterministic discrete-event scheduler with a cost model, so that throughput and
// latency shapes are meaningful on a small shared machine and races are reproducible by seed.
//
// Threads are goroutines, but only one runs at a time: a thread runs until its next costed step
// (a local store or read-modify-write, a wait for a completion, a park in Memory.Await) and then
// hands control back to the scheduler, which resumes whichever thread or NIC event is due first.
// Local loads are charged to the thread without yielding (they cannot be observed by others).
//
// Cost model ([Cost]): CPU accesses cost LocalOp; posting a batch costs PostOp for its first
// verb and PostWQE for each further one (one doorbell); consuming a completion costs PollCQ. A
// verb crosses the initiator's NIC pipeline (NICOp per verb, plus NICLine per extra 64-byte line
// of a multi-word READ/WRITE) and, after OneWay (LoopbackOneWay for loopback), the target NIC's
// pipeline, where it is applied, and its completion returns after another OneWay. Loopback
// therefore loads the same NIC twice, sharing it with inbound traffic. Every NIC slows down
// once it hosts more than QPLimit queue-pair ends. Atomics (CAS, FAA and the masked ones)
// additionally hold one of the target NIC's AtomicUnits (the one the word hashes to) for
// NICAtomic (NICMaskedAtomic for masked ones) and apply as a read at the start and a
// conditional write AtomicWindow later, so CPU stores and CPU CAS can land in between (not
// atomic with local atomics) while NIC atomics on one word never overlap each other. With
// SameWordAtomic set, an atomic takes whichever unit is free first and a word's atomics are
// instead spaced SameWordAtomic apart: the same-word atomic rate is then its own parameter. A
// multi-word READ/WRITE is applied one 64-byte line at a time, NICLine apart, so it is not
// atomic as a whole. Requests of one queue pair (a thread and a target node) are applied in
// posting order, each after the previous one took full effect; unsignaled requests under
// UnsignaledJitter are exempt (fault injection).
//
// Two-sided messages ([RPC]) cost the same NIC and wire path as a verb each way, plus the
// server thread's CPU time to receive (PollCQ) and whatever it spends handling ([Spend]).
//
// The scheduler is deterministic for a given configuration, seed and thread program.
package sim

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"

	"github.com/netlock-go/netlock/internal/des"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Cost is the cost model, in nanoseconds of virtual time.
type Cost struct {
	// LocalOp is one CPU access to the own region (a contended cache line). Default 25.
	LocalOp int64
	// PostOp is the CPU cost of posting one verb. Default 40.
	PostOp int64
	// OneWay is the wire+PCIe latency between two nodes, each way. Default 900.
	OneWay int64
	// LoopbackOneWay is the latency of the loopback path, each way. Default 400.
	LoopbackOneWay int64
	// NICOp is the NIC pipeline occupancy of one verb (inbound, outbound and loopback share it);
	// 1e9/NICOp is the NIC's message rate. Default 60 (about 16 M verbs/s).
	NICOp int64
	// NICAtomic is how long one CAS/FAA holds an atomic unit of the target NIC. Default 350
	// (about 2.8 M atomics/s per unit, ConnectX-3 class).
	NICAtomic int64
	// NICMaskedAtomic is how long one masked CAS/FAA holds an atomic unit. Default NICAtomic.
	NICMaskedAtomic int64
	// AtomicUnits is the number of atomic units per NIC; a word's address hashes to its unit, so
	// atomics to one word always use the same unit and atomics to words in different units
	// proceed in parallel. Default 1.
	AtomicUnits int
	// PostWQE is the CPU cost of each verb after the first of one PostSend call (the batch
	// shares one doorbell). Default 10.
	PostWQE int64
	// PollCQ is the CPU cost of consuming one completion in Wait. Default 0 (folded into
	// PostOp in the default model); selective signaling saves it per unsignaled verb.
	PollCQ int64
	// NICLine is the extra NIC pipeline occupancy (initiator and target) per 64-byte line of a
	// multi-word READ/WRITE beyond the first, and the gap between applying successive lines.
	// Default 6 (a line on PCIe 3.0 x16 or a 100 Gb/s link).
	NICLine int64
	// AtomicWindow is the time between an atomic's read and its conditional write; it must be
	// smaller than NICAtomic. Default 300.
	AtomicWindow int64
	// SameWordAtomic, if positive, is the NIC's serialization time for atomics on one word: an
	// atomic on a word is applied no earlier than SameWordAtomic after the previous NIC atomic
	// on that word, so one word takes at most 1e9/SameWordAtomic atomics per second, and atomics
	// take whichever atomic unit can start them first instead of the unit their word hashes to:
	// the units then bound only the NIC's aggregate atomic rate (AtomicUnits per NICAtomic), an
	// atomic's own latency stays NICAtomic (NICMaskedAtomic), and atomics on different words do
	// not depend on it. It must exceed AtomicWindow (an atomic's write-back precedes the next
	// same-word read). Default 0: a word's atomics are serialized by the unit it hashes to,
	// NICAtomic apart, together with every other word of that unit.
	SameWordAtomic int64
	// WireJitter is a random [0, WireJitter) ns added to every verb's trip to the target NIC
	// (PCIe and switch variance). It breaks the lock-step that identical latencies
	// would otherwise create between CAS retry loops. Default 100; negative disables it.
	WireJitter int64
	// SlowVerbProb is the probability that a verb's trip to the target takes SlowVerbDelay
	// longer (the occasional long-lasting verb of a real RNIC). Default 0.
	SlowVerbProb float64
	// SlowVerbDelay is the extra delay of a slow verb, ns.
	SlowVerbDelay int64
	// QPLimit is the number of queue-pair ends a NIC hosts before its per-verb cost grows (QP
	// context cache thrashing; "the message rate of commodity RNICs declines after 450
	// connections"). A thread's first verb to a node opens one QP: one end on its own NIC and one
	// on the target's (both on the same NIC for loopback). Default 450; negative disables it.
	QPLimit int
	// QPPenalty is the relative slowdown per QPLimit extra QP ends. Default 0.5.
	QPPenalty float64
}

// DefaultCost returns the default cost model.
func DefaultCost() Cost {
	c := Cost{}
	c.fill()
	return c
}

func (c *Cost) fill() {
	def := func(p *int64, v int64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.LocalOp, 25)
	def(&c.PostOp, 40)
	def(&c.OneWay, 900)
	def(&c.LoopbackOneWay, 400)
	def(&c.NICOp, 60)
	def(&c.NICAtomic, 350)
	def(&c.AtomicWindow, 300)
	def(&c.NICMaskedAtomic, c.NICAtomic)
	def(&c.PostWQE, 10)
	def(&c.NICLine, 6)
	if c.AtomicUnits == 0 {
		c.AtomicUnits = 1
	}
	def(&c.WireJitter, 100)
	if c.QPLimit == 0 {
		c.QPLimit = 450
	}
	if c.QPPenalty == 0 {
		c.QPPenalty = 0.5
	}
}

// Config configures a simulated fabric.
type Config struct {
	// Nodes is the number of nodes (ids 0..Nodes-1). Must be >= 1.
	Nodes int
	// RegionSize is each node's region in bytes. Default 1 MiB.
	RegionSize uint64
	// Cost is the cost model; zero fields take defaults.
	Cost Cost
	// Seed seeds jitter.
	Seed int64
	// OpJitter adds a random [0, OpJitter) ns to every verb's arrival.
	OpJitter int64
	// UnsignaledJitter adds a random [0, UnsignaledJitter) ns to unsignaled verbs, reordering
	// them with later accesses.
	UnsignaledJitter int64
	// Tracer sees every access.
	Tracer verbs.Tracer
}

func (c *Config) validate() error {
	if c.Nodes < 1 || c.Nodes > 1<<16 {
		return fmt.Errorf("sim: %d nodes out of range", c.Nodes)
	}
	if c.RegionSize == 0 {
		c.RegionSize = 1 << 20
	}
	if c.RegionSize%64 != 0 || c.RegionSize < 128 {
		return fmt.Errorf("sim: region size %d must be a multiple of 64 and at least 128", c.RegionSize)
	}
	c.Cost.fill()
	if c.Cost.AtomicWindow >= min(c.Cost.NICAtomic, c.Cost.NICMaskedAtomic) {
		return fmt.Errorf("sim: atomic window %d must be below the atomic unit times %d and %d", c.Cost.AtomicWindow, c.Cost.NICAtomic, c.Cost.NICMaskedAtomic)
	}
	if c.Cost.SameWordAtomic < 0 || (c.Cost.SameWordAtomic > 0 && c.Cost.AtomicWindow >= c.Cost.SameWordAtomic) {
		return fmt.Errorf("sim: same-word atomic time %d must be 0 or above the atomic window %d", c.Cost.SameWordAtomic, c.Cost.AtomicWindow)
	}
	if c.Cost.SlowVerbProb < 0 || c.Cost.SlowVerbProb > 1 || c.Cost.SlowVerbDelay < 0 {
		return fmt.Errorf("sim: slow verbs: probability %v, delay %d", c.Cost.SlowVerbProb, c.Cost.SlowVerbDelay)
	}
	if c.Cost.AtomicUnits < 1 || c.Cost.PollCQ < 0 {
		return fmt.Errorf("sim: %d atomic units, poll cost %d", c.Cost.AtomicUnits, c.Cost.PollCQ)
	}
	if c.OpJitter < 0 || c.UnsignaledJitter < 0 {
		return errors.New("sim: negative jitter")
	}
	return nil
}

// ErrDeadlock is returned by Run when every live thread is parked and nothing is scheduled.
var ErrDeadlock = errors.New("sim: deadlock: all threads parked")

// qpEnd is one end of a reliable-connection queue pair hosted by a NIC: the thread that owns
// the QP, the NIC at the other end, and which end this is.
type qpEnd struct {
	th      *thread
	peer    verbs.NodeID
	inbound bool
}

type nicState struct {
	free  int64
	units []unitSched        // per atomic unit
	users map[qpEnd]struct{} // QP ends hosted (QP cache pressure)
	// words holds the per-word reservations of Cost.SameWordAtomic (by region offset); an
	// entry whose reservations all ended is dropped when the map outgrows sweepAt.
	words   map[uint64]*unitSched
	sweepAt int
}

// unitSched is an atomic unit's reservations, [start, end) pairs in order. An atomic takes the
// earliest free slot at or after the time it is ready, so one that waits for its queue pair
// does not hold the unit idle for others. The same schedule serializes one word's atomics
// under Cost.SameWordAtomic.
type unitSched struct{ iv [][2]int64 }

// fit drops the reservations that ended by now and returns the earliest start t >= ready of a
// free slot of length hold, and where its reservation goes.
func (u *unitSched) fit(now, ready, hold int64) (t int64, i int) {
	k := 0
	for k < len(u.iv) && u.iv[k][1] <= now {
		k++
	}
	u.iv = u.iv[k:]
	t = ready
	for ; i < len(u.iv); i++ {
		if u.iv[i][1] <= t {
			continue
		}
		if u.iv[i][0] >= t+hold {
			break
		}
		t = u.iv[i][1]
	}
	return t, i
}

func (u *unitSched) reserve(now, ready, hold int64) int64 {
	t, i := u.fit(now, ready, hold)
	u.iv = append(u.iv, [2]int64{})
	copy(u.iv[i+1:], u.iv[i:])
	u.iv[i] = [2]int64{t, t + hold}
	return t
}

// reserveWord reserves, for an atomic on the word at off ready at ready, the earliest start at
// which the word is free for sameWord and some atomic unit for hold (Cost.SameWordAtomic), and
// returns it. The start only grows while searching, and every schedule is finite, so the search
// ends.
func (n *nicState) reserveWord(now, ready int64, off uint64, hold, sameWord int64) int64 {
	if n.words == nil {
		n.words, n.sweepAt = map[uint64]*unitSched{}, 1<<12
	}
	w := n.words[off]
	if w == nil {
		w = &unitSched{}
		n.words[off] = w
	}
	t := ready
	best := 0
	for {
		tw, _ := w.fit(now, t, sameWord)
		tu := int64(-1)
		for k := range n.units {
			if x, _ := n.units[k].fit(now, tw, hold); tu < 0 || x < tu {
				tu, best = x, k
			}
		}
		t = tu
		if tu == tw {
			break
		}
	}
	w.reserve(now, t, sameWord)
	n.units[best].reserve(now, t, hold)
	if len(n.words) > n.sweepAt {
		for k, x := range n.words {
			if x.fit(now, now, 0); len(x.iv) == 0 {
				delete(n.words, k)
			}
		}
		n.sweepAt = max(1<<12, 2*len(n.words))
	}
	return t
}

// qpKey names a queue pair by its owning thread and target node.
type qpKey struct {
	th  *thread
	dst verbs.NodeID
}

// qpOrder is a queue pair's ordering state: when its last request reaches the target NIC and
// when it has taken full effect there.
type qpOrder struct {
	arrive, done int64
}

// Sim is a simulated fabric. Create threads with Go, then call Run once.
//
// Time and scheduling are internal/des's: NIC steps are kernel events, threads are kernel
// processes (coroutines), so exactly one thread or event runs at a time.
type Sim struct {
	cfg   Config
	mem   [][]uint64
	alloc []uint64
	nic   []nicState
	rng   *rand.Rand

	k       *des.Sim
	threads []*thread
	watch   map[verbs.Ptr][]*thread
	qps     map[qpKey]*qpOrder

	ran   bool
	errMu sync.Mutex
	errs  []error
}

// New creates a simulated fabric.
func New(cfg Config) (*Sim, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Sim{cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed)), k: des.New(0),
		watch: map[verbs.Ptr][]*thread{}, qps: map[qpKey]*qpOrder{}}
	for i := 0; i < cfg.Nodes; i++ {
		s.mem = append(s.mem, make([]uint64, cfg.RegionSize/8))
		s.alloc = append(s.alloc, 64)
		s.nic = append(s.nic, nicState{users: map[qpEnd]struct{}{}, units: make([]unitSched, cfg.Cost.AtomicUnits)})
	}
	return s, nil
}

// Nodes is the number of nodes.
func (s *Sim) Nodes() int { return s.cfg.Nodes }

// Now is the current virtual time in ns.
func (s *Sim) Now() int64 { return s.k.Now() }

// Cost is the effective cost model.
func (s *Sim) Cost() Cost { return s.cfg.Cost }

// push schedules fn, or the resumption of th, at virtual time t (never before now).
func (s *Sim) push(t int64, th *thread, fn func()) {
	if th != nil {
		th.p.WakeAt(t)
		return
	}
	s.k.At(t, fn)
}

func (s *Sim) word(p verbs.Ptr) (*uint64, error) {
	n := int(p.Node())
	if n >= len(s.mem) {
		return nil, fmt.Errorf("%v: %w", p, verbs.ErrNoNode)
	}
	if err := verbs.CheckPtr(p, s.cfg.RegionSize); err != nil {
		return nil, err
	}
	return &s.mem[n][p.Offset()/8], nil
}

func (s *Sim) trace(p verbs.Ptr, cl verbs.Class, op verbs.Opcode, from verbs.NodeID) {
	if s.cfg.Tracer != nil {
		s.cfg.Tracer(verbs.Access{Word: p, Class: cl, Op: op, Initiator: from})
	}
}

// check validates a request against the fabric and returns its first word.
func (s *Sim) check(wr *verbs.WorkRequest) (*uint64, error) {
	n := int(wr.Remote.Node())
	if n >= len(s.mem) {
		return nil, fmt.Errorf("%v: %w", wr.Remote, verbs.ErrNoNode)
	}
	if err := verbs.CheckRequest(wr, s.cfg.RegionSize); err != nil {
		return nil, err
	}
	return &s.mem[n][wr.Remote.Offset()/8], nil
}

// lines is the number of 64-byte lines a request's block touches.
func lines(wr *verbs.WorkRequest) int64 {
	off := wr.Remote.Offset()
	end := off + 8*uint64(wr.Len())
	return int64((end+63)/64 - off/64)
}

// store writes a word and wakes threads parked on it.
func (s *Sim) store(w *uint64, p verbs.Ptr, v uint64) {
	atomic.StoreUint64(w, v)
	s.notify(p)
}

func (s *Sim) notify(p verbs.Ptr) {
	ths := s.watch[p]
	if len(ths) == 0 {
		return
	}
	delete(s.watch, p)
	for _, th := range ths {
		if !th.parked {
			continue
		}
		th.parked = false
		s.push(s.k.Now()+s.cfg.Cost.LocalOp, th, nil)
	}
}

// Endpoint returns a setup endpoint on node n: usable before Run and after it returns (its
// operations take effect immediately and cost nothing), never from a simulated thread.
func (s *Sim) Endpoint(n int) verbs.Endpoint {
	return &endpoint{s: s, node: verbs.NodeID(n), done: map[uint64]*pending{}}
}

// Go creates a simulated thread on node n running fn; it starts at the current virtual time
// when Run is called.
func (s *Sim) Go(n int, fn func(ep verbs.Endpoint) error) { s.spawn(n, fn, false) }

func (s *Sim) spawn(n int, fn func(ep verbs.Endpoint) error, daemon bool) {
	th := &thread{s: s, daemon: daemon}
	ep := &endpoint{s: s, node: verbs.NodeID(n), th: th, done: map[uint64]*pending{}}
	th.ep = ep
	s.threads = append(s.threads, th)
	th.p = s.k.Spawn(func(*des.Proc) { th.main(fn) })
}

// Run executes the simulation until no event is due at or before until (virtual ns), then stops
// every remaining thread (they unwind at their next scheduling point) and returns the threads'
// errors. It returns ErrDeadlock if threads remain parked with nothing left to schedule before
// until.
func (s *Sim) Run(until int64) error {
	if s.ran {
		return errors.New("sim: Run called twice")
	}
	s.ran = true
	s.k.RunUntil(until, nil)
	var deadlock error
	if s.k.Len() == 0 && s.k.Panic() == nil {
		parked := 0
		for _, th := range s.threads {
			if !th.done && !th.daemon {
				parked++
			}
		}
		if parked > 0 {
			deadlock = fmt.Errorf("%d threads at %dns: %w", parked, s.k.Now(), ErrDeadlock)
		}
	}
	// Unwind every remaining thread (Kill panics inside it at its scheduling point; one that
	// never started never runs).
	for _, th := range s.threads {
		if !th.done {
			th.p.Kill()
			th.done = true
		}
	}
	if pp := s.k.Panic(); pp != nil {
		panic(pp.Value)
	}
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return errors.Join(append([]error{deadlock}, s.errs...)...)
}

// thread is a simulated thread: a kernel process running the thread's function.
type thread struct {
	s      *Sim
	ep     *endpoint
	p      *des.Proc
	debt   int64
	parked bool
	done   bool
	atomic bool // inside Await's condition: loads must not yield
	daemon bool // a server thread: parked forever is not a deadlock
}

func (th *thread) main(fn func(ep verbs.Endpoint) error) {
	defer func() { th.done = true }()
	if err := fn(th.ep); err != nil {
		th.s.errMu.Lock()
		th.s.errs = append(th.s.errs, err)
		th.s.errMu.Unlock()
	}
}

// sleepUntil hands control back and resumes at virtual time t (>= now).
func (th *thread) sleepUntil(t int64) {
	if now := th.s.k.Now(); t < now {
		t = now
	}
	th.s.push(t, th, nil)
	th.block()
}

// block hands control back to the kernel until something resumes the thread (a completion, a
// store it awaits, an RPC). When the simulation ends the kernel unwinds the thread from here.
func (th *thread) block() { th.p.Yield() }

// flush turns accumulated load cost into elapsed time plus dt.
func (th *thread) flush(dt int64) {
	d := th.debt + dt
	th.debt = 0
	th.sleepUntil(th.s.k.Now() + d)
}

type pending struct {
	c      verbs.Completion
	ready  bool
	waiter *thread
}

type endpoint struct {
	s      *Sim
	node   verbs.NodeID
	th     *thread // nil for setup endpoints
	stats  verbs.Stats
	nextID uint64
	done   map[uint64]*pending
}

var _ verbs.Endpoint = (*endpoint)(nil)

func (e *endpoint) Node() verbs.NodeID { return e.node }

// Spend implements verbs.Spender: the thread is busy for ns of virtual time (other threads and
// NIC events proceed meanwhile).
func (e *endpoint) Spend(ns int64) {
	if e.th != nil && ns > 0 {
		e.th.flush(ns)
	}
}

func (e *endpoint) Local() verbs.Memory { return mem{e} }
func (e *endpoint) Stats() *verbs.Stats { return &e.stats }
func (e *endpoint) NextID() uint64      { e.nextID++; return e.nextID }
func (e *endpoint) Alloc(size uint64) (verbs.Ptr, error) {
	size = (size + 63) &^ 63
	n := int(e.node)
	if e.s.alloc[n]+size > e.s.cfg.RegionSize {
		return 0, fmt.Errorf("alloc %d bytes on node %d: %w", size, n, verbs.ErrOOM)
	}
	off := e.s.alloc[n]
	e.s.alloc[n] += size
	return verbs.MakePtr(e.node, off), nil
}

func (e *endpoint) Now() int64 {
	if e.th == nil {
		return e.s.k.Now()
	}
	return e.s.k.Now() + e.th.debt
}

func (s *Sim) svc(n *nicState) int64 {
	c := s.cfg.Cost
	if c.QPLimit < 0 || len(n.users) <= c.QPLimit {
		return c.NICOp
	}
	f := 1 + c.QPPenalty*float64(len(n.users)-c.QPLimit)/float64(c.QPLimit)
	return int64(float64(c.NICOp) * f)
}

// PostSend implements verbs.Endpoint: each verb takes the initiator NIC's pipeline now, the
// target NIC's pipeline when it arrives, and is applied by scheduler events; NIC reservations
// are always made at the current virtual time, so pipelines have no idle gaps.
func (e *endpoint) PostSend(wrs ...verbs.WorkRequest) error {
	s, c := e.s, e.s.cfg.Cost
	for i, wr := range wrs {
		e.stats.Add(wr, e.node)
		w, err := s.check(&wr)
		if err != nil {
			return err
		}
		if e.th == nil { // setup endpoint: apply now
			v, words := s.applyNow(w, wr, e.node)
			if wr.Signaled {
				e.done[wr.ID] = &pending{c: verbs.Completion{ID: wr.ID, Op: wr.Op, Value: v, Words: words}, ready: true}
			}
			continue
		}
		if i == 0 {
			e.th.debt += c.PostOp
		} else {
			e.th.debt += c.PostWQE
		}
		src, dst := &s.nic[e.node], &s.nic[wr.Remote.Node()]
		src.users[qpEnd{e.th, wr.Remote.Node(), false}] = struct{}{}
		dst.users[qpEnd{e.th, e.node, true}] = struct{}{}
		oneWay := c.OneWay
		if src == dst {
			oneWay = c.LoopbackOneWay
		}
		extra := (lines(&wr) - 1) * c.NICLine
		out := max(s.k.Now()+e.th.debt, src.free)
		src.free = out + s.svc(src) + extra
		var pd *pending
		if wr.Signaled {
			pd = &pending{c: verbs.Completion{ID: wr.ID, Op: wr.Op}}
			e.done[wr.ID] = pd
		}
		at := src.free + oneWay + s.jitter(c.WireJitter)
		if c.SlowVerbProb > 0 && s.rng.Float64() < c.SlowVerbProb {
			at += c.SlowVerbDelay
		}
		var qp *qpOrder
		if wr.Signaled || s.cfg.UnsignaledJitter <= 0 {
			k := qpKey{e.th, wr.Remote.Node()}
			if qp = s.qps[k]; qp == nil {
				qp = &qpOrder{}
				s.qps[k] = qp
			}
			at = max(at, qp.arrive) // a queue pair's requests reach the target in order
			qp.arrive = at
		}
		wr, from := wr, e.node
		s.push(at, nil, func() { s.arrive(w, wr, from, dst, oneWay, extra, pd, qp) })
	}
	return nil
}

// arrive runs when a verb reaches the target NIC (at the current virtual time). qp, if set, is
// the verb's queue pair: the verb is applied only after the previous one took full effect.
func (s *Sim) arrive(w *uint64, wr verbs.WorkRequest, from verbs.NodeID, dst *nicState, oneWay, extra int64, pd *pending, qp *qpOrder) {
	c := s.cfg.Cost
	in := max(s.k.Now(), dst.free)
	dst.free = in + s.svc(dst) + extra
	complete := func(at int64) {
		if pd == nil {
			return
		}
		s.push(at, nil, func() {
			pd.ready = true
			if th := pd.waiter; th != nil {
				pd.waiter = nil
				s.push(s.k.Now(), th, nil)
			}
		})
	}
	if wr.Op == verbs.OpRead || wr.Op == verbs.OpWrite {
		// Jitter delays when the verb takes effect (a stalled DMA) without holding the NIC
		// pipeline; atomics are never jittered so that the atomic unit stays serial.
		j := s.jitter(s.cfg.OpJitter)
		if pd == nil {
			j += s.jitter(s.cfg.UnsignaledJitter)
		}
		at := in + j
		if qp != nil {
			at = max(at, qp.done)
		}
		last := s.applyLines(w, wr, from, at, pd)
		if qp != nil {
			qp.done = last
		}
		complete(max(last, in+j+extra) + s.svc(dst) + oneWay)
		return
	}
	hold := c.NICAtomic
	if wr.Op == verbs.OpMaskedCAS || wr.Op == verbs.OpMaskedFAA {
		hold = c.NICMaskedAtomic
	}
	if qp != nil {
		in = max(in, qp.done) // after the previous request of the queue pair took effect
	}
	if c.SameWordAtomic > 0 {
		in = dst.reserveWord(s.k.Now(), in, wr.Remote.Offset(), hold, c.SameWordAtomic)
	} else {
		// The unit a word hashes to (Fibonacci hashing): words at any stride spread over all units.
		unit := int((wr.Remote.Offset() / 8 * 0x9E3779B97F4A7C15 >> 32) % uint64(c.AtomicUnits))
		in = dst.units[unit].reserve(s.k.Now(), in, hold)
	}
	if qp != nil {
		qp.done = in + c.AtomicWindow
	}
	var old uint64
	s.push(in, nil, func() {
		s.trace(wr.Remote, verbs.ClassRemote, wr.Op, from)
		old = atomic.LoadUint64(w) // the NIC reads ...
		if pd != nil {
			pd.c.Value = old
		}
		if wr.Dest != nil {
			wr.Dest[0] = old
		}
	})
	// ... and writes back a window later (pushed now, so it precedes every later request of the
	// queue pair that is applied at the same instant).
	s.push(in+c.AtomicWindow, nil, func() {
		if v, ok := verbs.Apply(&wr, old); ok {
			s.store(w, wr.Remote, v)
		}
	})
	complete(in + hold + oneWay)
}

// applyLines schedules a READ/WRITE to take effect one 64-byte line at a time from time at,
// NICLine apart, storing results in the completion and Dest; it returns when the last line is
// applied.
func (s *Sim) applyLines(w *uint64, wr verbs.WorkRequest, from verbs.NodeID, at int64, pd *pending) int64 {
	n := wr.Len()
	if n == 1 {
		s.push(at, nil, func() {
			v, _ := s.applyRange(wr, from, 0, 1)
			if pd != nil {
				pd.c.Value = v
			}
			if wr.Dest != nil && wr.Op == verbs.OpRead {
				wr.Dest[0] = v
			}
		})
		return at
	}
	var words []uint64
	if wr.Op == verbs.OpRead {
		words = make([]uint64, n)
		if pd != nil {
			pd.c.Words = words
		}
	}
	off := wr.Remote.Offset()
	t := at
	for i := 0; i < n; {
		j := i + 1
		for j < n && (off+8*uint64(j))%64 != 0 {
			j++
		}
		lo, hi := i, j
		s.push(t, nil, func() {
			_, got := s.applyRange(wr, from, lo, hi)
			if words != nil {
				copy(words[lo:hi], got)
				if lo == 0 && pd != nil {
					pd.c.Value = got[0]
				}
				if wr.Dest != nil {
					copy(wr.Dest[lo:hi], got)
				}
			}
		})
		i = j
		if i < n {
			t += s.cfg.Cost.NICLine
		}
	}
	return t
}

// applyRange applies words [lo, hi) of a READ/WRITE.
func (s *Sim) applyRange(wr verbs.WorkRequest, from verbs.NodeID, lo, hi int) (uint64, []uint64) {
	n := int(wr.Remote.Node())
	base := s.mem[n][wr.Remote.Offset()/8:]
	var got []uint64
	for i := lo; i < hi; i++ {
		p := wr.Remote.Add(8 * uint64(i))
		s.trace(p, verbs.ClassRemote, wr.Op, from)
		if wr.Op == verbs.OpRead {
			got = append(got, atomic.LoadUint64(&base[i]))
			continue
		}
		v := wr.Value
		if len(wr.Data) > 0 {
			v = wr.Data[i]
		}
		s.store(&base[i], p, v)
	}
	if len(got) > 0 {
		return got[0], got
	}
	return 0, nil
}

func (s *Sim) jitter(max int64) int64 {
	if max <= 0 {
		return 0
	}
	return s.rng.Int63n(max)
}

// applyNow executes a verb in one step (setup endpoints) and stores its result in Dest.
func (s *Sim) applyNow(w *uint64, wr verbs.WorkRequest, from verbs.NodeID) (uint64, []uint64) {
	if wr.Op == verbs.OpRead || wr.Op == verbs.OpWrite {
		v, words := s.applyRange(wr, from, 0, wr.Len())
		if wr.Dest != nil && wr.Op == verbs.OpRead {
			copy(wr.Dest, words)
			wr.Dest[0] = v
		}
		if wr.Len() == 1 {
			words = nil
		}
		return v, words
	}
	s.trace(wr.Remote, verbs.ClassRemote, wr.Op, from)
	old := atomic.LoadUint64(w)
	if v, ok := verbs.Apply(&wr, old); ok {
		s.store(w, wr.Remote, v)
	}
	if wr.Dest != nil {
		wr.Dest[0] = old
	}
	return old, nil
}

// Wait implements verbs.Endpoint: the thread parks until the completion event.
func (e *endpoint) Wait(id uint64) (verbs.Completion, error) {
	p, ok := e.done[id]
	if !ok {
		return verbs.Completion{}, fmt.Errorf("wait %d: %w", id, verbs.ErrNotFound)
	}
	if th := e.th; th != nil {
		th.flush(0)
		if !p.ready {
			p.waiter = th
			th.block()
		}
		th.debt += e.s.cfg.Cost.PollCQ // the completion is polled once it is there
	}
	delete(e.done, id)
	return p.c, nil
}

// mem is a simulated thread's CPU access to its node's region.
type mem struct{ e *endpoint }

func (m mem) w(off uint64, op verbs.Opcode) (*uint64, verbs.Ptr) {
	p := verbs.MakePtr(m.e.node, off)
	w, err := m.e.s.word(p)
	if err != nil {
		panic(fmt.Sprintf("sim: local access: %v", err))
	}
	m.e.stats.LocalOps.Add(1)
	m.e.s.trace(p, verbs.ClassLocal, op, m.e.node)
	return w, p
}

// costed charges a local write-class access: the thread yields so the access happens at its
// virtual time, interleaved with other threads and NIC events.
func (m mem) costed() {
	if th := m.e.th; th != nil {
		th.flush(m.e.s.cfg.Cost.LocalOp)
	}
}

func (m mem) Load(off uint64) uint64 {
	if th := m.e.th; th != nil {
		th.debt += m.e.s.cfg.Cost.LocalOp
		if th.debt > 2000 && !th.atomic {
			th.flush(0)
		}
	}
	w, _ := m.w(off, verbs.OpRead)
	return atomic.LoadUint64(w)
}

func (m mem) Store(off, v uint64) {
	m.costed()
	w, p := m.w(off, verbs.OpWrite)
	m.e.s.store(w, p, v)
}

func (m mem) CAS(off, old, new uint64) bool {
	m.costed()
	w, p := m.w(off, verbs.OpCAS)
	if atomic.LoadUint64(w) != old {
		return false
	}
	m.e.s.store(w, p, new)
	return true
}

func (m mem) FAA(off, d uint64) uint64 {
	m.costed()
	w, p := m.w(off, verbs.OpFAA)
	old := atomic.LoadUint64(w)
	m.e.s.store(w, p, old+d)
	return old
}

// Await parks the thread until one of offs is written, re-checking cond each time. Checking and
// parking happen without yielding, so no wake-up is lost.
func (m mem) Await(cond func() bool, offs ...uint64) {
	th := m.e.th
	if th == nil {
		if !cond() {
			panic("sim: Await on a setup endpoint would block")
		}
		return
	}
	for {
		th.atomic = true
		ok := cond()
		th.atomic = false
		if ok {
			return
		}
		m.e.stats.LocalSpins.Add(1)
		for _, off := range offs {
			p := verbs.MakePtr(m.e.node, off)
			m.e.s.watch[p] = append(m.e.s.watch[p], th)
		}
		th.debt = 0
		th.parked = true
		th.block()
	}
}
