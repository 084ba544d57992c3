package engine

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// flat is a list of scalar pieces of a data argument (a list, struct or header), used by
// hash, checksums, digests and field lists.
type piece struct {
	off    int // slot offset from the composite base, or -1 for a scalar expression
	width  int // for a varbit: its maximum width
	f      scalarFn
	varbit bool
	wide   bool   // a bit<W> with W > 128, in words
	base   compFn // for varbit and wide pieces of a composite computed at run time
	// Fields of an invalid header are left out of hash and checksum inputs, as bmv2's
	// BufBuilder does: vslot is 1 + the slot of the header's validity bit (0: not in a
	// header), validFn the same test for headers located at run time.
	vslot   int
	validFn func(*ctx) bool
}

func (p *piece) value(c *ctx) u128 {
	if p.varbit || p.wide {
		return u128{} // varbit values are not reported in digests and logs
	}
	if p.f == nil {
		return u128{lo: c.s[p.off]}
	}
	return p.f(c)
}

func (cp *compiler) flattenType(t front.Type, off int, out *[]piece) {
	cp.flattenTypeV(t, off, 0, out)
}

func (cp *compiler) flattenTypeV(t front.Type, off, vslot int, out *[]piece) {
	if vt, ok := under(t).(*front.VarbitType); ok {
		*out = append(*out, piece{off: off, width: vt.Max, varbit: true, vslot: vslot})
		return
	}
	if isWide(t) {
		*out = append(*out, piece{off: off, width: widthOf(t), wide: true, vslot: vslot})
		return
	}
	if isScalar(t) {
		*out = append(*out, piece{off: off, width: widthOf(t), vslot: vslot})
		return
	}
	switch tt := under(t).(type) {
	case *front.StructType:
		o := off
		if tt.IsHeader() {
			vslot = off + 1
			o++
		}
		for _, f := range tt.Fields {
			cp.flattenTypeV(f.T, o, vslot, out)
			o += cp.slotsOf(f.T)
		}
	case *front.StackType:
		esz := cp.slotsOf(tt.Elem)
		for i := 0; i < tt.Size; i++ {
			cp.flattenTypeV(tt.Elem, off+1+i*esz, vslot, out)
		}
	case *front.TupleType:
		o := off
		for _, e := range tt.Elems {
			cp.flattenTypeV(e, o, vslot, out)
			o += cp.slotsOf(e)
		}
	}
}

// headerValidity returns, for a field of a header, the validity test of that header.
func (cp *compiler) headerValidity(sc *scope, e front.Expr) (vslot int, fn func(*ctx) bool) {
	m, ok := e.(*front.MemberExpr)
	if !ok || m.Kind != front.MemberField {
		return 0, nil
	}
	st, ok := under(m.X.Type()).(*front.StructType)
	if !ok || !st.IsHeader() || !cp.isLoc(sc, m.X) {
		return 0, nil
	}
	l := cp.location(sc, m.X)
	if l.dyn == nil {
		return l.static + 1, nil
	}
	b := l.dyn
	return 0, func(c *ctx) bool { return c.s[b(c)] != 0 }
}

// flatten compiles a data argument into scalar pieces.
func (cp *compiler) flatten(sc *scope, e front.Expr) []piece {
	switch x := e.(type) {
	case *front.ListExpr:
		var out []piece
		for _, el := range x.Elems {
			out = append(out, cp.flatten(sc, el)...)
		}
		return out
	case *front.StructExpr:
		var out []piece
		for _, el := range x.Fields {
			out = append(out, cp.flatten(sc, el.Value)...)
		}
		return out
	}
	t := e.Type()
	if isScalar(t) {
		vs, vf := cp.headerValidity(sc, e)
		if cp.isLoc(sc, e) {
			if l := cp.location(sc, e); l.dyn == nil && !l.slice && widthOf(t) <= 64 {
				return []piece{{off: l.static, width: widthOf(t), vslot: vs, validFn: vf}}
			}
		}
		return []piece{{off: -1, width: widthOf(t), f: cp.scalarOf(sc, e, nil), vslot: vs, validFn: vf}}
	}
	var ps []piece
	cp.flattenType(t, 0, &ps)
	if cp.isLoc(sc, e) {
		if l := cp.location(sc, e); l.dyn == nil {
			static := true
			for _, p := range ps {
				if p.width > 64 && !p.varbit && !p.wide {
					static = false
				}
			}
			if static {
				for i := range ps {
					ps[i].off += l.static
					if ps[i].vslot > 0 {
						ps[i].vslot += l.static
					}
				}
				return ps
			}
		}
	}
	base := cp.composite(sc, e, t)
	for i := range ps {
		var vf func(*ctx) bool
		if vo := ps[i].vslot; vo > 0 {
			vf = func(c *ctx) bool { return c.s[base(c)+vo-1] != 0 }
		}
		if ps[i].varbit || ps[i].wide {
			ps[i].base, ps[i].vslot, ps[i].validFn = base, 0, vf
			continue
		}
		off, w := ps[i].off, ps[i].width
		ps[i] = piece{off: -1, width: w, f: func(c *ctx) u128 { return readSlot(c.s, base(c)+off, w) }, validFn: vf}
	}
	return ps
}

// serialize writes the pieces MSB-first into c.hbuf and returns the byte slice (padded with
// zero bits at the end to a whole byte).
func serialize(c *ctx, ps []piece) []byte {
	bitsN := 0
	for _, p := range ps {
		bitsN += p.width // an upper bound for varbits
	}
	if cap(c.hbuf) < (bitsN+7)/8 {
		c.hbuf = make([]byte, 0, (bitsN+7)/8)
	}
	w := bitWriter{b: c.hbuf[:0]}
	for i := range ps {
		p := &ps[i]
		if p.validFn != nil {
			if !p.validFn(c) {
				continue
			}
		} else if p.vslot > 0 && c.s[p.vslot-1] == 0 {
			continue
		}
		if p.varbit || p.wide {
			b := p.off
			if p.base != nil {
				b += p.base(c)
			}
			if p.wide {
				wideChunks(c.s, b, p.width, func(width int, v uint64) { w.put(width, u128{lo: v}) })
			} else {
				varbitChunks(c.s, b, func(width int, v uint64) { w.put(width, u128{lo: v}) })
			}
			continue
		}
		if p.f == nil {
			// A field at a fixed slot, at most 64 bits wide.
			w.put64(p.width, c.s[p.off])
			continue
		}
		w.put(p.width, p.f(c))
	}
	c.hbuf = w.flush()
	return c.hbuf
}

// serialPlan serializes a list of pieces (serialize) with a layout fixed at compile time when
// every piece is a field of at most 64 bits at a fixed slot, all of them under one header
// validity test or none (the fields of one header, say): the bytes are then written through
// 8-byte windows at offsets known at compile time (emitWins), or are empty when the header is
// invalid. Any other list goes through serialize.
type serialPlan struct {
	ps    []piece
	fast  bool
	fw    []fieldWin
	wp    []wordPart // fw word by word (nil: emitted field by field)
	nb    int        // bytes written
	vslot int        // 1 + the validity slot shared by every piece, or 0
}

func planSerial(ps []piece) *serialPlan {
	sp := &serialPlan{ps: ps}
	total, vslot := 0, -1
	for _, p := range ps {
		if p.f != nil || p.varbit || p.wide || p.validFn != nil || p.width > 64 || p.off < 0 {
			return sp
		}
		if vslot >= 0 && p.vslot != vslot {
			return sp
		}
		vslot = p.vslot
		total += p.width
	}
	fw, _ := fieldWins(ps)
	if fw == nil && len(ps) > 0 {
		return sp
	}
	sp.fast, sp.fw, sp.nb, sp.vslot = true, fw, (total+7)/8, max(vslot, 0)
	sp.wp = wordParts(fw, sp.nb)
	return sp
}

// run returns the serialized bytes in c.hbuf, as serialize.
func (sp *serialPlan) run(c *ctx) []byte {
	if !sp.fast {
		return serialize(c, sp.ps)
	}
	if sp.vslot > 0 && c.s[sp.vslot-1] == 0 {
		c.hbuf = c.hbuf[:0]
		return c.hbuf
	}
	if sp.wp != nil {
		c.hbuf = emitWords(c.hbuf[:0], c.s, 0, sp.nb, sp.wp)
		return c.hbuf
	}
	c.hbuf = emitWins(c.hbuf[:0], c.s, 0, sp.nb, sp.fw)
	return c.hbuf
}

func (cp *compiler) recvBinding(sc *scope, call *front.CallExpr) *binding {
	m, ok := call.Fun.(*front.MemberExpr)
	if !ok {
		return nil
	}
	n, ok := m.X.(*front.NameExpr)
	if !ok {
		return nil
	}
	return sc.lookup(n.Decl)
}

func (cp *compiler) arg(call *front.CallExpr, name string) front.Expr {
	named := len(call.Args) > 0 && call.Args[0].Name != ""
	if named {
		for _, a := range call.Args {
			if a.Name == name {
				return a.Value
			}
		}
	}
	for i, p := range call.Params {
		if p.Name == name {
			if !named && i < len(call.Args) {
				return call.Args[i].Value
			}
			return p.Deflt
		}
	}
	return nil
}

// needArg is arg for an argument the engine cannot do without: a declaration that lacks the
// parameter (a program that brings its own architecture file) is a compile error.
func (cp *compiler) needArg(call *front.CallExpr, name string) front.Expr {
	e := cp.arg(call, name)
	if e == nil {
		cp.fail(call.Position(), "engine: %s has no argument %q (its declaration differs from the architecture's)",
			front.ExprString(call.Fun), name)
	}
	return e
}

// argN returns the argument of the callee's i-th declared parameter (arguments may be named
// and in any order), or the parameter's default.
func (cp *compiler) argN(call *front.CallExpr, i int) front.Expr {
	if md, ok := call.Callee.(*front.MethodDecl); ok && i < len(md.Params) {
		return cp.arg(call, md.Params[i].Name)
	}
	if i < len(call.Args) {
		return call.Args[i].Value
	}
	return nil
}

// outScalar compiles a write to an out argument.
func (cp *compiler) outScalar(sc *scope, e front.Expr) func(*ctx, u128) {
	if _, ok := e.(*front.DontCareExpr); ok {
		return func(*ctx, u128) {}
	}
	return cp.writeLoc(cp.location(sc, e))
}

func (cp *compiler) externValue(sc *scope, call *front.CallExpr, d *front.MethodDecl, t front.Type) scalarFn {
	if front.IsTNADecl(d) {
		return cp.tnaExternValue(sc, call, d, t) // tna_externs.go
	}
	if d.Owner != nil && d.Owner.Name == "packet_in" {
		switch d.Name {
		case "lookahead":
			w := widthOf(t)
			tooShort := cp.errCode("PacketTooShort")
			return func(c *ctx) u128 {
				if c.cur+w > len(c.in)*8 {
					c.perr = tooShort
					return u128{}
				}
				return readBits(c.in, c.cur, w)
			}
		case "length":
			return func(c *ctx) u128 { return u128{lo: uint64(len(c.in))} }
		}
	}
	if d.Owner == nil && d.Name == "static_assert" {
		return constFn(u128{lo: 1})
	}
	cp.fail(call.Position(), "not supported by the netlock engine: value of %s", front.ExprString(call.Fun))
	return nil
}

func (cp *compiler) externCall(sc *scope, call *front.CallExpr, d *front.MethodDecl) stmtFn {
	pos := call.Position()
	if front.IsTNADecl(d) {
		return cp.tnaExternCall(sc, call, d) // tna_externs.go
	}
	if d.Owner != nil {
		switch d.Owner.Name {
		case "packet_in":
			return cp.packetIn(sc, call, d)
		case "packet_out":
			if d.Name == "emit" {
				return cp.emit(sc, cp.argN(call, 0))
			}
		}
		b := cp.recvBinding(sc, call)
		if b == nil || b.kind != bExtern {
			cp.fail(pos, "engine: method call on unknown extern instance")
		}
		switch o := b.obj.(type) {
		case *Register:
			return cp.registerCall(sc, call, d, o)
		case *Counter:
			if o.direct {
				return func(*ctx) flow { return fNext } // bmv2 counts every hit of the table
			}
			idx := cp.scalarOf(sc, cp.argN(call, 0), nil)
			return func(c *ctx) flow { o.count(idx(c), c.pktLen()); return fNext }
		case *Meter:
			if o.direct {
				out := cp.outScalar(sc, cp.argN(call, 0))
				return func(c *ctx) flow {
					color := uint64(0)
					if c.entry != nil && c.entry.meter != nil {
						color = c.entry.meter.execute(c.sw.micros(), o.bytes, c.pktLen())
					}
					out(c, u128{lo: color})
					return fNext
				}
			}
			idx := cp.scalarOf(sc, cp.argN(call, 0), nil)
			out := cp.outScalar(sc, cp.argN(call, 1))
			return func(c *ctx) flow {
				out(c, u128{lo: o.execute(c, idx(c))})
				return fNext
			}
		}
		cp.fail(pos, "not supported by the netlock engine: %s.%s", d.Owner.Name, d.Name)
	}
	return cp.externFunc(sc, call, d)
}

func (cp *compiler) packetIn(sc *scope, call *front.CallExpr, d *front.MethodDecl) stmtFn {
	tooShort := cp.errCode("PacketTooShort")
	switch d.Name {
	case "extract":
		e := cp.argN(call, 0)
		if len(call.Args) == 2 {
			return cp.extractVarbit(sc, call, e)
		}
		if _, dc := e.(*front.DontCareExpr); dc && len(call.TypeArgT) > 0 {
			// extract<T>(_): skip a T.
			var ps []piece
			cp.flattenType(call.TypeArgT[0], 0, &ps)
			total := 0
			for _, p := range ps {
				total += p.width
			}
			return func(c *ctx) flow {
				if c.cur+total > len(c.in)*8 {
					c.perr = tooShort
					return fExit
				}
				c.cur += total
				return fNext
			}
		}
		l := cp.location(sc, e)
		st, ok := under(l.t).(*front.StructType)
		if !ok || !st.IsHeader() {
			cp.fail(call.Position(), "engine: extract of a non-header")
		}
		var ps []piece
		cp.flattenType(st, 0, &ps)
		total, wide := 0, false
		for _, p := range ps {
			total += p.width
			wide = wide || p.wide
		}
		base := l.baseFn()
		fw, win := fieldWins(ps)
		// extract(stack.next) advances the stack's next index.
		nextOf := cp.nextOf(sc, e)
		sib := cp.unionSiblings(e)
		return func(c *ctx) flow {
			c.stackErr = 0
			b := base(c)
			if c.stackErr != 0 {
				c.perr = c.stackErr
				return fExit
			}
			if c.cur+total > len(c.in)*8 {
				c.perr = tooShort
				return fExit
			}
			if wide {
				off := c.cur
				for _, p := range ps {
					if p.wide {
						readWide(c.s, b+p.off, p.width, c.in, off)
					} else {
						writeSlot(c.s, b+p.off, p.width, readBits(c.in, off, p.width))
					}
					off += p.width
				}
				c.cur = off
			} else if c.cur&7 == 0 && (c.cur>>3)+win <= cap(c.in) {
				// Every field from one 8-byte big-endian window (fieldWins). The windows of
				// the last fields may reach past the packet into the buffer's spare capacity
				// (the switch keeps 8 bytes): those bits are shifted out.
				extractWins(c.s, b, c.in[c.cur>>3:cap(c.in)], fw)
				c.cur += total
			} else if c.cur&7 == 0 {
				r := bitReader{b: c.in, i: c.cur >> 3}
				for _, p := range ps {
					writeSlot(c.s, b+p.off, p.width, r.get(p.width))
				}
				c.cur += total
			} else {
				off := c.cur
				for _, p := range ps {
					writeSlot(c.s, b+p.off, p.width, readBits(c.in, off, p.width))
					off += p.width
				}
				c.cur = off
			}
			c.s[b] = 1
			for _, o := range sib {
				c.s[b+o] = 0
			}
			if nextOf != nil {
				c.s[nextOf(c)]++
			}
			return fNext
		}
	case "advance":
		n := cp.scalarOf(sc, cp.argN(call, 0), nil)
		return func(c *ctx) flow {
			v := n(c)
			if v.hi != 0 || c.cur+int(v.lo) > len(c.in)*8 {
				c.perr = tooShort
				return fExit
			}
			c.cur += int(v.lo)
			return fNext
		}
	case "lookahead":
		t := call.Type()
		if len(call.TypeArgT) > 0 && call.TypeArgT[0] != nil {
			t = call.TypeArgT[0]
		}
		if isScalar(t) {
			f := cp.externValue(sc, call, d, t)
			return func(c *ctx) flow {
				f(c)
				if c.perr != 0 {
					return fExit
				}
				return fNext
			}
		}
		f := cp.lookaheadComposite(call, t)
		return func(c *ctx) flow {
			f(c)
			if c.perr != 0 {
				return fExit
			}
			return fNext
		}
	}
	cp.fail(call.Position(), "not supported by the netlock engine: packet_in.%s", d.Name)
	return nil
}

// emit compiles packet.emit(x) for headers, and recursively for structs, stacks and unions.
func (cp *compiler) emit(sc *scope, e front.Expr) stmtFn {
	t := e.Type()
	base := cp.composite(sc, e, t)
	var hdrs []struct {
		off int
		ps  []piece
		n   int
		vb  bool
		fw  []fieldWin
		wp  []wordPart
	}
	var walk func(t front.Type, off int)
	walk = func(t front.Type, off int) {
		switch tt := under(t).(type) {
		case *front.StructType:
			if tt.IsHeader() {
				var ps []piece
				cp.flattenType(tt, 0, &ps)
				n, vb := 0, false
				for _, p := range ps {
					n += p.width
					vb = vb || p.varbit || p.wide
				}
				var fw []fieldWin
				if n&7 == 0 {
					fw, _ = fieldWins(ps)
				}
				hdrs = append(hdrs, struct {
					off int
					ps  []piece
					n   int
					vb  bool
					fw  []fieldWin
					wp  []wordPart
				}{off, ps, n, vb, fw, wordParts(fw, n>>3)})
				return
			}
			o := off
			for _, f := range tt.Fields {
				walk(f.T, o)
				o += cp.slotsOf(f.T)
			}
		case *front.StackType:
			esz := cp.slotsOf(tt.Elem)
			for i := 0; i < tt.Size; i++ {
				walk(tt.Elem, off+1+i*esz)
			}
		}
	}
	walk(t, 0)
	return func(c *ctx) flow {
		b := base(c)
		for i := range hdrs {
			h := &hdrs[i]
			hb := b + h.off
			if c.s[hb] == 0 {
				continue
			}
			if h.vb {
				for _, p := range h.ps {
					if p.wide {
						wideChunks(c.s, hb+p.off, p.width, func(width int, v uint64) {
							need := (c.outBits + width + 7) / 8
							for len(c.out) < need {
								c.out = append(c.out, 0)
							}
							writeBits(c.out, c.outBits, width, u128{lo: v})
							c.outBits += width
						})
						continue
					}
					if p.varbit {
						varbitChunks(c.s, hb+p.off, func(width int, v uint64) {
							need := (c.outBits + width + 7) / 8
							for len(c.out) < need {
								c.out = append(c.out, 0)
							}
							writeBits(c.out, c.outBits, width, u128{lo: v})
							c.outBits += width
						})
						continue
					}
					need := (c.outBits + p.width + 7) / 8
					for len(c.out) < need {
						c.out = append(c.out, 0)
					}
					writeBits(c.out, c.outBits, p.width, readSlot(c.s, hb+p.off, p.width))
					c.outBits += p.width
				}
				continue
			}
			if c.outBits&7 == 0 && h.wp != nil {
				c.out = emitWords(c.out, c.s, hb, h.n>>3, h.wp)
				c.outBits += h.n
				continue
			}
			if c.outBits&7 == 0 && h.fw != nil {
				c.out = emitWins(c.out, c.s, hb, h.n>>3, h.fw)
				c.outBits += h.n
				continue
			}
			if c.outBits&7 == 0 && h.n&7 == 0 {
				w := bitWriter{b: c.out}
				for _, p := range h.ps {
					if p.width <= 56 {
						w.put64(p.width, c.s[hb+p.off])
					} else {
						w.put(p.width, readSlot(c.s, hb+p.off, p.width))
					}
				}
				c.out = w.b
				c.outBits += h.n
				continue
			}
			need := (c.outBits + h.n + 7) / 8
			for len(c.out) < need {
				c.out = append(c.out, 0)
			}
			for _, p := range h.ps {
				writeBits(c.out, c.outBits, p.width, readSlot(c.s, hb+p.off, p.width))
				c.outBits += p.width
			}
		}
		return fNext
	}
}

func (cp *compiler) registerCall(sc *scope, call *front.CallExpr, d *front.MethodDecl, r *Register) stmtFn {
	pos := call.Position().String()
	switch d.Name {
	case "read":
		if f := cp.registerRead64(sc, call, r, pos); f != nil {
			return f
		}
		out := cp.outScalar(sc, cp.needArg(call, "result"))
		idx := cp.scalarOf(sc, cp.needArg(call, "index"), nil)
		return func(c *ctx) flow {
			i := idx(c)
			if err := r.access(c, i, false, pos); err != nil {
				c.fail = err
				return fExit
			}
			if i.hi != 0 || i.lo >= uint64(r.Size()) {
				out(c, u128{}) // bmv2 reads 0 out of range
				return fNext
			}
			out(c, r.cell(i.lo))
			return fNext
		}
	case "write":
		if f := cp.registerWrite64(sc, call, r, pos); f != nil {
			return f
		}
		idx := cp.scalarOf(sc, cp.needArg(call, "index"), nil)
		val := cp.scalarOf(sc, cp.needArg(call, "value"), nil)
		m := mask128(r.Width)
		return func(c *ctx) flow {
			i := idx(c)
			if err := r.access(c, i, true, pos); err != nil {
				c.fail = err
				return fExit
			}
			if i.hi != 0 || i.lo >= uint64(r.Size()) {
				return fNext
			}
			r.setCell(i.lo, val(c).and(m))
			return fNext
		}
	}
	cp.fail(call.Position(), "not supported by the netlock engine: register.%s", d.Name)
	return nil
}

// fieldList returns the slot pieces of user metadata fields annotated @field_list(index).
func (cp *compiler) fieldList(idx uint64) []slotRange {
	var out []slotRange
	var walk func(t front.Type, off int)
	walk = func(t front.Type, off int) {
		st, ok := under(t).(*front.StructType)
		if !ok {
			return
		}
		o := off
		if st.IsHeader() {
			o++
		}
		for _, f := range st.Fields {
			n := cp.slotsOf(f.T)
			if a := f.Annos.Get("field_list"); a != nil {
				for _, tok := range a.Args {
					if tok.Lit != nil && tok.Lit.Value.IsUint64() && tok.Lit.Value.Uint64() == idx {
						out = append(out, slotRange{o, n})
					}
				}
			}
			walk(f.T, o)
			o += n
		}
	}
	walk(cp.metaT, cp.metaBase)
	return out
}

// oldFieldList registers the fields named in a resubmit/recirculate/clone3 data argument.
func (cp *compiler) oldFieldList(sc *scope, e front.Expr) int {
	var rs []slotRange
	var add func(e front.Expr)
	add = func(e front.Expr) {
		switch x := e.(type) {
		case *front.ListExpr:
			for _, el := range x.Elems {
				add(el)
			}
			return
		case *front.StructExpr:
			for _, el := range x.Fields {
				add(el.Value)
			}
			return
		}
		if cp.isLoc(sc, e) {
			l := cp.location(sc, e)
			if l.dyn == nil && !l.slice {
				rs = append(rs, slotRange{l.static, cp.slotsOf(l.t)})
			}
		}
	}
	add(e)
	cp.sw.fieldLists = append(cp.sw.fieldLists, rs)
	return len(cp.sw.fieldLists) - 1
}

func (cp *compiler) newFieldList(idx uint64) int {
	if id, ok := cp.flIndex[idx]; ok {
		return id
	}
	cp.sw.fieldLists = append(cp.sw.fieldLists, cp.fieldList(idx))
	id := len(cp.sw.fieldLists) - 1
	cp.flIndex[idx] = id
	return id
}

func (cp *compiler) constArg(call *front.CallExpr, i int) uint64 {
	e := cp.argN(call, i)
	if v, ok := cp.checked.Const[e]; ok {
		if x, ok := cp.valueU128(v); ok {
			return x.lo
		}
	}
	cp.fail(call.Position(), "engine: argument %d of %s must be a constant", i+1, front.ExprString(call.Fun))
	return 0
}

func (cp *compiler) externFunc(sc *scope, call *front.CallExpr, d *front.MethodDecl) stmtFn {
	pos := call.Position()
	sw := cp.sw
	switch d.Name {
	case "mark_to_drop":
		smBase := cp.smBase
		if len(call.Args) == 1 {
			smBase = cp.location(sc, cp.argN(call, 0)).static
		}
		off := smBase + cp.smOff["egress_spec"]
		return func(c *ctx) flow { c.s[off] = DropPort; return fNext }
	case "static_assert":
		return seq(nil) // checked by the front end
	case "verify":
		cond := cp.scalarOf(sc, cp.argN(call, 0), nil)
		code := cp.scalarOf(sc, cp.argN(call, 1), nil)
		return func(c *ctx) flow {
			if cond(c).lo == 0 {
				c.perr = int(code(c).lo)
				return fExit
			}
			return fNext
		}
	case "assert", "assume":
		cond := cp.scalarOf(sc, cp.argN(call, 0), nil)
		msg := fmt.Errorf("%s: %s failed", pos, d.Name)
		return func(c *ctx) flow {
			if cond(c).lo == 0 {
				c.fail = fmt.Errorf("%w: %w", ErrAssert, msg)
				return fExit
			}
			return fNext
		}
	case "truncate":
		n := cp.scalarOf(sc, cp.argN(call, 0), nil)
		return func(c *ctx) flow { c.p.truncLen = int(n(c).lo); return fNext }
	case "log_msg":
		format := ""
		if s, ok := cp.argN(call, 0).(*front.StringExpr); ok {
			format = s.Val
		}
		var ps []piece
		if len(call.Args) > 1 {
			ps = cp.flatten(sc, cp.argN(call, 1))
		}
		return func(c *ctx) flow {
			if sw.cfg.Log == nil {
				return fNext
			}
			var sb strings.Builder
			rest := format
			for _, p := range ps {
				i := strings.Index(rest, "{}")
				if i < 0 {
					break
				}
				sb.WriteString(rest[:i])
				sb.WriteString(p.value(c).big().String())
				rest = rest[i+2:]
			}
			sb.WriteString(rest)
			sw.cfg.Log(sb.String())
			return fNext
		}
	case "random":
		out := cp.outScalar(sc, cp.argN(call, 0))
		lo, hi := cp.scalarOf(sc, cp.argN(call, 1), nil), cp.scalarOf(sc, cp.argN(call, 2), nil)
		return func(c *ctx) flow {
			l, h := lo(c).lo, hi(c).lo
			v := l
			if h > l {
				v = l + RandomIn(sw.cfg.Random(), h-l+1)
			}
			out(c, u128{lo: v})
			return fNext
		}
	case "digest":
		recv := cp.scalarOf(sc, cp.argN(call, 0), nil)
		data := cp.argN(call, 1)
		ps := cp.flatten(sc, data)
		name := data.Type().String()
		dt := data.Type()
		if len(call.TypeArgT) > 0 && call.TypeArgT[0] != nil {
			dt = call.TypeArgT[0]
		}
		if st, ok := under(dt).(*front.StructType); ok {
			name = st.Decl.Name
		} else if dt != nil {
			name = dt.String()
		}
		return func(c *ctx) flow {
			dg := Digest{Receiver: uint32(recv(c).lo), Name: name, ID: sw.digestIDs[name]}
			for _, p := range ps {
				dg.Fields = append(dg.Fields, p.value(c).toBytes(p.width))
			}
			c.p.digests = append(c.p.digests, dg)
			return fNext
		}
	case "hash":
		out := cp.outScalar(sc, cp.argN(call, 0))
		algo := cp.constArg(call, 1)
		base := cp.scalarOf(sc, cp.argN(call, 2), nil)
		// p4c-bm2-ss copies hash()'s data into temporaries before the calculation, so on bmv2
		// a field of an invalid header is hashed with the value it holds, unlike in checksums
		// (real simple_switch: externs.stf, op 7).
		ps := cp.flatten(sc, cp.argN(call, 3))
		for i := range ps {
			ps[i].vslot, ps[i].validFn = 0, nil
		}
		sp := planSerial(ps)
		max := cp.scalarOf(sc, cp.argN(call, 4), nil)
		alg := cp.hashAlgo(algo, pos)
		ow := widthOf(cp.argN(call, 0).Type())
		return func(c *ctx) flow {
			h := alg(c, sp.run(c))
			m := max(c)
			if !m.isZero() {
				_, h = h.divmod(m)
			}
			out(c, base(c).add(h).trunc(ow))
			return fNext
		}
	case "verify_checksum", "verify_checksum_with_payload", "update_checksum", "update_checksum_with_payload":
		cond := cp.scalarOf(sc, cp.argN(call, 0), nil)
		sp := planSerial(cp.flatten(sc, cp.argN(call, 1)))
		alg := cp.hashAlgo(cp.constArg(call, 3), pos)
		ck := cp.argN(call, 2)
		cw := widthOf(ck.Type())
		withPayload := strings.HasSuffix(d.Name, "_with_payload")
		errOff := cp.smBase + cp.smOff["checksum_error"]
		compute := func(c *ctx) u128 {
			data := sp.run(c)
			if withPayload {
				data = append(data, c.payload()...)
				c.hbuf = data[:0]
			}
			return alg(c, data).trunc(cw)
		}
		if strings.HasPrefix(d.Name, "verify") {
			got := cp.scalarOf(sc, ck, nil)
			return func(c *ctx) flow {
				if cond(c).lo != 0 && compute(c) != got(c) {
					c.s[errOff] = 1
				}
				return fNext
			}
		}
		wr := cp.writeLoc(cp.location(sc, ck))
		return func(c *ctx) flow {
			if cond(c).lo != 0 {
				wr(c, compute(c))
			}
			return fNext
		}
	case "clone", "clone3", "clone_preserving_field_list":
		kind := cp.constArg(call, 0)
		sess := cp.scalarOf(sc, cp.argN(call, 1), nil)
		fl := -1
		switch d.Name {
		case "clone3":
			fl = cp.oldFieldList(sc, cp.argN(call, 2))
		case "clone_preserving_field_list":
			fl = cp.newFieldList(cp.constArg(call, 2))
		}
		_ = kind // I2E or E2E follows from the block the call runs in, as in bmv2
		return func(c *ctx) flow {
			c.p.cloneSet = true
			c.p.cloneSession = uint32(sess(c).lo)
			c.p.cloneFL = fl
			return fNext
		}
	case "resubmit", "resubmit_preserving_field_list", "recirculate", "recirculate_preserving_field_list":
		fl := -1
		if strings.HasSuffix(d.Name, "_preserving_field_list") {
			fl = cp.newFieldList(cp.constArg(call, 0))
		} else if len(call.Args) > 0 {
			fl = cp.oldFieldList(sc, cp.argN(call, 0))
		}
		if strings.HasPrefix(d.Name, "resubmit") {
			return func(c *ctx) flow { c.p.resubmitFL = fl; c.p.resubmit = true; return fNext }
		}
		return func(c *ctx) flow { c.p.recircFL = fl; c.p.recirc = true; return fNext }
	}
	cp.fail(pos, "not supported by the netlock engine: extern %s", d.Name)
	return nil
}

// lookaheadComposite compiles lookahead<T>() for a header or struct T into a temporary.
func (cp *compiler) lookaheadComposite(call *front.CallExpr, t front.Type) compFn {
	var ps []piece
	cp.flattenType(t, 0, &ps)
	total := 0
	for _, p := range ps {
		total += p.width
	}
	n := cp.slotsOf(t)
	base := cp.alloc(n)
	hdr := false
	if st, ok := under(t).(*front.StructType); ok && st.IsHeader() {
		hdr = true
	}
	tooShort := cp.errCode("PacketTooShort")
	return func(c *ctx) int {
		clear(c.s[base : base+n])
		if c.cur+total > len(c.in)*8 {
			c.perr = tooShort
			return base
		}
		off := c.cur
		for _, p := range ps {
			if p.wide {
				readWide(c.s, base+p.off, p.width, c.in, off)
			} else {
				writeSlot(c.s, base+p.off, p.width, readBits(c.in, off, p.width))
			}
			off += p.width
		}
		if hdr {
			c.s[base] = 1
		}
		return base
	}
}

// extractVarbit compiles extract(hdr, lengthInBits) for a header with one varbit field, with
// bmv2's errors: a length that is not a whole number of bytes is ParserInvalidArgument, one
// above the varbit's maximum is HeaderTooShort, and missing bytes are PacketTooShort.
func (cp *compiler) extractVarbit(sc *scope, call *front.CallExpr, e front.Expr) stmtFn {
	l := cp.location(sc, e)
	st, ok := under(l.t).(*front.StructType)
	if !ok || !st.IsHeader() {
		cp.fail(call.Position(), "engine: extract of a non-header")
	}
	var ps []piece
	cp.flattenType(st, 0, &ps)
	fixed := 0
	for _, p := range ps {
		if !p.varbit {
			fixed += p.width
		}
	}
	size := cp.scalarOf(sc, cp.argN(call, 1), nil)
	base := l.baseFn()
	nextOf := cp.nextOf(sc, e)
	invalid, hdrShort, tooShort := cp.errCode("ParserInvalidArgument"), cp.errCode("HeaderTooShort"), cp.errCode("PacketTooShort")
	return func(c *ctx) flow {
		n := size(c)
		vmax := 0
		for _, p := range ps {
			if p.varbit {
				vmax = p.width
			}
		}
		if n.hi != 0 || n.lo > 1<<20 {
			c.perr = hdrShort
			return fExit
		}
		vlen := int(n.lo)
		if vlen%8 != 0 {
			c.perr = invalid
			return fExit
		}
		if vlen > vmax {
			c.perr = hdrShort
			return fExit
		}
		if c.cur+fixed+vlen > len(c.in)*8 {
			c.perr = tooShort
			return fExit
		}
		c.stackErr = 0
		b := base(c)
		if c.stackErr != 0 {
			c.perr = c.stackErr
			return fExit
		}
		off := c.cur
		for _, p := range ps {
			if p.varbit {
				readVarbit(c.s, b+p.off, p.width, c.in, off, vlen)
				off += vlen
				continue
			}
			if p.wide {
				readWide(c.s, b+p.off, p.width, c.in, off)
				off += p.width
				continue
			}
			writeSlot(c.s, b+p.off, p.width, readBits(c.in, off, p.width))
			off += p.width
		}
		c.cur = off
		c.s[b] = 1
		if nextOf != nil {
			c.s[nextOf(c)]++
		}
		return fNext
	}
}

// nextOf returns, for an extract target written stack.next (or a member of it), the base
// slot of the stack, whose next index the extract advances.
func (cp *compiler) nextOf(sc *scope, e front.Expr) func(*ctx) int {
	for x := e; ; {
		m, ok := x.(*front.MemberExpr)
		if !ok {
			return nil
		}
		if m.Kind == front.MemberStackProp && m.Name == "next" {
			return cp.location(sc, m.X).baseFn()
		}
		x = m.X
	}
}

// fieldWin reads one field of a header that starts on a byte boundary: the 8 bytes at byteOff,
// big-endian, shifted left by shift and right by drop (64 - width).
type fieldWin struct {
	slot, byteOff int
	shift, drop   uint
}

// fieldWins plans the extraction of a header's fields through 8-byte windows, when every field
// fits one (at most 57 bits, or 64 bits on a byte boundary). win is the number of bytes from
// the header's start the plan reads (up to 7 past the header's end: the caller checks the
// buffer's capacity holds them, or uses the bit reader). nil when a field does not fit.
func fieldWins(ps []piece) (fw []fieldWin, win int) {
	off := 0
	for _, p := range ps {
		if p.wide || p.varbit || p.width > 64 || p.width == 0 || (p.width > 57 && (p.width != 64 || off&7 != 0)) {
			return nil, 1 << 62
		}
		fw = append(fw, fieldWin{slot: p.off, byteOff: off >> 3, shift: uint(off & 7), drop: uint(64 - p.width)})
		win = max(win, off>>3+8)
		off += p.width
	}
	return fw, win
}

// extractWins stores the fields of a header planned by fieldWins from in (the header's first
// byte on: len(in) must cover the plan's window) into the slots from base b.
func extractWins(s []uint64, b int, in []byte, fw []fieldWin) {
	for _, f := range fw {
		v := binary.BigEndian.Uint64(in[f.byteOff:])
		s[b+f.slot] = v << (f.shift & 63) >> (f.drop & 63) // both < 64: no range checks
	}
}

// emitWins appends a header of nb bytes planned by fieldWins from the slots from base b: every
// field is ORed into an 8-byte big-endian window over zeroed bytes (the 8 bytes past the
// header are zeroed and left in the spare capacity).
func emitWins(out []byte, s []uint64, b, nb int, fw []fieldWin) []byte {
	l := len(out)
	out = slices.Grow(out, nb+8)[:l+nb]
	buf := out[l : l+nb+8]
	clear(buf)
	for _, f := range fw {
		v := s[b+f.slot] & (^uint64(0) >> f.drop)
		w := binary.BigEndian.Uint64(buf[f.byteOff:])
		binary.BigEndian.PutUint64(buf[f.byteOff:], w|v<<(f.drop-f.shift))
	}
	return out
}

// wordPart is one field, or the part of a field in one 64-bit word, of a header emitted word
// by word (emitWords): the slot's value rotated left by rot and masked by m (the part's bits
// in the word; bits of the value above the field's width are masked off too) is ORed into
// the word; last marks the last part of a word (the word is then stored).
type wordPart struct {
	slot int
	m    uint64
	rot  int
	last bool
}

// wordParts turns a fieldWins plan of a header of nb bytes into the parts of its 64-bit
// words, in order: a field within one word is one part, a field across two is two (its high
// bits at the bottom of the first word, its low bits at the top of the next). nil when the
// plan does not cover the header's words (no field in some word).
func wordParts(fw []fieldWin, nb int) []wordPart {
	var ps []wordPart
	var words []int
	for _, f := range fw {
		off, w := f.byteOff*8+int(f.shift), 64-int(f.drop)
		i, end := off/64, off+w-1
		if j := end / 64; j == i {
			ls := 64*i + 63 - end
			ps = append(ps, wordPart{slot: f.slot, m: mask128(w).lo << ls, rot: ls})
			words = append(words, i)
		} else {
			// The high n1 bits end the first word (the value shifted right by n2), the low
			// n2 bits start the next.
			n2 := end - 64*j + 1
			n1 := w - n2
			ps = append(ps, wordPart{slot: f.slot, m: mask128(n1).lo, rot: 64 - n2},
				wordPart{slot: f.slot, m: mask128(n2).lo << (64 - n2), rot: 64 - n2})
			words = append(words, i, j)
		}
	}
	nw := (nb + 7) / 8
	for k := range ps {
		ps[k].last = k == len(ps)-1 || words[k+1] != words[k]
	}
	// Every word from 0 to nw-1 must have a part, in order.
	want := 0
	for k := range ps {
		if words[k] != want {
			return nil
		}
		if ps[k].last {
			want++
		}
	}
	if want != nw {
		return nil
	}
	return ps
}

// emitWords appends a header of nb bytes planned by wordParts from the slots from base b, one
// 64-bit big-endian store per word (the bytes of the last word past the header are zero and
// left in the spare capacity).
func emitWords(out []byte, s []uint64, b, nb int, ps []wordPart) []byte {
	l := len(out)
	out = slices.Grow(out, nb+8)[:l+nb]
	buf := out[l : l+nb+8]
	o, x := 0, uint64(0)
	for i := range ps {
		p := &ps[i]
		x |= bits.RotateLeft64(s[b+p.slot], p.rot) & p.m
		if p.last {
			binary.BigEndian.PutUint64(buf[o:], x)
			o, x = o+8, 0
		}
	}
	return out
}

// RandomIn reduces a random value r into [0, n), where n == 0 stands for 2^64 (the full 64-bit
// range of random(lo, hi) with hi-lo+1 wrapping to 0): then r is returned as it is.
func RandomIn(r, n uint64) uint64 {
	if n == 0 {
		return r
	}
	return r % n
}
