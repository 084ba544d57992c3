package front

import (
	"math/big"
	"sort"
	"strings"
)

// This file checks register actions that bf-p4c cannot turn into one stateful ALU instruction
// (backends/tofino/bf-p4c/mau/stateful_alu.cpp, CreateSaluInstruction, p4c git 34b86e9; the
// device figures in specs/device.cpp). The rules are read from the compiler's source and have
// not been checked against the compiler yet (docs/dataplane.md, "The real compiler"). Three
// rules:
//
//   - comparisons: every distinct relation (==, !=, <, >, <=, >=; a relation and its negation,
//     or the same one with its operands swapped, share one unit) takes a comparison unit, of
//     which an instruction has 2 on Tofino 1 and 4 on Tofino 2 ("needs N comparisons but the
//     device only has 2 comparison units", line 506);
//   - a slice of a parameter of apply (the register's value, or an output) in a relation of a
//     condition ("slice of register value in condition is not supported", line 954);
//   - a concatenation with a part that is a parameter or a local variable of apply (not a
//     packet field or a constant), unless it is a zero extension ("Bit concatenation result
//     cannot be assigned to an output parameter", line 1632);
//   - an operator (+, -, |+|, |-|, &, |, ^) with an operand that is itself one of +, -, |+|,
//     |-|, &, |, ^, /, % or a negation (checkAndReportComplexInstruction: "You can only have
//     more than one binary operator in a statement if the outer one is |", line 1528), except
//     a | that is the whole value assigned to the register's value or a local (the
//     instruction is split in two at it; in a condition bf-p4c says "too complex bitwise
//     operation used in a condition", line 1593);
//   - on Tofino 1, a & in a relation of a condition (bf-p4c passes the mask to the assembler,
//     bf-asm/salu_inst.cpp line 249: no comparison masks on Tofino, CmpMask false in
//     specs/device.cpp); on either chip a mask that is not a constant ("mask operand must be a
//     constant", line 1508);
//   - a relation whose terms (its operands split at + and -) include two of the register's
//     value (parameters or locals of apply) or two packet fields: a comparison unit takes one
//     memory operand, one PHV operand and a constant (bf-asm/salu_inst.cpp CmpOP::Decode,
//     "Can't have more than one Memory/Phv operand to an SALU compare");
//   - an operator (+, -, |+|, |-|, &, |, ^) outside a condition whose two operands are both
//     packet fields: an ALU instruction's first operand is the register's value or a constant
//     and only its second a PHV field ("Can't reference phv in first operand", bf-asm
//     AluOP::Decode, after swapping the operands where it can).
//
// Every rule is an error, as for bf-p4c and bf-asm (the comparison count and the concatenation
// were warnings while p4/tna/netlock.p4's q_upd broke them; its queue counters are now registers
// of their own, docs/dataplane.md "Tofino").

// tnaSALUCmpUnits is Device::statefulAluSpec().CmpUnits.size() on Tofino 1 and 2.
var tnaSALUCmpUnits = map[int]int{1: 2, 2: 4}

// tnaSALURules refuses the register actions among instances whose apply one
// stateful ALU instruction cannot hold.
func (c *checker) tnaSALURules(instances []*InstanceDecl) {
	units := tnaSALUCmpUnits[1]
	chip := "Tofino 1"
	if c.out.TofinoGeneration() == 2 {
		units, chip = tnaSALUCmpUnits[2], "Tofino 2"
	}
	for _, d := range instances {
		for _, fn := range d.Init {
			if fn.Name != "apply" || fn.Body == nil {
				continue
			}
			c.saluApply(d, fn, units, chip)
		}
	}
}

// saluApply checks one RegisterAction's apply.
func (c *checker) saluApply(d *InstanceDecl, fn *FunctionDecl, units int, chip string) {
	params := map[*Param]bool{}
	for _, f := range d.Init { // every apply's: a second apply (an error) resolves to the first's
		if f.Name == "apply" {
			for _, p := range f.Params {
				params[p] = true
			}
		}
	}
	locals := map[*VarDecl]bool{}
	collectLocals(fn.Body, locals)

	cmps := map[string]bool{}
	var first Pos
	walkStmt(fn.Body, func(e Expr) {
		b, ok := e.(*BinaryExpr)
		if !ok {
			return
		}
		if k, ok := relationKey(b); ok {
			if !cmps[k] && len(cmps) == units {
				first = b.P
			}
			cmps[k] = true
		}
	})
	if len(cmps) > units {
		c.errorf(first, "RegisterAction %s: %d comparisons, more than the %d comparison units of a %s stateful ALU (bf-p4c: \"needs %d comparisons but the device only has %d comparison units\")",
			d.Name, len(cmps), units, chip, len(cmps), units)
	}

	conds := condRelations(fn.Body)
	for _, rel := range conds {
		walkExpr(rel, func(e Expr) {
			if sl, ok := e.(*SliceExpr); ok && params[sliceRoot(sl.X)] {
				c.errorf(sl.P, "RegisterAction %s: slice of register value in condition is not supported (%s; the Tofino compiler compares whole register halves)",
					d.Name, ExprString(sl))
			}
		})
	}

	c.saluLocalRules(d, fn)
	c.saluOutputs(d, fn)
	c.saluOperators(d, fn, params, locals)
	c.saluMasks(d, conds, chip)
	c.saluCmpOperands(d, conds, params, locals)
	c.saluALUOperands(d, fn, params, locals)

	inner := map[*BinaryExpr]bool{} // concatenations inside concatenations: reported with the outer one
	walkStmt(fn.Body, func(e Expr) {
		if b, ok := e.(*BinaryExpr); ok && b.Op == "++" {
			for _, x := range []Expr{b.X, b.Y} {
				if ib, ok := x.(*BinaryExpr); ok && ib.Op == "++" {
					inner[ib] = true
				}
			}
		}
	})
	walkStmt(fn.Body, func(e Expr) {
		b, ok := e.(*BinaryExpr)
		if !ok || b.Op != "++" || inner[b] || isZero(b.X) {
			return
		}
		bad := false
		walkExpr(b, func(x Expr) {
			if n, ok := x.(*NameExpr); ok {
				switch decl := n.Decl.(type) {
				case *Param:
					bad = bad || params[decl]
				case *VarDecl:
					bad = bad || locals[decl]
				}
			}
		})
		if bad {
			c.errorf(b.P, "RegisterAction %s: %s concatenates the register's value or a local variable (bf-p4c: \"Bit concatenation result cannot be assigned to an output parameter\")",
				d.Name, ExprString(b))
		}
	})
}

// collectLocals adds the variables declared in s.
func collectLocals(s Stmt, out map[*VarDecl]bool) {
	walkStmts(s, func(x Stmt) {
		if d, ok := x.(*DeclStmt); ok {
			if v, ok := d.Decl.(*VarDecl); ok {
				out[v] = true
			}
		}
	})
}

// condRelations returns the relations in the conditions of if statements and ?: under s.
func condRelations(s Stmt) []Expr {
	var out []Expr
	addRel := func(cond Expr) {
		walkExpr(cond, func(e Expr) {
			if b, ok := e.(*BinaryExpr); ok {
				if _, ok := relationKey(b); ok {
					out = append(out, b)
				}
			}
		})
	}
	walkStmts(s, func(x Stmt) {
		if i, ok := x.(*IfStmt); ok {
			addRel(i.Cond)
		}
	})
	walkStmt(s, func(e Expr) {
		if t, ok := e.(*TernaryExpr); ok {
			addRel(t.Cond)
		}
	})
	return out
}

// relationKey names the comparison unit a relation takes: a relation and its negation, and the
// same relation with its operands swapped, have one key.
func relationKey(b *BinaryExpr) (string, bool) {
	x, y := ExprString(b.X), ExprString(b.Y)
	switch b.Op {
	case "==", "!=":
		s := []string{x, y}
		sort.Strings(s)
		return s[0] + " == " + s[1], true
	case ">", "<=": // x <= y is !(x > y)
		return x + " > " + y, true
	case "<", ">=": // x < y is y > x; x >= y is !(y > x)
		return y + " > " + x, true
	}
	return "", false
}

// sliceRoot is the parameter e (v, v.lo, a.b.c) selects from, or nil: the root of a slice's
// operand, or of any member chain.
func sliceRoot(e Expr) *Param {
	for {
		switch x := e.(type) {
		case *MemberExpr:
			e = x.X
		case *NameExpr:
			p, _ := x.Decl.(*Param)
			return p
		default:
			return nil
		}
	}
}

// isZero reports whether e is the literal 0 (of any width): a concatenation with it on the left
// is a zero extension.
func isZero(e Expr) bool {
	i, ok := e.(*IntExpr)
	return ok && i.Lit != nil && i.Lit.Value != nil && i.Lit.Value.Sign() == 0
}

// saluSingleOps are the operators bf-p4c's CreateSaluInstruction checks for a second operator
// among their operands (checkAndReportComplexInstruction); saluComplexOps are the operands
// that make one complex (isComplexInstruction), negation besides.
var (
	saluSingleOps  = map[string]bool{"+": true, "-": true, "|+|": true, "|-|": true, "&": true, "|": true, "^": true}
	saluComplexOps = map[string]bool{"+": true, "-": true, "|+|": true, "|-|": true, "&": true, "|": true, "^": true, "/": true, "%": true}
)

// saluComplexOperand reports whether e, an operand of an operator, is itself an operator
// isComplexInstruction counts (a negated literal is a constant, not a negation).
func saluComplexOperand(e Expr) bool {
	switch x := e.(type) {
	case *BinaryExpr:
		return saluComplexOps[x.Op]
	case *UnaryExpr:
		if _, lit := x.X.(*IntExpr); lit {
			return false
		}
		return x.Op == "-"
	}
	return false
}

// saluOperators refuses a statement of fn that makes one stateful ALU instruction compute more
// than one operator: an operator among saluSingleOps with a complex operand, unless it is a |
// that is the whole right-hand side of an assignment to the register's value (a parameter of
// apply other than an out one, or a field of it) or to a local of apply (or a local's
// initializer).
func (c *checker) saluOperators(d *InstanceDecl, fn *FunctionDecl, params map[*Param]bool, locals map[*VarDecl]bool) {
	split := map[*BinaryExpr]bool{} // | split into two instructions
	walkStmts(fn.Body, func(x Stmt) {
		switch x := x.(type) {
		case *AssignStmt:
			if b, ok := x.RHS.(*BinaryExpr); ok && b.Op == "|" && saluValueDest(x.LHS, params, locals) {
				split[b] = true
			}
		case *DeclStmt:
			if v, ok := x.Decl.(*VarDecl); ok {
				if b, ok := v.Init.(*BinaryExpr); ok && b.Op == "|" {
					split[b] = true
				}
			}
		}
	})
	walkStmt(fn.Body, func(e Expr) {
		b, ok := e.(*BinaryExpr)
		if !ok || !saluSingleOps[b.Op] || split[b] {
			return
		}
		if saluComplexOperand(b.X) || saluComplexOperand(b.Y) {
			c.errorf(b.P, "RegisterAction %s: %s has more than one operator (bf-p4c: \"You can only have more than one binary operator in a statement if the outer one is |\"; a stateful ALU instruction computes one)",
				d.Name, ExprString(b))
		}
	})
}

// saluValueDest reports whether lhs is the register's value (a parameter of apply that is not
// an out parameter, or a field of it) or a local of apply: where bf-p4c splits an | of two
// operations into two instructions.
func saluValueDest(lhs Expr, params map[*Param]bool, locals map[*VarDecl]bool) bool {
	for {
		switch x := lhs.(type) {
		case *MemberExpr:
			lhs = x.X
		case *NameExpr:
			switch decl := x.Decl.(type) {
			case *Param:
				return params[decl] && decl.Dir != DirOut
			case *VarDecl:
				return locals[decl]
			}
			return false
		default:
			return false
		}
	}
}

// saluMasks refuses a & in a relation of a condition (conds) on Tofino 1 (of the register's
// value or of a packet field: bf-asm has no masked comparison operand on Tofino), and a mask
// that is not a constant on either chip.
func (c *checker) saluMasks(d *InstanceDecl, conds []Expr, chip string) {
	for _, rel := range conds {
		walkExpr(rel, func(e Expr) {
			b, ok := e.(*BinaryExpr)
			if !ok || b.Op != "&" {
				return
			}
			_, kx := b.X.(*IntExpr)
			_, ky := b.Y.(*IntExpr)
			if !kx && !ky {
				c.errorf(b.P, "RegisterAction %s: the mask of %s in a condition is not a constant (bf-p4c: \"mask operand must be a constant\")",
					d.Name, ExprString(b))
				return
			}
			if chip != "Tofino 1" {
				return
			}
			c.errorf(b.P, "RegisterAction %s: masked comparison %s in a condition is not supported on %s (its stateful ALU compares whole values: bf-asm has no comparison masks there)",
				d.Name, ExprString(b), chip)
		})
	}
}

// saluUsesApplyState reports whether e reads a parameter or a local of apply.
func saluUsesApplyState(e Expr, params map[*Param]bool, locals map[*VarDecl]bool) bool {
	uses := false
	walkExpr(e, func(x Expr) {
		if n, ok := x.(*NameExpr); ok {
			switch decl := n.Decl.(type) {
			case *Param:
				uses = uses || params[decl]
			case *VarDecl:
				uses = uses || locals[decl]
			}
		}
	})
	return uses
}

// saluCmpOperands refuses a relation among conds whose terms hold two memory operands (the
// register's value: parameters and locals of apply) or two PHV operands (anything else that is
// not a constant): a stateful ALU comparison unit computes memory +/- PHV +/- constant.
func (c *checker) saluCmpOperands(d *InstanceDecl, conds []Expr, params map[*Param]bool, locals map[*VarDecl]bool) {
	for _, rel := range conds {
		b := rel.(*BinaryExpr)
		var mem, phv []string
		var consts []saluConst
		// terms splits e at + and -; right is whether e is on the relation's right (the
		// compiler negates those terms), sub whether e is subtracted
		var terms func(e Expr, right, sub bool, sum Type)
		terms = func(e Expr, right, sub bool, sum Type) {
			if v := constInt(c.out.Const[e]); v != nil {
				consts = append(consts, saluConstTerm(e, v, right, sub, sum))
				return
			}
			switch x := e.(type) {
			case *BinaryExpr:
				if x.Op == "+" || x.Op == "-" {
					terms(x.X, right, sub, x.Type())
					terms(x.Y, right, sub != (x.Op == "-"), x.Type())
					return
				}
			case *UnaryExpr:
				if x.Op == "-" {
					terms(x.X, right, !sub, x.Type())
					return
				}
			}
			if saluUsesApplyState(e, params, locals) {
				mem = append(mem, ExprString(e))
			} else {
				phv = append(phv, ExprString(e))
			}
		}
		terms(b.X, false, false, b.X.Type())
		terms(b.Y, true, false, b.Y.Type())
		c.saluCmpConstants(d, b, consts)
		for _, k := range []struct {
			kind string
			ops  []string
		}{{"Memory", mem}, {"Phv", phv}} {
			if len(k.ops) > 1 {
				c.errorf(b.P, "RegisterAction %s: %s compares %s: a stateful ALU comparison takes one register value, one packet field and a constant (bf-asm: \"Can't have more than one %s operand to an SALU compare\")",
					d.Name, ExprString(b), strings.Join(k.ops, " and "), k.kind)
			}
		}
	}
}

// saluALUOperands refuses an operator among saluSingleOps, in fn's body outside a condition,
// whose operands both read packet fields only (neither the register's value, a local nor a
// constant): an ALU instruction takes at most one PHV operand.
func (c *checker) saluALUOperands(d *InstanceDecl, fn *FunctionDecl, params map[*Param]bool, locals map[*VarDecl]bool) {
	inCond := map[Expr]bool{}
	for _, rel := range condRelations(fn.Body) {
		walkExpr(rel, func(e Expr) { inCond[e] = true })
	}
	phvOnly := func(e Expr) bool {
		_, lit := e.(*IntExpr)
		return !lit && !c.isConst(e) && !saluUsesApplyState(e, params, locals)
	}
	walkStmt(fn.Body, func(e Expr) {
		b, ok := e.(*BinaryExpr)
		if !ok || !saluSingleOps[b.Op] || inCond[b] {
			return
		}
		if phvOnly(b.X) && phvOnly(b.Y) {
			c.errorf(b.P, "RegisterAction %s: %s takes two packet fields: a stateful ALU instruction takes the register's value or a constant and one PHV operand (bf-asm: \"Can't reference phv in first operand\")",
				d.Name, ExprString(b))
		}
	})
}

// saluOutputs refuses an output of apply (an out parameter) assigned two different operands: a
// stateful ALU instruction drives an output from one source, the register's value before, a
// result of its ALUs or a constant, under a predicate (bf-p4c CreateSaluInstruction::
// setup_output, mau/stateful_alu.cpp line 1942: "Incompatible outputs in RegisterAction: mem_hi
// and mem_lo"). Constants may differ (each is its own predicated output), and an assignment of 0
// is the output's default; otherwise every assignment must be the same expression: rv = v.hi in
// one branch and rv = v.lo in another, or rv = v before an update and rv = v | 0x10000 after it,
// are refused. The compiler's own message for the second case can be "Two or more assignments of
// rv inside the register action ... are not mutually exclusive"; the front end gives one message
// for both.
func (c *checker) saluOutputs(d *InstanceDecl, fn *FunctionDecl) {
	outs := map[*Param]bool{}
	for _, p := range fn.Params {
		if p.Dir == DirOut {
			outs[p] = true
		}
	}
	seen := map[*Param]string{}
	walkStmts(fn.Body, func(st Stmt) {
		as, ok := st.(*AssignStmt)
		if !ok {
			return
		}
		n, ok := as.LHS.(*NameExpr)
		if !ok {
			return
		}
		p, ok := n.Decl.(*Param)
		if !ok || !outs[p] || isZero(as.RHS) || c.isConst(as.RHS) {
			return
		}
		rhs := ExprString(as.RHS)
		if first, ok := seen[p]; ok && first != rhs {
			c.errorf(as.P, "RegisterAction %s: Incompatible outputs in RegisterAction: %s is %s here and %s before (a stateful ALU drives an output from one operand)",
				d.Name, p.Name, rhs, first)
			return
		}
		seen[p] = rhs
	})
}

// saluConst is a constant term of a stateful ALU comparison: its text and the value the
// comparison unit takes (0 for none).
type saluConst struct {
	text  string
	value *big.Int
}

// saluConstTerm is constant e (of value v) as a term of a comparison, in a sum of type sum.
// bf-p4c's mid end makes a subtracted constant of a bit<W> sum an added one, wrapped to W bits
// (x - 5 is x + 0xfffffffb), so a term's value is its W-bit value; CreateSaluInstruction then negates the
// terms of the relation's right side without wrapping (v == 0xffffffff compares v with
// -4294967295).
func saluConstTerm(e Expr, v *big.Int, right, sub bool, sum Type) saluConst {
	v = new(big.Int).Set(v)
	if sub {
		v.Neg(v)
		if bt, ok := underlying(sum).(*BitsType); ok && !bt.Signed {
			v = wrap(v, bt)
		}
	}
	if right {
		v.Neg(v)
	}
	return saluConst{ExprString(e), v}
}

// tnaSALUConstRange is the range of a stateful ALU constant (the register file's, and an
// instruction's): bf-asm refuses a constant outside it ("constant value ... too large for
// stateful alu", bf-asm/tofino/stateful.cpp: a 32-bit signed value on Tofino 1; bf-asm/jbay/
// stateful.cpp: above -(2^33) and at most 2^33 on Tofino 2), and bf-p4c itself for an
// unsigned order comparison on Tofino 1 ("is out of range [-2147483648; 2147483647] for
// stateful ALU", CheckStatefulAlu).
func tnaSALUConstRange(gen int) (lo, hi *big.Int) {
	if gen == 2 {
		return new(big.Int).Add(new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 33)), big.NewInt(1)), new(big.Int).Lsh(big.NewInt(1), 33)
	}
	return big.NewInt(-1 << 31), big.NewInt(1<<31 - 1)
}

// saluCmpConstants refuses a relation b of a register action's condition whose constant terms
// (consts) a comparison unit cannot take: more than one that is not 0 (bf-asm: "Can't have
// more than one constant operand to an SALU compare"), or one outside tnaSALUConstRange as the
// unit takes it (saluConstTerm). Each verdict of saluConstCases was bfas's on 2026-12-01.
func (c *checker) saluCmpConstants(d *InstanceDecl, b *BinaryExpr, consts []saluConst) {
	var nonzero []saluConst
	for _, k := range consts {
		if k.value.Sign() != 0 {
			nonzero = append(nonzero, k)
		}
	}
	if len(nonzero) > 1 {
		c.errorf(b.P, "RegisterAction %s: %s has %d constant terms (%s and %s): a stateful ALU comparison takes one (bf-asm: \"Can't have more than one constant operand to an SALU compare\")",
			d.Name, ExprString(b), len(nonzero), nonzero[0].text, nonzero[1].text)
		return
	}
	gen := c.out.TofinoGeneration()
	lo, hi := tnaSALUConstRange(gen)
	for _, k := range nonzero {
		if k.value.Cmp(lo) < 0 || k.value.Cmp(hi) > 0 {
			c.errorf(b.P, "RegisterAction %s: %s compares with the constant %s, which the Tofino %d stateful ALU takes as %s, outside [%s, %s] (bf-asm: \"constant value %s too large for stateful alu\"; compare v + 1 == 0 for v == 0xffffffff)",
				d.Name, ExprString(b), k.text, max(gen, 1), k.value, lo, hi, k.value)
		}
	}
}
