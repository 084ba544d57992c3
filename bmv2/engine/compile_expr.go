package engine

import (
	"fmt"
	"math/big"

	"github.com/netlock-go/netlock/bmv2/front"
)

// compileError aborts compilation; Load recovers it into an error.
type compileError struct{ err error }

func (cp *compiler) fail(pos front.Pos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if pos.Line > 0 {
		msg = pos.String() + ": " + msg
	}
	panic(compileError{fmt.Errorf("%s", msg)})
}

type bindKind uint8

const (
	bSlot   bindKind = iota + 1 // a variable or parameter at a fixed base slot
	bConst                      // a compile-time constant
	bExtern                     // an extern object instance
	bTable
	bBlock // a parser or control instance
)

type binding struct {
	kind bindKind
	t    front.Type
	base int
	val  u128
	cval front.Value
	obj  any // *Table, *Register, *Counter, *Meter, *blockInst, ...
}

// objOrNil is the binding's object, or nil for a nil binding.
func (b *binding) objOrNil() any {
	if b == nil {
		return nil
	}
	return b.obj
}

type scope struct {
	parent *scope
	m      map[front.Decl]*binding
	prefix string // control-plane name prefix of the enclosing block instance
	// action/function frame state
	retBase int
	retT    front.Type
	actions map[*front.ActionDecl]*Action
}

func (s *scope) lookup(d front.Decl) *binding {
	for ; s != nil; s = s.parent {
		if b, ok := s.m[d]; ok {
			return b
		}
	}
	return nil
}

func (s *scope) child() *scope {
	return &scope{parent: s, m: map[front.Decl]*binding{}, prefix: s.prefix, retBase: s.retBase, retT: s.retT, actions: s.actions}
}

// scalarFn evaluates a scalar expression; compFn evaluates a composite one and returns the
// base slot of its value.
type scalarFn func(*ctx) u128
type compFn func(*ctx) int

type cexpr struct {
	t      front.Type
	scalar scalarFn
	comp   compFn
	// isConst: the scalar is a compile-time constant, cval.
	isConst bool
	cval    u128
}

// isConstExpr reports whether the scalar expression e is a compile-time constant in scope sc:
// a constant of the front end, a name bound to a constant (an action parameter specialized at
// its call site, a local constant) or an operator applied to constants.
func (cp *compiler) isConstExpr(sc *scope, e front.Expr) bool {
	if _, ok := cp.checked.Const[e]; ok {
		return true
	}
	switch x := e.(type) {
	case *front.NameExpr:
		if b := sc.lookup(x.Decl); b != nil {
			return b.kind == bConst
		}
		if d, ok := x.Decl.(*front.ConstDecl); ok {
			_, ok := cp.valueU128(d.Val)
			return ok
		}
	case *front.MemberExpr:
		return x.Kind == front.MemberEnum
	case *front.UnaryExpr:
		return isScalar(x.X.Type()) && cp.isConstExpr(sc, x.X)
	case *front.BinaryExpr:
		switch x.Op {
		case "==", "!=", "<", "<=", ">", ">=":
			if !isScalar(x.X.Type()) && !isScalar(x.Y.Type()) {
				return false
			}
		case "&&", "||":
			// Short-circuit: a constant left side that decides the result is enough.
			if v, ok := cp.constCond(sc, x.X); ok && v == (x.Op == "||") {
				return true
			}
		}
		return cp.isConstExpr(sc, x.X) && cp.isConstExpr(sc, x.Y)
	case *front.TernaryExpr:
		return cp.isConstExpr(sc, x.Cond) && cp.isConstExpr(sc, x.Then) && cp.isConstExpr(sc, x.Else)
	case *front.CastExpr:
		return isScalar(x.X.Type()) && cp.isConstExpr(sc, x.X)
	case *front.SliceExpr:
		return cp.isConstExpr(sc, x.X)
	}
	return false
}

// constCond returns the value of a condition that is a compile-time constant.
func (cp *compiler) constCond(sc *scope, e front.Expr) (v, ok bool) {
	if !isScalar(e.Type()) || !cp.isConstExpr(sc, e) {
		return false, false
	}
	return !cp.scalarOf(sc, e, nil)(nil).isZero(), true
}

// loc is an assignable location.
type loc struct {
	t      front.Type
	static int
	dyn    func(*ctx) int
	slice  bool
	hi, lo int
	pw     int // width of the sliced scalar
}

func (l loc) baseFn() func(*ctx) int {
	if l.dyn != nil {
		return l.dyn
	}
	b := l.static
	return func(*ctx) int { return b }
}

func (l loc) member(off int, t front.Type) loc {
	if l.dyn != nil {
		d := l.dyn
		return loc{t: t, dyn: func(c *ctx) int { return d(c) + off }}
	}
	return loc{t: t, static: l.static + off}
}

func (cp *compiler) readLoc(l loc) scalarFn {
	if l.slice {
		base := l.baseFn()
		pw, lo, m := l.pw, uint(l.lo), mask128(l.hi-l.lo+1)
		return func(c *ctx) u128 { return readSlot(c.s, base(c), pw).shr(lo).and(m) }
	}
	w := widthOf(l.t)
	if l.dyn == nil {
		b := l.static
		if w <= 64 {
			return func(c *ctx) u128 { return u128{lo: c.s[b]} }
		}
		return func(c *ctx) u128 { return u128{c.s[b], c.s[b+1]} }
	}
	d := l.dyn
	return func(c *ctx) u128 { return readSlot(c.s, d(c), w) }
}

func (cp *compiler) writeLoc(l loc) func(*ctx, u128) {
	if !l.slice {
		w := widthOf(l.t)
		if l.dyn == nil && w <= 64 {
			b, m := l.static, mask128(w).lo
			return func(c *ctx, v u128) { c.s[b] = v.lo & m }
		}
	}
	base, wr := l.baseFn(), cp.writeLocAt(l)
	return func(c *ctx, v u128) { wr(c, base(c), v) }
}

// writeLocAt writes a scalar location whose base slot the caller computed.
func (cp *compiler) writeLocAt(l loc) func(*ctx, int, u128) {
	if l.slice {
		pw, lo := l.pw, uint(l.lo)
		fm := mask128(l.hi - l.lo + 1)
		m := fm.shl(lo)
		return func(c *ctx, b int, v u128) {
			old := readSlot(c.s, b, pw)
			writeSlot(c.s, b, pw, old.and(m.not()).or(v.and(fm).shl(lo)))
		}
	}
	w := widthOf(l.t)
	return func(c *ctx, b int, v u128) { writeSlot(c.s, b, w, v) }
}

func constFn(v u128) scalarFn { return func(*ctx) u128 { return v } }

// valueU128 converts a scalar compile-time value.
func (cp *compiler) valueU128(v front.Value) (u128, bool) {
	switch v := v.(type) {
	case *big.Int:
		return fromBig(v), true
	case bool:
		if v {
			return u128{lo: 1}, true
		}
		return u128{}, true
	case *front.EnumMember:
		return cp.memberCode(v), true
	}
	return u128{}, false
}

func (cp *compiler) memberCode(m *front.EnumMember) u128 {
	if m.Val != nil {
		if v, ok := m.Val.(*big.Int); ok {
			return fromBig(v)
		}
	}
	if code, ok := cp.errCodes[m]; ok {
		return u128{lo: uint64(code)}
	}
	switch d := m.Owner.(type) {
	case *front.EnumDecl:
		for i, x := range d.Members {
			if x == m {
				return u128{lo: uint64(i)}
			}
		}
	case *front.MatchKindDecl:
		for i, x := range cp.checked.MatchKinds {
			if x == m {
				return u128{lo: uint64(i)}
			}
		}
	}
	return u128{}
}

// expr compiles an expression. want is the type expected by the context (used for struct and
// list expressions, whose own type is not yet a target type).
func (cp *compiler) expr(sc *scope, e front.Expr, want front.Type) cexpr {
	t := e.Type()
	if want != nil {
		switch t.(type) {
		case *front.StructExprType, *front.TupleType, nil:
			t = want
		case *front.IntType:
			if isScalar(want) {
				t = want
			}
		}
	}
	if isScalar(t) {
		if v, ok := cp.checked.Const[e]; ok {
			if x, ok := cp.valueU128(v); ok {
				return cexpr{t: t, scalar: constFn(x.trunc(widthOf(t))), isConst: true, cval: x.trunc(widthOf(t))}
			}
		}
		f := cp.scalar(sc, e, t)
		if cp.isConstExpr(sc, e) {
			// Every leaf is a constant (a constant, or an action parameter bound to a
			// constant argument): evaluate once, here. The closures of constant leaves do
			// not read the context.
			v := f(nil)
			return cexpr{t: t, scalar: constFn(v), isConst: true, cval: v}
		}
		return cexpr{t: t, scalar: f}
	}
	switch under(t).(type) {
	case *front.StructType, *front.StackType, *front.TupleType, *front.VarbitType, *front.BitsType:
		return cexpr{t: t, comp: cp.composite(sc, e, t)}
	}
	cp.fail(e.Position(), "not supported by the netlock engine: expression %s of type %s", front.ExprString(e), t)
	return cexpr{}
}

func (cp *compiler) scalarOf(sc *scope, e front.Expr, want front.Type) scalarFn {
	x := cp.expr(sc, e, want)
	if x.scalar == nil {
		cp.fail(e.Position(), "engine: %s is not a scalar", front.ExprString(e))
	}
	return x.scalar
}

// isLoc reports whether e denotes storage.
func (cp *compiler) isLoc(sc *scope, e front.Expr) bool {
	if _, ok := cp.locOverride[e]; ok {
		return true
	}
	switch e := e.(type) {
	case *front.NameExpr:
		b := sc.lookup(e.Decl)
		return b != nil && b.kind == bSlot
	case *front.MemberExpr:
		switch e.Kind {
		case front.MemberField:
			return cp.isLoc(sc, e.X)
		case front.MemberStackProp:
			return (e.Name == "next" || e.Name == "last") && cp.isLoc(sc, e.X)
		}
	case *front.IndexExpr:
		return cp.isLoc(sc, e.X)
	case *front.SliceExpr:
		return cp.isLoc(sc, e.X)
	}
	return false
}

// location compiles an lvalue.
func (cp *compiler) location(sc *scope, e front.Expr) loc {
	if l, ok := cp.locOverride[e]; ok {
		return l
	}
	switch e := e.(type) {
	case *front.NameExpr:
		b := sc.lookup(e.Decl)
		if b == nil || b.kind != bSlot {
			cp.fail(e.Position(), "engine: %s is not a variable", e.Name)
		}
		return loc{t: b.t, static: b.base}
	case *front.MemberExpr:
		base := cp.location(sc, e.X)
		switch e.Kind {
		case front.MemberField:
			st, ok := under(base.t).(*front.StructType)
			if !ok {
				cp.fail(e.Position(), "engine: member %s of non-struct", e.Name)
			}
			off, ft := cp.fieldOffset(st, e.Name)
			return base.member(off, ft)
		case front.MemberStackProp:
			return cp.stackElem(base, e.Name, nil, e.Position())
		}
	case *front.IndexExpr:
		base := cp.location(sc, e.X)
		return cp.stackElem(base, "", cp.scalarOf(sc, e.Index, nil), e.Position())
	case *front.SliceExpr:
		base := cp.location(sc, e.X)
		if base.slice {
			base.hi, base.lo = base.lo+e.HiV, base.lo+e.LoV
			base.t = e.Type()
			return base
		}
		return loc{t: e.Type(), static: base.static, dyn: base.dyn, slice: true, hi: e.HiV, lo: e.LoV, pw: widthOf(base.t)}
	}
	cp.fail(e.Position(), "not supported by the netlock engine: assignment to %s", front.ExprString(e))
	return loc{}
}

// stackElem addresses stack[idx], stack.next or stack.last. Out-of-range accesses go to a
// scratch element and raise StackOutOfBounds.
func (cp *compiler) stackElem(stack loc, prop string, idx scalarFn, pos front.Pos) loc {
	st, ok := under(stack.t).(*front.StackType)
	if !ok {
		cp.fail(pos, "engine: index of non-stack")
	}
	esz := cp.slotsOf(st.Elem)
	scratch := cp.alloc(esz)
	base := stack.baseFn()
	size := st.Size
	oob := cp.errCode("StackOutOfBounds")
	return loc{t: st.Elem, dyn: func(c *ctx) int {
		b := base(c)
		var i int
		switch prop {
		case "next":
			i = int(c.s[b])
		case "last":
			i = int(c.s[b]) - 1
		default:
			v := idx(c)
			if v.hi != 0 || v.lo >= uint64(size) {
				i = -1
			} else {
				i = int(v.lo)
			}
		}
		if i < 0 || i >= size {
			c.stackErr = oob
			clear(c.s[scratch : scratch+esz])
			return scratch
		}
		return b + 1 + i*esz
	}}
}

func (cp *compiler) errCode(name string) int {
	for i, m := range cp.checked.ErrorMembers {
		if m.Name == name {
			return i
		}
	}
	return 0
}

// composite compiles an expression of struct, header, stack or tuple type into a function
// returning the base slot of its value.
func (cp *compiler) composite(sc *scope, e front.Expr, t front.Type) compFn {
	if cp.isLoc(sc, e) {
		return cp.location(sc, e).baseFn()
	}
	switch x := e.(type) {
	case *front.StructExpr:
		return cp.buildStruct(sc, t, len(x.Fields), func(i int) (string, front.Expr) { return x.Fields[i].Name, x.Fields[i].Value }, e.Position())
	case *front.ListExpr:
		return cp.buildStruct(sc, t, len(x.Elems), func(i int) (string, front.Expr) { return "", x.Elems[i] }, e.Position())
	case *front.CallExpr:
		if md, ok := x.Callee.(*front.MethodDecl); ok && md.Owner != nil && md.Owner.Name == "packet_in" && md.Name == "lookahead" {
			return cp.lookaheadComposite(x, t)
		}
		f := cp.call(sc, x)
		return func(c *ctx) int { f(c); return c.retBase }
	case *front.TernaryExpr:
		cond := cp.scalarOf(sc, x.Cond, nil)
		a, b := cp.composite(sc, x.Then, t), cp.composite(sc, x.Else, t)
		return func(c *ctx) int {
			if cond(c).lo != 0 {
				return a(c)
			}
			return b(c)
		}
	case *front.IndexExpr:
		// An element of a stack value that is not a variable (e.g. a function's result).
		st, ok := under(x.X.Type()).(*front.StackType)
		if !ok {
			break
		}
		inner := cp.composite(sc, x.X, x.X.Type())
		idx := cp.scalarOf(sc, x.Index, nil)
		esz := cp.slotsOf(st.Elem)
		scratch := cp.alloc(esz)
		return func(c *ctx) int {
			b := inner(c)
			i := idx(c)
			if i.hi != 0 || i.lo >= uint64(st.Size) {
				clear(c.s[scratch : scratch+esz])
				return scratch
			}
			return b + 1 + int(i.lo)*esz
		}
	case *front.MemberExpr:
		if x.Kind == front.MemberField {
			inner := cp.composite(sc, x.X, x.X.Type())
			st := under(x.X.Type()).(*front.StructType)
			off, _ := cp.fieldOffset(st, x.Name)
			return func(c *ctx) int { return inner(c) + off }
		}
	}
	if v, ok := cp.checked.Const[e]; ok {
		base := cp.alloc(cp.slotsOf(t))
		init := cp.constInit(t, v, base)
		return func(c *ctx) int { init(c); return base }
	}
	cp.fail(e.Position(), "not supported by the netlock engine: composite expression %s", front.ExprString(e))
	return nil
}

// constInit writes a constant composite value into the slots at base.
func (cp *compiler) constInit(t front.Type, v front.Value, base int) func(*ctx) {
	type w struct {
		i   int
		val uint64
	}
	var ws []w
	var walk func(t front.Type, v front.Value, at int)
	walk = func(t front.Type, v front.Value, at int) {
		if isWide(t) {
			x, _ := v.(*big.Int)
			if x == nil {
				return
			}
			nw := cp.slotsOf(t)
			m := new(big.Int).Lsh(big.NewInt(1), uint(widthOf(t)))
			x = new(big.Int).Mod(x, m)
			for k := nw - 1; k >= 0; k-- {
				ws = append(ws, w{at + k, new(big.Int).And(x, new(big.Int).SetUint64(^uint64(0))).Uint64()})
				x = new(big.Int).Rsh(x, 64)
			}
			return
		}
		if isScalar(t) {
			x, _ := cp.valueU128(v)
			x = x.trunc(widthOf(t))
			ws = append(ws, w{at, x.lo})
			if widthOf(t) > 64 {
				ws = append(ws, w{at + 1, x.hi})
			}
			return
		}
		vs, _ := v.([]front.Value)
		switch tt := under(t).(type) {
		case *front.StructType:
			off := 0
			if tt.IsHeader() {
				ws = append(ws, w{at, 1})
				off = 1
			}
			for i, f := range tt.Fields {
				if i < len(vs) {
					walk(f.T, vs[i], at+off)
				}
				off += cp.slotsOf(f.T)
			}
		case *front.TupleType:
			off := 0
			for i, et := range tt.Elems {
				if i < len(vs) {
					walk(et, vs[i], at+off)
				}
				off += cp.slotsOf(et)
			}
		}
	}
	walk(t, v, base)
	n := cp.slotsOf(t)
	return func(c *ctx) {
		clear(c.s[base : base+n])
		for _, x := range ws {
			c.s[x.i] = x.val
		}
	}
}

// buildStruct materializes a struct, header or tuple value from element expressions.
func (cp *compiler) buildStruct(sc *scope, t front.Type, n int, elem func(int) (string, front.Expr), pos front.Pos) compFn {
	size := cp.slotsOf(t)
	base := cp.alloc(size)
	var steps []func(*ctx)
	add := func(ft front.Type, off int, e front.Expr) {
		steps = append(steps, cp.storeInto(sc, ft, base+off, e))
	}
	header := false
	switch tt := under(t).(type) {
	case *front.StructType:
		header = tt.IsHeader()
		for i := 0; i < n; i++ {
			name, e := elem(i)
			var f *front.Field
			if name != "" {
				f = tt.Field(name)
			} else if i < len(tt.Fields) {
				f = tt.Fields[i]
			}
			if f == nil {
				cp.fail(pos, "engine: no field %q in %s", name, tt)
			}
			off, ft := cp.fieldOffset(tt, f.Name)
			add(ft, off, e)
		}
	case *front.TupleType:
		off := 0
		for i := 0; i < n && i < len(tt.Elems); i++ {
			_, e := elem(i)
			add(tt.Elems[i], off, e)
			off += cp.slotsOf(tt.Elems[i])
		}
	default:
		cp.fail(pos, "engine: list or struct expression of type %s", t)
	}
	return func(c *ctx) int {
		for _, s := range steps {
			s(c)
		}
		if header {
			c.s[base] = 1
		}
		return base
	}
}

// storeInto compiles "evaluate e and store it (as type t) at slot dst".
func (cp *compiler) storeInto(sc *scope, t front.Type, dst int, e front.Expr) func(*ctx) {
	x := cp.expr(sc, e, t)
	if x.scalar != nil {
		if in, ok := cp.storeInstr(sc, dst, t, e); ok {
			return in.fn()
		}
		f, w := x.scalar, widthOf(t)
		return func(c *ctx) { writeSlot(c.s, dst, w, f(c)) }
	}
	f, n := x.comp, cp.slotsOf(t)
	return func(c *ctx) { copy(c.s[dst:dst+n], c.s[f(c):]) }
}

// assign compiles lhs = rhs.
func (cp *compiler) assign(sc *scope, lhs, rhs front.Expr) func(*ctx) {
	l := cp.location(sc, lhs)
	x := cp.expr(sc, rhs, l.t)
	if x.scalar != nil {
		f := x.scalar
		if l.dyn == nil {
			wr := cp.writeLoc(l)
			return func(c *ctx) { wr(c, f(c)) }
		}
		// The left side is evaluated before the right side.
		base, wr := l.dyn, cp.writeLocAt(l)
		return func(c *ctx) {
			b := base(c)
			wr(c, b, f(c))
		}
	}
	n := cp.slotsOf(l.t)
	base, f := l.baseFn(), x.comp
	if _, ok := under(l.t).(*front.StructType); ok && under(l.t).(*front.StructType).IsUnion() {
		return func(c *ctx) { src := f(c); copy(c.s[base(c):base(c)+n], c.s[src:src+n]) }
	}
	return func(c *ctx) {
		d := base(c)
		src := f(c)
		copy(c.s[d:d+n], c.s[src:src+n])
	}
}

// scalar compiles a non-constant scalar expression of type t.
func (cp *compiler) scalar(sc *scope, e front.Expr, t front.Type) scalarFn {
	w := widthOf(t)
	switch x := e.(type) {
	case *front.NameExpr:
		if b := sc.lookup(x.Decl); b != nil {
			switch b.kind {
			case bSlot:
				return cp.readLoc(loc{t: b.t, static: b.base})
			case bConst:
				return constFn(b.val.trunc(w))
			}
		}
		if d, ok := x.Decl.(*front.ConstDecl); ok {
			if v, ok := cp.valueU128(d.Val); ok {
				return constFn(v.trunc(w))
			}
		}
		cp.fail(e.Position(), "engine: unbound name %s", x.Name)
	case *front.MemberExpr:
		switch x.Kind {
		case front.MemberEnum:
			return constFn(cp.memberCode(x.Enum))
		case front.MemberField:
			if cp.isLoc(sc, x) {
				return cp.readLoc(cp.location(sc, x))
			}
			inner := cp.composite(sc, x.X, x.X.Type())
			off, ft := cp.fieldOffset(under(x.X.Type()).(*front.StructType), x.Name)
			fw := widthOf(ft)
			return func(c *ctx) u128 { return readSlot(c.s, inner(c)+off, fw) }
		case front.MemberStackProp:
			st := under(x.X.Type()).(*front.StackType)
			switch x.Name {
			case "size":
				return constFn(u128{lo: uint64(st.Size)})
			case "lastIndex":
				b := cp.location(sc, x.X).baseFn()
				return func(c *ctx) u128 { return u128{lo: c.s[b(c)] - 1}.trunc(32) }
			}
		case front.MemberTableField:
			call, ok := x.X.(*front.CallExpr)
			if !ok {
				break
			}
			apply := cp.tableApply(sc, call)
			switch x.Name {
			case "hit":
				return func(c *ctx) u128 { return b2u(apply(c) >= 0) }
			case "miss":
				return func(c *ctx) u128 { return b2u(apply(c) < 0) }
			}
		}
	case *front.IndexExpr, *front.SliceExpr:
		if cp.isLoc(sc, e) {
			return cp.readLoc(cp.location(sc, e))
		}
		if s, ok := x.(*front.SliceExpr); ok {
			in := cp.scalarOf(sc, s.X, nil)
			lo, m := uint(s.LoV), mask128(s.HiV-s.LoV+1)
			return func(c *ctx) u128 { return in(c).shr(lo).and(m) }
		}
	case *front.UnaryExpr:
		a := cp.scalarOf(sc, x.X, t)
		m := mask128(w)
		switch x.Op {
		case "!":
			return func(c *ctx) u128 { return u128{lo: a(c).lo ^ 1} }
		case "~":
			return func(c *ctx) u128 { return a(c).not().and(m) }
		case "-":
			return func(c *ctx) u128 { return u128{}.sub(a(c)).and(m) }
		case "+":
			return a
		}
	case *front.BinaryExpr:
		return cp.binary(sc, x, t)
	case *front.TernaryExpr:
		if v, ok := cp.constCond(sc, x.Cond); ok {
			if v {
				return cp.scalarOf(sc, x.Then, t)
			}
			return cp.scalarOf(sc, x.Else, t)
		}
		cond := cp.scalarOf(sc, x.Cond, nil)
		a, b := cp.scalarOf(sc, x.Then, t), cp.scalarOf(sc, x.Else, t)
		return func(c *ctx) u128 {
			if cond(c).lo != 0 {
				return a(c)
			}
			return b(c)
		}
	case *front.CastExpr:
		from := x.X.Type()
		a := cp.scalarOf(sc, x.X, nil)
		fw := widthOf(from)
		if _, ok := under(t).(*front.BoolType); ok {
			return func(c *ctx) u128 { return b2u(!a(c).isZero()) }
		}
		if signed(from) && fw < w {
			m := mask128(w)
			return func(c *ctx) u128 { return a(c).sext(fw).and(m) }
		}
		m := mask128(w)
		return func(c *ctx) u128 { return a(c).and(m) }
	case *front.CallExpr:
		return cp.scalarCall(sc, x, t)
	}
	cp.fail(e.Position(), "not supported by the netlock engine: expression %s", front.ExprString(e))
	return nil
}

func b2u(b bool) u128 {
	if b {
		return u128{lo: 1}
	}
	return u128{}
}

func (cp *compiler) binary(sc *scope, x *front.BinaryExpr, t front.Type) scalarFn {
	w := widthOf(t)
	m := mask128(w)
	switch x.Op {
	case "&&", "||":
		// A constant left side decides the result or drops out; a constant right side drops
		// out when it does not decide (the left side is always evaluated: it may apply a table).
		or := x.Op == "||"
		xa, ya := cp.expr(sc, x.X, nil), cp.expr(sc, x.Y, nil)
		if xa.isConst {
			if !xa.cval.isZero() == or {
				return constFn(b2u(or))
			}
			b := ya.scalar
			return func(c *ctx) u128 { return b2u(b(c).lo != 0) }
		}
		a, b := xa.scalar, ya.scalar
		if ya.isConst && !ya.cval.isZero() != or {
			return func(c *ctx) u128 { return b2u(a(c).lo != 0) }
		}
		if or {
			return func(c *ctx) u128 { return b2u(a(c).lo != 0 || b(c).lo != 0) }
		}
		return func(c *ctx) u128 { return b2u(a(c).lo != 0 && b(c).lo != 0) }
	case "==", "!=", "<", "<=", ">", ">=":
		ot := x.X.Type()
		if _, ok := under(ot).(*front.IntType); ok {
			ot = x.Y.Type()
		}
		if !isScalar(ot) {
			eq := cp.compEqual(sc, x.X, x.Y)
			if x.Op == "==" {
				return func(c *ctx) u128 { return b2u(eq(c)) }
			}
			return func(c *ctx) u128 { return b2u(!eq(c)) }
		}
		a, b := cp.scalarOf(sc, x.X, ot), cp.scalarOf(sc, x.Y, ot)
		ow := widthOf(ot)
		cmp := func(c *ctx) int { return a(c).cmp(b(c)) }
		if signed(ot) {
			cmp = func(c *ctx) int { return scmp(a(c), b(c), ow) }
		}
		switch x.Op {
		case "==":
			return func(c *ctx) u128 { return b2u(a(c) == b(c)) }
		case "!=":
			return func(c *ctx) u128 { return b2u(a(c) != b(c)) }
		case "<":
			return func(c *ctx) u128 { return b2u(cmp(c) < 0) }
		case "<=":
			return func(c *ctx) u128 { return b2u(cmp(c) <= 0) }
		case ">":
			return func(c *ctx) u128 { return b2u(cmp(c) > 0) }
		case ">=":
			return func(c *ctx) u128 { return b2u(cmp(c) >= 0) }
		}
	case "++":
		a, b := cp.scalarOf(sc, x.X, nil), cp.scalarOf(sc, x.Y, nil)
		bw := uint(widthOf(x.Y.Type()))
		return func(c *ctx) u128 { return a(c).shl(bw).or(b(c)).and(m) }
	case "<<", ">>":
		a, b := cp.scalarOf(sc, x.X, t), cp.scalarOf(sc, x.Y, nil)
		if x.Op == "<<" {
			return func(c *ctx) u128 {
				n := b(c)
				if n.hi != 0 || n.lo >= uint64(w) {
					return u128{}
				}
				return a(c).shl(uint(n.lo)).and(m)
			}
		}
		if signed(t) {
			return func(c *ctx) u128 {
				n := b(c)
				sh := uint(127)
				if n.hi == 0 && n.lo < 127 {
					sh = uint(n.lo)
				}
				v := a(c).sext(w)
				neg := v.hi>>63 == 1
				r := v.shr(sh)
				if neg && sh > 0 {
					r = r.or(mask128(128 - int(sh)).not())
				}
				return r.and(m)
			}
		}
		return func(c *ctx) u128 {
			n := b(c)
			if n.hi != 0 || n.lo >= 128 {
				return u128{}
			}
			return a(c).shr(uint(n.lo))
		}
	}
	a, b := cp.scalarOf(sc, x.X, t), cp.scalarOf(sc, x.Y, t)
	switch x.Op {
	case "+":
		if w <= 64 {
			ml := m.lo
			return func(c *ctx) u128 { return u128{lo: (a(c).lo + b(c).lo) & ml} }
		}
		return func(c *ctx) u128 { return a(c).add(b(c)).and(m) }
	case "-":
		if w <= 64 {
			ml := m.lo
			return func(c *ctx) u128 { return u128{lo: (a(c).lo - b(c).lo) & ml} }
		}
		return func(c *ctx) u128 { return a(c).sub(b(c)).and(m) }
	case "*":
		return func(c *ctx) u128 { return a(c).mul(b(c)).and(m) }
	case "/":
		return func(c *ctx) u128 { q, _ := a(c).divmod(b(c)); return q.and(m) }
	case "%":
		return func(c *ctx) u128 { _, r := a(c).divmod(b(c)); return r.and(m) }
	case "&":
		return func(c *ctx) u128 { return a(c).and(b(c)) }
	case "|":
		return func(c *ctx) u128 { return a(c).or(b(c)) }
	case "^":
		return func(c *ctx) u128 { return a(c).xor(b(c)) }
	case "|+|":
		if signed(t) {
			return func(c *ctx) u128 {
				x, y := a(c).sext(w), b(c).sext(w)
				r := x.add(y)
				if scmp(r, mask128(w-1), 128) > 0 {
					return mask128(w - 1)
				}
				if scmp(r, mask128(w-1).not(), 128) < 0 {
					return mask128(w - 1).not().and(m)
				}
				return r.and(m)
			}
		}
		return func(c *ctx) u128 {
			r := a(c).add(b(c))
			if r.cmp(m) > 0 || (w == 128 && r.cmp(a(c)) < 0) {
				return m
			}
			return r
		}
	case "|-|":
		if signed(t) {
			return func(c *ctx) u128 {
				x, y := a(c).sext(w), b(c).sext(w)
				r := x.sub(y)
				if scmp(r, mask128(w-1), 128) > 0 {
					return mask128(w - 1)
				}
				if scmp(r, mask128(w-1).not(), 128) < 0 {
					return mask128(w - 1).not().and(m)
				}
				return r.and(m)
			}
		}
		return func(c *ctx) u128 {
			x, y := a(c), b(c)
			if x.cmp(y) < 0 {
				return u128{}
			}
			return x.sub(y)
		}
	}
	cp.fail(x.Position(), "not supported by the netlock engine: operator %s", x.Op)
	return nil
}

// compEqual compares two composite values of the same type (headers compare equal when both
// are invalid, or both valid with equal fields).
func (cp *compiler) compEqual(sc *scope, xe, ye front.Expr) func(*ctx) bool {
	t := xe.Type()
	if _, ok := t.(*front.StructExprType); ok {
		t = ye.Type()
	}
	a, b := cp.composite(sc, xe, t), cp.composite(sc, ye, t)
	eq := cp.eqLayout(t)
	return func(c *ctx) bool { return eq(c.s, a(c), b(c)) }
}

func (cp *compiler) eqLayout(t front.Type) func(s []uint64, a, b int) bool {
	if isScalar(t) {
		n := cp.slotsOf(t)
		return func(s []uint64, a, b int) bool {
			for i := 0; i < n; i++ {
				if s[a+i] != s[b+i] {
					return false
				}
			}
			return true
		}
	}
	switch tt := under(t).(type) {
	case *front.VarbitType, *front.BitsType:
		n := cp.slotsOf(t)
		return func(s []uint64, a, b int) bool {
			for i := 0; i < n; i++ {
				if s[a+i] != s[b+i] {
					return false
				}
			}
			return true
		}
	case *front.StructType:
		var parts []func(s []uint64, a, b int) bool
		var offs []int
		off := 0
		if tt.IsHeader() {
			off = 1
		}
		for _, f := range tt.Fields {
			parts = append(parts, cp.eqLayout(f.T))
			offs = append(offs, off)
			off += cp.slotsOf(f.T)
		}
		hdr := tt.IsHeader()
		return func(s []uint64, a, b int) bool {
			if hdr {
				if s[a] != s[b] {
					return false
				}
				if s[a] == 0 {
					return true
				}
			}
			for i, p := range parts {
				if !p(s, a+offs[i], b+offs[i]) {
					return false
				}
			}
			return true
		}
	case *front.StackType:
		el := cp.eqLayout(tt.Elem)
		esz := cp.slotsOf(tt.Elem)
		return func(s []uint64, a, b int) bool {
			for i := 0; i < tt.Size; i++ {
				if !el(s, a+1+i*esz, b+1+i*esz) {
					return false
				}
			}
			return true
		}
	case *front.TupleType:
		var parts []func(s []uint64, a, b int) bool
		var offs []int
		off := 0
		for _, et := range tt.Elems {
			parts = append(parts, cp.eqLayout(et))
			offs = append(offs, off)
			off += cp.slotsOf(et)
		}
		return func(s []uint64, a, b int) bool {
			for i, p := range parts {
				if !p(s, a+offs[i], b+offs[i]) {
					return false
				}
			}
			return true
		}
	}
	return func([]uint64, int, int) bool { return false }
}
