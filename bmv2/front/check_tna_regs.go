package front

import (
	"math/big"
	"sort"
	"strings"
)

// This file holds the rules of p4c's Tofino backend (bf-p4c, p4c git 34b86e9) on registers and
// expressions that a type checker can see, with the compiler's reasons:
//
//   - at most four register actions per Register (midend/register_read_write.cpp,
//     CheckRegisterActions: a stateful ALU holds four instructions, Tofino 1 and 2): the
//     RegisterAction instances on it, and one generated register action per action that calls
//     the Register's read or write;
//   - a RegisterAction's cell type is the Register's, or of a width that, with the difference
//     of the index widths, covers the same memory (midend/check_register_actions.cpp);
//   - a Register used by register actions holds bit<8>, bit<16>, bit<32> (or int<>), bit<1>,
//     bit<64>, or a struct of one or two fields of one of the first three widths
//     (mau/stateful_alu.cpp, CreateSaluInstruction: "Unsupported Register element type");
//   - no cast of a cast of a cast, and no widening cast of a narrowing cast, also where the
//     compiler first moves a cast into the operands of &, |, ^, + and - (midend/elim_cast.cpp,
//     SimplifyOperationBinary and SimplifyNestedCasts: "too complex to handle, consider
//     simplifying the nested casts").

// tnaMaxRegisterActions is Device::statefulAluSpec().MaxInstructions (Tofino 1 and 2).
const tnaMaxRegisterActions = 4

// tnaRegisterRules checks the per-register rules of the Tofino compiler over the whole program.
func (c *checker) tnaRegisterRules() {
	regs := map[*InstanceDecl]*regUse{}
	use := func(r *InstanceDecl) *regUse {
		u := regs[r]
		if u == nil {
			u = &regUse{}
			regs[r] = u
		}
		return u
	}
	var actions []*ActionDecl
	var instances, salus []*InstanceDecl
	var collect func(ds []Decl)
	collect = func(ds []Decl) {
		for _, d := range ds {
			switch d := d.(type) {
			case *ActionDecl:
				actions = append(actions, d)
			case *InstanceDecl:
				instances = append(instances, d)
			case *ControlDecl:
				collect(d.Locals)
			case *ParserDecl:
				collect(d.Locals)
			}
		}
	}
	collect(c.out.Program.Decls)
	for _, d := range instances {
		et, ok := d.T.(*ExternType)
		if !ok || !isTNAExtern(et.Decl) || et.Decl.Name != "RegisterAction" || len(d.Args) == 0 {
			continue
		}
		reg := registerOf(d.Args[0].Value)
		if reg == nil {
			continue
		}
		u := use(reg)
		u.actions = append(u.actions, d.Name)
		c.tnaRegisterActionType(d, et, reg)
		salus = append(salus, d)
	}
	c.tnaSALURules(salus)
	for _, a := range actions {
		seen := map[*InstanceDecl]bool{}
		walkStmt(a.Body, func(e Expr) {
			call, ok := e.(*CallExpr)
			if !ok {
				return
			}
			m, ok := call.Callee.(*MethodDecl)
			if !ok || m.Owner == nil || !isTNAExtern(m.Owner) || m.Owner.Name != "Register" || (m.Name != "read" && m.Name != "write") {
				return
			}
			me, ok := call.Fun.(*MemberExpr)
			if !ok {
				return
			}
			reg := registerOf(me.X)
			if reg == nil || seen[reg] {
				return
			}
			seen[reg] = true
			u := use(reg)
			u.generated = append(u.generated, a.Name)
		})
	}
	ordered := make([]*InstanceDecl, 0, len(regs))
	for r := range regs {
		ordered = append(ordered, r)
	}
	sort.Slice(ordered, func(i, j int) bool {
		a, b := ordered[i].P, ordered[j].P
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	for _, r := range ordered {
		u := regs[r]
		c.tnaRegisterElement(r)
		n := len(u.actions) + len(u.generated)
		if n <= tnaMaxRegisterActions {
			continue
		}
		if len(u.generated) > 0 {
			c.errorf(r.P, "%s: too many actions access the Register: the target architecture limits the number of actions accessing a single register to %d (%d: register actions %s; actions calling read or write %s)",
				r.Name, tnaMaxRegisterActions, n, listOrNone(u.actions), listOrNone(u.generated))
			continue
		}
		c.errorf(r.P, "%s: too many RegisterActions attached to the Register: the target architecture limits the number of RegisterActions attached to a single Register to %d (%d attached: %s)",
			r.Name, tnaMaxRegisterActions, n, strings.Join(u.actions, ", "))
	}
}

// regUse lists what uses one Register: RegisterAction instances, and actions that call its read
// or write (the compiler makes a register action of each).
type regUse struct {
	actions, generated []string
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// registerOf returns the TNA Register instance an expression names, or nil.
func registerOf(e Expr) *InstanceDecl {
	n, ok := e.(*NameExpr)
	if !ok {
		return nil
	}
	d, ok := n.Decl.(*InstanceDecl)
	if !ok {
		return nil
	}
	if et, ok := d.T.(*ExternType); !ok || !isTNAExtern(et.Decl) || et.Decl.Name != "Register" {
		return nil
	}
	return d
}

// tnaRegisterActionType checks a RegisterAction's cell and index types against its Register's
// as bf-p4c's CheckRegisterActions does: equal cell widths are fine whatever the index types;
// otherwise the cells must tile the same memory, the narrower cells having as many more index
// bits as it takes (Register<bit<32>, bit<10>> and RegisterAction<bit<16>, bit<11>, _>).
func (c *checker) tnaRegisterActionType(d *InstanceDecl, at *ExternType, reg *InstanceDecl) {
	rt, ok := reg.T.(*ExternType)
	if !ok || len(at.Args) < 2 || len(rt.Args) < 2 || at.Args[0] == nil || at.Args[1] == nil || rt.Args[0] == nil || rt.Args[1] == nil {
		return
	}
	if isDontCare(at.Args[0]) || isDontCare(at.Args[1]) {
		return
	}
	aw, ai := WidthOf(at.Args[0]), WidthOf(at.Args[1])
	rw, ri := WidthOf(rt.Args[0]), WidthOf(rt.Args[1])
	if aw < 0 || ai < 0 || rw < 0 || ri < 0 || aw == rw {
		return
	}
	diff := ai - ri
	if diff < 0 {
		diff = -diff
	}
	scaled := func(w int) *big.Int { return new(big.Int).Lsh(big.NewInt(int64(w)), uint(diff)) }
	var ok2 bool
	if ri >= ai {
		ok2 = scaled(rw).Cmp(big.NewInt(int64(aw))) == 0
	} else {
		ok2 = scaled(aw).Cmp(big.NewInt(int64(rw))) == 0
	}
	if !ok2 {
		c.errorf(d.P, "RegisterAction %s does not match the type of register it uses: %s cells indexed by %s on %s, a Register of %s cells indexed by %s",
			d.Name, at.Args[0], at.Args[1], reg.Name, rt.Args[0], rt.Args[1])
	}
}

func isDontCare(t Type) bool { return t == tDC }

// tnaRegisterElement checks the cell type of a Register that register actions use, as
// bf-p4c's stateful ALU allows it on Tofino 1.
func (c *checker) tnaRegisterElement(reg *InstanceDecl) {
	rt, ok := reg.T.(*ExternType)
	if !ok || len(rt.Args) == 0 || rt.Args[0] == nil || isDontCare(rt.Args[0]) {
		return
	}
	t := underlying(rt.Args[0])
	okType := false
	switch x := t.(type) {
	case *BitsType:
		okType = x.Width == 1 || x.Width == 8 || x.Width == 16 || x.Width == 32 || x.Width == 64
	case *StructType:
		if len(x.Fields) >= 1 && len(x.Fields) <= 2 {
			f0, ok := underlying(x.Fields[0].T).(*BitsType)
			okType = ok && (f0.Width == 8 || f0.Width == 16 || f0.Width == 32)
			if okType && len(x.Fields) == 2 {
				okType = sameType(x.Fields[0].T, x.Fields[1].T)
			}
		}
	}
	if !okType {
		c.errorf(reg.P, "Unsupported Register element type %s for %s: a register with register actions holds bit<8>, bit<16> or bit<32> (or int<> of these), bit<1>, bit<64>, or a struct of one or two fields of one of the first three",
			rt.Args[0], reg.Name)
	}
}

// tnaNestedCasts reports the nested casts bf-p4c's ElimCasts refuses, outside table keys
// (the pass ignores key elements).
func (c *checker) tnaNestedCasts() {
	keys := map[Expr]bool{}
	var collect func(ds []Decl)
	collect = func(ds []Decl) {
		for _, d := range ds {
			switch d := d.(type) {
			case *TableDecl:
				for _, p := range d.Props {
					for _, k := range p.Keys {
						walkExpr(k.Expr, func(e Expr) { keys[e] = true })
					}
				}
			case *ControlDecl:
				collect(d.Locals)
			case *ParserDecl:
				collect(d.Locals)
			}
		}
	}
	collect(c.out.Program.Decls)
	reported := map[Expr]bool{}
	Inspect(c.out.Program, func(e Expr) {
		cast, ok := e.(*CastExpr)
		if !ok || keys[e] {
			return
		}
		c.nestedCast(cast, castBits(cast), cast.X, reported)
	})
}

// castBits returns the unsigned bit<> type a cast converts to, or nil.
func castBits(x *CastExpr) *BitsType {
	b, ok := x.Type().(*BitsType)
	if !ok || b.Signed {
		return nil
	}
	return b
}

// nestedCast checks the operand x of the cast outer to bit<a> after SimplifyOperationBinary
// has moved the cast into the operands of unsigned &, |, ^ (and of +, -, |+|, |-| when it
// does not widen them).
func (c *checker) nestedCast(outer *CastExpr, a *BitsType, x Expr, reported map[Expr]bool) {
	if a == nil {
		return
	}
	switch y := x.(type) {
	case *BinaryExpr:
		lt, lok := y.X.Type().(*BitsType)
		rt, rok := y.Y.Type().(*BitsType)
		bt, bok := y.Type().(*BitsType)
		if !lok || !rok || !bok || lt.Signed || rt.Signed {
			return
		}
		switch y.Op {
		case "&", "|", "^":
		case "+", "-":
			if a.Width > bt.Width {
				return // widening would change the carry
			}
		case "|+|", "|-|":
			if a.Width == bt.Width {
				break
			}
			return
		default:
			return
		}
		c.nestedCast(outer, a, y.X, reported)
		c.nestedCast(outer, a, y.Y, reported)
	case *CastExpr:
		b := castBits(y)
		if b == nil || reported[y] {
			return
		}
		if _, isConst := c.out.Const[y]; isConst {
			return // folded by the front end
		}
		if inner, ok := y.X.(*CastExpr); ok {
			if _, isConst := c.out.Const[inner]; !isConst {
				reported[y] = true
				c.errorf(outer.P, "expression %s is too complex to handle, consider simplifying the nested casts (the Tofino compiler takes at most two levels of casts)", ExprString(outer))
			}
			return
		}
		cT, ok := y.X.Type().(*BitsType)
		if !ok || cT.Signed {
			return
		}
		if a.Width > b.Width && b.Width < cT.Width {
			reported[y] = true
			c.errorf(outer.P, "expression %s is too complex to handle, consider simplifying the nested casts (the Tofino compiler cannot widen to bit<%d> a cast of a bit<%d> value to bit<%d>: write a mask or a slice)",
				ExprString(outer), a.Width, cT.Width, b.Width)
		}
	}
}
