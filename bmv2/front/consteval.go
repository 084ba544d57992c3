package front

import "math/big"

// evalConst computes the value of a checked expression if it is a compile-time constant. The
// operands' values are already in c.out.Const because expressions are checked bottom-up.
func (c *checker) evalConst(e Expr) (Value, bool) {
	k := c.out.Const
	switch e := e.(type) {
	case *IntExpr:
		if e.Lit == nil {
			return nil, false
		}
		if bt, ok := e.T.(*BitsType); ok {
			return wrap(e.Lit.Value, bt), true
		}
		return new(big.Int).Set(e.Lit.Value), true
	case *BoolExpr:
		return e.Val, true
	case *StringExpr:
		return e.Val, true
	case *NameExpr:
		if d, ok := e.Decl.(*ConstDecl); ok && d.Val != nil {
			return d.Val, true
		}
	case *MemberExpr:
		if e.Kind == MemberEnum {
			return e.Enum, true
		}
		if e.Kind == MemberStackProp && e.Name == "size" {
			if st, ok := e.X.Type().(*StackType); ok {
				return big.NewInt(int64(st.Size)), true
			}
		}
	case *CallExpr:
		if m, ok := e.Callee.(*MethodDecl); ok && m.Owner == nil && m.Name == "static_assert" && len(e.Args) > 0 {
			if b, ok := k[e.Args[0].Value].(bool); ok && b {
				return true, true
			}
		}
		if sizeMethods[e.Method] {
			if mr, ok := e.Fun.Type().(*MethodRef); ok {
				r := mr.Recv
				if tn, ok := r.(*TypeName); ok {
					r = tn.T
				}
				if w := WidthOf(r); w >= 0 {
					if e.Method == "minSizeInBytes" || e.Method == "maxSizeInBytes" {
						w = (w + 7) / 8
					}
					return big.NewInt(int64(w)), true
				}
			}
		}
	case *UnaryExpr:
		x, ok := k[e.X]
		if !ok {
			return nil, false
		}
		switch e.Op {
		case "!":
			if b, ok := x.(bool); ok {
				return !b, true
			}
		case "~":
			if v, ok := x.(*big.Int); ok {
				if bt, ok := e.T.(*BitsType); ok {
					return wrap(new(big.Int).Not(v), bt), true
				}
			}
		case "-":
			if v, ok := x.(*big.Int); ok {
				return fit(new(big.Int).Neg(v), e.T), true
			}
		case "+":
			return x, true
		}
	case *BinaryExpr:
		x, ok1 := k[e.X]
		y, ok2 := k[e.Y]
		if !ok1 || !ok2 {
			return nil, false
		}
		return binaryConst(e.Op, x, y, e.X.Type(), e.Y.Type(), e.T)
	case *TernaryExpr:
		cv, ok := k[e.Cond].(bool)
		if !ok {
			return nil, false
		}
		if cv {
			v, ok := k[e.Then]
			return v, ok
		}
		v, ok := k[e.Else]
		return v, ok
	case *CastExpr:
		x, ok := k[e.X]
		if !ok {
			return nil, false
		}
		return castValue(x, e.T), true
	case *SliceExpr:
		v, ok := k[e.X].(*big.Int)
		if !ok {
			return nil, false
		}
		r := new(big.Int).Rsh(v, uint(e.LoV))
		return wrap(r, bitsT(e.HiV-e.LoV+1)), true
	case *StructExpr:
		st, ok := e.T.(*StructType)
		if !ok {
			return nil, false
		}
		vs := make([]Value, len(st.Fields))
		for _, f := range e.Fields {
			v, ok := k[f.Value]
			if !ok {
				return nil, false
			}
			for i, sf := range st.Fields {
				if sf.Name == f.Name {
					vs[i] = v
				}
			}
		}
		return vs, true
	case *ListExpr:
		var vs []Value
		for _, el := range e.Elems {
			v, ok := k[el]
			if !ok {
				return nil, false
			}
			vs = append(vs, v)
		}
		return vs, true
	}
	return nil, false
}

func fit(v *big.Int, t Type) *big.Int {
	if bt, ok := t.(*BitsType); ok {
		return wrap(v, bt)
	}
	return v
}

func binaryConst(op string, x, y Value, xt, yt, t Type) (Value, bool) {
	switch op {
	case "&&", "||":
		a, ok1 := x.(bool)
		b, ok2 := y.(bool)
		if !ok1 || !ok2 {
			return nil, false
		}
		if op == "&&" {
			return a && b, true
		}
		return a || b, true
	case "==", "!=":
		eq := valuesEqual(x, y)
		return eq == (op == "=="), true
	}
	// Serializable enum members take part in arithmetic through their values.
	if m, ok := x.(*EnumMember); ok && m.Val != nil {
		x = m.Val
	}
	if m, ok := y.(*EnumMember); ok && m.Val != nil {
		y = m.Val
	}
	a, ok1 := x.(*big.Int)
	b, ok2 := y.(*big.Int)
	if !ok1 || !ok2 {
		return nil, false
	}
	r := new(big.Int)
	switch op {
	case "<":
		return a.Cmp(b) < 0, true
	case ">":
		return a.Cmp(b) > 0, true
	case "<=":
		return a.Cmp(b) <= 0, true
	case ">=":
		return a.Cmp(b) >= 0, true
	case "+":
		r.Add(a, b)
	case "-":
		r.Sub(a, b)
	case "*":
		if a.BitLen()+b.BitLen() > maxConstBits {
			return nil, false
		}
		r.Mul(a, b)
	case "/", "%":
		if b.Sign() == 0 {
			return nil, false
		}
		if op == "/" {
			r.Quo(a, b)
		} else {
			r.Rem(a, b)
		}
	case "&":
		r.And(a, b)
	case "|":
		r.Or(a, b)
	case "^":
		r.Xor(a, b)
	case "<<":
		if !b.IsInt64() || b.Int64() > 1<<16 || int64(a.BitLen())+b.Int64() > maxConstBits {
			return nil, false
		}
		r.Lsh(a, uint(b.Int64()))
	case ">>":
		if !b.IsInt64() || b.Int64() > 1<<16 {
			return nil, false
		}
		r.Rsh(a, uint(b.Int64()))
	case "|+|", "|-|":
		if op == "|+|" {
			r.Add(a, b)
		} else {
			r.Sub(a, b)
		}
		if bt, ok := t.(*BitsType); ok {
			lo, hi := bitsRange(bt)
			if r.Cmp(lo) < 0 {
				r.Set(lo)
			}
			if r.Cmp(hi) > 0 {
				r.Set(hi)
			}
		}
		return r, true
	case "++":
		if ex, ok := xt.(*EnumType); ok && ex.Underlying != nil {
			xt = ex.Underlying
		}
		if ey, ok := yt.(*EnumType); ok && ey.Underlying != nil {
			yt = ey.Underlying
		}
		bx, ok1 := xt.(*BitsType)
		by, ok2 := yt.(*BitsType)
		bt, ok3 := t.(*BitsType)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		hi := wrap(a, &BitsType{Width: bx.Width})
		lo := wrap(b, &BitsType{Width: by.Width})
		r.Lsh(hi, uint(by.Width)).Or(r, lo)
		return wrap(r, bt), true
	default:
		return nil, false
	}
	if r.BitLen() > maxConstBits {
		return nil, false
	}
	return fit(r, t), true
}

// maxConstBits bounds the width of a constant the front end folds (an int's value has no width
// of its own: 1 << 65536 is a constant; (1 << 65536) * (1 << 65536) ... is not, so that a hostile
// program cannot make constant folding take gigabytes). It is 64 times the widest bit<> type.
const maxConstBits = 64 * maxWidth

func bitsRange(t *BitsType) (lo, hi *big.Int) {
	if t.Signed {
		hi = new(big.Int).Lsh(big.NewInt(1), uint(t.Width-1))
		lo = new(big.Int).Neg(hi)
		hi.Sub(hi, big.NewInt(1))
		return lo, hi
	}
	hi = new(big.Int).Lsh(big.NewInt(1), uint(t.Width))
	hi.Sub(hi, big.NewInt(1))
	return big.NewInt(0), hi
}

func valuesEqual(x, y Value) bool {
	if m, ok := x.(*EnumMember); ok && m.Val != nil {
		if n, ok := y.(*EnumMember); ok && n.Val != nil {
			x, y = m.Val, n.Val
		} else if _, ok := y.(*big.Int); ok {
			x = m.Val
		}
	} else if n, ok := y.(*EnumMember); ok && n.Val != nil {
		if _, ok := x.(*big.Int); ok {
			y = n.Val
		}
	}
	switch a := x.(type) {
	case *big.Int:
		b, ok := y.(*big.Int)
		return ok && a.Cmp(b) == 0
	case []Value:
		b, ok := y.([]Value)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !valuesEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return x == y
}

// castValue converts a constant to type t.
func castValue(v Value, t Type) Value {
	switch tt := underlying(t).(type) {
	case *BitsType:
		switch x := v.(type) {
		case *big.Int:
			return wrap(x, tt)
		case bool:
			if x {
				return big.NewInt(1)
			}
			return big.NewInt(0)
		case *EnumMember:
			if x.Val != nil {
				if b, ok := x.Val.(*big.Int); ok {
					return wrap(b, tt)
				}
			}
		}
	case *BoolType:
		if x, ok := v.(*big.Int); ok {
			return x.Sign() != 0
		}
	case *EnumType:
		if x, ok := v.(*big.Int); ok && tt.Underlying != nil {
			w := wrap(x, tt.Underlying)
			for _, m := range tt.Decl.Members {
				if b, ok := m.Val.(*big.Int); ok && b.Cmp(w) == 0 {
					return m
				}
			}
			return w
		}
	}
	return v
}
