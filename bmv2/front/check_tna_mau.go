package front

// This file holds a rule of p4c's Tofino backend (bf-p4c, p4c git 34b86e9) on the conditions
// inside actions, with the compiler's reason: an action runs as one VLIW instruction per
// container, and the only condition an instruction takes is a bool that the table's action data
// supplies (conditionally-set). p4c's mid end turns an if inside an action into a ?: (Predication)
// and its front end wraps the assignments and calls of an apply block into actions of their own,
// so a ?: or an if there is such a condition too; mau/instruction_selection.cpp
// (DoInstructionSelection::postorder(Primitive): the ?:'s condition must be an action argument)
// and mau/action_analysis.cpp (ActionAnalysis::preorder(Mux)) refuse every other one: "Conditions
// in an action must be simple comparisons of an action data parameter". The compiler's own
// trials (TestRealTNARules) show what survives: a condition that folds to a constant, and in an
// action that a table runs, a bool directionless parameter itself (if (b), b ? x : y); a
// comparison of a parameter (l == 0) is refused even there.

import (
	"maps"
	"sort"
	"strings"
)

// tnaActionConditionMsg is bf-p4c's message for a condition an action cannot hold.
const tnaActionConditionMsg = "Conditions in an action must be simple comparisons of an action data parameter"

// tnaActionConditions refuses, in the controls of an ingress or egress block and the controls
// they apply, every condition that would land in an action without folding to a constant or
// being a bool action data parameter (see the file comment):
//
//   - a ?: in an assignment, a call or a variable's initializer of an apply block (not in an
//     if's condition or a switch's expression, which become gateways), whose condition is not
//     a constant;
//   - an if or a ?: in an action that a table lists (actions, default_action, entries), unless
//     its condition is a constant or a directionless bool parameter of the action (a parameter
//     with a direction is bound by the table's action list: it counts as bound to that
//     argument);
//   - an if or a ?: in an action called directly (from an apply block or another action),
//     unless its condition folds to a constant once the call's arguments replace the
//     parameters (act(0) is taken, act(meta.lvl) is not).
//
// Each condition is reported once, at the first use that refuses it. A P4 function's body
// (inlined by p4c) is not looked into.
func (c *checker) tnaActionConditions(b Block) {
	if b.Control == nil {
		return
	}
	reported := map[Expr]bool{}
	refuse := func(cond Expr, why string) {
		if reported[cond] {
			return
		}
		reported[cond] = true
		c.errorf(cond.Position(), "%s (%s)", tnaActionConditionMsg, why)
	}
	for _, cd := range appliedControls(b.Control) {
		tableActions(cd, func(t *TableDecl, r *ActionRef) {
			c.actionConditions(r.Action, r.Args, true, "table "+t.Name, refuse)
		})
		// The apply block: statements that become actions, and direct calls.
		walkStmts(cd.Body, func(s Stmt) {
			var exprs []Expr
			switch s := s.(type) {
			case *AssignStmt:
				exprs = []Expr{s.LHS, s.RHS}
			case *CallStmt:
				exprs = []Expr{s.Call}
			case *DeclStmt:
				if v, ok := s.Decl.(*VarDecl); ok && v.Init != nil {
					exprs = []Expr{v.Init}
				}
			}
			for _, e := range exprs {
				walkExpr(e, func(x Expr) {
					switch x := x.(type) {
					case *TernaryExpr:
						if _, ok := c.out.Const[x.Cond]; !ok {
							refuse(x.Cond, "a ?: in an apply block becomes part of an action: test the condition with an if around two assignments")
						}
					case *CallExpr:
						switch d := x.Callee.(type) {
						case *ActionDecl:
							c.actionConditions(d, x.Ordered, false, "called as "+ExprString(x), refuse)
						}
					}
				})
			}
		})
	}
}

// appliedControls is root and every control its apply block applies, and theirs, each once.
func appliedControls(root *ControlDecl) []*ControlDecl {
	seen := map[*ControlDecl]bool{}
	var out []*ControlDecl
	var visit func(cd *ControlDecl)
	visit = func(cd *ControlDecl) {
		if cd == nil || seen[cd] || cd.Body == nil {
			return
		}
		seen[cd] = true
		out = append(out, cd)
		walkStmt(cd.Body, func(e Expr) {
			if call, ok := e.(*CallExpr); ok {
				if d, ok := call.Callee.(*ControlDecl); ok {
					visit(d)
				}
			}
		})
	}
	visit(root)
	return out
}

// actionConditions checks the conditions of action a's body, its parameters bound to args (in
// parameter order; nil or shorter where the parameters are action data). table says a table
// runs a (its unbound directionless parameters are action data); use names the use.
func (c *checker) actionConditions(a *ActionDecl, args []*Arg, table bool, use string, refuse func(Expr, string)) {
	c.actionConditionsIn(a, args, map[*Param]Expr{}, map[*Param]bool{}, table, use, refuse, 0)
}

// actionConditionsIn is actionConditions for an action called from another action (depth
// levels down): bound holds the callers' bound parameters, data their action data parameters,
// so that an argument naming a caller's parameter stands for what that parameter stands for.
func (c *checker) actionConditionsIn(a *ActionDecl, args []*Arg, bound map[*Param]Expr, data map[*Param]bool, table bool, use string, refuse func(Expr, string), depth int) {
	if a == nil || a.Body == nil || depth > 8 {
		return
	}
	for i, p := range a.Params {
		switch {
		case i < len(args) && args[i] != nil:
			bound[p] = args[i].Value
		case table && p.Dir == DirNone:
			data[p] = true
		}
	}
	// resolve follows parameters bound to arguments, through the callers.
	resolve := func(e Expr) Expr {
		for i := 0; i < 16; i++ {
			n, ok := e.(*NameExpr)
			if !ok {
				break
			}
			p, ok := n.Decl.(*Param)
			if !ok || bound[p] == nil {
				break
			}
			e = bound[p]
		}
		return e
	}
	check := func(cond Expr) {
		if c.foldsInAction(cond, bound) {
			return
		}
		if n, ok := resolve(cond).(*NameExpr); ok {
			if p, ok := n.Decl.(*Param); ok && data[p] {
				if _, isBool := underlying(p.T).(*BoolType); isBool {
					return
				}
			}
		}
		if table {
			refuse(cond, "action "+a.Name+" of "+use+": an action may test a bool action data parameter itself, not "+ExprString(cond)+"; move the test into the apply block or the table key")
		} else {
			refuse(cond, "action "+a.Name+" "+use+": the arguments of a direct call become the parameters' values and "+ExprString(cond)+" does not fold to a constant; move the test into the apply block")
		}
	}
	walkStmts(a.Body, func(s Stmt) {
		if is, ok := s.(*IfStmt); ok {
			check(is.Cond)
		}
	})
	walkStmt(a.Body, func(e Expr) {
		switch x := e.(type) {
		case *TernaryExpr:
			check(x.Cond)
		case *CallExpr:
			if d, ok := x.Callee.(*ActionDecl); ok && d != a {
				c.actionConditionsIn(d, x.Ordered, bound, data, table, use, refuse, depth+1)
			}
		}
	})
}

// foldsInAction reports whether e is a constant once the parameters in bound take their
// arguments' values: every leaf is a constant or a parameter bound to a constant.
func (c *checker) foldsInAction(e Expr, bound map[*Param]Expr) bool {
	if _, ok := c.out.Const[e]; ok {
		return true
	}
	switch x := e.(type) {
	case *NameExpr:
		p, ok := x.Decl.(*Param)
		if !ok || bound[p] == nil {
			return false
		}
		return c.foldsInAction(bound[p], bound)
	case *UnaryExpr:
		return c.foldsInAction(x.X, bound)
	case *BinaryExpr:
		return c.foldsInAction(x.X, bound) && c.foldsInAction(x.Y, bound)
	case *CastExpr:
		return c.foldsInAction(x.X, bound)
	case *TernaryExpr:
		return c.foldsInAction(x.Cond, bound) && c.foldsInAction(x.Then, bound) && c.foldsInAction(x.Else, bound)
	}
	return false
}

// tnaHashOfHashMsg is how bf-p4c 9.13.4 (p4c 34b86e9) ends on an IDENTITY hash whose field list
// names a field that a hash wrote in the same action: "Compiler Bug: Exiting with SIGSEGV",
// after the PHV allocation, in GeneratePrimitiveInfo (mau/gen_prim_json.cpp): the field list's
// entry is no PHV field there (BuildP4HashFunction throws, and its end_apply then dereferences
// the hash function it never built). Six-line programs show it after an IDENTITY or a CRC16
// hash, for 15- and 16-bit fields and slices; an if between the two (two actions), or a cast
// of the first hash's output into a wider field, does not. Not refused here, seen once each:
// an IDENTITY hash of a slice of a field an ALU wrote in the same action crashes it too, and a
// hash's output written into a slice and then the whole field by an ALU is "read in a way too
// complex for the compiler" (hashOfHashCases' comment).
const tnaHashOfHashMsg = "an IDENTITY hash reads a field that a hash wrote in the same action (bf-p4c 9.13.4 crashes on it after the PHV allocation: \"Compiler Bug: Exiting with SIGSEGV\" in GeneratePrimitiveInfo)"

// tnaHashOfHash refuses, in the control of an ingress or egress block (its apply block and its
// actions), an IDENTITY Hash's get whose field list names a field that another get assigned
// earlier in the same action: a run of the apply block as p4c makes one action of it
// (actionRuns), or an action's body (tnaHashOfHashMsg). An assignment of the field from
// anything but a get ends what the get wrote.
func (c *checker) tnaHashOfHash(b Block) {
	cd := b.Control
	if cd == nil || cd.Body == nil {
		return
	}
	// identity reports whether a get is an IDENTITY Hash's (the crashes seen: CRC16 or IDENTITY
	// first, IDENTITY second).
	identity := func(call *CallExpr) bool {
		m, ok := call.Fun.(*MemberExpr)
		if !ok {
			return false
		}
		n, ok := m.X.(*NameExpr)
		if !ok {
			return false
		}
		inst, ok := n.Decl.(*InstanceDecl)
		return ok && len(inst.Args) > 0 && strings.HasSuffix(ExprString(inst.Args[0].Value), "IDENTITY")
	}
	check := func(stmts []Stmt) {
		hashed := map[string]Pos{} // fields a get wrote in this action, by ExprString, and where
		for _, s := range stmts {
			a, ok := s.(*AssignStmt)
			if !ok {
				continue
			}
			walkExpr(a.RHS, func(e Expr) {
				if !isHashGet(e) || !identity(e.(*CallExpr)) {
					return
				}
				for _, arg := range e.(*CallExpr).Args {
					walkExpr(arg.Value, func(x Expr) {
						if p, ok := hashed[ExprString(x)]; ok {
							c.errorf(x.Position(), "%s: %s, written by a hash at %s", tnaHashOfHashMsg, ExprString(x), p)
						}
					})
				}
			})
			name := ExprString(a.LHS)
			if isHashGet(a.RHS) && a.Op == "" { // a get widened by a cast is not refused: the compiler takes it
				hashed[name] = a.P
			} else {
				// another write of the field (or of a slice of it) ends what the get wrote
				for k := range hashed {
					if sliceBase(k) == sliceBase(name) {
						delete(hashed, k)
					}
				}
			}
		}
	}
	actionRuns(cd.Body.Stmts, check)
	for _, l := range cd.Locals {
		if a, ok := l.(*ActionDecl); ok && a.Body != nil {
			check(a.Body.Stmts)
		}
	}
}

// actionRuns calls f with each run of statements of an apply block that p4c makes one action
// of (SplitRuns), looking into the branches of an if, blocks and a switch's cases for runs of
// their own.
func actionRuns(stmts []Stmt, f func(run []Stmt)) {
	SplitRuns(stmts, f, func(s Stmt) {
		switch st := s.(type) {
		case *BlockStmt:
			actionRuns(st.Stmts, f)
		case *IfStmt:
			for _, br := range []Stmt{st.Then, st.Else} {
				if blk, ok := br.(*BlockStmt); ok {
					actionRuns(blk.Stmts, f)
				} else if br != nil {
					actionRuns([]Stmt{br}, f)
				}
			}
		case *SwitchStmt:
			for _, cs := range st.Cases {
				if cs.Body != nil {
					actionRuns(cs.Body.Stmts, f)
				}
			}
		}
	})
}

// SplitRuns splits the statements of an apply block as p4c makes actions of them
// (midend/actionSynthesis.cpp with bf-p4c's ActionSynthesisPolicy, midend/
// action_synthesis_policy.h), calling run with each run of statements that becomes one
// action (and one table of its own) and other with each statement that does not join a run,
// in source order. A run holds assignments, local declarations with an initializer (p4c's
// MoveDeclarations leaves their assignment in place), extern calls and exits; a statement
// joins the run unless it names, on either side, what the run wrote (a Hash get's result
// excepted: the action reads it from the hash) or both it and the run use an extern other
// than Hash. An if, a block, a switch, an action's or a table's call and a declaration
// without an initializer end a run and go to other, which is not called for what they hold.
func SplitRuns(stmts []Stmt, run func([]Stmt), other func(Stmt)) {
	usesExtern := func(s Stmt) bool {
		found := false
		var e Expr
		switch st := s.(type) {
		case *AssignStmt:
			e = st.RHS
		case *CallStmt:
			e = st.Call
		case *DeclStmt:
			e = declInit(st)
		default:
			return false
		}
		walkExpr(e, func(x Expr) {
			if call, ok := x.(*CallExpr); ok {
				if m, ok := call.Callee.(*MethodDecl); ok && m.Owner != nil && m.Owner.Name != "Hash" {
					found = true
				}
			}
		})
		return found
	}
	var cur []Stmt
	written := map[string]bool{}
	ext := false
	flush := func() {
		if len(cur) > 0 {
			run(cur)
		}
		cur, ext = nil, false
		clear(written)
	}
	// reads: the statement names what the run wrote, on either side (DependsOnPaths looks at
	// the whole statement: writing a field the run wrote ends the run too)
	reads := func(s Stmt) bool {
		var es []Expr
		switch st := s.(type) {
		case *AssignStmt:
			es = []Expr{st.LHS, st.RHS}
		case *CallStmt:
			es = []Expr{st.Call}
		case *DeclStmt:
			es = []Expr{declInit(st)}
		}
		hit := false
		for _, e := range es {
			walkExpr(e, func(x Expr) {
				if t := ExprString(x); written[t] || written[sliceBase(t)] {
					hit = true
				}
			})
		}
		return hit
	}
	for _, s := range stmts {
		switch st := s.(type) {
		case *AssignStmt, *ExitStmt:
		case *DeclStmt:
			if declInit(st) == nil {
				flush()
				other(s)
				continue
			}
		case *CallStmt:
			if _, isAction := st.Call.Callee.(*ActionDecl); isAction || st.Call.Method == "apply" {
				flush()
				other(s)
				continue
			}
		default:
			flush()
			other(s)
			continue
		}
		e := usesExtern(s)
		if len(cur) > 0 && (reads(s) || (ext && e)) {
			flush()
		}
		cur = append(cur, s)
		ext = ext || e
		switch st := s.(type) {
		case *AssignStmt:
			if !isHashGet(st.RHS) {
				written[sliceBase(ExprString(st.LHS))] = true
			}
		case *DeclStmt:
			if !isHashGet(declInit(st)) {
				written[st.Decl.(*VarDecl).Name] = true
			}
		}
	}
	flush()
}

// declInit is a local variable declaration's initializer, or nil.
func declInit(s *DeclStmt) Expr {
	if v, ok := s.Decl.(*VarDecl); ok {
		return v.Init
	}
	return nil
}

// sliceBase is an expression's text without a trailing bit slice ("md.idx[15:0]": "md.idx").
func sliceBase(s string) string {
	if strings.HasSuffix(s, "]") {
		if i := strings.LastIndex(s, "["); i > 0 {
			return s[:i]
		}
	}
	return s
}

// tnaGatewayConditions refuses, in the apply blocks of an ingress or egress control and the
// controls it applies, an if condition that a Tofino gateway cannot evaluate, as bf-p4c 9.13.4
// refuses it (mau/gateway.cpp, CanonGatewayExpr and CheckGatewayExpr, p4c 34b86e9; each case
// of gatewayCases checked against the compiler). A gateway matches the PHV bytes of its fields,
// each XORed with another field or masked against a constant, so:
//
//   - an order comparison (<, <=, >, >=) or a & or | of two operands, neither a constant:
//     "condition too complex, one operand of ... must be constant" (compute max(a, b) or the
//     AND into a field first; a > b is max(a, b) != b);
//   - a call of an extern function (max, min): "condition too complex" (a method of an extern
//     instance, a register action's execute or a hash's get, p4c moves into a temporary);
//   - an operator that computes (+, -, *, <<, >>, ^, ~, unary -) on a non-constant operand:
//     "condition expression too complex" (the gateway reads fields, it computes nothing).
//
// A cast of a field is taken; a concatenation is taken within the gateway's width. The width
// (4 bytes and 12 bits of PHV input on Tofino 1) is not checked here: how bf-p4c splits a
// condition over gateway rows decides it, and bmv2/tofino.Gateways estimates it.
func (c *checker) tnaGatewayConditions(b Block) {
	isConst := func(e Expr) bool { _, ok := c.out.Const[e]; return ok }
	// computes reports whether e applies an operator that computes to a non-constant operand.
	computes := func(e Expr) bool {
		found := false
		walkExpr(e, func(x Expr) {
			if found || isConst(x) {
				return
			}
			switch x := x.(type) {
			case *UnaryExpr:
				found = x.Op == "-" || x.Op == "~"
			case *BinaryExpr:
				switch x.Op {
				case "+", "-", "*", "/", "%", "<<", ">>", "^", "|+|", "|-|":
					found = true
				}
			}
		})
		return found
	}
	var cond func(e Expr) bool
	// operand checks an operand of a comparison; false once it reported.
	operand := func(e Expr) bool {
		ok := true
		walkExpr(e, func(x Expr) {
			if !ok || isConst(x) {
				return
			}
			switch x := x.(type) {
			case *CallExpr:
				// An extern function (max, min): p4c leaves it in the condition. A method of
				// an extern instance (a register action's execute, a hash's get) it moves
				// into a temporary first, as it does a call with side effects.
				if m, isM := x.Callee.(*MethodDecl); isM && m.Owner == nil {
					c.errorf(x.Position(), "condition too complex: %s in an if's condition (a Tofino gateway reads fields; assign the call's result to a field or local first)", ExprString(x))
					ok = false
				}
			case *UnaryExpr:
				if x.Op == "-" || x.Op == "~" {
					c.errorf(x.Position(), "condition expression too complex: %s computes in an if's condition (a Tofino gateway compares fields; compute it into a field first)", ExprString(x))
					ok = false
				}
			case *BinaryExpr:
				switch x.Op {
				case "&", "|":
					if !isConst(x.X) && !isConst(x.Y) {
						c.errorf(x.Position(), "condition too complex, one operand of %s must be constant (a Tofino gateway masks a field with a constant only)", ExprString(x))
						ok = false
					}
				case "+", "-", "*", "/", "%", "<<", ">>", "^", "|+|", "|-|":
					c.errorf(x.Position(), "condition expression too complex: %s computes in an if's condition (a Tofino gateway compares fields; compute it into a field first)", ExprString(x))
					ok = false
				case "==", "!=", "<", "<=", ">", ">=", "&&", "||":
					ok = cond(x)
				}
			}
		})
		return ok
	}
	cond = func(e Expr) bool {
		if isConst(e) {
			return true
		}
		switch x := e.(type) {
		case *BinaryExpr:
			switch x.Op {
			case "&&", "||":
				return cond(x.X) && cond(x.Y)
			case "<", "<=", ">", ">=":
				if !isConst(x.X) && !isConst(x.Y) {
					c.errorf(x.Position(), "condition too complex, one operand of %s must be constant (a Tofino gateway compares two fields for equality only: a > b is max(a, b) != b, the max computed into a field first)", ExprString(x))
					return false
				}
				return operand(x.X) && operand(x.Y)
			case "==", "!=":
				return operand(x.X) && operand(x.Y)
			}
		case *UnaryExpr:
			if x.Op == "!" {
				return cond(x.X)
			}
		case *MemberExpr:
			// t.apply().hit / .miss: the table's hit, which the gateway does not read
			if call, ok := x.X.(*CallExpr); ok {
				if _, ok := call.Callee.(*TableDecl); ok && (x.Name == "hit" || x.Name == "miss") {
					return true
				}
			}
		}
		return operand(e)
	}
	for _, cd := range appliedControls(b.Control) {
		c.gatewayFlow(cd.Body.Stmts, map[string]Expr{}, computes)
		walkStmts(cd.Body, func(s Stmt) {
			if s, ok := s.(*IfStmt); ok {
				cond(s.Cond)
			}
		})
	}
}

// gatewayFlow refuses, in stmts (a block of an apply block), an if condition that reads a local
// variable or a field that a plain assignment (or a local's initializer) earlier in the block, or
// in the blocks around it, gave a computed value: p4c's copy propagation puts the value into the
// condition ("condition expression too complex"); written by an action, it is not propagated.
// known holds what was so assigned, by its text, until a write of it or of an operand, a branch
// that writes it, or, for a field, a call (an action may write any field; the apply block's
// locals it cannot see).
func (c *checker) gatewayFlow(stmts []Stmt, known map[string]Expr, computes func(Expr) bool) {
	// forget drops what a write of name invalidates.
	forget := func(name string) {
		for k, e := range known {
			if k == name || strings.HasPrefix(k, name+".") || strings.HasPrefix(name, k+".") {
				delete(known, k)
				continue
			}
			walkExpr(e, func(x Expr) {
				if t := ExprString(x); t == name || strings.HasPrefix(t, name+".") {
					delete(known, k)
				}
			})
		}
	}
	// call forgets the fields (an action may write any) and what the call's arguments name.
	call := func(cs *CallStmt) {
		for k := range known {
			if strings.Contains(k, ".") {
				delete(known, k)
			}
		}
		for _, a := range cs.Call.Args {
			forget(sliceBase(ExprString(a.Value)))
		}
	}
	// branch forgets what a nested statement writes or calls.
	branch := func(s Stmt) {
		walkStmts(s, func(x Stmt) {
			switch x := x.(type) {
			case *AssignStmt:
				forget(sliceBase(ExprString(x.LHS)))
			case *CallStmt:
				call(x)
			case *DeclStmt:
				if v, ok := x.Decl.(*VarDecl); ok {
					forget(v.Name)
				}
			}
		})
	}
	for _, st := range stmts {
		switch st := st.(type) {
		case *AssignStmt:
			name := sliceBase(ExprString(st.LHS))
			forget(name)
			self := false // x = x - 1: the old x is gone, nothing to propagate
			walkExpr(st.RHS, func(x Expr) { self = self || sliceBase(ExprString(x)) == name })
			if isVarOrField(st.LHS) && st.Op == "" && !self && computes(st.RHS) {
				known[name] = st.RHS
			}
		case *DeclStmt:
			if v, ok := st.Decl.(*VarDecl); ok {
				forget(v.Name)
				if v.Init != nil && computes(v.Init) {
					known[v.Name] = v.Init
				}
			}
		case *CallStmt:
			call(st)
		case *BlockStmt:
			c.gatewayFlow(st.Stmts, known, computes)
		case *IfStmt:
			walkExpr(st.Cond, func(x Expr) {
				e, ok := known[ExprString(x)]
				switch {
				case !ok || !isVarOrField(x):
				case isField(x):
					c.errorf(x.Position(), "condition expression too complex: %s was assigned %s above, which p4c propagates into the if's condition (a Tofino gateway compares fields; assign it in an action)", ExprString(x), ExprString(e))
				default:
					c.errorf(x.Position(), "condition expression too complex: %s holds %s, which p4c propagates into the if's condition (a Tofino gateway compares fields; make it a metadata field)", ExprString(x), ExprString(e))
				}
			})
			for _, b := range []Stmt{st.Then, st.Else} {
				if blk, ok := b.(*BlockStmt); ok {
					c.gatewayFlow(blk.Stmts, maps.Clone(known), computes)
				} else if b != nil {
					c.gatewayFlow([]Stmt{b}, maps.Clone(known), computes)
				}
			}
			if st.Else != nil {
				branch(st.Else)
			}
			branch(st.Then)
		default:
			branch(st)
		}
	}
}

// isVarOrField reports whether e is a local variable of an apply block or a field (not a
// slice, an index or a constant).
func isVarOrField(e Expr) bool {
	switch x := e.(type) {
	case *NameExpr:
		_, ok := x.Decl.(*VarDecl)
		return ok
	case *MemberExpr:
		return x.Field != nil
	}
	return false
}

// isField reports whether e is a field (meta.gt, hdr.nl.lease).
func isField(e Expr) bool {
	m, ok := e.(*MemberExpr)
	return ok && m.Field != nil
}

// isHashGet reports whether e is a Hash extern's get.
func isHashGet(e Expr) bool {
	call, ok := e.(*CallExpr)
	if !ok {
		return false
	}
	m, ok := call.Callee.(*MethodDecl)
	return ok && m.Owner != nil && m.Owner.Name == "Hash" && m.Name == "get"
}

// preloaded returns the bits of the hash outputs that leave an action, and forgets their
// destinations (hashOut: a destination written by a hash earlier in the action, and its bits):
// a hash's output that rhs computes with beside another operand from outside the PHV (a
// constant, another hash's output) leaves the action, as bf-p4c propagates the copy into that
// instruction (BackendCopyPropagation), which then reads two such operands, and loads the hash
// into a temporary in a table of its own, "$precompute" (ExpandInstructions, mau/
// instruction_selection.cpp, p4c 34b86e9).
func preloaded(rhs Expr, hashOut map[string]int) int {
	var hashes []string
	other := 0
	var operands func(e Expr)
	operands = func(e Expr) {
		switch x := e.(type) {
		case *BinaryExpr:
			operands(x.X)
			operands(x.Y)
		case *UnaryExpr:
			operands(x.X)
		case *CastExpr:
			operands(x.X)
		case *SliceExpr:
			operands(x.X)
		case *IntExpr, *BoolExpr:
			other++
		case *CallExpr:
			if isHashGet(x) {
				other++
			}
		case *NameExpr:
			if _, ok := x.Decl.(*ConstDecl); ok {
				other++
				return
			}
		}
		if t := sliceBase(ExprString(e)); isVarOrField(e) {
			if _, ok := hashOut[t]; ok {
				hashes = append(hashes, t)
			}
		}
	}
	operands(rhs)
	if len(hashes) == 0 || len(hashes)+other < 2 {
		return 0
	}
	gone := hashOut[hashes[0]]
	delete(hashOut, hashes[0])
	return gone
}

// tnaImmediateMsg is bf-p4c's message for a table whose hash, random and meter-color data is
// wider than the immediate pathway (mau/action_format.cpp, Format::analyze_actions, p4c
// 34b86e9: "In table %1%, the number of bits ...", ", and can not be allocated" after it).
const tnaImmediateMsg = "the number of bits required to go through the immediate pathway %d (e.g. data coming from Hash, RNG, Meter Color) is greater than the available bits 32"

// tnaImmediateBits warns of an action whose Hash and Random gets and meter colors need more
// than 32 bits (their outputs' widths, a color 8): in an ingress or egress control, a run of
// assignments of an apply block (what p4c makes one action: an if, a call or a block ends it)
// and the body, with the actions it calls, of an action that no table of the control lists
// (one the apply block calls: p4c makes it a table of its own); a table's actions are checked
// together, as the compiler checks them (tnaTableImmediateBits). The outputs reach the action
// through the immediate data bus, 32 bits wide per table on Tofino 1 and 2 alike
// (Format::IMMEDIATE_BITS, a constant of mau/action_format.h, not a device spec; bf-p4c refused
// a table of Tofino 2 with it, 2026-12-01). Seen with p4c-barefoot 9.13.4 (2026-11-30):
// thirteen actions of p4/tna/netlock.p4 at 8a03abf, 48 to 128 bits each; this rule named
// twelve of them where the compiler did and the thirteenth (ans_grant_pending) as an action.
// The compiler counts the outputs' sections as laid out on the bus after PHV allocation (it
// said 96 where the fields make 80: five 16-bit containers), never less than the fields' bits,
// so a count above 32 here is above 32 there, unless a transformation takes a hash out of the
// action: the rule models one, the $precompute table (preloaded), and warns rather than refuses
// for those it does not.
func (c *checker) tnaImmediateBits(b Block) {
	cd := b.Control
	if cd == nil || cd.Body == nil {
		return
	}
	bits := func(e Expr) int {
		n := 0
		walkExpr(e, func(x Expr) {
			call, ok := x.(*CallExpr)
			if !ok {
				return
			}
			m, ok := call.Callee.(*MethodDecl)
			if !ok || m.Owner == nil {
				return
			}
			switch {
			case (m.Owner.Name == "Hash" || m.Owner.Name == "Random") && m.Name == "get":
				if t := call.Type(); t != nil {
					n += WidthOf(t)
				}
			case (m.Owner.Name == "Meter" || m.Owner.Name == "DirectMeter") && m.Name == "execute":
				n += 8
			}
		})
		return n
	}
	report := func(p Pos, n int) {
		if n > 32 {
			c.warnf(p, "likely refused by bf-p4c: "+tnaImmediateMsg, n)
		}
	}
	actionRuns(cd.Body.Stmts, func(run []Stmt) {
		n := 0
		hashOut := map[string]int{} // a hash's destination in the run: its bits
		for _, s := range run {
			var rhs Expr
			switch st := s.(type) {
			case *AssignStmt:
				rhs = st.RHS
				if !isHashGet(rhs) {
					n -= preloaded(rhs, hashOut)
				}
			case *CallStmt:
				rhs = st.Call
			default:
				continue
			}
			n += bits(rhs)
			if as, ok := s.(*AssignStmt); ok && isHashGet(rhs) {
				hashOut[sliceBase(ExprString(as.LHS))] = bits(rhs)
			}
		}
		report(run[0].Position(), n)
	})
	// actions: the body, with the actions it calls
	var body func(a *ActionDecl, depth int) int
	body = func(a *ActionDecl, depth int) int {
		if a == nil || a.Body == nil || depth > 8 {
			return 0
		}
		n := 0
		walkStmt(a.Body, func(x Expr) {
			if call, ok := x.(*CallExpr); ok {
				if inner, ok := call.Callee.(*ActionDecl); ok {
					n += body(inner, depth+1)
				}
			}
		})
		walkStmts(a.Body, func(x Stmt) {
			if as, ok := x.(*AssignStmt); ok {
				n += bits(as.RHS)
			}
		})
		return n
	}
	listed := map[*ActionDecl]bool{} // the actions a table lists: tnaTableImmediateBits
	tableActions(cd, func(_ *TableDecl, r *ActionRef) { listed[r.Action] = true })
	for _, l := range cd.Locals {
		if a, ok := l.(*ActionDecl); ok && !listed[a] {
			report(a.P, body(a, 0))
		}
	}
}

// tnaSubActionDataMsg is bf-p4c 9.13.4's (p4c 34b86e9) refusal of a subtraction whose second
// operand is action data (phv/cluster_phv_operations.cpp, for sub, subc and the saturating
// ssubu and ssubs, both targets): a MAU ALU takes action data as its first source only, and
// bf-p4c turns a subtraction of a constant into an addition, not one of action data.
const tnaSubActionDataMsg = "Second operand of arithmetic subtraction cannot be sourced from action data. The second operand must either come from a packet field, metadata or a constant"

// tnaSubActionData refuses, in the actions the tables of the control of an ingress or egress
// block run (and the actions they call), a subtraction (-, |-|) whose right operand, casts and
// slices aside, is an action data parameter: a parameter of a table's action that no argument
// binds (tnaSubActionDataMsg). An action called directly from an apply block has no action
// data: its arguments become its parameters' values.
func (c *checker) tnaSubActionData(b Block) {
	if b.Control == nil {
		return
	}
	reported := map[Expr]bool{}
	var visit func(a *ActionDecl, args []*Arg, outer map[*Param]bool, use string, depth int)
	visit = func(a *ActionDecl, args []*Arg, outer map[*Param]bool, use string, depth int) {
		if a == nil || a.Body == nil || depth > 8 {
			return
		}
		data := map[*Param]bool{}
		for i, p := range a.Params {
			switch {
			case i < len(args) && args[i] != nil:
				// a parameter bound to a caller's action data parameter is action data
				if n, ok := stripCastsSlices(args[i].Value).(*NameExpr); ok {
					if q, ok := n.Decl.(*Param); ok && outer[q] {
						data[p] = true
					}
				}
			case p.Dir == DirNone:
				data[p] = true
			}
		}
		walkStmt(a.Body, func(e Expr) {
			switch x := e.(type) {
			case *BinaryExpr:
				if x.Op != "-" && x.Op != "|-|" {
					return
				}
				if n, ok := stripCastsSlices(x.Y).(*NameExpr); ok {
					if p, ok := n.Decl.(*Param); ok && data[p] && !reported[x] {
						reported[x] = true
						c.errorf(x.Position(), "%s: %s in action %s of %s (write it as an addition of the complement, or subtract in a later action from the PHV)",
							tnaSubActionDataMsg, ExprString(x), a.Name, use)
					}
				}
			case *CallExpr:
				if d, ok := x.Callee.(*ActionDecl); ok && d != a {
					visit(d, x.Ordered, data, use, depth+1)
				}
			}
		})
	}
	for _, cd := range appliedControls(b.Control) {
		tableActions(cd, func(t *TableDecl, r *ActionRef) {
			visit(r.Action, r.Args, nil, "table "+t.Name, 0)
		})
	}
}

// tableActions calls f with each action a table of cd lists (its actions and its entries'
// actions) that names an action declaration.
func tableActions(cd *ControlDecl, f func(t *TableDecl, r *ActionRef)) {
	for _, l := range cd.Locals {
		t, ok := l.(*TableDecl)
		if !ok {
			continue
		}
		for _, p := range t.Props {
			refs := p.Actions
			for _, e := range p.Entries {
				refs = append(refs, e.Action)
			}
			for _, r := range refs {
				if r != nil && r.Action != nil {
					f(t, r)
				}
			}
		}
	}
}

// stripCastsSlices is e without the casts and slices around it.
func stripCastsSlices(e Expr) Expr {
	for {
		switch x := e.(type) {
		case *CastExpr:
			e = x.X
		case *SliceExpr:
			e = x.X
		default:
			return e
		}
	}
}

// tnaSharedCounterMsg is bf-p4c 9.13.4's (p4c 34b86e9) refusal of an indirect counter or meter
// that two tables use when the compiler cannot tell that no packet runs both
// (mau/table_mutex.cpp, SharedIndirectAttachedAnalysis).
const tnaSharedCounterMsg = "cannot share %s because use of the %s is not mutually exclusive"

// tnaSharedCounters refuses two uses of one indirect Counter or Meter (count, execute) by
// statements of a control's apply block, directly or through the actions they call or the
// tables they apply, unless the compiler sees that one packet runs at most one of them:
// they are in different branches of one if (or cases of one switch), or the earlier one is
// followed in its block by an exit. On Tofino 2 the exit excludes only the uses in the blocks
// the compiler nests under it: bf-p4c nests the statements after an if with a branch that
// always exits in its other branch, level by level up from the exit, and turns the exit into a
// flag that every later table tests beyond the first level whose if has no such branch, so the
// uses after that if are not excluded (tnaSharedCounterMsg; both cases checked
// against the compiler, TestRealTNARules). Direct counters and meters and registers are not
// indirect resources and are not checked; nor are tables applied in a condition or a switch's
// expression, or the apply blocks of the controls this one applies.
func (c *checker) tnaSharedCounters(b Block) {
	if b.Control == nil || b.Control.Body == nil {
		return
	}
	gen := c.out.TofinoGeneration()
	type level struct {
		ifs    *IfStmt     // the if whose branch this level is (nil: a switch's case)
		sw     *SwitchStmt // the switch whose case this level is
		branch int         // 0 then, 1 else, or the switch case's index
	}
	type use struct {
		name string
		pos  Pos
		path []level
		// cover is, when an exit follows the use in its block, the depth of the outermost
		// block whose statements after it that exit excludes (0 the apply block: every later
		// use); -1 without an exit
		cover int
	}
	var uses []use
	// counters returns the indirect counters and meters a statement uses, through actions and
	// tables.
	counters := func(s Stmt) map[string]bool {
		out := map[string]bool{}
		seen := map[Decl]bool{}
		var visitAction func(d Decl)
		visitExpr := func(e Expr) {
			call, ok := e.(*CallExpr)
			if !ok {
				return
			}
			switch d := call.Callee.(type) {
			case *MethodDecl:
				if d.Owner != nil && ((d.Owner.Name == "Counter" && d.Name == "count") || (d.Owner.Name == "Meter" && d.Name == "execute")) {
					if m, ok := call.Fun.(*MemberExpr); ok {
						out[ExprString(m.X)] = true
					}
				}
			case *ActionDecl:
				visitAction(d)
			case *TableDecl:
				for _, p := range d.Props {
					for _, r := range p.Actions {
						visitAction(r.Action)
					}
				}
			}
		}
		visitAction = func(d Decl) {
			a, ok := d.(*ActionDecl)
			if !ok || a == nil || a.Body == nil || seen[a] {
				return
			}
			seen[a] = true
			walkStmt(a.Body, visitExpr)
		}
		walkStmt(s, visitExpr)
		return out
	}
	// terminates reports whether s exits on every path.
	var terminates func(s Stmt) bool
	terminates = func(s Stmt) bool {
		switch s := s.(type) {
		case *ExitStmt:
			return true
		case *BlockStmt:
			if s == nil {
				return false
			}
			for _, x := range s.Stmts {
				if terminates(x) {
					return true
				}
			}
		case *IfStmt:
			return s.Else != nil && terminates(s.Then) && terminates(s.Else)
		}
		return false
	}
	// cover is the depth of the outermost block the compiler nests the rest of under an exit
	// at path (the levels above it): on Tofino 2, the levels up to the first whose if has no
	// branch that always exits (the rest of the block that holds that if is not nested); on
	// Tofino 1 the apply block.
	cover := func(path []level) int {
		if gen != 2 {
			return 0
		}
		k := len(path)
		for j := len(path) - 1; j >= 0; j-- {
			l := path[j]
			if l.ifs == nil || (!terminates(l.ifs.Then) && (l.ifs.Else == nil || !terminates(l.ifs.Else))) {
				break
			}
			k = j
		}
		return k
	}
	var walk func(blk *BlockStmt, path []level)
	walk = func(blk *BlockStmt, path []level) {
		if blk == nil {
			return
		}
		for i, s := range blk.Stmts {
			switch x := s.(type) {
			case *IfStmt:
				for br, st := range []Stmt{x.Then, x.Else} {
					if st == nil {
						continue
					}
					p := append(path[:len(path):len(path)], level{ifs: x, branch: br})
					if bs, ok := st.(*BlockStmt); ok {
						walk(bs, p)
					} else {
						walk(&BlockStmt{Stmts: []Stmt{st}}, p)
					}
				}
			case *SwitchStmt:
				for ci, cs := range x.Cases {
					walk(cs.Body, append(path[:len(path):len(path)], level{sw: x, branch: ci}))
				}
			case *BlockStmt:
				walk(x, path)
			default:
				for name := range counters(s) {
					u := use{name: name, pos: s.Position(), path: path, cover: -1}
					// an exit after it in its block excludes the uses after it that it covers
					for _, rest := range blk.Stmts[i+1:] {
						if _, ok := rest.(*ExitStmt); ok {
							u.cover = cover(path)
							break
						}
					}
					uses = append(uses, u)
				}
			}
		}
	}
	walk(b.Control.Body, nil)
	covers := func(a, b use) bool {
		if a.cover < 0 || len(b.path) < a.cover {
			return false
		}
		for i := 0; i < a.cover; i++ {
			if a.path[i] != b.path[i] {
				return false
			}
		}
		return true
	}
	exclusive := func(a, b use) bool {
		for i := 0; i < len(a.path) && i < len(b.path); i++ {
			x, y := a.path[i], b.path[i]
			if x.ifs != y.ifs || x.sw != y.sw {
				return false
			}
			if x.branch != y.branch {
				return true
			}
		}
		return false
	}
	hint := "an exit after the first"
	if gen == 2 {
		hint += " in an if whose branch always exits, at every level above it"
	}
	reported := map[Pos]bool{}
	for j, u2 := range uses {
		for _, u1 := range uses[:j] {
			if u1.name != u2.name || covers(u1, u2) || exclusive(u1, u2) || reported[u2.pos] {
				continue
			}
			reported[u2.pos] = true
			c.errorf(u2.pos, "the uses at %s and here: "+tnaSharedCounterMsg+" (make them exclusive: branches of one if, or %s)",
				u1.pos, u2.name, u2.name, hint)
		}
	}
}

// tnaTableExterns refuses, in the tables a control declares, what bf-p4c 9.13.4 refuses of the
// registers, meters and hashes their actions run (mau/instruction_selection.cpp; each verdict
// checked against the compiler on both targets, on p4/tna/netlock.p4 and on
// testdata/reject/tna_table_externs.p4 and its accepted twin, 2026-11-30):
//   - an action that runs one of the table's registers or meters runs all of them: they share
//     the table's meter address bus, enabled per action ("The action a uses Register r but
//     does not use Register s").
//
// The hash a table's actions compute has rules of its own (tnaHashPathway).
//
// Not checked: the compiler refuses some actions that write the answers of two register
// actions ("At most one stateful ALU operation with a given address is allowed per action.
// Writing to f is not allowed here": two 16-bit answers of 32-bit cells, two 1-bit ones, and
// p4/tna/netlock.p4's txn halves) and compiles others (two 32-bit answers at one index,
// reject/tna_table_externs.p4's twin in accept/): the rule is not pinned down here. Actions
// the apply block runs directly are not checked: the compiler gives each register call there a
// table of its own.
func (c *checker) tnaTableExterns(b Block) {
	if b.Control == nil {
		return
	}
	for _, l := range b.Control.Locals {
		t, ok := l.(*TableDecl)
		if !ok {
			continue
		}
		type actUse struct {
			ref  *ActionRef
			used map[string]bool
		}
		var acts []actUse
		all := map[string]bool{}
		seen := map[*ActionDecl]bool{}
		for _, p := range t.Props {
			for _, r := range p.Actions {
				a := r.Action
				if a == nil || a.Body == nil || seen[a] {
					continue
				}
				seen[a] = true
				used := meterBusUses(a)
				for n := range used {
					all[n] = true
				}
				acts = append(acts, actUse{r, used})
			}
		}
		for _, u := range acts {
			if len(u.used) == 0 || len(u.used) == len(all) {
				continue
			}
			var missing []string
			for n := range all {
				if !u.used[n] {
					missing = append(missing, n)
				}
			}
			sort.Strings(missing)
			var has []string
			for n := range u.used {
				has = append(has, n)
			}
			sort.Strings(has)
			c.errorf(u.ref.P, "table %s: the action %s uses %s but does not use %s (bf-p4c: every action of a table that runs one of its registers or meters runs all of them: \"There are issues with the following indirect externs\")",
				t.Name, u.ref.Action.Name, strings.Join(has, ", "), strings.Join(missing, ", "))
		}
	}
}

// meterBusUses lists the registers (through their register actions, or read and write) and
// meters an action runs, through the actions it calls.
func meterBusUses(a *ActionDecl) map[string]bool {
	used := map[string]bool{}
	seen := map[*ActionDecl]bool{}
	var visit func(a *ActionDecl)
	// the register a RegisterAction's execute runs, or the Meter an execute runs; "" if neither
	meterBusOf := func(e Expr) string {
		call, ok := e.(*CallExpr)
		if !ok {
			return ""
		}
		m, ok := call.Callee.(*MethodDecl)
		if !ok || m.Owner == nil || !isTNAExtern(m.Owner) || m.Name != "execute" {
			return ""
		}
		me, ok := call.Fun.(*MemberExpr)
		if !ok {
			return ""
		}
		switch m.Owner.Name {
		case "RegisterAction":
			if n, ok := me.X.(*NameExpr); ok {
				if inst, ok := n.Decl.(*InstanceDecl); ok && len(inst.Args) > 0 {
					return ExprString(inst.Args[0].Value)
				}
			}
		case "Meter":
			return ExprString(me.X)
		}
		return ""
	}
	visit = func(a *ActionDecl) {
		if a == nil || a.Body == nil || seen[a] {
			return
		}
		seen[a] = true
		walkStmt(a.Body, func(e Expr) {
			if rc := registerMethod(e); rc != nil {
				used[rc.reg.Name] = true
				return
			}
			if n := meterBusOf(e); n != "" {
				used[n] = true
				return
			}
			if call, ok := e.(*CallExpr); ok {
				if d, ok := call.Callee.(*ActionDecl); ok {
					visit(d)
				}
			}
		})
	}
	visit(a)
	return used
}
