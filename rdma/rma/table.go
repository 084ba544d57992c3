package rma

import (
	"errors"
	"fmt"
	"sync"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// TableParams are the parameters of an RMA-RW lock table; every node using the table must use
// the same ones (a lock server ships them to its clients).
type TableParams struct {
	// Counters is the number of physical reader counters per lock, all on the table's node
	// (a reader on node n uses counter n mod Counters). Default 1; at most 64.
	Counters int
	// TL holds T_L,1 (the machine level: writer hand-overs between nodes before the readers'
	// turn) and T_L,2 (consecutive writers of one node). Zero fields take DefaultTLRoot and
	// DefaultTLLeaf; at most 65535.
	TL [2]int
	// TR is the reader threshold (default DefaultTR; at most 65535).
	TR int
}

// Validate fills in defaults and checks ranges.
func (p *TableParams) Validate() error {
	if p.Counters == 0 {
		p.Counters = 1
	}
	if p.TL[0] == 0 {
		p.TL[0] = DefaultTLRoot
	}
	if p.TL[1] == 0 {
		p.TL[1] = DefaultTLLeaf
	}
	if p.TR == 0 {
		p.TR = DefaultTR
	}
	if p.Counters < 1 || p.Counters > 64 {
		return fmt.Errorf("rma table: %d counters per lock (1..64)", p.Counters)
	}
	for i, t := range p.TL {
		if t < 1 || t > 65535 {
			return fmt.Errorf("rma table: T_L,%d = %d (1..65535)", i+1, t)
		}
	}
	if p.TR < 1 || p.TR > 65535 {
		return fmt.Errorf("rma table: T_R = %d (1..65535)", p.TR)
	}
	return nil
}

// Table is N RMA-RW locks in one node's registered memory (the home node, a lock server's),
// used by processes on any node. The lock tree has N = 2 levels: each node that uses the table
// is an element with its own node-level queue per lock, and the machine-level queue and the
// counters of every lock live on the home node.
//
// Lock i is a block of 64*(1+Counters) bytes at Base+i*BlockSize: the machine-level TAIL in
// its first word, counter k (ARRIVE, DEPART) at 64*(1+k). Each node keeps, per lock it uses,
// a 128-byte block in its own memory, allocated on first use: its node-level TAIL at 0 and its
// queue node in the machine-level queue at 64. Every process has one queue node of its own (a
// handle holds one lock at a time, so its queue node serves every lock).
//
// Access classes: the machine-level tail and the counters are only read-modify-written by
// NICs (loopback on the home node); node-level tails only by their node's CPUs.
type Table struct {
	base verbs.Ptr
	n    int
	p    TableParams
	sh   *Shape
}

// BlockSize is the size of one lock of a table with these parameters.
func (p TableParams) BlockSize() uint64 { return 64 * uint64(1+p.Counters) }

// NewTable allocates n zeroed locks in ep's node's region.
func NewTable(ep verbs.Endpoint, n int, p TableParams) (*Table, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("rma table of %d locks", n)
	}
	base, err := ep.Alloc(uint64(n) * p.BlockSize())
	if err != nil {
		return nil, fmt.Errorf("rma table of %d locks: %w", n, err)
	}
	return OpenTable(base, n, p)
}

// OpenTable describes a table another node allocated at base.
func OpenTable(base verbs.Ptr, n int, p TableParams) (*Table, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// The machine only reads the levels, thresholds and counter count from the shape; the
	// topology fields are placeholders (positions are explicit, see TableNode.NewHandle).
	sh, err := NewShape(Config{Nodes: p.Counters, ProcsPerNode: 1, Elements: []int{1}, TL: p.TL[:],
		Readers: true, TDC: 1, TR: p.TR})
	if err != nil {
		return nil, err
	}
	return &Table{base: base, n: n, p: p, sh: sh}, nil
}

// Base is the pointer to lock 0; ship it with Len and Params to other nodes.
func (t *Table) Base() verbs.Ptr { return t.base }

// Len is the number of locks.
func (t *Table) Len() int { return t.n }

// Params are the table's parameters.
func (t *Table) Params() TableParams { return t.p }

// Node is the table's home node.
func (t *Table) Node() verbs.NodeID { return t.base.Node() }

func (t *Table) lock(i int) verbs.Ptr { return t.base.Add(uint64(i) * t.p.BlockSize()) }

// Busy reports, from the home node's memory (load reads only), whether lock i is held or
// wanted by a writer (its machine-level tail is set) or, with readers true, also by readers
// (some counter has an arrival without a departure). A snapshot; load must read a word of the
// home node.
func (t *Table) Busy(i int, readers bool, load func(verbs.Ptr) uint64) bool {
	l := t.lock(i)
	if load(l) != 0 {
		return true
	}
	if !readers {
		return false
	}
	for k := 0; k < t.p.Counters; k++ {
		c := l.Add(64 * uint64(1+k))
		if load(c.Add(offArrive)) != load(c.Add(offDepart)) {
			return true
		}
	}
	return false
}

// TableNode is one node's view of a table: its per-lock blocks. One per node and table,
// shared by the node's handles; safe for concurrent use.
type TableNode struct {
	t      *Table
	id     verbs.NodeID
	alloc  func(size uint64) (verbs.Ptr, error)
	mu     sync.Mutex
	blocks map[int]verbs.Ptr
}

// NodeView returns node id's view; alloc reserves zeroed memory in that node's region.
func (t *Table) NodeView(id verbs.NodeID, alloc func(size uint64) (verbs.Ptr, error)) *TableNode {
	return &TableNode{t: t, id: id, alloc: alloc, blocks: map[int]verbs.Ptr{}}
}

func (n *TableNode) block(i int) (verbs.Ptr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if b, ok := n.blocks[i]; ok {
		return b, nil
	}
	b, err := n.alloc(128)
	if err != nil {
		return 0, fmt.Errorf("rma table: node %d block of lock %d: %w", n.id, i, err)
	}
	if b.Node() != n.id {
		return 0, fmt.Errorf("rma table: node %d got memory of node %d", n.id, b.Node())
	}
	n.blocks[i] = b
	return b, nil
}

// TableHandle is one process of a table: it holds at most one lock at a time, and is not safe
// for concurrent use.
type TableHandle struct {
	n    *TableNode
	h    Handle
	res  tableResolver
	leaf verbs.Ptr
	held int // -1: none
}

// NewHandle allocates a process's queue node on the node and returns its handle; ep must be on
// the node.
func (n *TableNode) NewHandle(ep verbs.Endpoint) (*TableHandle, error) {
	if ep.Node() != n.id {
		return nil, fmt.Errorf("rma table: endpoint of node %d for node %d", ep.Node(), n.id)
	}
	leaf, err := n.alloc(blockBytes)
	if err != nil {
		return nil, fmt.Errorf("rma table: queue node: %w", err)
	}
	th := &TableHandle{n: n, leaf: leaf, held: -1}
	th.h = Handle{ep: ep, m: ep.Local(), node: ep.Node()}
	th.res.t = n.t
	th.h.r = &th.res
	return th, nil
}

// Errors of TableHandle.
var (
	ErrBadLock = errors.New("rma table: lock index out of range")
)

func (th *TableHandle) bind(i int) error {
	if i < 0 || i >= th.n.t.n {
		return fmt.Errorf("lock %d of %d: %w", i, th.n.t.n, ErrBadLock)
	}
	if th.held >= 0 {
		return ErrHeld
	}
	b, err := th.n.block(i)
	if err != nil {
		return err
	}
	th.res.i, th.res.blk = i, b
	id := uint64(th.n.id)
	p, err := NewProcAt(th.n.t.sh, Position{
		Elem:    [MaxLevels]uint64{0, id},
		Ref:     [MaxLevels]uint64{uint64(b.Add(64)), uint64(th.leaf)},
		Counter: id % uint64(th.n.t.p.Counters),
	})
	if err != nil {
		return err
	}
	th.h.p = p
	th.h.st = State{}
	return nil
}

// Lock takes lock i exclusively.
func (th *TableHandle) Lock(i int) error {
	if err := th.bind(i); err != nil {
		return err
	}
	if err := th.h.Lock(); err != nil {
		return err
	}
	th.held = i
	return nil
}

// RLock takes lock i shared.
func (th *TableHandle) RLock(i int) error {
	if err := th.bind(i); err != nil {
		return err
	}
	if err := th.h.RLock(); err != nil {
		return err
	}
	th.held = i
	return nil
}

// Unlock releases lock i, held exclusively or shared.
func (th *TableHandle) Unlock(i int) error {
	if th.held != i {
		return ErrNotHeld
	}
	var err error
	if th.h.Held() == Shared {
		err = th.h.RUnlock()
	} else {
		err = th.h.Unlock()
	}
	if err != nil {
		return err
	}
	th.held = -1
	return nil
}

// Held is the lock held (-1 if none) and its mode.
func (th *TableHandle) Held() (int, Mode) { return th.held, th.h.Held() }

// tableResolver maps the words of lock i for a handle on node blk.Node().
type tableResolver struct {
	t   *Table
	i   int
	blk verbs.Ptr
}

func (r *tableResolver) counter(k uint64) verbs.Ptr { return r.t.lock(r.i).Add(64 * (1 + k)) }

func (r *tableResolver) Ptr(w Word) verbs.Ptr {
	switch w.Kind {
	case WTail:
		if w.Lvl == 0 {
			return r.t.lock(r.i)
		}
		if w.Idx != uint64(r.blk.Node()) {
			panic(fmt.Sprintf("rma table: node %d touches node %d's tail", r.blk.Node(), w.Idx))
		}
		return r.blk
	case WNext:
		return verbs.Ptr(w.Idx).Add(offNext)
	case WStatus:
		return verbs.Ptr(w.Idx).Add(offStatus)
	case WArrive:
		return r.counter(w.Idx).Add(offArrive)
	case WDepart:
		return r.counter(w.Idx).Add(offDepart)
	}
	panic(fmt.Sprintf("rma table: word %v", w))
}

func (r *tableResolver) nicRMW(w Word) bool {
	switch w.Kind {
	case WTail:
		return w.Lvl == 0
	case WArrive, WDepart:
		return true
	}
	return false
}

func (r *tableResolver) levelLocal(lv int) bool { return lv == 1 }

// TablePool hands out handles of one node, for callers that hold many locks at once or act for
// many clients (a lock server's proxies). Each handle gets its own endpoint from the factory.
// Safe for concurrent use.
type TablePool struct {
	n     *TableNode
	newEP func() verbs.Endpoint
	mu    sync.Mutex
	free  []*TableHandle
	made  int
}

// NewPool returns a pool of the node's handles with endpoints made by newEP.
func (n *TableNode) NewPool(newEP func() verbs.Endpoint) *TablePool {
	return &TablePool{n: n, newEP: newEP}
}

// Get returns an idle handle, making one if none is idle.
func (p *TablePool) Get() (*TableHandle, error) {
	p.mu.Lock()
	if k := len(p.free); k > 0 {
		h := p.free[k-1]
		p.free = p.free[:k-1]
		p.mu.Unlock()
		return h, nil
	}
	p.made++
	p.mu.Unlock()
	return p.n.NewHandle(p.newEP())
}

// ErrPutHeld is returned by Put for a handle that still holds a lock.
var ErrPutHeld = errors.New("rma table: handle returned to the pool while holding a lock")

// Put returns a handle that holds no lock.
func (p *TablePool) Put(h *TableHandle) error {
	if h.held >= 0 || !h.h.st.Idle() {
		return ErrPutHeld
	}
	p.mu.Lock()
	p.free = append(p.free, h)
	p.mu.Unlock()
	return nil
}

// Size is the number of handles the pool made.
func (p *TablePool) Size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.made
}
