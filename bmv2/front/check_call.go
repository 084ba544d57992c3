package front

// call checks a call expression and returns its result type.
func (c *checker) call(e *CallExpr, cx *ctx) Type {
	ft := c.expr(e.Fun, cx, nil)
	if isBad(ft) {
		for _, a := range e.Args {
			c.expr(a.Value, cx, nil)
		}
		return tBad
	}
	var tas []Type
	for _, ta := range e.TypeArgs {
		tas = append(tas, c.resolveType(ta, cx.sc))
	}
	e.TypeArgT = tas
	switch f := ft.(type) {
	case *MethodRef:
		if f.Builtin != "" {
			return c.builtinCall(e, f, cx)
		}
		if f.Function != nil {
			e.Callee = f.Function
			e.Params = f.Function.Params
			if !arityOK(f.Function.Params, e.Args) {
				c.errorf(e.P, "%s expects %d arguments, got %d", f.Function.Name, len(f.Function.Params), len(e.Args))
				return tBad
			}
			sub := map[*TypeVar]Type{}
			c.bindExplicit(e, f.Function.TypeParams, f.Function, sub)
			e.Ordered = c.args(f.Function.Params, e.Args, sub, cx, e.P, f.Function.Name, false)
			c.recordTypeArgs(e, f.Function.TypeParams, f.Function, sub)
			if cx.fn == f.Function {
				c.errorf(e.P, "function %s calls itself; recursion is not allowed", f.Function.Name)
			}
			return subst(f.Function.RetT, sub)
		}
		return c.methodCall(e, f, cx)
	case *ActionType:
		if !arityOK(f.Decl.Params, e.Args) {
			// p4c resolves a call by its arguments among all visible declarations of the name:
			// an action named like an extern function it calls still calls the extern.
			if n, ok := e.Fun.(*NameExpr); ok {
				var cands []*MethodDecl
				for _, d := range c.global.names[n.Name] {
					if m, ok := d.(*MethodDecl); ok && arityOK(m.Params, e.Args) {
						cands = append(cands, m)
					}
				}
				if len(cands) > 0 {
					n.Decl = cands[0]
					mr := &MethodRef{Candidates: cands}
					e.Fun.setType(mr)
					return c.methodCall(e, mr, cx)
				}
			}
		}
		e.Callee = f.Decl
		e.Params = f.Decl.Params
		if len(e.TypeArgs) > 0 {
			c.errorf(e.P, "action %s: cannot supply type arguments for an action call", f.Decl.Name)
		}
		if cx.fn != nil {
			c.errorf(e.P, "functions cannot call actions")
		}
		if cx.action == f.Decl {
			c.errorf(e.P, "action %s calls itself; recursion is not allowed", f.Decl.Name)
		}
		if cx.parser != nil {
			c.errorf(e.P, "actions cannot be called from a parser")
		}
		if !arityOK(f.Decl.Params, e.Args) {
			c.errorf(e.P, "action %s expects %d arguments, got %d", f.Decl.Name, len(f.Decl.Params), len(e.Args))
			return tBad
		}
		e.Ordered = c.args(f.Decl.Params, e.Args, map[*TypeVar]Type{}, cx, e.P, "action "+f.Decl.Name, false)
		c.noTableApply(e.Args)
		return tVoid
	case *TypeName:
		// A constructor call such as MyIngress() as a package argument.
		switch t := f.T.(type) {
		case *ParserType:
			c.ctorArgs(e.P, t.Decl.CtorParams, e.Args, cx, t.Decl.Name)
			e.Callee = t.Decl
			return t
		case *ControlType:
			c.ctorArgs(e.P, t.Decl.CtorParams, e.Args, cx, t.Decl.Name)
			e.Callee = t.Decl
			return t
		case *PackageType:
			// A package instance as a package argument: Switch(Pipeline(...)) main.
			inst := &InstanceDecl{P: e.P, Args: e.Args, Name: "<anonymous>"}
			pt := &PackageType{Decl: t.Decl, Args: append([]Type(nil), t.Args...)}
			inst.T = pt
			c.packageArgs(inst, pt, cx)
			e.Callee = t.Decl
			return pt
		case *ExternType:
			if hasAbstract(t.Decl) {
				c.errorf(e.P, "extern %s has abstract methods and cannot be instantiated by a constructor call", t.Decl.Name)
				return tBad
			}
			inst := &InstanceDecl{P: e.P, Args: e.Args, Name: "<anonymous>"}
			inst.T = t
			if ctor := c.instanceArgsFor(inst, t, cx); ctor != nil {
				e.Callee, e.Params = ctor, ctor.Params
			}
			return t
		}
	}
	c.errorf(e.P, "%s is not callable", ft)
	return tBad
}

// instanceArgsFor checks the arguments of an inline extern instantiation and returns the
// constructor used.
func (c *checker) instanceArgsFor(d *InstanceDecl, t *ExternType, cx *ctx) *MethodDecl {
	if len(t.Decl.Ctors) == 0 {
		c.errorf(d.P, "extern %s has no constructor", t.Decl.Name)
		return nil
	}
	for _, m := range t.Decl.Ctors {
		if arityOK(m.Params, d.Args) {
			c.args(m.Params, d.Args, map[*TypeVar]Type{}, cx, d.P, "constructor of "+t.Decl.Name, true)
			return m
		}
	}
	c.errorf(d.P, "no constructor of %s takes %d arguments", t.Decl.Name, len(d.Args))
	return nil
}

func (c *checker) bindExplicit(e *CallExpr, tps []string, owner Decl, sub map[*TypeVar]Type) {
	if len(e.TypeArgT) == 0 {
		return
	}
	if len(e.TypeArgT) != len(tps) {
		c.errorf(e.P, "expected %d type arguments, got %d", len(tps), len(e.TypeArgT))
		return
	}
	for i, n := range tps {
		if _, dc := e.TypeArgT[i].(*DontCareType); dc {
			continue
		}
		sub[c.findMethodTypeVar(owner, n)] = e.TypeArgT[i]
	}
}

// recordTypeArgs stores the (explicit or inferred) type arguments of a generic call in
// e.TypeArgT, in the order of the callee's type parameters.
func (c *checker) recordTypeArgs(e *CallExpr, tps []string, owner Decl, sub map[*TypeVar]Type) {
	if len(tps) == 0 {
		return
	}
	out := make([]Type, len(tps))
	for i, n := range tps {
		if t, ok := sub[c.findMethodTypeVar(owner, n)]; ok {
			out[i] = t
		} else if i < len(e.TypeArgT) {
			out[i] = e.TypeArgT[i]
		}
	}
	e.TypeArgT = out
}

// findMethodTypeVar finds the TypeVar of a method's or function's own type parameter.
func (c *checker) findMethodTypeVar(owner Decl, name string) *TypeVar {
	var params []*Param
	var ret Type
	switch d := owner.(type) {
	case *MethodDecl:
		params, ret = d.Params, d.RetT
	case *FunctionDecl:
		params, ret = d.Params, d.RetT
	}
	var found *TypeVar
	var visit func(Type)
	visit = func(t Type) {
		switch x := t.(type) {
		case *TypeVar:
			if x.Owner == owner && x.Name == name {
				found = x
			}
		case *TupleType:
			for _, el := range x.Elems {
				visit(el)
			}
		case *ExternType:
			for _, el := range x.Args {
				visit(el)
			}
		case *StackType:
			visit(x.Elem)
		}
	}
	for _, p := range params {
		visit(p.T)
	}
	visit(ret)
	if found == nil {
		found = &TypeVar{Name: name, Owner: owner}
	}
	return found
}

func (c *checker) methodCall(e *CallExpr, f *MethodRef, cx *ctx) Type {
	var cands []*MethodDecl
	for _, m := range f.Candidates {
		if arityOK(m.Params, e.Args) {
			cands = append(cands, m)
		}
	}
	name := f.Candidates[0].Name
	if len(cands) == 0 {
		c.errorf(e.P, "%s: no overload takes %d arguments", name, len(e.Args))
		for _, a := range e.Args {
			c.expr(a.Value, cx, nil)
		}
		return tBad
	}
	m := cands[0]
	if len(cands) > 1 && anyOptional(cands) {
		// TNA's overloads differ in @optional parameters (Meter.execute(index, color) and
		// execute(index, adjust_byte_count)): pick the first overload, those with exactly as
		// many parameters as arguments first, whose parameter types the arguments fit.
		if fit := c.fittingOverload(e, f, cands, cx); fit != nil {
			cands = []*MethodDecl{fit}
			m = fit
		}
	}
	if len(cands) > 1 {
		// Prefer the overload whose parameter count matches exactly; two such overloads are
		// ambiguous.
		var exact []*MethodDecl
		for _, x := range cands {
			if len(x.Params) == len(e.Args) {
				exact = append(exact, x)
			}
		}
		if len(exact) > 1 {
			// Named arguments can tell overloads apart.
			var byName []*MethodDecl
			for _, x := range exact {
				ok := true
				for _, a := range e.Args {
					if a.Name == "" {
						ok = false
						break
					}
					found := false
					for _, p := range x.Params {
						found = found || p.Name == a.Name
					}
					ok = ok && found
				}
				if ok {
					byName = append(byName, x)
				}
			}
			if len(byName) != 1 {
				c.errorf(e.P, "%s: ambiguous call; %d overloads take %d arguments", name, len(exact), len(e.Args))
				return tBad
			}
			exact = byName
		}
		if len(exact) == 1 {
			m = exact[0]
		}
	}
	e.Callee = m
	e.Params = m.Params
	if a := m.Annos.Get("deprecated"); a != nil {
		msg, _ := a.StringArg()
		c.warnf(e.P, "%s is deprecated: %s", m.Name, msg)
	}
	sub := map[*TypeVar]Type{}
	if et, ok := f.Recv.(*ExternType); ok {
		for i, tv := range c.externTypeVars(et.Decl) {
			if i < len(et.Args) && et.Args[i] != nil {
				sub[tv] = et.Args[i]
			}
		}
	}
	c.bindExplicit(e, m.TypeParams, m, sub)
	c.restrictCall(e, m, cx)
	e.Ordered = c.args(m.Params, e.Args, sub, cx, e.P, name, false)
	c.recordTypeArgs(e, m.TypeParams, m, sub)
	if m.Owner == nil && m.Name == "static_assert" && len(e.Args) > 0 {
		switch v := c.out.Const[e.Args[0].Value].(type) {
		case bool:
			if !v {
				msg := "static assertion failed"
				if len(e.Args) > 1 {
					if s, ok := c.out.Const[e.Args[1].Value].(string); ok {
						msg += ": " + s
					}
				}
				c.errorf(e.P, "%s", msg)
			}
		default:
			c.errorf(e.P, "static_assert needs a compile-time constant condition")
		}
	}
	ret := subst(m.RetT, sub)
	if hasTypeVar(ret) {
		c.errorf(e.P, "%s: cannot infer the result type; give explicit type arguments", name)
		return tBad
	}
	// Header-only arguments of packet methods.
	if m.Owner != nil && (m.Owner.Name == "packet_in" && m.Name == "extract") && len(e.Args) > 0 {
		at := e.Args[0].Value.Type()
		if _, dc := at.(*DontCareType); dc && len(m.Params) > 0 {
			at = subst(m.Params[0].T, sub)
		}
		if st, ok := at.(*StructType); !ok || !st.IsHeader() {
			if !isBad(at) {
				c.errorf(e.Args[0].Value.Position(), "extract needs a header, not %s", at)
			}
		}
	}
	if m.Owner != nil && m.Owner.Name == "packet_in" && m.Name == "extract" && len(e.Args) > 0 {
		if st, ok := e.Args[0].Value.Type().(*StructType); ok {
			hasVarbit := false
			for _, f := range st.Fields {
				if _, ok := f.T.(*VarbitType); ok {
					hasVarbit = true
				}
			}
			if len(e.Args) == 2 && !hasVarbit {
				c.errorf(e.Args[0].Value.Position(), "extract with a size: %s should contain a varbit field", st)
			}
			if len(e.Args) == 1 && hasVarbit {
				c.errorf(e.Args[0].Value.Position(), "%s contains a varbit field; extract it with extract(hdr, sizeInBits)", st)
			}
		}
	}
	if m.Owner != nil && m.Owner.Name == "packet_in" && m.Name == "lookahead" {
		if WidthOf(ret) < 0 {
			c.errorf(e.P, "lookahead needs a fixed-width type, not %s", ret)
		}
	}
	return ret
}

func anyOptional(ms []*MethodDecl) bool {
	for _, m := range ms {
		for _, p := range m.Params {
			if p.Annos.Get("optional") != nil {
				return true
			}
		}
	}
	return false
}

// fittingOverload checks the call's arguments against each candidate, discarding the
// diagnostics, and returns the first candidate without errors (exact parameter count first),
// or nil.
func (c *checker) fittingOverload(e *CallExpr, f *MethodRef, cands []*MethodDecl, cx *ctx) *MethodDecl {
	var order []*MethodDecl
	for _, x := range cands {
		if len(x.Params) == len(e.Args) {
			order = append(order, x)
		}
	}
	for _, x := range cands {
		if len(x.Params) != len(e.Args) {
			order = append(order, x)
		}
	}
	for _, x := range order {
		sub := map[*TypeVar]Type{}
		if et, ok := f.Recv.(*ExternType); ok {
			for i, tv := range c.externTypeVars(et.Decl) {
				if i < len(et.Args) && et.Args[i] != nil {
					sub[tv] = et.Args[i]
				}
			}
		}
		nerr, nwarn := len(c.errs), len(c.out.Warnings)
		c.bindExplicit(e, x.TypeParams, x, sub)
		c.args(x.Params, e.Args, sub, cx, e.P, x.Name, false)
		ok := len(c.errs) == nerr
		c.errs, c.out.Warnings = c.errs[:nerr], c.out.Warnings[:nwarn]
		if ok {
			return x
		}
	}
	return nil
}

// restrictCall enforces where architecture functions may be called.
func (c *checker) restrictCall(e *CallExpr, m *MethodDecl, cx *ctx) {
	if m.Owner == nil && m.Name == "verify" && cx.parser == nil {
		c.errorf(e.P, "verify can only be called from a parser")
	}
	if m.Owner != nil && m.Owner.Name == "packet_in" && cx.parser == nil {
		c.errorf(e.P, "packet_in.%s can only be called from a parser", m.Name)
	}
	if m.Owner != nil && isTNAExtern(m.Owner) || m.Owner == nil && isTNADecl(m) {
		c.tnaRestrictCall(e, m, cx)
	}

}

func (c *checker) builtinCall(e *CallExpr, f *MethodRef, cx *ctx) Type {
	e.Method = f.Builtin
	noArgs := func() bool {
		if len(e.Args) != 0 {
			c.errorf(e.P, "%s takes no arguments", f.Builtin)
			return false
		}
		return true
	}
	switch f.Builtin {
	case "isValid":
		noArgs()
		return tBool
	case "setValid", "setInvalid":
		noArgs()
		if ok, why := c.lvalue(e.Fun.(*MemberExpr).X); !ok {
			c.errorf(e.P, "%s: %s", f.Builtin, why)
		}
		return tVoid
	case "push_front", "pop_front":
		if len(e.Args) != 1 {
			c.errorf(e.P, "%s takes one argument", f.Builtin)
			return tVoid
		}
		c.expr(e.Args[0].Value, cx, tInt)
		if _, ok := c.out.Const[e.Args[0].Value]; !ok {
			c.errorf(e.Args[0].Value.Position(), "the argument of %s must be a compile-time constant", f.Builtin)
		}
		if ok, why := c.lvalue(e.Fun.(*MemberExpr).X); !ok {
			c.errorf(e.P, "%s: %s", f.Builtin, why)
		}
		return tVoid
	case "minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes":
		noArgs()
		return tInt
	case "apply":
		switch r := f.Recv.(type) {
		case *TableType:
			noArgs()
			e.Callee = r.Decl
			if !cx.inApply || cx.action != nil {
				c.errorf(e.P, "table %s can only be applied from a control's apply block", r.Decl.Name)
			}
			return &ApplyResultType{Table: r.Decl}
		case *ParserType:
			e.Callee = r.Decl
			if cx.parser == nil {
				c.errorf(e.P, "parser %s can only be applied from a parser", r.Decl.Name)
			}
			e.Ordered = c.args(r.Decl.Params, e.Args, map[*TypeVar]Type{}, cx, e.P, r.Decl.Name+".apply", false)
			e.Params = r.Decl.Params
			return tVoid
		case *ControlType:
			e.Callee = r.Decl
			if !cx.inApply || cx.action != nil {
				c.errorf(e.P, "control %s can only be applied from a control's apply block", r.Decl.Name)
			}
			e.Ordered = c.args(r.Decl.Params, e.Args, map[*TypeVar]Type{}, cx, e.P, r.Decl.Name+".apply", false)
			e.Params = r.Decl.Params
			return tVoid
		}
	}
	c.errorf(e.P, "unsupported method %s", f.Builtin)
	return tBad
}

// args checks call arguments against parameters, binding type variables in sub. ctor says the
// parameters are constructor parameters (directionless, compile-time values).
func (c *checker) args(ps []*Param, args []*Arg, sub map[*TypeVar]Type, cx *ctx, pos Pos, what string, ctor bool) []*Arg {
	// Order arguments by parameter.
	ordered := make([]*Arg, len(ps))
	named := false
	for i, a := range args {
		if a.Name == "" {
			if named {
				c.errorf(a.P, "%s: positional argument after named arguments", what)
				return ordered
			}
			if i >= len(ps) {
				c.errorf(a.P, "%s: too many arguments", what)
				return ordered
			}
			ordered[i] = a
			continue
		}
		named = true
		found := false
		for j, p := range ps {
			if p.Name == a.Name {
				if ordered[j] != nil {
					c.errorf(a.P, "%s: argument %s given twice", what, a.Name)
				}
				ordered[j] = a
				found = true
			}
		}
		if !found {
			c.errorf(a.P, "%s has no parameter %s", what, a.Name)
			c.expr(a.Value, cx, nil)
		}
	}
	for i, p := range ps {
		if ordered[i] == nil && p.Deflt == nil && p.Annos.Get("optional") == nil {
			c.errorf(pos, "%s: missing argument for parameter %s", what, p.Name)
			return ordered
		}
	}
	// First pass: arguments that determine type variables.
	done := make([]bool, len(ps))
	for i, a := range ordered {
		if a == nil {
			continue
		}
		pt := subst(ps[i].T, sub)
		if hasTypeVar(pt) && !untypedArg(a.Value) {
			at := c.expr(a.Value, cx, nil)
			done[i] = true
			switch at.(type) {
			case *ParserType, *ControlType, *TableType, *PackageType:
				c.errorf(a.Value.Position(), "%s: argument %s cannot have type %s", what, ps[i].Name, at)
				continue
			}
			if _, isStr := at.(*StringType); isStr && ps[i].Dir != DirNone {
				c.errorf(a.Value.Position(), "%s: a parameter with type string cannot have a direction (argument %s)", what, ps[i].Name)
				continue
			}
			if !unify(ps[i].T, at, sub) && !isBad(at) {
				c.errorf(a.Value.Position(), "%s: argument %s has type %s, which does not match %s", what, ps[i].Name, at, subst(ps[i].T, sub))
			}
		}
	}
	for i, a := range ordered {
		if a == nil {
			continue
		}
		p := ps[i]
		pt := subst(p.T, sub)
		if !done[i] {
			want := pt
			if hasTypeVar(want) {
				want = nil
			}
			at := c.expr(a.Value, cx, want)
			if hasTypeVar(pt) {
				if _, isStruct := at.(*StructExprType); isStruct {
					c.errorf(a.Value.Position(), "%s: cannot infer the struct type of %s; declare a variable of a struct type or cast", what, ExprString(a.Value))
					continue
				}
				if _, isInt := at.(*IntType); isInt {
					c.errorf(a.Value.Position(), "%s: cannot infer a width for the untyped integer passed as %s; give it a width (e.g. 8w%v)", what, p.Name, c.out.Const[a.Value])
					continue
				}
				unify(p.T, at, sub)
				pt = subst(p.T, sub)
			}
		}
		c.checkArg(p, pt, a, cx, what, ctor)
	}
	return ordered
}

func untypedArg(e Expr) bool {
	switch x := e.(type) {
	case *IntExpr:
		return !x.Lit.HasWidth
	case *ListExpr, *StructExpr:
		return true
	case *UnaryExpr:
		return untypedArg(x.X)
	}
	return false
}

func (c *checker) checkArg(p *Param, pt Type, a *Arg, cx *ctx, what string, ctor bool) {
	e := a.Value
	switch p.Dir {
	case DirOut, DirInOut:
		if _, dc := e.(*DontCareExpr); dc {
			if p.Dir != DirOut {
				c.errorf(e.Position(), "%s: _ can only be passed for out parameters, not for %s parameter %s", what, p.Dir, p.Name)
			}
			return
		}
		if ok, why := c.lvalue(e); !ok {
			c.errorf(e.Position(), "%s: argument for %s parameter %s must be a writable location: %s", what, p.Dir, p.Name, why)
			return
		}
		at := e.Type()
		if !isBad(at) && !hasTypeVar(pt) && !sameType(pt, at) {
			c.errorf(e.Position(), "%s: argument for %s parameter %s has type %s, expected exactly %s", what, p.Dir, p.Name, at, pt)
		}
	default:
		if _, dc := e.(*DontCareExpr); dc {
			c.errorf(e.Position(), "%s: _ can only be passed for out parameters, not for %s parameter %s", what, p.Dir, p.Name)
			return
		}
		if p.Dir == DirNone && ctor {
			if _, ok := c.out.Const[e]; !ok && !fromCtorParams(e) {
				switch e.Type().(type) {
				case *ExternType, *ParserType, *ControlType, *badType, *PackageType:
				default:
					c.errorf(e.Position(), "%s: argument %s must be a compile-time constant", what, p.Name)
				}
			}
		}
		if pkgLike(pt) {
			return // checked by packageArgs
		}
		c.assignable(pt, e, what+": argument "+p.Name)
	}
}

func pkgLike(t Type) bool {
	switch t.(type) {
	case *ParserType, *ControlType:
		return true
	}
	return false
}

// subst replaces bound type variables.
func subst(t Type, sub map[*TypeVar]Type) Type {
	if len(sub) == 0 || t == nil {
		return t
	}
	switch x := t.(type) {
	case *TypeVar:
		if b, ok := sub[x]; ok && b != nil {
			return b
		}
	case *TupleType:
		n := &TupleType{}
		for _, el := range x.Elems {
			n.Elems = append(n.Elems, subst(el, sub))
		}
		return n
	case *StackType:
		return &StackType{Elem: subst(x.Elem, sub), Size: x.Size}
	case *ExternType:
		n := &ExternType{Decl: x.Decl}
		for _, a := range x.Args {
			n.Args = append(n.Args, subst(a, sub))
		}
		return n
	case *ParserType:
		n := &ParserType{Decl: x.Decl}
		for _, a := range x.Args {
			n.Args = append(n.Args, subst(a, sub))
		}
		return n
	case *ControlType:
		n := &ControlType{Decl: x.Decl}
		for _, a := range x.Args {
			n.Args = append(n.Args, subst(a, sub))
		}
		return n
	}
	return t
}

func hasTypeVar(t Type) bool {
	switch x := t.(type) {
	case *TypeVar:
		return true
	case *TupleType:
		for _, el := range x.Elems {
			if hasTypeVar(el) {
				return true
			}
		}
	case *StackType:
		return hasTypeVar(x.Elem)
	case *ExternType:
		for _, a := range x.Args {
			if a == nil || hasTypeVar(a) {
				return true
			}
		}
	}
	return false
}

// unify matches a parameter type p (with type variables) against an argument type a, binding
// unbound variables in sub. It reports whether they are compatible.
func unify(p, a Type, sub map[*TypeVar]Type) bool {
	if isBad(a) {
		return true
	}
	if _, dc := p.(*DontCareType); dc {
		return true // Register<_, _>: any type argument
	}
	switch x := p.(type) {
	case *TypeVar:
		if b, ok := sub[x]; ok && b != nil {
			if _, isInt := a.(*IntType); isInt {
				return isNumeric(b)
			}
			return sameType(b, a)
		}
		if _, isInt := a.(*IntType); isInt {
			return true
		}
		sub[x] = a
		return true
	case *TupleType:
		y, ok := a.(*TupleType)
		if !ok || len(x.Elems) != len(y.Elems) {
			return false
		}
		for i := range x.Elems {
			if !unify(x.Elems[i], y.Elems[i], sub) {
				return false
			}
		}
		return true
	case *ExternType:
		y, ok := a.(*ExternType)
		if !ok || x.Decl != y.Decl {
			return false
		}
		for i := range x.Args {
			if i < len(y.Args) && x.Args[i] != nil && y.Args[i] != nil && !unify(x.Args[i], y.Args[i], sub) {
				return false
			}
		}
		return true
	case *PackageType:
		y, ok := a.(*PackageType)
		if !ok || x.Decl != y.Decl {
			return false
		}
		for i := range x.Args {
			if i < len(y.Args) && x.Args[i] != nil && y.Args[i] != nil && !unify(x.Args[i], y.Args[i], sub) {
				return false
			}
		}
		return true
	}
	if _, isInt := a.(*IntType); isInt {
		return isNumeric(underlying(p))
	}
	return sameType(p, a)
}

// packageArgs checks a package instantiation such as V1Switch(P(), VC(), I(), E(), CC(), D()) main:
// every argument must be a parser or control whose signature matches the package parameter's.
func (c *checker) packageArgs(d *InstanceDecl, pt *PackageType, cx *ctx) {
	pd := pt.Decl
	if !arityOK(pd.Params, d.Args) {
		c.errorf(d.P, "%s expects %d arguments, got %d", pd.Name, len(pd.Params), len(d.Args))
		return
	}
	sub := map[*TypeVar]Type{}
	for i, tv := range pd.TypeParams {
		if i < len(pt.Args) && pt.Args[i] != nil {
			sub[c.findTypeVar(pd, tv)] = pt.Args[i]
		}
	}
	args := d.Args
	if len(args) > 0 && args[0].Name != "" {
		args = make([]*Arg, len(pd.Params))
		for _, a := range d.Args {
			found := false
			for j, p := range pd.Params {
				if p.Name == a.Name {
					args[j], found = a, true
				}
			}
			if !found {
				c.errorf(a.P, "%s has no parameter %s", pd.Name, a.Name)
				return
			}
		}
		for j, a := range args {
			if a == nil && pd.Params[j].Deflt == nil && pd.Params[j].Annos.Get("optional") == nil {
				c.errorf(d.P, "%s: missing argument %s", pd.Name, pd.Params[j].Name)
				return
			}
		}
	}
	for i, a := range args {
		if a == nil {
			continue // an optional package argument
		}
		p := pd.Params[i]
		at := c.expr(a.Value, cx, nil)
		if isBad(at) {
			continue
		}
		var gotParams, wantParams []*Param
		var gotName string
		inner := map[*TypeVar]Type{}
		switch want := p.T.(type) {
		case *ParserType:
			g, ok := at.(*ParserType)
			if !ok {
				c.errorf(a.Value.Position(), "%s: argument %s must be a parser, not %s", pd.Name, p.Name, at)
				continue
			}
			gotParams, wantParams, gotName = g.Decl.Params, want.Decl.Params, g.Decl.Name
			for k, n := range want.Decl.TypeParams {
				if k < len(want.Args) {
					inner[c.findTypeVar(want.Decl, n)] = want.Args[k]
				}
			}
		case *ControlType:
			g, ok := at.(*ControlType)
			if !ok {
				c.errorf(a.Value.Position(), "%s: argument %s must be a control, not %s", pd.Name, p.Name, at)
				continue
			}
			gotParams, wantParams, gotName = g.Decl.Params, want.Decl.Params, g.Decl.Name
			for k, n := range want.Decl.TypeParams {
				if k < len(want.Args) {
					inner[c.findTypeVar(want.Decl, n)] = want.Args[k]
				}
			}
		case *PackageType:
			g, ok := at.(*PackageType)
			if !ok || g.Decl != want.Decl {
				c.errorf(a.Value.Position(), "%s: argument %s must be a %s package, not %s", pd.Name, p.Name, want.Decl.Name, at)
				continue
			}
			for k := range want.Args {
				if k < len(g.Args) && want.Args[k] != nil && g.Args[k] != nil && !unify(want.Args[k], g.Args[k], sub) {
					c.errorf(a.Value.Position(), "%s: argument %s has type %s, which does not match %s", pd.Name, p.Name, g.Args[k], subst(want.Args[k], sub))
				}
			}
			continue
		default:
			c.assignable(p.T, a.Value, pd.Name+": argument "+p.Name)
			continue
		}
		// A block may leave out trailing @optional parameters of its type (TNA's intrinsic
		// metadata).
		if len(gotParams) > len(wantParams) || len(gotParams) < len(wantParams) && !optionalFrom(wantParams, len(gotParams)) {
			c.errorf(a.Value.Position(), "%s: %s has %d parameters but %s expects %d", pd.Name, gotName, len(gotParams), p.Name, len(wantParams))
			continue
		}
		for j := range gotParams {
			gp, wp := gotParams[j], wantParams[j]
			if gp.Dir != wp.Dir {
				c.errorf(gp.P, "%s: parameter %s of %s must have direction %s, not %s", pd.Name, gp.Name, gotName, wp.Dir, gp.Dir)
				continue
			}
			wt := subst(wp.T, inner)
			if !unify(wt, gp.T, sub) {
				c.errorf(gp.P, "%s: parameter %s of %s has type %s, but %s expects %s", pd.Name, gp.Name, gotName, gp.T, p.Name, subst(wt, sub))
			}
		}
	}
	// Record the inferred type arguments (a package passed to another package is matched
	// by them).
	if len(pt.Args) < len(pd.TypeParams) {
		pt.Args = append(pt.Args, make([]Type, len(pd.TypeParams)-len(pt.Args))...)
	}
	for i, tv := range pd.TypeParams {
		if pt.Args[i] == nil {
			pt.Args[i] = sub[c.findTypeVar(pd, tv)]
		}
	}
}

// optionalFrom reports whether every parameter from index i on is @optional.
func optionalFrom(ps []*Param, i int) bool {
	for _, p := range ps[i:] {
		if p.Annos.Get("optional") == nil {
			return false
		}
	}
	return true
}

// noTableApply rejects table invocations inside action arguments, as p4c does.
func (c *checker) noTableApply(args []*Arg) {
	for _, a := range args {
		walkExpr(a.Value, func(x Expr) {
			if call, ok := x.(*CallExpr); ok && call.Method == "apply" {
				if _, isTable := call.Callee.(*TableDecl); isTable {
					c.unsupported(call.P, "table invocation in an action argument")
				}
			}
		})
	}
}

// fromCtorParams reports whether e is computed only from constants and directionless
// (constructor) parameters: a value known when the enclosing parser or control is instantiated.
func fromCtorParams(e Expr) bool {
	ok := true
	walkExpr(e, func(x Expr) {
		switch x := x.(type) {
		case *NameExpr:
			switch d := x.Decl.(type) {
			case *Param:
				if d.Dir != DirNone {
					ok = false
				}
			case *ConstDecl:
			default:
				ok = false
			}
		case *CallExpr, *MemberExpr, *IndexExpr:
			ok = false
		}
	})
	return ok
}
