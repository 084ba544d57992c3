package front

import "sort"

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
//     cannot be assigned to an output parameter", line 1632).
//
// A slice in a condition is an error, as for bf-p4c (ERR_UNSUPPORTED_ON_TARGET). The other two
// are still warnings: p4/tna/netlock.p4's q_upd breaks them (docs/dataplane.md), and netlock
// switch loads that program; each becomes an error once no register action of it breaks it.

// tnaSALUCmpUnits is Device::statefulAluSpec().CmpUnits.size() on Tofino 1 and 2.
var tnaSALUCmpUnits = map[int]int{1: 2, 2: 4}

// tnaSALURules refuses, or warns about, the register actions among instances whose apply one
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
	for _, p := range fn.Params {
		params[p] = true
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
		c.warnf(first, "RegisterAction %s: %d comparisons, more than the %d comparison units of a %s stateful ALU (bf-p4c: \"needs %d comparisons but the device only has %d comparison units\")",
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
			c.warnf(b.P, "RegisterAction %s: %s concatenates the register's value or a local variable (bf-p4c: \"Bit concatenation result cannot be assigned to an output parameter\")",
				d.Name, ExprString(b))
		}
	})
}

// collectLocals adds the variables declared in s.
func collectLocals(s Stmt, out map[*VarDecl]bool) {
	switch s := s.(type) {
	case *BlockStmt:
		if s == nil {
			return
		}
		for _, x := range s.Stmts {
			collectLocals(x, out)
		}
	case *IfStmt:
		collectLocals(s.Then, out)
		if s.Else != nil {
			collectLocals(s.Else, out)
		}
	case *DeclStmt:
		if v, ok := s.Decl.(*VarDecl); ok {
			out[v] = true
		}
	}
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
	var stmt func(Stmt)
	stmt = func(s Stmt) {
		switch s := s.(type) {
		case *BlockStmt:
			if s == nil {
				return
			}
			for _, x := range s.Stmts {
				stmt(x)
			}
		case *IfStmt:
			addRel(s.Cond)
			stmt(s.Then)
			if s.Else != nil {
				stmt(s.Else)
			}
		}
	}
	stmt(s)
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

// sliceRoot is the parameter a slice's operand selects from (v, v.lo), or nil.
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
