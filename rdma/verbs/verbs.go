// Package verbs is the one-sided RDMA interface of netlock's server-resident tier.
//
// It has the shape of libibverbs reduced to what lock algorithms need: every node owns one
// registered memory region (an array of 8-byte words addressed by [Ptr], a node id plus a byte
// offset), and a thread talks to the fabric through an [Endpoint], which stands for its queue
// pairs (one per remote node, created on first use) and its completion queue. Work requests
// (READ, WRITE, CAS, FAA on one aligned 8-byte word) are posted asynchronously, alone or in a
// batch, and signaled requests produce a [Completion] that the thread waits for. A thread also
// has CPU access to its own node's region through [Memory] (atomic loads, stores, CAS and FAA).
//
// Atomicity contract (Table 1 of the ALock paper; docs/rdma.md, Atomicity):
//   - aligned 8-byte remote READ/WRITE never tear and are atomic with local loads, stores and
//     CPU read-modify-writes;
//   - remote CAS/FAA are atomic with each other (the target NIC serializes them) but NOT with
//     local CPU atomics or stores on the same word: a local store or CAS may land between the
//     NIC's read and its conditional write;
//   - a posted request takes effect somewhere between PostSend and its completion; unsignaled
//     requests may be applied late and out of order relative to later accesses.
//
// Backends: rdma/emu (real goroutines, real time, in-process or over TCP) and rdma/sim
// (deterministic virtual time with a cost model).
//
// Mapping onto libibverbs (a later backend behind a build tag): a node's region is one buffer
// registered with ibv_reg_mr (local write, remote read, write and atomic access); Alloc
// sub-allocates inside it. A Ptr's offset plus the peer region's base address and rkey,
// exchanged when queue pairs are connected and kept in a per-node table, give remote_addr and
// rkey. An Endpoint owns one completion queue and one RC queue pair per peer node (a QP
// connected to its own node for loopback), created on first use; PostSend turns each
// WorkRequest into an ibv_send_wr (RDMA_READ, RDMA_WRITE, ATOMIC_CMP_AND_SWP,
// ATOMIC_FETCH_AND_ADD; IBV_SEND_SIGNALED when Signaled; wr_id = ID) chained into one list per
// batch and QP; Wait polls the CQ until wr_id appears, buffering other completions; Memory is
// atomic access to the registered buffer. 8-byte atomics need 8-byte aligned remote_addr,
// which Ptr guarantees.
package verbs

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// NodeID names a node of the fabric (a machine with one RNIC and one registered region).
type NodeID uint16

// Ptr is an RDMA pointer: the node id in the top 16 bits and a byte offset into that node's
// registered region in the low 48 bits. Offsets are 8-byte aligned. The zero Ptr is the null
// pointer; backends never hand out offset 0 of node 0 (the first 64 bytes of every region are
// reserved), so no valid word is ever named by the null pointer.
//
// The paper packs the node id into 4 bits; 16 bits here, so the 20-node cluster fits.
type Ptr uint64

const offsetBits = 48

// MakePtr builds a pointer to byte offset off of node n.
func MakePtr(n NodeID, off uint64) Ptr { return Ptr(uint64(n)<<offsetBits | off&(1<<offsetBits-1)) }

// Node is the node holding the pointed-to word.
func (p Ptr) Node() NodeID { return NodeID(uint64(p) >> offsetBits) }

// Offset is the byte offset of the word inside its node's region.
func (p Ptr) Offset() uint64 { return uint64(p) & (1<<offsetBits - 1) }

// Add returns p advanced by n bytes.
func (p Ptr) Add(n uint64) Ptr { return MakePtr(p.Node(), p.Offset()+n) }

// IsNull reports whether p is the null pointer.
func (p Ptr) IsNull() bool { return p == 0 }

func (p Ptr) String() string {
	if p == 0 {
		return "nil"
	}
	return fmt.Sprintf("%d:%#x", p.Node(), p.Offset())
}

// Opcode is the verb of a work request.
type Opcode uint8

// The four one-sided verbs.
const (
	OpRead Opcode = iota + 1
	OpWrite
	OpCAS
	OpFAA
)

func (o Opcode) String() string {
	switch o {
	case OpRead:
		return "READ"
	case OpWrite:
		return "WRITE"
	case OpCAS:
		return "CAS"
	case OpFAA:
		return "FAA"
	}
	return fmt.Sprintf("Opcode(%d)", uint8(o))
}

// WorkRequest is one posted verb on one aligned 8-byte word.
type WorkRequest struct {
	// ID is echoed in the completion (wr_id); take it from Endpoint.NextID.
	ID uint64
	Op Opcode
	// Remote is the target word; it may live on the poster's own node (loopback).
	Remote Ptr
	// Compare is the expected value of a CAS.
	Compare uint64
	// Value is the value written by WRITE, swapped in by CAS, or added by FAA.
	Value uint64
	// Signaled requests produce a Completion; unsignaled ones are fire-and-forget.
	Signaled bool
	// Spin marks a re-poll of a remote word inside a wait loop (accounted as a remote spin).
	Spin bool
}

// Completion reports a finished signaled request.
type Completion struct {
	ID uint64
	Op Opcode
	// Value is the word read (READ) or its value before the operation (CAS, FAA).
	Value uint64
	// Err is non-nil when the request failed (bad pointer, transport error).
	Err error
}

// Errors shared by all backends.
var (
	ErrBadPtr   = errors.New("verbs: pointer outside registered region or misaligned")
	ErrClosed   = errors.New("verbs: endpoint or fabric closed")
	ErrNoNode   = errors.New("verbs: unknown node")
	ErrNotFound = errors.New("verbs: no such work request")
	ErrOOM      = errors.New("verbs: registered region exhausted")
)

// Memory is a thread's CPU access to its own node's registered region. All accesses are atomic
// on aligned 8-byte words (sequentially consistent, like Go's sync/atomic).
type Memory interface {
	Load(off uint64) uint64
	Store(off, v uint64)
	CAS(off, old, new uint64) bool
	FAA(off, delta uint64) uint64
	// Await spins locally until cond returns true and returns; cond reads only this region.
	// The offsets name the words cond depends on, so a backend may sleep until one of them is
	// written instead of burning CPU (a cache-line invalidation wakes a real spinner the same way).
	Await(cond func() bool, offs ...uint64)
}

// Endpoint is one thread's view of the fabric: its node, its queue pairs and completion queue,
// and CPU access to its node's region. An Endpoint is used by one goroutine at a time.
type Endpoint interface {
	// Node is the node this thread runs on.
	Node() NodeID
	// PostSend posts a batch of work requests in order; it does not wait for them.
	PostSend(wrs ...WorkRequest) error
	// Wait blocks until the signaled request with the given id completes and returns it.
	Wait(id uint64) (Completion, error)
	// Local is CPU access to the own node's region.
	Local() Memory
	// Alloc reserves size bytes (rounded up to 64) of zeroed memory in the own node's region.
	Alloc(size uint64) (Ptr, error)
	// Now is the endpoint's clock in nanoseconds (wall clock or virtual time).
	Now() int64
	// Stats is this thread's operation accounting.
	Stats() *Stats
	// NextID returns a fresh work-request id.
	NextID() uint64
}

// Stats counts one thread's operations. Fields are updated atomically.
type Stats struct {
	Reads, Writes, CASes, FAAs atomic.Uint64 // remote verbs posted (loopback included)
	Loopback                   atomic.Uint64 // remote verbs whose target is the own node
	RemoteSpins                atomic.Uint64 // remote re-polls inside wait loops
	LocalOps                   atomic.Uint64 // CPU accesses to the own region
	LocalSpins                 atomic.Uint64 // failed checks inside Memory.Await
}

// StatsSnapshot is a plain copy of Stats.
type StatsSnapshot struct {
	Reads, Writes, CASes, FAAs, Loopback, RemoteSpins, LocalOps, LocalSpins uint64
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() StatsSnapshot {
	return StatsSnapshot{
		Reads: s.Reads.Load(), Writes: s.Writes.Load(), CASes: s.CASes.Load(), FAAs: s.FAAs.Load(),
		Loopback: s.Loopback.Load(), RemoteSpins: s.RemoteSpins.Load(), LocalOps: s.LocalOps.Load(),
		LocalSpins: s.LocalSpins.Load(),
	}
}

// Remote is the number of RDMA verbs posted.
func (s StatsSnapshot) Remote() uint64 { return s.Reads + s.Writes + s.CASes + s.FAAs }

// Sub returns s - o field by field.
func (s StatsSnapshot) Sub(o StatsSnapshot) StatsSnapshot {
	return StatsSnapshot{s.Reads - o.Reads, s.Writes - o.Writes, s.CASes - o.CASes, s.FAAs - o.FAAs,
		s.Loopback - o.Loopback, s.RemoteSpins - o.RemoteSpins, s.LocalOps - o.LocalOps, s.LocalSpins - o.LocalSpins}
}

// Add accounts one posted request.
func (s *Stats) Add(wr WorkRequest, self NodeID) {
	switch wr.Op {
	case OpRead:
		s.Reads.Add(1)
	case OpWrite:
		s.Writes.Add(1)
	case OpCAS:
		s.CASes.Add(1)
	case OpFAA:
		s.FAAs.Add(1)
	}
	if wr.Remote.Node() == self {
		s.Loopback.Add(1)
	}
	if wr.Spin {
		s.RemoteSpins.Add(1)
	}
}

// Class says which path an access took.
type Class uint8

// Access classes.
const (
	ClassLocal  Class = iota + 1 // CPU access by a thread on the word's node
	ClassRemote                  // executed by the word's NIC for a (possibly loopback) verb
)

func (c Class) String() string {
	if c == ClassLocal {
		return "local"
	}
	return "remote"
}

// Access is one memory access as seen by the word's node, for audits (P11).
type Access struct {
	Word      Ptr
	Class     Class
	Op        Opcode // OpRead, OpWrite (stores included), OpCAS, OpFAA
	Initiator NodeID
}

// Tracer receives every access when installed in a backend's configuration. It must be safe
// for concurrent use.
type Tracer func(Access)

// Sync helpers: post one signaled request and wait for it.

func do(ep Endpoint, wr WorkRequest) (uint64, error) {
	wr.ID = ep.NextID()
	wr.Signaled = true
	if err := ep.PostSend(wr); err != nil {
		return 0, err
	}
	c, err := ep.Wait(wr.ID)
	if err != nil {
		return 0, err
	}
	return c.Value, c.Err
}

// Read performs a signaled READ and waits for it.
func Read(ep Endpoint, p Ptr) (uint64, error) { return do(ep, WorkRequest{Op: OpRead, Remote: p}) }

// SpinRead is Read accounted as a remote spin iteration.
func SpinRead(ep Endpoint, p Ptr) (uint64, error) {
	return do(ep, WorkRequest{Op: OpRead, Remote: p, Spin: true})
}

// Write performs a signaled WRITE and waits for its completion.
func Write(ep Endpoint, p Ptr, v uint64) error {
	_, err := do(ep, WorkRequest{Op: OpWrite, Remote: p, Value: v})
	return err
}

// CAS performs a signaled compare-and-swap and returns the previous value.
func CAS(ep Endpoint, p Ptr, old, new uint64) (uint64, error) {
	return do(ep, WorkRequest{Op: OpCAS, Remote: p, Compare: old, Value: new})
}

// SpinCAS is CAS accounted as a remote spin iteration.
func SpinCAS(ep Endpoint, p Ptr, old, new uint64) (uint64, error) {
	return do(ep, WorkRequest{Op: OpCAS, Remote: p, Compare: old, Value: new, Spin: true})
}

// FAA performs a signaled fetch-and-add and returns the previous value.
func FAA(ep Endpoint, p Ptr, delta uint64) (uint64, error) {
	return do(ep, WorkRequest{Op: OpFAA, Remote: p, Value: delta})
}

// Batch posts wrs (all signaled) as one batch and waits for all of them, returning the
// completions in order.
func Batch(ep Endpoint, wrs []WorkRequest) ([]Completion, error) {
	for i := range wrs {
		wrs[i].ID = ep.NextID()
		wrs[i].Signaled = true
	}
	if err := ep.PostSend(wrs...); err != nil {
		return nil, err
	}
	out := make([]Completion, len(wrs))
	for i, wr := range wrs {
		c, err := ep.Wait(wr.ID)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// CheckPtr validates that p names an aligned word inside a region of size bytes.
func CheckPtr(p Ptr, size uint64) error {
	off := p.Offset()
	if off%8 != 0 || off+8 > size {
		return fmt.Errorf("%v: %w", p, ErrBadPtr)
	}
	return nil
}
