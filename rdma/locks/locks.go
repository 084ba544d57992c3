// Package locks holds the ALock paper's competitors, the RDMA spinlock and the RDMA MCS lock,
// and the mixed-atomics spinlock negative control, all written against rdma/verbs. It also
// defines the [Locker]/[Algorithm] interfaces that rdma/alock satisfies and rdma/bench drives.
//
// Every lock occupies one zeroed 64-byte block (allocate it with Endpoint.Alloc on the lock's
// home node). A Locker is one thread's handle: it owns that thread's queue descriptor, so it
// holds at most one lock at a time.
package locks

import (
	"fmt"
	"sync/atomic"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Locker is one thread's handle on an algorithm.
type Locker interface {
	Lock(l verbs.Ptr) error
	Unlock(l verbs.Ptr) error
}

// Algorithm creates per-thread handles; locks are zeroed 64-byte blocks.
type Algorithm interface {
	Name() string
	NewLocker(ep verbs.Endpoint) (Locker, error)
}

var lockerIDs atomic.Uint64 // spinlock owner ids, never 0

// LockSize is the size of one lock block of every algorithm in rdma/.
const LockSize = 64

// Spin is the RDMA spinlock: it repeats rCAS(word, 0, id) until it succeeds and releases with an
// rWrite of 0. Local threads use loopback, like the paper's competitor.
type Spin struct{}

// Name implements Algorithm.
func (Spin) Name() string { return "spinlock" }

// NewLocker implements Algorithm.
func (Spin) NewLocker(ep verbs.Endpoint) (Locker, error) {
	return &spinLocker{ep: ep, id: lockerIDs.Add(1)}, nil
}

type spinLocker struct {
	ep verbs.Endpoint
	id uint64
}

func (s *spinLocker) Lock(l verbs.Ptr) error {
	old, err := verbs.CAS(s.ep, l, 0, s.id)
	for err == nil && old != 0 {
		old, err = verbs.SpinCAS(s.ep, l, 0, s.id)
	}
	if err != nil {
		return fmt.Errorf("spinlock lock %v: %w", l, err)
	}
	return nil
}

func (s *spinLocker) Unlock(l verbs.Ptr) error {
	if err := verbs.Write(s.ep, l, 0); err != nil {
		return fmt.Errorf("spinlock unlock %v: %w", l, err)
	}
	return nil
}

// MixedSpin is negative control (a) of docs/rdma.md: threads on the lock's node use
// CPU CAS and stores on the word, others use rCAS and rWrite. Remote and local RMWs are not
// atomic with each other, so a faithful emulator must let two holders in. Never use it.
type MixedSpin struct{}

// Name implements Algorithm.
func (MixedSpin) Name() string { return "mixed-spinlock" }

// NewLocker implements Algorithm.
func (MixedSpin) NewLocker(ep verbs.Endpoint) (Locker, error) {
	return &mixedLocker{spinLocker{ep: ep, id: lockerIDs.Add(1)}}, nil
}

type mixedLocker struct{ spinLocker }

func (s *mixedLocker) Lock(l verbs.Ptr) error {
	if l.Node() != s.ep.Node() {
		return s.spinLocker.Lock(l)
	}
	m := s.ep.Local()
	for !m.CAS(l.Offset(), 0, s.id) {
		m.Await(func() bool { return m.Load(l.Offset()) == 0 }, l.Offset())
	}
	return nil
}

func (s *mixedLocker) Unlock(l verbs.Ptr) error {
	if l.Node() != s.ep.Node() {
		return s.spinLocker.Unlock(l)
	}
	s.ep.Local().Store(l.Offset(), 0)
	return nil
}

// MCS is the RDMA MCS queue lock: the tail is swapped with an rCAS loop, the successor links
// itself with an rWrite to its predecessor's descriptor and spins on its own descriptor (local
// memory), and the holder passes with an rWrite. All lock-word and neighbour accesses are
// verbs, also for threads on the lock's node (loopback).
//
// The zero value releases CAS-first, as ALock's remote cohort does ([S] Alg. 3): it always
// compare-and-swaps the tail back to null and looks at its successor only when that fails, so a
// contended hand-over costs a failed rCAS before the pass. NextFirst selects the classic MCS
// release (Mellor-Crummey and Scott, and D-MCS in the HPDC '16 paper): read the own next
// pointer first and rCAS only when it is null.
type MCS struct {
	NextFirst bool
}

// Name implements Algorithm.
func (m MCS) Name() string {
	if m.NextFirst {
		return "mcs-classic"
	}
	return "mcs"
}

// Descriptor layout shared by MCS and ALock: word 0 is the state (MCS: locked flag, ALock:
// budget), word 4 (byte 32) the next pointer.
const (
	descState = 0
	descNext  = 32
)

// NewLocker implements Algorithm.
func (m MCS) NewLocker(ep verbs.Endpoint) (Locker, error) {
	d, err := ep.Alloc(64)
	if err != nil {
		return nil, fmt.Errorf("mcs descriptor: %w", err)
	}
	return &mcsLocker{ep: ep, desc: d, nextFirst: m.NextFirst}, nil
}

type mcsLocker struct {
	ep        verbs.Endpoint
	desc      verbs.Ptr
	nextFirst bool
}

func (q *mcsLocker) Lock(l verbs.Ptr) error {
	m, d := q.ep.Local(), q.desc.Offset()
	m.Store(d+descNext, 0)
	m.Store(d+descState, 1)
	prev, err := Swap(q.ep, l, uint64(q.desc))
	if err != nil {
		return fmt.Errorf("mcs enqueue %v: %w", l, err)
	}
	if prev == 0 {
		return nil
	}
	if err := verbs.Write(q.ep, verbs.Ptr(prev).Add(descNext), uint64(q.desc)); err != nil {
		return fmt.Errorf("mcs link %v: %w", l, err)
	}
	m.Await(func() bool { return m.Load(d+descState) == 0 }, d+descState)
	return nil
}

func (q *mcsLocker) Unlock(l verbs.Ptr) error {
	m, d := q.ep.Local(), q.desc.Offset()
	var next verbs.Ptr
	if q.nextFirst {
		next = verbs.Ptr(m.Load(d + descNext))
	}
	if next == 0 {
		old, err := verbs.CAS(q.ep, l, uint64(q.desc), 0)
		if err != nil {
			return fmt.Errorf("mcs unlock %v: %w", l, err)
		}
		if old == uint64(q.desc) {
			return nil
		}
		m.Await(func() bool { next = verbs.Ptr(m.Load(d + descNext)); return next != 0 }, d+descNext)
	}
	if err := verbs.Write(q.ep, next.Add(descState), 0); err != nil {
		return fmt.Errorf("mcs pass %v: %w", l, err)
	}
	return nil
}

// Swap atomically replaces the word at p with v using an rCAS loop that retries with the value
// it learned, and returns the previous value (Remus's AtomicSwap, [S] Alg. 3 line 3).
func Swap(ep verbs.Endpoint, p verbs.Ptr, v uint64) (uint64, error) {
	var expect uint64
	for {
		old, err := verbs.CAS(ep, p, expect, v)
		if err != nil {
			return 0, err
		}
		if old == expect {
			return old, nil
		}
		expect = old
	}
}
