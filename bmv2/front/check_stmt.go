package front

import (
	"math/big"
)

func (c *checker) parserDecl(d *ParserDecl) {
	sc := c.typeParamScope(c.global, d, d.TypeParams, d.P)
	c.params(d.Params, sc)
	c.runtimeParams(d.Params, "parser "+d.Name)
	if !d.HasBody {
		return
	}
	if len(d.TypeParams) > 0 {
		c.unsupported(d.P, "generic parser %s", d.Name)
		return
	}
	c.params(d.CtorParams, sc)
	// Parameters live in their own scope: local declarations such as tables may reuse a
	// parameter's name (variables may not; see noShadowParam).
	paramScope := newScope(sc)
	for _, p := range d.Params {
		c.declare(paramScope, p.Name, p)
	}
	for _, p := range d.CtorParams {
		c.declare(paramScope, p.Name, p)
	}
	body := newScope(paramScope)
	cx := &ctx{sc: body, parser: d}
	for _, l := range d.Locals {
		c.localDecl(l, cx)
	}
	states := newScope(body)
	hasStart := false
	for _, s := range d.States {
		if s.Name == "accept" || s.Name == "reject" {
			c.errorf(s.P, "state %s is predefined and cannot be declared", s.Name)
			continue
		}
		if s.Name == "start" {
			hasStart = true
		}
		c.declare(states, s.Name, s)
	}
	if !hasStart {
		c.errorf(d.P, "parser %s has no start state", d.Name)
	}
	if hasStart {
		c.parserReach(d)
	}
	for _, s := range d.States {
		scx := &ctx{sc: newScope(states), parser: d}
		for _, st := range s.Stmts {
			c.stmt(st, scx)
		}
		if s.Trans == nil {
			continue
		}
		if s.Trans.Target != nil {
			c.stateRef(s.Trans.Target, scx)
		} else {
			c.selectExpr(s.Trans.Select, scx)
		}
	}
}

// parserReach reports a parser that can never reach accept or reject from start.
func (c *checker) parserReach(d *ParserDecl) {
	byName := map[string]*ParserState{}
	for _, s := range d.States {
		byName[s.Name] = s
	}
	seen := map[string]bool{}
	final := false
	var visit func(name string)
	visit = func(name string) {
		if name == "accept" || name == "reject" {
			final = true
			return
		}
		if seen[name] {
			return
		}
		seen[name] = true
		s := byName[name]
		if s == nil {
			return
		}
		switch {
		case s.Trans == nil:
			final = true // an implicit transition to reject
		case s.Trans.Target != nil:
			visit(s.Trans.Target.Name)
		case s.Trans.Select != nil:
			for _, cs := range s.Trans.Select.Cases {
				visit(cs.State.Name)
			}
		}
	}
	visit("start")
	if !final {
		c.errorf(d.P, "parser %s never reaches the accept or reject state", d.Name)
	}
}

func (c *checker) stateRef(n *NameExpr, cx *ctx) {
	if n.Name == "accept" || n.Name == "reject" {
		n.setType(tState) // the built-in final states have no declaration
		return
	}
	ds := cx.sc.lookup(n.Name)
	if len(ds) == 0 {
		c.errorf(n.P, "%s: undeclared parser state", n.Name)
		return
	}
	st, ok := ds[0].(*ParserState)
	if !ok {
		c.errorf(n.P, "%s is not a parser state", n.Name)
		return
	}
	n.Decl = st
	n.setType(tState)
}

func (c *checker) selectExpr(se *SelectExpr, cx *ctx) {
	var kts []Type
	for _, k := range se.Keys {
		kt := c.expr(k, cx, nil)
		switch underlying(kt).(type) {
		case *BitsType, *BoolType, *EnumType, *badType:
		case *IntType:
			c.errorf(k.Position(), "select key has no width; give it a type")
		default:
			// As p4c's type checker (validateSelectTypes): not error, which p4c refuses too.
			c.errorf(k.Position(), "select key must be bit<>, int<>, bool or an enum, not %s", kt)
		}
		kts = append(kts, kt)
	}
	se.setType(tVoid)
	for _, cs := range se.Cases {
		c.stateRef(cs.State, cx)
		if len(cs.Keyset) == 1 {
			if vs := c.valueSetRef(cs.Keyset[0], cx); vs != nil {
				c.valueSetCase(cs.Keyset[0], vs, se.Keys, kts)
				continue
			}
		}
		if len(cs.Keyset) == 1 && len(kts) != 1 {
			switch cs.Keyset[0].(type) {
			case *DefaultExpr, *DontCareExpr:
				cs.Keyset[0].setType(tDC)
				continue
			}
			if l, ok := cs.Keyset[0].(*ListExpr); ok {
				cs.Keyset = l.Elems
			}
		}
		if len(cs.Keyset) != len(kts) {
			c.errorf(cs.P, "select has %d keys but this case has %d values", len(kts), len(cs.Keyset))
			continue
		}
		for i, ks := range cs.Keyset {
			c.keysetElem(ks, kts[i], cx)
		}
	}
}

// valueSetDecl checks value_set<T>(size) name: T is bit<>, int<>, bool, an enum, a new type,
// or a struct or tuple of them (p4c's TypeInference); the size a compile-time constant.
func (c *checker) valueSetDecl(d *ValueSetDecl, cx *ctx) {
	if cx.parser == nil {
		c.errorf(d.P, "%s: value sets are only allowed in parsers", d.Name)
	}
	d.T = c.resolveType(d.Type, cx.sc)
	if n, ok := c.constInt(d.Size, cx.sc, "value set size"); ok {
		d.N = n
	}
	if isBad(d.T) {
		return
	}
	var leaves []Type
	if !valueSetLeaves(d.T, &leaves) {
		c.errorf(d.P, "%s: illegal type %s for a value set's elements (bit<>, int<>, bool, enums, or structs and tuples of them)", d.Name, d.T)
	}
}

// valueSetLeaves appends the scalar components of a value set's element type, structs and
// tuples flattened in order (p4c's convertStructToTuple), and reports whether it is legal.
func valueSetLeaves(t Type, out *[]Type) bool {
	switch x := underlying(t).(type) {
	case *BitsType, *BoolType, *EnumType:
		*out = append(*out, t)
		return true
	case *StructType:
		if x.Decl.Kind != "struct" {
			return false
		}
		for _, f := range x.Fields {
			if !valueSetLeaves(f.T, out) {
				return false
			}
		}
		return len(x.Fields) > 0
	case *TupleType:
		for _, e := range x.Elems {
			if !valueSetLeaves(e, out) {
				return false
			}
		}
		return len(x.Elems) > 0
	}
	return false
}

// valueSetRef returns the value set a select case's keyset names, or nil.
func (c *checker) valueSetRef(ks Expr, cx *ctx) *ValueSetDecl {
	n, ok := ks.(*NameExpr)
	if !ok || n.Global {
		return nil
	}
	ds := cx.sc.lookup(n.Name)
	if len(ds) == 0 {
		return nil
	}
	vs, ok := ds[0].(*ValueSetDecl)
	if !ok {
		return nil
	}
	n.Decl = vs
	return vs
}

// valueSetCase checks a value set as the keyset of a select case: its element type, flattened,
// must have the select keys' types, one for one.
func (c *checker) valueSetCase(ks Expr, vs *ValueSetDecl, keys []Expr, kts []Type) {
	ks.setType(vs.T)
	if vs.T == nil || isBad(vs.T) {
		return
	}
	var leaves []Type
	if !valueSetLeaves(vs.T, &leaves) {
		return // reported at the declaration
	}
	if len(leaves) != len(kts) {
		c.errorf(ks.Position(), "value set %s has %d fields but the select has %d keys", vs.Name, len(leaves), len(kts))
		return
	}
	for i, kt := range kts {
		if isBad(kt) {
			continue
		}
		if !sameType(leaves[i], kt) {
			c.errorf(ks.Position(), "value set %s: field %d is %s but select key %s is %s", vs.Name, i+1, leaves[i], ExprString(keys[i]), kt)
		}
	}
}

// keysetElem checks one element of a select case or table entry against the key type.
func (c *checker) keysetElem(ks Expr, kt Type, cx *ctx) {
	switch k := ks.(type) {
	case *DefaultExpr, *DontCareExpr:
		ks.setType(tDC)
		return
	case *MaskExpr:
		c.constOf(k.X, kt, cx)
		c.constOf(k.Y, kt, cx)
		k.setType(kt)
		return
	case *RangeExpr:
		c.constOf(k.X, kt, cx)
		c.constOf(k.Y, kt, cx)
		k.setType(kt)
		return
	}
	c.constOf(ks, kt, cx)
}

func (c *checker) constOf(e Expr, t Type, cx *ctx) {
	c.expr(e, cx, t)
	if et, ok := t.(*EnumType); ok && et.Underlying != nil {
		if _, isInt := e.Type().(*IntType); isInt {
			// An untyped integer stands for the enum value with that representation.
			c.convertInt(e, et.Underlying)
			return
		}
	}
	if c.assignable(t, e, "keyset value") {
		if _, ok := c.out.Const[e]; !ok && !isBad(e.Type()) {
			c.errorf(e.Position(), "keyset values must be compile-time constants")
		}
	}
}

func (c *checker) controlDecl(d *ControlDecl) {
	sc := c.typeParamScope(c.global, d, d.TypeParams, d.P)
	c.params(d.Params, sc)
	c.runtimeParams(d.Params, "control "+d.Name)
	if !d.HasBody {
		return
	}
	if len(d.TypeParams) > 0 {
		c.unsupported(d.P, "generic control %s", d.Name)
		return
	}
	c.params(d.CtorParams, sc)
	// Parameters live in their own scope: local declarations such as tables may reuse a
	// parameter's name (variables may not; see noShadowParam).
	paramScope := newScope(sc)
	for _, p := range d.Params {
		c.declare(paramScope, p.Name, p)
	}
	for _, p := range d.CtorParams {
		c.declare(paramScope, p.Name, p)
	}
	body := newScope(paramScope)
	cx := &ctx{sc: body, control: d}
	for _, l := range d.Locals {
		c.localDecl(l, cx)
	}
	c.block(d.Body, &ctx{sc: body, control: d, inApply: true})
}

func (c *checker) localDecl(l Decl, cx *ctx) {
	switch l := l.(type) {
	case *ConstDecl:
		c.constDecl(l, cx)
	case *VarDecl:
		c.varDecl(l, cx)
	case *InstanceDecl:
		c.instanceDecl(l, cx)
		c.declare(cx.sc, l.Name, l)
		switch t := l.T.(type) {
		case *ControlType:
			if t.Decl == cx.control {
				c.errorf(l.P, "control %s instantiates itself", t.Decl.Name)
			}
			if cx.parser != nil {
				c.errorf(l.P, "%s: a parser cannot instantiate control %s", l.Name, t.Decl.Name)
			}
		case *ParserType:
			if t.Decl == cx.parser {
				c.errorf(l.P, "parser %s instantiates itself", t.Decl.Name)
			}
			if cx.control != nil {
				c.errorf(l.P, "%s: a control cannot instantiate parser %s", l.Name, t.Decl.Name)
			}
		case *PackageType:
			c.errorf(l.P, "%s: packages can only be instantiated at the top level", l.Name)
		}
	case *ActionDecl:
		c.declare(cx.sc, l.Name, l)
		c.actionDecl(l, cx)
	case *TableDecl:
		c.declare(cx.sc, l.Name, l)
		c.tableDecl(l, cx)
	case *ValueSetDecl:
		c.valueSetDecl(l, cx)
		c.declare(cx.sc, l.Name, l)
	default:
		c.errorf(l.Position(), "unexpected local declaration")
	}
}

// noShadowParam rejects a local declaration that hides a parameter (p4c's shadow error).
func (c *checker) noShadowParam(name string, pos Pos, cx *ctx) {
	for _, d := range cx.sc.lookup(name) {
		if _, ok := d.(*Param); ok {
			c.errorf(pos, "declaration of %s shadows a parameter", name)
			return
		}
	}
}

func (c *checker) varDecl(d *VarDecl, cx *ctx) {
	c.noShadowParam(d.Name, d.P, cx)
	d.T = c.resolveType(d.Type, cx.sc)
	switch d.T.(type) {
	case *ExternType, *ParserType, *ControlType, *PackageType, *VoidType, *StringType, *MatchKindType:
		c.errorf(d.P, "%s: variables cannot have type %s", d.Name, d.T)
	case *IntType:
		c.errorf(d.P, "%s: variables of type int must be const", d.Name)
	}
	if d.Init != nil {
		c.expr(d.Init, cx, d.T)
		c.assignable(d.T, d.Init, "initializer of "+d.Name)
	}
	c.declare(cx.sc, d.Name, d)
}

func (c *checker) actionDecl(d *ActionDecl, outer *ctx) {
	sc := newScope(outer.sc)
	c.params(d.Params, outer.sc)
	c.runtimeParams(d.Params, "action "+d.Name)
	seenNone := false
	for _, p := range d.Params {
		if p.Dir == DirNone {
			seenNone = true
			switch pt := underlying(p.T).(type) {
			case *BitsType, *BoolType, *badType:
			case *EnumType:
				if pt.Underlying == nil {
					c.errorf(p.P, "action %s: directionless parameter %s has type %s; control-plane parameters must be bit<>, int<>, bool or serializable enum", d.Name, p.Name, p.T)
				}
			default:
				c.errorf(p.P, "action %s: directionless parameter %s has type %s; control-plane parameters must be bit<>, int<>, bool or serializable enum", d.Name, p.Name, p.T)
			}
		} else if seenNone {
			c.errorf(p.P, "action %s: parameter %s with a direction follows a directionless parameter", d.Name, p.Name)
		}
		c.declare(sc, p.Name, p)
	}
	c.block(d.Body, &ctx{sc: sc, control: outer.control, action: d})
}

func (c *checker) functionDecl(d *FunctionDecl) {
	sc := c.typeParamScope(c.global, d, d.TypeParams, d.P)
	d.RetT = c.resolveType(d.Ret, sc)
	c.params(d.Params, sc)
	c.runtimeParams(d.Params, "function "+d.Name)
	body := newScope(sc)
	for _, p := range d.Params {
		c.declare(body, p.Name, p)
	}
	c.block(d.Body, &ctx{sc: body, fn: d})
	if _, void := d.RetT.(*VoidType); !void && !alwaysReturns(d.Body) {
		c.errorf(d.P, "function %s: not every path returns a value", d.Name)
	}
}

func alwaysReturns(s Stmt) bool {
	switch s := s.(type) {
	case *ReturnStmt, *ExitStmt:
		return true
	case *BlockStmt:
		for _, x := range s.Stmts {
			if alwaysReturns(x) {
				return true
			}
		}
	case *IfStmt:
		return s.Else != nil && alwaysReturns(s.Then) && alwaysReturns(s.Else)
	}
	return false
}

func (c *checker) block(b *BlockStmt, cx *ctx) {
	inner := *cx
	inner.sc = newScope(cx.sc)
	for _, s := range b.Stmts {
		c.stmt(s, &inner)
	}
}

func (c *checker) stmt(s Stmt, cx *ctx) {
	if !c.enter(s.Position()) {
		return
	}
	defer c.leave()
	switch s := s.(type) {
	case *BlockStmt:
		c.block(s, cx)
	case *EmptyStmt:
	case *AssignStmt:
		lt := c.expr(s.LHS, cx, nil)
		if ok, why := c.lvalue(s.LHS); !ok {
			c.errorf(s.LHS.Position(), "cannot assign: %s", why)
		}
		if _, dc := s.LHS.(*DontCareExpr); dc {
			c.errorf(s.LHS.Position(), "cannot assign to _")
		}
		if s.Op != "" {
			// RHS is LHS op value; LHS is already checked.
			b := s.RHS.(*BinaryExpr)
			yt := c.expr(b.Y, cx, lt)
			t := c.binaryTyped(b, lt, yt)
			b.setType(t)
			if v, ok := c.evalConst(b); ok {
				c.out.Const[b] = v
			}
			c.assignable(lt, s.RHS, "compound assignment")
			return
		}
		c.expr(s.RHS, cx, lt)
		c.assignable(lt, s.RHS, "assignment")
	case *CallStmt:
		c.expr(s.Call, cx, nil)
	case *IfStmt:
		ct := c.expr(s.Cond, cx, tBool)
		if _, ok := ct.(*BoolType); !ok && !isBad(ct) {
			c.errorf(s.Cond.Position(), "if condition must be bool, not %s%s", ct, castHint(ct, tBool))
		}
		c.stmt(s.Then, &ctx{sc: newScope(cx.sc), parser: cx.parser, control: cx.control, action: cx.action, fn: cx.fn, inApply: cx.inApply})
		if s.Else != nil {
			c.stmt(s.Else, &ctx{sc: newScope(cx.sc), parser: cx.parser, control: cx.control, action: cx.action, fn: cx.fn, inApply: cx.inApply})
		}
	case *SwitchStmt:
		c.switchStmt(s, cx)
	case *ExitStmt:
		if cx.parser != nil {
			c.errorf(s.P, "exit is not allowed in a parser")
		}
		if cx.fn != nil {
			c.errorf(s.P, "exit is not allowed in a function")
		}
	case *ReturnStmt:
		if cx.parser != nil {
			c.errorf(s.P, "return is not allowed in a parser")
			return
		}
		if cx.fn != nil {
			if _, void := cx.fn.RetT.(*VoidType); void {
				if s.Value != nil {
					c.errorf(s.P, "function %s returns void but return has a value", cx.fn.Name)
				}
				return
			}
			if s.Value == nil {
				c.errorf(s.P, "function %s must return a value of type %s", cx.fn.Name, cx.fn.RetT)
				return
			}
			c.expr(s.Value, cx, cx.fn.RetT)
			c.assignable(cx.fn.RetT, s.Value, "return value")
			return
		}
		if s.Value != nil {
			c.errorf(s.P, "return with a value outside a function")
		}
	case *DeclStmt:
		switch d := s.Decl.(type) {
		case *VarDecl:
			c.varDecl(d, cx)
		case *ConstDecl:
			c.constDecl(d, cx)
		case *InstanceDecl:
			c.errorf(d.P, "instantiations are not allowed inside blocks; declare %s with the control's or parser's locals", d.Name)
		}
	default:
		c.errorf(s.Position(), "unsupported statement")
	}
}

func (c *checker) switchStmt(s *SwitchStmt, cx *ctx) {
	if cx.parser != nil {
		c.errorf(s.P, "switch is not allowed in a parser")
	}
	if cx.action != nil {
		c.unsupported(s.P, "switch statements inside actions")
	}
	t := c.expr(s.Expr, cx, nil)
	if isBad(t) {
		return
	}
	seen := map[any]bool{}
	for i, cs := range s.Cases {
		if cs.Default {
			if i != len(s.Cases)-1 {
				c.errorf(cs.P, "default must be the last switch case")
			}
			continue
		}
		if ar, ok := t.(*ActionRunType); ok {
			s.OnActionRun = true
			n, ok := cs.Label.(*NameExpr)
			if !ok {
				c.errorf(cs.Label.Position(), "switch on action_run needs action names as labels")
				continue
			}
			var found *ActionDecl
			if ap := ar.Table.Prop("actions"); ap != nil {
				for _, a := range ap.Actions {
					if a.Name.Name == n.Name && a.Action != nil {
						found = a.Action
					}
				}
			}
			if found == nil {
				c.errorf(n.P, "%s is not an action of table %s", n.Name, ar.Table.Name)
				continue
			}
			n.Decl = found
			n.setType(&ActionType{Decl: found})
			if seen[found] {
				c.errorf(n.P, "duplicate switch label %s", n.Name)
			}
			seen[found] = true
			continue
		}
		switch underlying(t).(type) {
		case *BitsType, *EnumType, *ErrorType:
		default:
			c.errorf(s.Expr.Position(), "switch expression must be t.apply().action_run, bit<>, int<>, enum or error, not %s", t)
			return
		}
		c.expr(cs.Label, cx, t)
		if c.assignable(t, cs.Label, "switch label") {
			v, ok := c.out.Const[cs.Label]
			if !ok {
				c.errorf(cs.Label.Position(), "switch labels must be compile-time constants")
				continue
			}
			key := valueKey(v)
			if seen[key] {
				c.errorf(cs.Label.Position(), "duplicate switch label")
			}
			seen[key] = true
		}
	}
	for _, cs := range s.Cases {
		if cs.Body != nil {
			c.block(cs.Body, cx)
		}
	}
}

func valueKey(v Value) any {
	if b, ok := v.(*big.Int); ok {
		return b.String()
	}
	return v
}

func (c *checker) tableDecl(t *TableDecl, cx *ctx) {
	seen := map[string]bool{}
	var actions map[string]*ActionRef
	var keyTypes []Type
	var keyKinds []string
	keyIdx, entriesIdx := -1, -1
	for i, p := range t.Props {
		switch p.Name {
		case "key":
			keyIdx = i
		case "entries":
			entriesIdx = i
		}
	}
	if entriesIdx >= 0 && keyIdx > entriesIdx {
		c.errorf(t.Props[entriesIdx].P, "table %s: entries must come after the key", t.Name)
	}
	// Check key and actions first: other properties refer to them.
	order := []string{"key", "actions"}
	for _, name := range order {
		for _, p := range t.Props {
			if p.Name != name {
				continue
			}
			switch name {
			case "key":
				// Keys are evaluated when the table is applied (p4c even allows t.apply() in them).
				kcx := *cx
				kcx.inApply = true
				for _, k := range p.Keys {
					kt := c.expr(k.Expr, &kcx, nil)
					keyTypes = append(keyTypes, kt)
					keyKinds = append(keyKinds, k.MatchKind)
					if k.Annos.Get("name") == nil && !simpleKey(k.Expr) {
						c.errorf(k.Expr.Position(), "table %s: complex key expression %s requires a @name annotation", t.Name, ExprString(k.Expr))
					}
					switch underlying(kt).(type) {
					case *BitsType, *BoolType, *ErrorType, *badType:
					case *EnumType:
					default:
						c.errorf(k.Expr.Position(), "table %s: key has type %s; keys must be bit<>, int<>, bool, enum or error", t.Name, kt)
					}
					if c.matchKinds[k.MatchKind] == nil {
						c.errorf(k.MKPos, "table %s: %s is not a match_kind", t.Name, k.MatchKind)
					}
				}
			case "actions":
				actions = map[string]*ActionRef{}
				for _, a := range p.Actions {
					c.actionRef(a, cx, t, false)
					if a.Action != nil {
						if actions[a.Action.Name] != nil {
							c.errorf(a.P, "table %s: action %s listed twice", t.Name, a.Name.Name)
						}
						actions[a.Action.Name] = a
					}
				}
			}
		}
	}
	if actions == nil {
		c.errorf(t.P, "table %s has no actions property", t.Name)
		actions = map[string]*ActionRef{}
	}
	if t.Prop("default_action") == nil {
		// The implicit default action is core.p4's NoAction.
		found := false
		for _, d := range c.global.names["NoAction"] {
			if a, ok := d.(*ActionDecl); ok && len(a.Params) == 0 {
				found = true
			}
		}
		if !found {
			c.errorf(t.P, "table %s has no default_action and there is no NoAction() action; did you include core.p4?", t.Name)
		}
	}
	for _, p := range t.Props {
		if seen[p.Name] {
			c.errorf(p.P, "table %s: duplicate property %s", t.Name, p.Name)
		}
		seen[p.Name] = true
		switch p.Name {
		case "registers", "filters", "proxy_hash", "atcam", "alpm", "as_alpm", "number_partitions",
			"subtrees_per_partition", "atcam_subset_width", "shift_granularity":
			if !c.tnaDeclared() {
				c.unsupported(p.P, "table property %s", p.Name)
				continue
			}
		}
		switch p.Name {
		case "key", "actions":
		case "default_action":
			a := p.Actions[0]
			if keyIdx2 := propIndex(t, "actions"); keyIdx2 > propIndex(t, "default_action") {
				c.errorf(p.P, "table %s: default_action must come after the actions list", t.Name)
			}
			c.actionRef(a, cx, t, true)
			c.sameBoundArgs(a, actions[a.Name.Name], t)
			if a.Action != nil && actions[a.Action.Name] == nil {
				c.errorf(a.P, "table %s: default action %s is not in the actions list", t.Name, a.Name.Name)
			}
			if lr := actions[a.Name.Name]; lr != nil && lr.Annos.Get("tableonly") != nil {
				c.errorf(a.P, "table %s: action %s is @tableonly and cannot be the default action", t.Name, a.Name.Name)
			}
		case "entries":
			if len(keyTypes) == 0 {
				c.errorf(p.P, "table %s: entries need a key", t.Name)
				continue
			}
			for _, e := range p.Entries {
				keys := e.Keys
				if l, ok := keys[0].(*ListExpr); ok && len(keys) == 1 && len(l.Elems) == len(keyTypes) {
					keys = l.Elems
					e.Keys = keys
				}
				if len(keys) == 1 && len(keyTypes) > 1 {
					switch keys[0].(type) {
					case *DefaultExpr, *DontCareExpr:
						keys[0].setType(tDC)
						c.actionRef(e.Action, cx, t, true)
						continue
					}
				}
				if len(keys) != len(keyTypes) {
					c.errorf(e.P, "table %s: entry has %d key values, the table has %d keys", t.Name, len(keys), len(keyTypes))
					continue
				}
				for i, k := range keys {
					c.keysetElem(k, keyTypes[i], cx)
					c.entryKeyKind(k, keyKinds[i], t)
				}
				c.actionRef(e.Action, cx, t, true)
				if e.Action.Action != nil {
					c.sameBoundArgs(e.Action, actions[e.Action.Action.Name], t)
				}
				if e.Action.Action != nil && actions[e.Action.Action.Name] == nil {
					c.errorf(e.Action.P, "table %s: entry action %s is not in the actions list", t.Name, e.Action.Name.Name)
				}
			}
		case "size", "max_group_size", "priority_delta":
			c.expr(p.Value, cx, tInt)
			if fromCtorParams(p.Value) && c.out.Const[p.Value] == nil {
				continue // known when the control is instantiated
			}
			if v, ok := c.out.Const[p.Value].(*big.Int); !ok || v.Sign() < 0 {
				c.errorf(p.Value.Position(), "table %s: %s must be a non-negative compile-time constant", t.Name, p.Name)
			}
		case "support_timeout", "largest_priority_wins", "idle_timeout", "requires_versioning":
			vt := c.expr(p.Value, cx, tBool)
			if _, ok := vt.(*BoolType); !ok {
				c.errorf(p.Value.Position(), "table %s: %s must be true or false", t.Name, p.Name)
			}
		case "counters", "meters", "implementation", "registers", "filters", "proxy_hash", "atcam", "alpm":
			vt := c.expr(p.Value, cx, nil)
			// v1model's externs, then TNA's (arch/tna.p4): registers, filters, proxy_hash,
			// atcam and alpm are TNA's direct registers, LPF/WRED filters, proxy hash and
			// algorithmic TCAM/LPM implementations.
			want := map[string][]string{
				"counters":       {"direct_counter", "DirectCounter"},
				"meters":         {"direct_meter", "DirectMeter"},
				"implementation": {"action_profile", "action_selector", "ActionProfile", "ActionSelector", "Atcam", "Alpm"},
				"registers":      {"DirectRegister"},
				"filters":        {"Lpf", "DirectLpf", "Wred", "DirectWred"},
				"proxy_hash":     {"Hash"},
				"atcam":          {"Atcam"},
				"alpm":           {"Alpm"},
			}[p.Name]
			et, ok := vt.(*ExternType)
			if !ok || !contains(want, et.Decl.Name) {
				if !isBad(vt) {
					c.errorf(p.Value.Position(), "table %s: %s must be a %s instance, not %s", t.Name, p.Name, want[0], vt)
				}
			}
		case "as_alpm":
			c.expr(p.Value, cx, tBool)
		case "number_partitions", "subtrees_per_partition", "atcam_subset_width", "shift_granularity":
			c.expr(p.Value, cx, tInt)
		default:
			if c.tnaDeclared() {
				// bf-p4c's ValidateTableProperties warns and ignores what it does not know.
				c.warnf(p.P, "table %s: unknown table property %s, ignored (as the Tofino compiler ignores it)", t.Name, p.Name)
				continue
			}
			c.unsupported(p.P, "table property %s", p.Name)
		}
	}
}

func propIndex(t *TableDecl, name string) int {
	for i, p := range t.Props {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// sameBoundArgs checks that a default action or entry passes the same arguments for directional
// parameters as the actions list binds (p4c compares them textually).
func (c *checker) sameBoundArgs(use, listed *ActionRef, t *TableDecl) {
	if listed == nil || use.Action == nil || !listed.HasArg {
		return
	}
	k := 0
	for i, p := range use.Action.Params {
		if p.Dir == DirNone {
			continue
		}
		if i >= len(use.Args) || k >= len(listed.Args) {
			return
		}
		if ExprString(use.Args[i].Value) != ExprString(listed.Args[k].Value) {
			c.errorf(use.Args[i].Value.Position(), "table %s: argument %s of %s does not match the actions list (%s)", t.Name, ExprString(use.Args[i].Value), use.Action.Name, ExprString(listed.Args[k].Value))
		}
		k++
	}
}

// simpleKey reports whether a key expression is a name, field, stack element, slice or
// isValid() call: the forms p4c names without a @name annotation.
func simpleKey(e Expr) bool {
	switch e := e.(type) {
	case *NameExpr:
		return true
	case *MemberExpr:
		return simpleKey(e.X)
	case *IndexExpr:
		return simpleKey(e.X)
	case *SliceExpr:
		return simpleKey(e.X)
	case *CallExpr:
		if me, ok := e.Fun.(*MemberExpr); ok && me.Name == "isValid" {
			return simpleKey(me.X)
		}
	case *BinaryExpr:
		// A field masked with a constant, as p4c allows: hdr.x & 0xff.
		if _, isInt := e.Y.(*IntExpr); isInt && e.Op == "&" {
			return simpleKey(e.X)
		}
	}
	return false
}

// entryKeyKind checks that an entry's keyset element suits the key's match kind.
func (c *checker) entryKeyKind(k Expr, kind string, t *TableDecl) {
	switch k := k.(type) {
	case *DefaultExpr, *DontCareExpr:
		return
	case *MaskExpr:
		switch kind {
		case "ternary":
		case "lpm":
			if m, ok := c.out.Const[k.Y].(*big.Int); ok {
				w := WidthOf(k.Type())
				if w > 0 && !prefixMask(m, w) {
					c.errorf(k.P, "table %s: %s is an invalid mask for an lpm key (it must be a prefix of ones)", t.Name, ExprString(k))
				}
			}
		default:
			c.errorf(k.P, "table %s: a mask (&&&) is not allowed for a %s key", t.Name, kind)
		}
	case *RangeExpr:
		if kind != "range" {
			c.errorf(k.P, "table %s: a range (..) is not allowed for a %s key", t.Name, kind)
		}
	}
}

func prefixMask(m *big.Int, w int) bool {
	m = wrap(m, bitsT(w))
	seenZero := false
	for i := w - 1; i >= 0; i-- {
		if m.Bit(i) == 1 {
			if seenZero {
				return false
			}
		} else {
			seenZero = true
		}
	}
	return true
}

// actionRef resolves an action reference of a table. inDefault says all directionless arguments
// must be given (default_action and entries); in the actions list they must not be.
func (c *checker) actionRef(a *ActionRef, cx *ctx, t *TableDecl, inDefault bool) {
	sc := cx.sc
	if a.Name.Global {
		sc = c.global
	}
	ds := sc.lookup(a.Name.Name)
	if len(ds) == 0 {
		c.errorf(a.Name.P, "table %s: %s: undeclared action", t.Name, a.Name.Name)
		return
	}
	ad, ok := ds[0].(*ActionDecl)
	if !ok {
		c.errorf(a.Name.P, "table %s: %s is not an action", t.Name, a.Name.Name)
		return
	}
	a.Action = ad
	a.Name.Decl = ad
	a.Name.setType(&ActionType{Decl: ad})
	if inDefault && !a.HasArg && len(ad.Params) > 0 {
		dl := 0
		for _, p := range ad.Params {
			if p.Dir == DirNone {
				dl++
			}
		}
		if dl > 0 || len(ad.Params) > 0 {
			c.errorf(a.P, "table %s: action %s needs %d arguments", t.Name, ad.Name, len(ad.Params))
		}
		return
	}
	var want []*Param
	for _, p := range ad.Params {
		if inDefault || p.Dir != DirNone {
			want = append(want, p)
		}
	}
	if !a.HasArg && !inDefault {
		return // action list entries may omit all arguments if they only have directionless params
	}
	if len(a.Args) != len(want) {
		if inDefault {
			c.errorf(a.P, "table %s: action %s needs %d arguments, got %d", t.Name, ad.Name, len(want), len(a.Args))
		} else {
			c.errorf(a.P, "table %s: action %s in the actions list takes %d arguments (directionless parameters come from the control plane), got %d", t.Name, ad.Name, len(want), len(a.Args))
		}
		return
	}
	c.args(want, a.Args, map[*TypeVar]Type{}, cx, a.P, "action "+ad.Name, false)
	c.noTableApply(a.Args)
	if inDefault {
		for i, p := range want {
			if p.Dir == DirNone {
				if _, ok := c.out.Const[a.Args[i].Value]; !ok && !isBad(a.Args[i].Value.Type()) {
					c.errorf(a.Args[i].Value.Position(), "table %s: argument %s of %s must be a compile-time constant", t.Name, p.Name, ad.Name)
				}
			}
		}
	}
}
