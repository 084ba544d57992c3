package engine

import "github.com/netlock-go/netlock/bmv2/front"

// Fast paths: the shapes of statement and condition that dominate real programs (a field set
// to a constant or copied from another field, a field compared with a constant, a header's
// validity) compiled into one closure each instead of a tree of closures returning u128.

// staticSlot reports whether e is a scalar of at most 64 bits at a fixed slot (a field of a
// header or struct, a variable, a parameter), and returns the slot.
func (cp *compiler) staticSlot(sc *scope, e front.Expr) (int, bool) {
	if !isScalar(e.Type()) || widthOf(e.Type()) > 64 || !cp.isLoc(sc, e) {
		return 0, false
	}
	l := cp.location(sc, e)
	if l.dyn != nil || l.slice || widthOf(l.t) > 64 {
		return 0, false
	}
	return l.static, true
}

// assignStmt compiles lhs = rhs as a statement, fused when lhs is a static slot of at most 64
// bits.
func (cp *compiler) assignStmt(sc *scope, lhs, rhs front.Expr) stmtFn {
	if _, ok := cp.locOverride[lhs]; !ok {
		if d, ok := cp.staticSlot(sc, lhs); ok {
			if f := cp.storeSlot(sc, d, lhs.Type(), rhs); f != nil {
				return f
			}
		}
	}
	f := cp.assign(sc, lhs, rhs)
	return func(c *ctx) flow { f(c); return fNext }
}

// storeSlot compiles "slot d (a scalar of type t, at most 64 bits) = e" into one closure (a
// store instruction, runs.go), or returns nil.
func (cp *compiler) storeSlot(sc *scope, d int, t front.Type, e front.Expr) stmtFn {
	in, ok := cp.storeInstr(sc, d, t, e)
	if !ok {
		return nil
	}
	return runFn([]sinstr{in})
}

// cond compiles a condition into a func returning bool, with fast paths for comparisons of
// static slots and constants, validity tests and their boolean combinations. pure reports
// whether evaluating it has no side effect (no table application, which may exit).
func (cp *compiler) cond(sc *scope, e front.Expr) (f func(*ctx) bool, pure bool) {
	switch x := e.(type) {
	case *front.BinaryExpr:
		switch x.Op {
		case "&&", "||":
			if v, ok := cp.constCond(sc, x.X); ok {
				if v == (x.Op == "||") {
					return func(*ctx) bool { return v }, true
				}
				return cp.cond(sc, x.Y)
			}
			if ts, ok := cp.leafTests(sc, x, x.Op, nil); ok {
				return leafCond(ts, x.Op == "&&"), true
			}
			a, pa := cp.cond(sc, x.X)
			b, pb := cp.cond(sc, x.Y)
			if x.Op == "&&" {
				return func(c *ctx) bool { return a(c) && b(c) }, pa && pb
			}
			return func(c *ctx) bool { return a(c) || b(c) }, pa && pb
		case "==", "!=", "<", "<=", ">", ">=":
			ot := x.X.Type()
			if _, ok := under(ot).(*front.IntType); ok {
				ot = x.Y.Type()
			}
			if !isScalar(ot) || signed(ot) || widthOf(ot) > 64 {
				break
			}
			sa, oka := cp.staticSlot(sc, x.X)
			sb, okb := cp.staticSlot(sc, x.Y)
			xb := cp.expr(sc, x.Y, ot)
			if oka && xb.isConst {
				k := xb.cval.lo
				switch x.Op {
				case "==":
					return func(c *ctx) bool { return c.s[sa] == k }, true
				case "!=":
					return func(c *ctx) bool { return c.s[sa] != k }, true
				case "<":
					return func(c *ctx) bool { return c.s[sa] < k }, true
				case "<=":
					return func(c *ctx) bool { return c.s[sa] <= k }, true
				case ">":
					return func(c *ctx) bool { return c.s[sa] > k }, true
				case ">=":
					return func(c *ctx) bool { return c.s[sa] >= k }, true
				}
			}
			if !oka || !okb {
				if a, ok1 := cp.operand64(sc, x.X, ot); ok1 {
					if b, ok2 := cp.operand64(sc, x.Y, ot); ok2 {
						if f := cmp64(x.Op, a, b); f != nil {
							return f, true
						}
					}
				}
				a, ok1 := cp.scalar64(sc, x.X, ot)
				b, ok2 := cp.scalar64(sc, x.Y, ot)
				if ok1 && ok2 {
					switch x.Op {
					case "==":
						return func(c *ctx) bool { return a(c) == b(c) }, true
					case "!=":
						return func(c *ctx) bool { return a(c) != b(c) }, true
					case "<":
						return func(c *ctx) bool { return a(c) < b(c) }, true
					case "<=":
						return func(c *ctx) bool { return a(c) <= b(c) }, true
					case ">":
						return func(c *ctx) bool { return a(c) > b(c) }, true
					case ">=":
						return func(c *ctx) bool { return a(c) >= b(c) }, true
					}
				}
			}
			if oka && okb {
				switch x.Op {
				case "==":
					return func(c *ctx) bool { return c.s[sa] == c.s[sb] }, true
				case "!=":
					return func(c *ctx) bool { return c.s[sa] != c.s[sb] }, true
				case "<":
					return func(c *ctx) bool { return c.s[sa] < c.s[sb] }, true
				case "<=":
					return func(c *ctx) bool { return c.s[sa] <= c.s[sb] }, true
				case ">":
					return func(c *ctx) bool { return c.s[sa] > c.s[sb] }, true
				case ">=":
					return func(c *ctx) bool { return c.s[sa] >= c.s[sb] }, true
				}
			}
		}
	case *front.UnaryExpr:
		if x.Op == "!" {
			a, p := cp.cond(sc, x.X)
			return func(c *ctx) bool { return !a(c) }, p
		}
	case *front.CallExpr:
		if x.Method == "isValid" {
			recv := x.Fun.(*front.MemberExpr).X
			if rt, ok := under(recv.Type()).(*front.StructType); ok && !rt.IsUnion() && cp.isLoc(sc, recv) {
				if l := cp.location(sc, recv); l.dyn == nil {
					b := l.static
					return func(c *ctx) bool { return c.s[b] != 0 }, true
				}
			}
		}
	}
	g := cp.scalarOf(sc, e, nil)
	return func(c *ctx) bool { return g(c).lo != 0 }, cp.isPure(e)
}

// isPure reports whether evaluating e certainly cannot apply a table (the only expression with
// an effect on control flow: an action may exit). Calls other than isValid count as impure.
func (cp *compiler) isPure(e front.Expr) bool {
	switch x := e.(type) {
	case *front.BinaryExpr:
		return cp.isPure(x.X) && cp.isPure(x.Y)
	case *front.UnaryExpr:
		return cp.isPure(x.X)
	case *front.TernaryExpr:
		return cp.isPure(x.Cond) && cp.isPure(x.Then) && cp.isPure(x.Else)
	case *front.CastExpr:
		return cp.isPure(x.X)
	case *front.SliceExpr:
		return cp.isPure(x.X)
	case *front.IndexExpr:
		return cp.isPure(x.X) && cp.isPure(x.Index)
	case *front.MemberExpr:
		return x.Kind != front.MemberTableField && cp.isPure(x.X)
	case *front.CallExpr:
		return x.Method == "isValid"
	}
	return true
}

// scalar64 compiles a scalar expression of at most 64 bits (unsigned) into a func returning
// its value, with operands fetched straight from static slots and constants folded; ok is
// false when e does not fit (it then uses the general u128 path).
func (cp *compiler) scalar64(sc *scope, e front.Expr, t front.Type) (f func(*ctx) uint64, ok bool) {
	if t == nil {
		t = e.Type()
	}
	if !isScalar(t) || signed(t) || widthOf(t) > 64 {
		return nil, false
	}
	if _, isInt := under(t).(*front.IntType); isInt {
		return nil, false
	}
	w := widthOf(t)
	m := mask128(w).lo
	x := cp.expr(sc, e, t)
	if x.scalar == nil {
		return nil, false
	}
	if x.isConst {
		v := x.cval.lo & m
		return func(*ctx) uint64 { return v }, true
	}
	if s, ok := cp.staticSlot(sc, e); ok && widthOf(e.Type()) <= w {
		return func(c *ctx) uint64 { return c.s[s] }, true
	}
	switch b := e.(type) {
	case *front.BinaryExpr:
		switch b.Op {
		case "+", "-", "&", "|", "^":
			oa, oka := cp.operand64(sc, b.X, t)
			oy, oky := cp.operand64(sc, b.Y, t)
			if !oka || !oky {
				break
			}
			if f := arith64(b.Op, oa, oy, m); f != nil {
				return f, true
			}
			a, y := oa.fn(), oy.fn()
			yc := cp.expr(sc, b.Y, t)
			if yc.isConst {
				k := yc.cval.lo & m
				switch b.Op {
				case "+":
					return func(c *ctx) uint64 { return (a(c) + k) & m }, true
				case "-":
					return func(c *ctx) uint64 { return (a(c) - k) & m }, true
				case "&":
					return func(c *ctx) uint64 { return a(c) & k }, true
				case "|":
					return func(c *ctx) uint64 { return a(c) | k }, true
				case "^":
					return func(c *ctx) uint64 { return a(c) ^ k }, true
				}
			}
			switch b.Op {
			case "+":
				return func(c *ctx) uint64 { return (a(c) + y(c)) & m }, true
			case "-":
				return func(c *ctx) uint64 { return (a(c) - y(c)) & m }, true
			case "&":
				return func(c *ctx) uint64 { return a(c) & y(c) }, true
			case "|":
				return func(c *ctx) uint64 { return a(c) | y(c) }, true
			case "^":
				return func(c *ctx) uint64 { return a(c) ^ y(c) }, true
			}
		case "++":
			// Both operands unsigned and at most 64 bits together: a shift and an or.
			bw := widthOf(b.Y.Type())
			if widthOf(b.X.Type())+bw > 64 {
				break
			}
			oa, oka := cp.operand64(sc, b.X, nil)
			oy, oky := cp.operand64(sc, b.Y, nil)
			if !oka || !oky {
				break
			}
			if oa.kind == oSlot && oy.kind == oSlot {
				sa, sy := oa.s, oy.s
				return func(c *ctx) uint64 { return (c.s[sa]<<uint(bw) | c.s[sy]) & m }, true
			}
			a, y := oa.fn(), oy.fn()
			return func(c *ctx) uint64 { return (a(c)<<uint(bw) | y(c)) & m }, true
		case "<<", ">>":
			// A constant shift amount of an unsigned value.
			yc := cp.expr(sc, b.Y, nil)
			if !yc.isConst {
				break
			}
			oa, ok := cp.operand64(sc, b.X, t)
			if !ok {
				break
			}
			if yc.cval.hi != 0 || yc.cval.lo >= uint64(w) {
				return func(*ctx) uint64 { return 0 }, true
			}
			n := uint(yc.cval.lo)
			if oa.kind == oSlot {
				s := oa.s
				if b.Op == "<<" {
					return func(c *ctx) uint64 { return c.s[s] << n & m }, true
				}
				return func(c *ctx) uint64 { return c.s[s] >> n }, true
			}
			a := oa.fn()
			if b.Op == "<<" {
				return func(c *ctx) uint64 { return a(c) << n & m }, true
			}
			return func(c *ctx) uint64 { return a(c) >> n }, true
		case "==", "!=", "<", "<=", ">", ">=", "&&", "||":
			g, _ := cp.cond(sc, b)
			return func(c *ctx) uint64 {
				if g(c) {
					return 1
				}
				return 0
			}, true
		}
	case *front.TernaryExpr:
		g, pure := cp.cond(sc, b.Cond)
		oa, oka := cp.operand64(sc, b.Then, t)
		oy, oky := cp.operand64(sc, b.Else, t)
		if pure && oka && oky {
			// Arms that are constants or slots (a flag, a choice of field) read inline.
			switch {
			case oa.kind == oConst && oy.kind == oConst:
				ka, ky := oa.k, oy.k
				return func(c *ctx) uint64 {
					if g(c) {
						return ka
					}
					return ky
				}, true
			case oa.kind == oSlot && oy.kind == oConst:
				sa, ky := oa.s, oy.k
				return func(c *ctx) uint64 {
					if g(c) {
						return c.s[sa]
					}
					return ky
				}, true
			case oa.kind == oConst && oy.kind == oSlot:
				ka, sy := oa.k, oy.s
				return func(c *ctx) uint64 {
					if g(c) {
						return ka
					}
					return c.s[sy]
				}, true
			case oa.kind == oSlot && oy.kind == oSlot:
				sa, sy := oa.s, oy.s
				return func(c *ctx) uint64 {
					if g(c) {
						return c.s[sa]
					}
					return c.s[sy]
				}, true
			}
		}
		a, y := oa.fn(), oy.fn()
		if pure && oka && oky {
			return func(c *ctx) uint64 {
				if g(c) {
					return a(c)
				}
				return y(c)
			}, true
		}
	case *front.SliceExpr:
		if s, ok := cp.staticSlot(sc, b.X); ok {
			lo, sm := uint(b.LoV), mask128(b.HiV-b.LoV+1).lo
			return func(c *ctx) uint64 { return c.s[s] >> lo & sm }, true
		}
	case *front.CastExpr:
		if oa, ok := cp.operand64(sc, b.X, nil); ok && !signed(b.X.Type()) {
			if _, isBool := under(t).(*front.BoolType); !isBool {
				if oa.kind == oSlot {
					s := oa.s
					return func(c *ctx) uint64 { return c.s[s] & m }, true
				}
				a := oa.fn()
				return func(c *ctx) uint64 { return a(c) & m }, true
			}
		}
	}
	g := x.scalar
	return func(c *ctx) uint64 { return g(c).lo & m }, true
}

// registerRead64 compiles r.read(result, index) for a register of at most 64 bits read into a
// static slot with an index computed in 64 bits, or returns nil.
func (cp *compiler) registerRead64(sc *scope, call *front.CallExpr, r *Register, pos string) stmtFn {
	if r.Width > 64 {
		return nil
	}
	d, ok := cp.staticSlot(sc, cp.needArg(call, "result"))
	if !ok {
		return nil
	}
	oi, ok := cp.operand64(sc, cp.needArg(call, "index"), nil)
	if !ok {
		return nil
	}
	if oi.kind == oSlot && !cp.sw.cfg.TofinoConstraints {
		// The common shape: the index in a slot (an action parameter, a metadata field).
		si := oi.s
		if c32 := r.c32; c32 != nil {
			return func(c *ctx) flow {
				if i := c.s[si]; i < uint64(len(c32)) {
					c.s[d] = uint64(c32[i])
				} else {
					c.s[d] = 0
				}
				return fNext
			}
		}
		c64 := r.c64
		return func(c *ctx) flow {
			if i := c.s[si]; i < uint64(len(c64)) {
				c.s[d] = c64[i]
			} else {
				c.s[d] = 0
			}
			return fNext
		}
	}
	idx := oi.fn()
	return func(c *ctx) flow {
		i := idx(c)
		if c.sw.cfg.TofinoConstraints {
			if err := r.access(c, u128{lo: i}, false, pos); err != nil {
				c.fail = err
				return fExit
			}
		}
		c.s[d] = r.get64(i) // 0 out of range, as bmv2
		return fNext
	}
}

// registerWrite64 compiles r.write(index, value) for a register of at most 64 bits with index
// and value computed in 64 bits, or returns nil.
func (cp *compiler) registerWrite64(sc *scope, call *front.CallExpr, r *Register, pos string) stmtFn {
	if r.Width > 64 {
		return nil
	}
	oi, ok := cp.operand64(sc, cp.needArg(call, "index"), nil)
	if !ok {
		return nil
	}
	ov, ok := cp.operand64(sc, cp.needArg(call, "value"), nil)
	if !ok {
		return nil
	}
	m := mask128(r.Width).lo
	if oi.kind == oSlot && ov.kind == oSlot && !cp.sw.cfg.TofinoConstraints {
		si, sv := oi.s, ov.s
		if c32 := r.c32; c32 != nil {
			return func(c *ctx) flow {
				if i := c.s[si]; i < uint64(len(c32)) {
					c32[i] = uint32(c.s[sv] & m)
				}
				return fNext
			}
		}
		c64 := r.c64
		return func(c *ctx) flow {
			if i := c.s[si]; i < uint64(len(c64)) {
				c64[i] = c.s[sv] & m
			}
			return fNext
		}
	}
	idx, val := oi.fn(), ov.fn()
	return func(c *ctx) flow {
		i := idx(c)
		if c.sw.cfg.TofinoConstraints {
			if err := r.access(c, u128{lo: i}, true, pos); err != nil {
				c.fail = err
				return fExit
			}
		}
		r.set64(i, val(c)&m) // ignored out of range
		return fNext
	}
}

// slotTest recognizes a condition that compares a static slot of at most 64 bits (unsigned)
// with a constant for equality, or tests a header's validity (its validity slot != 0), and
// returns the slot, the constant and whether the test is for equality.
func (cp *compiler) slotTest(sc *scope, e front.Expr) (s int, k uint64, eq, ok bool) {
	switch x := e.(type) {
	case *front.BinaryExpr:
		if x.Op != "==" && x.Op != "!=" {
			return 0, 0, false, false
		}
		ot := x.X.Type()
		if _, isInt := under(ot).(*front.IntType); isInt {
			ot = x.Y.Type()
		}
		if !isScalar(ot) || signed(ot) || widthOf(ot) > 64 {
			return 0, 0, false, false
		}
		sa, oka := cp.staticSlot(sc, x.X)
		if !oka {
			return 0, 0, false, false
		}
		if !cp.isConstExpr(sc, x.Y) {
			return 0, 0, false, false
		}
		yc := cp.expr(sc, x.Y, ot)
		if !yc.isConst {
			return 0, 0, false, false
		}
		return sa, yc.cval.lo, x.Op == "==", true
	case *front.CallExpr:
		if x.Method == "isValid" {
			recv := x.Fun.(*front.MemberExpr).X
			if rt, ok := under(recv.Type()).(*front.StructType); ok && !rt.IsUnion() && cp.isLoc(sc, recv) {
				if l := cp.location(sc, recv); l.dyn == nil {
					return l.static, 0, false, true
				}
			}
		}
	}
	return 0, 0, false, false
}

// ifSlotTest compiles "if (slot == k) then else els" (eq) or "if (slot != k) ..." into one
// closure, the test inline; els may be nil.
func ifSlotTest(s int, k uint64, eq bool, then, els stmtFn) stmtFn {
	switch {
	case eq && els == nil:
		return func(c *ctx) flow {
			if c.s[s] == k {
				return then(c)
			}
			return fNext
		}
	case eq:
		return func(c *ctx) flow {
			if c.s[s] == k {
				return then(c)
			}
			return els(c)
		}
	case els == nil:
		return func(c *ctx) flow {
			if c.s[s] != k {
				return then(c)
			}
			return fNext
		}
	}
	return func(c *ctx) flow {
		if c.s[s] != k {
			return then(c)
		}
		return els(c)
	}
}
