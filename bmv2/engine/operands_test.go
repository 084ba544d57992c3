package engine

import (
	"flag"
	"math/rand/v2"
	"slices"
	"testing"
)

var leafSeed = flag.Uint64("engine.leafseed", 0, "seed of TestLeafOperands (0: random)")

// refArith and refCmp are the operations computed one operand closure at a time (the general
// path the leaf operands replace).
func refArith(op string, a, b func(*ctx) uint64, m uint64) func(*ctx) uint64 {
	return func(c *ctx) uint64 {
		x, y := a(c), b(c)
		switch op {
		case "+":
			return (x + y) & m
		case "-":
			return (x - y) & m
		case "&":
			return x & y
		case "|":
			return x | y
		}
		return x ^ y
	}
}

func refCmp(op string, a, b func(*ctx) uint64) func(*ctx) bool {
	return func(c *ctx) bool {
		x, y := a(c), b(c)
		switch op {
		case "==":
			return x == y
		case "!=":
			return x != y
		case "<":
			return x < y
		case "<=":
			return x <= y
		case ">":
			return x > y
		}
		return x >= y
	}
}

// leafDiffs counts the random cases where arith64, cmp64 and leafCond (as built by build,
// which is the engine's unless a negative control swaps it) disagree with the general path.
func leafDiffs(logf func(string, ...any), seed uint64, build func(op string, a, b opnd, m uint64) func(*ctx) uint64) int {
	r := rand.New(rand.NewPCG(seed, 9))
	kinds := []opKind{oFn, oConst, oSlot}
	diffs := 0
	for iter := 0; iter < 4000; iter++ {
		w := 1 + r.IntN(64)
		m := mask128(w).lo
		s := make([]uint64, 8)
		for i := range s {
			s[i] = r.Uint64() & m
		}
		// Each case runs on its own copy of the slots: a closure operand writes one (as a
		// function with an inout argument does), so the order of evaluation shows.
		run := func(f func(*ctx) uint64) (uint64, []uint64) {
			cs := &ctx{s: slices.Clone(s)}
			return f(cs), cs.s
		}
		runB := func(f func(*ctx) bool) (bool, []uint64) {
			cs := &ctx{s: slices.Clone(s)}
			return f(cs), cs.s
		}
		c := &ctx{s: s}
		mk := func() opnd {
			o := opnd{kind: kinds[r.IntN(3)], k: r.Uint64() & m, s: r.IntN(8)}
			if r.IntN(4) == 0 { // equal operands exercise <=, >=, ==
				o.k = s[o.s]
			}
			src, dst, nv := r.IntN(8), r.IntN(8), r.Uint64()&m
			o.g = func(c *ctx) uint64 { v := (c.s[src] * 3) & m; c.s[dst] = nv; return v }
			return o
		}
		a, b := mk(), mk()
		op := []string{"+", "-", "&", "|", "^"}[r.IntN(5)]
		if f := build(op, a, b, m); f != nil {
			got, gs := run(f)
			want, ws := run(refArith(op, a.fn(), b.fn(), m))
			if got != want || !slices.Equal(gs, ws) {
				logf("seed %d: %v %s %v (width %d) = %#x, want %#x", seed, a.kind, op, b.kind, w, got, want)
				diffs++
			}
		}
		cop := []string{"==", "!=", "<", "<=", ">", ">="}[r.IntN(6)]
		if f := cmp64(cop, a, b); f != nil {
			got, gs := runB(f)
			want, ws := runB(refCmp(cop, a.fn(), b.fn()))
			if got != want || !slices.Equal(gs, ws) {
				logf("seed %d: %v %s %v = %v, want %v", seed, a.kind, cop, b.kind, got, want)
				diffs++
			}
		}
		var ts []leafTest
		for n := 2 + r.IntN(4); n > 0; n-- {
			sl := r.IntN(8)
			k := r.Uint64() & m
			if r.IntN(2) == 0 {
				k = s[sl]
			}
			ts = append(ts, leafTest{slot: sl, k: k, eq: r.IntN(2) == 0})
		}
		and := r.IntN(2) == 0
		want := and
		for _, lt := range ts {
			v := (s[lt.slot] == lt.k) == lt.eq
			if and {
				want = want && v
			} else {
				want = want || v
			}
		}
		if got := leafCond(ts, and)(c); got != want {
			logf("seed %d: leaf tests %v (and %v) = %v, want %v", seed, ts, and, got, want)
			diffs++
		}
	}
	return diffs
}

// TestLeafOperands: arithmetic, comparisons and chains of slot tests with their leaf operands
// read inline agree with the general path (every operand through its closure) on random
// operands, kinds and widths. Negative control: an arith64 whose subtraction swaps its
// operands is caught.
func TestLeafOperands(t *testing.T) {
	seed := *leafSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (re-run: go test ./bmv2/engine -run LeafOperands -engine.leafseed %d)", seed, seed)
	if n := leafDiffs(t.Logf, seed, arith64); n != 0 {
		t.Fatalf("seed %d: %d disagreements", seed, n)
	}
	for name, broken := range map[string]func(op string, a, b opnd, m uint64) func(*ctx) uint64{
		"subtraction with swapped operands": func(op string, a, b opnd, m uint64) func(*ctx) uint64 {
			if op == "-" {
				return arith64(op, b, a, m)
			}
			return arith64(op, a, b, m)
		},
		// The bug the ordered forms prevent: a slot read after the call that writes it.
		"slot read after the call": func(op string, a, b opnd, m uint64) func(*ctx) uint64 {
			if a.kind == oSlot && b.kind == oFn && op == "+" {
				s, g := a.s, b.g
				return func(c *ctx) uint64 { y := g(c); return (c.s[s] + y) & m }
			}
			return arith64(op, a, b, m)
		},
	} {
		if n := leafDiffs(func(string, ...any) {}, seed, broken); n == 0 {
			t.Errorf("seed %d: the negative control (%s) was not caught", seed, name)
		}
	}
}

// TestCsum16Words: csum16 (8-byte loads) equals the Internet checksum computed 16 bits at a
// time (odd lengths padded with a zero byte) on random inputs of every length up to 80 bytes.
func TestCsum16Words(t *testing.T) {
	ref := func(b []byte) uint16 {
		var sum uint32
		for i := 0; i < len(b); i += 2 {
			w := uint32(b[i]) << 8
			if i+1 < len(b) {
				w |= uint32(b[i+1])
			}
			sum += w
		}
		for sum>>16 != 0 {
			sum = sum&0xffff + sum>>16
		}
		return ^uint16(sum)
	}
	r := rand.New(rand.NewPCG(7, 7))
	for n := 0; n <= 80; n++ {
		for iter := 0; iter < 200; iter++ {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
				if iter%3 == 0 {
					b[i] = 0xff // many carries
				}
			}
			if got, want := csum16(b), ref(b); got != want {
				t.Fatalf("csum16(% x) = %#x, want %#x", b, got, want)
			}
		}
	}
}

// TestSeq: a compiled statement list (unrolled for up to six statements, then six and the
// rest) runs its statements in order and stops at the first that returns or exits, with that
// flow, for every length up to 20 and every stopping position.
func TestSeq(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for stop := -1; stop < n; stop++ {
			for _, how := range []flow{fReturn, fExit} {
				fs := make([]stmtFn, n)
				for i := range fs {
					i := i
					fs[i] = func(c *ctx) flow {
						c.s[0]++
						c.s[1+i] = c.s[0] // the order statements ran in
						if i == stop {
							return how
						}
						return fNext
					}
				}
				c := &ctx{s: make([]uint64, 22)}
				got := seq(fs)(c)
				ran, want := n, fNext
				if stop >= 0 {
					ran, want = stop+1, how
				}
				if got != want || c.s[0] != uint64(ran) {
					t.Fatalf("n %d stop %d: flow %d after %d statements, want %d after %d", n, stop, got, c.s[0], want, ran)
				}
				for i := 0; i < ran; i++ {
					if c.s[1+i] != uint64(i+1) {
						t.Fatalf("n %d stop %d: statement %d ran as number %d", n, stop, i, c.s[1+i])
					}
				}
			}
		}
	}
}
