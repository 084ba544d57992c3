package front

import (
	"sort"
	"strings"
)

// tnaSALUInputs is how many PHV inputs a stateful ALU reads: its two slots on the input crossbar
// (bf-p4c mau/tofino/input_xbar.cpp, IXBar::setup_stateful_search_bus and the hash path after
// it: "requires more than 2 PHV inputs"; Tofino 1 and 2).
const tnaSALUInputs = 2

// saluPHVInputs returns the PHV inputs one RegisterAction's apply reads, by their text, with
// where each is first read: every maximal field path (a name, a member chain, a slice of one)
// in it, conditions included, that reads neither a parameter nor a local of apply and is not a
// constant. A slice is an input of its own, apart from its field and from other slices of it
// (bf-p4c, 2026-12-01: two slices of one 32-bit field in one register's actions are refused as
// a third input is).
func (c *checker) saluPHVInputs(d *InstanceDecl) map[string]Pos {
	out := map[string]Pos{}
	for _, fn := range d.Init {
		if fn.Name != "apply" || fn.Body == nil {
			continue
		}
		params := map[*Param]bool{}
		for _, p := range fn.Params {
			params[p] = true
		}
		locals := map[*VarDecl]bool{}
		collectLocals(fn.Body, locals)
		var paths []Expr
		inner := map[Expr]bool{} // a path's own parts: not inputs of their own
		walkStmt(fn.Body, func(e Expr) {
			if !isFieldPath(e) || c.isConst(e) || saluUsesApplyState(e, params, locals) {
				return
			}
			paths = append(paths, e)
			walkExpr(e, func(x Expr) {
				if x != e {
					inner[x] = true
				}
			})
		})
		for _, e := range paths {
			if s := ExprString(e); !inner[e] {
				if _, seen := out[s]; !seen {
					out[s] = e.Position()
				}
			}
		}
	}
	return out
}

// isFieldPath reports whether e names a value by a path: a parameter or a variable, a field
// of a path or a slice of a path with constant bounds. The name of a function, an extern or an
// action (the callee of max(value.first, e0)) is no path: switchml.p4 (p4c's Tofino testgen
// corpus) was refused for "3 PHV inputs (exponent0, exponent1, max)".
func isFieldPath(e Expr) bool {
	switch x := e.(type) {
	case *NameExpr:
		switch x.Decl.(type) {
		case *Param, *VarDecl:
			return true
		}
		return false
	case *MemberExpr:
		return x.Kind == MemberField && isFieldPath(x.X)
	case *SliceExpr:
		return isFieldPath(x.X)
	}
	return false
}

// tnaRegisterInputs refuses a Register whose executed register actions read, together, more PHV
// inputs than its stateful ALU has: the register actions of a Register run on its one stateful
// ALU, which reads the inputs of all of them, whichever tables and actions execute them
// (bf-p4c, 2026-12-01: a third input in a register action of its own, read only in a
// condition, is refused; one read only by a register action that nothing executes is not).
func (c *checker) tnaRegisterInputs(reg *InstanceDecl, salus []*InstanceDecl, executed map[*InstanceDecl]bool) {
	all := map[string]Pos{}
	for _, d := range salus {
		if !executed[d] {
			continue
		}
		for s, p := range c.saluPHVInputs(d) {
			if q, ok := all[s]; !ok || posLess(p, q) {
				all[s] = p
			}
		}
	}
	if len(all) <= tnaSALUInputs {
		return
	}
	names := make([]string, 0, len(all))
	for s := range all {
		names = append(names, s)
	}
	sort.Slice(names, func(i, j int) bool { // where first read (a macro's lines share one), then by name
		if pi, pj := all[names[i]], all[names[j]]; pi != pj {
			return posLess(pi, pj)
		}
		return names[i] < names[j]
	})
	c.errorf(reg.P, "%s: its register actions read %d PHV inputs (%s), more than the %d a stateful ALU reads (bf-p4c: \"requires more than 2 PHV inputs\"; a slice is an input of its own)",
		reg.Name, len(all), strings.Join(names, ", "), tnaSALUInputs)
}

// executedSALUs returns the RegisterActions whose execute the program calls: in an action, a
// function or an apply block of a control, or in a top-level action or function. A register
// action nothing executes reads no input (bf-p4c, 2026-12-01: its inputs are not counted).
func (c *checker) executedSALUs() map[*InstanceDecl]bool {
	out := map[*InstanceDecl]bool{}
	visit := func(b *BlockStmt) {
		if b == nil {
			return
		}
		walkStmt(b, func(e Expr) {
			if n := registerActionExecuted(e); n != nil {
				if inst, ok := n.Decl.(*InstanceDecl); ok {
					out[inst] = true
				}
			}
		})
	}
	var decls func(ds []Decl)
	decls = func(ds []Decl) {
		for _, d := range ds {
			switch d := d.(type) {
			case *ActionDecl:
				visit(d.Body)
			case *FunctionDecl:
				visit(d.Body)
			case *ControlDecl:
				decls(d.Locals)
				visit(d.Body)
			}
		}
	}
	decls(c.out.Program.Decls)
	return out
}
