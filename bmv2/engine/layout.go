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
	switch under(t).(type) {
	case *front.BitsType, *front.BoolType, *front.EnumType, *front.ErrorType, *front.IntType:
		return true
	}
	return false
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
		if tt.Width > 128 {
			cp.fail(front.Pos{}, "not supported by the netlock engine: %s wider than 128 bits", tt)
		}
		n = 1
		if tt.Width > 64 {
			n = 2
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
		cp.fail(front.Pos{}, "not supported by the netlock engine: varbit")
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
	panic(fmt.Sprintf("engine: no field %s in %s", name, st))
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

// readBits reads w bits big-endian starting at bit offset off of b.
func readBits(b []byte, off, w int) u128 {
	var v u128
	if off&7 == 0 && w&7 == 0 {
		i := off >> 3
		if w <= 64 {
			var x uint64
			for _, c := range b[i : i+w/8] {
				x = x<<8 | uint64(c)
			}
			return u128{lo: x}
		}
		for _, c := range b[i : i+w/8] {
			v = v.shl(8).or(u128{lo: uint64(c)})
		}
		return v
	}
	for k := 0; k < w; k++ {
		p := off + k
		bit := uint64(b[p>>3]>>(7-uint(p&7))) & 1
		v = v.shl(1).or(u128{lo: bit})
	}
	return v
}

// writeBits writes the low w bits of v big-endian at bit offset off of b (b must be long enough
// and zeroed where not yet written).
func writeBits(b []byte, off, w int, v u128) {
	if off&7 == 0 && w&7 == 0 {
		i := off>>3 + w/8 - 1
		for k := 0; k < w/8; k++ {
			b[i-k] = byte(v.lo)
			v = v.shr(8)
		}
		return
	}
	for k := w - 1; k >= 0; k-- {
		p := off + k
		mask := byte(1) << (7 - uint(p&7))
		if v.lo&1 == 1 {
			b[p>>3] |= mask
		} else {
			b[p>>3] &^= mask
		}
		v = v.shr(1)
	}
}
