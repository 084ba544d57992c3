package rma

import (
	"fmt"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Locker is one process's handle on a single lock. Exclusive-only locks serve RLock as Lock.
type Locker interface {
	Lock() error
	Unlock() error
	RLock() error
	RUnlock() error
}

var (
	_ Locker = (*Handle)(nil)
	_ Locker = (*DMCSHandle)(nil)
	_ Locker = (*SpinHandle)(nil)
	_ Locker = (*CentralRWHandle)(nil)
)

// place validates a nodes x procs-per-node placement.
func place(nodes, ppn int) error {
	if nodes < 1 || ppn < 1 || nodes*ppn > 1<<20 {
		return fmt.Errorf("rma: %d nodes x %d processes", nodes, ppn)
	}
	return nil
}

// DMCS is the paper's D-MCS lock (section 2.4, Listings 2 and 3), transcribed on its own as
// the topology-oblivious baseline: one queue whose TAIL lives on rank 0's node and one queue
// node (NEXT, WAIT) per process on its node. Erratum E1 is resolved by treating the STATUS of
// Listing 2 as WAIT and succ/successor of Listing 3 as one variable. The enqueue is a swap (one
// masked compare-and-swap with an empty compare mask, the paper's FAO(REPLACE) on RDMA); the lock
// is passed with one rWrite; each waiter spins on its own memory. On a
// one-node machine every access is a CPU atomic (all processes share that node's memory).
type DMCS struct {
	tail  verbs.Ptr
	qn    []verbs.Ptr
	ppn   int
	local bool
}

// NewDMCS lays out a D-MCS lock for nodes x ppn processes.
func NewDMCS(nodes, ppn int, alloc Alloc) (*DMCS, error) {
	if err := place(nodes, ppn); err != nil {
		return nil, err
	}
	d := &DMCS{ppn: ppn, local: nodes == 1}
	var err error
	if d.tail, err = alloc(0, blockBytes); err != nil {
		return nil, fmt.Errorf("d-mcs tail: %w", err)
	}
	for r := 0; r < nodes*ppn; r++ {
		q, err := alloc(r/ppn, blockBytes)
		if err != nil {
			return nil, fmt.Errorf("d-mcs queue node: %w", err)
		}
		d.qn = append(d.qn, q)
	}
	return d, nil
}

// Handle returns rank's handle (ep on rank's node).
func (d *DMCS) Handle(rank int, ep verbs.Endpoint) (*DMCSHandle, error) {
	if rank < 0 || rank >= len(d.qn) || int(ep.Node()) != rank/d.ppn {
		return nil, fmt.Errorf("d-mcs: rank %d on node %d", rank, ep.Node())
	}
	return &DMCSHandle{d: d, ep: ep, m: ep.Local(), me: d.qn[rank]}, nil
}

// DMCSHandle is one process of a D-MCS lock.
type DMCSHandle struct {
	d  *DMCS
	ep verbs.Endpoint
	m  verbs.Memory
	me verbs.Ptr
}

// Lock is Listing 2.
func (h *DMCSHandle) Lock() error {
	m, me := h.m, h.me.Offset()
	m.Store(me+offNext, 0)
	m.Store(me+offStatus, 1) // WAIT := true
	var pred uint64
	if h.d.local {
		t := h.d.tail.Offset()
		for pred = m.Load(t); !m.CAS(t, pred, uint64(h.me)); pred = m.Load(t) {
		}
	} else {
		var err error
		if pred, err = nicSwap(h.ep, h.d.tail, uint64(h.me)); err != nil {
			return fmt.Errorf("d-mcs enqueue: %w", err)
		}
	}
	if pred == 0 {
		return nil
	}
	if err := h.put(verbs.Ptr(pred).Add(offNext), uint64(h.me)); err != nil {
		return fmt.Errorf("d-mcs link: %w", err)
	}
	m.Await(func() bool { return m.Load(me+offStatus) == 0 }, me+offStatus)
	return nil
}

// Unlock is Listing 3.
func (h *DMCSHandle) Unlock() error {
	m, me := h.m, h.me.Offset()
	succ := m.Load(me + offNext)
	if succ == 0 {
		var cur uint64
		if h.d.local {
			t := h.d.tail.Offset()
			if m.CAS(t, uint64(h.me), 0) {
				return nil
			}
			cur = m.Load(t)
		} else {
			var err error
			if cur, err = verbs.CAS(h.ep, h.d.tail, uint64(h.me), 0); err != nil {
				return fmt.Errorf("d-mcs release: %w", err)
			}
		}
		if cur == uint64(h.me) {
			return nil
		}
		m.Await(func() bool { succ = m.Load(me + offNext); return succ != 0 }, me+offNext)
	}
	if err := h.put(verbs.Ptr(succ).Add(offStatus), 0); err != nil {
		return fmt.Errorf("d-mcs pass: %w", err)
	}
	return nil
}

func (h *DMCSHandle) put(p verbs.Ptr, v uint64) error {
	if p.Node() == h.ep.Node() { // a neighbour on the same node: shared memory
		h.m.Store(p.Offset(), v)
		return nil
	}
	return verbs.Write(h.ep, p, v)
}

// RLock is Lock (D-MCS has no shared mode).
func (h *DMCSHandle) RLock() error { return h.Lock() }

// RUnlock is Unlock.
func (h *DMCSHandle) RUnlock() error { return h.Unlock() }

// Spin is the foMPI-Spin baseline: one lock word on rank 0's node, taken with a
// compare-and-swap loop (0 to the owner's id) and released by writing 0, with verbs for every
// process (loopback on node 0) unless the machine is one node (CPU atomics).
type Spin struct {
	word  verbs.Ptr
	ppn   int
	local bool
}

// NewSpin lays out a spin lock.
func NewSpin(nodes, ppn int, alloc Alloc) (*Spin, error) {
	if err := place(nodes, ppn); err != nil {
		return nil, err
	}
	w, err := alloc(0, blockBytes)
	if err != nil {
		return nil, fmt.Errorf("spin lock: %w", err)
	}
	return &Spin{word: w, ppn: ppn, local: nodes == 1}, nil
}

// Handle returns rank's handle.
func (s *Spin) Handle(rank int, ep verbs.Endpoint) (*SpinHandle, error) {
	if int(ep.Node()) != rank/s.ppn {
		return nil, fmt.Errorf("spin: rank %d on node %d", rank, ep.Node())
	}
	return &SpinHandle{s: s, ep: ep, id: uint64(rank) + 1}, nil
}

// SpinHandle is one process of a Spin lock.
type SpinHandle struct {
	s  *Spin
	ep verbs.Endpoint
	id uint64
}

// Lock spins with compare-and-swap until it owns the word.
func (h *SpinHandle) Lock() error {
	if h.s.local {
		m, off := h.ep.Local(), h.s.word.Offset()
		for !m.CAS(off, 0, h.id) {
			m.Await(func() bool { return m.Load(off) == 0 }, off)
		}
		return nil
	}
	old, err := verbs.CAS(h.ep, h.s.word, 0, h.id)
	for err == nil && old != 0 {
		old, err = verbs.SpinCAS(h.ep, h.s.word, 0, h.id)
	}
	if err != nil {
		return fmt.Errorf("spin lock: %w", err)
	}
	return nil
}

// Unlock writes 0.
func (h *SpinHandle) Unlock() error {
	if h.s.local {
		h.ep.Local().Store(h.s.word.Offset(), 0)
		return nil
	}
	if err := verbs.Write(h.ep, h.s.word, 0); err != nil {
		return fmt.Errorf("spin unlock: %w", err)
	}
	return nil
}

// RLock is Lock.
func (h *SpinHandle) RLock() error { return h.Lock() }

// RUnlock is Unlock.
func (h *SpinHandle) RUnlock() error { return h.Unlock() }

// CentralRW is the plain RMA reader-writer lock baseline (the shape of foMPI's MPI-3 RW lock):
// one word on rank 0's node holding a writer flag and a reader count. A reader adds 1 and
// backs off (subtracts 1, then polls until the flag is clear) if the flag was set; a writer
// compare-and-swaps 0 to the flag (polling until the word is 0 between attempts) and releases
// by subtracting the flag. It favours readers: a writer waits for a moment with no reader.
type CentralRW struct {
	word  verbs.Ptr
	ppn   int
	local bool
}

// NewCentralRW lays out a CentralRW lock.
func NewCentralRW(nodes, ppn int, alloc Alloc) (*CentralRW, error) {
	if err := place(nodes, ppn); err != nil {
		return nil, err
	}
	w, err := alloc(0, blockBytes)
	if err != nil {
		return nil, fmt.Errorf("central rw lock: %w", err)
	}
	return &CentralRW{word: w, ppn: ppn, local: nodes == 1}, nil
}

// Handle returns rank's handle.
func (c *CentralRW) Handle(rank int, ep verbs.Endpoint) (*CentralRWHandle, error) {
	if int(ep.Node()) != rank/c.ppn {
		return nil, fmt.Errorf("central rw: rank %d on node %d", rank, ep.Node())
	}
	return &CentralRWHandle{c: c, ep: ep, m: ep.Local()}, nil
}

// CentralRWHandle is one process of a CentralRW lock.
type CentralRWHandle struct {
	c  *CentralRW
	ep verbs.Endpoint
	m  verbs.Memory
}

func (h *CentralRWHandle) faa(d uint64) (uint64, error) {
	if h.c.local {
		return h.m.FAA(h.c.word.Offset(), d), nil
	}
	return verbs.FAA(h.ep, h.c.word, d)
}

// poll waits until ok(word) holds.
func (h *CentralRWHandle) poll(ok func(uint64) bool) error {
	if h.c.word.Node() == h.ep.Node() {
		off := h.c.word.Offset()
		h.m.Await(func() bool { return ok(h.m.Load(off)) }, off)
		return nil
	}
	for {
		v, err := verbs.SpinRead(h.ep, h.c.word)
		if err != nil {
			return err
		}
		if ok(v) {
			return nil
		}
	}
}

// RLock acquires shared.
func (h *CentralRWHandle) RLock() error {
	for {
		old, err := h.faa(1)
		if err != nil {
			return fmt.Errorf("central rw: %w", err)
		}
		if old&WriteFlag == 0 {
			return nil
		}
		if _, err := h.faa(^uint64(0)); err != nil {
			return fmt.Errorf("central rw: %w", err)
		}
		if err := h.poll(func(v uint64) bool { return v&WriteFlag == 0 }); err != nil {
			return fmt.Errorf("central rw: %w", err)
		}
	}
}

// RUnlock releases shared.
func (h *CentralRWHandle) RUnlock() error {
	_, err := h.faa(^uint64(0))
	return err
}

// Lock acquires exclusively.
func (h *CentralRWHandle) Lock() error {
	for {
		var old uint64
		if h.c.local {
			off := h.c.word.Offset()
			if h.m.CAS(off, 0, WriteFlag) {
				return nil
			}
			old = 1
		} else {
			var err error
			if old, err = verbs.CAS(h.ep, h.c.word, 0, WriteFlag); err != nil {
				return fmt.Errorf("central rw: %w", err)
			}
		}
		if old == 0 {
			return nil
		}
		if err := h.poll(func(v uint64) bool { return v == 0 }); err != nil {
			return fmt.Errorf("central rw: %w", err)
		}
	}
}

// Unlock releases exclusively.
func (h *CentralRWHandle) Unlock() error {
	_, err := h.faa(^WriteFlag + 1) // -WriteFlag
	return err
}
