package engine

import (
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// This file is the runtime surface of the Go backend (GenerateGo, gogen.go): what generated
// pipelines call, and how Load chooses between the one Config.Generated names and the
// interpreter (binding itself: gogen_bind.go).
// Generated code replaces the per-pass statement execution of the six v1model blocks only;
// every piece of runtime state (tables, registers, counters, meters, clone sessions,
// multicast, digests, packet-in) stays in the Switch, so the runtime API sees one switch
// whichever pipeline runs.

// Pipeline chooses what executes a v1model program's blocks (Config.Pipeline).
type Pipeline uint8

// Pipeline choices.
const (
	// PipelineAuto runs the generated pipeline Config.Generated names when it binds to the
	// program, and the interpreter otherwise: when there is none, when it was generated from
	// another program (ErrGenMismatch), or when Config.TofinoConstraints is set (generated
	// pipelines do not check the Tofino rules).
	PipelineAuto Pipeline = iota
	// PipelineInterpreted always runs the interpreter.
	PipelineInterpreted
	// PipelineGenerated runs the generated pipeline Config.Generated names; Load fails when
	// there is none, when it does not bind to the program, or when Config.TofinoConstraints is
	// set.
	PipelineGenerated
)

func (p Pipeline) String() string {
	switch p {
	case PipelineAuto:
		return "auto"
	case PipelineInterpreted:
		return "interp"
	case PipelineGenerated:
		return "gen"
	}
	return "pipeline(" + strconv.Itoa(int(p)) + ")"
}

// ParsePipeline parses "auto", "interp" or "gen".
func ParsePipeline(s string) (Pipeline, error) {
	switch s {
	case "auto", "":
		return PipelineAuto, nil
	case "interp", "interpreted":
		return PipelineInterpreted, nil
	case "gen", "generated":
		return PipelineGenerated, nil
	}
	return 0, fmt.Errorf("%w: pipeline %q (want auto, interp or gen)", ErrInvalid, s)
}

// GenBlocks are the six v1model blocks of a generated pipeline, bound to one Switch.
type GenBlocks struct {
	Parser, Verify, Ingress, Egress, Compute, Deparser func(*Gen)
}

// GenBinder binds a generated pipeline to a loaded switch: it checks that the switch runs the
// program the pipeline was generated from (GenCheck), reads the values of the program's
// parameters (GenConst), looks up the tables, registers, counters and meters the code uses (by
// control-plane name) and returns the blocks.
type GenBinder func(sw *Switch) (GenBlocks, error)

// Generated names a generated pipeline (Config.Generated): a generated package declares one
// for each of its pipelines (var <Name>Pipeline), and a binary that links the package runs a
// program on it by passing it to Load.
type Generated struct {
	// Name is the pipeline's name (GenOptions.Name), what Switch.GeneratedPipeline reports.
	Name string
	// Bind binds it to a switch.
	Bind GenBinder
}

// usePipeline binds the generated pipeline Config.Generated names, as Config.Pipeline asks
// (v1model only).
func (s *Switch) usePipeline(checked *front.Checked) error {
	if s.cfg.Pipeline == PipelineInterpreted {
		return nil
	}
	if s.cfg.Pipeline != PipelineAuto && s.cfg.Pipeline != PipelineGenerated {
		return fmt.Errorf("%w: %v", ErrInvalid, s.cfg.Pipeline)
	}
	if s.cfg.TofinoConstraints {
		if s.cfg.Pipeline == PipelineGenerated {
			return fmt.Errorf("%w: a generated pipeline does not check the Tofino constraints: use the interpreter with TofinoConstraints", ErrInvalid)
		}
		return nil
	}
	g := s.cfg.Generated
	if g.Bind == nil {
		if s.cfg.Pipeline == PipelineGenerated {
			return fmt.Errorf("%w: no generated pipeline for %s (Config.Generated: netlock p4 gen-go, then link the package and name its pipeline)", ErrNotFound, programName(checked))
		}
		return nil
	}
	b, err := g.Bind(s)
	if errors.Is(err, ErrGenMismatch) && s.cfg.Pipeline == PipelineAuto {
		return nil
	}
	if err != nil {
		return fmt.Errorf("engine: binding generated pipeline %s to %s: %w", g.Name, programName(checked), err)
	}
	wrap := func(f func(*Gen)) stmtFn {
		return func(c *ctx) flow {
			f((*Gen)(c))
			return fNext
		}
	}
	s.parser, s.verify, s.ingress = wrap(b.Parser), wrap(b.Verify), wrap(b.Ingress)
	s.egress, s.compute, s.deparser = wrap(b.Egress), wrap(b.Compute), wrap(b.Deparser)
	s.genName = g.Name
	return nil
}

func programName(checked *front.Checked) string {
	if checked.Program.File != "" {
		return checked.Program.File
	}
	if checked.Main != nil {
		return "the program at " + checked.Main.P.String()
	}
	return "the program"
}

// GeneratedPipeline returns the name of the generated pipeline the switch runs, or "" when the
// interpreter runs it.
func (s *Switch) GeneratedPipeline() string { return s.genName }

// ---- Binding helpers (called by generated code when it binds) ----

// GenTable returns the table with exactly this control-plane name.
func (s *Switch) GenTable(name string) (*Table, error) {
	for _, t := range s.tables {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("%w: table %s", ErrNotFound, name)
}

// GenTableActions checks that the table's actions are, in order, the named ones (the action
// indexes generated code switches on).
func (t *Table) GenTableActions(names ...string) error {
	if len(names) != len(t.actions) {
		return fmt.Errorf("%w: table %s has %d actions, the generated code %d", ErrInvalid, t.Name, len(t.actions), len(names))
	}
	for i, a := range t.actions {
		if a.Name != names[i] {
			return fmt.Errorf("%w: table %s action %d is %s, the generated code's %s", ErrInvalid, t.Name, i, a.Name, names[i])
		}
	}
	return nil
}

// GenRegister returns the register array with exactly this name.
func (s *Switch) GenRegister(name string) (*Register, error) {
	for _, r := range s.registers {
		if r.Name == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%w: register %s", ErrNotFound, name)
}

// GenCounter returns the counter with exactly this name.
func (s *Switch) GenCounter(name string) (*Counter, error) {
	for _, k := range s.counters {
		if k.Name == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w: counter %s", ErrNotFound, name)
}

// GenMeter returns the meter with exactly this name.
func (s *Switch) GenMeter(name string) (*Meter, error) {
	for _, m := range s.meters {
		if m.Name == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w: meter %s", ErrNotFound, name)
}

// GenFieldList adds a field list (pairs of slot offset and count) for clone, resubmit and
// recirculate and returns its index.
func (s *Switch) GenFieldList(pairs ...int) int {
	var rs []slotRange
	for i := 0; i+1 < len(pairs); i += 2 {
		rs = append(rs, slotRange{pairs[i], pairs[i+1]})
	}
	s.fieldLists = append(s.fieldLists, rs)
	return len(s.fieldLists) - 1
}

// GenSlots returns the number of slots of a packet's state (generated code checks it against
// its own layout when it binds).
func (s *Switch) GenSlots() int { return s.nslots }

// ---- The per-pass context ----

// Gen is the context generated code runs a pass with: the packet's slot state, its bytes and
// the switch's runtime objects. Its methods are small so that the Go compiler inlines them.
type Gen ctx

// S returns the packet's slot state.
func (g *Gen) S() []uint64 { return g.s }

// Extract takes n bytes at the parser's cursor (which must be on a byte boundary) and returns
// their offset in In, or false (with parser_error PacketTooShort, code) when the packet is
// shorter.
func (g *Gen) Extract(n, code int) (int, bool) {
	off := g.cur >> 3
	if off+n > len(g.in) {
		g.perr = code
		return 0, false
	}
	g.cur += n << 3
	return off, true
}

// In returns the packet's bytes with the 8 spare bytes the switch keeps after them (for 8-byte
// big-endian loads of the last header).
func (g *Gen) In() []byte { return g.in[:len(g.in)+8] }

// ParserError stops the parser with an error code.
func (g *Gen) ParserError(code int) { g.perr = code }

// Emit appends n bytes to the deparsed packet and returns them with 8 spare bytes after (for
// 8-byte stores; the spare bytes are overwritten by what follows).
func (g *Gen) Emit(n int) []byte {
	o := len(g.out)
	g.out = slices.Grow(g.out, n+8)
	g.out = g.out[:o+n]
	g.outBits = (o + n) * 8
	return g.out[o : o+n+8]
}

// Scratch returns a buffer of n bytes and 8 spare bytes for hash and checksum inputs.
func (g *Gen) Scratch(n int) []byte {
	if cap(g.hbuf) < n+8 {
		g.hbuf = make([]byte, 0, n+64)
	}
	return g.hbuf[:n+8]
}

// Payload returns the packet's payload (what the parser did not extract).
func (g *Gen) Payload() []byte { return (*ctx)(g).payload() }

// PacketLength is the packet length the pass sees (standard_metadata.packet_length).
func (g *Gen) PacketLength() int { return g.plen }

// Key sets key field i of a table for the next Apply.
func (g *Gen) Key(t *Table, i int, v uint64) { t.kbuf[i] = u128{lo: v} }

// Key128 sets a key field of up to 128 bits.
func (g *Gen) Key128(t *Table, i int, hi, lo uint64) { t.kbuf[i] = u128{lo: lo, hi: hi} }

// Apply looks up the table with the keys set by Key and returns the index of the action to
// run (in the table's action list) and whether an entry was hit; the action's data is read
// with Arg. It counts the hit in the table's direct counter and remembers the entry for the
// direct meter, as the interpreter does.
func (g *Gen) Apply(t *Table) (int, bool) {
	c := (*ctx)(g)
	ai, args, en := t.choose(c, t.search())
	hit := en != nil
	if f := t.sw.cfg.OnTable; f != nil {
		f(t.Name, t.actions[ai].Name, hit)
	}
	c.genArgs = args
	c.entry = en
	c.lastAction = ai
	return ai, hit
}

// EndApply ends the action Apply chose: the direct meter's entry is forgotten, so a
// direct_meter read outside that table's action sees no entry (Green), as the interpreter
// restores it after the action. Tables are applied only outside actions, so there is no outer
// entry to restore.
func (g *Gen) EndApply() { (*ctx)(g).entry = nil }

// Arg returns parameter i of the action Apply chose (its low 64 bits).
func (g *Gen) Arg(i int) uint64 { return g.genArgs[i].lo }

// Arg128 returns the high and low words of parameter i of the action Apply chose.
func (g *Gen) Arg128(i int) (hi, lo uint64) { return g.genArgs[i].hi, g.genArgs[i].lo }

// Get64 reads cell i of a v1model register of 33 to 64 bits (its cells in c64; 0 out of
// range, as bmv2's reads).
func (r *Register) Get64(i uint64) uint64 {
	if i < uint64(len(r.c64)) {
		return r.c64[i]
	}
	return 0
}

// Set64 writes cell i of a v1model register of 33 to 64 bits (v within the register's width;
// out of range writes are ignored).
func (r *Register) Set64(i, v uint64) {
	if i < uint64(len(r.c64)) {
		r.c64[i] = v
	}
}

// Get32 reads cell i of a v1model register of at most 32 bits (its cells in c32; 0 out of
// range).
func (r *Register) Get32(i uint64) uint64 {
	if i < uint64(len(r.c32)) {
		return uint64(r.c32[i])
	}
	return 0
}

// Set32 writes cell i of a v1model register of at most 32 bits (v within the register's
// width; out of range writes are ignored).
func (r *Register) Set32(i, v uint64) {
	if i < uint64(len(r.c32)) {
		r.c32[i] = uint32(v)
	}
}

// Count counts the packet in cell i of an indexed counter.
func (g *Gen) Count(k *Counter, i uint64) { k.count(u128{lo: i}, g.plen) }

// ExecuteMeter runs cell i of an indexed meter and returns the color.
func (g *Gen) ExecuteMeter(m *Meter, i uint64) uint64 { return m.execute((*ctx)(g), u128{lo: i}) }

// ReadDirectMeter runs the direct meter of the entry the last Apply hit and returns the color.
func (g *Gen) ReadDirectMeter(m *Meter) uint64 {
	c := (*ctx)(g)
	if c.entry != nil && c.entry.meter != nil {
		return c.entry.meter.execute(c.sw.micros(), m.bytes, c.pktLen())
	}
	return Green
}

// Clone asks for a clone of the packet to a session with a field list index (or -1).
func (g *Gen) Clone(session uint64, fl int) {
	g.p.cloneSet, g.p.cloneSession, g.p.cloneFL = true, uint32(session), fl
}

// Resubmit asks for a resubmission with a field list index (or -1).
func (g *Gen) Resubmit(fl int) { g.p.resubmitFL, g.p.resubmit = fl, true }

// Recirculate asks for a recirculation with a field list index (or -1).
func (g *Gen) Recirculate(fl int) { g.p.recircFL, g.p.recirc = fl, true }

// Truncate truncates the packet when it leaves.
func (g *Gen) Truncate(n uint64) { g.p.truncLen = int(n) }

// Random returns the switch's next random number.
func (g *Gen) Random() uint64 { return g.sw.cfg.Random() }

// Logging reports whether log_msg output goes anywhere.
func (g *Gen) Logging() bool { return g.sw.cfg.Log != nil }

// LogMsg formats a log_msg call ("{}" takes the next value, in decimal) and logs it.
func (g *Gen) LogMsg(format string, vals ...uint64) {
	var sb strings.Builder
	rest := format
	for _, v := range vals {
		i := strings.Index(rest, "{}")
		if i < 0 {
			break
		}
		sb.WriteString(rest[:i])
		sb.WriteString(strconv.FormatUint(v, 10))
		rest = rest[i+2:]
	}
	sb.WriteString(rest)
	g.sw.cfg.Log(sb.String())
}

// Fail fails the packet (assert, assume).
func (g *Gen) Fail(msg string) {
	if g.fail == nil {
		g.fail = fmt.Errorf("%w: %s", ErrAssert, msg)
	}
}

// Failed reports whether the packet failed.
func (g *Gen) Failed() bool { return g.fail != nil }

// B2U is 1 for true, 0 for false.
func B2U(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Sel is c ? a : b.
func Sel(c bool, a, b uint64) uint64 {
	if c {
		return a
	}
	return b
}

// HashCRC32 is bmv2's crc32 (IEEE). Short inputs (hash keys of a few fields) are taken four
// bytes a step over crc32Slice4 and the rest a byte at a time: the library's dispatch costs
// more than the work there.
func HashCRC32(b []byte) uint64 {
	if len(b) > 32 {
		return uint64(crc32.ChecksumIEEE(b))
	}
	t := &crc32Slice4
	crc := ^uint32(0)
	for ; len(b) >= 4; b = b[4:] {
		crc ^= uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		crc = t[3][byte(crc)] ^ t[2][byte(crc>>8)] ^ t[1][byte(crc>>16)] ^ t[0][crc>>24]
	}
	for _, x := range b {
		crc = t[0][byte(crc)^x] ^ crc>>8
	}
	return uint64(^crc)
}

// crc32Slice4 holds the slicing-by-4 tables of the reflected IEEE CRC-32: crc32Slice4[k][i] is
// the CRC register after byte i is followed by k zero bytes.
var crc32Slice4 = func() (t [4][256]uint32) {
	t[0] = *crc32.IEEETable
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 4; k++ {
			c = t[0][byte(c)] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// HashCRC16 is bmv2's crc16 (CRC-16/ARC).
func HashCRC16(b []byte) uint64 { return uint64(crc16(b)) }

// HashCsum16 is the Internet checksum as bmv2 computes it.
func HashCsum16(b []byte) uint64 { return uint64(csum16(b)) }

// HashXor16 is bmv2's xor16.
func HashXor16(b []byte) uint64 {
	var x uint16
	for i := 0; i < len(b); i += 2 {
		w := uint16(b[i]) << 8
		if i+1 < len(b) {
			w |= uint16(b[i+1])
		}
		x ^= w
	}
	return uint64(x)
}

// HashIdentity is bmv2's identity: the first (up to) 8 bytes as a big-endian integer.
func HashIdentity(b []byte) uint64 {
	var v uint64
	for _, x := range b[:min(len(b), 8)] {
		v = v<<8 | uint64(x)
	}
	return v
}

// BitPacker packs values MSB-first into bytes, for hash and checksum inputs whose layout is
// only known at run time (fields of headers that may be invalid).
type BitPacker struct {
	b    []byte
	acc  uint64
	bits int
}

// Reset starts packing into buf (reused).
func (p *BitPacker) Reset(buf []byte) { p.b, p.acc, p.bits = buf[:0], 0, 0 }

// Put appends the low w bits of v (w at most 64).
func (p *BitPacker) Put(w int, v uint64) {
	for w > 0 {
		n := min(w, 8-p.bits)
		part := (v >> uint(w-n)) & (1<<uint(n) - 1)
		p.acc = p.acc<<uint(n) | part
		p.bits += n
		w -= n
		if p.bits == 8 {
			p.b = append(p.b, byte(p.acc))
			p.acc, p.bits = 0, 0
		}
	}
}

// Bytes returns the packed bytes, the last one padded with zero bits.
func (p *BitPacker) Bytes() []byte {
	if p.bits > 0 {
		p.b = append(p.b, byte(p.acc<<uint(8-p.bits)))
		p.acc, p.bits = 0, 0
	}
	return p.b
}

// Packer returns the context's bit packer, reset over its scratch buffer.
func (g *Gen) Packer() *BitPacker {
	g.packer.Reset(g.hbuf)
	return &g.packer
}

// Packed returns what the packer holds and keeps its buffer for the next use.
func (g *Gen) Packed() []byte {
	b := g.packer.Bytes()
	g.hbuf = b[:0]
	return b
}

// WithPayload appends the packet's payload to b (a hash or checksum input) and keeps the
// buffer for the next use.
func (g *Gen) WithPayload(b []byte) []byte {
	b = append(b, g.Payload()...)
	g.hbuf = b[:0]
	return b
}

// Digest records a digest() call: the values (widths[i] bits each) of the data's fields, for the
// digest type name.
func (g *Gen) Digest(receiver uint64, name string, widths []int, vals ...uint64) {
	dg := Digest{Receiver: uint32(receiver), Name: name, ID: g.sw.digestIDs[name]}
	for i, v := range vals {
		dg.Fields = append(dg.Fields, u128{lo: v}.toBytes(widths[i]))
	}
	g.p.digests = append(g.p.digests, dg)
}
