package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/netlock-go/netlock/bmv2/front"
)

// This file gives a TNA program one copy of its state per pipe (Config.Pipes).
//
// A Tofino 1 or 2 has 2 or 4 pipes; a program with one Pipeline in Switch(pipe) main is
// loaded into every pipe, and each pipe has its own copy of every stateful object (its
// registers, counters and meters live in that pipe's MAU stages). Port p is in pipe p>>7.
// A packet's ingress pass runs in the pipe of the port it arrived on, its egress pass in the
// pipe of the port it leaves on; a packet sent out of a port in loopback enters the ingress of
// that port's pipe (Tofino 1's recirculation port 68 is pipe 0's), and a resubmitted packet
// stays in its pipe. Table entries, default actions, value sets, port metadata, clone
// sessions and multicast groups are one set for all pipes: the control plane writes them
// symmetrically.
//
// A program of several Pipelines (Switch(pa, pb, ...)) runs each in its scope, the pipes
// bf_switchd's configuration gives it (Config.PipeScopes; by default the k-th Pipeline in
// pipe k): each Pipeline has its own blocks (Switch.tnaPipes) and objects, named with its
// prefix (pipelineNames), and a Pipeline in several pipes has a copy of its objects' state in
// each. A pipe in no scope runs nothing: its ports are in no pipe (ErrNoPipe).
//
// How. Every stateful object keeps the cells of the pipe being run in its usual fields (a
// Register's cells, a Counter's Packets and Bytes, a Meter's cells, a DirectRegister's map, a
// RegisterAction's execute_log index), so the compiled code reads and writes them as it does
// with one pipe. With a scope of several pipes the object also holds the cells of each pipe
// of the scope (copies, indexed by pipe), and a pass that enters another pipe points the
// fields of its Pipeline's objects at that pipe's (enterPipe: a slice header or two per
// object, once per change of pipe). With Pipes <= 1 nothing of this runs: the per-packet
// cost is one comparison per pass. Invariants: between passes, each Pipeline's objects show
// the copy of the pipe pipeGroup.cur of their group, the group of pipeOf[ctx.pipe] has cur ==
// ctx.pipe and Switch.tna is its Pipeline; outside Process every group is at its home, the
// first pipe of its scope. A direct meter's cells are the table entries': an entry holds
// pipe 0's in its own field, the Meter pipe k's in entryCopies[entry][k-1] (out of the
// entry, whose size stays what it is with one pipe), chosen by ctx.pipe on a hit. A direct
// counter is one count per entry for all pipes: the program cannot read a counter and the
// API reads the sum of the pipes anyway, so per-pipe copies could not be told apart (and
// would cost the table hit, shared with v1model programs, a branch: 3% of BenchmarkL3).
//
// The runtime API. BF-RT on Tofino reads a register cell of a symmetric program as one value
// per pipe, and counters are, to a P4Runtime controller, one object; the engine's API is
// single-valued, so:
//   - Writes go to every pipe of the object: Register.Write and Reset, Meter.SetRates and
//     Reset, Table.SetMeter. Counter.Write, whose read sums over the pipes, puts the value
//     in the object's home pipe and zeroes the others, so that a read returns what was
//     written (writing the value into every pipe would read back Pipes times it);
//     Table.SetDirectCounter sets the entry's one count.
//   - Counter reads sum over the pipes (Counter.Read; Table.Entries and Table.Lookup's
//     direct counter values, which are one count): the packets the program counted,
//     wherever they ran.
//   - Register reads return the home pipe's cell (Register.Read: pipe 0's for a program of
//     one Pipeline), meter reads its configuration (Meter.Rates; Table.DirectMeter: pipe
//     0's). Pipe 0 holds the recirculation port 68 (the CPU port may be another pipe's:
//     192 on a 2-pipe Tofino 1, 255 in the netlock tests); a test that needs another pipe's
//     cell names it.
//   - Register.ReadPipe, Register.WritePipe, Counter.ReadPipe and Counter.WritePipe read and
//     write one pipe's copy; Pipes lists the pipes an object has a copy in.
// With Pipes <= 1 every call behaves as before pipes existed.

// ErrNoPipe is returned when a packet arrives on, or is sent to, a port outside the pipes
// that run the program (Config.Pipes > 1; port p is in pipe p>>7).
var ErrNoPipe = errors.New("engine: port outside the chip's pipes")

// pipeCount validates Config.Pipes and returns the number of pipes (at least 1).
func pipeCount(cfg Config, tna bool) (int, error) {
	switch cfg.Pipes {
	case 0, 1:
		if cfg.PipeScopes != nil {
			return 0, fmt.Errorf("%w: Config.PipeScopes on a chip of one pipe (Config.Pipes %d)", ErrInvalid, cfg.Pipes)
		}
		return 1, nil
	case 2, 4:
		if !tna {
			return 0, fmt.Errorf("%w: Config.Pipes is %d: pipes are for TNA programs (a v1model program runs on one)", ErrInvalid, cfg.Pipes)
		}
		return cfg.Pipes, nil
	}
	return 0, fmt.Errorf("%w: Config.Pipes is %d, not 0, 1, 2 or 4", ErrInvalid, cfg.Pipes)
}

// pipeScopes validates Config.PipeScopes for a program of n Pipelines on a chip of pipes and
// returns the scopes: the given ones, or by default every pipe for one Pipeline and pipe k
// for the k-th of several.
func pipeScopes(given [][]int, n, pipes int) ([][]int, error) {
	if given == nil {
		if n == 1 {
			all := make([]int, pipes)
			for p := range all {
				all[p] = p
			}
			return [][]int{all}, nil
		}
		scopes := make([][]int, n)
		for k := range scopes {
			scopes[k] = []int{k}
		}
		return scopes, nil
	}
	if len(given) != n {
		return nil, fmt.Errorf("%w: Config.PipeScopes has %d scopes for a program of %d Pipelines", ErrInvalid, len(given), n)
	}
	owner := map[int]int{}
	for k, sc := range given {
		if len(sc) == 0 {
			return nil, fmt.Errorf("%w: Config.PipeScopes[%d] is empty", ErrInvalid, k)
		}
		for _, p := range sc {
			if p < 0 || p >= pipes {
				return nil, fmt.Errorf("%w: Config.PipeScopes[%d] has pipe %d; the chip has %d (Config.Pipes)", ErrInvalid, k, p, pipes)
			}
			if j, ok := owner[p]; ok {
				return nil, fmt.Errorf("%w: Config.PipeScopes puts pipe %d in scopes %d and %d", ErrInvalid, p, j, k)
			}
			owner[p] = k
		}
	}
	return given, nil
}

// portPipe returns the pipe of port, or an error wrapping ErrNoPipe if no Pipeline runs in it.
// Only called with s.pipes > 1.
func (s *Switch) portPipe(port int) (int, error) {
	if k := port >> 7; port >= 0 && k < s.pipes && s.pipeOf[k] >= 0 {
		return k, nil
	}
	var run []int
	for p, k := range s.pipeOf {
		if k >= 0 {
			run = append(run, p)
		}
	}
	return 0, fmt.Errorf("%w: port %d is in pipe %d; the program runs in pipes %v (Config.Pipes %d)", ErrNoPipe, port, port>>7, run, s.cfg.Pipes)
}

// perPipe is an object with a copy of its state in each pipe of its Pipeline's scope.
type perPipe interface {
	// usePipe makes the object's fields the copy of pipe to instead of pipe from.
	usePipe(from, to int)
}

// pipeGroup is one Pipeline's objects with copies (none if its scope is one pipe): their
// fields show the copy of pipe cur; home is the first pipe of the scope.
type pipeGroup struct {
	objs      []perPipe
	cur, home int
}

// enterPipe makes the objects of pipe k's Pipeline show its copies, and tna its Pipeline.
func (s *Switch) enterPipe(k int) {
	if k == s.c.pipe {
		return
	}
	pl := s.pipeOf[k]
	if g := &s.groups[pl]; g.cur != k {
		for _, o := range g.objs {
			o.usePipe(g.cur, k)
		}
		g.cur = k
	}
	s.tna = s.tnaPipes[pl]
	s.c.pipe = k
}

// goHome brings every group back to its home pipe, and ctx.pipe to the first Pipeline's.
func (s *Switch) goHome() {
	for i := range s.groups {
		g := &s.groups[i]
		if g.cur != g.home {
			for _, o := range g.objs {
				o.usePipe(g.cur, g.home)
			}
			g.cur = g.home
		}
	}
	s.tna = s.tnaPipes[0]
	s.c.pipe = s.groups[0].home
}

// enterPortPipe enters the pipe of port, for a pass on it (Config.Pipes > 1 only).
func (s *Switch) enterPortPipe(port int) error {
	k, err := s.portPipe(port)
	if err != nil {
		return err
	}
	s.enterPipe(k)
	return nil
}

// pipelineObjs are the objects of one Pipeline (or, as a mark, the lengths of the lists
// before its blocks were compiled).
type pipelineObjs struct {
	tables     []*Table
	registers  []*Register
	counters   []*Counter
	meters     []*Meter
	profiles   []*ActionProfile
	valueSets  []*ValueSet
	dirRegs    []*tnaDirectReg
	regActions []*regAction
	mark       [8]int
}

// objsMark notes where the objects of the next Pipeline will start.
func (cp *compiler) objsMark() pipelineObjs {
	sw := cp.sw
	return pipelineObjs{mark: [8]int{len(sw.tables), len(sw.registers), len(sw.counters), len(sw.meters), len(sw.profiles), len(sw.valueSets), len(cp.tnaDirRegs), len(cp.regActions)}}
}

// objsSince returns the objects created since mark (all of them for the zero mark).
func (cp *compiler) objsSince(m pipelineObjs) pipelineObjs {
	sw := cp.sw
	return pipelineObjs{tables: sw.tables[m.mark[0]:], registers: sw.registers[m.mark[1]:], counters: sw.counters[m.mark[2]:],
		meters: sw.meters[m.mark[3]:], profiles: sw.profiles[m.mark[4]:], valueSets: sw.valueSets[m.mark[5]:],
		dirRegs: cp.tnaDirRegs[m.mark[6]:], regActions: cp.regActions[m.mark[7]:]}
}

// splitPipes gives the objects of a Pipeline a copy of their state (as loaded: initial values
// too) in each pipe of its scope, reserving the copies from the memory budget, and makes its
// group. A scope of one pipe copies nothing; the objects only learn their pipe.
func (cp *compiler) splitPipes(scope []int, objs pipelineObjs) {
	sw := cp.sw
	n, home := sw.pipes, scope[0]
	g := pipeGroup{cur: home, home: home}
	defer func() { sw.groups = append(sw.groups, g) }()
	for _, r := range objs.registers {
		r.inPipes = scope
	}
	for _, c := range objs.counters {
		if !c.direct {
			c.inPipes = scope
		}
	}
	for _, m := range objs.meters {
		if !m.direct {
			m.inPipes = scope
		}
	}
	if len(scope) == 1 {
		return
	}
	more := uint64(len(scope) - 1)
	for _, r := range objs.registers {
		cp.reserve(front.Pos{}, fmt.Sprintf("register %s in %d more pipes", r.Name, more), more*uint64(len(r.cells)), cellBytes(r.Width, false))
		r.copies = make([][]u128, n)
		for _, p := range scope {
			r.copies[p] = slices.Clone(r.cells)
		}
		r.copies[home] = r.cells
		g.objs = append(g.objs, r)
	}
	for _, c := range objs.counters {
		if c.direct {
			continue // one count in the table entries
		}
		cp.reserve(front.Pos{}, fmt.Sprintf("counter %s in %d more pipes", c.Name, more), more*uint64(len(c.Packets)), counterCellBytes)
		c.pkCopies, c.byCopies = make([][]uint64, n), make([][]uint64, n)
		for _, p := range scope {
			c.pkCopies[p], c.byCopies[p] = make([]uint64, len(c.Packets)), make([]uint64, len(c.Bytes))
		}
		c.pkCopies[home], c.byCopies[home] = c.Packets, c.Bytes
		g.objs = append(g.objs, c)
	}
	for _, m := range objs.meters {
		if m.direct {
			continue // in the table entries
		}
		cp.reserve(front.Pos{}, fmt.Sprintf("meter %s in %d more pipes", m.Name, more), more*uint64(len(m.cells)), meterCellBytes)
		m.copies = make([][]meterState, n)
		for _, p := range scope {
			m.copies[p] = make([]meterState, len(m.cells))
		}
		m.copies[home] = m.cells
		g.objs = append(g.objs, m)
	}
	for _, d := range objs.dirRegs {
		d.copies = make([]map[*entry]u128, n)
		for _, p := range scope {
			d.copies[p] = map[*entry]u128{}
		}
		d.copies[home] = d.cells
		g.objs = append(g.objs, d)
	}
	for _, ra := range objs.regActions {
		ra.logCopies = make([]uint64, n)
		g.objs = append(g.objs, ra)
	}
}

func (r *Register) usePipe(_, to int) { r.cells = r.copies[to] }

func (k *Counter) usePipe(_, to int) { k.Packets, k.Bytes = k.pkCopies[to], k.byCopies[to] }

func (m *Meter) usePipe(_, to int) { m.cells = m.copies[to] }

func (d *tnaDirectReg) usePipe(_, to int) { d.cells = d.copies[to] }

func (ra *regAction) usePipe(from, to int) {
	ra.logCopies[from] = ra.logIdx
	ra.logIdx = ra.logCopies[to]
}

// addEntry gives an entry of the direct meter's table its cells in pipes 1 and up
// (Config.Pipes > 1; nothing for a nil meter or one pipe).
func (m *Meter) addEntry(en *entry) {
	if m == nil || m.sw.pipes <= 1 {
		return
	}
	if m.entryCopies == nil {
		m.entryCopies = map[*entry][]meterState{}
	}
	m.entryCopies[en] = make([]meterState, m.sw.pipes-1)
}

// removeEntry forgets a removed entry's cells.
func (m *Meter) removeEntry(en *entry) {
	if m != nil {
		delete(m.entryCopies, en)
	}
}

// pipesOf is the list of pipes an object has a copy in (nil: pipe 0 alone).
func pipesOf(in []int) []int {
	if in == nil {
		return []int{0}
	}
	return slices.Clone(in)
}

// homeOf is the first pipe of an object's list.
func homeOf(in []int) int {
	if in == nil {
		return 0
	}
	return in[0]
}

// checkPipe validates a pipe of an object whose copies are in the pipes in.
func checkPipe(kind, name string, pipe int, in []int) error {
	if in == nil && pipe == 0 || slices.Contains(in, pipe) {
		return nil
	}
	return fmt.Errorf("%w: %s %s has no copy in pipe %d (its pipes: %v)", ErrInvalid, kind, name, pipe, pipesOf(in))
}

// Pipes lists the pipes the register has a copy in: [0] with one pipe, every pipe of the chip
// for a program of one Pipeline (Config.Pipes), its Pipeline's scope otherwise
// (Config.PipeScopes).
func (r *Register) Pipes() []int { return pipesOf(r.inPipes) }

// ReadPipe returns cell i of the register's copy in pipe (one of Pipes()), big-endian in
// ceil(Width/8) bytes.
func (r *Register) ReadPipe(pipe, i int) ([]byte, error) {
	if err := checkPipe("register", r.Name, pipe, r.inPipes); err != nil {
		return nil, err
	}
	if i < 0 || i >= r.Size() {
		return nil, fmt.Errorf("register %s: index %d out of range", r.Name, i)
	}
	if r.copies == nil {
		return r.cell(uint64(i)).toBytes(r.Width), nil
	}
	return r.copies[pipe][i].toBytes(r.Width), nil
}

// WritePipe sets cell i of the register's copy in pipe from a big-endian value (truncated to
// Width).
func (r *Register) WritePipe(pipe, i int, v []byte) error {
	if err := checkPipe("register", r.Name, pipe, r.inPipes); err != nil {
		return err
	}
	if i < 0 || i >= r.Size() {
		return fmt.Errorf("register %s: index %d out of range", r.Name, i)
	}
	if r.copies == nil {
		r.setCell(uint64(i), fromBytes(v).trunc(r.Width))
		return nil
	}
	r.copies[pipe][i] = fromBytes(v).trunc(r.Width)
	return nil
}

// Pipes lists the pipes an indexed counter has a copy in (as Register.Pipes; [0] for a direct
// counter, one count in the table's entries).
func (k *Counter) Pipes() []int { return pipesOf(k.inPipes) }

// ReadPipe returns cell i of the counter's copy in pipe (one of Pipes()).
func (k *Counter) ReadPipe(pipe, i int) (packets, bytes uint64, err error) {
	if err := checkPipe("counter", k.Name, pipe, k.inPipes); err != nil {
		return 0, 0, err
	}
	if i < 0 || i >= len(k.Packets) {
		return 0, 0, fmt.Errorf("%w: counter %s index %d", ErrInvalid, k.Name, i)
	}
	if k.pkCopies == nil {
		return k.Packets[i], k.Bytes[i], nil
	}
	return k.pkCopies[pipe][i], k.byCopies[pipe][i], nil
}

// WritePipe sets cell i of the counter's copy in pipe.
func (k *Counter) WritePipe(pipe, i int, packets, bytes uint64) error {
	if err := checkPipe("counter", k.Name, pipe, k.inPipes); err != nil {
		return err
	}
	if i < 0 || i >= len(k.Packets) {
		return fmt.Errorf("%w: counter %s index %d", ErrInvalid, k.Name, i)
	}
	if k.pkCopies == nil {
		k.Packets[i], k.Bytes[i] = packets, bytes
		return nil
	}
	k.pkCopies[pipe][i], k.byCopies[pipe][i] = packets, bytes
	return nil
}

// Pipes lists the pipes an indexed meter has a copy in (as Register.Pipes; [0] for a direct
// meter, whose copies are in the table's entries).
func (m *Meter) Pipes() []int { return pipesOf(m.inPipes) }

// pipeCells are the meter's cells in each of its pipes, the home pipe's first.
func (m *Meter) pipeCells() [][]meterState {
	if m.copies == nil {
		return [][]meterState{m.cells}
	}
	out := make([][]meterState, 0, len(m.inPipes))
	for _, p := range m.inPipes {
		out = append(out, m.copies[p])
	}
	return out
}

// pipelineNames prefixes the control-plane names of the objects of one Pipeline of several
// with the Pipeline's prefix (pipe.Control.name, as bf-p4c names them before its P4Runtime
// conversion strips the prefix) and gives them their P4Info ids. P4Info names them without
// the prefix, so Pipelines built from the same controls have entities of equal names; their ids
// are hashed from the prefixed name (front: addPiped), which tells them apart unless the hash
// collided (then the id stays 0).
func (cp *compiler) pipelineNames(prefix string, objs pipelineObjs) {
	byName := map[string][]uint32{}
	if info, err := cp.checked.P4Info(); err == nil {
		add := func(name string, id uint32) { byName[name] = append(byName[name], id) }
		for _, x := range info.Tables {
			add(x.Preamble.Name, x.Preamble.Id)
		}
		for _, x := range info.Registers {
			add(x.Preamble.Name, x.Preamble.Id)
		}
		for _, x := range info.Counters {
			add(x.Preamble.Name, x.Preamble.Id)
		}
		for _, x := range info.DirectCounters {
			add(x.Preamble.Name, x.Preamble.Id)
		}
		for _, x := range info.Meters {
			add(x.Preamble.Name, x.Preamble.Id)
		}
		for _, x := range info.DirectMeters {
			add(x.Preamble.Name, x.Preamble.Id)
		}
		for _, x := range info.ActionProfiles {
			add(x.Preamble.Name, x.Preamble.Id)
		}
		for _, x := range info.ValueSets {
			add(x.Preamble.Name, x.Preamble.Id)
		}
	}
	rename := func(name *string, id *uint32) {
		full := prefix + "." + *name
		cands := byName[*name]
		*id = 0
		for _, c := range cands {
			if len(cands) == 1 || c&0xffffff == front.JenkinsOneAtATime(full)&0xffffff {
				*id = c
			}
		}
		*name = full
	}
	for _, x := range objs.tables {
		rename(&x.Name, &x.ID)
	}
	for _, x := range objs.registers {
		rename(&x.Name, &x.ID)
	}
	for _, x := range objs.counters {
		rename(&x.Name, &x.ID)
	}
	for _, x := range objs.meters {
		rename(&x.Name, &x.ID)
	}
	for _, x := range objs.profiles {
		rename(&x.Name, &x.ID)
	}
	for _, x := range objs.valueSets {
		rename(&x.Name, &x.ID)
	}
}
