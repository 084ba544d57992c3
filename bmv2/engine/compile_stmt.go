package engine

import (
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// flow is how a statement finished.
type flow uint8

const (
	fNext flow = iota
	fReturn
	fExit
)

type stmtFn func(*ctx) flow

func cpName(prefix string, annos front.Annotations, name string) string {
	if a := annos.Get("name"); a != nil {
		if s, ok := a.StringArg(); ok {
			if strings.HasPrefix(s, ".") {
				return s[1:]
			}
			name = s
		}
	}
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func seq(fs []stmtFn) stmtFn {
	switch len(fs) {
	case 0:
		return func(*ctx) flow { return fNext }
	case 1:
		return fs[0]
	case 2:
		a, b := fs[0], fs[1]
		return func(c *ctx) flow {
			if f := a(c); f != fNext {
				return f
			}
			return b(c)
		}
	case 3:
		a, b, d := fs[0], fs[1], fs[2]
		return func(c *ctx) flow {
			if f := a(c); f != fNext {
				return f
			}
			if f := b(c); f != fNext {
				return f
			}
			return d(c)
		}
	case 4:
		a, b, d, e := fs[0], fs[1], fs[2], fs[3]
		return func(c *ctx) flow {
			if f := a(c); f != fNext {
				return f
			}
			if f := b(c); f != fNext {
				return f
			}
			if f := d(c); f != fNext {
				return f
			}
			return e(c)
		}
	case 5:
		a, b, d, e, g := fs[0], fs[1], fs[2], fs[3], fs[4]
		return func(c *ctx) flow {
			if f := a(c); f != fNext {
				return f
			}
			if f := b(c); f != fNext {
				return f
			}
			if f := d(c); f != fNext {
				return f
			}
			if f := e(c); f != fNext {
				return f
			}
			return g(c)
		}
	case 6:
		a, b, d, e, g, h := fs[0], fs[1], fs[2], fs[3], fs[4], fs[5]
		return func(c *ctx) flow {
			if f := a(c); f != fNext {
				return f
			}
			if f := b(c); f != fNext {
				return f
			}
			if f := d(c); f != fNext {
				return f
			}
			if f := e(c); f != fNext {
				return f
			}
			if f := g(c); f != fNext {
				return f
			}
			return h(c)
		}
	}
	// Longer lists: the first six unrolled, then the rest (a statement costs a call, not
	// a turn of a loop too).
	head, tail := seq(fs[:6]), seq(fs[6:])
	return func(c *ctx) flow {
		if f := head(c); f != fNext {
			return f
		}
		return tail(c)
	}
}

func (cp *compiler) block(sc *scope, b *front.BlockStmt) stmtFn {
	if b == nil {
		return seq(nil)
	}
	return seq(cp.stmts(sc.child(), b.Stmts))
}

// declVar allocates a local variable and returns its initializer.
func (cp *compiler) declVar(sc *scope, d *front.VarDecl) stmtFn {
	t := d.T
	n := cp.slotsOf(t)
	base := cp.alloc(n)
	sc.m[d] = &binding{kind: bSlot, t: t, base: base}
	if d.Init == nil {
		if brokenNoLocalInit {
			return seq(nil)
		}
		return func(c *ctx) flow { clear(c.s[base : base+n]); return fNext }
	}
	if f := cp.storeSlot(sc, base, t, d.Init); f != nil {
		return f
	}
	st := cp.storeInto(sc, t, base, d.Init)
	return func(c *ctx) flow { st(c); return fNext }
}

func (cp *compiler) stmt(sc *scope, s front.Stmt) stmtFn {
	switch s := s.(type) {
	case *front.BlockStmt:
		return cp.block(sc, s)
	case *front.EmptyStmt:
		return seq(nil)
	case *front.AssignStmt:
		if _, ok := s.LHS.(*front.DontCareExpr); ok {
			x := cp.expr(sc, s.RHS, nil)
			return func(c *ctx) flow {
				if x.scalar != nil {
					x.scalar(c)
				} else {
					x.comp(c)
				}
				return fNext
			}
		}
		if s.Op != "" {
			// x op= y: the location of x is evaluated once, for the read and the write.
			l := cp.location(sc, s.LHS)
			if l.dyn != nil {
				dyn, cache := l.dyn, cp.alloc(1)
				l.dyn = func(c *ctx) int { return int(c.s[cache]) }
				cp.locOverride[s.LHS] = l
				f := cp.assign(sc, s.LHS, s.RHS)
				delete(cp.locOverride, s.LHS)
				return func(c *ctx) flow { c.s[cache] = uint64(dyn(c)); f(c); return fNext }
			}
		}
		return cp.assignStmt(sc, s.LHS, s.RHS)
	case *front.CallStmt:
		return cp.call(sc, s.Call)
	case *front.IfStmt:
		if v, ok := cp.constCond(sc, s.Cond); ok {
			// A constant condition (e.g. an op-code parameter of an action specialized at its
			// call site): only the branch taken is compiled.
			if v {
				return cp.stmt(sc.child(), s.Then)
			}
			if s.Else == nil {
				return seq(nil)
			}
			return cp.stmt(sc.child(), s.Else)
		}
		if slot, k, eq, ok := cp.slotTest(sc, s.Cond); ok {
			// The common shape, a field against a constant or a validity test: the test inline.
			then := cp.stmt(sc.child(), s.Then)
			var els stmtFn
			if s.Else != nil {
				els = cp.stmt(sc.child(), s.Else)
			}
			return ifSlotTest(slot, k, eq, then, els)
		}
		if b, ok := s.Cond.(*front.BinaryExpr); ok && (b.Op == "&&" || b.Op == "||") {
			if ts, ok := cp.leafTests(sc, b, b.Op, nil); ok && len(ts) == 2 {
				// Two slot tests (a field and a flag, two op codes): both inline.
				then := cp.stmt(sc.child(), s.Then)
				var els stmtFn
				if s.Else != nil {
					els = cp.stmt(sc.child(), s.Else)
				}
				return ifLeaf2(ts[0], ts[1], b.Op == "&&", then, els)
			}
		}
		cond, pure := cp.cond(sc, s.Cond)
		then := cp.stmt(sc.child(), s.Then)
		if s.Else == nil {
			return func(c *ctx) flow {
				if cond(c) {
					return then(c)
				}
				return fNext
			}
		}
		els := cp.stmt(sc.child(), s.Else)
		if pure {
			return func(c *ctx) flow {
				if cond(c) {
					return then(c)
				}
				return els(c)
			}
		}
		return func(c *ctx) flow {
			v := cond(c)
			if c.exiting {
				return fExit
			}
			if v {
				return then(c)
			}
			return els(c)
		}
	case *front.ExitStmt:
		return func(*ctx) flow { return fExit }
	case *front.ReturnStmt:
		if s.Value == nil {
			return func(*ctx) flow { return fReturn }
		}
		st := cp.storeInto(sc, sc.retT, sc.retBase, s.Value)
		return func(c *ctx) flow { st(c); return fReturn }
	case *front.DeclStmt:
		switch d := s.Decl.(type) {
		case *front.VarDecl:
			return cp.declVar(sc, d)
		case *front.ConstDecl:
			if v, ok := cp.valueU128(d.Val); ok {
				sc.m[d] = &binding{kind: bConst, t: d.T, val: v}
				return seq(nil)
			}
			n := cp.slotsOf(d.T)
			base := cp.alloc(n)
			sc.m[d] = &binding{kind: bSlot, t: d.T, base: base}
			init := cp.constInit(d.T, d.Val, base)
			return func(c *ctx) flow { init(c); return fNext }
		case *front.InstanceDecl:
			cp.instance(sc, d)
			return seq(nil)
		}
	case *front.SwitchStmt:
		return cp.switchStmt(sc, s)
	}
	cp.fail(s.Position(), "not supported by the netlock engine: statement %T", s)
	return nil
}

func (cp *compiler) switchStmt(sc *scope, s *front.SwitchStmt) stmtFn {
	type arm struct {
		vals []u128
		def  bool
		body stmtFn
	}
	var arms []arm
	var pending []u128
	var sel scalarFn
	var tbl *Table
	isRun := s.OnActionRun
	if m, ok := s.Expr.(*front.MemberExpr); ok && m.Kind == front.MemberTableField && m.Name == "action_run" {
		isRun = true
	}
	if isRun {
		mem := s.Expr.(*front.MemberExpr)
		call := mem.X.(*front.CallExpr)
		tbl = cp.tableOf(sc, call)
		apply := cp.tableApply(sc, call)
		sel = func(c *ctx) u128 { apply(c); return u128{lo: uint64(c.lastAction)} }
	} else {
		sel = cp.scalarOf(sc, s.Expr, nil)
	}
	for _, cs := range s.Cases {
		def := cs.Default
		if !def {
			if _, ok := cs.Label.(*front.DefaultExpr); ok {
				def = true
			}
		}
		if !def {
			if tbl != nil {
				name := ""
				var decl *front.ActionDecl
				switch l := cs.Label.(type) {
				case *front.NameExpr:
					name = l.Name
					decl, _ = l.Decl.(*front.ActionDecl)
				}
				idx := -1
				for i, a := range tbl.actions {
					if (decl != nil && a.decl == decl) || (decl == nil && a.decl.Name == name) {
						idx = i
					}
				}
				pending = append(pending, u128{lo: uint64(idx)})
			} else {
				pending = append(pending, cp.constScalar(sc, cs.Label))
			}
		}
		if cs.Body == nil {
			continue
		}
		arms = append(arms, arm{vals: pending, def: def, body: cp.block(sc.child(), cs.Body)})
		pending = nil
	}
	return func(c *ctx) flow {
		v := sel(c)
		if c.exiting {
			return fExit
		}
		for i := range arms {
			a := &arms[i]
			if a.def {
				return a.body(c)
			}
			for _, x := range a.vals {
				if x == v {
					return a.body(c)
				}
			}
		}
		return fNext
	}
}

func (cp *compiler) constScalar(sc *scope, e front.Expr) u128 {
	if v, ok := cp.checked.Const[e]; ok {
		if x, ok := cp.valueU128(v); ok {
			return x
		}
	}
	if m, ok := e.(*front.MemberExpr); ok && m.Kind == front.MemberEnum {
		return cp.memberCode(m.Enum)
	}
	f := cp.scalarOf(sc, e, nil)
	return f(&ctx{s: make([]uint64, cp.nslots+16)})
}
