package engine

import "github.com/netlock-go/netlock/bmv2/front"

// Straight-line runs: consecutive statements of a block that each store a scalar of at most
// 64 bits into a fixed slot (an assignment, a local's declaration) are compiled into one
// array of register-machine instructions run by one loop, instead of one closure per
// statement called from the block's loop. Operands are slots and constants resolved at
// compile time; the shapes that dominate real programs (a constant, a copy, a field slice, a
// binary operation on slots or a slot and a constant, a concatenation) are instructions of
// their own, anything else is an instruction that calls the expression's 64-bit closure.
// A store cannot change control flow (it has no exit, no return), so a run is one statement.

type sop uint8

const (
	sConst sop = iota // s[d] = k
	sMove             // s[d] = s[a]
	sSlice            // s[d] = s[a] >> sh & k
	sAddK             // s[d] = (s[a] + k) & m
	sSubK             // s[d] = (s[a] - k) & m
	sAndK             // s[d] = s[a] & k
	sOrK              // s[d] = s[a] | k
	sXorK             // s[d] = s[a] ^ k
	sAdd              // s[d] = (s[a] + s[b]) & m
	sSub              // s[d] = (s[a] - s[b]) & m
	sAnd              // s[d] = s[a] & s[b]
	sOr               // s[d] = s[a] | s[b]
	sXor              // s[d] = s[a] ^ s[b]
	sCat              // s[d] = (s[a] << sh | s[b]) & m
	sFn               // s[d] = g(c)
)

// sinstr is one store instruction.
type sinstr struct {
	op      sop
	sh      uint
	d, a, b int
	k, m    uint64
	g       func(*ctx) uint64
}

// exec runs one instruction.
func (in *sinstr) exec(c *ctx, s []uint64) {
	switch in.op {
	case sConst:
		s[in.d] = in.k
	case sMove:
		s[in.d] = s[in.a]
	case sSlice:
		s[in.d] = s[in.a] >> (in.sh & 63) & in.k
	case sAddK:
		s[in.d] = (s[in.a] + in.k) & in.m
	case sSubK:
		s[in.d] = (s[in.a] - in.k) & in.m
	case sAndK:
		s[in.d] = s[in.a] & in.k
	case sOrK:
		s[in.d] = s[in.a] | in.k
	case sXorK:
		s[in.d] = s[in.a] ^ in.k
	case sAdd:
		s[in.d] = (s[in.a] + s[in.b]) & in.m
	case sSub:
		s[in.d] = (s[in.a] - s[in.b]) & in.m
	case sAnd:
		s[in.d] = s[in.a] & s[in.b]
	case sOr:
		s[in.d] = s[in.a] | s[in.b]
	case sXor:
		s[in.d] = s[in.a] ^ s[in.b]
	case sCat:
		s[in.d] = (s[in.a]<<(in.sh&63) | s[in.b]) & in.m
	case sFn:
		s[in.d] = in.g(c)
	}
}

// runFn compiles a run of store instructions into one statement.
func runFn(ins []sinstr) stmtFn {
	if len(ins) == 1 {
		in := ins[0]
		d := in.d
		switch in.op {
		case sConst:
			k := in.k
			return func(c *ctx) flow { c.s[d] = k; return fNext }
		case sMove:
			a := in.a
			return func(c *ctx) flow { c.s[d] = c.s[a]; return fNext }
		case sFn:
			g := in.g
			return func(c *ctx) flow { c.s[d] = g(c); return fNext }
		}
		return func(c *ctx) flow { in.exec(c, c.s); return fNext }
	}
	return func(c *ctx) flow {
		s := c.s
		for i := range ins {
			in := &ins[i]
			switch in.op {
			case sConst:
				s[in.d] = in.k
			case sMove:
				s[in.d] = s[in.a]
			case sSlice:
				s[in.d] = s[in.a] >> (in.sh & 63) & in.k
			case sFn:
				s[in.d] = in.g(c)
			default:
				in.exec(c, s)
			}
		}
		return fNext
	}
}

// fn returns the instruction as a function (a copy-in of a call argument).
func (in sinstr) fn() func(*ctx) {
	d := in.d
	switch in.op {
	case sConst:
		k := in.k
		return func(c *ctx) { c.s[d] = k }
	case sMove:
		a := in.a
		return func(c *ctx) { c.s[d] = c.s[a] }
	case sFn:
		g := in.g
		return func(c *ctx) { c.s[d] = g(c) }
	}
	return func(c *ctx) { in.exec(c, c.s) }
}

// storeInstr compiles "slot d (a scalar of type t, at most 64 bits) = e" into one store
// instruction, or returns false.
func (cp *compiler) storeInstr(sc *scope, d int, t front.Type, e front.Expr) (sinstr, bool) {
	w := widthOf(t)
	if w > 64 || !isScalar(t) {
		return sinstr{}, false
	}
	m := mask128(w).lo
	x := cp.expr(sc, e, t)
	if x.scalar == nil {
		return sinstr{}, false
	}
	if x.isConst {
		return sinstr{op: sConst, d: d, k: x.cval.lo & m}, true
	}
	if s, ok := cp.staticSlot(sc, e); ok && widthOf(e.Type()) <= w {
		return sinstr{op: sMove, d: d, a: s}, true
	}
	if in, ok := cp.shapeInstr(sc, d, t, e); ok {
		return in, true
	}
	if g, ok := cp.scalar64(sc, e, t); ok {
		return sinstr{op: sFn, d: d, g: g}, true
	}
	f := x.scalar
	return sinstr{op: sFn, d: d, g: func(c *ctx) uint64 { return f(c).lo & m }}, true
}

// shapeInstr recognizes an unsigned expression of at most 64 bits over static slots and
// constants that one instruction computes (a slice, a binary operation, a concatenation).
func (cp *compiler) shapeInstr(sc *scope, d int, t front.Type, e front.Expr) (sinstr, bool) {
	if signed(t) {
		return sinstr{}, false
	}
	if _, isInt := under(t).(*front.IntType); isInt {
		return sinstr{}, false
	}
	if _, isBool := under(t).(*front.BoolType); isBool {
		return sinstr{}, false
	}
	w := widthOf(t)
	m := mask128(w).lo
	// slotOf: an operand of type t (or narrower, unsigned) held in a static slot.
	slotOf := func(e front.Expr) (int, bool) {
		if signed(e.Type()) {
			return 0, false
		}
		s, ok := cp.staticSlot(sc, e)
		return s, ok && widthOf(e.Type()) <= w
	}
	switch b := e.(type) {
	case *front.SliceExpr:
		if signed(b.X.Type()) {
			break
		}
		if s, ok := cp.staticSlot(sc, b.X); ok {
			return sinstr{op: sSlice, d: d, a: s, sh: uint(b.LoV), k: mask128(b.HiV-b.LoV+1).lo & m}, true
		}
	case *front.BinaryExpr:
		switch b.Op {
		case "+", "-", "&", "|", "^":
			sa, ok := slotOf(b.X)
			if !ok {
				break
			}
			if yc := cp.expr(sc, b.Y, t); yc.isConst {
				k := yc.cval.lo & m
				op := map[string]sop{"+": sAddK, "-": sSubK, "&": sAndK, "|": sOrK, "^": sXorK}[b.Op]
				return sinstr{op: op, d: d, a: sa, k: k, m: m}, true
			}
			sb, ok := slotOf(b.Y)
			if !ok {
				break
			}
			op := map[string]sop{"+": sAdd, "-": sSub, "&": sAnd, "|": sOr, "^": sXor}[b.Op]
			return sinstr{op: op, d: d, a: sa, b: sb, m: m}, true
		case "++":
			bw := widthOf(b.Y.Type())
			if widthOf(b.X.Type())+bw > 64 || signed(b.X.Type()) || signed(b.Y.Type()) {
				break
			}
			sa, oka := cp.staticSlot(sc, b.X)
			sb, okb := cp.staticSlot(sc, b.Y)
			if oka && okb {
				return sinstr{op: sCat, d: d, a: sa, b: sb, sh: uint(bw), m: m}, true
			}
		}
	}
	return sinstr{}, false
}

// stmts compiles the statements of a block or a parser state in scope sc, consecutive stores
// into fixed slots fused into runs.
func (cp *compiler) stmts(sc *scope, list []front.Stmt) []stmtFn {
	var fs []stmtFn
	var run []sinstr
	flush := func() {
		if len(run) > 0 {
			fs = append(fs, runFn(run))
			run = nil
		}
	}
	for _, s := range list {
		if in, ok := cp.simpleStore(sc, s); ok {
			run = append(run, in)
			continue
		}
		flush()
		fs = append(fs, cp.stmt(sc, s))
	}
	flush()
	return fs
}

// simpleStore compiles a statement of a block that is a store into a fixed slot (an
// assignment to a static scalar of at most 64 bits; a declaration of such a local, with or
// without an initializer) into one instruction, or returns false (the statement is then
// compiled as usual). A declaration binds its variable as declVar does.
func (cp *compiler) simpleStore(sc *scope, s front.Stmt) (sinstr, bool) {
	switch s := s.(type) {
	case *front.AssignStmt:
		if s.Op != "" {
			return sinstr{}, false
		}
		if _, ok := s.LHS.(*front.DontCareExpr); ok {
			return sinstr{}, false
		}
		if _, ok := cp.locOverride[s.LHS]; ok {
			return sinstr{}, false
		}
		d, ok := cp.staticSlot(sc, s.LHS)
		if !ok {
			return sinstr{}, false
		}
		return cp.storeInstr(sc, d, s.LHS.Type(), s.RHS)
	case *front.DeclStmt:
		v, ok := s.Decl.(*front.VarDecl)
		if !ok || !isScalar(v.T) || widthOf(v.T) > 64 || cp.slotsOf(v.T) != 1 {
			return sinstr{}, false
		}
		base := cp.alloc(1)
		sc.m[v] = &binding{kind: bSlot, t: v.T, base: base}
		if v.Init == nil {
			if brokenNoLocalInit {
				return sinstr{op: sMove, d: base, a: base}, true
			}
			return sinstr{op: sConst, d: base}, true
		}
		if in, ok := cp.storeInstr(sc, base, v.T, v.Init); ok {
			return in, true
		}
		st := cp.storeInto(sc, v.T, base, v.Init)
		return sinstr{op: sFn, d: base, g: func(c *ctx) uint64 { st(c); return c.s[base] }}, true
	}
	return sinstr{}, false
}
