// Package rwmodel is an explicit-state model checker for RMA-MCS and RMA-RW (rdma/rma). It does
// not re-describe the algorithm: it drives rdma/rma's own step machines (rma.Proc, the code the
// verbs driver runs) over an abstract memory and enumerates every interleaving of their
// operations for a small configuration.
//
// Each operation of a batch is one atomic step, and the operations of a batch are applied in
// every order (a driver posts them together and may see them complete in any order). This is
// the RNIC's contract as rdma/rma uses it: every word is read-modify-written through one path
// only (CPU atomics for node-local structures, NIC atomics otherwise, checked by the access
// audit of rdma/rma's tests), and aligned 8-byte reads and writes are atomic with both. A swap
// is one step: one masked compare-and-swap on the NIC, or a CPU compare-and-swap loop on a
// node-local word. A wait
// (OpAwait) is a step enabled when its condition holds; a drain wait (OpAwaitDrain) reads
// ARRIVE and DEPART in two steps.
//
// Checked, at every step: mutual exclusion between writers and between a writer and readers;
// the writer-phase bound (at most T_W = prod T_L,i writer entries between two counter resets,
// RMA-RW); deadlock freedom; quiescence (when every process is idle, every tail is empty and
// every counter is in READ mode with ARRIVE = DEPART); optionally that no reachable state traps
// a process (from every state every process can still complete its next acquisition, or all
// its rounds). States are stored as 128-bit fingerprints (hash compaction, as SPIN's -DHC);
// a fingerprint collision could only hide states, never report a false violation, and at
// the sizes explored (well below 10^8 states) its probability is below 10^-20.
package rwmodel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/netlock-go/netlock/rdma/model"
	"github.com/netlock-go/netlock/rdma/rma"
)

// Role says what a process does.
type Role uint8

// Roles.
const (
	Writer Role = iota + 1
	Reader
	Either // each acquisition chooses (both choices are explored)
	Idle   // never acquires (keeps the topology uniform with fewer active processes)
)

func (r Role) String() string {
	switch r {
	case Writer:
		return "W"
	case Reader:
		return "R"
	case Idle:
		return "-"
	}
	return "RW"
}

// Limits of the explored configurations.
const (
	MaxProcs = 6
	maxWords = 40
	maxBatch = 2
)

// Config selects the configuration to explore.
type Config struct {
	// Lock is the lock under test (Nodes*ProcsPerNode <= MaxProcs, at most 2 counters).
	Lock rma.Config
	// Roles gives each rank's role; len must be P.
	Roles []Role
	// Rounds is the number of acquisitions per process (0: forever).
	Rounds int
	// MaxStates bounds the exploration (0: 20 million).
	MaxStates int
	// Liveness also checks that no reachable state traps a process.
	Liveness bool
}

// Result reports an exploration.
type Result struct {
	States, Transitions int
	// MaxPhase is the largest number of writer entries seen between two counter resets.
	MaxPhase int
	// MaxReaders is the largest number of readers seen in the critical section at once.
	MaxReaders int
	// WriterEntries and ReaderEntries count entering transitions (evidence the run is not
	// vacuous).
	WriterEntries, ReaderEntries int
	// Violation is the first property violated ("" if none), with a trace from the initial
	// state.
	Violation string
	Trace     []string
	Truncated bool
}

// Phases of a process.
const (
	phNCS uint8 = iota
	phAcq
	phCS
	phRel
)

type cop struct {
	kind    rma.OpKind
	cond    rma.Cond
	w       uint8
	applied bool
	haveA   bool
	arg     uint64
	cmp     uint64
	tag     uint64
}

type proc struct {
	m     rma.State
	ph    uint8
	mode  rma.Mode
	round uint8
	n     uint8
	ops   [maxBatch]cop
	res   [maxBatch]uint64
}

// State is one global state.
type State struct {
	mem  [maxWords]uint64
	p    [MaxProcs]proc
	wRun uint8
}

type checker struct {
	cfg    Config
	sh     *rma.Shape
	procs  []*rma.Proc
	words  []rma.Word
	index  map[rma.Word]int
	depart map[int]int // ARRIVE index -> DEPART index
	tails  []int
	ctrs   [][2]int
	tw     int
	buf    []rma.Op
	out    []rma.Op
	done   [MaxProcs][]int32 // Liveness with Rounds > 0: states where process t has finished
	res    []uint64
	seeds  [2]maphash.Seed
}

func ref(l, o int) uint64 { return uint64(l+1)<<16 | uint64(o+1) }

func newChecker(cfg Config) (*checker, error) {
	sh, err := rma.NewShape(cfg.Lock)
	if err != nil {
		return nil, err
	}
	p := sh.Procs()
	if p > MaxProcs {
		return nil, fmt.Errorf("rwmodel: %d processes (max %d)", p, MaxProcs)
	}
	if len(cfg.Roles) != p {
		return nil, fmt.Errorf("rwmodel: %d roles for %d processes", len(cfg.Roles), p)
	}
	if sh.Counters() > maxBatch {
		return nil, fmt.Errorf("rwmodel: %d counters (max %d)", sh.Counters(), maxBatch)
	}
	if cfg.Rounds < 0 || cfg.Rounds > 100 {
		return nil, fmt.Errorf("rwmodel: %d rounds", cfg.Rounds)
	}
	for _, r := range cfg.Roles {
		if (r == Reader || r == Either) && !sh.Config().Readers {
			return nil, errors.New("rwmodel: readers need an RMA-RW lock")
		}
		if r < Writer || r > Idle {
			return nil, fmt.Errorf("rwmodel: role %d", r)
		}
	}
	if cfg.MaxStates == 0 {
		cfg.MaxStates = 20_000_000
	}
	c := &checker{cfg: cfg, sh: sh, index: map[rma.Word]int{}, depart: map[int]int{}, tw: 1,
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	add := func(w rma.Word) int {
		c.index[w] = len(c.words)
		c.words = append(c.words, w)
		return len(c.words) - 1
	}
	for l := 0; l < sh.Levels(); l++ {
		for j := 0; j < sh.Elements(l); j++ {
			c.tails = append(c.tails, add(rma.Word{Kind: rma.WTail, Lvl: uint8(l), Idx: uint64(j)}))
		}
		for o := 0; o < sh.Owners(l); o++ {
			add(rma.Word{Kind: rma.WNext, Lvl: uint8(l), Idx: ref(l, o)})
			add(rma.Word{Kind: rma.WStatus, Lvl: uint8(l), Idx: ref(l, o)})
		}
	}
	for k := 0; k < sh.Counters(); k++ {
		a := add(rma.Word{Kind: rma.WArrive, Idx: uint64(k)})
		d := add(rma.Word{Kind: rma.WDepart, Idx: uint64(k)})
		c.depart[a] = d
		c.ctrs = append(c.ctrs, [2]int{a, d})
	}
	if len(c.words) > maxWords {
		return nil, fmt.Errorf("rwmodel: %d words (max %d)", len(c.words), maxWords)
	}
	if sh.Config().Readers {
		for _, t := range sh.Config().TL {
			c.tw *= t
		}
	}
	for r := 0; r < p; r++ {
		pr, err := rma.NewProc(sh, r, ref)
		if err != nil {
			return nil, err
		}
		c.procs = append(c.procs, pr)
	}
	return c, nil
}

type fp [2]uint64

func (c *checker) fingerprint(b []byte) fp {
	return fp{maphash.Bytes(c.seeds[0], b), maphash.Bytes(c.seeds[1], b)}
}

// encode appends the compact encoding of s (only the words and processes in use).
func (c *checker) encode(b []byte, s *State) []byte {
	for i := range c.words {
		b = binary.AppendUvarint(b, s.mem[i])
	}
	b = append(b, s.wRun)
	for i := range c.procs {
		p := &s.p[i]
		b = append(b, p.ph, byte(p.mode), p.round, p.n)
		b, _ = p.m.AppendBinary(b)
		for j := 0; j < int(p.n); j++ {
			o := &p.ops[j]
			var f byte
			if o.applied {
				f |= 1
			}
			if o.haveA {
				f |= 2
			}
			b = append(b, byte(o.kind), byte(o.cond), o.w, f)
			b = binary.AppendUvarint(b, o.arg)
			b = binary.AppendUvarint(b, o.cmp)
			b = binary.AppendUvarint(b, o.tag)
			b = binary.AppendUvarint(b, p.res[j])
		}
	}
	return b
}

// decode reads a state written by encode.
func (c *checker) decode(b []byte) State {
	var s State
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			panic("rwmodel: corrupt state")
		}
		b = b[n:]
		return v
	}
	for i := range c.words {
		s.mem[i] = uv()
	}
	s.wRun, b = b[0], b[1:]
	for i := range c.procs {
		p := &s.p[i]
		p.ph, p.mode, p.round, p.n = b[0], rma.Mode(b[1]), b[2], b[3]
		var err error
		if p.m, b, err = rma.DecodeState(b[4:]); err != nil {
			panic(err)
		}
		for j := 0; j < int(p.n); j++ {
			o := &p.ops[j]
			o.kind, o.cond, o.w = rma.OpKind(b[0]), rma.Cond(b[1]), b[2]
			o.applied, o.haveA = b[3]&1 != 0, b[3]&2 != 0
			b = b[4:]
			o.arg, o.cmp, o.tag, p.res[j] = uv(), uv(), uv(), uv()
		}
	}
	return s
}

type node struct {
	parent int32
	proc   int8
	choice int8
}

type edge struct {
	from, to int32
	proc     int8
	goal     bool
}

// Explore runs a breadth-first exhaustive search from the initial state.
func Explore(cfg Config) (Result, error) {
	c, err := newChecker(cfg)
	if err != nil {
		return Result{}, err
	}
	var init State
	enc := c.encode(nil, &init)
	seen := map[fp]int32{c.fingerprint(enc): 0}
	nodes := []node{{-1, -1, 0}}
	frontier, offs := append([]byte(nil), enc...), []int32{0, int32(len(enc))}
	ids := []int32{0}
	var res Result
	var edges []edge
	fail := func(id int32, msg string) (Result, error) {
		res.Violation = msg
		res.Trace = c.trace(nodes, id)
		res.States = len(nodes)
		return res, nil
	}
	for len(ids) > 0 {
		var nextF []byte
		nextOffs := []int32{0}
		var nextIDs []int32
		for fi, id := range ids {
			st := c.decode(frontier[offs[fi]:offs[fi+1]])
			s := &st
			if c.cfg.Liveness && c.cfg.Rounds > 0 {
				for t := range c.procs {
					if s.p[t].ph == phNCS && (int(s.p[t].round) >= c.cfg.Rounds || c.cfg.Roles[t] == Idle) {
						c.done[t] = append(c.done[t], id)
					}
				}
			}
			moved := false
			for i := range c.procs {
				choices := c.choices(s, i)
				for k := 0; k < choices; k++ {
					next, ok, bad, enter := c.step(s, i, k)
					if !ok {
						continue
					}
					moved = true
					res.Transitions++
					if enter == rma.Exclusive {
						res.WriterEntries++
					} else if enter == rma.Shared {
						res.ReaderEntries++
					}
					res.MaxPhase = max(res.MaxPhase, int(next.wRun))
					res.MaxReaders = max(res.MaxReaders, readersIn(&next))
					enc = c.encode(enc[:0], &next)
					f := c.fingerprint(enc)
					to, dup := seen[f]
					if !dup {
						if len(nodes) >= c.cfg.MaxStates {
							res.Truncated = true
							res.States = len(nodes)
							return res, nil
						}
						to = int32(len(nodes))
						seen[f] = to
						nodes = append(nodes, node{id, int8(i), int8(k)})
						nextF = append(nextF, enc...)
						nextOffs = append(nextOffs, int32(len(nextF)))
						nextIDs = append(nextIDs, to)
					}
					if bad != "" {
						if dup {
							nodes = append(nodes, node{id, int8(i), int8(k)})
							to = int32(len(nodes) - 1)
						}
						return fail(to, bad)
					}
					if c.cfg.Liveness {
						edges = append(edges, edge{id, to, int8(i), enter != 0})
					}
				}
			}
			if !moved && !c.allDone(s) {
				return fail(id, "deadlock: no process can move")
			}
		}
		frontier, offs, ids = nextF, nextOffs, nextIDs
	}
	res.States = len(nodes)
	if c.cfg.Liveness {
		if pr, st := c.trapped(len(nodes), edges); st >= 0 {
			return fail(int32(st), fmt.Sprintf("liveness: from this state process p%d can never %s", pr, c.goalName()))
		}
	}
	return res, nil
}

func (c *checker) goalName() string {
	if c.cfg.Rounds > 0 {
		return "finish its rounds"
	}
	return "enter the critical section again"
}

func readersIn(s *State) int {
	n := 0
	for i := range s.p {
		if s.p[i].ph == phCS && s.p[i].mode == rma.Shared {
			n++
		}
	}
	return n
}

func (c *checker) allDone(s *State) bool {
	if c.cfg.Rounds == 0 {
		return false
	}
	for i := range c.procs {
		if s.p[i].ph != phNCS || (int(s.p[i].round) < c.cfg.Rounds && c.cfg.Roles[i] != Idle) {
			return false
		}
	}
	return true
}

func (c *checker) modes(i int) []rma.Mode {
	switch c.cfg.Roles[i] {
	case Writer:
		return []rma.Mode{rma.Exclusive}
	case Reader:
		return []rma.Mode{rma.Shared}
	case Idle:
		return nil
	}
	return []rma.Mode{rma.Exclusive, rma.Shared}
}

// choices is the number of candidate moves of process i (some may be disabled).
func (c *checker) choices(s *State, i int) int {
	p := &s.p[i]
	switch p.ph {
	case phNCS:
		if c.cfg.Rounds > 0 && int(p.round) >= c.cfg.Rounds {
			return 0
		}
		return len(c.modes(i))
	case phCS:
		return 1
	}
	return int(p.n)
}

// step performs choice k of process i. It returns the successor, whether the move was
// enabled, a violation, and the mode of an acquisition it completed.
func (c *checker) step(s *State, i, k int) (State, bool, string, rma.Mode) {
	next := *s
	p := &next.p[i]
	pr := c.procs[i]
	switch p.ph {
	case phNCS:
		p.mode = c.modes(i)[k]
		p.ph = phAcq
		if p.mode == rma.Exclusive {
			c.load(p, pr.Lock(&p.m, c.buf))
		} else {
			c.load(p, pr.RLock(&p.m, c.buf))
		}
		return next, true, "", 0
	case phCS:
		p.ph = phRel
		if p.mode == rma.Exclusive {
			c.load(p, pr.Unlock(&p.m, c.buf))
		} else {
			c.load(p, pr.RUnlock(&p.m, c.buf))
		}
		return next, true, "", 0
	}
	op := &p.ops[k]
	if op.applied {
		return next, false, "", 0
	}
	m := &next.mem
	switch op.kind {
	case rma.OpLoad:
		p.res[k] = m[op.w]
	case rma.OpStore:
		m[op.w] = op.arg
	case rma.OpCAS:
		p.res[k] = m[op.w]
		if m[op.w] == op.cmp {
			m[op.w] = op.arg
		}
	case rma.OpFAA:
		p.res[k] = m[op.w]
		m[op.w] += op.arg
	case rma.OpSwap:
		p.res[k] = m[op.w]
		m[op.w] = op.arg
	case rma.OpAwait:
		if !op.cond.Holds(m[op.w], op.arg) {
			return next, false, "", 0
		}
		p.res[k] = m[op.w]
	case rma.OpAwaitDrain:
		if !op.haveA {
			op.tag, op.haveA = m[op.w], true
			return next, true, "", 0
		}
		if op.tag-rma.WriteFlag != m[c.depart[int(op.w)]] {
			op.haveA, op.tag = false, 0
			return next, true, "", 0
		}
	}
	op.applied = true
	for j := 0; j < int(p.n); j++ {
		if !p.ops[j].applied {
			return next, true, "", 0
		}
	}
	// The batch is complete: hand the results to the machine.
	wasResetting := p.m.Resetting()
	c.buf = c.buf[:0]
	for j := 0; j < int(p.n); j++ {
		o := &p.ops[j]
		c.buf = append(c.buf, rma.Op{Kind: o.kind, Word: c.words[o.w], Arg: o.arg, Cmp: o.cmp, Cond: o.cond, Tag: o.tag})
	}
	c.res = append(c.res[:0], p.res[:p.n]...)
	c.out = pr.Resume(&p.m, c.buf, c.res, c.out[:0])
	c.load(p, c.out)
	if wasResetting && !p.m.Resetting() {
		next.wRun = 0
	}
	if len(c.out) > 0 {
		return next, true, "", 0
	}
	if p.ph == phRel {
		p.ph = phNCS
		if c.cfg.Rounds > 0 {
			p.round++
		}
		p.mode = 0
		return next, true, c.quiescence(&next), 0
	}
	p.ph = phCS
	return next, true, c.enter(&next, i), p.mode
}

// load stores a batch in the process's pending slots.
func (c *checker) load(p *proc, ops []rma.Op) {
	if len(ops) > maxBatch {
		panic(fmt.Sprintf("rwmodel: batch of %d operations", len(ops)))
	}
	p.n = uint8(len(ops))
	p.ops = [maxBatch]cop{}
	p.res = [maxBatch]uint64{}
	for j, o := range ops {
		w, ok := c.index[o.Word]
		if !ok {
			panic(fmt.Sprintf("rwmodel: unknown word %v", o.Word))
		}
		p.ops[j] = cop{kind: o.Kind, cond: o.Cond, w: uint8(w), arg: o.Arg, cmp: o.Cmp, tag: o.Tag, haveA: o.Kind == rma.OpAwaitDrain}
	}
}

// enter checks the properties when process i enters the critical section.
func (c *checker) enter(s *State, i int) string {
	me := s.p[i].mode
	var others []string
	for j := range c.procs {
		q := &s.p[j]
		if j == i || q.ph != phCS {
			continue
		}
		if me == rma.Exclusive || q.mode == rma.Exclusive {
			others = append(others, fmt.Sprintf("p%d(%s)", j, modeName(q.mode)))
		}
	}
	if len(others) > 0 {
		kind := "writer/writer"
		if me == rma.Shared || strings.Contains(strings.Join(others, ","), "(R)") {
			kind = "reader/writer"
		}
		return fmt.Sprintf("mutual exclusion (%s): p%d(%s) entered while %s held the lock", kind, i, modeName(me), strings.Join(others, ","))
	}
	if me == rma.Exclusive && c.sh.Config().Readers {
		s.wRun++
		if int(s.wRun) > c.tw {
			return fmt.Sprintf("writer phase: %d writer entries without a counter reset (T_W = %d)", s.wRun, c.tw)
		}
	}
	return ""
}

// quiescence checks the idle invariants once every process is idle.
func (c *checker) quiescence(s *State) string {
	for i := range c.procs {
		if s.p[i].ph != phNCS {
			return ""
		}
	}
	for _, t := range c.tails {
		if s.mem[t] != 0 {
			return fmt.Sprintf("quiescence: %v = %d with every process idle", c.words[t], s.mem[t])
		}
	}
	for _, ad := range c.ctrs {
		a, d := s.mem[ad[0]], s.mem[ad[1]]
		if a >= rma.WriteFlag || a != d {
			return fmt.Sprintf("quiescence: %v = %#x, %v = %#x with every process idle", c.words[ad[0]], a, c.words[ad[1]], d)
		}
	}
	return ""
}

func modeName(m rma.Mode) string {
	if m == rma.Shared {
		return "R"
	}
	return "W"
}

// trapped returns a process and a reachable state from which that process can never reach its
// goal (-1 if there is none): with Rounds == 0 an entering move, else a state where it has
// finished every round. Computed backwards over the transition graph.
func (c *checker) trapped(n int, edges []edge) (int, int) {
	rev := model.NewReverse(n, edges, func(e edge) (int32, int32) { return e.from, e.to })
	good := make([]bool, n)
	for t := range c.procs {
		if c.cfg.Roles[t] == Idle {
			continue
		}
		clear(good)
		if c.cfg.Rounds == 0 {
			for _, e := range edges {
				if int(e.proc) == t && e.goal {
					good[e.from] = true
				}
			}
		} else {
			for _, st := range c.finished(t) {
				good[st] = true
			}
		}
		rev.CanReach(good)
		for st, ok := range good {
			if !ok {
				return t, st
			}
		}
	}
	return -1, -1
}

// finished lists the states in which process t has completed all its rounds (recorded during
// the exploration).
func (c *checker) finished(t int) []int32 { return c.done[t] }

// trace replays the recorded moves from the initial state and labels them.
func (c *checker) trace(nodes []node, id int32) []string {
	var path []node
	for i := id; i > 0; i = nodes[i].parent {
		path = append(path, nodes[i])
	}
	var s State
	out := []string{"init"}
	for k := len(path) - 1; k >= 0; k-- {
		n := path[k]
		i := int(n.proc)
		label := c.label(&s, i, int(n.choice))
		next, _, _, _ := c.step(&s, i, int(n.choice))
		s = next
		out = append(out, label)
	}
	return out
}

func (c *checker) label(s *State, i, k int) string {
	p := &s.p[i]
	who := fmt.Sprintf("p%d(%s)", i, c.cfg.Roles[i])
	switch p.ph {
	case phNCS:
		if c.modes(i)[k] == rma.Exclusive {
			return who + " lock"
		}
		return who + " rlock"
	case phCS:
		return who + " unlock"
	}
	return who + " " + c.opString(s, &p.ops[k])
}

// opString describes a pending operation and the value its word has before it is applied.
func (c *checker) opString(s *State, o *cop) string {
	w := c.words[o.w]
	name := c.wordName(w)
	v := s.mem[o.w]
	val := func(x uint64) string { return c.valName(w, x) }
	switch o.kind {
	case rma.OpLoad:
		return fmt.Sprintf("load %s = %s", name, val(v))
	case rma.OpStore:
		return fmt.Sprintf("store %s := %s", name, val(o.arg))
	case rma.OpSwap:
		return fmt.Sprintf("swap %s := %s (was %s)", name, val(o.arg), val(v))
	case rma.OpCAS:
		return fmt.Sprintf("cas %s %s -> %s (was %s)", name, val(o.cmp), val(o.arg), val(v))
	case rma.OpFAA:
		return fmt.Sprintf("faa %s %s (was %s)", name, delta(o.arg), val(v))
	case rma.OpAwait:
		cond := "!="
		if o.cond == rma.CondLt {
			cond = "<"
		}
		return fmt.Sprintf("await %s %s %s (is %s)", name, cond, val(o.arg), val(v))
	case rma.OpAwaitDrain:
		d := s.mem[c.depart[int(o.w)]]
		if o.haveA {
			return fmt.Sprintf("drain %s: arrive %s, depart %d", name, val(o.tag), d)
		}
		return fmt.Sprintf("drain %s: read arrive %s", name, val(v))
	}
	return fmt.Sprintf("%v %s", o.kind, name)
}

// wordName names a word with its owner: next[L2,p1] is process 1's leaf queue node,
// status[L1,e0] element 0's node in the level-1 queue.
func (c *checker) wordName(w rma.Word) string {
	switch w.Kind {
	case rma.WNext, rma.WStatus:
		return fmt.Sprintf("%s[%s]", map[rma.WordKind]string{rma.WNext: "next", rma.WStatus: "status"}[w.Kind], c.refName(w.Idx))
	case rma.WTail:
		return fmt.Sprintf("tail[L%d,e%d]", w.Lvl+1, w.Idx)
	}
	return w.String()
}

func (c *checker) refName(r uint64) string {
	l, o := int(r>>16)-1, int(r&0xffff)-1
	if l == c.sh.Levels()-1 || c.sh.Config().Faults.PaperQueueNodes {
		return fmt.Sprintf("L%d,p%d", l+1, o)
	}
	return fmt.Sprintf("L%d,e%d", l+1, o)
}

// valName prints a word's value: queue-node references by owner, STATUS symbolically, the
// WRITE flag of ARRIVE as "W+n".
func (c *checker) valName(w rma.Word, v uint64) string {
	switch w.Kind {
	case rma.WTail, rma.WNext:
		if v == 0 {
			return "nil"
		}
		return c.refName(v)
	case rma.WStatus:
		switch v {
		case rma.StatusWait:
			return "WAIT"
		case rma.StatusAcqParent:
			return "ACQUIRE_PARENT"
		case rma.StatusModeChange:
			return "MODE_CHANGE"
		}
		return fmt.Sprintf("count%d", v-2)
	case rma.WArrive:
		if v < 3*rma.WriteFlag && v >= rma.ResetFlag {
			var b strings.Builder
			if n := v / rma.WriteFlag; n > 0 {
				fmt.Fprintf(&b, "%sW+", map[uint64]string{1: "", 2: "2"}[n])
				v -= n * rma.WriteFlag
			}
			if n := v / rma.ResetFlag; n > 0 {
				fmt.Fprintf(&b, "%dR+", n)
				v -= n * rma.ResetFlag
			}
			return fmt.Sprintf("%s%d", b.String(), v)
		}
	}
	if int64(v) < 0 {
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprint(v)
}

// delta prints an FAA operand, with the WRITE flag as W.
func delta(d uint64) string {
	x := int64(d)
	switch {
	case x == int64(rma.ResetFlag):
		return "+R"
	case x == -int64(rma.ResetFlag)-1:
		return "-R-1"
	case x < -int64(rma.ResetFlag)/2 && x > -int64(rma.WriteFlag)/2:
		return fmt.Sprintf("-R%+d", x+int64(rma.ResetFlag))
	case x == int64(rma.WriteFlag):
		return "+W"
	case x >= int64(rma.WriteFlag)/2:
		return fmt.Sprintf("+W%+d", x-int64(rma.WriteFlag))
	case x == -int64(rma.WriteFlag):
		return "-W"
	case x <= -int64(rma.WriteFlag)/2:
		return fmt.Sprintf("-W%+d", x+int64(rma.WriteFlag))
	}
	return fmt.Sprintf("%+d", x)
}
