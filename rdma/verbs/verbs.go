// Package verbs is the one-sided RDMA interface of netlock's server-resident tier.
//
// It has the shape of libibverbs reduced to what lock algorithms need: every node owns one
// registered memory region (an array of 8-byte words addressed by [Ptr], a node id plus a byte
// offset), and a thread talks to the fabric through an [Endpoint], which stands for its queue
// pairs (one per remote node, created on first use) and its completion queue. Work requests
// are posted asynchronously, alone or in a batch, and signaled requests produce a [Completion]
// that the thread waits for. A thread also has CPU access to its own node's region through
// [Memory] (atomic loads, stores, CAS and FAA).
//
// The verbs: READ and WRITE of one aligned 8-byte word or of up to [MaxWords] consecutive words;
// 64-bit compare-and-swap and fetch-and-add; and the ConnectX extended atomics, masked
// compare-and-swap ([OpMaskedCAS], see [MaskedCASResult]) and masked fetch-and-add with field
// boundaries ([OpMaskedFAA], see [MaskedAdd]). [Field] describes one bit field of a word and
// builds masked-FAA operands.
//
// Atomicity contract (Table 1 of the ALock paper; the CITRON paper, section 2.1; docs/rdma.md, Atomicity):
//   - every aligned 8-byte word of a remote READ/WRITE is read or written atomically (it never
//     tears) and is atomic with local loads, stores and CPU read-modify-writes; a multi-word
//     READ/WRITE is NOT atomic as a whole: other accesses may land between its words (the
//     backends apply it cache line by cache line);
//   - remote atomics (CAS, FAA, masked CAS, masked FAA) are atomic with each other whoever
//     initiated them (the target NIC serializes them: "the server-side RNIC executes inbound
//     writes and atomics as if in a global order") but NOT with local CPU atomics or stores on
//     the same word: a local store or CAS may land between the NIC's read and its conditional
//     write, and is then lost;
//   - per-QP order: an endpoint's requests to one target node are applied in the order they
//     were posted, and each is applied only after the previous one of the same queue pair took
//     full effect (an atomic's write-back included) - "RDMA will not reorder any one-sided verb
//     before previous writes and atomics in the same QP". A completion therefore implies that
//     every earlier request of its queue pair has been applied, which is what lets [Exec] signal
//     only the last request per queue pair. Requests to different nodes are not ordered;
//   - a posted request takes effect somewhere between PostSend and its completion. The
//     backends' fault injection for unsignaled requests (emu UnsignaledDelay, sim
//     UnsignaledJitter) deliberately breaks per-QP order for them, to model a thread that never
//     waits for a verb (negative controls); with it off, the contract above holds.
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
// ATOMIC_FETCH_AND_ADD, and for the masked atomics the mlx5 extended atomics through
// ibv_wr_... / mlx5dv with compare/swap masks and the field-boundary mask; IBV_SEND_SIGNALED when
// Signaled; wr_id = ID; Dest is the local sg_list buffer) chained into one list per batch and
// QP; Wait polls the CQ until wr_id appears, buffering other completions; Memory is atomic
// access to the registered buffer. 8-byte atomics need 8-byte aligned remote_addr, which Ptr
// guarantees.
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

// The one-sided verbs.
const (
	OpRead Opcode = iota + 1
	OpWrite
	OpCAS
	OpFAA
	// OpMaskedCAS is the ConnectX masked compare-and-swap: it succeeds iff
	// old&CompareMask == Compare&CompareMask and then writes (old &^ SwapMask) | (Value & SwapMask);
	// it returns old either way. With CompareMask 0 it always succeeds: with Value == SwapMask
	// it is a fetch-and-OR, with SwapMask ^0 a swap.
	OpMaskedCAS
	// OpMaskedFAA is the ConnectX masked fetch-and-add: Boundary splits the word into fields,
	// each set bit being the most significant bit of a field (bit 63 always ends the top
	// field), and Value is added field by field with no carry out of any field; it returns
	// the old word. See MaskedAdd.
	OpMaskedFAA
)

// IsAtomic reports whether o is a read-modify-write executed by the target NIC's atomic unit.
func (o Opcode) IsAtomic() bool { return o >= OpCAS && o <= OpMaskedFAA }

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
	case OpMaskedCAS:
		return "MASKED_CAS"
	case OpMaskedFAA:
		return "MASKED_FAA"
	}
	return fmt.Sprintf("Opcode(%d)", uint8(o))
}

// MaxWords is the largest number of words one READ or WRITE may move (8 KiB).
const MaxWords = 1024

// WorkRequest is one posted verb on one aligned 8-byte word, or on Words consecutive words for
// a multi-word READ or WRITE.
type WorkRequest struct {
	// ID is echoed in the completion (wr_id); take it from Endpoint.NextID.
	ID uint64
	Op Opcode
	// Remote is the target word (the first one for a multi-word READ/WRITE); it may live on the
	// poster's own node (loopback).
	Remote Ptr
	// Compare is the expected value of a CAS or masked CAS.
	Compare uint64
	// Value is the value written by a one-word WRITE, swapped in by CAS or masked CAS, or added
	// by FAA or masked FAA.
	Value uint64
	// CompareMask and SwapMask are the masks of OpMaskedCAS.
	CompareMask, SwapMask uint64
	// Boundary is the field-boundary mask of OpMaskedFAA (0: one 64-bit field, a plain FAA).
	Boundary uint64
	// Words is the number of consecutive words a READ reads (0 means 1).
	Words int
	// Data, if non-empty, is written by a WRITE to len(Data) consecutive words (Value is then
	// ignored).
	Data []uint64
	// Dest, if non-nil, is the request's local buffer: when the request is applied the backend
	// stores the words read (READ; len(Dest) >= the word count) or the previous value of an
	// atomic (Dest[0]) in it, before any later completion of the same queue pair is delivered.
	// It is how unsignaled requests of a batch return results (see Exec).
	Dest []uint64
	// Signaled requests produce a Completion; unsignaled ones are fire-and-forget.
	Signaled bool
	// Spin marks a re-poll of a remote word inside a wait loop (accounted as a remote spin).
	Spin bool
}

// Len is the number of words the request addresses.
func (wr *WorkRequest) Len() int {
	switch {
	case wr.Op == OpRead && wr.Words > 1:
		return wr.Words
	case wr.Op == OpWrite && len(wr.Data) > 0:
		return len(wr.Data)
	}
	return 1
}

// Completion reports a finished signaled request.
type Completion struct {
	ID uint64
	Op Opcode
	// Value is the word read (READ; the first word of a multi-word READ) or its value before the
	// operation (CAS, FAA, masked CAS, masked FAA).
	Value uint64
	// Words holds every word of a multi-word READ (nil otherwise).
	Words []uint64
	// Err is non-nil when the request failed (bad pointer, transport error).
	Err error
}

// MaskedCASResult is the semantics of OpMaskedCAS applied to old: whether the compare succeeded
// and the word afterwards.
func MaskedCASResult(old, cmp, cmpMask, swap, swapMask uint64) (ok bool, new uint64) {
	if old&cmpMask != cmp&cmpMask {
		return false, old
	}
	return true, old&^swapMask | swap&swapMask
}

// MaskedAdd is the semantics of OpMaskedFAA: add is added to old field by field, where every set
// bit of boundary is the most significant bit of a field and bit 63 ends the top field; the carry
// out of a field's most significant bit is dropped, so each field wraps modulo 2^width on its own
// (subtract by adding the field's two's complement, see Field.Add). With boundary 0 it is a plain
// 64-bit add.
func MaskedAdd(old, add, boundary uint64) uint64 {
	// Clearing every field's top bit makes the per-field sums unable to carry out of their
	// field; the top bits are then the XOR of the operands' top bits and the carry into them.
	return (old&^boundary + add&^boundary) ^ ((old ^ add) & boundary)
}

// Apply is the effect of an atomic request (CAS, FAA, masked CAS, masked FAA) on a word holding
// old: the new value and whether the NIC writes it back.
func Apply(wr *WorkRequest, old uint64) (new uint64, write bool) {
	switch wr.Op {
	case OpCAS:
		if old == wr.Compare {
			return wr.Value, true
		}
	case OpFAA:
		return old + wr.Value, true
	case OpMaskedCAS:
		if ok, n := MaskedCASResult(old, wr.Compare, wr.CompareMask, wr.Value, wr.SwapMask); ok {
			return n, true
		}
	case OpMaskedFAA:
		return MaskedAdd(old, wr.Value, wr.Boundary), true
	}
	return old, false
}

// Field is a bit field of a 64-bit word: Width bits starting at bit Shift.
type Field struct {
	Shift, Width uint
}

// Mask is the field's bits.
func (f Field) Mask() uint64 { return (1<<f.Width - 1) << f.Shift }

// MSB is the field's most significant bit (its boundary bit for OpMaskedFAA).
func (f Field) MSB() uint64 { return 1 << (f.Shift + f.Width - 1) }

// Get extracts the field's value from w.
func (f Field) Get(w uint64) uint64 { return w >> f.Shift & (1<<f.Width - 1) }

// Put returns v (taken modulo 2^Width) in the field's position.
func (f Field) Put(v uint64) uint64 { return v & (1<<f.Width - 1) << f.Shift }

// Add is the masked-FAA operand adding delta (possibly negative) to the field, modulo 2^Width.
func (f Field) Add(delta int64) uint64 { return f.Put(uint64(delta)) }

// Boundary is the masked-FAA boundary mask of a word split into the given fields: their MSBs.
// Bits that belong to no field stay unchanged as long as the operands are zero there.
func Boundary(fs ...Field) uint64 {
	var b uint64
	for _, f := range fs {
		b |= f.MSB()
	}
	return b
}

// Errors shared by all backends.
var (
	ErrBadPtr   = errors.New("verbs: pointer outside registered region or misaligned")
	ErrClosed   = errors.New("verbs: endpoint or fabric closed")
	ErrNoNode   = errors.New("verbs: unknown node")
	ErrNotFound = errors.New("verbs: no such work request")
	ErrOOM      = errors.New("verbs: registered region exhausted")
	// ErrBadRequest is returned for a malformed work request (unknown opcode, bad word count).
	ErrBadRequest = errors.New("verbs: malformed work request")
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

// Spender is implemented by endpoints whose backend accounts CPU time (rdma/sim).
type Spender interface {
	// Spend makes the thread busy for ns nanoseconds of its backend's time.
	Spend(ns int64)
}

// Spend charges ns of CPU time to ep's thread if its backend accounts CPU time, and does nothing
// otherwise (rdma/emu threads spend real time).
func Spend(ep Endpoint, ns int64) {
	if sp, ok := ep.(Spender); ok {
		sp.Spend(ns)
	}
}

// Stats counts one thread's operations. Fields are updated atomically.
type Stats struct {
	Reads, Writes, CASes, FAAs atomic.Uint64 // remote verbs posted (loopback included)
	MaskedCASes, MaskedFAAs    atomic.Uint64 // extended atomics posted (loopback included)
	Words                      atomic.Uint64 // words moved by READ/WRITE beyond the first of each verb
	Sends                      atomic.Uint64 // two-sided messages sent (rdma/sim RPC)
	Loopback                   atomic.Uint64 // remote verbs whose target is the own node
	RemoteSpins                atomic.Uint64 // remote re-polls inside wait loops
	LocalOps                   atomic.Uint64 // CPU accesses to the own region
	LocalSpins                 atomic.Uint64 // failed checks inside Memory.Await
}

// StatsSnapshot is a plain copy of Stats.
type StatsSnapshot struct {
	Reads, Writes, CASes, FAAs, MaskedCASes, MaskedFAAs, Words, Sends, Loopback, RemoteSpins, LocalOps, LocalSpins uint64
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() StatsSnapshot {
	return StatsSnapshot{
		Reads: s.Reads.Load(), Writes: s.Writes.Load(), CASes: s.CASes.Load(), FAAs: s.FAAs.Load(),
		MaskedCASes: s.MaskedCASes.Load(), MaskedFAAs: s.MaskedFAAs.Load(), Words: s.Words.Load(),
		Sends: s.Sends.Load(), Loopback: s.Loopback.Load(), RemoteSpins: s.RemoteSpins.Load(), LocalOps: s.LocalOps.Load(),
		LocalSpins: s.LocalSpins.Load(),
	}
}

// Remote is the number of RDMA verbs posted.
func (s StatsSnapshot) Remote() uint64 {
	return s.Reads + s.Writes + s.CASes + s.FAAs + s.MaskedCASes + s.MaskedFAAs
}

// Atomics is the number of remote atomics posted (plain and masked).
func (s StatsSnapshot) Atomics() uint64 { return s.CASes + s.FAAs + s.MaskedCASes + s.MaskedFAAs }

// Sub returns s - o field by field.
func (s StatsSnapshot) Sub(o StatsSnapshot) StatsSnapshot {
	return StatsSnapshot{
		Reads: s.Reads - o.Reads, Writes: s.Writes - o.Writes, CASes: s.CASes - o.CASes, FAAs: s.FAAs - o.FAAs,
		MaskedCASes: s.MaskedCASes - o.MaskedCASes, MaskedFAAs: s.MaskedFAAs - o.MaskedFAAs, Words: s.Words - o.Words,
		Sends: s.Sends - o.Sends, Loopback: s.Loopback - o.Loopback, RemoteSpins: s.RemoteSpins - o.RemoteSpins,
		LocalOps: s.LocalOps - o.LocalOps, LocalSpins: s.LocalSpins - o.LocalSpins,
	}
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
	case OpMaskedCAS:
		s.MaskedCASes.Add(1)
	case OpMaskedFAA:
		s.MaskedFAAs.Add(1)
	}
	if n := wr.Len(); n > 1 {
		s.Words.Add(uint64(n - 1))
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
	c, err := doC(ep, wr)
	return c.Value, err
}

func doC(ep Endpoint, wr WorkRequest) (Completion, error) {
	wr.ID = ep.NextID()
	wr.Signaled = true
	if err := ep.PostSend(wr); err != nil {
		return Completion{}, err
	}
	c, err := ep.Wait(wr.ID)
	if err != nil {
		return Completion{}, err
	}
	return c, c.Err
}

// Read performs a signaled READ and waits for it.
func Read(ep Endpoint, p Ptr) (uint64, error) { return do(ep, WorkRequest{Op: OpRead, Remote: p}) }

// SpinRead is Read accounted as a remote spin iteration.
func SpinRead(ep Endpoint, p Ptr) (uint64, error) {
	return do(ep, WorkRequest{Op: OpRead, Remote: p, Spin: true})
}

// ReadWords performs one signaled READ of n consecutive words starting at p and waits for it.
// Each word is read atomically; the block as a whole is not.
func ReadWords(ep Endpoint, p Ptr, n int) ([]uint64, error) {
	c, err := doC(ep, WorkRequest{Op: OpRead, Remote: p, Words: n})
	if err != nil {
		return nil, err
	}
	if c.Words == nil {
		return []uint64{c.Value}, nil
	}
	return c.Words, nil
}

// Write performs a signaled WRITE and waits for its completion.
func Write(ep Endpoint, p Ptr, v uint64) error {
	_, err := do(ep, WorkRequest{Op: OpWrite, Remote: p, Value: v})
	return err
}

// WriteWords performs one signaled WRITE of data to consecutive words starting at p and waits
// for its completion. Each word is written atomically; the block as a whole is not.
func WriteWords(ep Endpoint, p Ptr, data []uint64) error {
	_, err := do(ep, WorkRequest{Op: OpWrite, Remote: p, Data: data})
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

// MaskedCAS performs a signaled masked compare-and-swap and returns the previous value and
// whether the compare succeeded (see OpMaskedCAS).
func MaskedCAS(ep Endpoint, p Ptr, cmp, cmpMask, swap, swapMask uint64) (old uint64, ok bool, err error) {
	old, err = do(ep, WorkRequest{Op: OpMaskedCAS, Remote: p, Compare: cmp, CompareMask: cmpMask, Value: swap, SwapMask: swapMask})
	return old, err == nil && old&cmpMask == cmp&cmpMask, err
}

// MaskedFAA performs a signaled masked fetch-and-add and returns the previous value (see
// OpMaskedFAA and MaskedAdd).
func MaskedFAA(ep Endpoint, p Ptr, add, boundary uint64) (uint64, error) {
	return do(ep, WorkRequest{Op: OpMaskedFAA, Remote: p, Value: add, Boundary: boundary})
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

// Exec posts wrs as one batch (one PostSend, in order) with only the last request to each target
// node signaled, waits for those completions (one per queue pair; with every request on one node,
// a single completion wait), and returns each request's result: the word read (the first word for
// a multi-word READ, whose words land in its Dest, which the caller must then provide) or the
// previous value of an atomic. By per-QP order, the completion of a queue pair's last request
// means every earlier one has been applied and has stored its result in its Dest. Requests that
// have no Dest get one from a slice allocated here. wrs is modified (IDs, Signaled, Dest).
func Exec(ep Endpoint, wrs []WorkRequest) ([]uint64, error) {
	res := make([]uint64, len(wrs))
	last := map[NodeID]int{}
	for i := range wrs {
		wr := &wrs[i]
		if wr.Op == OpRead && wr.Words > 1 && len(wr.Dest) < wr.Words {
			return nil, fmt.Errorf("exec: READ of %d words needs a Dest of that size: %w", wr.Words, ErrBadRequest)
		}
		if wr.Dest == nil {
			wr.Dest = res[i : i+1]
		}
		wr.ID = ep.NextID()
		wr.Signaled = false
		last[wr.Remote.Node()] = i
	}
	for _, i := range last {
		wrs[i].Signaled = true
	}
	if err := ep.PostSend(wrs...); err != nil {
		return nil, err
	}
	var first error
	for i := range wrs {
		if !wrs[i].Signaled {
			continue
		}
		c, err := ep.Wait(wrs[i].ID)
		if err == nil {
			err = c.Err
		}
		if err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	for i := range wrs {
		res[i] = wrs[i].Dest[0]
	}
	return res, nil
}

// CheckPtr validates that p names an aligned word inside a region of size bytes.
func CheckPtr(p Ptr, size uint64) error {
	off := p.Offset()
	if off%8 != 0 || off+8 > size {
		return fmt.Errorf("%v: %w", p, ErrBadPtr)
	}
	return nil
}

// CheckRequest validates a work request against a region of size bytes: a known opcode, an
// aligned target whose whole block lies inside the region, a word count in [1, MaxWords] for
// READ/WRITE and a Dest large enough for the result.
func CheckRequest(wr *WorkRequest, size uint64) error {
	if wr.Op < OpRead || wr.Op > OpMaskedFAA {
		return fmt.Errorf("opcode %v: %w", wr.Op, ErrBadRequest)
	}
	if wr.Words < 0 || wr.Words > MaxWords || len(wr.Data) > MaxWords {
		return fmt.Errorf("%v of %d words (max %d): %w", wr.Op, max(wr.Words, len(wr.Data)), MaxWords, ErrBadRequest)
	}
	n := uint64(wr.Len())
	if wr.Dest != nil && wr.Op != OpWrite && uint64(len(wr.Dest)) < n {
		return fmt.Errorf("%v: Dest of %d words for %d: %w", wr.Op, len(wr.Dest), n, ErrBadRequest)
	}
	off := wr.Remote.Offset()
	if off%8 != 0 || off+8*n > size || off+8*n < off {
		return fmt.Errorf("%v (%d words): %w", wr.Remote, n, ErrBadPtr)
	}
	return nil
}
