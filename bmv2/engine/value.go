package engine

import (
	"math/big"
	"math/bits"
)

// u128 is a value of up to 128 bits: every P4 scalar (bit<W>, int<W>, bool, enum, error) is
// held as its two's-complement bit pattern, masked to its width.
type u128 struct{ lo, hi uint64 }

func mask128(w int) u128 {
	switch {
	case w <= 0:
		return u128{}
	case w < 64:
		return u128{lo: 1<<uint(w) - 1}
	case w == 64:
		return u128{lo: ^uint64(0)}
	case w < 128:
		return u128{lo: ^uint64(0), hi: 1<<uint(w-64) - 1}
	default:
		return u128{lo: ^uint64(0), hi: ^uint64(0)}
	}
}

func (a u128) and(b u128) u128 { return u128{a.lo & b.lo, a.hi & b.hi} }
func (a u128) or(b u128) u128  { return u128{a.lo | b.lo, a.hi | b.hi} }
func (a u128) xor(b u128) u128 { return u128{a.lo ^ b.lo, a.hi ^ b.hi} }
func (a u128) not() u128       { return u128{^a.lo, ^a.hi} }
func (a u128) isZero() bool    { return a.lo == 0 && a.hi == 0 }
func (a u128) trunc(w int) u128 {
	if w >= 128 {
		return a
	}
	return a.and(mask128(w))
}

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{lo, hi}
}

func (a u128) sub(b u128) u128 {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, c)
	return u128{lo, hi}
}

func (a u128) mul(b u128) u128 {
	hi, lo := bits.Mul64(a.lo, b.lo)
	hi += a.lo*b.hi + a.hi*b.lo
	return u128{lo, hi}
}

func (a u128) shl(n uint) u128 {
	switch {
	case n >= 128:
		return u128{}
	case n >= 64:
		return u128{0, a.lo << (n - 64)}
	case n == 0:
		return a
	default:
		return u128{a.lo << n, a.hi<<n | a.lo>>(64-n)}
	}
}

func (a u128) shr(n uint) u128 {
	switch {
	case n >= 128:
		return u128{}
	case n >= 64:
		return u128{a.hi >> (n - 64), 0}
	case n == 0:
		return a
	default:
		return u128{a.lo>>n | a.hi<<(64-n), a.hi >> n}
	}
}

func (a u128) cmp(b u128) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

// bit reports bit i of a.
func (a u128) bit(i int) bool {
	if i >= 64 {
		return a.hi>>uint(i-64)&1 == 1
	}
	return a.lo>>uint(i)&1 == 1
}

// sext sign-extends a w-bit value to 128 bits.
func (a u128) sext(w int) u128 {
	if w <= 0 || w >= 128 {
		return a
	}
	if a.bit(w - 1) {
		return a.or(mask128(w).not())
	}
	return a
}

// scmp compares a and b as signed w-bit values.
func scmp(a, b u128, w int) int {
	a, b = a.sext(w), b.sext(w)
	an, bn := a.hi>>63 == 1, b.hi>>63 == 1
	if an != bn {
		if an {
			return -1
		}
		return 1
	}
	return a.cmp(b)
}

func (a u128) big() *big.Int {
	v := new(big.Int).SetUint64(a.hi)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(a.lo))
}

// fromBig converts an integer (possibly negative) to its 128-bit two's-complement pattern.
func fromBig(v *big.Int) u128 {
	m := new(big.Int).Lsh(big.NewInt(1), 128)
	x := new(big.Int).Mod(v, m)
	lo := new(big.Int).And(x, new(big.Int).SetUint64(^uint64(0))).Uint64()
	hi := new(big.Int).Rsh(x, 64).Uint64()
	return u128{lo, hi}
}

// fromBytes reads a big-endian byte string (the P4Runtime encoding).
func fromBytes(b []byte) u128 {
	var v u128
	for _, c := range b {
		v = v.shl(8).or(u128{lo: uint64(c)})
	}
	return v
}

// toBytes writes the value big-endian into ceil(w/8) bytes.
func (a u128) toBytes(w int) []byte {
	n := (w + 7) / 8
	out := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		out[i] = byte(a.lo)
		a = a.shr(8)
	}
	return out
}

// div and mod for unsigned values (P4 allows them on bit<W> and compile-time ints).
func (a u128) divmod(b u128) (q, r u128) {
	if b.isZero() {
		return u128{}, u128{}
	}
	if a.hi == 0 && b.hi == 0 {
		return u128{lo: a.lo / b.lo}, u128{lo: a.lo % b.lo}
	}
	qq, rr := new(big.Int).QuoRem(a.big(), b.big(), new(big.Int))
	return fromBig(qq), fromBig(rr)
}
