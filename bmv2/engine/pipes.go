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
// How. Every stateful object keeps the cells of the pipe being run in its usual fields (a
// Register's cells, a Counter's Packets and Bytes, a Meter's cells, a DirectRegister's map, a
// RegisterAction's execute_log index), so the compiled code reads and writes them as it does
// with one pipe. With Pipes > 1 the object also holds every pipe's cells, and a pass that
// enters another pipe points the fields at that pipe's (enterPipe: a slice header or two per
// object, once per change of pipe). With Pipes <= 1 nothing of this runs: the per-packet
// cost is one comparison per pass. Invariant: outside Process, and between passes, the fields
// of every object are the copy of pipe ctx.pipe, and ctx.pipe is 0 outside Process. Direct
// meters live in table entries: an entry holds pipe 0's in its own field and pipe k's in
// entry.pipes[k-1], chosen by ctx.pipe on a hit. A direct counter is one count per entry for
// all pipes: the program cannot read a counter and the API reads the sum of the pipes
// anyway, so per-pipe copies could not be told apart (and would cost the table hit, shared
// with v1model programs, a branch: 3% of BenchmarkL3).
//
// The runtime API. BF-RT on Tofino reads a register cell of a symmetric program as one value
// per pipe, and counters are, to a P4Runtime controller, one object; the engine's API is
// single-valued, so:
//   - Writes go to every pipe: Register.Write and Reset, Meter.SetRates and Reset,
//     Table.SetMeter. Counter.Write, whose read sums over the pipes, puts the value in pipe
//     0 and zeroes the other pipes, so that a read returns what was written (writing the
//     value into every pipe would read back Pipes times it); Table.SetDirectCounter sets
//     the entry's one count.
//   - Counter reads sum over the pipes (Counter.Read; Table.Entries and Table.Lookup's
//     direct counter values, which are one count): the packets the program counted,
//     wherever they ran.
//   - Register reads return pipe 0's cell (Register.Read), meter reads pipe 0's
//     configuration (Meter.Rates, Table.DirectMeter). Pipe 0 holds the recirculation port
//     68 and the CPU port; a test that needs another pipe's cell names it.
//   - Register.ReadPipe, Register.WritePipe, Counter.ReadPipe and Counter.WritePipe read and
//     write one pipe's copy; Pipes reports how many copies an object has.
// With Pipes <= 1 every call behaves as before pipes existed.
//
// Several Pipelines (Switch(pa, pb, ...), loadTNA): pipe k runs the k-th Pipeline's blocks
// (Switch.tnaPipes[k], which enterPipe makes Switch.tna), and each Pipeline's objects exist
// once, under names with its prefix (pipelineNames); nothing is copied. Ports of pipes beyond
// the Pipelines are in none.

// ErrNoPipe is returned when a packet arrives on, or is sent to, a port outside the chip's
// pipes (Config.Pipes > 1; p>>7 must be below Pipes).
var ErrNoPipe = errors.New("engine: port outside the chip's pipes")

// pipeCount validates Config.Pipes and returns the number of pipes (at least 1).
func pipeCount(n int, tna bool) (int, error) {
	switch n {
	case 0, 1:
		return 1, nil
	case 2, 4:
		if !tna {
			return 0, fmt.Errorf("%w: Config.Pipes is %d: pipes are for TNA programs (a v1model program runs on one)", ErrInvalid, n)
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: Config.Pipes is %d, not 0, 1, 2 or 4", ErrInvalid, n)
}

// portPipe returns the pipe of port, or an error wrapping ErrNoPipe if the chip has no such
// pipe. Only called with s.pipes > 1.
func (s *Switch) portPipe(port int) (int, error) {
	if port >= 0 && port>>7 < s.pipes {
		return port >> 7, nil
	}
	return 0, fmt.Errorf("%w: port %d is in pipe %d; the program runs in pipes 0 to %d (Config.Pipes %d)", ErrNoPipe, port, port>>7, s.pipes-1, s.cfg.Pipes)
}

// perPipe is an object with a copy of its state in each pipe.
type perPipe interface {
	// usePipe makes the object's fields the copy of pipe to instead of pipe from.
	usePipe(from, to int)
}

// enterPipe makes every object's fields the copies of pipe k.
func (s *Switch) enterPipe(k int) {
	if k == s.c.pipe {
		return
	}
	for _, o := range s.pipeObjs {
		o.usePipe(s.c.pipe, k)
	}
	if s.tnaPipes != nil {
		s.tna = s.tnaPipes[k]
	}
	s.c.pipe = k
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

// splitPipes gives every stateful object a copy of its state (as loaded: initial values
// too) in each pipe, reserving the copies from the memory budget. It runs at the end of
// loadTNA, once every object exists.
func (cp *compiler) splitPipes(dirRegs []*tnaDirectReg, actions []*regAction) {
	sw := cp.sw
	n := sw.pipes
	if n <= 1 {
		return
	}
	more := uint64(n - 1)
	for _, r := range sw.registers {
		cp.reserve(front.Pos{}, fmt.Sprintf("register %s in %d more pipes", r.Name, more), more*uint64(len(r.cells)), cellBytes(r.Width, false))
		r.copies = make([][]u128, n)
		r.copies[0] = r.cells
		for k := 1; k < n; k++ {
			r.copies[k] = slices.Clone(r.cells)
		}
		sw.pipeObjs = append(sw.pipeObjs, r)
	}
	for _, k := range sw.counters {
		if k.direct {
			continue // in the table entries
		}
		cp.reserve(front.Pos{}, fmt.Sprintf("counter %s in %d more pipes", k.Name, more), more*uint64(len(k.Packets)), counterCellBytes)
		k.pkCopies, k.byCopies = make([][]uint64, n), make([][]uint64, n)
		k.pkCopies[0], k.byCopies[0] = k.Packets, k.Bytes
		for p := 1; p < n; p++ {
			k.pkCopies[p], k.byCopies[p] = make([]uint64, len(k.Packets)), make([]uint64, len(k.Bytes))
		}
		sw.pipeObjs = append(sw.pipeObjs, k)
	}
	for _, m := range sw.meters {
		if m.direct {
			continue // in the table entries
		}
		cp.reserve(front.Pos{}, fmt.Sprintf("meter %s in %d more pipes", m.Name, more), more*uint64(len(m.cells)), meterCellBytes)
		m.copies = make([][]meterState, n)
		m.copies[0] = m.cells
		for p := 1; p < n; p++ {
			m.copies[p] = make([]meterState, len(m.cells))
		}
		sw.pipeObjs = append(sw.pipeObjs, m)
	}
	for _, d := range dirRegs {
		d.copies = make([]map[*entry]u128, n)
		d.copies[0] = d.cells
		for p := 1; p < n; p++ {
			d.copies[p] = map[*entry]u128{}
		}
		sw.pipeObjs = append(sw.pipeObjs, d)
	}
	for _, ra := range actions {
		ra.logCopies = make([]uint64, n)
		sw.pipeObjs = append(sw.pipeObjs, ra)
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

// entryPipe is a table entry's direct meter in a pipe other than pipe 0.
type entryPipe struct {
	meter *meterState
}

// newEntryPipes makes the direct meter of an entry in pipes 1 and up (nil with one pipe or
// no direct meter).
func (t *Table) newEntryPipes() []entryPipe {
	if t.sw == nil || t.sw.pipes <= 1 || t.meter == nil {
		return nil
	}
	ps := make([]entryPipe, t.sw.pipes-1)
	for i := range ps {
		ps[i].meter = &meterState{}
	}
	return ps
}

// meterIn is the entry's direct meter in a pipe.
func (en *entry) meterIn(pipe int) *meterState {
	if pipe == 0 {
		return en.meter
	}
	return en.pipes[pipe-1].meter
}

// checkPipe validates a pipe number of an object with n copies.
func checkPipe(kind, name string, pipe, n int) error {
	if pipe < 0 || pipe >= n {
		return fmt.Errorf("%w: %s %s has %d pipes, no pipe %d", ErrInvalid, kind, name, n, pipe)
	}
	return nil
}

// Pipes is the number of copies of the register, one per pipe (Config.Pipes; 1 for one pipe).
func (r *Register) Pipes() int { return max(len(r.copies), 1) }

// ReadPipe returns cell i of the register's copy in pipe (0 <= pipe < Pipes()), big-endian
// in ceil(Width/8) bytes.
func (r *Register) ReadPipe(pipe, i int) ([]byte, error) {
	if err := checkPipe("register", r.Name, pipe, r.Pipes()); err != nil {
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
	if err := checkPipe("register", r.Name, pipe, r.Pipes()); err != nil {
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

// Pipes is the number of copies of an indexed counter, one per pipe (Config.Pipes; 1 for one
// pipe or a direct counter, whose copies are in the table's entries).
func (k *Counter) Pipes() int { return max(len(k.pkCopies), 1) }

// ReadPipe returns cell i of the counter's copy in pipe (0 <= pipe < Pipes()).
func (k *Counter) ReadPipe(pipe, i int) (packets, bytes uint64, err error) {
	if err := checkPipe("counter", k.Name, pipe, k.Pipes()); err != nil {
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
	if err := checkPipe("counter", k.Name, pipe, k.Pipes()); err != nil {
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

// Pipes is the number of copies of an indexed meter, one per pipe (Config.Pipes; 1 for one
// pipe or a direct meter, whose copies are in the table's entries).
func (m *Meter) Pipes() int { return max(len(m.copies), 1) }

// pipeCells are the meter's cells in every pipe.
func (m *Meter) pipeCells() [][]meterState {
	if m.copies == nil {
		return [][]meterState{m.cells}
	}
	return m.copies
}

// pipelineNames prefixes the control-plane names of the objects of one Pipeline of several
// with the Pipeline's prefix (pipe.Control.name, as bf-p4c names them before its P4Runtime
// conversion strips the prefix) and gives them their P4Info ids. P4Info names them without
// the prefix, so Pipelines built from the same controls have entities of equal names; their ids
// are hashed from the prefixed name (front: addPiped), which tells them apart unless the hash
// collided (then the id stays 0).
func (cp *compiler) pipelineNames(prefix string, tables []*Table, registers []*Register, counters []*Counter, meters []*Meter, profiles []*ActionProfile, valueSets []*ValueSet) {
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
	for _, x := range tables {
		rename(&x.Name, &x.ID)
	}
	for _, x := range registers {
		rename(&x.Name, &x.ID)
	}
	for _, x := range counters {
		rename(&x.Name, &x.ID)
	}
	for _, x := range meters {
		rename(&x.Name, &x.ID)
	}
	for _, x := range profiles {
		rename(&x.Name, &x.ID)
	}
	for _, x := range valueSets {
		rename(&x.Name, &x.ID)
	}
}
