package engine

import "github.com/netlock-go/netlock/bmv2/front"

// Leaf operands: an operand of a 64-bit expression, a register index or value, or a
// comparison that is a compile-time constant or a value in a fixed slot is read inline by the
// closure that uses it, instead of through a closure of its own (which costs a call for a
// single load). Only operands that are neither are computed by a closure (scalar64).

type opKind uint8

const (
	oFn    opKind = iota // g(c)
	oConst               // k
	oSlot                // c.s[s]
)

// opnd is one 64-bit operand resolved at compile time.
type opnd struct {
	kind opKind
	k    uint64
	s    int
	g    func(*ctx) uint64
}

// fn returns the operand as a closure (the general path).
func (o opnd) fn() func(*ctx) uint64 {
	switch o.kind {
	case oConst:
		k := o.k
		return func(*ctx) uint64 { return k }
	case oSlot:
		s := o.s
		return func(c *ctx) uint64 { return c.s[s] }
	}
	return o.g
}

// fits64 reports whether values of t are computed by scalar64 (unsigned, at most 64 bits, not
// an arbitrary-precision int).
func fits64(t front.Type) bool {
	if !isScalar(t) || signed(t) || widthOf(t) > 64 {
		return false
	}
	_, isInt := under(t).(*front.IntType)
	return !isInt
}

// operand64 compiles e as an operand of type t (nil: e's type) whose value is computed in
// 64 bits, as scalar64 does; ok is false when scalar64 would refuse it.
func (cp *compiler) operand64(sc *scope, e front.Expr, t front.Type) (opnd, bool) {
	if t == nil {
		t = e.Type()
	}
	if !fits64(t) {
		return opnd{}, false
	}
	m := mask128(widthOf(t)).lo
	x := cp.expr(sc, e, t)
	if x.scalar == nil {
		return opnd{}, false
	}
	if x.isConst {
		return opnd{kind: oConst, k: x.cval.lo & m}, true
	}
	if s, ok := cp.staticSlot(sc, e); ok && widthOf(e.Type()) <= widthOf(t) {
		return opnd{kind: oSlot, s: s}, true
	}
	g, ok := cp.scalar64(sc, e, t)
	if !ok {
		return opnd{}, false
	}
	return opnd{kind: oFn, g: g}, true
}

// arith64 compiles a op b for op one of + - & | ^ on operands of width with mask m, the leaf
// operands read inline. It returns nil for a shape it does not specialize.
func arith64(op string, a, b opnd, m uint64) func(*ctx) uint64 {
	switch {
	case a.kind == oSlot && b.kind == oConst:
		s, k := a.s, b.k
		switch op {
		case "+":
			return func(c *ctx) uint64 { return (c.s[s] + k) & m }
		case "-":
			return func(c *ctx) uint64 { return (c.s[s] - k) & m }
		case "&":
			return func(c *ctx) uint64 { return c.s[s] & k }
		case "|":
			return func(c *ctx) uint64 { return c.s[s] | k }
		case "^":
			return func(c *ctx) uint64 { return c.s[s] ^ k }
		}
	case a.kind == oSlot && b.kind == oSlot:
		s, t := a.s, b.s
		switch op {
		case "+":
			return func(c *ctx) uint64 { return (c.s[s] + c.s[t]) & m }
		case "-":
			return func(c *ctx) uint64 { return (c.s[s] - c.s[t]) & m }
		case "&":
			return func(c *ctx) uint64 { return c.s[s] & c.s[t] }
		case "|":
			return func(c *ctx) uint64 { return c.s[s] | c.s[t] }
		case "^":
			return func(c *ctx) uint64 { return c.s[s] ^ c.s[t] }
		}
	case a.kind == oFn && b.kind == oSlot:
		// g runs first (it may write the slot), in a statement of its own.
		g, t := a.g, b.s
		switch op {
		case "+":
			return func(c *ctx) uint64 { x := g(c); return (x + c.s[t]) & m }
		case "-":
			return func(c *ctx) uint64 { x := g(c); return (x - c.s[t]) & m }
		case "&":
			return func(c *ctx) uint64 { x := g(c); return x & c.s[t] }
		case "|":
			return func(c *ctx) uint64 { x := g(c); return x | c.s[t] }
		case "^":
			return func(c *ctx) uint64 { x := g(c); return x ^ c.s[t] }
		}
	case a.kind == oSlot && b.kind == oFn:
		// P4 evaluates left to right and g may write the slot (a function with an inout
		// argument): the slot is read first, in a statement of its own (Go does not order an
		// index expression against a call in one expression).
		s, g := a.s, b.g
		switch op {
		case "+":
			return func(c *ctx) uint64 { x := c.s[s]; return (x + g(c)) & m }
		case "-":
			return func(c *ctx) uint64 { x := c.s[s]; return (x - g(c)) & m }
		case "&":
			return func(c *ctx) uint64 { x := c.s[s]; return x & g(c) }
		case "|":
			return func(c *ctx) uint64 { x := c.s[s]; return x | g(c) }
		case "^":
			return func(c *ctx) uint64 { x := c.s[s]; return x ^ g(c) }
		}
	}
	return nil
}

// cmp64 compiles a op b for a comparison op (unsigned), the leaf operands read inline. It
// returns nil for a shape it does not specialize.
func cmp64(op string, a, b opnd) func(*ctx) bool {
	switch {
	case a.kind == oFn && b.kind == oConst:
		g, k := a.g, b.k
		switch op {
		case "==":
			return func(c *ctx) bool { return g(c) == k }
		case "!=":
			return func(c *ctx) bool { return g(c) != k }
		case "<":
			return func(c *ctx) bool { return g(c) < k }
		case "<=":
			return func(c *ctx) bool { return g(c) <= k }
		case ">":
			return func(c *ctx) bool { return g(c) > k }
		case ">=":
			return func(c *ctx) bool { return g(c) >= k }
		}
	case a.kind == oSlot && b.kind == oFn:
		// The slot is read before g runs (see arith64).
		s, g := a.s, b.g
		switch op {
		case "==":
			return func(c *ctx) bool { x := c.s[s]; return x == g(c) }
		case "!=":
			return func(c *ctx) bool { x := c.s[s]; return x != g(c) }
		case "<":
			return func(c *ctx) bool { x := c.s[s]; return x < g(c) }
		case "<=":
			return func(c *ctx) bool { x := c.s[s]; return x <= g(c) }
		case ">":
			return func(c *ctx) bool { x := c.s[s]; return x > g(c) }
		case ">=":
			return func(c *ctx) bool { x := c.s[s]; return x >= g(c) }
		}
	case a.kind == oFn && b.kind == oSlot:
		g, s := a.g, b.s
		switch op {
		case "==":
			return func(c *ctx) bool { x := g(c); return x == c.s[s] }
		case "!=":
			return func(c *ctx) bool { x := g(c); return x != c.s[s] }
		case "<":
			return func(c *ctx) bool { x := g(c); return x < c.s[s] }
		case "<=":
			return func(c *ctx) bool { x := g(c); return x <= c.s[s] }
		case ">":
			return func(c *ctx) bool { x := g(c); return x > c.s[s] }
		case ">=":
			return func(c *ctx) bool { x := g(c); return x >= c.s[s] }
		}
	}
	return nil
}

// leafTest is one test of a conjunction or disjunction of slot tests: (s[slot] == k) == eq.
type leafTest struct {
	slot int
	k    uint64
	eq   bool
}

// leafTests flattens a chain of op (&& or ||) whose every operand is a slot test (slotTest)
// into its tests, in evaluation order, or returns false.
func (cp *compiler) leafTests(sc *scope, e front.Expr, op string, out []leafTest) ([]leafTest, bool) {
	if b, ok := e.(*front.BinaryExpr); ok && b.Op == op {
		out, ok := cp.leafTests(sc, b.X, op, out)
		if !ok {
			return nil, false
		}
		return cp.leafTests(sc, b.Y, op, out)
	}
	s, k, eq, ok := cp.slotTest(sc, e)
	if !ok {
		return nil, false
	}
	return append(out, leafTest{slot: s, k: k, eq: eq}), true
}

// leafCond compiles a conjunction (and) or disjunction of slot tests into one closure. Slot
// tests have no effect, so evaluating all of them in order and stopping at the first that
// decides is P4's short circuit.
func leafCond(ts []leafTest, and bool) func(*ctx) bool {
	if len(ts) == 2 {
		a, b := ts[0], ts[1]
		if and {
			return func(c *ctx) bool { return (c.s[a.slot] == a.k) == a.eq && (c.s[b.slot] == b.k) == b.eq }
		}
		return func(c *ctx) bool { return (c.s[a.slot] == a.k) == a.eq || (c.s[b.slot] == b.k) == b.eq }
	}
	if and {
		return func(c *ctx) bool {
			s := c.s
			for _, t := range ts {
				if (s[t.slot] == t.k) != t.eq {
					return false
				}
			}
			return true
		}
	}
	return func(c *ctx) bool {
		s := c.s
		for _, t := range ts {
			if (s[t.slot] == t.k) == t.eq {
				return true
			}
		}
		return false
	}
}

// ifLeaf2 compiles "if (a && b) then else els" (and) or "if (a || b) ..." for two slot tests
// into one closure, the tests inline; els may be nil.
func ifLeaf2(a, b leafTest, and bool, then, els stmtFn) stmtFn {
	if els == nil {
		els = func(*ctx) flow { return fNext }
	}
	if and {
		return func(c *ctx) flow {
			if (c.s[a.slot] == a.k) == a.eq && (c.s[b.slot] == b.k) == b.eq {
				return then(c)
			}
			return els(c)
		}
	}
	return func(c *ctx) flow {
		if (c.s[a.slot] == a.k) == a.eq || (c.s[b.slot] == b.k) == b.eq {
			return then(c)
		}
		return els(c)
	}
}
