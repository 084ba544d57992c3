package front

import (
	"fmt"
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
//     the Register's read or write, counted on the program as the front end leaves it
//     (tnaRegisterRules);
//   - a RegisterAction's cell type is the Register's, or of a width that, with the difference
//     of the index widths, covers the same memory (midend/check_register_actions.cpp);
//   - a Register used by register actions holds bit<8>, bit<16>, bit<32> (or int<>), bit<1>,
//     bit<64>, or a struct of one or two fields of one of the first three widths
//     (mau/stateful_alu.cpp, CreateSaluInstruction: "Unsupported Register element type");
//   - the register actions a program executes on one Register read at most two PHV inputs
//     together, a slice counting as an input of its own (mau/tofino/input_xbar.cpp: "requires
//     more than 2 PHV inputs"; tnaRegisterInputs, check_tna_salu_inputs.go);
//   - no cast of a cast of a cast, and no widening cast of a narrowing cast, also where the
//     compiler first moves a cast into the operands of &, |, ^, + and - (midend/elim_cast.cpp,
//     SimplifyOperationBinary and SimplifyNestedCasts: "too complex to handle, consider
//     simplifying the nested casts"), on the expressions as the front end leaves them
//     (tnaNestedCasts).

// tnaMaxRegisterActions is Device::statefulAluSpec().MaxInstructions (Tofino 1 and 2).
const tnaMaxRegisterActions = 4

// tnaRegisterRules checks the per-register rules of the Tofino compiler over the whole program.
//
// It counts what bf-p4c's CheckRegisterActions counts, on the program as p4c's front end leaves
// it: controls that main does not reach are removed (RemoveAllUnusedDeclarations), the others
// inlined once per instance (so a control's own Register is one per instance, and a top-level
// Register gets the register actions of every instance); RegisterAction instances are extern
// instances, kept even when nothing executes them, so they count whether used or not; an action
// is copied for each table that lists it and each direct call (LocalizeAllActions), actions and
// functions it calls are inlined into it, and unused ones are removed; statements of an apply
// block become actions of their own (SynthesizeActions with bf-p4c's ActionSynthesisPolicy: one
// per statement that uses an extern, a write right after a read of the same Register joining it).
// Each resulting action that calls a Register's read or write is one more register action on it
// (RegisterReadWrite).
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
	var withApply []*InstanceDecl
	addSALUs := func(ds []Decl) {
		for _, d := range ds {
			inst, ok := d.(*InstanceDecl)
			if !ok {
				continue
			}
			if et, ok := inst.T.(*ExternType); ok && isTNAExtern(et.Decl) && et.Decl.Name == "RegisterAction" {
				withApply = append(withApply, inst)
			}
		}
	}
	for _, d := range c.out.Program.Decls {
		switch d := d.(type) {
		case *InstanceDecl:
			addSALUs([]Decl{d})
		case *ControlDecl:
			addSALUs(d.Locals)
		case *ParserDecl:
			addSALUs(d.Locals)
		}
	}
	c.tnaSALURules(withApply)

	instances := c.tnaControlInstances()
	// times is how many register actions one occurrence in control d makes on reg: one per
	// instance of d for a top-level Register, one for d's own (each instance has its own).
	times := func(d *ControlDecl, reg *InstanceDecl) int {
		if d == nil || isLocal(d, reg) {
			return 1
		}
		return instances[d]
	}
	attach := func(d *ControlDecl, inst *InstanceDecl) {
		et, ok := inst.T.(*ExternType)
		if !ok || !isTNAExtern(et.Decl) || et.Decl.Name != "RegisterAction" || len(inst.Args) == 0 {
			return
		}
		reg := registerOf(inst.Args[0].Value)
		if reg == nil {
			return
		}
		c.tnaRegisterActionType(inst, et, reg)
		u := use(reg)
		u.salus = append(u.salus, inst)
		for i := 0; i < times(d, reg); i++ {
			u.actions = append(u.actions, inst.Name)
		}
	}
	for _, d := range c.out.Program.Decls {
		if inst, ok := d.(*InstanceDecl); ok {
			attach(nil, inst)
		}
	}
	controls := make([]*ControlDecl, 0, len(instances))
	for d := range instances {
		controls = append(controls, d)
	}
	sort.Slice(controls, func(i, j int) bool { return posLess(controls[i].P, controls[j].P) })
	for _, d := range controls {
		for _, l := range d.Locals {
			if inst, ok := l.(*InstanceDecl); ok {
				attach(d, inst)
			}
		}
		for _, g := range registerAccessors(d) {
			for _, reg := range g.regs {
				u := use(reg)
				for i := 0; i < times(d, reg); i++ {
					u.generated = append(u.generated, g.name)
				}
			}
		}
	}
	ordered := make([]*InstanceDecl, 0, len(regs))
	for r := range regs {
		ordered = append(ordered, r)
	}
	sort.Slice(ordered, func(i, j int) bool { return posLess(ordered[i].P, ordered[j].P) })
	executed := c.executedSALUs()
	for _, r := range ordered {
		u := regs[r]
		c.tnaRegisterElement(r)
		c.tnaRegisterInputs(r, u.salus, executed)
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

func posLess(a, b Pos) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

// isLocal reports whether inst is one of control d's own declarations.
func isLocal(d *ControlDecl, inst *InstanceDecl) bool {
	for _, l := range d.Locals {
		if l == Decl(inst) {
			return true
		}
	}
	return false
}

// tnaControlInstances returns the controls main reaches, with how many instances of each p4c's
// inlining makes: one per constructor call or instance in main's arguments (through packages
// such as Pipeline), and, inside a control, one per instance of another control it applies.
// Without a main every control counts once (p4c would stop before its checks).
func (c *checker) tnaControlInstances() map[*ControlDecl]int {
	n := map[*ControlDecl]int{}
	if c.out.Main == nil {
		for _, d := range c.out.Program.Decls {
			if cd, ok := d.(*ControlDecl); ok {
				n[cd] = 1
			}
		}
		return n
	}
	var control func(d *ControlDecl, depth int)
	var expr func(e Expr, depth int)
	instance := func(inst *InstanceDecl, depth int) {
		switch t := inst.T.(type) {
		case *ControlType:
			control(t.Decl, depth)
		case *PackageType:
			for _, a := range inst.Args {
				expr(a.Value, depth)
			}
		}
	}
	expr = func(e Expr, depth int) {
		switch x := e.(type) {
		case *CallExpr:
			if d, ok := x.Callee.(*ControlDecl); ok {
				control(d, depth)
				return
			}
			if _, ok := x.Callee.(*ParserDecl); ok {
				return
			}
			for _, a := range x.Args {
				expr(a.Value, depth)
			}
		case *NameExpr:
			if inst, ok := x.Decl.(*InstanceDecl); ok {
				instance(inst, depth)
			}
		}
	}
	control = func(d *ControlDecl, depth int) {
		if d == nil || depth > 64 {
			return
		}
		n[d]++
		used := controlUsage(d)
		for _, l := range d.Locals {
			if inst, ok := l.(*InstanceDecl); ok && used[inst] {
				if t, ok := inst.T.(*ControlType); ok {
					control(t.Decl, depth+1)
				}
			}
		}
	}
	instance(c.out.Main, 0)
	return n
}

// regAccess is one action of control d after p4c's front and mid end (a table's copy of an
// action, a directly called one, or statements of the apply block made into one), with the
// Registers whose read or write it calls.
type regAccess struct {
	name string
	regs []*InstanceDecl
}

// registerAccessors returns the actions of control d that call a Register's read or write, one
// per copy p4c makes of it.
func registerAccessors(d *ControlDecl) []regAccess {
	var out []regAccess
	used := controlUsage(d)
	for _, l := range d.Locals {
		t, ok := l.(*TableDecl)
		if !ok || !used[t] {
			continue
		}
		seen := map[*ActionDecl]bool{}
		add := func(a *ActionDecl) {
			if a == nil || seen[a] {
				return
			}
			seen[a] = true
			if regs := registersCalled(a.Body, map[Decl]bool{}); len(regs) > 0 {
				out = append(out, regAccess{a.Name + " (in table " + t.Name + ")", regs})
			}
		}
		for _, p := range t.Props {
			for _, ar := range p.Actions {
				add(ar.Action)
			}
			for _, e := range p.Entries {
				add(e.Action.Action)
			}
		}
	}
	var block func(s Stmt)
	block = func(s Stmt) {
		switch s := s.(type) {
		case *BlockStmt:
			if s == nil {
				return
			}
			var prev *registerCall // the read that ends the current synthesized action
			for _, x := range s.Stmts {
				moved, call, action := synthesized(x)
				if action != nil {
					if regs := registersCalled(action.Body, map[Decl]bool{}); len(regs) > 0 {
						out = append(out, regAccess{fmt.Sprintf("%s (called at line %d)", action.Name, x.Position().Line), regs})
					}
				}
				if !moved {
					prev = nil
					block(x)
					continue
				}
				if call == nil {
					prev = nil
					continue
				}
				if prev != nil && prev.method == "read" && call.method == "write" && prev.reg == call.reg {
					prev = nil // one register action with the read
					continue
				}
				out = append(out, regAccess{fmt.Sprintf("the statement at line %d", x.Position().Line), []*InstanceDecl{call.reg}})
				prev = call
			}
		case *IfStmt:
			block(asBlock(s.Then))
			block(asBlock(s.Else))
		case *SwitchStmt:
			for _, cs := range s.Cases {
				if cs.Body != nil {
					block(cs.Body)
				}
			}
		}
	}
	block(d.Body)
	return out
}

// asBlock wraps a single statement as a block (p4c makes an action of a lone statement).
func asBlock(s Stmt) Stmt {
	if s == nil {
		return nil
	}
	if b, ok := s.(*BlockStmt); ok {
		return b
	}
	return &BlockStmt{P: s.Position(), Stmts: []Stmt{s}}
}

// registerCall is a statement's call of a Register's read or write.
type registerCall struct {
	reg    *InstanceDecl
	method string
}

// synthesized reports whether SynthesizeActions moves statement s of an apply block into an
// action (assignments, extern and function calls, exit; not table applies or action calls),
// the Register read or write such a statement calls (nil if none, or if it calls several), and
// the action s calls directly.
func synthesized(s Stmt) (moved bool, call *registerCall, action *ActionDecl) {
	var e Expr
	switch s := s.(type) {
	case *AssignStmt:
		moved, e = true, s.RHS
	case *DeclStmt:
		v, ok := s.Decl.(*VarDecl)
		if !ok || v.Init == nil {
			return false, nil, nil
		}
		moved, e = true, v.Init
	case *CallStmt:
		switch callee := s.Call.Callee.(type) {
		case *ActionDecl:
			return false, nil, callee
		case *TableDecl:
			return false, nil, nil
		}
		if s.Call.Method == "apply" {
			return false, nil, nil
		}
		moved, e = true, s.Call
	case *ExitStmt:
		return true, nil, nil
	default:
		return false, nil, nil
	}
	walkExpr(e, func(x Expr) {
		if rc := registerMethod(x); rc != nil {
			call = rc
		}
	})
	return moved, call, nil
}

// registerMethod returns the Register read or write that x calls, or nil.
func registerMethod(x Expr) *registerCall {
	call, ok := x.(*CallExpr)
	if !ok {
		return nil
	}
	m, ok := call.Callee.(*MethodDecl)
	if !ok || m.Owner == nil || !isTNAExtern(m.Owner) || m.Owner.Name != "Register" || (m.Name != "read" && m.Name != "write") {
		return nil
	}
	me, ok := call.Fun.(*MemberExpr)
	if !ok {
		return nil
	}
	reg := registerOf(me.X)
	if reg == nil {
		return nil
	}
	return &registerCall{reg, m.Name}
}

// registersCalled lists the Registers whose read or write body calls, also through the actions
// and functions it calls (p4c inlines them), in order of first call.
func registersCalled(body *BlockStmt, visiting map[Decl]bool) []*InstanceDecl {
	var out []*InstanceDecl
	seen := map[*InstanceDecl]bool{}
	add := func(r *InstanceDecl) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	walkStmt(body, func(e Expr) {
		if rc := registerMethod(e); rc != nil {
			add(rc.reg)
			return
		}
		call, ok := e.(*CallExpr)
		if !ok {
			return
		}
		var inner *BlockStmt
		switch callee := call.Callee.(type) {
		case *ActionDecl:
			inner = callee.Body
		case *FunctionDecl:
			inner = callee.Body
		default:
			return
		}
		if inner == nil || visiting[call.Callee] {
			return
		}
		visiting[call.Callee] = true
		for _, r := range registersCalled(inner, visiting) {
			add(r)
		}
		delete(visiting, call.Callee)
	})
	return out
}

// regUse lists what uses one Register: RegisterAction instances, and actions that call its read
// or write (the compiler makes a register action of each).
type regUse struct {
	actions, generated []string
	salus              []*InstanceDecl // the RegisterAction instances on it, once each
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
// (the pass ignores key elements), on the expressions as p4c's front end leaves them: casts of
// constants folded, casts to the type their operand already has removed (UselessCasts), and
// casts right under a slice that keeps only bits the cast's operand has removed
// (StrengthReduction: ((bit<32>)(bit<16>)x)[7:0] is x[7:0]); controls main does not reach and
// a control's unused actions and tables are gone too (RemoveAllUnusedDeclarations).
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
	// What p4c's front end removes before ElimCasts is not seen: controls main does not reach,
	// and a reached control's actions and tables that nothing uses.
	instances := c.tnaControlInstances()
	inspect := func(f func(Expr)) {
		for _, d := range c.out.Program.Decls {
			cd, ok := d.(*ControlDecl)
			if !ok {
				inspectDecl(d, f)
				continue
			}
			if instances[cd] == 0 {
				continue
			}
			used := controlUsage(cd)
			inspectParams(cd.Params, f)
			inspectParams(cd.CtorParams, f)
			for _, l := range cd.Locals {
				switch l.(type) {
				case *ActionDecl, *TableDecl:
					if !used[l] {
						continue
					}
				}
				inspectDecl(l, f)
			}
			if cd.Body != nil {
				walkStmt(cd.Body, f)
			}
		}
	}
	gone := map[Expr]bool{}
	inspect(func(e Expr) {
		sl, ok := e.(*SliceExpr)
		if !ok {
			return
		}
		for x := sl.X; ; {
			cast, ok := x.(*CastExpr)
			if !ok {
				break
			}
			b, ok := underlying(cast.X.Type()).(*BitsType)
			if !uselessCast(cast) && (!ok || sl.HiV >= b.Width) {
				break
			}
			gone[cast] = true
			x = cast.X
		}
	})
	reported := map[Expr]bool{}
	inspect(func(e Expr) {
		cast, ok := e.(*CastExpr)
		if !ok || keys[e] || gone[e] || uselessCast(cast) || c.isConst(cast) {
			return
		}
		c.nestedCast(cast, cast.X, reported)
	})
}

// uselessCast reports whether x casts its operand to the type it has (p4c's front end drops it).
func uselessCast(x *CastExpr) bool {
	return x.X.Type() != nil && x.Type() != nil && sameType(x.X.Type(), x.Type())
}

// stripUseless returns e without the useless casts on top of it.
func stripUseless(e Expr) Expr {
	for {
		x, ok := e.(*CastExpr)
		if !ok || !uselessCast(x) {
			return e
		}
		e = x.X
	}
}

func (c *checker) isConst(e Expr) bool {
	_, ok := c.out.Const[e]
	return ok
}

// castBits returns the unsigned bit<> type a cast converts to (through new types, which p4c's
// mid end removes before ElimCasts), or nil.
func castBits(x *CastExpr) *BitsType {
	return unsignedBits(x.Type())
}

func unsignedBits(t Type) *BitsType {
	b, ok := underlying(t).(*BitsType)
	if !ok || b.Signed {
		return nil
	}
	return b
}

// nestedCast checks the operand x of the cast outer as SimplifyNestedCasts sees it, after
// SimplifyOperationBinary has moved outer into the operands of unsigned &, |, ^ (and of +, -,
// |+|, |-| when that does not widen them): a cast of a cast of a cast, whatever the types; and,
// all three unsigned bit<>, (bit<a>)(bit<b>)x of a bit<c> x with a > b and b < c (b == c would
// have been a useless cast).
func (c *checker) nestedCast(outer *CastExpr, x Expr, reported map[Expr]bool) {
	x = stripUseless(x)
	switch y := x.(type) {
	case *BinaryExpr:
		at, aok := underlying(outer.Type()).(*BitsType)
		lt, lok := underlying(y.X.Type()).(*BitsType)
		rt, rok := underlying(y.Y.Type()).(*BitsType)
		bt, bok := underlying(y.Type()).(*BitsType)
		if !aok || !lok || !rok || !bok || lt.Signed || rt.Signed {
			return
		}
		switch y.Op {
		case "&", "|", "^":
		case "+", "-":
			if at.Width > bt.Width {
				return // widening would change the carry
			}
		case "|+|", "|-|":
			if at.Width != bt.Width {
				return
			}
		default:
			return
		}
		c.nestedCast(outer, y.X, reported)
		c.nestedCast(outer, y.Y, reported)
	case *CastExpr:
		if reported[y] || c.isConst(y) {
			return
		}
		if inner, ok := stripUseless(y.X).(*CastExpr); ok && !c.isConst(inner) {
			reported[y] = true
			c.errorf(outer.P, "expression %s is too complex to handle, consider simplifying the nested casts (the Tofino compiler takes at most two levels of casts)", ExprString(outer))
			return
		}
		a, b, cT := castBits(outer), castBits(y), unsignedBits(y.X.Type())
		if a == nil || b == nil || cT == nil {
			return
		}
		if a.Width > b.Width && b.Width < cT.Width {
			reported[y] = true
			c.errorf(outer.P, "expression %s is too complex to handle, consider simplifying the nested casts (the Tofino compiler cannot widen to bit<%d> a cast of a bit<%d> value to bit<%d>: write a mask or a slice)",
				ExprString(outer), a.Width, cT.Width, b.Width)
		}
	}
}
