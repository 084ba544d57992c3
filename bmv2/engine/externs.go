package engine

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/netlock-go/netlock/bmv2/front"
)

// ErrAssert is returned by Process when an assert or assume call fails (bmv2 aborts).
var ErrAssert = errors.New("engine: assertion failed")

// ErrTofinoConstraint is returned in Tofino-constraint mode when one pipeline pass accesses
// a register array twice.
var ErrTofinoConstraint = errors.New("engine: tofino constraint violated")

// hashAlgo returns the bmv2 implementation of a HashAlgorithm member (by declaration order:
// crc32, crc32_custom, crc16, crc16_custom, random, identity, csum16, xor16).
func (cp *compiler) hashAlgo(code uint64, pos front.Pos) func(*ctx, []byte) u128 {
	var name string
	for _, d := range cp.checked.Globals["HashAlgorithm"] {
		if ed, ok := d.(*front.EnumDecl); ok && int(code) < len(ed.Members) {
			name = ed.Members[code].Name
		}
	}
	switch name {
	case "crc32", "crc32_custom":
		return func(_ *ctx, b []byte) u128 { return u128{lo: HashCRC32(b)} }
	case "crc16", "crc16_custom":
		return func(_ *ctx, b []byte) u128 { return u128{lo: uint64(crc16(b))} }
	case "identity":
		// bmv2: the first (up to) 8 bytes of the input as a big-endian integer.
		return func(_ *ctx, b []byte) u128 {
			var v uint64
			for _, x := range b[:min(len(b), 8)] {
				v = v<<8 | uint64(x)
			}
			return u128{lo: v}
		}
	case "csum16":
		return func(_ *ctx, b []byte) u128 { return u128{lo: uint64(csum16(b))} }
	case "xor16":
		return func(_ *ctx, b []byte) u128 {
			var x uint16
			for i := 0; i < len(b); i += 2 {
				w := uint16(b[i]) << 8
				if i+1 < len(b) {
					w |= uint16(b[i+1])
				}
				x ^= w
			}
			return u128{lo: uint64(x)}
		}
	case "random":
		return func(c *ctx, _ []byte) u128 { return u128{lo: c.sw.cfg.Random()} }
	}
	cp.fail(pos, "not supported by the netlock engine: hash algorithm %q", name)
	return nil
}

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for k := 0; k < 8; k++ {
			if c&1 == 1 {
				c = c>>1 ^ 0xA001
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return
}()

// crc16 is bmv2's crc16: CRC-16/ARC (polynomial 0x8005 reflected, init 0, no final xor).
func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c>>8 ^ crc16Table[byte(c)^x]
	}
	return c
}

// csum16 is the Internet checksum as bmv2 computes it: the ones' complement of the ones'
// complement sum of the 16-bit big-endian words (an odd trailing byte is padded with zero).
func csum16(b []byte) uint16 {
	// 32-bit big-endian halves of 8-byte loads: ones' complement addition is the same in
	// any grouping of 16-bit words once the carries are folded back (RFC 1071).
	var sum uint64
	for len(b) >= 8 {
		w := binary.BigEndian.Uint64(b)
		sum += w>>32 + w&0xffffffff
		b = b[8:]
	}
	for len(b) >= 2 {
		sum += uint64(b[0])<<8 | uint64(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// Register is a register array.
type Register struct {
	Name  string
	ID    uint32
	Width int
	// The cells, in storage sized to the width: a v1model register of at most 32 bits keeps
	// them in c32, of at most 64 bits in c64, a wider one (and every TNA register) in cells.
	// Exactly one of the three holds the register's cells. Narrow storage keeps large arrays in
	// the cache (p4/netlock.p4's ended table: 65536 cells of 32 bits, 256 KB instead of 1 MB).
	cells []u128
	c64   []uint64
	c32   []uint32
	// copies are the cells of each pipe of the register's Pipeline's scope, indexed by pipe
	// (nil with a scope of one pipe): cells is the copy of the pipe its group is in
	// (pipes.go). inPipes is the scope (nil: one pipe, pipe 0).
	copies  [][]u128
	inPipes []int
	// Tofino-constraint bookkeeping: the register action of the current pass (its pass,
	// action invocation, cell, reads and writes so far and where it started), and the gress
	// that first used the register.
	tPass    uint64
	tGroup   uint64
	tIdx     u128
	tReads   uint8
	tWrites  uint8
	tPos     string
	gress    uint8
	gressPos string
}

// newRegister makes a register of n cells of width bits, its storage sized to the width when
// narrow is set (v1model), in 128-bit cells otherwise (TNA, whose register actions work on
// the cells in place).
func newRegister(name string, id uint32, width, n int, narrow bool) *Register {
	r := &Register{Name: name, ID: id, Width: width}
	switch {
	case narrow && width <= 32:
		r.c32 = make([]uint32, n)
	case narrow && width <= 64:
		r.c64 = make([]uint64, n)
	default:
		r.cells = make([]u128, n)
	}
	return r
}

// Size is the number of cells.
func (r *Register) Size() int { return len(r.cells) + len(r.c64) + len(r.c32) }

// cell returns cell i (i < Size()).
func (r *Register) cell(i uint64) u128 {
	switch {
	case r.c32 != nil:
		return u128{lo: uint64(r.c32[i])}
	case r.c64 != nil:
		return u128{lo: r.c64[i]}
	}
	return r.cells[i]
}

// setCell sets cell i (i < Size()) to v, which fits the width.
func (r *Register) setCell(i uint64, v u128) {
	switch {
	case r.c32 != nil:
		r.c32[i] = uint32(v.lo)
	case r.c64 != nil:
		r.c64[i] = v.lo
	default:
		r.cells[i] = v
	}
}

// get64 reads cell i of a v1model register of at most 64 bits (0 out of range).
func (r *Register) get64(i uint64) uint64 {
	if r.c32 != nil {
		return r.Get32(i)
	}
	return r.Get64(i)
}

// set64 writes cell i of a v1model register of at most 64 bits (v within the width; ignored
// out of range).
func (r *Register) set64(i, v uint64) {
	if r.c32 != nil {
		r.Set32(i, v)
		return
	}
	r.Set64(i, v)
}

// Read returns cell i big-endian in ceil(Width/8) bytes: the cell of its home pipe, the first
// of Pipes() (pipe 0 for a program of one Pipeline), when the register has a copy in several
// (Config.Pipes > 1; ReadPipe reads another).
func (r *Register) Read(i int) ([]byte, error) { return r.ReadPipe(homeOf(r.inPipes), i) }

// Write sets cell i from a big-endian value (truncated to Width), in every pipe.
func (r *Register) Write(i int, v []byte) error {
	if i < 0 || i >= r.Size() {
		return fmt.Errorf("register %s: index %d out of range", r.Name, i)
	}
	v128 := fromBytes(v).trunc(r.Width)
	if r.copies == nil {
		r.setCell(uint64(i), v128)
		return nil
	}
	for _, cs := range r.copies {
		if cs != nil {
			cs[i] = v128
		}
	}
	return nil
}

// Reset zeroes every cell, in every pipe.
func (r *Register) Reset() {
	clear(r.cells)
	clear(r.c64)
	clear(r.c32)
	for _, cs := range r.copies {
		clear(cs)
	}
}

// Gresses, for the Tofino-constraint check.
const (
	gressIngress = 1
	gressEgress  = 2
)

var gressNames = [...]string{"", "ingress", "egress"}

// access records a read (write false) or write of cell idx at pos and, in Tofino-constraint
// mode, fails when it is not part of the one register action the array may run in this pass
// (see Config.TofinoConstraints).
func (r *Register) access(c *ctx, idx u128, write bool, pos string) error {
	if !c.sw.cfg.TofinoConstraints {
		return nil
	}
	if r.gress == 0 {
		r.gress, r.gressPos = c.gress, pos
	} else if r.gress != c.gress {
		return fmt.Errorf("%w: register %s is used in %s at %s and in %s at %s", ErrTofinoConstraint, r.Name,
			gressNames[r.gress], r.gressPos, gressNames[c.gress], pos)
	}
	group := c.actInvocation
	if c.actDepth == 0 {
		c.actInvocation++ // an access outside any action is a register action of its own
		group = c.actInvocation
	}
	if r.tPass != c.pass {
		r.tPass, r.tGroup, r.tIdx, r.tReads, r.tWrites, r.tPos = c.pass, group, idx, 0, 0, pos
	} else {
		var why string
		switch {
		case r.tGroup != group:
			why = "accessed by two register actions in one pass"
		case r.tIdx != idx:
			why = "two cells accessed in one pass"
		case write && r.tWrites > 0:
			why = "written twice in one pass"
		case !write && r.tReads > 0:
			why = "read twice in one pass"
		}
		if why != "" {
			return fmt.Errorf("%w: register %s %s, at %s and at %s", ErrTofinoConstraint, r.Name, why, r.tPos, pos)
		}
	}
	if write {
		r.tWrites++
	} else {
		r.tReads++
	}
	return nil
}

// Counter is an indexed or direct counter.
type Counter struct {
	Name   string
	ID     uint32
	direct bool
	// Packets and Bytes are the cells of an indexed counter. With a copy in each pipe
	// (Config.Pipes > 1) they are pipe 0's outside Process; Read sums the pipes.
	Packets []uint64
	Bytes   []uint64
	// pkCopies and byCopies are Packets and Bytes of each pipe of the scope, indexed by pipe
	// (nil with a scope of one pipe), as Register.copies; inPipes is the scope.
	pkCopies, byCopies [][]uint64
	inPipes            []int
}

func (k *Counter) count(i u128, n int) {
	if i.hi != 0 || i.lo >= uint64(len(k.Packets)) {
		return
	}
	k.Packets[i.lo]++
	k.Bytes[i.lo] += uint64(n)
}

// MeterConfig is a two-rate three-color meter configuration as bmv2 takes it: rates in units
// (packets or bytes) per microsecond, bursts in units.
type MeterConfig struct {
	CIR, PIR float64
	CBS, PBS uint64
}

// Meter colors as bmv2 reports them.
const (
	Green  = 0
	Yellow = 1
	Red    = 2
)

type meterRate struct {
	rate       float64 // units per microsecond
	burst      uint64
	tokens     uint64
	tokensLast uint64
}

type meterState struct {
	cfg        *MeterConfig
	rates      [2]meterRate // committed (YELLOW when short), peak (RED when short); peak checked first
	configured bool
}

// execute is bmv2's Meter::execute: tokens accrue from the time origin (the switch's first
// clock reading) in whole units; the peak bucket is checked first (Meter::set_rates reverses
// the rates it is given, committed then peak): if it is short the packet is RED and nothing is
// consumed; otherwise it is consumed and the committed bucket is checked: short means YELLOW,
// else it is consumed too and the packet is GREEN (RFC 2698's order; real simple_switch:
// externs.stf, 2026-11-28).
func (m *meterState) execute(micros uint64, bytes bool, pktLen int) uint64 {
	if m == nil || !m.configured {
		return Green
	}
	input := uint64(1)
	if bytes {
		input = uint64(pktLen)
	}
	for _, i := range [...]int{1, 0} {
		r := &m.rates[i]
		since := uint64(float64(micros) * r.rate)
		if since >= r.tokensLast {
			r.tokens = min(r.tokens+(since-r.tokensLast), r.burst)
			r.tokensLast = since
		}
		if r.tokens < input {
			return uint64(i + 1)
		}
		r.tokens -= input
	}
	return Green
}

func (m *meterState) set(cfg MeterConfig, micros uint64) {
	c := cfg
	m.cfg, m.configured = &c, true
	m.rates[0] = meterRate{rate: c.CIR, burst: c.CBS, tokens: c.CBS, tokensLast: uint64(float64(micros) * c.CIR)}
	m.rates[1] = meterRate{rate: c.PIR, burst: c.PBS, tokens: c.PBS, tokensLast: uint64(float64(micros) * c.PIR)}
}

// Meter is an indexed or direct meter.
type Meter struct {
	sw     *Switch
	Name   string
	ID     uint32
	direct bool
	bytes  bool
	cells  []meterState
	// copies are the cells of each pipe of the scope, indexed by pipe (nil with a scope of
	// one pipe), as Register.copies; inPipes is the scope.
	copies  [][]meterState
	inPipes []int
	// entryCopies are a direct meter's cells of its table's entries in pipes 1 and up
	// (Config.Pipes > 1; entry.meter is pipe 0's), kept out of the entry so that the entries
	// of every table stay as small as with one pipe.
	entryCopies map[*entry][]meterState
}

func (m *Meter) execute(c *ctx, i u128) uint64 {
	if i.hi != 0 || i.lo >= uint64(len(m.cells)) {
		return Green
	}
	return m.cells[i.lo].execute(c.sw.micros(), m.bytes, c.pktLen())
}

// SetRates configures cell i (all cells when i < 0), in every pipe.
func (m *Meter) SetRates(i int, cfg MeterConfig) error {
	now := m.sw.micros()
	if i >= len(m.cells) {
		return fmt.Errorf("meter %s: index %d out of range", m.Name, i)
	}
	for _, cs := range m.pipeCells() {
		if i < 0 {
			for k := range cs {
				cs[k].set(cfg, now)
			}
			continue
		}
		cs[i].set(cfg, now)
	}
	return nil
}

// Rates returns the configuration of cell i (pipe 0's with a copy in each pipe), or nil if it
// is not configured.
func (m *Meter) Rates(i int) *MeterConfig {
	if i < 0 || i >= len(m.cells) {
		return nil
	}
	cell := &m.pipeCells()[0][i]
	if !cell.configured {
		return nil
	}
	c := *cell.cfg
	return &c
}
