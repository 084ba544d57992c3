package rma

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// WriteFlag is the amount a writer adds to every ARRIVE word to put the lock in WRITE mode
// (INT64_MAX/2 in the paper, rounded to the power of two 2^62). At most two writers ever have
// it added at once (the releasing one and its successor), so ARRIVE never overflows.
const WriteFlag = uint64(1) << 62

// ResetFlag is the amount a reader adds to ARRIVE to claim the counter's reset: while it is
// set no other reader can claim it, no reader enters and no writer's drain completes. It lies
// below the WRITE flag with room for every process to add it at once (2^20 * 2^40 < 2^62).
const ResetFlag = uint64(1) << 40

// flagged reports whether an ARRIVE value carries the WRITE or the reset flag.
func flagged(a uint64) bool { return a >= ResetFlag }

// STATUS values of a queue node. Any value >= statusCount0+1 lets the holder enter the critical
// section and carries the number of consecutive holders of the element: count(c) = c + 2.
const (
	StatusWait        = 0 // spin: the predecessor has not handed over yet
	StatusAcqParent   = 1 // ACQUIRE_PARENT: the run of this element ended, climb one level
	StatusModeChange  = 2 // MODE_CHANGE: the lock went to the readers, take it back from them
	statusCount0      = 2
	statusFirstHolder = statusCount0 + 1 // ACQUIRE_START: count 1
)

func count(c uint32) uint64 { return statusCount0 + uint64(c) }

// WordKind says which structure a word belongs to.
type WordKind uint8

// Word kinds.
const (
	// WTail is the TAIL of the queue of element Idx at level Lvl; it holds a queue-node
	// reference or 0.
	WTail WordKind = iota + 1
	// WNext is the NEXT word of queue node Idx (a reference) at level Lvl.
	WNext
	// WStatus is the STATUS word of queue node Idx at level Lvl.
	WStatus
	// WArrive and WDepart are the two words of physical counter Idx.
	WArrive
	WDepart
)

var wordNames = [...]string{"?", "tail", "next", "status", "arrive", "depart"}

// Word names one 8-byte word of a lock. Queue nodes are named by opaque non-zero references
// (the values stored in TAIL and NEXT); a driver maps them to memory.
type Word struct {
	Kind WordKind
	Lvl  uint8
	Idx  uint64
}

func (w Word) String() string {
	if w.Kind == WArrive || w.Kind == WDepart {
		return fmt.Sprintf("%s[%d]", wordNames[w.Kind], w.Idx)
	}
	if int(w.Kind) < len(wordNames) {
		return fmt.Sprintf("%s[L%d,%d]", wordNames[w.Kind], w.Lvl+1, w.Idx)
	}
	return fmt.Sprintf("word(%d)", w.Kind)
}

// OpKind is a memory operation the machine asks a driver to perform.
type OpKind uint8

// Operations. Every one is atomic on its word; a batch of several operations may be applied
// in any order and at any time before the batch completes.
const (
	OpLoad  OpKind = iota + 1 // result: the word
	OpStore                   // word := Arg
	OpCAS                     // if word == Cmp { word := Arg }; result: the old word
	OpFAA                     // word += Arg (mod 2^64); result: the old word
	OpSwap                    // word := Arg; result: the old word
	// OpAwait blocks until Cond(word, Arg) holds; result: the word's value then.
	OpAwait
	// OpAwaitDrain blocks until ARRIVE - WriteFlag == DEPART of counter Word.Idx, reading
	// ARRIVE before DEPART in each attempt; Tag is the value of ARRIVE right after the
	// writer's own FAA, which a driver may use instead of the first ARRIVE read.
	OpAwaitDrain
)

var opNames = [...]string{"?", "load", "store", "cas", "faa", "swap", "await", "await-drain"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("op(%d)", k)
}

// Cond is the condition of an OpAwait.
type Cond uint8

// Conditions.
const (
	CondNe Cond = iota + 1 // word != Arg
	CondLt                 // word < Arg
)

// Holds reports whether v satisfies the condition against arg.
func (c Cond) Holds(v, arg uint64) bool {
	if c == CondLt {
		return v < arg
	}
	return v != arg
}

// Op is one operation of a batch.
type Op struct {
	Kind OpKind
	Word Word
	Arg  uint64
	Cmp  uint64
	Cond Cond
	Tag  uint64
}

func (o Op) String() string {
	switch o.Kind {
	case OpLoad, OpAwaitDrain:
		return fmt.Sprintf("%v %v", o.Kind, o.Word)
	case OpCAS:
		return fmt.Sprintf("cas %v %d->%d", o.Word, o.Cmp, o.Arg)
	case OpAwait:
		c := "!="
		if o.Cond == CondLt {
			c = "<"
		}
		return fmt.Sprintf("await %v %s %d", o.Word, c, o.Arg)
	case OpFAA:
		return fmt.Sprintf("faa %v %+d", o.Word, int64(o.Arg))
	}
	return fmt.Sprintf("%v %v %d", o.Kind, o.Word, o.Arg)
}

// Mode is the mode of an acquisition.
type Mode uint8

// Modes.
const (
	Exclusive Mode = iota + 1 // a writer
	Shared                    // a reader (RMA-RW only)
)

// Program counters of State.
const (
	pcIdle uint8 = iota
	pcHeldW
	pcHeldR
	pcWInit   // queue-node reset posted
	pcWSwap   // tail swap posted; result: predecessor
	pcWLink   // link into the predecessor posted
	pcWWait   // wait for our STATUS posted
	pcWTop    // count-1 STATUS store posted (we lead this level)
	pcWTopMC  // count-1 STATUS store after MODE_CHANGE posted
	pcWSetW   // FAA +WriteFlag on every counter posted
	pcWDrain  // drain waits posted
	pcRRead   // NEXT and STATUS loads posted
	pcRPass   // a hand-over store posted; then unwind
	pcR1CAS   // machine-level tail CAS posted
	pcR1Wait  // wait for a successor's link posted
	pcRst1    // writer reset: DEPART loads posted
	pcRst2    // writer reset: first subtraction batch posted
	pcRst3    // writer reset: second subtraction batch posted
	pcPostCAS // unwinding: tail CAS posted at level lvl
	pcPostWt  // unwinding: wait for a successor's link posted
	pcRdFAA   // reader: ARRIVE +1 posted; result: previous ARRIVE
	pcRdTail  // reader: machine-level tail load posted
	pcRdClaim // reader: ARRIVE += ResetFlag (claim the reset) posted
	pcRr1     // reader reset: DEPART load posted
	pcRr2     // reader reset: DEPART subtraction posted
	pcRr3     // reader reset: ARRIVE subtraction (with the flag and the back-off) posted
	pcPr1     // paper reader reset: ARRIVE and DEPART loads posted
	pcPr2     // paper reader reset: combined subtraction batch posted
	pcRdBack  // reader: ARRIVE -1 (back-off) posted
	pcRdAwait // reader: wait for ARRIVE < T_R posted
	pcRdRel   // reader: DEPART +1 posted
)

// What a writer does after resetting the counters.
const (
	afterUnwind uint8 = iota + 1 // the lock is free: unwind the lower levels
	afterMC                      // hand the lock to succ with MODE_CHANGE
	afterCAS                     // Faults.PaperReleaseOrder: leave the queue after the reset
)

// State is the dynamic state of one process's acquisition or release. It is a small
// comparable value (the model checker hashes it); the zero value is idle.
type State struct {
	pc      uint8
	lvl     int8 // current level, 0-based (0 is the machine)
	top     int8 // unwinding: the deepest level already finished
	after   uint8
	barrier bool
	cnt     uint32 // releasing: this level's consecutive-holder count
	succ    uint64 // successor reference (MODE_CHANGE hand-over)
	saved   [MaxLevels]uint64
}

// Held is the mode the state holds the lock in (0 if none).
func (s *State) Held() Mode {
	switch s.pc {
	case pcHeldW:
		return Exclusive
	case pcHeldR:
		return Shared
	}
	return 0
}

// Resetting reports whether a releasing writer is between the first and the last batch of its
// counter reset (the model checker ends a writer phase when this becomes false).
func (s *State) Resetting() bool { return s.pc == pcRst1 || s.pc == pcRst2 || s.pc == pcRst3 }

// Idle reports whether the process neither holds nor wants the lock.
func (s *State) Idle() bool { return s.pc == pcIdle }

// Level is the 0-based level the process is working on (meaningful while acquiring or
// releasing as a writer).
func (s *State) Level() int { return int(s.lvl) }

// Proc is the static part of one process's state machine: its place in the topology and
// its queue nodes. Lock, RLock, Unlock, RUnlock and Resume are pure: they read the results of
// the previous batch and return the next batch; I/O is the driver's.
type Proc struct {
	sh   *Shape
	rank int
	ref  [MaxLevels]uint64 // own queue node per level (non-zero)
	elem [MaxLevels]uint64 // queue (element) per level
	ctr  uint64
}

// NewProc builds rank's machine; ref(l, o) must return the non-zero reference of queue node o
// of 0-based level l (the value other processes find in TAIL and NEXT).
func NewProc(sh *Shape, rank int, ref func(l, o int) uint64) (*Proc, error) {
	if rank < 0 || rank >= sh.Procs() {
		return nil, fmt.Errorf("rma: rank %d of %d", rank, sh.Procs())
	}
	var pos Position
	for l := 0; l < sh.n; l++ {
		pos.Ref[l] = ref(l, sh.Owner(rank, l))
		pos.Elem[l] = uint64(sh.Element(rank, l))
	}
	if sh.cfg.Readers {
		pos.Counter = uint64(sh.CounterOf(rank))
	}
	p, err := NewProcAt(sh, pos)
	if err != nil {
		return nil, err
	}
	p.rank = rank
	return p, nil
}

// Position places a process explicitly: its queue (element) and its queue node per level and
// its counter. Lock tables whose processes come and go (a lock server's) place them this way.
type Position struct {
	Elem    [MaxLevels]uint64
	Ref     [MaxLevels]uint64
	Counter uint64
}

// NewProcAt builds a machine at an explicit position; sh gives the levels, thresholds and the
// number of counters.
func NewProcAt(sh *Shape, pos Position) (*Proc, error) {
	p := &Proc{sh: sh, rank: -1, ref: pos.Ref, elem: pos.Elem, ctr: pos.Counter}
	for l := 0; l < sh.n; l++ {
		if p.ref[l] == 0 {
			return nil, fmt.Errorf("rma: zero queue-node reference at level %d", l+1)
		}
	}
	if sh.cfg.Readers && pos.Counter >= uint64(sh.Counters()) {
		return nil, fmt.Errorf("rma: counter %d of %d", pos.Counter, sh.Counters())
	}
	return p, nil
}

// Rank is the process's rank (-1 for a machine built by NewProcAt).
func (p *Proc) Rank() int { return p.rank }

// Shape is the lock's shape.
func (p *Proc) Shape() *Shape { return p.sh }

// Ref is the process's queue node at 0-based level l.
func (p *Proc) Ref(l int) uint64 { return p.ref[l] }

func (p *Proc) rw() bool { return p.sh.cfg.Readers }

func word(k WordKind, l int, idx uint64) Word { return Word{Kind: k, Lvl: uint8(l), Idx: idx} }

func (p *Proc) next(l int, ref uint64) Word   { return word(WNext, l, ref) }
func (p *Proc) status(l int, ref uint64) Word { return word(WStatus, l, ref) }
func (p *Proc) tail(l int) Word               { return word(WTail, l, p.elem[l]) }

// Lock starts a writer acquisition (the process must be idle).
func (p *Proc) Lock(s *State, out []Op) []Op {
	p.mustBe(s, pcIdle, "Lock")
	return p.enterLevel(s, p.sh.n-1, out[:0])
}

// RLock starts a reader acquisition (RMA-RW only; the process must be idle).
func (p *Proc) RLock(s *State, out []Op) []Op {
	p.mustBe(s, pcIdle, "RLock")
	if !p.rw() {
		panic("rma: RLock on an RMA-MCS lock")
	}
	s.barrier = false
	s.pc = pcRdFAA
	return append(out[:0], Op{Kind: OpFAA, Word: word(WArrive, 0, p.ctr), Arg: 1})
}

// Unlock starts a writer release (the process must hold the lock exclusively).
func (p *Proc) Unlock(s *State, out []Op) []Op {
	p.mustBe(s, pcHeldW, "Unlock")
	return p.readLevel(s, p.sh.n-1, out[:0])
}

// RUnlock starts a reader release.
func (p *Proc) RUnlock(s *State, out []Op) []Op {
	p.mustBe(s, pcHeldR, "RUnlock")
	s.pc = pcRdRel
	return append(out[:0], Op{Kind: OpFAA, Word: word(WDepart, 0, p.ctr), Arg: 1})
}

func (p *Proc) mustBe(s *State, pc uint8, what string) {
	if s.pc != pc {
		panic(fmt.Sprintf("rma: %s in state %d", what, s.pc))
	}
}

// Resume consumes the results of the batch done (res[i] is done[i]'s result) and returns the
// next batch, built in out. An empty batch means the acquisition or release finished: the
// process now holds the lock (State.Held) or is idle.
func (p *Proc) Resume(s *State, done []Op, res []uint64, out []Op) []Op {
	out = out[:0]
	l := int(s.lvl)
	switch s.pc {
	// ---- writer acquire (Listings 4 and 7) ----
	case pcWInit:
		s.pc = pcWSwap
		return append(out, Op{Kind: OpSwap, Word: p.tail(l), Arg: p.ref[l]})
	case pcWSwap:
		if pred := res[0]; pred != 0 {
			s.pc = pcWLink
			return append(out, Op{Kind: OpStore, Word: p.next(l, pred), Arg: p.ref[l]})
		}
		return p.lead(s, l, out)
	case pcWLink:
		s.pc = pcWWait
		return append(out, Op{Kind: OpAwait, Word: p.status(l, p.ref[l]), Cond: CondNe, Arg: StatusWait})
	case pcWWait:
		st := res[0]
		if l > 0 {
			if st != StatusAcqParent {
				return held(s, pcHeldW) // passed within the element: levels above are inherited
			}
			return p.lead(s, l, out)
		}
		if p.rw() && st == StatusModeChange {
			s.pc = pcWTopMC
			return append(out, Op{Kind: OpStore, Word: p.status(0, p.ref[0]), Arg: statusFirstHolder})
		}
		return held(s, pcHeldW)
	case pcWTop:
		if l > 0 {
			return p.enterLevel(s, l-1, out)
		}
		return p.setWrite(s, out)
	case pcWTopMC:
		return p.setWrite(s, out)
	case pcWSetW:
		if p.sh.cfg.Faults.SkipDrain {
			return held(s, pcHeldW)
		}
		s.pc = pcWDrain
		for i, op := range done {
			out = append(out, Op{Kind: OpAwaitDrain, Word: word(WArrive, 0, op.Word.Idx), Tag: res[i] + WriteFlag})
		}
		return out
	case pcWDrain:
		return held(s, pcHeldW)

	// ---- writer release (Listings 5 and 8) ----
	case pcRRead:
		succ := res[0]
		if l == 0 && !p.rw() {
			// RMA-MCS at the machine level: no threshold, so STATUS is not read (N = 1 then
			// issues exactly D-MCS's operations).
			if succ != 0 {
				return p.pass(s, 0, succ, statusFirstHolder, out)
			}
			return p.leaveRoot(s, out)
		}
		st := res[1]
		if st < statusFirstHolder {
			panic(fmt.Sprintf("rma: rank %d releases level %d with status %d", p.rank, l+1, st))
		}
		s.cnt = uint32(st - statusCount0)
		tl := uint32(p.sh.cfg.TL[l])
		if l > 0 {
			if succ != 0 && s.cnt < tl {
				return p.pass(s, l, succ, count(s.cnt+1), out)
			}
			s.saved[l] = succ
			return p.readLevel(s, l-1, out)
		}
		switch {
		case succ != 0 && s.cnt < tl:
			return p.pass(s, 0, succ, count(s.cnt+1), out)
		case succ != 0: // T_L,1 reached: the readers' turn
			s.succ = succ
			return p.reset(s, afterMC, out)
		case p.sh.cfg.Faults.PaperReleaseOrder:
			return p.reset(s, afterCAS, out)
		}
		return p.leaveRoot(s, out)
	case pcRPass:
		return p.unwind(s, int(s.top), out)
	case pcR1CAS:
		if res[0] == p.ref[0] {
			if p.rw() && !p.sh.cfg.Faults.PaperReleaseOrder {
				return p.reset(s, afterUnwind, out) // queue left first, then the readers' turn
			}
			return p.unwind(s, 0, out)
		}
		s.pc = pcR1Wait
		return append(out, Op{Kind: OpAwait, Word: p.next(0, p.ref[0]), Cond: CondNe, Arg: 0})
	case pcR1Wait:
		if !p.rw() {
			return p.pass(s, 0, res[0], statusFirstHolder, out)
		}
		s.succ = res[0]
		if p.sh.cfg.Faults.PaperReleaseOrder { // the counters were reset already
			return p.pass(s, 0, s.succ, StatusModeChange, out)
		}
		return p.reset(s, afterMC, out)
	case pcRst1:
		s.pc = pcRst2
		for i, op := range done {
			dep := res[i]
			if p.sh.cfg.Faults.ResetArriveFirst {
				out = append(out, Op{Kind: OpFAA, Word: word(WArrive, 0, op.Word.Idx), Arg: -dep - WriteFlag})
			} else {
				out = append(out, Op{Kind: OpFAA, Word: word(WDepart, 0, op.Word.Idx), Arg: -dep})
			}
		}
		return out
	case pcRst2:
		s.pc = pcRst3
		for _, op := range done {
			if p.sh.cfg.Faults.ResetArriveFirst {
				out = append(out, Op{Kind: OpFAA, Word: word(WDepart, 0, op.Word.Idx), Arg: op.Arg + WriteFlag})
			} else {
				out = append(out, Op{Kind: OpFAA, Word: word(WArrive, 0, op.Word.Idx), Arg: op.Arg - WriteFlag})
			}
		}
		return out
	case pcRst3:
		switch s.after {
		case afterMC:
			return p.pass(s, 0, s.succ, StatusModeChange, out)
		case afterCAS:
			return p.leaveRoot(s, out)
		}
		return p.unwind(s, 0, out)
	case pcPostCAS:
		if res[0] == p.ref[l] {
			return p.unwind(s, l, out)
		}
		s.pc = pcPostWt
		return append(out, Op{Kind: OpAwait, Word: p.next(l, p.ref[l]), Cond: CondNe, Arg: 0})
	case pcPostWt:
		return p.pass(s, l, res[0], StatusAcqParent, out)

	// ---- reader (Listings 9 and 10) ----
	case pcRdFAA:
		cur := res[0]
		v := cur
		if p.sh.cfg.Faults.ReaderIgnoresWrite {
			v = cur &^ (WriteFlag | WriteFlag<<1)
		}
		tr := uint64(p.sh.cfg.TR)
		if v < tr {
			return held(s, pcHeldR)
		}
		s.barrier = true
		if cur == tr { // the first to reach T_R: reset the counter if no writer waits
			s.pc = pcRdTail
			return append(out, Op{Kind: OpLoad, Word: word(WTail, 0, 0)})
		}
		return p.backOff(s, out)
	case pcRdTail:
		if res[0] != 0 {
			return p.backOff(s, out)
		}
		if p.sh.cfg.Faults.PaperReaderReset {
			s.pc = pcPr1
			return append(out, Op{Kind: OpLoad, Word: word(WArrive, 0, p.ctr)}, Op{Kind: OpLoad, Word: word(WDepart, 0, p.ctr)})
		}
		if p.sh.cfg.Faults.UnclaimedReaderReset {
			s.pc = pcRr1
			return append(out, Op{Kind: OpLoad, Word: word(WDepart, 0, p.ctr)})
		}
		s.pc = pcRdClaim
		return append(out, Op{Kind: OpFAA, Word: word(WArrive, 0, p.ctr), Arg: ResetFlag})
	case pcRdClaim:
		if flagged(res[0]) {
			// A writer took over, or another reader is resetting: withdraw the claim and the
			// arrival in one subtraction and wait.
			s.pc = pcRdBack
			return append(out, Op{Kind: OpFAA, Word: word(WArrive, 0, p.ctr), Arg: ^ResetFlag}) // -(ResetFlag+1)
		}
		s.pc = pcRr1
		return append(out, Op{Kind: OpLoad, Word: word(WDepart, 0, p.ctr)})
	case pcRr1:
		s.pc = pcRr2
		return append(out, Op{Kind: OpFAA, Word: word(WDepart, 0, p.ctr), Arg: -res[0]})
	case pcRr2:
		// ARRIVE loses what DEPART lost, the claim and this reader's own arrival (its back-off),
		// in one subtraction; then it retries.
		s.pc = pcRr3
		d := done[0].Arg - 1
		if !p.sh.cfg.Faults.UnclaimedReaderReset {
			d -= ResetFlag
		}
		return append(out, Op{Kind: OpFAA, Word: word(WArrive, 0, p.ctr), Arg: d})
	case pcRr3:
		s.barrier = false
		return p.retry(s, out)
	case pcPr1:
		arr, dep := res[0], res[1]
		sub := -dep
		if arr >= WriteFlag {
			sub -= WriteFlag
		}
		s.pc = pcPr2
		return append(out, Op{Kind: OpFAA, Word: word(WArrive, 0, p.ctr), Arg: sub}, Op{Kind: OpFAA, Word: word(WDepart, 0, p.ctr), Arg: -dep})
	case pcPr2:
		s.barrier = false
		return p.backOff(s, out)
	case pcRdBack:
		if s.barrier {
			s.pc = pcRdAwait
			return append(out, p.barrierWait())
		}
		return p.retry(s, out)
	case pcRdAwait:
		return p.retry(s, out)
	case pcRdRel:
		*s = State{}
		return out
	}
	panic(fmt.Sprintf("rma: Resume in state %d", s.pc))
}

// held canonicalizes the state of a holder (nothing of the acquisition is needed to release).
func held(s *State, pc uint8) []Op {
	*s = State{pc: pc}
	return nil
}

// enterLevel resets the own queue node of level l before enqueueing there.
func (p *Proc) enterLevel(s *State, l int, out []Op) []Op {
	s.lvl = int8(l)
	s.pc = pcWInit
	return append(out,
		Op{Kind: OpStore, Word: p.next(l, p.ref[l]), Arg: 0},
		Op{Kind: OpStore, Word: p.status(l, p.ref[l]), Arg: StatusWait})
}

// lead: the process heads level l's queue (no predecessor, or ACQUIRE_PARENT): it starts a run
// of count 1 and climbs, or at the machine level takes the lock from the readers.
func (p *Proc) lead(s *State, l int, out []Op) []Op {
	if l == 0 && !p.rw() {
		return held(s, pcHeldW) // RMA-MCS: the machine-level count is never read
	}
	s.pc = pcWTop
	return append(out, Op{Kind: OpStore, Word: p.status(l, p.ref[l]), Arg: statusFirstHolder})
}

// setWrite adds the WRITE flag to every counter (Listing 6's set_counters_to_WRITE, posted
// as one batch); the drain follows.
func (p *Proc) setWrite(s *State, out []Op) []Op {
	s.pc = pcWSetW
	for k := 0; k < p.sh.Counters(); k++ {
		out = append(out, Op{Kind: OpFAA, Word: word(WArrive, 0, uint64(k)), Arg: WriteFlag})
	}
	return out
}

// readLevel reads the own queue node of level l to decide how to release it.
func (p *Proc) readLevel(s *State, l int, out []Op) []Op {
	s.lvl = int8(l)
	s.pc = pcRRead
	out = append(out, Op{Kind: OpLoad, Word: p.next(l, p.ref[l])})
	if l > 0 || p.rw() {
		out = append(out, Op{Kind: OpLoad, Word: p.status(l, p.ref[l])})
	}
	return out
}

// pass hands level l to succ with STATUS v; unwinding continues below l afterwards.
func (p *Proc) pass(s *State, l int, succ, v uint64, out []Op) []Op {
	s.top = int8(l)
	s.pc = pcRPass
	return append(out, Op{Kind: OpStore, Word: p.status(l, succ), Arg: v})
}

// leaveRoot tries to remove the own queue node from the machine-level queue.
func (p *Proc) leaveRoot(s *State, out []Op) []Op {
	s.lvl = 0
	s.pc = pcR1CAS
	return append(out, Op{Kind: OpCAS, Word: p.tail(0), Cmp: p.ref[0], Arg: 0})
}

// reset returns every counter to READ mode (Listing 6's reset_counters, as three batches:
// read DEPART, subtract it from DEPART, subtract it and the WRITE flag from ARRIVE; DEPART
// first, so that ARRIVE-DEPART never under-counts the readers inside for a draining writer).
func (p *Proc) reset(s *State, after uint8, out []Op) []Op {
	s.after = after
	s.pc = pcRst1
	for k := 0; k < p.sh.Counters(); k++ {
		out = append(out, Op{Kind: OpLoad, Word: word(WDepart, 0, uint64(k))})
	}
	return out
}

// unwind finishes the levels below top, innermost last: each one hands over to its saved
// successor with ACQUIRE_PARENT or leaves its queue.
func (p *Proc) unwind(s *State, top int, out []Op) []Op {
	l := top + 1
	if l >= p.sh.n {
		*s = State{}
		return out
	}
	s.lvl = int8(l)
	if succ := s.saved[l]; succ != 0 {
		return p.pass(s, l, succ, StatusAcqParent, out)
	}
	s.pc = pcPostCAS
	return append(out, Op{Kind: OpCAS, Word: p.tail(l), Cmp: p.ref[l], Arg: 0})
}

// barrierWait waits until a retry can succeed or can claim the counter's reset: ARRIVE at most
// T_R with no flag. (Listing 9 waits for ARRIVE < T_R, which strands readers when the counter
// stopped at exactly T_R with nobody left to reset it: Faults.PaperReaderBarrier.)
func (p *Proc) barrierWait() Op {
	bound := uint64(p.sh.cfg.TR) + 1
	if p.sh.cfg.Faults.PaperReaderBarrier {
		bound--
	}
	return Op{Kind: OpAwait, Word: word(WArrive, 0, p.ctr), Cond: CondLt, Arg: bound}
}

// retry arrives again.
func (p *Proc) retry(s *State, out []Op) []Op {
	s.pc = pcRdFAA
	return append(out, Op{Kind: OpFAA, Word: word(WArrive, 0, p.ctr), Arg: 1})
}

func (p *Proc) backOff(s *State, out []Op) []Op {
	s.pc = pcRdBack
	return append(out, Op{Kind: OpFAA, Word: word(WArrive, 0, p.ctr), Arg: ^uint64(0)}) // -1
}

// AppendBinary appends a compact encoding of s (encoding.BinaryAppender); the model checker
// stores states this way.
func (s *State) AppendBinary(b []byte) ([]byte, error) {
	flags := s.after
	if s.barrier {
		flags |= 0x80
	}
	b = append(b, s.pc, byte(s.lvl), byte(s.top), flags)
	b = binary.AppendUvarint(b, uint64(s.cnt))
	b = binary.AppendUvarint(b, s.succ)
	for _, v := range s.saved {
		b = binary.AppendUvarint(b, v)
	}
	return b, nil
}

// DecodeState reads a state written by AppendBinary and returns the rest of b.
func DecodeState(b []byte) (State, []byte, error) {
	var s State
	if len(b) < 4 {
		return s, b, errors.New("rma: short state")
	}
	s.pc, s.lvl, s.top, s.after = b[0], int8(b[1]), int8(b[2]), b[3]&0x7f
	s.barrier = b[3]&0x80 != 0
	b = b[4:]
	next := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	s.cnt = uint32(next())
	s.succ = next()
	for i := range s.saved {
		s.saved[i] = next()
	}
	if b == nil {
		return s, nil, errors.New("rma: bad state encoding")
	}
	return s, b, nil
}
