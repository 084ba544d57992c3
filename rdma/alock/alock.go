// Package alock implements ALock (Baran, Nelson-Slivon, Tseng, Palmieri, SPAA '24), the
// asymmetric RDMA lock: threads on the lock's node (the local cohort) use only CPU atomics,
// threads on other nodes (the remote cohort) use only one-sided verbs, and neither ever issues
// a read-modify-write on a word the other class writes.
//
// # Algorithm
//
// Each lock has two budgeted MCS queues, one per cohort, whose tails double as the flags of a
// two-party Peterson lock between the cohort leaders, plus a victim word. A thread swaps its
// descriptor onto its cohort's tail (local CAS loop or rCAS loop). If the queue was empty it is
// the leader and runs Peterson: write victim := my cohort, then wait while the other cohort's
// tail is non-null and victim is still my cohort. Otherwise it links itself behind its
// predecessor and spins on its own descriptor until the predecessor passes it a budget; a pass
// of budget 0 makes it pReacquire (yield through Peterson) and restart at the full budget.
// Unlock CASes the tail back to null (which also drops the Peterson flag) or, if a successor
// enqueued, passes budget-1 to it. Default budgets: local 5, remote 20 (the paper's choice).
//
// Memory layout (the authors' code; docs/rdma.md, ALock's memory layout): a lock is a zeroed 64-byte
// block on its home node with tail_r at byte 0, tail_l at byte 16 and victim at byte 32
// (0 initially, 1 LOCAL, 2 REMOTE). A descriptor is a 64-byte block in the owning thread's
// node with the budget (int64, -1 while waiting) at byte 0 and next at byte 32.
//
// Word access classes (P11): tail_l is CPU-CASed by local threads and only rRead by remote
// ones; tail_r is rCASed by remote threads and only loaded by local ones; victim is only
// stored/written and read; remote descriptors are touched by neighbours only with rWrite.
//
// # API for a lock server
//
// A server holds a [Table] of N ALocks in its node's registered memory and hands out lock i as
// a verbs.Ptr. Any thread, on the server's node or elsewhere, takes a [Handle] from [New] and
// calls Lock/Unlock with that pointer; the handle picks the cohort from the pointer's node id:
//
//	// on the server's node (emu.Node "srv"), once:
//	tbl, _ := alock.NewTable(srv.NewEndpoint(), 1024)
//	alg, _ := alock.New(alock.Config{}) // local budget 5, remote budget 20
//	// (a) a co-located goroutine: local cohort, CPU atomics only
//	h, _ := alg.NewHandle(srv.NewEndpoint())
//	h.Lock(tbl.Lock(i)); /* critical section */ h.Unlock(tbl.Lock(i))
//	// (b) a thread of another emulated node (in-process or over emu's TCP transport) that
//	// learned tbl.Base() and tbl.Len() out of band: remote cohort, verbs only
//	rt := alock.OpenTable(base, n)
//	hr, _ := alg.NewHandle(remoteNode.NewEndpoint())
//	hr.Lock(rt.Lock(i)); /* critical section */ hr.Unlock(rt.Lock(i))
//
// A handle owns one local and one remote descriptor, so it holds one lock at a time; a
// goroutine that holds several locks at once (or a server acting for many clients) uses one
// handle per held lock, e.g. from a [Pool]:
//
//	pool := alg.NewPool(func() verbs.Endpoint { return srv.NewEndpoint() }) // server's node
//	h, _ := pool.Get()
//	h.Lock(tbl.Lock(i)); /* ... */ h.Unlock(tbl.Lock(i))
//	pool.Put(h)
//
// Handles are not safe for concurrent use. Lock ids come from clients, so a server checks
// i < tbl.Len() before calling Table.Lock (which panics on a bad index).
package alock

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/netlock-go/netlock/rdma/locks"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Byte offsets inside a lock block and a descriptor.
const (
	OffTailR  = 0
	OffTailL  = 16
	OffVictim = 32

	offBudget = 0
	offNext   = 32

	// Victim values.
	VictimLocal  = 1
	VictimRemote = 2

	// Size is the size of one ALock (and of one descriptor) in bytes.
	Size = 64
)

// Cohort is a thread's class for one lock.
type Cohort uint8

// Cohorts.
const (
	Local  Cohort = VictimLocal
	Remote Cohort = VictimRemote
)

func (c Cohort) String() string {
	if c == Local {
		return "local"
	}
	return "remote"
}

// Other is the opposite cohort.
func (c Cohort) Other() Cohort { return 3 - c }

// EventKind is a step reported to [Config.Probe].
type EventKind uint8

// Probe events, in the order a thread meets them.
const (
	// EvEnqueued: the thread's descriptor is on its cohort's tail (Prev says whether the queue
	// was empty).
	EvEnqueued EventKind = iota + 1
	// EvVictim: the thread is about to write victim := its cohort (initial Peterson or
	// pReacquire) and then wait. Reported before the write is issued, so that bypass counts
	// started here are upper bounds of the counts after the write takes effect.
	EvVictim
	// EvEnter: the thread is in the critical section with Budget.
	EvEnter
	// EvExit: the thread is about to release.
	EvExit
	// EvLinked: a queued thread wrote its predecessor's next pointer.
	EvLinked
	// EvWaitNext: a releasing holder found a successor on the tail that has not linked itself
	// yet and waits for its next pointer (the MCS unlock race).
	EvWaitNext
)

// Event is one probe report.
type Event struct {
	Kind   EventKind
	Handle int
	Cohort Cohort
	Lock   verbs.Ptr
	// Budget is the holder's budget (EvEnter, EvExit); a successor would receive Budget-1.
	Budget int64
	// Prev is the previous tail value (EvEnqueued).
	Prev verbs.Ptr
	// Passed is true on EvEnter when the lock came from a predecessor of the same cohort
	// without going through Peterson.
	Passed bool
	// Reacquired is true on EvVictim/EvEnter when a budget of 0 forced pReacquire.
	Reacquired bool
}

// Unlock variants.
const (
	UnlockCASFirst  = 0 // [S] Alg. 3: always CAS the tail first (the PlusCal model's order)
	UnlockNextFirst = 1 // [T] Alg. 2 / classic MCS: check next first, CAS only if it is null
)

// Config configures an ALock algorithm instance.
type Config struct {
	// LocalBudget is the local cohort's budget (kInitBudget). Default 5; must be >= 1.
	LocalBudget int64
	// RemoteBudget is the remote cohort's budget. Default 20; must be >= 1.
	RemoteBudget int64
	// UnlockVariant selects UnlockCASFirst (default) or UnlockNextFirst.
	UnlockVariant int
	// Probe, if set, is called synchronously at each EventKind; it may block to inject delays.
	Probe func(Event)
	// UnsafeUnawaitedVictim is negative control (c) of docs/rdma.md: remote leaders
	// post rWrite(victim) unsignaled and read the local tail without waiting for it. It breaks
	// mutual exclusion under a faithful emulator. Never set it outside tests.
	UnsafeUnawaitedVictim bool
}

func (c *Config) validate() error {
	if c.LocalBudget == 0 {
		c.LocalBudget = 5
	}
	if c.RemoteBudget == 0 {
		c.RemoteBudget = 20
	}
	if c.LocalBudget < 1 || c.RemoteBudget < 1 {
		return fmt.Errorf("alock: budgets must be >= 1 (local %d, remote %d)", c.LocalBudget, c.RemoteBudget)
	}
	if c.UnlockVariant != UnlockCASFirst && c.UnlockVariant != UnlockNextFirst {
		return fmt.Errorf("alock: unknown unlock variant %d", c.UnlockVariant)
	}
	return nil
}

// ALock is an algorithm instance (budgets and options shared by its handles).
type ALock struct {
	cfg     Config
	handles atomic.Int64
}

// New validates cfg and returns the algorithm.
func New(cfg Config) (*ALock, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &ALock{cfg: cfg}, nil
}

// Config returns the validated configuration.
func (a *ALock) Config() Config { return a.cfg }

// Name implements locks.Algorithm.
func (a *ALock) Name() string {
	if a.cfg.UnsafeUnawaitedVictim {
		return "alock-unawaited-victim"
	}
	return "alock"
}

// NewLocker implements locks.Algorithm.
func (a *ALock) NewLocker(ep verbs.Endpoint) (locks.Locker, error) { return a.NewHandle(ep) }

var _ locks.Algorithm = (*ALock)(nil)

// Handle is one thread's ALock state: its endpoint and its two descriptors (both in the
// thread's own node's region).
type Handle struct {
	a      *ALock
	ep     verbs.Endpoint
	m      verbs.Memory
	id     int
	ld, rd verbs.Ptr
	// held is the cohort of the lock currently held (0 if none).
	held Cohort
}

// NewHandle allocates the thread's descriptors on ep's node.
func (a *ALock) NewHandle(ep verbs.Endpoint) (*Handle, error) {
	d, err := ep.Alloc(2 * Size)
	if err != nil {
		return nil, fmt.Errorf("alock descriptors: %w", err)
	}
	h := &Handle{a: a, ep: ep, m: ep.Local(), id: int(a.handles.Add(1)), ld: d, rd: d.Add(Size)}
	return h, nil
}

// Descriptors returns the handle's local-cohort and remote-cohort descriptors.
func (h *Handle) Descriptors() (local, remote verbs.Ptr) { return h.ld, h.rd }

// ID is the handle's number in probe events.
func (h *Handle) ID() int { return h.id }

// ErrNotHeld is returned by Unlock when the handle does not hold a lock.
var ErrNotHeld = errors.New("alock: unlock of a lock not held by this handle")

// ErrBusy is returned by Lock when the handle already holds a lock.
var ErrBusy = errors.New("alock: handle already holds a lock")

func (h *Handle) probe(ev Event) {
	if h.a.cfg.Probe != nil {
		ev.Handle = h.id
		h.a.cfg.Probe(ev)
	}
}

// Lock acquires the ALock at l, as a local-cohort thread if l is on the handle's node and as a
// remote-cohort thread otherwise.
func (h *Handle) Lock(l verbs.Ptr) error {
	if h.held != 0 {
		return ErrBusy
	}
	var err error
	if l.Node() == h.ep.Node() {
		h.lockLocal(l)
		h.held = Local
	} else if err = h.lockRemote(l); err == nil {
		h.held = Remote
	}
	return err
}

// Unlock releases the ALock at l.
func (h *Handle) Unlock(l verbs.Ptr) error {
	if h.held == 0 {
		return ErrNotHeld
	}
	h.held = 0
	if l.Node() == h.ep.Node() {
		h.unlockLocal(l)
		return nil
	}
	return h.unlockRemote(l)
}

func budgetOf(v uint64) int64 { return int64(v) }

// ---- local cohort: CPU atomics only ----

func (h *Handle) lockLocal(l verbs.Ptr) {
	m, lo, d := h.m, l.Offset(), h.ld.Offset()
	m.Store(d+offNext, 0)
	m.Store(d+offBudget, uint64(^uint64(0))) // -1: waiting
	prev := m.Load(lo + OffTailL)
	for !m.CAS(lo+OffTailL, prev, uint64(h.ld)) {
		prev = m.Load(lo + OffTailL)
	}
	h.probe(Event{Kind: EvEnqueued, Cohort: Local, Lock: l, Prev: verbs.Ptr(prev)})
	if prev == 0 {
		m.Store(d+offBudget, uint64(h.a.cfg.LocalBudget))
		h.petersonLocal(l, false)
		h.probe(Event{Kind: EvEnter, Cohort: Local, Lock: l, Budget: h.a.cfg.LocalBudget})
		return
	}
	m.Store(verbs.Ptr(prev).Offset()+offNext, uint64(h.ld))
	h.probe(Event{Kind: EvLinked, Cohort: Local, Lock: l, Prev: verbs.Ptr(prev)})
	m.Await(func() bool { return budgetOf(m.Load(d+offBudget)) >= 0 }, d+offBudget)
	b := budgetOf(m.Load(d + offBudget))
	if b == 0 {
		h.petersonLocal(l, true)
		m.Store(d+offBudget, uint64(h.a.cfg.LocalBudget))
		h.probe(Event{Kind: EvEnter, Cohort: Local, Lock: l, Budget: h.a.cfg.LocalBudget, Reacquired: true})
		return
	}
	h.probe(Event{Kind: EvEnter, Cohort: Local, Lock: l, Budget: b, Passed: true})
}

// petersonLocal is Alg. 4 for a local leader: victim := LOCAL, then wait while tail_r is
// non-null and victim is still LOCAL. Go atomics are sequentially consistent, which gives the
// store->load ordering Peterson needs.
func (h *Handle) petersonLocal(l verbs.Ptr, re bool) {
	m, lo := h.m, l.Offset()
	h.probe(Event{Kind: EvVictim, Cohort: Local, Lock: l, Reacquired: re})
	m.Store(lo+OffVictim, VictimLocal)
	m.Await(func() bool {
		return m.Load(lo+OffTailR) == 0 || m.Load(lo+OffVictim) != VictimLocal
	}, lo+OffTailR, lo+OffVictim)
}

func (h *Handle) unlockLocal(l verbs.Ptr) {
	m, lo, d := h.m, l.Offset(), h.ld.Offset()
	b := budgetOf(m.Load(d + offBudget))
	h.probe(Event{Kind: EvExit, Cohort: Local, Lock: l, Budget: b})
	if h.a.cfg.UnlockVariant == UnlockCASFirst || m.Load(d+offNext) == 0 {
		if m.CAS(lo+OffTailL, uint64(h.ld), 0) {
			return
		}
	}
	if m.Load(d+offNext) == 0 {
		h.probe(Event{Kind: EvWaitNext, Cohort: Local, Lock: l, Budget: b})
	}
	m.Await(func() bool { return m.Load(d+offNext) != 0 }, d+offNext)
	next := verbs.Ptr(m.Load(d + offNext))
	m.Store(next.Offset()+offBudget, uint64(b-1))
}

// ---- remote cohort: verbs only on the lock's words and on other threads' descriptors ----

func (h *Handle) lockRemote(l verbs.Ptr) error {
	m, d := h.m, h.rd.Offset()
	m.Store(d+offNext, 0)
	m.Store(d+offBudget, uint64(^uint64(0)))
	prev, err := locks.Swap(h.ep, l.Add(OffTailR), uint64(h.rd))
	if err != nil {
		return fmt.Errorf("alock remote enqueue on %v: %w", l, err)
	}
	h.probe(Event{Kind: EvEnqueued, Cohort: Remote, Lock: l, Prev: verbs.Ptr(prev)})
	if prev == 0 {
		m.Store(d+offBudget, uint64(h.a.cfg.RemoteBudget))
		if err := h.petersonRemote(l, false); err != nil {
			return err
		}
		h.probe(Event{Kind: EvEnter, Cohort: Remote, Lock: l, Budget: h.a.cfg.RemoteBudget})
		return nil
	}
	if err := verbs.Write(h.ep, verbs.Ptr(prev).Add(offNext), uint64(h.rd)); err != nil {
		return fmt.Errorf("alock remote link on %v: %w", l, err)
	}
	h.probe(Event{Kind: EvLinked, Cohort: Remote, Lock: l, Prev: verbs.Ptr(prev)})
	m.Await(func() bool { return budgetOf(m.Load(d+offBudget)) >= 0 }, d+offBudget) // spins locally
	b := budgetOf(m.Load(d + offBudget))
	if b == 0 {
		if err := h.petersonRemote(l, true); err != nil {
			return err
		}
		m.Store(d+offBudget, uint64(h.a.cfg.RemoteBudget))
		h.probe(Event{Kind: EvEnter, Cohort: Remote, Lock: l, Budget: h.a.cfg.RemoteBudget, Reacquired: true})
		return nil
	}
	h.probe(Event{Kind: EvEnter, Cohort: Remote, Lock: l, Budget: b, Passed: true})
	return nil
}

// petersonRemote is Alg. 4 for a remote leader. The victim rWrite completes before the local
// tail is read (store->load order over RDMA); each poll then reads tail_l and victim with one
// three-word RDMA READ (bytes 16 to 40 of the lock), as the authors' code reads the whole lock in
// one READ. A multi-word READ is atomic per word only, so the two words may be read in either
// order; rdma/model explores both.
func (h *Handle) petersonRemote(l verbs.Ptr, re bool) error {
	h.probe(Event{Kind: EvVictim, Cohort: Remote, Lock: l, Reacquired: re})
	if h.a.cfg.UnsafeUnawaitedVictim {
		err := h.ep.PostSend(verbs.WorkRequest{ID: h.ep.NextID(), Op: verbs.OpWrite, Remote: l.Add(OffVictim), Value: VictimRemote})
		if err != nil {
			return fmt.Errorf("alock victim on %v: %w", l, err)
		}
	} else if err := verbs.Write(h.ep, l.Add(OffVictim), VictimRemote); err != nil {
		return fmt.Errorf("alock victim on %v: %w", l, err)
	}
	const words = (OffVictim-OffTailL)/8 + 1
	poll := [1]verbs.WorkRequest{{Op: verbs.OpRead, Remote: l.Add(OffTailL), Words: words}}
	for {
		cs, err := verbs.Batch(h.ep, poll[:])
		if err != nil {
			return fmt.Errorf("alock peterson on %v: %w", l, err)
		}
		if err := cs[0].Err; err != nil {
			return fmt.Errorf("alock peterson on %v: %w", l, err)
		}
		w := cs[0].Words
		if len(w) != words {
			return fmt.Errorf("alock peterson on %v: read %d words, want %d", l, len(w), words)
		}
		if w[0] == 0 || w[words-1] != VictimRemote {
			return nil
		}
		poll[0].Spin = true
	}
}

func (h *Handle) unlockRemote(l verbs.Ptr) error {
	m, d := h.m, h.rd.Offset()
	b := budgetOf(m.Load(d + offBudget))
	h.probe(Event{Kind: EvExit, Cohort: Remote, Lock: l, Budget: b})
	if h.a.cfg.UnlockVariant == UnlockCASFirst || m.Load(d+offNext) == 0 {
		old, err := verbs.CAS(h.ep, l.Add(OffTailR), uint64(h.rd), 0)
		if err != nil {
			return fmt.Errorf("alock remote unlock on %v: %w", l, err)
		}
		if old == uint64(h.rd) {
			return nil
		}
	}
	if m.Load(d+offNext) == 0 {
		h.probe(Event{Kind: EvWaitNext, Cohort: Remote, Lock: l, Budget: b})
	}
	m.Await(func() bool { return m.Load(d+offNext) != 0 }, d+offNext) // wait for the successor's link
	next := verbs.Ptr(m.Load(d + offNext))
	if err := verbs.Write(h.ep, next.Add(offBudget), uint64(b-1)); err != nil {
		return fmt.Errorf("alock remote pass on %v: %w", l, err)
	}
	return nil
}

// Table is N ALocks laid out contiguously in one node's registered memory.
type Table struct {
	base verbs.Ptr
	n    int
}

// NewTable allocates n zeroed ALocks in ep's node's region.
func NewTable(ep verbs.Endpoint, n int) (*Table, error) {
	if n < 1 {
		return nil, fmt.Errorf("alock: table of %d locks", n)
	}
	base, err := ep.Alloc(uint64(n) * Size)
	if err != nil {
		return nil, fmt.Errorf("alock table of %d: %w", n, err)
	}
	return &Table{base: base, n: n}, nil
}

// OpenTable describes a table another node allocated at base.
func OpenTable(base verbs.Ptr, n int) *Table { return &Table{base: base, n: n} }

// Base is the pointer to lock 0; ship it with Len to remote nodes.
func (t *Table) Base() verbs.Ptr { return t.base }

// Len is the number of locks.
func (t *Table) Len() int { return t.n }

// Node is the table's home node.
func (t *Table) Node() verbs.NodeID { return t.base.Node() }

// Lock is the pointer to lock i (0 <= i < Len).
func (t *Table) Lock(i int) verbs.Ptr {
	if i < 0 || i >= t.n {
		panic(fmt.Sprintf("alock: lock %d outside table of %d", i, t.n))
	}
	return t.base.Add(uint64(i) * Size)
}
