// Package emu is a real-time emulated RDMA NIC: every node has a registered region of 8-byte
// words and a NIC that executes one-sided verbs on it for local (loopback) and remote initiators.
// Threads are ordinary goroutines, so the race detector sees every access.
//
// Semantics (docs/rdma.md, Emulator semantics):
//  1. Two access paths per word: CPU atomics through [verbs.Memory] for threads on the word's
//     node, and the NIC for verbs. Regions are disjoint and addressed by verbs.Ptr.
//  2. A NIC atomic (CAS, FAA, masked CAS, masked FAA; semantics in verbs.Apply) is a plain atomic
//     load, a window ([Config.AtomicWindow]), then a conditional plain atomic store: a local
//     store or CPU CAS landing in the window is lost or makes the NIC CAS succeed on a stale
//     value. It is never implemented with the CPU's CAS.
//  3. NIC atomics to one node are serialized by that node's atomic unit (a mutex), whoever
//     initiated them, so they are atomic among themselves.
//  4. Every aligned 8-byte word of a READ/WRITE is one atomic load/store: it never tears. A
//     multi-word READ/WRITE is applied word by word and is not atomic as a whole.
//  5. CPU read-modify-writes are atomic with NIC reads and writes for the same reason.
//  6. Completion is asynchronous: requests may be delayed ([Config.OpDelay]) but keep per-QP
//     order (an endpoint's requests to one node are applied in posting order); unsignaled
//     requests may be applied late and out of order ([Config.UnsignaledDelay], fault injection
//     that breaks per-QP order on purpose). A failed unsignaled request puts its queue pair in
//     error: the next signaled completion of that queue pair reports the error.
//  7. Go's atomics are sequentially consistent; the NIC applying a verb is another goroutine's
//     (or the initiator's) atomic access, so visibility is that of another core.
//  8. Loopback goes through the node's own NIC (same atomic unit, same accounting).
//  9. Descriptors are allocated by each thread in its own node's region ([Endpoint.Alloc]).
//  10. Every endpoint counts its reads, writes, CAS, FAA, loopback, remote and local spins, and a
//     [verbs.Tracer] sees every access with its class for audits.
//  11. Cost: [Config.Latency] and [Config.NICRate] apply wire latency and a per-NIC message rate
//     shared by outbound, inbound and loopback verbs in real time (coarse: sleeps). The cost
//     model used for measurements is rdma/sim's, in virtual time, because wall-clock costs on
//     a shared machine are noise.
//
// Nodes of one [Cluster] live in one process; [Node.Serve] and [Node.Connect] carry verbs over
// TCP so that separate processes can share a region (and a lock table).
package emu

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Config configures every node of a cluster (or one standalone node).
type Config struct {
	// RegionSize is the size in bytes of each node's registered region. Default 1 MiB.
	RegionSize uint64
	// AtomicWindow is how long a NIC CAS/FAA waits between its read and its conditional write.
	// Zero still leaves the window open (the read and write are separate accesses).
	AtomicWindow time.Duration
	// AtomicWindowYields is how many times the NIC yields the processor inside the window; it
	// widens the race without sleeping. Default 0.
	AtomicWindowYields int
	// OnAtomicWindow, if set, is called inside every NIC CAS/FAA window with the target word
	// (tests use it to land a CPU access in the window deterministically).
	OnAtomicWindow func(verbs.Ptr)
	// OpDelay, if positive, delays every verb by a random duration in [0, OpDelay) before the NIC
	// applies it (signaled requests still complete before Wait returns).
	OpDelay time.Duration
	// UnsignaledDelay, if positive, applies each unsignaled request after a random delay in
	// [0, UnsignaledDelay) on its own goroutine, so it is reordered with later accesses, including
	// later requests of the same queue pair (fault injection: it breaks per-QP order).
	UnsignaledDelay time.Duration
	// Seed seeds the delay generator.
	Seed int64
	// Latency, if positive, is a real-time cost: the initiator sleeps this long before a verb
	// reaches the target NIC and again before its completion (one way each).
	Latency time.Duration
	// NICRate, if positive, bounds every NIC to NICRate verbs per second in real time, shared by
	// its outbound, inbound and loopback verbs (a loopback verb passes its NIC twice). Verbs
	// wait for a slot on the initiator's NIC and then on the target's.
	NICRate float64
	// Clock is the time source for Latency, NICRate, delays and Endpoint.Now. Default: the
	// wall clock.
	Clock Clock
	// Tracer, if set, sees every access to every region.
	Tracer verbs.Tracer
	// Log receives transport events. Default: discard.
	Log *slog.Logger
}

func (c *Config) validate() error {
	if c.RegionSize == 0 {
		c.RegionSize = 1 << 20
	}
	if c.RegionSize%64 != 0 || c.RegionSize < 128 {
		return fmt.Errorf("emu: region size %d must be a multiple of 64 and at least 128", c.RegionSize)
	}
	if c.AtomicWindow < 0 || c.OpDelay < 0 || c.UnsignaledDelay < 0 || c.AtomicWindowYields < 0 || c.Latency < 0 || c.NICRate < 0 {
		return errors.New("emu: negative delay or rate")
	}
	if c.Clock == nil {
		c.Clock = wallClock{}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Clock is the real-time source of the emulator (injected so tests control time).
type Clock interface {
	Now() time.Time
	Sleep(d time.Duration)
}

type wallClock struct{}

func (wallClock) Now() time.Time        { return time.Now() }
func (wallClock) Sleep(d time.Duration) { time.Sleep(d) }

// target executes verbs on one node's region: the node's own NIC or a TCP connection to it.
type target interface {
	execute(wr verbs.WorkRequest, from verbs.NodeID) (uint64, []uint64, error)
}

// Node is one emulated machine: a registered region and its NIC.
type Node struct {
	id    verbs.NodeID
	cfg   Config
	words []uint64
	start time.Time

	allocMu sync.Mutex
	next    uint64 // bump allocator, bytes

	atomicMu sync.Mutex // the NIC's atomic unit

	paceMu   sync.Mutex
	nextSlot time.Time // NICRate pacing: when the NIC can take its next verb

	rngMu sync.Mutex
	rng   *rand.Rand

	peersMu sync.RWMutex
	peers   map[verbs.NodeID]target

	async  sync.WaitGroup // delayed verbs in flight
	closed atomic.Bool
	srv    serverState
}

// NewNode creates a standalone node (for use with Serve/Connect across processes).
func NewNode(cfg Config, id verbs.NodeID) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Node{
		id: id, cfg: cfg, words: make([]uint64, cfg.RegionSize/8), next: 64, start: cfg.Clock.Now(),
		rng: rand.New(rand.NewSource(cfg.Seed + int64(id))), peers: map[verbs.NodeID]target{},
	}
	n.peers[id] = n
	return n, nil
}

// ID is the node id.
func (n *Node) ID() verbs.NodeID { return n.id }

// Region returns a pointer to the word at byte offset off of this node.
func (n *Node) Ptr(off uint64) verbs.Ptr { return verbs.MakePtr(n.id, off) }

// Alloc reserves size bytes (rounded up to 64, 64-aligned) of zeroed memory.
func (n *Node) Alloc(size uint64) (verbs.Ptr, error) {
	size = (size + 63) &^ 63
	n.allocMu.Lock()
	defer n.allocMu.Unlock()
	if n.next+size > uint64(len(n.words))*8 {
		return 0, fmt.Errorf("alloc %d bytes on node %d: %w", size, n.id, verbs.ErrOOM)
	}
	off := n.next
	n.next += size
	return verbs.MakePtr(n.id, off), nil
}

// Load reads a word of this node's region directly (for tests and inspection).
func (n *Node) Load(off uint64) uint64 { return atomic.LoadUint64(&n.words[off/8]) }

// NewEndpoint creates a thread endpoint on this node.
func (n *Node) NewEndpoint() *Endpoint {
	e := &Endpoint{node: n, done: map[uint64]verbs.Completion{}}
	e.mem = localMem{n: n, st: &e.stats}
	return e
}

// Close waits for delayed verbs and stops the TCP server and connections, if any.
func (n *Node) Close() error {
	if n.closed.Swap(true) {
		return nil
	}
	n.async.Wait()
	err := n.srv.close()
	n.peersMu.Lock()
	for id, t := range n.peers {
		if c, ok := t.(*tcpClient); ok {
			c.close()
			delete(n.peers, id)
		}
	}
	n.peersMu.Unlock()
	return err
}

func (n *Node) route(id verbs.NodeID) (target, error) {
	n.peersMu.RLock()
	t, ok := n.peers[id]
	n.peersMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("node %d: %w", id, verbs.ErrNoNode)
	}
	return t, nil
}

func (n *Node) randDur(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	n.rngMu.Lock()
	defer n.rngMu.Unlock()
	return time.Duration(n.rng.Int63n(int64(max)))
}

func (n *Node) trace(off uint64, cl verbs.Class, op verbs.Opcode, from verbs.NodeID) {
	if n.cfg.Tracer != nil {
		n.cfg.Tracer(verbs.Access{Word: n.Ptr(off), Class: cl, Op: op, Initiator: from})
	}
}

// execute is the NIC applying a verb to this node's region. It returns the word read or the old
// value of an atomic, and every word of a multi-word READ.
func (n *Node) execute(wr verbs.WorkRequest, from verbs.NodeID) (uint64, []uint64, error) {
	if err := verbs.CheckRequest(&wr, uint64(len(n.words))*8); err != nil {
		return 0, nil, err
	}
	n.pace() // inbound (or loopback) through this NIC
	off := wr.Remote.Offset()
	w := &n.words[off/8]
	switch {
	case wr.Op == verbs.OpRead && wr.Words > 1:
		out := make([]uint64, wr.Words)
		for i := range out {
			n.trace(off+8*uint64(i), verbs.ClassRemote, wr.Op, from)
			out[i] = atomic.LoadUint64(&n.words[off/8+uint64(i)])
		}
		return out[0], out, nil
	case wr.Op == verbs.OpRead:
		n.trace(off, verbs.ClassRemote, wr.Op, from)
		return atomic.LoadUint64(w), nil, nil
	case wr.Op == verbs.OpWrite && len(wr.Data) > 0:
		for i, v := range wr.Data {
			n.trace(off+8*uint64(i), verbs.ClassRemote, wr.Op, from)
			atomic.StoreUint64(&n.words[off/8+uint64(i)], v)
		}
		return 0, nil, nil
	case wr.Op == verbs.OpWrite:
		n.trace(off, verbs.ClassRemote, wr.Op, from)
		atomic.StoreUint64(w, wr.Value)
		return 0, nil, nil
	}
	n.trace(off, verbs.ClassRemote, wr.Op, from)
	n.atomicMu.Lock()
	defer n.atomicMu.Unlock()
	old := atomic.LoadUint64(w) // the NIC reads the word over PCIe ...
	n.window(wr.Remote)         // ... the line is not locked meanwhile ...
	if v, ok := verbs.Apply(&wr, old); ok {
		atomic.StoreUint64(w, v) // ... and writes back what it computed from what it read
	}
	return old, nil, nil
}

func (n *Node) window(p verbs.Ptr) {
	if n.cfg.OnAtomicWindow != nil {
		n.cfg.OnAtomicWindow(p)
	}
	for i := 0; i < n.cfg.AtomicWindowYields; i++ {
		runtime.Gosched()
	}
	if n.cfg.AtomicWindow > 0 {
		n.cfg.Clock.Sleep(n.cfg.AtomicWindow)
	}
}

// Cluster is a set of in-process nodes with ids 0..n-1 that reach each other directly.
type Cluster struct {
	nodes []*Node
}

// NewCluster creates n connected in-process nodes.
func NewCluster(cfg Config, n int) (*Cluster, error) {
	if n < 1 || n > 1<<16 {
		return nil, fmt.Errorf("emu: %d nodes out of range", n)
	}
	c := &Cluster{}
	for i := 0; i < n; i++ {
		nd, err := NewNode(cfg, verbs.NodeID(i))
		if err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, nd)
	}
	for _, a := range c.nodes {
		for _, b := range c.nodes {
			a.peers[b.id] = b
		}
	}
	return c, nil
}

// Node returns node i.
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

// Len is the number of nodes.
func (c *Cluster) Len() int { return len(c.nodes) }

// Close closes every node.
func (c *Cluster) Close() error {
	var errs []error
	for _, n := range c.nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}

// Endpoint is a thread's queue pairs and completion queue on a node. It implements
// verbs.Endpoint and must be used by one goroutine at a time.
type Endpoint struct {
	node   *Node
	stats  verbs.Stats
	nextID atomic.Uint64
	mem    localMem
	// qpTail is, per target node, the applied signal of the last request posted to it that may
	// still be in flight (per-QP order); touched only by the posting goroutine.
	qpTail map[verbs.NodeID]chan struct{}

	mu    sync.Mutex
	cond  *sync.Cond
	done  map[uint64]verbs.Completion
	qpErr map[verbs.NodeID]error // first error of an unsignaled request, per queue pair
}

var _ verbs.Endpoint = (*Endpoint)(nil)

// Node implements verbs.Endpoint.
func (e *Endpoint) Node() verbs.NodeID { return e.node.id }

// Local implements verbs.Endpoint.
func (e *Endpoint) Local() verbs.Memory { return e.mem }

// Alloc implements verbs.Endpoint.
func (e *Endpoint) Alloc(size uint64) (verbs.Ptr, error) { return e.node.Alloc(size) }

// Now implements verbs.Endpoint: nanoseconds since the node was created.
func (e *Endpoint) Now() int64 { return int64(e.node.cfg.Clock.Now().Sub(e.node.start)) }

// Stats implements verbs.Endpoint.
func (e *Endpoint) Stats() *verbs.Stats { return &e.stats }

// Spend implements verbs.Spender: the thread sleeps ns on the emulator's clock.
func (e *Endpoint) Spend(ns int64) {
	if ns > 0 {
		e.node.cfg.Clock.Sleep(time.Duration(ns))
	}
}

// NextID implements verbs.Endpoint.
func (e *Endpoint) NextID() uint64 { return e.nextID.Add(1) }

// PostSend implements verbs.Endpoint. Requests without a delay and without an unfinished
// predecessor on their queue pair are applied before PostSend returns; the others are applied
// by goroutines that keep per-QP order (each waits for its predecessor on the same queue pair).
// Unsignaled requests under UnsignaledDelay are applied independently, out of order.
func (e *Endpoint) PostSend(wrs ...verbs.WorkRequest) error {
	if e.node.closed.Load() {
		return verbs.ErrClosed
	}
	for _, wr := range wrs {
		e.stats.Add(wr, e.node.id)
		to := wr.Remote.Node()
		t, err := e.node.route(to)
		if err != nil {
			return err
		}
		d := e.node.randDur(e.node.cfg.OpDelay)
		if !wr.Signaled && e.node.cfg.UnsignaledDelay > 0 {
			d += e.node.randDur(e.node.cfg.UnsignaledDelay)
			e.node.async.Add(1)
			go func() {
				defer e.node.async.Done()
				e.node.cfg.Clock.Sleep(d)
				e.run(t, to, wr)
			}()
			continue
		}
		prev := e.qpTail[to]
		if prev != nil {
			select {
			case <-prev:
				prev = nil
			default:
			}
		}
		if d == 0 && prev == nil {
			e.run(t, to, wr)
			continue
		}
		applied := make(chan struct{})
		if e.qpTail == nil {
			e.qpTail = map[verbs.NodeID]chan struct{}{}
		}
		e.qpTail[to] = applied
		e.node.async.Add(1)
		go func() {
			defer e.node.async.Done()
			defer close(applied)
			e.node.cfg.Clock.Sleep(d)
			if prev != nil {
				<-prev
			}
			e.run(t, to, wr)
		}()
	}
	return nil
}

// pace waits for this NIC's next slot under NICRate.
func (n *Node) pace() {
	if n.cfg.NICRate <= 0 {
		return
	}
	step := time.Duration(float64(time.Second) / n.cfg.NICRate)
	now := n.cfg.Clock.Now()
	n.paceMu.Lock()
	slot := n.nextSlot
	if slot.Before(now) {
		slot = now
	}
	n.nextSlot = slot.Add(step)
	n.paceMu.Unlock()
	if d := slot.Sub(now); d > 0 {
		n.cfg.Clock.Sleep(d)
	}
}

// run carries one request to its target, stores its result in Dest and delivers its completion.
func (e *Endpoint) run(t target, to verbs.NodeID, wr verbs.WorkRequest) {
	cfg := &e.node.cfg
	e.node.pace() // outbound through the own NIC
	if cfg.Latency > 0 {
		cfg.Clock.Sleep(cfg.Latency)
	}
	v, words, err := t.execute(wr, e.node.id)
	if cfg.Latency > 0 {
		cfg.Clock.Sleep(cfg.Latency)
	}
	if err == nil && wr.Dest != nil {
		if words != nil {
			copy(wr.Dest, words)
		} else if wr.Op != verbs.OpWrite {
			wr.Dest[0] = v
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !wr.Signaled {
		if err != nil {
			e.node.cfg.Log.Warn("unsignaled verb failed", "wr", wr.ID, "err", err)
			if e.qpErr == nil {
				e.qpErr = map[verbs.NodeID]error{}
			}
			if e.qpErr[to] == nil {
				e.qpErr[to] = fmt.Errorf("earlier unsignaled %v on this queue pair: %w", wr.Op, err)
			}
		}
		return
	}
	if err == nil && e.qpErr[to] != nil {
		err = e.qpErr[to]
		delete(e.qpErr, to)
	}
	if e.cond == nil {
		e.cond = sync.NewCond(&e.mu)
	}
	e.done[wr.ID] = verbs.Completion{ID: wr.ID, Op: wr.Op, Value: v, Words: words, Err: err}
	e.cond.Broadcast()
}

// Wait implements verbs.Endpoint.
func (e *Endpoint) Wait(id uint64) (verbs.Completion, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cond == nil {
		e.cond = sync.NewCond(&e.mu)
	}
	for {
		if c, ok := e.done[id]; ok {
			delete(e.done, id)
			return c, nil
		}
		if id == 0 || id > e.nextID.Load() {
			return verbs.Completion{}, fmt.Errorf("wait %d: %w", id, verbs.ErrNotFound)
		}
		e.cond.Wait()
	}
}

// localMem is CPU access to a node's region.
type localMem struct {
	n  *Node
	st *verbs.Stats
}

func (m localMem) w(off uint64, op verbs.Opcode) *uint64 {
	if off%8 != 0 || off/8 >= uint64(len(m.n.words)) {
		panic(fmt.Sprintf("emu: local access to bad offset %#x on node %d", off, m.n.id))
	}
	m.st.LocalOps.Add(1)
	m.n.trace(off, verbs.ClassLocal, op, m.n.id)
	return &m.n.words[off/8]
}

func (m localMem) Load(off uint64) uint64 { return atomic.LoadUint64(m.w(off, verbs.OpRead)) }
func (m localMem) Store(off, v uint64)    { atomic.StoreUint64(m.w(off, verbs.OpWrite), v) }
func (m localMem) CAS(off, old, new uint64) bool {
	return atomic.CompareAndSwapUint64(m.w(off, verbs.OpCAS), old, new)
}
func (m localMem) FAA(off, d uint64) uint64 { return atomic.AddUint64(m.w(off, verbs.OpFAA), d) - d }
func (m localMem) Await(cond func() bool, _ ...uint64) {
	for !cond() {
		m.st.LocalSpins.Add(1)
		runtime.Gosched()
	}
}
