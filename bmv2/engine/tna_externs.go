package engine

import (
	"fmt"
	"hash/crc32"
	"math/bits"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// The externs of TNA programs (arch/tna.p4). Counter, DirectCounter, Meter, DirectMeter and
// Register are the engine's Counter, Meter and Register (so the runtime API and P4Runtime
// reach them); the others are defined here. Extern objects are per switch; anything that is
// per packet (a Checksum's running sum) lives in the packet's slots.

// regAction is a RegisterAction instance: the compiled apply body and where its value and rv
// parameters live.
type regAction struct {
	name   string
	reg    *Register     // a RegisterAction's register, or
	dreg   *tnaDirectReg // a DirectRegisterAction's
	fields []regField    // the value parameter's scalar pieces and their place in the cell
	rvBase int
	rvW    int
	hasRV  bool
	body   stmtFn
	logIdx uint64 // the next cell of execute_log
	// logCopies hold logIdx of the pipes not running (Config.Pipes > 1; pipes.go).
	logCopies []uint64
}

// regField is one scalar of a register action's value and its bits in the register cell (the
// first field of a pair is the high half).
type regField struct{ slot, width, shift int }

// tnaDirectReg is a DirectRegister: one cell per entry of the table whose registers
// property names it, created with the initial value when the entry is first hit.
type tnaDirectReg struct {
	width int
	init  u128
	cells map[*entry]u128
	// copies are the cells of each pipe (Config.Pipes > 1; nil with one pipe): cells is
	// copies[ctx.pipe] (pipes.go).
	copies []map[*entry]u128
}

// regParam is a RegisterParam: its initial value (the control plane cannot set it here).
type regParam struct{ val u128 }

// crcSpec is a CRC in the Rocksoft model: width, polynomial (without its top bit), reflected
// input and output, initial value and final xor. msb and extend say how a hash of another
// width takes the CRC (CRCPolynomial's constructor).
type crcSpec struct {
	width           int
	poly, init, xor uint64
	reflect         bool
	msb, extend     bool
}

// tnaHash is a Hash<W> instance.
type tnaHash struct {
	w    int
	algo string // HashAlgorithm_t member
	crc  *crcSpec
}

type tnaRandom struct{ w int }

// tnaChecksum is a Checksum instance; its running ones' complement sum is in a packet slot.
type tnaChecksum struct{ slot int }

// deposit is a pending Checksum.subtract_all_and_deposit: at the end of the parser, the
// fields extracted after start are subtracted and the residual written.
type deposit struct {
	ck    *tnaChecksum
	start int
	write func(*ctx, u128)
}

// tnaStorage is an Atcam or Alpm table implementation: how Tofino stores the table, which
// does not change what it matches.
type tnaStorage struct{}

// tnaStorageOnly reports whether a table's implementation property is an Atcam or Alpm (an
// instance or a constructor call), which the engine runs as a plain table.
func (cp *compiler) tnaStorageOnly(sc *scope, p *front.TableProp) bool {
	switch v := p.Value.(type) {
	case *front.NameExpr:
		if b := sc.lookup(v.Decl); b != nil {
			_, ok := b.obj.(*tnaStorage)
			return ok
		}
	case *front.CallExpr:
		if et, ok := v.Type().(*front.ExternType); ok && front.IsTNADecl(et.Decl) {
			return et.Decl.Name == "Atcam" || et.Decl.Name == "Alpm"
		}
	}
	return false
}

type tnaMirror struct{}
type tnaResubmit struct{}

// tnaDigest is a Digest<T> instance.
type tnaDigest struct {
	name     string // control-plane name (the P4Info digest's name)
	typeName string
	id       uint32
	dtype    uint64 // digest_type
}

// Standard CRCs of HashAlgorithm_t, as bf-p4c maps them (bfn_hash_algorithm's crc_8, crc_16,
// crc_32 and crc_64): CRC-8, CRC-16/ARC, CRC-32 (IEEE), CRC-64/ECMA-182.
var tnaCRCs = map[string]*crcSpec{
	"CRC8":  {width: 8, poly: 0x07},
	"CRC16": {width: 16, poly: 0x8005, reflect: true},
	"CRC32": {width: 32, poly: 0x04c11db7, reflect: true, init: 0xffffffff, xor: 0xffffffff},
	"CRC64": {width: 64, poly: 0x42f0e1eba9ea3693},
}

// crc computes the CRC of b (whole bytes, most significant bit of each byte first unless
// reflected).
func (s *crcSpec) crc(b []byte) uint64 {
	switch {
	case s.width == 16 && s.poly == 0x8005 && s.reflect && s.init == 0 && s.xor == 0:
		return uint64(crc16(b))
	case s.width == 32 && s.poly == 0x04c11db7 && s.reflect && s.init == 0xffffffff && s.xor == 0xffffffff:
		return uint64(crc32.ChecksumIEEE(b))
	}
	return crcGeneric(b, s.width, s.poly, s.reflect, s.init, s.xor)
}

// crcGeneric is the bitwise Rocksoft-model CRC of any width from 1 to 64.
func crcGeneric(b []byte, width int, poly uint64, reflect bool, init, xorOut uint64) uint64 {
	mask := ^uint64(0) >> uint(64-width)
	crc := init & mask
	for _, x := range b {
		if reflect {
			x = bits.Reverse8(x)
		}
		for k := 7; k >= 0; k-- {
			fb := (crc>>uint(width-1))&1 ^ uint64(x>>uint(k))&1
			crc = crc << 1 & mask
			if fb == 1 {
				crc ^= poly & mask
			}
		}
	}
	if reflect {
		crc = bits.Reverse64(crc) >> uint(64-width)
	}
	return (crc ^ xorOut) & mask
}

// fit takes a CRC of s.width bits to a hash of w bits: the low (or, with msb, the high) w bits
// of a wider CRC; a narrower one is zero-extended, or repeated when extend is set.
func (s *crcSpec) fit(v uint64, w int) u128 {
	if w <= s.width {
		if s.msb {
			return u128{lo: v >> uint(s.width-w)}.trunc(w)
		}
		return u128{lo: v}.trunc(w)
	}
	out := u128{lo: v}
	if s.extend {
		for n := s.width; n < w; n += s.width {
			out = out.shl(uint(s.width)).or(u128{lo: v})
		}
	}
	return out.trunc(w)
}

// ctorConst is the constant value of a constructor argument (a literal, a constant, or a
// constructor parameter bound to one).
func (cp *compiler) ctorConst(sc *scope, e front.Expr) (u128, bool) {
	if e == nil {
		return u128{}, false
	}
	if v, ok := cp.checked.Const[e]; ok {
		return cp.valueU128(v)
	}
	if n, ok := e.(*front.NameExpr); ok {
		if b := sc.lookup(n.Decl); b != nil && b.kind == bConst {
			return b.val, true
		}
	}
	return u128{}, false
}

func enumName(e front.Expr) string {
	if m, ok := e.(*front.MemberExpr); ok {
		return m.Name
	}
	return ""
}

// tnaInstance creates the object of a TNA extern instance.
func (cp *compiler) tnaInstance(sc *scope, d *front.InstanceDecl, t *front.ExternType, name string, id uint32) any {
	arg := func(i int) front.Expr {
		if i < len(d.Args) {
			return d.Args[i].Value
		}
		return nil
	}
	num := func(i int) uint64 {
		v, ok := cp.ctorConst(sc, arg(i))
		if !ok {
			cp.fail(d.P, "engine: argument %d of %s must be a constant", i+1, d.Name)
		}
		return v.lo
	}
	sw := cp.sw
	switch t.Decl.Name {
	case "Counter":
		n := num(0)
		cp.reserve(d.P, "counter "+name, n, counterCellBytes)
		k := &Counter{Name: name, ID: id, Packets: make([]uint64, n), Bytes: make([]uint64, n)}
		sw.counters = append(sw.counters, k)
		return k
	case "DirectCounter":
		k := &Counter{Name: name, ID: id, direct: true}
		sw.counters = append(sw.counters, k)
		return k
	case "Meter", "DirectMeter":
		m := &Meter{sw: sw, Name: name, ID: id}
		colorArg := 1
		if t.Decl.Name == "Meter" {
			cp.reserve(d.P, "meter "+name, num(0), meterCellBytes)
			m.cells = make([]meterState, num(0))
			m.bytes = strings.EqualFold(enumName(arg(1)), "BYTES")
			colorArg = 2
		} else {
			m.direct = true
			m.bytes = strings.EqualFold(enumName(arg(0)), "BYTES")
		}
		cols := [3]uint64{0, 1, 3} // MeterColor_t GREEN, YELLOW, RED
		if len(d.Args) == colorArg+3 {
			cols = [3]uint64{num(colorArg + 2), num(colorArg + 1), num(colorArg)} // (red, yellow, green)
		}
		sw.tna.meterCol[m] = cols
		sw.meters = append(sw.meters, m)
		return m
	case "Register":
		w := front.WidthOf(t.Args[0])
		if w <= 0 || w > 128 {
			cp.fail(d.P, "not supported by the netlock engine: register %s of %s", d.Name, t.Args[0])
		}
		cp.reserve(d.P, "register "+name, num(0), cellBytes(w, false))
		r := newRegister(name, id, w, int(num(0)), false)
		if len(d.Args) > 1 {
			if v, ok := cp.registerInit(sc, arg(1), t.Args[0]); ok {
				for i := range r.cells {
					r.cells[i] = v
				}
			}
		}
		sw.registers = append(sw.registers, r)
		return r
	case "RegisterAction", "DirectRegisterAction":
		ra := cp.newRegAction(sc, d, name)
		cp.regActions = append(cp.regActions, ra)
		return ra
	case "DirectRegister":
		w := front.WidthOf(t.Args[0])
		if w <= 0 || w > 128 {
			cp.fail(d.P, "not supported by the netlock engine: direct register %s of %s", d.Name, t.Args[0])
		}
		dr := &tnaDirectReg{width: w, cells: map[*entry]u128{}}
		cp.tnaDirRegs = append(cp.tnaDirRegs, dr)
		if len(d.Args) > 0 {
			if v, ok := cp.registerInit(sc, arg(0), t.Args[0]); ok {
				dr.init = v
			}
		}
		return dr
	case "RegisterParam":
		v, _ := cp.ctorConst(sc, arg(0))
		return &regParam{val: v}
	case "CRCPolynomial":
		return cp.crcPoly(sc, d.Args, t, d.P)
	case "Hash":
		return cp.newHash(sc, d.Args, t, d.P)
	case "Random":
		return &tnaRandom{w: front.WidthOf(t.Args[0])}
	case "Checksum":
		return &tnaChecksum{slot: cp.alloc(1)}
	case "Mirror":
		return &tnaMirror{}
	case "Resubmit":
		return &tnaResubmit{}
	case "Digest":
		dg := &tnaDigest{name: name, id: sw.digestIDs[name]}
		if st, ok := under(t.Args[0]).(*front.StructType); ok {
			dg.typeName = st.Decl.Name
		} else {
			dg.typeName = t.Args[0].String()
		}
		if v, ok := cp.ctorConst(sc, arg(0)); ok {
			dg.dtype = v.lo
		}
		return dg
	case "Atcam", "Alpm":
		return &tnaStorage{}
	case "ActionProfile":
		return cp.newProfile(name, "action_profile", d.Args, d.P)
	case "ActionSelector":
		h := cp.selectorHash(sc, arg(1), d.P)
		if n, ok := arg(0).(*front.NameExpr); ok {
			if b := sc.lookup(n.Decl); b != nil {
				if ap, ok := b.obj.(*ActionProfile); ok {
					// The table names the selector; the profile holds the members.
					ap.Selector, ap.algo, ap.outWidth = true, h.bytesFn(), h.w
					return ap
				}
			}
		}
		ap := cp.newProfile(name, "action_profile", d.Args[:1], d.P) // ActionSelector(size, hash, mode)
		ap.Selector, ap.algo, ap.outWidth = true, h.bytesFn(), h.w
		return ap
	}
	cp.fail(d.P, "not supported by the netlock engine: TNA extern %s", t.Decl.Name)
	return nil
}

// registerInit is a Register's initial value: a constant scalar or a struct of constants (a
// pair), packed as the cell.
func (cp *compiler) registerInit(sc *scope, e front.Expr, t front.Type) (u128, bool) {
	if v, ok := cp.ctorConst(sc, e); ok {
		return v.trunc(widthOf(t)), true
	}
	st, ok := under(t).(*front.StructType)
	if !ok {
		return u128{}, false
	}
	var vals []front.Expr
	switch x := e.(type) {
	case *front.ListExpr:
		vals = x.Elems
	case *front.StructExpr:
		for _, f := range st.Fields {
			for _, nf := range x.Fields {
				if nf.Name == f.Name {
					vals = append(vals, nf.Value)
				}
			}
		}
	}
	if len(vals) != len(st.Fields) {
		return u128{}, false
	}
	var v u128
	for i, f := range st.Fields {
		x, ok := cp.ctorConst(sc, vals[i])
		w := widthOf(f.T)
		if !ok || w == 0 {
			return u128{}, false
		}
		v = v.shl(uint(w)).or(x.trunc(w))
	}
	return v, true
}

// newRegAction compiles a RegisterAction: its register, and its apply body in the scope of the
// block that declares it (the body may read the block's parameters and constants).
func (cp *compiler) newRegAction(sc *scope, d *front.InstanceDecl, name string) *regAction {
	ra := &regAction{name: name}
	if n, ok := d.Args[0].Value.(*front.NameExpr); ok {
		if b := sc.lookup(n.Decl); b != nil {
			ra.reg, _ = b.obj.(*Register)
			ra.dreg, _ = b.obj.(*tnaDirectReg)
		}
	}
	cellWidth := 0
	switch {
	case ra.reg != nil:
		cellWidth = ra.reg.Width
	case ra.dreg != nil:
		cellWidth = ra.dreg.width
	default:
		cp.fail(d.P, "not supported by the netlock engine: %s's register %s", d.Name, front.ExprString(d.Args[0].Value))
	}
	// bf-p4c also takes a view of the cells at another width (16-bit cells with one more index
	// bit on a register of 32-bit cells); the engine keeps one cell per index.
	if et, ok := d.T.(*front.ExternType); ok && len(et.Args) > 0 && et.Args[0] != nil && et.Decl.Name == "RegisterAction" {
		if w := front.WidthOf(et.Args[0]); w > 0 && w != cellWidth {
			cp.fail(d.P, "not supported by the netlock engine: %s views the %d-bit cells of %s as %d-bit cells", d.Name, cellWidth, front.ExprString(d.Args[0].Value), w)
		}
	}
	var impl *front.FunctionDecl
	for _, f := range d.Init {
		if f.Abstract != nil && f.Abstract.Name == "apply" {
			impl = f
		}
	}
	if impl == nil || len(impl.Params) == 0 {
		cp.fail(d.P, "engine: %s has no apply", d.Name)
	}
	inner := sc.child()
	fr := cp.newFrame(impl.Params, inner, nil)
	vt := impl.Params[0].T
	base := fr.bases[0]
	if isScalar(vt) {
		w := widthOf(vt)
		if w > 64 {
			cp.fail(impl.P, "not supported by the netlock engine: %s: a %d-bit register cell", d.Name, w)
		}
		ra.fields = []regField{{slot: base, width: w}}
	} else if st, ok := under(vt).(*front.StructType); ok && !st.IsHeader() {
		shift := cellWidth
		off := 0
		for _, f := range st.Fields {
			w := widthOf(f.T)
			if !isScalar(f.T) || w > 64 {
				cp.fail(impl.P, "not supported by the netlock engine: %s: register field %s of %s", d.Name, f.Name, f.T)
			}
			shift -= w
			ra.fields = append(ra.fields, regField{slot: base + off, width: w, shift: shift})
			off += cp.slotsOf(f.T)
		}
	} else {
		cp.fail(impl.P, "not supported by the netlock engine: %s: register cells of %s", d.Name, vt)
	}
	if len(impl.Params) > 1 {
		rt := impl.Params[1].T
		if !isScalar(rt) {
			cp.fail(impl.P, "not supported by the netlock engine: %s: a result of %s", d.Name, rt)
		}
		ra.hasRV, ra.rvBase, ra.rvW = true, fr.bases[1], widthOf(rt)
	}
	ra.body = cp.block(inner, impl.Body)
	return ra
}

// access enforces Tofino's register rule for a register action: one register action per
// register per pass, and a register in one gress only.
func (ra *regAction) access(c *ctx, pos string) error {
	r := ra.reg
	if r.gress == 0 {
		r.gress, r.gressPos = c.gress, pos
	} else if r.gress != c.gress {
		return fmt.Errorf("%w: register %s is used in %s at %s and in %s at %s", ErrTofinoConstraint, r.Name,
			gressNames[r.gress], r.gressPos, gressNames[c.gress], pos)
	}
	if r.tPass == c.pass {
		return fmt.Errorf("%w: register %s accessed by two register actions in one pass, at %s and at %s", ErrTofinoConstraint, r.Name, r.tPos, pos)
	}
	r.tPass, r.tGroup, r.tIdx, r.tReads, r.tWrites, r.tPos = c.pass, ^uint64(0), u128{}, 1, 1, pos
	return nil
}

// run executes the register action on cell i and returns rv. An index beyond the register is
// taken modulo its size (Tofino uses the low bits of the index).
func (ra *regAction) run(c *ctx, i u128, pos string) u128 {
	if ra.dreg != nil {
		// The cell of the table entry whose action runs (nothing outside a table's action).
		d, e := ra.dreg, c.entry
		if e == nil {
			return u128{}
		}
		cell, ok := d.cells[e]
		if !ok {
			cell = d.init
		}
		v, rv := ra.apply(c, cell)
		d.cells[e] = v.trunc(d.width)
		return rv
	}
	r := ra.reg
	if err := ra.access(c, pos); err != nil {
		if c.fail == nil {
			c.fail = err
		}
		return u128{}
	}
	if len(r.cells) == 0 {
		return u128{}
	}
	k := tnaIndex(i, len(r.cells))
	v, rv := ra.apply(c, r.cells[k])
	r.cells[k] = v.trunc(r.Width)
	return rv
}

// apply runs the body on a cell value; it returns the new value and rv.
func (ra *regAction) apply(c *ctx, cell u128) (u128, u128) {
	for _, f := range ra.fields {
		c.s[f.slot] = cell.shr(uint(f.shift)).trunc(f.width).lo
	}
	if ra.hasRV {
		writeSlot(c.s, ra.rvBase, ra.rvW, u128{})
	}
	ra.body(c)
	var v u128
	for _, f := range ra.fields {
		v = v.or(u128{lo: c.s[f.slot]}.trunc(f.width).shl(uint(f.shift)))
	}
	if !ra.hasRV {
		return v, u128{}
	}
	return v, readSlot(c.s, ra.rvBase, ra.rvW)
}

// crcPoly builds a CRCPolynomial<T>(coeff, reversed, msb, extended, init, xor).
func (cp *compiler) crcPoly(sc *scope, args []*front.Arg, t *front.ExternType, pos front.Pos) *crcSpec {
	w := 0
	if len(t.Args) > 0 && t.Args[0] != nil {
		w = front.WidthOf(t.Args[0])
	}
	if w <= 0 || w > 64 || len(args) != 6 {
		cp.fail(pos, "not supported by the netlock engine: CRCPolynomial of width %d", w)
	}
	v := make([]u128, 6)
	for i := range v {
		x, ok := cp.ctorConst(sc, args[i].Value)
		if !ok {
			cp.fail(args[i].Value.Position(), "engine: CRCPolynomial arguments must be constants")
		}
		v[i] = x
	}
	return &crcSpec{width: w, poly: v[0].lo, reflect: v[1].lo != 0, msb: v[2].lo != 0, extend: v[3].lo != 0, init: v[4].lo, xor: v[5].lo}
}

// newHash builds a Hash<W>(algo[, poly]).
func (cp *compiler) newHash(sc *scope, args []*front.Arg, t *front.ExternType, pos front.Pos) *tnaHash {
	h := &tnaHash{w: front.WidthOf(t.Args[0])}
	if h.w <= 0 || h.w > 128 {
		cp.fail(pos, "not supported by the netlock engine: Hash of %s", t.Args[0])
	}
	if len(args) == 0 {
		cp.fail(pos, "engine: Hash needs an algorithm")
	}
	h.algo = enumName(args[0].Value)
	if h.algo == "" {
		if v, ok := cp.ctorConst(sc, args[0].Value); ok {
			for _, d := range cp.checked.Globals["HashAlgorithm_t"] {
				if ed, ok := d.(*front.EnumDecl); ok && int(v.lo) < len(ed.Members) {
					h.algo = ed.Members[v.lo].Name
				}
			}
		}
	}
	switch h.algo {
	case "IDENTITY", "RANDOM", "XOR8", "XOR16", "XOR32":
	case "CRC8", "CRC16", "CRC32", "CRC64":
		h.crc = tnaCRCs[h.algo]
	case "CUSTOM":
		if len(args) < 2 {
			cp.fail(pos, "engine: Hash(CUSTOM) needs a CRCPolynomial")
		}
		switch x := args[1].Value.(type) {
		case *front.NameExpr:
			if b := sc.lookup(x.Decl); b != nil {
				h.crc, _ = b.obj.(*crcSpec)
			}
		case *front.CallExpr:
			if et, ok := x.Type().(*front.ExternType); ok && et.Decl.Name == "CRCPolynomial" {
				h.crc = cp.crcPoly(sc, x.Args, et, x.Position())
			}
		}
		if h.crc == nil {
			cp.fail(pos, "not supported by the netlock engine: polynomial %s", front.ExprString(args[1].Value))
		}
	default:
		cp.fail(pos, "not supported by the netlock engine: hash algorithm %q", h.algo)
	}
	return h
}

// selectorHash is the Hash argument of an ActionSelector: an instance or a constructor call.
func (cp *compiler) selectorHash(sc *scope, e front.Expr, pos front.Pos) *tnaHash {
	switch x := e.(type) {
	case *front.NameExpr:
		if b := sc.lookup(x.Decl); b != nil {
			if h, ok := b.obj.(*tnaHash); ok {
				return h
			}
		}
	case *front.CallExpr:
		if et, ok := x.Type().(*front.ExternType); ok && et.Decl.Name == "Hash" {
			return cp.newHash(sc, x.Args, et, x.Position())
		}
	}
	cp.fail(pos, "not supported by the netlock engine: ActionSelector hash %s", front.ExprString(e))
	return nil
}

// bytesFn hashes a byte string to w bits (the data of a selector key, or of Hash.get).
func (h *tnaHash) bytesFn() func(*ctx, []byte) u128 {
	w := h.w
	switch h.algo {
	case "RANDOM":
		return func(c *ctx, _ []byte) u128 { return u128{lo: c.sw.cfg.Random(), hi: c.sw.cfg.Random()}.trunc(w) }
	case "IDENTITY":
		return func(_ *ctx, b []byte) u128 { return fromBytes(b[max(len(b)-16, 0):]).trunc(w) }
	case "XOR8", "XOR16", "XOR32":
		n := map[string]int{"XOR8": 1, "XOR16": 2, "XOR32": 4}[h.algo]
		return func(_ *ctx, b []byte) u128 {
			var x uint64
			for i := 0; i < len(b); i += n {
				var word uint64
				for k := 0; k < n; k++ {
					word <<= 8
					if i+k < len(b) {
						word |= uint64(b[i+k])
					}
				}
				x ^= word
			}
			return u128{lo: x}.trunc(w)
		}
	}
	crc := h.crc
	return func(_ *ctx, b []byte) u128 { return crc.fit(crc.crc(b), w) }
}

// hashFn compiles Hash.get(data): the data's fields concatenated most significant first,
// padded with zero bits to whole bytes for the CRCs and XORs; IDENTITY is the concatenation
// itself (its low w bits).
func (cp *compiler) hashFn(sc *scope, h *tnaHash, data front.Expr) scalarFn {
	ps := cp.flatten(sc, data)
	w := h.w
	if h.algo == "IDENTITY" {
		return func(c *ctx) u128 {
			var v u128
			for i := range ps {
				p := &ps[i]
				if p.validFn != nil && !p.validFn(c) || p.validFn == nil && p.vslot > 0 && c.s[p.vslot-1] == 0 {
					continue
				}
				v = v.shl(uint(p.width)).or(p.value(c).trunc(p.width))
			}
			return v.trunc(w)
		}
	}
	f := h.bytesFn()
	return func(c *ctx) u128 { return f(c, serialize(c, ps)) }
}

// sum16 is the ones' complement sum of the 16-bit big-endian words of b (an odd byte is
// padded with zero), folded to 16 bits.
func sum16(b []byte) uint64 {
	return ^uint64(csum16(b)) & 0xffff
}

// onesAdd adds two 16-bit ones' complement values.
func onesAdd(a, b uint64) uint64 {
	s := a + b
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return s
}

// tnaRecv returns the object of the instance a method is called on.
func (cp *compiler) tnaRecv(sc *scope, call *front.CallExpr) any {
	b := cp.recvBinding(sc, call)
	if b == nil || b.kind != bExtern {
		cp.fail(call.Position(), "engine: method call on an unknown extern instance")
	}
	return b.obj
}

// tnaExternValue compiles a TNA method or function call whose (scalar) value is used.
func (cp *compiler) tnaExternValue(sc *scope, call *front.CallExpr, d *front.MethodDecl, t front.Type) scalarFn {
	pos := posString(call.Position())
	if d.Owner == nil {
		return cp.tnaFuncValue(sc, call, d, t)
	}
	obj := cp.tnaRecv(sc, call)
	arg := func(name string) front.Expr { return cp.arg(call, name) }
	switch o := obj.(type) {
	case *regAction:
		switch d.Name {
		case "execute":
			if arg("index") == nil { // DirectRegisterAction.execute(): the entry's cell
				return func(c *ctx) u128 { return o.run(c, u128{}, pos) }
			}
			idx := cp.scalarOf(sc, arg("index"), nil)
			return func(c *ctx) u128 { return o.run(c, idx(c), pos) }
		case "execute_log":
			return func(c *ctx) u128 {
				i := o.logIdx
				o.logIdx++
				return o.run(c, u128{lo: i}, pos)
			}
		}
	case *Register:
		switch d.Name {
		case "read":
			if !isScalar(t) {
				break
			}
			idx := cp.scalarOf(sc, arg("index"), nil)
			return func(c *ctx) u128 {
				i := idx(c)
				if err := o.access(c, i, false, pos); err != nil {
					c.fail = err
					return u128{}
				}
				return o.cells[tnaIndex(i, len(o.cells))]
			}
		case "write":
			f := cp.tnaRegisterWrite(sc, call, o, pos)
			return func(c *ctx) u128 { return f(c) }
		}
	case *Meter:
		return cp.tnaMeter(sc, call, d, o)
	case *tnaHash:
		return cp.hashFn(sc, o, arg("data"))
	case *tnaRandom:
		w := o.w
		return func(c *ctx) u128 { return u128{lo: c.sw.cfg.Random(), hi: c.sw.cfg.Random()}.trunc(w) }
	case *tnaChecksum:
		slot := o.slot
		switch d.Name {
		case "verify":
			return func(c *ctx) u128 { return b2u(c.s[slot] == 0xffff) }
		case "get":
			return func(c *ctx) u128 { return u128{lo: c.s[slot]} }
		case "update":
			ps := cp.flatten(sc, arg("data"))
			var z scalarFn
			if e := arg("zeros_as_ones"); e != nil {
				z = cp.scalarOf(sc, e, nil)
			}
			return func(c *ctx) u128 {
				v := ^sum16(serialize(c, ps)) & 0xffff
				if v == 0 && z != nil && z(c).lo != 0 {
					v = 0xffff
				}
				return u128{lo: v}
			}
		}
	case *regParam:
		v := o.val
		return func(*ctx) u128 { return v }
	}
	cp.fail(call.Position(), "not supported by the netlock engine: %s.%s", d.Owner.Name, d.Name)
	return nil
}

// tnaIndex is a register index taken modulo the register's size.
func tnaIndex(i u128, n int) uint64 {
	if n == 0 {
		return 0
	}
	if i.hi == 0 {
		return i.lo % uint64(n)
	}
	_, r := i.divmod(u128{lo: uint64(n)})
	return r.lo
}

func (cp *compiler) tnaRegisterWrite(sc *scope, call *front.CallExpr, r *Register, pos string) scalarFn {
	idx := cp.scalarOf(sc, cp.needArg(call, "index"), nil)
	ve := cp.needArg(call, "value")
	var val scalarFn
	if isScalar(ve.Type()) {
		val = cp.scalarOf(sc, ve, nil)
	} else {
		// A pair: pack the struct's fields, the first one high.
		comp := cp.composite(sc, ve, ve.Type())
		st := under(ve.Type()).(*front.StructType)
		type fld struct{ off, w int }
		var fs []fld
		off := 0
		for _, f := range st.Fields {
			fs = append(fs, fld{off, widthOf(f.T)})
			off += cp.slotsOf(f.T)
		}
		val = func(c *ctx) u128 {
			b := comp(c)
			var v u128
			for _, f := range fs {
				v = v.shl(uint(f.w)).or(readSlot(c.s, b+f.off, f.w).trunc(f.w))
			}
			return v
		}
	}
	m := mask128(r.Width)
	return func(c *ctx) u128 {
		i := idx(c)
		if err := r.access(c, i, true, pos); err != nil {
			c.fail = err
			return u128{}
		}
		v := val(c).and(m)
		r.cells[tnaIndex(i, len(r.cells))] = v
		return v
	}
}

// tnaMeter compiles Meter.execute(index[, color][, adjust_byte_count]) and
// DirectMeter.execute([color][, adjust_byte_count]): the two-rate three-colour meter of the
// engine, on the packet length less adjust_byte_count for byte meters; in the colour-aware
// forms the result is at least as severe as the given colour.
func (cp *compiler) tnaMeter(sc *scope, call *front.CallExpr, d *front.MethodDecl, m *Meter) scalarFn {
	cols := cp.sw.tna.meterCol[m]
	var idx, color, adjust scalarFn
	if e := cp.arg(call, "index"); e != nil {
		idx = cp.scalarOf(sc, e, nil)
	}
	if e := cp.arg(call, "color"); e != nil {
		color = cp.scalarOf(sc, e, nil)
	}
	if e := cp.arg(call, "adjust_byte_count"); e != nil {
		adjust = cp.scalarOf(sc, e, nil)
	}
	rank := func(v uint64) uint64 { // MeterColor_t values to GREEN 0, YELLOW 1, RED 2
		switch v {
		case 0:
			return 0
		case 1:
			return 1
		}
		return 2
	}
	return func(c *ctx) u128 {
		n := c.pktLen()
		if adjust != nil {
			n -= int(int32(adjust(c).lo))
		}
		n = max(n, 0)
		var r uint64
		switch {
		case m.direct:
			if c.entry != nil && c.entry.meter != nil {
				ms := c.entry.meter
				if c.pipe != 0 {
					ms = &m.entryCopies[c.entry][c.pipe-1]
				}
				r = ms.execute(c.sw.micros(), m.bytes, n)
			}
		default:
			i := idx(c)
			if i.hi == 0 && i.lo < uint64(len(m.cells)) {
				r = m.cells[i.lo].execute(c.sw.micros(), m.bytes, n)
			}
		}
		if color != nil {
			r = max(r, rank(color(c).lo))
		}
		return u128{lo: cols[r]}
	}
}

// tnaFuncValue compiles the value of a TNA extern function.
func (cp *compiler) tnaFuncValue(sc *scope, call *front.CallExpr, d *front.MethodDecl, t front.Type) scalarFn {
	switch d.Name {
	case "min", "max":
		a, b := cp.scalarOf(sc, cp.argN(call, 0), t), cp.scalarOf(sc, cp.argN(call, 1), t)
		w, sg, isMax := widthOf(t), signed(t), d.Name == "max"
		return func(c *ctx) u128 {
			x, y := a(c), b(c)
			less := x.cmp(y) < 0
			if sg {
				less = scmp(x, y, w) < 0
			}
			if less == isMax {
				return y
			}
			return x
		}
	case "sizeInBits", "sizeInBytes":
		n := front.WidthOf(cp.argN(call, 0).Type())
		if n < 0 {
			cp.fail(call.Position(), "engine: %s of a type without a fixed width", d.Name)
		}
		if d.Name == "sizeInBytes" {
			n = (n + 7) / 8
		}
		return constFn(u128{lo: uint64(n)})
	case "port_metadata_unpack":
		if isScalar(t) {
			w := widthOf(t)
			tooShort := cp.errCode("PacketTooShort")
			return func(c *ctx) u128 {
				if c.cur+tnaPortMeta*8 > len(c.in)*8 {
					c.perr = tooShort
					return u128{}
				}
				v := readBits(c.in, c.cur, w)
				c.cur += tnaPortMeta * 8
				return v
			}
		}
	}
	cp.fail(call.Position(), "not supported by the netlock engine: %s", d.Name)
	return nil
}

// tnaExternCall compiles a TNA method or function call used as a statement, or whose
// composite value is used (the value is left at c.retBase).
func (cp *compiler) tnaExternCall(sc *scope, call *front.CallExpr, d *front.MethodDecl) stmtFn {
	pos := posString(call.Position())
	value := func() stmtFn {
		f := cp.tnaExternValue(sc, call, d, call.Type())
		return func(c *ctx) flow {
			f(c)
			if c.fail != nil || c.perr != 0 {
				return fExit
			}
			return fNext
		}
	}
	if d.Owner == nil {
		switch d.Name {
		case "port_metadata_unpack":
			if !isScalar(call.Type()) {
				return cp.portMetadataComposite(call)
			}
			return value()
		case "invalidate":
			return seq(nil) // a hint to bf-p4c's PHV allocation
		case "funnel_shift_right":
			return cp.funnelShift(sc, call)
		}
		return value()
	}
	obj := cp.tnaRecv(sc, call)
	arg := func(name string) front.Expr { return cp.arg(call, name) }
	t := cp.sw.tna
	switch o := obj.(type) {
	case *Counter:
		if o.direct {
			return seq(nil) // direct counters count every hit of their table (as the engine's bmv2 mode)
		}
		idx := cp.scalarOf(sc, arg("index"), nil)
		var adjust scalarFn
		if e := arg("adjust_byte_count"); e != nil {
			adjust = cp.scalarOf(sc, e, nil)
		}
		return func(c *ctx) flow {
			n := c.pktLen()
			if adjust != nil {
				n = max(n-int(int32(adjust(c).lo)), 0)
			}
			o.count(idx(c), n)
			return fNext
		}
	case *Register:
		if d.Name == "read" && !isScalar(call.Type()) {
			return cp.tnaRegisterReadPair(sc, call, o, pos)
		}
		return value()
	case *tnaChecksum:
		slot := o.slot
		switch d.Name {
		case "add", "subtract":
			ps := cp.flatten(sc, arg("data"))
			sub := d.Name == "subtract"
			return func(c *ctx) flow {
				v := sum16(serialize(c, ps))
				if sub {
					v = ^v & 0xffff
				}
				c.s[slot] = onesAdd(c.s[slot], v)
				return fNext
			}
		case "subtract_all_and_deposit":
			wr := cp.outScalar(sc, arg("residual"))
			return func(c *ctx) flow {
				t.req.deposits = append(t.req.deposits, deposit{ck: o, start: c.cur, write: wr})
				return fNext
			}
		}
		return value()
	case *tnaMirror:
		sess := cp.scalarOf(sc, arg("session_id"), nil)
		var ps []piece
		if e := arg("hdr"); e != nil {
			ps = allFields(cp.flatten(sc, e))
		}
		return func(c *ctx) flow {
			if !t.typeWritten(c, t.igMirrorType, t.egMirrorType) {
				return fNext
			}
			t.req.mirror = true
			t.req.mirrorSess = uint32(sess(c).lo)
			t.req.mirrorHdr = t.req.mirrorHdr[:0]
			if ps != nil {
				t.req.mirrorHdr = append(t.req.mirrorHdr, serialize(c, ps)...)
			}
			return fNext
		}
	case *tnaResubmit:
		var ps []piece
		if e := arg("hdr"); e != nil {
			ps = allFields(cp.flatten(sc, e))
		}
		return func(c *ctx) flow {
			if !t.typeWritten(c, t.igResubType, t.igResubType) {
				return fNext
			}
			t.req.resubmit, t.req.resubPos = true, pos
			t.req.resubData = [tnaPortMeta]byte{}
			if ps != nil {
				copy(t.req.resubData[:], serialize(c, ps))
			}
			return fNext
		}
	case *tnaDigest:
		ps := cp.flatten(sc, arg("data"))
		return func(c *ctx) flow {
			if !t.typeWritten(c, t.igDigestType, t.igDigestType) {
				return fNext
			}
			dg := Digest{Receiver: uint32(o.dtype), Name: o.name, ID: o.id}
			for _, p := range ps {
				dg.Fields = append(dg.Fields, p.value(c).toBytes(p.width))
			}
			c.p.digests = append(c.p.digests, dg)
			return fNext
		}
	}
	return value()
}

// typeWritten reports whether the pass wrote the deparser metadata field (digest_type,
// resubmit_type or mirror_type) of its gress that enables a deparser extern.
func (t *tnaState) typeWritten(c *ctx, ingressSlot, egressSlot int) bool {
	slot := ingressSlot
	if c.gress == gressEgress {
		slot = egressSlot
	}
	return c.s[slot] < tnaUnset
}

// allFields makes a header's fields count whether or not the header is valid: bf-p4c packs
// the mirror and resubmit headers (and digests) from the fields, without validity bits.
func allFields(ps []piece) []piece {
	out := append([]piece(nil), ps...)
	for i := range out {
		out[i].vslot, out[i].validFn = 0, nil
	}
	return out
}

// tnaRegisterReadPair compiles Register.read(index) of a pair: the fields, first one high,
// in a temporary left at c.retBase.
func (cp *compiler) tnaRegisterReadPair(sc *scope, call *front.CallExpr, r *Register, pos string) stmtFn {
	st, ok := under(call.Type()).(*front.StructType)
	if !ok {
		cp.fail(call.Position(), "not supported by the netlock engine: a register read of %s", call.Type())
	}
	idx := cp.scalarOf(sc, cp.needArg(call, "index"), nil)
	n := cp.slotsOf(st)
	tmp := cp.alloc(n)
	type fld struct{ off, w, shift int }
	var fs []fld
	shift, off := r.Width, 0
	for _, f := range st.Fields {
		w := widthOf(f.T)
		shift -= w
		fs = append(fs, fld{off, w, shift})
		off += cp.slotsOf(f.T)
	}
	return func(c *ctx) flow {
		i := idx(c)
		c.retBase = tmp
		if err := r.access(c, i, false, pos); err != nil {
			c.fail = err
			return fExit
		}
		v := r.cells[tnaIndex(i, len(r.cells))]
		for _, f := range fs {
			writeSlot(c.s, tmp+f.off, f.w, v.shr(uint(f.shift)).trunc(f.w))
		}
		return fNext
	}
}

// portMetadataComposite compiles port_metadata_unpack<T>(pkt) for a header or struct T: T's
// fields from the port metadata, which the call skips whole.
func (cp *compiler) portMetadataComposite(call *front.CallExpr) stmtFn {
	t := call.Type()
	var ps []piece
	cp.flattenType(t, 0, &ps)
	n := cp.slotsOf(t)
	tmp := cp.alloc(n)
	hdr := false
	if st, ok := under(t).(*front.StructType); ok && st.IsHeader() {
		hdr = true
	}
	tooShort := cp.errCode("PacketTooShort")
	return func(c *ctx) flow {
		c.retBase = tmp
		clear(c.s[tmp : tmp+n])
		if c.cur+tnaPortMeta*8 > len(c.in)*8 {
			c.perr = tooShort
			return fExit
		}
		off := c.cur
		for _, p := range ps {
			if p.width > 128 || p.varbit || p.wide {
				continue
			}
			writeSlot(c.s, tmp+p.off, p.width, readBits(c.in, off, p.width))
			off += p.width
		}
		if hdr {
			c.s[tmp] = 1
		}
		c.cur += tnaPortMeta * 8
		return fNext
	}
}

// funnelShift compiles funnel_shift_right(dst, src1, src2, shift): dst = the low bits of
// (src1 ++ src2) >> shift.
func (cp *compiler) funnelShift(sc *scope, call *front.CallExpr) stmtFn {
	dst := cp.argN(call, 0)
	w := widthOf(dst.Type())
	if w > 64 {
		cp.fail(call.Position(), "not supported by the netlock engine: funnel_shift_right of %d bits", w)
	}
	wr := cp.writeLoc(cp.location(sc, dst))
	a, b := cp.scalarOf(sc, cp.argN(call, 1), nil), cp.scalarOf(sc, cp.argN(call, 2), nil)
	sh, ok := cp.ctorConst(sc, cp.argN(call, 3))
	if !ok {
		cp.fail(call.Position(), "engine: the shift of funnel_shift_right must be a constant")
	}
	return func(c *ctx) flow {
		v := a(c).trunc(w).shl(uint(w)).or(b(c).trunc(w))
		wr(c, v.shr(uint(sh.lo)).trunc(w))
		return fNext
	}
}

// applyDeposits completes the pass's subtract_all_and_deposit calls once the parser has
// stopped: the bytes extracted after each call are subtracted from its checksum's sum.
func (s *Switch) applyDeposits() {
	t, c := s.tna, &s.c
	for _, d := range t.req.deposits {
		from, to := d.start/8, min(c.cur/8, len(c.in))
		v := c.s[d.ck.slot]
		if to > from {
			v = onesAdd(v, ^sum16(c.in[from:to])&0xffff)
		}
		d.write(c, u128{lo: v})
	}
	t.req.deposits = t.req.deposits[:0]
}
