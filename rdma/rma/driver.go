package rma

import (
	"errors"
	"fmt"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Byte offsets inside the 64-byte blocks of a lock.
const (
	offNext    = 0 // queue node: NEXT
	offStatus  = 8 // queue node: STATUS
	offArrive  = 0 // counter: ARRIVE
	offDepart  = 8 // counter: DEPART
	blockBytes = 64
)

// Lock is one RMA-MCS or RMA-RW lock laid out in the registered memory of a fabric: one
// 64-byte block per queue tail (on the node of the element's first process), per queue node
// (on its owner's node: a process at the leaf level, a child element's first node above) and
// per physical counter (on the node of rank k*T_DC).
type Lock struct {
	sh    *Shape
	tails [MaxLevels][]verbs.Ptr
	qn    [MaxLevels][]verbs.Ptr
	ctrs  []verbs.Ptr
}

// Alloc reserves size zeroed bytes in node's registered region (Endpoint.Alloc of a setup
// endpoint on that node).
type Alloc func(node int, size uint64) (verbs.Ptr, error)

// New lays a lock out with alloc.
func New(cfg Config, alloc Alloc) (*Lock, error) {
	sh, err := NewShape(cfg)
	if err != nil {
		return nil, err
	}
	l := &Lock{sh: sh}
	get := func(node int) (verbs.Ptr, error) {
		p, err := alloc(node, blockBytes)
		if err != nil {
			return 0, fmt.Errorf("rma layout on node %d: %w", node, err)
		}
		return p, nil
	}
	for lv := 0; lv < sh.n; lv++ {
		for j := 0; j < sh.Elements(lv); j++ {
			p, err := get(sh.TailHome(lv, j))
			if err != nil {
				return nil, err
			}
			l.tails[lv] = append(l.tails[lv], p)
		}
		for o := 0; o < sh.Owners(lv); o++ {
			p, err := get(sh.OwnerHome(lv, o))
			if err != nil {
				return nil, err
			}
			l.qn[lv] = append(l.qn[lv], p)
		}
	}
	for k := 0; k < sh.Counters(); k++ {
		p, err := get(sh.CounterHome(k))
		if err != nil {
			return nil, err
		}
		l.ctrs = append(l.ctrs, p)
	}
	return l, nil
}

// Shape is the lock's validated shape.
func (l *Lock) Shape() *Shape { return l.sh }

// Words lists every word of the lock with its kind (for audits and inspection).
func (l *Lock) Words() map[verbs.Ptr]Word {
	out := map[verbs.Ptr]Word{}
	for lv := 0; lv < l.sh.n; lv++ {
		for j, p := range l.tails[lv] {
			out[p] = word(WTail, lv, uint64(j))
		}
		for _, p := range l.qn[lv] {
			out[p.Add(offNext)] = word(WNext, lv, uint64(p))
			out[p.Add(offStatus)] = word(WStatus, lv, uint64(p))
		}
	}
	for k, p := range l.ctrs {
		out[p.Add(offArrive)] = word(WArrive, 0, uint64(k))
		out[p.Add(offDepart)] = word(WDepart, 0, uint64(k))
	}
	return out
}

// Ptr maps a word of the lock to memory. Queue-node references are the queue nodes' Ptrs.
func (l *Lock) Ptr(w Word) verbs.Ptr {
	switch w.Kind {
	case WTail:
		return l.tails[w.Lvl][w.Idx]
	case WNext:
		return verbs.Ptr(w.Idx).Add(offNext)
	case WStatus:
		return verbs.Ptr(w.Idx).Add(offStatus)
	case WArrive:
		return l.ctrs[w.Idx].Add(offArrive)
	case WDepart:
		return l.ctrs[w.Idx].Add(offDepart)
	}
	panic(fmt.Sprintf("rma: word %v", w))
}

// nicRMW reports whether read-modify-writes of w go through the NIC (else the CPU's atomics:
// every accessor runs on w's node).
func (l *Lock) nicRMW(w Word) bool {
	switch w.Kind {
	case WTail:
		return !l.sh.LevelLocal(int(w.Lvl))
	case WArrive, WDepart:
		return !l.sh.CountersLocal()
	}
	return false
}

func (l *Lock) levelLocal(lv int) bool { return l.sh.LevelLocal(lv) }

func (l *Lock) counter(k uint64) verbs.Ptr { return l.ctrs[k] }

// resolver maps the words of one lock to memory and says which path each takes.
type resolver interface {
	// Ptr is the word's address (queue-node references are queue-node pointers).
	Ptr(w Word) verbs.Ptr
	// nicRMW reports whether read-modify-writes of w go through the NIC.
	nicRMW(w Word) bool
	// levelLocal reports whether the queues of level lv are node-local (CPU atomics only).
	levelLocal(lv int) bool
	// counter is the block of physical counter k (ARRIVE at 0, DEPART at 8).
	counter(k uint64) verbs.Ptr
}

// Hook observes a process's batches before they are executed (tests use it to record the
// protocol and to widen race windows); it runs on the process's goroutine.
type Hook func(rank int, ops []Op)

// Handle is one process's endpoint on a lock: its state machine and the driver that executes
// the machine's batches with CPU atomics on node-local structures and one-sided verbs
// elsewhere. Not safe for concurrent use.
//
// Access classes (the verbs atomicity contract): a word that receives NIC read-modify-writes
// (the tails of queues spanning several nodes, the counters of a multi-node machine) is never
// written by a CPU, only read; words of node-local queues are only touched by their node's
// CPUs; queue-node NEXT/STATUS words are never read-modify-written, so their owner loads and
// stores them with the CPU while neighbours use rRead/rWrite.
type Handle struct {
	r    resolver
	p    *Proc
	ep   verbs.Endpoint
	m    verbs.Memory
	node verbs.NodeID
	st   State
	bufs [2][]Op
	res  []uint64
	wrs  []verbs.WorkRequest
	wix  []int
	hook Hook
	cnt  Counts
}

// Handle returns rank's handle; ep must be on rank's node.
func (l *Lock) Handle(rank int, ep verbs.Endpoint) (*Handle, error) {
	if rank < 0 || rank >= l.sh.Procs() {
		return nil, fmt.Errorf("rma: rank %d of %d", rank, l.sh.Procs())
	}
	if int(ep.Node()) != l.sh.NodeOf(rank) {
		return nil, fmt.Errorf("rma: rank %d runs on node %d, endpoint is on node %d", rank, l.sh.NodeOf(rank), ep.Node())
	}
	p, err := NewProc(l.sh, rank, func(lv, o int) uint64 { return uint64(l.qn[lv][o]) })
	if err != nil {
		return nil, err
	}
	return &Handle{r: l, p: p, ep: ep, m: ep.Local(), node: ep.Node()}, nil
}

// Counts returns the protocol events of this handle so far.
func (h *Handle) Counts() Counts { return h.cnt }

// SetHook installs h (nil removes it).
func (h *Handle) SetHook(hk Hook) { h.hook = hk }

// Rank is the handle's process rank.
func (h *Handle) Rank() int { return h.p.rank }

// Held is the mode the handle holds the lock in (0 if none).
func (h *Handle) Held() Mode { return h.st.Held() }

// Errors of Handle.
var (
	ErrHeld    = errors.New("rma: handle already holds or wants the lock")
	ErrNotHeld = errors.New("rma: handle does not hold the lock in that mode")
	ErrNoRead  = errors.New("rma: shared acquisition of an RMA-MCS lock")
)

// Lock acquires the lock exclusively (as a writer).
func (h *Handle) Lock() error {
	if !h.st.Idle() {
		return ErrHeld
	}
	return h.run(h.p.Lock(&h.st, h.bufs[0][:0]), 0)
}

// RLock acquires the lock shared (as a reader; RMA-RW only).
func (h *Handle) RLock() error {
	if !h.st.Idle() {
		return ErrHeld
	}
	if !h.p.sh.cfg.Readers {
		return ErrNoRead
	}
	return h.run(h.p.RLock(&h.st, h.bufs[0][:0]), 0)
}

// Unlock releases an exclusive hold.
func (h *Handle) Unlock() error {
	if h.st.Held() != Exclusive {
		return ErrNotHeld
	}
	return h.run(h.p.Unlock(&h.st, h.bufs[0][:0]), 0)
}

// RUnlock releases a shared hold.
func (h *Handle) RUnlock() error {
	if h.st.Held() != Shared {
		return ErrNotHeld
	}
	return h.run(h.p.RUnlock(&h.st, h.bufs[0][:0]), 0)
}

// run executes batches until the machine finishes the phase. The machine reads the batch it
// completed while it builds the next one, so the two alternate between two buffers.
func (h *Handle) run(ops []Op, cur int) error {
	h.bufs[cur] = ops
	for len(ops) > 0 {
		if h.hook != nil {
			h.hook(h.p.rank, ops)
		}
		if err := h.exec(ops); err != nil {
			return fmt.Errorf("rma rank %d: %w", h.p.rank, err)
		}
		cur ^= 1
		before := h.st
		ops = h.p.Resume(&h.st, ops, h.res, h.bufs[cur][:0])
		h.cnt.observe(&before, &h.st, ops)
		if cap(ops) > cap(h.bufs[cur]) {
			h.bufs[cur] = ops
		}
	}
	return nil
}

// exec performs one batch: node-local operations with the CPU at once, the verbs as one
// posted batch with one wait, swaps and waits alone.
func (h *Handle) exec(ops []Op) error {
	if cap(h.res) < len(ops) {
		h.res = make([]uint64, len(ops))
	}
	h.res = h.res[:len(ops)]
	if ops[0].Kind == OpAwaitDrain {
		return h.drain(ops)
	}
	h.wrs, h.wix = h.wrs[:0], h.wix[:0]
	for i, op := range ops {
		w := h.r.Ptr(op.Word)
		local := w.Node() == h.node
		switch op.Kind {
		case OpSwap:
			v, err := h.swap(op, w, local)
			if err != nil {
				return err
			}
			h.res[i] = v
			continue
		case OpAwait:
			v, err := h.await(op, w, local)
			if err != nil {
				return err
			}
			h.res[i] = v
			continue
		case OpAwaitDrain:
			return fmt.Errorf("rma: drain mixed into a batch")
		}
		if h.r.nicRMW(op.Word) {
			if op.Kind == OpStore {
				panic(fmt.Sprintf("rma: CPU store to NIC-atomic word %v", op.Word))
			}
			if op.Kind == OpLoad && local {
				h.res[i] = h.m.Load(w.Offset())
				continue
			}
			h.post(i, op, w)
			continue
		}
		if !local {
			// Only queue nodes of multi-node queues are read or written by other nodes.
			qn := op.Word.Kind == WNext || op.Word.Kind == WStatus
			if !qn || h.r.levelLocal(int(op.Word.Lvl)) || (op.Kind != OpLoad && op.Kind != OpStore) {
				panic(fmt.Sprintf("rma: rank %d on node %d: %v of node %d's word outside its access class", h.p.rank, h.node, op, w.Node()))
			}
			h.post(i, op, w)
			continue
		}
		off := w.Offset()
		switch op.Kind {
		case OpLoad:
			h.res[i] = h.m.Load(off)
		case OpStore:
			h.m.Store(off, op.Arg)
			h.res[i] = 0
		case OpCAS:
			h.res[i] = h.m.Load(off)
			for h.res[i] == op.Cmp && !h.m.CAS(off, op.Cmp, op.Arg) {
				h.res[i] = h.m.Load(off)
			}
		case OpFAA:
			h.res[i] = h.m.FAA(off, op.Arg)
		}
	}
	if len(h.wrs) == 0 {
		return nil
	}
	cs, err := verbs.Batch(h.ep, h.wrs)
	if err != nil {
		return err
	}
	for j, c := range cs {
		if c.Err != nil {
			return c.Err
		}
		h.res[h.wix[j]] = c.Value
	}
	return nil
}

func (h *Handle) post(i int, op Op, w verbs.Ptr) {
	wr := verbs.WorkRequest{Remote: w, Value: op.Arg, Compare: op.Cmp}
	switch op.Kind {
	case OpLoad:
		wr.Op = verbs.OpRead
	case OpStore:
		wr.Op = verbs.OpWrite
	case OpCAS:
		wr.Op = verbs.OpCAS
	case OpFAA:
		wr.Op = verbs.OpFAA
	}
	h.wrs = append(h.wrs, wr)
	h.wix = append(h.wix, i)
}

func (h *Handle) swap(op Op, w verbs.Ptr, local bool) (uint64, error) {
	if h.r.nicRMW(op.Word) {
		return nicSwap(h.ep, w, op.Arg)
	}
	if !local {
		panic(fmt.Sprintf("rma: swap of remote node-local word %v", op.Word))
	}
	off := w.Offset()
	for {
		old := h.m.Load(off)
		if h.m.CAS(off, old, op.Arg) {
			return old, nil
		}
	}
}

// nicSwap is MPI's FAO(REPLACE) on RDMA (the paper's Table 3): one masked compare-and-swap
// with an empty compare mask, which always succeeds and swaps every bit.
func nicSwap(ep verbs.Endpoint, p verbs.Ptr, v uint64) (uint64, error) {
	old, _, err := verbs.MaskedCAS(ep, p, 0, 0, v, ^uint64(0))
	return old, err
}

func (h *Handle) await(op Op, w verbs.Ptr, local bool) (uint64, error) {
	if local {
		off := w.Offset()
		var v uint64
		h.m.Await(func() bool {
			v = h.m.Load(off)
			return op.Cond.Holds(v, op.Arg)
		}, off)
		return v, nil
	}
	read := verbs.Read
	for {
		v, err := read(h.ep, w)
		if err != nil {
			return 0, err
		}
		if op.Cond.Holds(v, op.Arg) {
			return v, nil
		}
		read = verbs.SpinRead
	}
}

// drain waits until every counter of the batch has ARRIVE - WriteFlag == DEPART, with ARRIVE
// read before DEPART in each attempt (the first ARRIVE value is the writer's own FAA result).
// Once a counter passed, every reader counted before the flag was added has departed and no
// other can enter while the flag is set, so counters are checked independently: local ones
// with CPU loads (sleeping until one of the two words changes), remote ones with batched
// reads.
func (h *Handle) drain(ops []Op) error {
	type pend struct {
		a, d  verbs.Ptr
		arr   uint64
		haveA bool
	}
	var remote []pend
	for _, op := range ops {
		c := h.r.counter(op.Word.Idx)
		a, d := c.Add(offArrive), c.Add(offDepart)
		if c.Node() != h.node {
			remote = append(remote, pend{a: a, d: d, arr: op.Tag, haveA: true})
			continue
		}
		if op.Tag-WriteFlag == h.m.Load(d.Offset()) {
			continue
		}
		h.m.Await(func() bool {
			arr := h.m.Load(a.Offset())
			return arr-WriteFlag == h.m.Load(d.Offset())
		}, a.Offset(), d.Offset())
	}
	spin := false
	for len(remote) > 0 {
		h.wrs = h.wrs[:0]
		for _, p := range remote {
			if !p.haveA {
				h.wrs = append(h.wrs, verbs.WorkRequest{Op: verbs.OpRead, Remote: p.a, Spin: spin})
			}
		}
		if len(h.wrs) > 0 {
			cs, err := verbs.Batch(h.ep, h.wrs)
			if err != nil {
				return err
			}
			j := 0
			for i := range remote {
				if !remote[i].haveA {
					remote[i].arr, remote[i].haveA = cs[j].Value, true
					j++
				}
			}
		}
		h.wrs = h.wrs[:0]
		for _, p := range remote {
			h.wrs = append(h.wrs, verbs.WorkRequest{Op: verbs.OpRead, Remote: p.d, Spin: spin})
		}
		cs, err := verbs.Batch(h.ep, h.wrs)
		if err != nil {
			return err
		}
		k := 0
		for i, p := range remote {
			if p.arr-WriteFlag != cs[i].Value {
				p.haveA = false
				remote[k] = p
				k++
			}
		}
		remote = remote[:k]
		spin = true
	}
	return nil
}
