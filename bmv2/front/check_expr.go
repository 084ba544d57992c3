package front

import (
	"math/big"
)

// expr checks e in cx and returns its type. want, if non-nil, is the type the context expects; it
// types list and struct expressions and untyped integer literals.
func (c *checker) expr(e Expr, cx *ctx, want Type) Type {
	if !c.enter(e.Position()) {
		e.setType(tBad)
		return tBad
	}
	defer c.leave()
	t := c.expr1(e, cx, want)
	if t == nil {
		t = tBad
	}
	e.setType(t)
	if _, isConst := c.out.Const[e]; !isConst {
		if v, ok := c.evalConst(e); ok {
			c.out.Const[e] = v
		}
	}
	return t
}

func isBad(t Type) bool { _, ok := t.(*badType); return ok }

func (c *checker) expr1(e Expr, cx *ctx, want Type) Type {
	switch e := e.(type) {
	case *IntExpr:
		if e.Lit == nil {
			return tBad
		}
		if e.Lit.HasWidth {
			t := &BitsType{Width: e.Lit.Width, Signed: e.Lit.Signed}
			c.fits(e, e.Lit.Value, t)
			return t
		}
		return tInt
	case *BoolExpr:
		return tBool
	case *StringExpr:
		return tString
	case *DontCareExpr:
		return tDC
	case *DefaultExpr:
		c.errorf(e.P, "default is only allowed in select cases and table entries")
		return tBad
	case *NameExpr:
		return c.nameExpr(e, cx)
	case *TypeArgExpr:
		return &TypeName{T: c.resolveType(e.Ref, cx.sc)}
	case *MemberExpr:
		return c.memberExpr(e, cx)
	case *IndexExpr:
		xt := c.expr(e.X, cx, nil)
		it := c.expr(e.Index, cx, nil)
		if isBad(xt) || isBad(it) {
			return tBad
		}
		st, ok := xt.(*StackType)
		if !ok {
			c.errorf(e.P, "indexing needs a header stack, not %s", xt)
			return tBad
		}
		switch x := it.(type) {
		case *IntType, *BitsType:
		case *EnumType:
			if x.Underlying == nil {
				c.errorf(e.Index.Position(), "stack index must be an integer, not %s", it)
				return tBad
			}
		default:
			c.errorf(e.Index.Position(), "stack index must be an integer, not %s", it)
			return tBad
		}
		if v, ok := c.out.Const[e.Index].(*big.Int); ok {
			if v.Sign() < 0 || v.Cmp(big.NewInt(int64(st.Size))) >= 0 {
				c.errorf(e.Index.Position(), "index %s out of bounds for stack of size %d", v, st.Size)
			}
		}
		return st.Elem
	case *SliceExpr:
		xt := c.expr(e.X, cx, nil)
		c.expr(e.Hi, cx, nil)
		c.expr(e.Lo, cx, nil)
		if isBad(xt) {
			return tBad
		}
		hv, ok1 := c.out.Const[e.Hi].(*big.Int)
		lv, ok2 := c.out.Const[e.Lo].(*big.Int)
		if !ok1 || !ok2 {
			c.errorf(e.P, "slice bounds must be compile-time constants")
			return tBad
		}
		w := -1
		switch x := underlying(xt).(type) {
		case *BitsType:
			w = x.Width
		case *IntType:
			w = 1 << 20
		default:
			c.errorf(e.P, "cannot slice a value of type %s", xt)
			return tBad
		}
		if !hv.IsInt64() || !lv.IsInt64() || lv.Sign() < 0 || hv.Cmp(lv) < 0 || hv.Int64() >= int64(w) {
			c.errorf(e.P, "invalid slice [%s:%s] of %s", hv, lv, xt)
			return tBad
		}
		e.HiV, e.LoV = int(hv.Int64()), int(lv.Int64())
		return bitsT(e.HiV - e.LoV + 1)
	case *UnaryExpr:
		xt := c.expr(e.X, cx, want)
		if isBad(xt) {
			return tBad
		}
		switch e.Op {
		case "!":
			if _, ok := xt.(*BoolType); !ok {
				c.errorf(e.P, "operator ! needs a bool, not %s", xt)
				return tBad
			}
			return tBool
		case "~":
			if _, ok := xt.(*BitsType); !ok {
				c.errorf(e.P, "operator ~ needs bit<> or int<>, not %s", xt)
				return tBad
			}
			return xt
		default:
			switch xt.(type) {
			case *BitsType, *IntType:
				return xt
			}
			c.errorf(e.P, "operator %s needs a number, not %s", e.Op, xt)
			return tBad
		}
	case *BinaryExpr:
		return c.binary(e, cx, want)
	case *TernaryExpr:
		ct := c.expr(e.Cond, cx, tBool)
		if !isBad(ct) {
			if _, ok := ct.(*BoolType); !ok {
				c.errorf(e.Cond.Position(), "condition must be bool, not %s", ct)
			}
		}
		a := c.expr(e.Then, cx, want)
		b := c.expr(e.Else, cx, want)
		if isBad(a) || isBad(b) {
			return tBad
		}
		if _, ok := a.(*IntType); ok {
			if _, ok := b.(*IntType); !ok {
				c.convertInt(e.Then, b)
				a = b
			} else if _, ok := c.out.Const[e.Cond]; !ok {
				c.errorf(e.P, "the branches of ?: are untyped integers; give one of them a width")
				return tBad
			}
		} else if _, ok := b.(*IntType); ok {
			c.convertInt(e.Else, a)
			b = a
		}
		if !sameType(a, b) {
			c.errorf(e.P, "the branches of ?: have different types: %s and %s", a, b)
			return tBad
		}
		return a
	case *CastExpr:
		to := c.resolveType(e.To, cx.sc)
		xt := c.expr(e.X, cx, to)
		if isBad(to) || isBad(xt) {
			return tBad
		}
		if !castOK(xt, to) {
			c.errorf(e.P, "cannot cast from %s to %s", xt, to)
			return tBad
		}
		return to
	case *ListExpr:
		return c.listExpr(e, cx, want)
	case *StructExpr:
		return c.structExpr(e, cx, want)
	case *CallExpr:
		return c.call(e, cx)
	case *MaskExpr, *RangeExpr:
		c.errorf(e.Position(), "&&& and .. are only allowed in select cases and table entries")
		return tBad
	case *SelectExpr:
		c.errorf(e.P, "select is only allowed in a transition")
		return tBad
	}
	c.errorf(e.Position(), "unsupported expression")
	return tBad
}

// underlying strips new types for arithmetic purposes.
func underlying(t Type) Type {
	if nt, ok := t.(*NewType); ok {
		return underlying(nt.Underlying)
	}
	return t
}

func castOK(from, to Type) bool {
	if sameType(from, to) {
		return true
	}
	switch t := to.(type) {
	case *BitsType:
		switch f := from.(type) {
		case *BitsType:
			return f.Signed == t.Signed || f.Width == t.Width
		case *IntType:
			return true
		case *BoolType:
			return t.Width == 1 && !t.Signed
		case *EnumType:
			return f.Underlying != nil
		case *NewType:
			return castOK(f.Underlying, to)
		}
	case *BoolType:
		switch f := from.(type) {
		case *BitsType:
			return f.Width == 1 && !f.Signed
		case *IntType:
			return true
		case *NewType:
			return castOK(f.Underlying, to)
		}
	case *IntType:
		switch from.(type) {
		case *BitsType, *IntType:
			return true
		}
	case *EnumType:
		if t.Underlying == nil {
			return false
		}
		switch from.(type) {
		case *BitsType, *IntType:
			return castOK(from, t.Underlying)
		}
	case *NewType:
		return castOK(from, t.Underlying) || sameType(from, t.Underlying)
	case *StructType:
		switch from.(type) {
		case *TupleType, *StructExprType:
			return true
		}
	}
	return false
}

// convertInt gives an untyped integer expression the type to (an implicit conversion).
func (c *checker) convertInt(e Expr, to Type) {
	if _, ok := e.Type().(*IntType); !ok {
		return
	}
	e.setType(to)
	if v, ok := c.out.Const[e]; ok {
		if b, ok := v.(*big.Int); ok {
			if bt, ok := underlying(to).(*BitsType); ok {
				c.fits(e, b, bt)
			}
		}
		c.out.Const[e] = castValue(v, to)
	}
}

// fits warns, as p4c does, when a constant does not fit the type it is converted to (it is
// truncated).
func (c *checker) fits(e Expr, v *big.Int, t *BitsType) {
	lo, hi := bitsRange(t)
	if !t.Signed {
		// Unsigned targets also take negative values modulo 2^W without complaint from p4c.
		lo = new(big.Int).Neg(new(big.Int).Add(hi, big.NewInt(1)))
	}
	if v.Cmp(lo) < 0 || v.Cmp(hi) > 0 {
		c.warnf(e.Position(), "%s: value does not fit in %s; it is truncated", ExprString(e), t)
	}
}

func (c *checker) nameExpr(e *NameExpr, cx *ctx) Type {
	sc := cx.sc
	if e.Global {
		sc = c.global
	}
	if e.Name == "error" {
		return &TypeName{T: tError}
	}
	ds := sc.lookup(e.Name)
	if len(ds) == 0 {
		c.errorf(e.P, "%s: undeclared name%s", e.Name, suggest(e.Name, sc.visibleNames()))
		return tBad
	}
	e.Decl = ds[0]
	switch d := ds[0].(type) {
	case *ConstDecl:
		return d.T
	case *VarDecl:
		return d.T
	case *Param:
		return d.T
	case *InstanceDecl:
		return d.T
	case *ActionDecl:
		return &ActionType{Decl: d}
	case *TableDecl:
		return &TableType{Decl: d}
	case *ValueSetDecl:
		c.errorf(e.P, "%s: a value set can only be a select case's keyset", e.Name)
		return tBad
	case *ParserState:
		return tState
	case *MethodDecl:
		var cands []*MethodDecl
		for _, x := range ds {
			cands = append(cands, x.(*MethodDecl))
		}
		return &MethodRef{Candidates: cands}
	case *FunctionDecl:
		return &MethodRef{Function: d}
	case *EnumDecl:
		return &TypeName{T: d.T}
	case *StructDecl:
		return &TypeName{T: d.T}
	case *TypedefDecl:
		return &TypeName{T: d.T}
	case *TypeParam:
		return &TypeName{T: d.Var}
	case *EnumMember:
		if _, ok := d.Owner.(*MatchKindDecl); ok {
			return tMK
		}
	case *ExternDecl, *ParserDecl, *ControlDecl, *PackageDecl:
		return &TypeName{T: c.resolveType(&NamedTypeRef{P: e.P, Name: e.Name}, sc)}
	}
	c.errorf(e.P, "%s cannot be used as a value", e.Name)
	return tBad
}

var sizeMethods = map[string]bool{"minSizeInBits": true, "minSizeInBytes": true, "maxSizeInBits": true, "maxSizeInBytes": true}

func (c *checker) memberExpr(e *MemberExpr, cx *ctx) Type {
	xt := c.expr(e.X, cx, nil)
	if isBad(xt) {
		return tBad
	}
	if sizeMethods[e.Name] {
		e.Kind = MemberMethod
		return &MethodRef{Builtin: e.Name, Recv: xt}
	}
	switch t := xt.(type) {
	case *TypeName:
		switch tt := t.T.(type) {
		case *EnumType:
			for _, m := range tt.Decl.Members {
				if m.Name == e.Name {
					e.Kind, e.Enum = MemberEnum, m
					return tt
				}
			}
			c.errorf(e.P, "%s has no member %s", tt.Decl.Name, e.Name)
			return tBad
		case *ErrorType:
			if m := c.errors[e.Name]; m != nil {
				e.Kind, e.Enum = MemberEnum, m
				return tError
			}
			c.errorf(e.P, "error.%s: undeclared error", e.Name)
			return tBad
		case *ParserType, *ControlType:
			if e.Name == "apply" {
				// Direct invocation: Type.apply(...) applies an implicit instance.
				e.Kind = MemberMethod
				return &MethodRef{Builtin: "apply", Recv: tt}
			}
		}
		c.errorf(e.P, "%s has no member %s", t.T, e.Name)
		return tBad
	case *StructType:
		if f := t.Field(e.Name); f != nil {
			e.Kind, e.Field = MemberField, f
			return f.T
		}
		if t.Decl.Kind != "struct" {
			switch e.Name {
			case "isValid":
				e.Kind = MemberMethod
				return &MethodRef{Builtin: e.Name, Recv: t}
			case "setValid", "setInvalid":
				if t.IsHeader() {
					e.Kind = MemberMethod
					return &MethodRef{Builtin: e.Name, Recv: t}
				}
			}
		}
		var names []string
		for _, f := range t.Fields {
			names = append(names, f.Name)
		}
		c.errorf(e.P, "%s has no field %s%s", t, e.Name, suggest(e.Name, names))
		return tBad
	case *StackType:
		switch e.Name {
		case "next", "last":
			e.Kind = MemberStackProp
			if cx.parser == nil {
				c.errorf(e.P, "%s of a header stack is only allowed in parsers", e.Name)
			}
			return t.Elem
		case "lastIndex":
			e.Kind = MemberStackProp
			if cx.parser == nil {
				c.errorf(e.P, "lastIndex of a header stack is only allowed in parsers")
			}
			return bitsT(32)
		case "size":
			e.Kind = MemberStackProp
			return bitsT(32)
		case "push_front", "pop_front":
			e.Kind = MemberMethod
			return &MethodRef{Builtin: e.Name, Recv: t}
		}
		c.errorf(e.P, "header stacks have no member %s", e.Name)
		return tBad
	case *ExternType:
		var cands []*MethodDecl
		for _, m := range t.Decl.Methods {
			if m.Name == e.Name {
				cands = append(cands, m)
			}
		}
		if len(cands) == 0 {
			c.errorf(e.P, "extern %s has no method %s", t.Decl.Name, e.Name)
			return tBad
		}
		e.Kind = MemberMethod
		return &MethodRef{Candidates: cands, Recv: t}
	case *TableType:
		if e.Name == "apply" {
			e.Kind = MemberMethod
			return &MethodRef{Builtin: "apply", Recv: t}
		}
		c.errorf(e.P, "table %s has no member %s (only apply)", t.Decl.Name, e.Name)
		return tBad
	case *ParserType, *ControlType:
		if e.Name == "apply" {
			e.Kind = MemberMethod
			return &MethodRef{Builtin: "apply", Recv: t}
		}
		c.errorf(e.P, "%s has no member %s (only apply)", t, e.Name)
		return tBad
	case *ApplyResultType:
		switch e.Name {
		case "hit", "miss":
			e.Kind = MemberTableField
			return tBool
		case "action_run":
			e.Kind = MemberTableField
			return &ActionRunType{Table: t.Table}
		}
		c.errorf(e.P, "the result of %s.apply() has no field %s (hit, miss, action_run)", t.Table.Name, e.Name)
		return tBad
	}
	c.errorf(e.P, "%s has no member %s", xt, e.Name)
	return tBad
}

func (c *checker) binary(e *BinaryExpr, cx *ctx, want Type) Type {
	var wx Type
	switch e.Op {
	case "&&", "||":
		wx = tBool
	case "<<", ">>", "+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^":
		wx = want
	}
	xt := c.expr(e.X, cx, wx)
	yt := c.expr(e.Y, cx, wx)
	return c.binaryTyped(e, xt, yt)
}

// binaryTyped types a binary expression whose operands are already checked.
func (c *checker) binaryTyped(e *BinaryExpr, xt, yt Type) Type {
	if isBad(xt) || isBad(yt) {
		return tBad
	}
	switch e.Op {
	case "&&", "||":
		if _, ok := xt.(*BoolType); !ok {
			c.errorf(e.X.Position(), "operator %s needs bool operands, not %s", e.Op, xt)
			return tBad
		}
		if _, ok := yt.(*BoolType); !ok {
			c.errorf(e.Y.Position(), "operator %s needs bool operands, not %s", e.Op, yt)
			return tBad
		}
		return tBool
	case "<<", ">>":
		switch xt.(type) {
		case *BitsType:
		case *IntType:
			v, ok := c.out.Const[e.Y].(*big.Int)
			if !ok {
				c.errorf(e.P, "shifting an untyped integer by a non-constant amount; give it a width")
				return tBad
			}
			if v.Cmp(big.NewInt(maxWidth)) > 0 {
				c.errorf(e.P, "shift by %s: widths up to %d bits are supported", v, maxWidth)
				return tBad
			}
		default:
			c.errorf(e.X.Position(), "operator %s needs a bit<> or int<> left operand, not %s", e.Op, xt)
			return tBad
		}
		switch y := yt.(type) {
		case *BitsType:
			if v, ok := c.out.Const[e.Y].(*big.Int); y.Signed && !(ok && v.Sign() >= 0) {
				c.errorf(e.Y.Position(), "shift amount must be unsigned (or a non-negative constant), not %s", yt)
				return tBad
			}
		case *IntType:
			if v, ok := c.out.Const[e.Y].(*big.Int); ok && v.Sign() < 0 {
				c.errorf(e.Y.Position(), "shift amount must not be negative")
				return tBad
			}
		default:
			c.errorf(e.Y.Position(), "shift amount must be an unsigned integer, not %s", yt)
			return tBad
		}
		return xt
	case "++":
		if ex, ok := xt.(*EnumType); ok && ex.Underlying != nil {
			xt = ex.Underlying
		}
		if ey, ok := yt.(*EnumType); ok && ey.Underlying != nil {
			yt = ey.Underlying
		}
		bx, ok1 := xt.(*BitsType)
		by, ok2 := yt.(*BitsType)
		if !ok1 || !ok2 {
			c.errorf(e.P, "operator ++ needs bit<> or int<> operands with known widths, not %s and %s", xt, yt)
			return tBad
		}
		return &BitsType{Width: bx.Width + by.Width, Signed: bx.Signed}
	}
	// Serializable enums convert implicitly to their underlying type when the other operand is
	// of that type (or of another enum with the same underlying type).
	if ex, ok := xt.(*EnumType); ok && ex.Underlying != nil {
		if ey, ok := yt.(*EnumType); ok && ey.Underlying != nil && ex.Decl != ey.Decl && sameType(ex.Underlying, ey.Underlying) {
			xt, yt = ex.Underlying, ey.Underlying
		} else if sameType(ex.Underlying, yt) {
			xt = yt
		}
	} else if ey, ok := yt.(*EnumType); ok && ey.Underlying != nil && sameType(ey.Underlying, xt) {
		yt = xt
	}
	// The remaining operators need operands of one type; an untyped literal adopts the other side's.
	_, xi := xt.(*IntType)
	_, yi := yt.(*IntType)
	// Values of type int are always compile-time known (constants or directionless parameters).
	if xi && !yi {
		if isNumeric(yt) {
			c.convertInt(e.X, yt)
			xt = yt
		}
	} else if yi && !xi {
		if isNumeric(xt) {
			c.convertInt(e.Y, xt)
			yt = xt
		}
	}
	switch e.Op {
	case "==", "!=":
		if !sameType(xt, yt) {
			c.errorf(e.P, "cannot compare %s with %s", xt, yt)
			return tBad
		}
		switch xt.(type) {
		case *ExternType, *ParserType, *ControlType, *TableType, *VoidType, *StringType, *MethodRef, *TypeName, *ApplyResultType, *ActionRunType:
			c.errorf(e.P, "values of type %s cannot be compared", xt)
			return tBad
		}
		return tBool
	case "<", ">", "<=", ">=":
		if !sameType(xt, yt) {
			c.errorf(e.P, "cannot compare %s with %s", xt, yt)
			return tBad
		}
		switch underlying(xt).(type) {
		case *BitsType, *IntType:
			return tBool
		}
		c.errorf(e.P, "operator %s needs numbers, not %s", e.Op, xt)
		return tBad
	}
	// Arithmetic and bitwise operators.
	if !sameType(xt, yt) {
		c.errorf(e.P, "operator %s: operands have different types %s and %s (no implicit width conversion; use a cast)", e.Op, xt, yt)
		return tBad
	}
	if e.Op == "/" || e.Op == "%" {
		xv, xc := c.out.Const[e.X].(*big.Int)
		yv, yc := c.out.Const[e.Y].(*big.Int)
		// Like p4c, division needs a constant divisor (or a constant zero dividend, which
		// strength reduction removes).
		switch {
		case !yc && !(xc && xv.Sign() == 0):
			c.errorf(e.P, "operator %s needs a compile-time constant divisor", e.Op)
			return tBad
		case yc && yv.Sign() == 0:
			c.errorf(e.P, "division by zero")
			return tBad
		case xc && xv.Sign() < 0 || yc && yv.Sign() < 0:
			c.errorf(e.P, "operator %s is not defined for negative numbers", e.Op)
			return tBad
		}
	}
	switch t := xt.(type) {
	case *BitsType:
		if (e.Op == "/" || e.Op == "%") && t.Signed {
			c.errorf(e.P, "operator %s is not supported on signed values", e.Op)
			return tBad
		}
		return xt
	case *IntType:
		if e.Op == "|+|" || e.Op == "|-|" {
			c.errorf(e.P, "saturating arithmetic needs a fixed-width type")
			return tBad
		}
		return xt
	}
	c.errorf(e.P, "operator %s needs bit<> or int<> operands, not %s", e.Op, xt)
	return tBad
}

func isNumeric(t Type) bool {
	switch t.(type) {
	case *BitsType, *IntType:
		return true
	}
	return false
}

func (c *checker) listExpr(e *ListExpr, cx *ctx, want Type) Type {
	switch w := want.(type) {
	case *StructType:
		if len(w.Fields) != len(e.Elems) {
			c.errorf(e.P, "%s has %d fields but the list has %d elements", w, len(w.Fields), len(e.Elems))
			for _, el := range e.Elems {
				c.expr(el, cx, nil)
			}
			return tBad
		}
		for i, el := range e.Elems {
			c.expr(el, cx, w.Fields[i].T)
			c.assignable(w.Fields[i].T, el, "field "+w.Fields[i].Name)
		}
		return w
	case *TupleType:
		if len(w.Elems) == len(e.Elems) {
			for i, el := range e.Elems {
				c.expr(el, cx, w.Elems[i])
				c.assignable(w.Elems[i], el, "tuple element")
			}
			return w
		}
	}
	tt := &TupleType{}
	for _, el := range e.Elems {
		tt.Elems = append(tt.Elems, c.expr(el, cx, nil))
	}
	return tt
}

func (c *checker) structExpr(e *StructExpr, cx *ctx, want Type) Type {
	if w, ok := want.(*StructType); ok {
		seen := map[string]bool{}
		for _, f := range e.Fields {
			fd := w.Field(f.Name)
			if fd == nil {
				c.errorf(f.P, "%s has no field %s", w, f.Name)
				c.expr(f.Value, cx, nil)
				continue
			}
			seen[f.Name] = true
			c.expr(f.Value, cx, fd.T)
			c.assignable(fd.T, f.Value, "field "+f.Name)
		}
		for _, fd := range w.Fields {
			if !seen[fd.Name] {
				c.errorf(e.P, "struct expression for %s has no value for field %s", w, fd.Name)
			}
		}
		return w
	}
	st := &StructExprType{}
	for _, f := range e.Fields {
		st.Names = append(st.Names, f.Name)
		st.Elems = append(st.Elems, c.expr(f.Value, cx, nil))
	}
	return st
}

// assignable reports (and reports errors for) whether the checked expression e can be stored in
// a location of type dst; untyped integers are converted.
func (c *checker) assignable(dst Type, e Expr, what string) bool {
	src := e.Type()
	if isBad(src) || isBad(dst) || src == nil {
		return true
	}
	if sameType(dst, src) {
		return true
	}
	if _, ok := src.(*IntType); ok {
		switch underlying(dst).(type) {
		case *BitsType:
			// Like p4c, a literal that does not fit is truncated (p4c only warns).
			if _, isNew := dst.(*NewType); !isNew {
				c.convertInt(e, dst)
				return true
			}
		case *IntType:
			return true
		}
	}
	if se, ok := src.(*EnumType); ok && se.Underlying != nil && sameType(se.Underlying, dst) {
		return true // serializable enums convert implicitly to their underlying type
	}
	if _, ok := src.(*DontCareType); ok {
		return true
	}
	if _, ok := dst.(*TypeVar); ok {
		return true
	}
	c.errorf(e.Position(), "%s: cannot use a value of type %s where %s is expected%s", what, src, dst, castHint(src, dst))
	return false
}

func castHint(src, dst Type) string {
	if _, ok := src.(*BitsType); ok {
		if _, ok := dst.(*BitsType); ok {
			return " (no implicit width or sign conversion; use a cast)"
		}
		if _, ok := dst.(*BoolType); ok {
			return " (bit<1> is not bool; compare with 1)"
		}
	}
	if _, ok := src.(*BoolType); ok {
		if _, ok := dst.(*BitsType); ok {
			return " (bool is not bit<1>; use a cast or ?:)"
		}
	}
	return ""
}

// lvalue reports whether e denotes a writable location, with a reason if not.
func (c *checker) lvalue(e Expr) (bool, string) {
	switch e := e.(type) {
	case *NameExpr:
		switch d := e.Decl.(type) {
		case *VarDecl:
			return true, ""
		case *Param:
			switch d.Dir {
			case DirOut, DirInOut:
				return true, ""
			case DirIn:
				return false, "parameter " + d.Name + " has direction in and is read-only"
			}
			return false, "directionless parameter " + d.Name + " is read-only"
		case *ConstDecl:
			return false, d.Name + " is a constant"
		}
		return false, e.Name + " is not a variable"
	case *MemberExpr:
		if e.Kind == MemberField || e.Kind == MemberStackProp && (e.Name == "next" || e.Name == "last") {
			return c.lvalue(e.X)
		}
		return false, "expression is not a variable"
	case *IndexExpr:
		return c.lvalue(e.X)
	case *SliceExpr:
		return c.lvalue(e.X)
	case *DontCareExpr:
		return true, ""
	}
	return false, "expression is not a variable"
}
