package engine

import (
	"fmt"

	"github.com/netlock-go/netlock/bmv2/front"
)

// under strips new types and returns the representation type.
func under(t front.Type) front.Type {
	for {
		nt, ok := t.(*front.NewType)
		if !ok {
			return t
		}
		t = nt.Underlying
	}
}

// isScalar reports whether values of t live in one or two slots as a bit pattern.
func isScalar(t front.Type) bool {
	switch tt := under(t).(type) {
	case *front.BitsType:
		return tt.Width <= 128
	case *front.BoolType, *front.EnumType, *front.ErrorType, *front.IntType:
		return true
	}
	return false
}

// isWide reports whether t is a bit<W> or int<W> with W > 128. Such values are stored as
// ceil(W/64) words, most significant first, and may only be extracted, emitted, copied,
// compared for equality and hashed.
func isWide(t front.Type) bool {
	bt, ok := under(t).(*front.BitsType)
	return ok && bt.Width > 128
}

// wideChunks calls f with the width and bits of each word of a wide value at slot base.
func wideChunks(s []uint64, base, w int, f func(width int, v uint64)) {
	nw := (w + 63) / 64
	first := w - 64*(nw-1)
	for k := 0; k < nw; k++ {
		cw := 64
		if k == 0 {
			cw = first
		}
		f(cw, s[base+k])
	}
}

// readWide reads a wide value of w bits at bit offset off of b into the words at base.
func readWide(s []uint64, base, w int, b []byte, off int) {
	nw := (w + 63) / 64
	first := w - 64*(nw-1)
	for k := 0; k < nw; k++ {
		cw := 64
		if k == 0 {
			cw = first
		}
		s[base+k] = readBits(b, off, cw).lo
		off += cw
	}
}

// widthOf is the bit width of a scalar type (int literals count as 128).
func widthOf(t front.Type) int {
	switch t := under(t).(type) {
	case *front.BitsType:
		return t.Width
	case *front.BoolType:
		return 1
	case *front.EnumType:
		if t.Underlying != nil {
			return t.Underlying.Width
		}
		return 32
	case *front.ErrorType:
		return 32
	case *front.IntType:
		return 128
	}
	return 0
}

func signed(t front.Type) bool {
	switch t := under(t).(type) {
	case *front.BitsType:
		return t.Signed
	case *front.IntType:
		return true
	case *front.EnumType:
		return t.Underlying != nil && t.Underlying.Signed
	}
	return false
}

// slotsOf is the number of 64-bit slots a value of type t occupies in the flat state. Headers
// start with a validity slot; header stacks start with their next index.
func (cp *compiler) slotsOf(t front.Type) int {
	t = under(t)
	if n, ok := cp.sizes[t]; ok {
		return n
	}
	n := 0
	switch tt := t.(type) {
	case *front.BitsType:
		n = 1
		if tt.Width > 64 {
			n = 2
		}
		if tt.Width > 128 {
			n = (tt.Width + 63) / 64
		}
	case *front.BoolType, *front.EnumType, *front.ErrorType, *front.IntType:
		n = 1
	case *front.StructType:
		if tt.IsHeader() {
			n = 1
		}
		for _, f := range tt.Fields {
			n += cp.slotsOf(f.T)
		}
	case *front.StackType:
		n = 1 + tt.Size*cp.slotsOf(tt.Elem)
	case *front.TupleType:
		for _, e := range tt.Elems {
			n += cp.slotsOf(e)
		}
	case *front.VarbitType:
		// The current length in bits, then the bits left-aligned in 64-bit words.
		n = 1 + (tt.Max+63)/64
	default:
		cp.fail(front.Pos{}, "not supported by the netlock engine: values of type %s", t)
	}
	cp.sizes[t] = n
	return n
}

// fieldOffset returns the slot offset of field name inside a struct, header or union value.
func (cp *compiler) fieldOffset(st *front.StructType, name string) (int, front.Type) {
	off := 0
	if st.IsHeader() {
		off = 1
	}
	for _, f := range st.Fields {
		if f.Name == name {
			return off, f.T
		}
		off += cp.slotsOf(f.T)
	}
	// A checked program never names a missing field, but the architecture's own structs are
	// looked up by name (tna.go), and a program can bring its own tna.p4: a compile error, not a
	// crash of the switch.
	panic(compileError{fmt.Errorf("engine: no field %s in %s", name, st)})
}

func readSlot(s []uint64, i, w int) u128 {
	if w > 64 {
		return u128{s[i], s[i+1]}
	}
	return u128{lo: s[i]}
}

func writeSlot(s []uint64, i, w int, v u128) {
	v = v.trunc(w)
	s[i] = v.lo
	if w > 64 {
		s[i+1] = v.hi
	}
}

// readBits reads w bits big-endian starting at bit offset off of b (which must hold them).
func readBits(b []byte, off, w int) u128 {
	if w <= 56 {
		i, sh := off>>3, off&7
		n := (sh + w + 7) >> 3
		var x uint64
		for _, c := range b[i : i+n] {
			x = x<<8 | uint64(c)
		}
		x >>= uint(n*8 - sh - w)
		return u128{lo: x & (1<<uint(w) - 1)}
	}
	if w <= 112 {
		hi := readBits(b, off, w-56)
		lo := readBits(b, off+w-56, 56)
		return hi.shl(56).or(lo)
	}
	hi := readBits(b, off, w-112)
	mid := readBits(b, off+w-112, 56)
	lo := readBits(b, off+w-56, 56)
	return hi.shl(112).or(mid.shl(56)).or(lo)
}

// writeBits writes the low w bits of v big-endian at bit offset off of b (b must be long
// enough); other bits of b are kept.
func writeBits(b []byte, off, w int, v u128) {
	if w > 56 {
		writeBits(b, off+w-56, 56, v)
		writeBits(b, off, w-56, v.shr(56))
		return
	}
	i, sh := off>>3, off&7
	n := (sh + w + 7) >> 3
	var x uint64
	for _, c := range b[i : i+n] {
		x = x<<8 | uint64(c)
	}
	pad := uint(n*8 - sh - w)
	m := (uint64(1)<<uint(w) - 1) << pad
	x = x&^m | (v.lo<<pad)&m
	for k := n - 1; k >= 0; k-- {
		b[i+k] = byte(x)
		x >>= 8
	}
}

// bitWriter appends fields MSB-first to a byte slice that starts byte-aligned.
type bitWriter struct {
	b   []byte
	acc uint64
	n   int
}

func (w *bitWriter) put(width int, v u128) {
	if width > 56 {
		w.put(width-56, v.shr(56))
		v, width = v.and(mask128(56)), 56
	}
	w.acc = w.acc<<uint(width) | v.lo&(1<<uint(width)-1)
	w.n += width
	for w.n >= 8 {
		w.n -= 8
		w.b = append(w.b, byte(w.acc>>uint(w.n)))
	}
}

// put64 appends a field of at most 56 bits held in a uint64 (wider ones go through put).
func (w *bitWriter) put64(width int, v uint64) {
	if width > 56 {
		w.put(width, u128{lo: v})
		return
	}
	w.acc = w.acc<<uint(width) | v&(1<<uint(width)-1)
	w.n += width
	for w.n >= 8 {
		w.n -= 8
		w.b = append(w.b, byte(w.acc>>uint(w.n)))
	}
}

// flush pads the last partial byte with zero bits.
func (w *bitWriter) flush() []byte {
	if w.n > 0 {
		w.b = append(w.b, byte(w.acc<<uint(8-w.n)))
		w.n = 0
	}
	return w.b
}

// bitReader reads fields MSB-first from a byte slice, starting at a byte boundary.
type bitReader struct {
	b   []byte
	i   int
	acc uint64
	n   int
}

func (r *bitReader) get(width int) u128 {
	if width > 56 {
		hi := r.get(width - 56)
		return hi.shl(56).or(r.get(56))
	}
	for r.n < width {
		r.acc = r.acc<<8 | uint64(r.b[r.i])
		r.i++
		r.n += 8
	}
	r.n -= width
	return u128{lo: r.acc >> uint(r.n) & (1<<uint(width) - 1)}
}

// readVarbit reads n bits at bit offset off of b into the words of a varbit at slot base.
func readVarbit(s []uint64, base, maxBits int, b []byte, off, n int) {
	nw := (maxBits + 63) / 64
	clear(s[base+1 : base+1+nw])
	s[base] = uint64(n)
	for k := 0; n > 0; k++ {
		w := min(n, 64)
		v := readBits(b, off, w)
		s[base+1+k] = v.lo << uint(64-w)
		off += w
		n -= w
	}
}

// varbitWords calls f with each chunk (width, left-aligned bits) of a varbit value.
func varbitChunks(s []uint64, base int, f func(width int, v uint64)) {
	n := int(s[base])
	for k := 0; n > 0; k++ {
		w := min(n, 64)
		f(w, s[base+1+k]>>uint(64-w))
		n -= w
	}
}
