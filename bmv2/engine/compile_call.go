package engine

import (
	"fmt"

	"github.com/netlock-go/netlock/bmv2/front"
)

// frame is a compiled callable (action, function, control or parser instance): parameter
// slots and a body.
type frame struct {
	params []*front.Param
	bases  []int
	types  []front.Type
	body   stmtFn
	retT   front.Type
	retB   int
	// noReturn: body is an action's without a return statement (it finishes with fNext or
	// fExit, never fReturn).
	noReturn bool
}

// bindArgs compiles copy-in and copy-out of call arguments into a frame's parameter slots.
// Parameters without arguments (action data) are skipped.
func (cp *compiler) bindArgs(sc *scope, fr *frame, args []*front.Arg, params []*front.Param) (ins, outs []func(*ctx)) {
	named := len(args) > 0 && args[0].Name != ""
	for i, p := range fr.params {
		var e front.Expr
		if named {
			for _, a := range args {
				if a.Name == p.Name {
					e = a.Value
				}
			}
		} else if i < len(args) {
			// Positional: the frame's parameters are those of the declaration the call was
			// checked against (or of a control type with the same signature).
			e = args[i].Value
		}
		if e == nil {
			e = p.Deflt
		}
		if e == nil {
			continue
		}
		base, t := fr.bases[i], fr.types[i]
		if base < 0 {
			continue
		}
		n := cp.slotsOf(t)
		if _, dc := e.(*front.DontCareExpr); dc {
			ins = append(ins, func(c *ctx) { clear(c.s[base : base+n]) })
			continue
		}
		switch p.Dir {
		case front.DirOut:
			ins = append(ins, func(c *ctx) { clear(c.s[base : base+n]) })
		default:
			ins = append(ins, cp.storeInto(sc, t, base, e))
		}
		if p.Dir == front.DirOut || p.Dir == front.DirInOut {
			l := cp.location(sc, e)
			if isScalar(t) && isScalar(l.t) {
				wr, w := cp.writeLoc(l), widthOf(t)
				outs = append(outs, func(c *ctx) { wr(c, readSlot(c.s, base, w)) })
			} else {
				lb := l.baseFn()
				outs = append(outs, func(c *ctx) { d := lb(c); copy(c.s[d:d+n], c.s[base:base+n]) })
			}
		}
	}
	return ins, outs
}

func (cp *compiler) newFrame(params []*front.Param, sc *scope, typeArgs map[string]front.Type) *frame {
	fr := &frame{params: params}
	for _, p := range params {
		t := p.T
		if isExtern(t) {
			fr.bases = append(fr.bases, -1)
			fr.types = append(fr.types, t)
			continue
		}
		n := cp.slotsOf(t)
		b := cp.alloc(n)
		fr.bases = append(fr.bases, b)
		fr.types = append(fr.types, t)
		sc.m[p] = &binding{kind: bSlot, t: t, base: b}
	}
	return fr
}

func (cp *compiler) invoke(sc *scope, fr *frame, call *front.CallExpr) stmtFn {
	ins, outs := cp.bindArgs(sc, fr, call.Args, call.Params)
	// The body is read at run time: a control with extern parameters is compiled after its
	// first call site.
	bodyRef := &fr.body
	if len(ins) == 0 && len(outs) == 0 && fr.body != nil && fr.noReturn {
		// The body is known and ends with fNext or fExit only: it is the invocation.
		return fr.body
	}
	if len(ins) == 0 && len(outs) == 0 {
		return func(c *ctx) flow {
			if (*bodyRef)(c) == fExit {
				return fExit
			}
			return fNext
		}
	}
	return func(c *ctx) flow {
		for _, f := range ins {
			f(c)
		}
		r := (*bodyRef)(c)
		for _, f := range outs {
			f(c)
		}
		if r == fExit {
			return fExit
		}
		return fNext
	}
}

// specialized compiles a direct call of action d whose arguments for some directionless
// parameters are compile-time constants (an action called with op codes): the body is compiled
// for those values, so conditions on them fold and only the branches taken remain. Call sites
// with the same constants in one block instance share the compiled body (the instance is its
// scope's action map: two Pipelines' instances of one control have one name prefix but bind
// their parameters apart). It returns nil when no argument is constant.
func (cp *compiler) specialized(sc *scope, d *front.ActionDecl, call *front.CallExpr) stmtFn {
	vals := make([]*u128, len(d.Params))
	any := false
	for i, p := range d.Params {
		if p.Dir != front.DirNone || i >= len(call.Ordered) || call.Ordered[i] == nil || !isScalar(p.T) {
			continue
		}
		a := call.Ordered[i].Value
		if !cp.isConstExpr(sc, a) {
			continue
		}
		v := cp.scalarOf(sc, a, p.T)(nil).trunc(widthOf(p.T))
		vals[i], any = &v, true
	}
	if !any {
		return nil
	}
	key := fmt.Sprintf("%p|%p", d, sc.actions)
	for _, v := range vals {
		if v == nil {
			key += "|-"
		} else {
			key += fmt.Sprintf("|%x.%x", v.hi, v.lo)
		}
	}
	fr, ok := cp.specs[key]
	if !ok {
		inner := sc.child()
		fr = &frame{params: d.Params}
		for i, p := range d.Params {
			if vals[i] != nil {
				inner.m[p] = &binding{kind: bConst, t: p.T, val: *vals[i]}
				fr.bases = append(fr.bases, -1)
				fr.types = append(fr.types, p.T)
				continue
			}
			if isExtern(p.T) {
				fr.bases = append(fr.bases, -1)
				fr.types = append(fr.types, p.T)
				continue
			}
			b := cp.alloc(cp.slotsOf(p.T))
			fr.bases = append(fr.bases, b)
			fr.types = append(fr.types, p.T)
			inner.m[p] = &binding{kind: bSlot, t: p.T, base: b}
		}
		cp.specs[key] = fr
		fr.body = cp.block(inner, d.Body)
		fr.noReturn = !hasReturn(d.Body)
	}
	return cp.invoke(sc, fr, call)
}

// action returns the compiled action decl in the scope's block instance.
func (cp *compiler) action(sc *scope, d *front.ActionDecl) *Action {
	if a, ok := sc.actions[d]; ok {
		return a
	}
	inner := sc.child()
	a := &Action{decl: d, Name: cpName(cp.actionPrefix(sc, d), d.Annos, d.Name)}
	a.ID = cp.ids[a.Name]
	sc.actions[d] = a
	a.fr = cp.newFrame(d.Params, inner, nil)
	for i, p := range d.Params {
		if p.Dir == front.DirNone {
			w := widthOf(p.T)
			a.Params = append(a.Params, ActionParam{Name: p.Name, Width: w, base: a.fr.bases[i], mask: mask128(min(w, 64)).lo})
		}
	}
	a.fr.body = cp.block(inner, d.Body)
	a.fr.noReturn = !hasReturn(d.Body)
	body := a.fr.body
	if a.fr.noReturn {
		a.run = body
		return a
	}
	a.run = func(c *ctx) flow {
		r := body(c)
		if r == fExit {
			return fExit
		}
		return fNext
	}
	return a
}

func (cp *compiler) actionPrefix(sc *scope, d *front.ActionDecl) string {
	if cp.globalActions[d] {
		return ""
	}
	return sc.prefix
}

func (cp *compiler) function(d *front.FunctionDecl) *frame {
	if f, ok := cp.funcs[d]; ok {
		return f
	}
	sc := cp.root.child()
	fr := cp.newFrame(d.Params, sc, nil)
	cp.funcs[d] = fr
	if _, void := d.RetT.(*front.VoidType); !void && d.RetT != nil {
		fr.retT = d.RetT
		fr.retB = cp.alloc(cp.slotsOf(d.RetT))
		sc.retT, sc.retBase = fr.retT, fr.retB
	}
	fr.body = cp.block(sc, d.Body)
	return fr
}

// call compiles a call used as a statement.
func (cp *compiler) call(sc *scope, call *front.CallExpr) stmtFn {
	switch d := call.Callee.(type) {
	case *front.ActionDecl:
		a := cp.action(sc, d)
		inv := cp.specialized(sc, d, call)
		if inv == nil {
			inv = cp.invoke(sc, a.fr, call)
		}
		if !cp.sw.cfg.TofinoConstraints {
			// The invocation count only groups register accesses in Tofino-constraint mode.
			return inv
		}
		return func(c *ctx) flow {
			// An action called from an action is inlined (as p4c does): its register accesses
			// belong to the outermost action invocation.
			if c.actDepth == 0 {
				c.actInvocation++
			}
			c.actDepth++
			r := inv(c)
			c.actDepth--
			return r
		}
	case *front.FunctionDecl:
		fr := cp.function(d)
		inv := cp.invoke(sc, fr, call)
		rb := fr.retB
		return func(c *ctx) flow { r := inv(c); c.retBase = rb; return r }
	case *front.TableDecl:
		ap := cp.tableApply(sc, call)
		return func(c *ctx) flow {
			if ap(c) == applyExit {
				return fExit
			}
			return fNext
		}
	case *front.ControlDecl, *front.ParserDecl:
		recv := call.Fun.(*front.MemberExpr).X
		rn := recv.(*front.NameExpr)
		b := sc.lookup(rn.Decl)
		if b == nil {
			// Direct invocation of a parser or control type: an anonymous instance per call site.
			var t front.Type
			switch d := rn.Decl.(type) {
			case *front.ControlDecl:
				t = &front.ControlType{Decl: d}
			case *front.ParserDecl:
				t = &front.ParserType{Decl: d}
			}
			if t != nil {
				inst := &front.InstanceDecl{P: call.Position(), Name: rn.Name, T: t}
				cp.instance(sc, inst)
				b = sc.m[inst]
			}
		}
		if b == nil || b.kind != bBlock {
			cp.fail(call.Position(), "engine: apply of unknown instance")
		}
		bi := b.obj.(*blockInst)
		cp.bindExterns(sc, bi, call)
		return cp.invoke(sc, bi.fr, call)
	case *front.MethodDecl:
		return cp.externCall(sc, call, d)
	}
	if call.Method != "" {
		return cp.builtin(sc, call)
	}
	cp.fail(call.Position(), "not supported by the netlock engine: call of %s", front.ExprString(call.Fun))
	return nil
}

// scalarCall compiles a call whose scalar result is used.
func (cp *compiler) scalarCall(sc *scope, call *front.CallExpr, t front.Type) scalarFn {
	switch d := call.Callee.(type) {
	case *front.FunctionDecl:
		fr := cp.function(d)
		inv := cp.invoke(sc, fr, call)
		rb, w := fr.retB, widthOf(fr.retT)
		return func(c *ctx) u128 { inv(c); return readSlot(c.s, rb, w) }
	case *front.MethodDecl:
		return cp.externValue(sc, call, d, t)
	}
	if call.Method == "isValid" {
		recv := call.Fun.(*front.MemberExpr).X
		rt := under(recv.Type()).(*front.StructType)
		base := cp.composite(sc, recv, recv.Type())
		if rt.IsUnion() {
			var offs []int
			off := 0
			for _, f := range rt.Fields {
				offs = append(offs, off)
				off += cp.slotsOf(f.T)
			}
			return func(c *ctx) u128 {
				b := base(c)
				for _, o := range offs {
					if c.s[b+o] != 0 {
						return u128{lo: 1}
					}
				}
				return u128{}
			}
		}
		return func(c *ctx) u128 { return u128{lo: c.s[base(c)]} }
	}
	cp.fail(call.Position(), "not supported by the netlock engine: value of call %s", front.ExprString(call.Fun))
	return nil
}

// builtin compiles setValid, setInvalid, push_front, pop_front and isValid as statements.
func (cp *compiler) builtin(sc *scope, call *front.CallExpr) stmtFn {
	recv := call.Fun.(*front.MemberExpr).X
	switch call.Method {
	case "setValid", "setInvalid":
		l := cp.location(sc, recv)
		b := l.baseFn()
		v := uint64(0)
		if call.Method == "setValid" {
			v = 1
		}
		// A header inside a union: making it valid invalidates its siblings.
		var sib []int
		if v == 1 {
			sib = cp.unionSiblings(recv)
		}
		return func(c *ctx) flow {
			at := b(c)
			c.s[at] = v
			for _, o := range sib {
				c.s[at+o] = 0
			}
			return fNext
		}
	case "push_front", "pop_front":
		l := cp.location(sc, recv)
		st := under(l.t).(*front.StackType)
		esz := cp.slotsOf(st.Elem)
		b := l.baseFn()
		cnt := cp.scalarOf(sc, call.Args[0].Value, nil)
		size := st.Size
		push := call.Method == "push_front"
		return func(c *ctx) flow {
			at := b(c)
			nv := cnt(c)
			n := size
			if nv.hi == 0 && nv.lo < uint64(size) {
				n = int(nv.lo)
			}
			el := c.s[at+1 : at+1+size*esz]
			next := int(c.s[at])
			if push {
				copy(el[n*esz:], el[:(size-n)*esz])
				clear(el[:n*esz])
				next += n
				if next > size {
					next = size
				}
			} else {
				copy(el, el[n*esz:])
				clear(el[(size-n)*esz:])
				next -= n
				if next < 0 {
					next = 0
				}
			}
			c.s[at] = uint64(next)
			return fNext
		}
	case "isValid":
		f := cp.scalarCall(sc, call, nil)
		return func(c *ctx) flow { f(c); return fNext }
	case "apply":
		return cp.call(sc, call)
	}
	cp.fail(call.Position(), "not supported by the netlock engine: method %s", call.Method)
	return nil
}

// unionSiblings returns, for a header that is a member of a header union, the slot offsets
// (relative to the header) of the validity bits of the other members.
func (cp *compiler) unionSiblings(e front.Expr) []int {
	m, ok := e.(*front.MemberExpr)
	if !ok || m.Kind != front.MemberField {
		return nil
	}
	ut, ok := under(m.X.Type()).(*front.StructType)
	if !ok || !ut.IsUnion() {
		return nil
	}
	var sib []int
	myOff, _ := cp.fieldOffset(ut, m.Name)
	off := 0
	for _, f := range ut.Fields {
		if off != myOff {
			sib = append(sib, off-myOff)
		}
		off += cp.slotsOf(f.T)
	}
	return sib
}

// hasReturn reports whether a return statement occurs in s (an action's body: a return ends
// the action, so its compiled body may finish with fReturn, which the call turns into fNext).
func hasReturn(s front.Stmt) bool {
	switch s := s.(type) {
	case *front.ReturnStmt:
		return true
	case *front.BlockStmt:
		if s == nil {
			return false
		}
		for _, x := range s.Stmts {
			if hasReturn(x) {
				return true
			}
		}
	case *front.IfStmt:
		return hasReturn(s.Then) || (s.Else != nil && hasReturn(s.Else))
	case *front.SwitchStmt:
		for _, cs := range s.Cases {
			if cs.Body != nil && hasReturn(cs.Body) {
				return true
			}
		}
	}
	return false
}
