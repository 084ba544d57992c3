package tofino

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/netlock-go/netlock/bmv2/front"
)

// This file specializes a control for one instance of it, as bf-p4c does before it builds any
// table (p4c's SpecializeAll, then its constant folding and SimplifyControlFlow): a program may
// instantiate one control in several Pipelines with different constructor arguments
// (Pipeline(P(), Ing(1), ...) pipe_a; Pipeline(P(), Ing(2), ...) pipe_b;), and each Pipeline
// holds only what its instance's arguments leave of the control. Every analysis of a Pipeline
// (EstimatePipelines: the table dependency graph, the value model, gateways, PHV demand, hash
// distribution, logical tables; IngressPassPHV; PipelineObjects) runs on the specialized
// control, so none of them counts what the instance dropped.

// Specialize returns the control b instantiates as b's constructor arguments leave it: a
// constructor parameter is the constant b passes (or the parameter's default), and in the
// apply block an if whose condition names such parameters and is then decided (knownValue:
// ==, !=, &&, ||, ! of constants and those parameters) is the branch taken; an operand of &&
// or || that is decided without deciding the whole is dropped from the condition. A block left
// empty is no statement, a block of one statement is that statement, and an if left with
// nothing in either branch is none (p4c's SimplifyControlFlow). The control's locals (tables,
// actions, register actions, registers, variables, instances) that only the dropped code
// names, directly or through other locals, are dropped with it.
//
// The result shares every statement, expression and declaration it does not change with
// b.Control, and it is b.Control itself when nothing is dropped (no constructor parameter, or
// none that decides a condition): the analyses of such a control are the same as before
// specialization. Not specialized: a parameter read elsewhere than in an apply block's if
// condition (an assignment, a key: the models read it as a field no table writes), the bodies
// of actions and functions, switch statements' labels and conditional expressions (?:), and
// the controls the control applies (their own instances' arguments). b.Control is nil for a
// parser, and so is the result.
func Specialize(b front.Block, consts map[front.Expr]front.Value) *front.ControlDecl {
	ctl := b.Control
	if ctl == nil || ctl.Body == nil {
		return ctl
	}
	vals := ctorValues(ctl.CtorParams, b.Args, consts)
	if len(vals) == 0 {
		return ctl
	}
	f := &folder{vals: vals}
	body := f.block(ctl.Body)
	if body == ctl.Body {
		return ctl
	}
	spec := *ctl
	spec.Body = body
	spec.Locals = liveLocals(ctl.Locals, body, f)
	return &spec
}

// ctorValues is the value of each constructor parameter that its argument (positional or
// named) or its default gives as a constant that is a non-negative integer or a boolean (true
// is 1), as the engine binds them (bmv2/engine's bindCtor). A parameter whose argument is
// something else (an extern instance, a value out of range) has none.
func ctorValues(params []*front.Param, args []*front.Arg, consts map[front.Expr]front.Value) map[*front.Param]uint64 {
	vals := map[*front.Param]uint64{}
	for i, p := range params {
		e := front.CtorArg(params, args, i)
		if e == nil {
			continue
		}
		switch v := consts[e].(type) {
		case *big.Int:
			if v.Sign() >= 0 && v.IsUint64() {
				vals[p] = v.Uint64()
			}
		case bool:
			vals[p] = b2u(v)
		}
	}
	return vals
}

// folder folds an apply block for one instance: vals are its constructor parameters' values;
// droppedStmts and droppedExprs are the code the folding removed (branches not taken, decided
// conditions and operands), none of which runs in the instance.
type folder struct {
	vals         map[*front.Param]uint64
	droppedStmts []front.Stmt
	droppedExprs []front.Expr
}

func (f *folder) lookup(d front.Decl) (uint64, bool) {
	p, ok := d.(*front.Param)
	if !ok {
		return 0, false
	}
	n, ok := f.vals[p]
	return n, ok
}

// known is e's value where the instance's constructor arguments decide it (knownValue); an
// expression that names none of them is not known here, even when constant (the model of an
// unspecialized control does not fold it either). A condition that applies a table or calls an
// extern runs it, so it decides nothing unless its left operand of && or || decides it first
// (the right operand then never runs, as p4c's constant folding has it): nothing in a
// condition known here runs.
func (f *folder) known(e front.Expr) (uint64, bool) {
	if !f.namesParam(e) {
		return 0, false
	}
	if !hasCalls(e) {
		return knownValue(e, f.lookup)
	}
	switch x := e.(type) {
	case *front.UnaryExpr:
		if v, ok := f.known(x.X); ok && x.Op == "!" {
			return b2u(v == 0), true
		}
	case *front.BinaryExpr:
		if x.Op != "&&" && x.Op != "||" {
			break
		}
		if v, ok := f.known(x.X); ok && (v != 0) == (x.Op == "||") {
			return b2u(v != 0), true
		}
	}
	return 0, false
}

// namesParam reports whether e names a constructor parameter the instance gives a value.
func (f *folder) namesParam(e front.Expr) bool {
	found := false
	front.InspectExpr(e, func(x front.Expr) {
		if n, ok := x.(*front.NameExpr); ok {
			if _, ok := f.lookup(n.Decl); ok {
				found = true
			}
		}
	})
	return found
}

// hasCalls reports whether e calls anything other than isValid (a table's apply, an extern's
// method, an action or a function).
func hasCalls(e front.Expr) bool {
	found := false
	front.InspectExpr(e, func(x front.Expr) {
		if c, ok := x.(*front.CallExpr); ok && c.Method != "isValid" {
			found = true
		}
	})
	return found
}

// simplify drops the operands of && and || in e that the instance decides as the operator's
// identity (true for &&, false for ||): where half is 1, half == 1 && x is x. It returns e
// itself when it drops nothing.
func (f *folder) simplify(e front.Expr) front.Expr {
	b, ok := e.(*front.BinaryExpr)
	if !ok || (b.Op != "&&" && b.Op != "||") {
		return e
	}
	x, y := f.simplify(b.X), f.simplify(b.Y)
	identity := b2u(b.Op == "&&")
	if v, ok := f.known(x); ok && v == identity {
		f.droppedExprs = append(f.droppedExprs, x)
		return y
	}
	if v, ok := f.known(y); ok && v == identity {
		f.droppedExprs = append(f.droppedExprs, y)
		return x
	}
	if x == b.X && y == b.Y {
		return e
	}
	c := *b
	c.X, c.Y = x, y
	return &c
}

// block folds a block: it returns b itself when nothing in it changes.
func (f *folder) block(b *front.BlockStmt) *front.BlockStmt {
	if b == nil {
		return nil
	}
	var out []front.Stmt
	changed := false
	for _, s := range b.Stmts {
		r := f.stmt(s)
		if r != s {
			changed = true
		}
		if r != nil {
			out = append(out, r)
		}
	}
	if !changed {
		return b
	}
	c := *b
	c.Stmts = out
	return &c
}

// stmt folds s: s itself when nothing in it changes, nil when nothing of it is left.
func (f *folder) stmt(s front.Stmt) front.Stmt {
	switch s := s.(type) {
	case *front.BlockStmt:
		if s == nil {
			return s
		}
		return f.block(s)
	case *front.IfStmt:
		return f.ifStmt(s)
	case *front.SwitchStmt:
		var cases []*front.SwitchCase
		changed := false
		for _, k := range s.Cases {
			body := f.block(k.Body)
			if body != k.Body {
				c := *k
				c.Body, changed = body, true
				k = &c
			}
			cases = append(cases, k)
		}
		if !changed {
			return s
		}
		c := *s
		c.Cases = cases
		return &c
	}
	return s
}

// ifStmt folds an if: the branch taken when the instance decides its condition (nil when that
// branch is missing), else the if with its condition simplified and its branches folded (nil
// when that leaves both empty and the condition calls nothing).
func (f *folder) ifStmt(s *front.IfStmt) front.Stmt {
	cond := f.simplify(s.Cond)
	if v, ok := f.known(cond); ok {
		taken, other := s.Then, s.Else
		if v == 0 {
			taken, other = s.Else, s.Then
		}
		f.droppedExprs = append(f.droppedExprs, cond)
		if other != nil {
			f.droppedStmts = append(f.droppedStmts, other)
		}
		if taken == nil {
			return nil
		}
		return unwrap(f.stmt(taken))
	}
	then, els := f.stmt(s.Then), s.Else
	if e := f.stmt(els); e != els {
		els = unwrap(e) // an else left empty is none
	}
	if cond == s.Cond && then == s.Then && els == s.Else {
		return s
	}
	if unwrap(then) == nil && els == nil && !hasCalls(cond) {
		// both branches folded away: an if of nothing, which p4c removes
		f.droppedExprs = append(f.droppedExprs, cond)
		return nil
	}
	if then == nil {
		then = &front.BlockStmt{P: s.Then.Position()}
	}
	return &front.IfStmt{P: s.P, Cond: cond, Then: then, Else: els}
}

// unwrap is what p4c's SimplifyControlFlow leaves of a block that a folded if left in its
// place: nothing of an empty one, the statement of a block of one statement (not a
// declaration), the block itself otherwise (or when annotated).
func unwrap(s front.Stmt) front.Stmt {
	b, ok := s.(*front.BlockStmt)
	if !ok || b == nil || len(b.Annos) > 0 {
		return s
	}
	switch len(b.Stmts) {
	case 0:
		return nil
	case 1:
		if _, decl := b.Stmts[0].(*front.DeclStmt); !decl {
			return b.Stmts[0]
		}
	}
	return b
}

// liveLocals is locals less those that only the code f dropped names: a local that the dropped
// code names, directly or through other locals, stays when the folded body or a local the
// dropped code does not name names it too (a local nothing names stays, as it would unfolded).
func liveLocals(locals []front.Decl, body *front.BlockStmt, f *folder) []front.Decl {
	dropped := reachSet(func(r *reacher) {
		for _, s := range f.droppedStmts {
			r.stmt(s, "")
		}
		for _, e := range f.droppedExprs {
			r.expr(e, "")
		}
	})
	if !slices.ContainsFunc(locals, func(d front.Decl) bool { return dropped[d] }) {
		return locals
	}
	live := reachSet(func(r *reacher) {
		r.stmt(body, "")
		for _, d := range locals {
			if !dropped[d] {
				r.decl(d, "")
			}
		}
	})
	var out []front.Decl
	for _, d := range locals {
		if !dropped[d] || live[d] {
			out = append(out, d)
		}
	}
	return out
}

// reacher finds the declarations code names, and those they name in turn: a table's keys,
// actions and properties, an action's or function's body, an instance's arguments (a register
// action's register) and initializer (its apply body), a variable's initializer, and the apply
// block of a control instance applied. Each declaration is visited once for each instance path
// it is reached at: "" for the walked control's own, "sub." for those of the control instance
// sub that it applies.
type reacher struct {
	seen  map[reached]bool
	visit func(d front.Decl, path string)
}

type reached struct {
	d    front.Decl
	path string
}

// reachSet is the declarations walk's reacher reaches, at any path.
func reachSet(walk func(*reacher)) map[front.Decl]bool {
	set := map[front.Decl]bool{}
	walk(&reacher{seen: map[reached]bool{}, visit: func(d front.Decl, _ string) { set[d] = true }})
	return set
}

// stmt walks the expressions of s and of the statements under it.
func (r *reacher) stmt(s front.Stmt, path string) {
	if s == nil {
		return
	}
	// front's walk of an action's body is the walk of its statements' expressions
	front.InspectDecl(&front.ActionDecl{Body: &front.BlockStmt{Stmts: []front.Stmt{s}}}, r.names(path))
}

func (r *reacher) expr(e front.Expr, path string) { front.InspectExpr(e, r.names(path)) }

// names is the walk of expressions at path: every name's declaration is reached.
func (r *reacher) names(path string) func(front.Expr) {
	return func(e front.Expr) {
		if n, ok := e.(*front.NameExpr); ok && n.Decl != nil {
			r.decl(n.Decl, path)
		}
	}
}

// decl reaches d at path, then what d names.
func (r *reacher) decl(d front.Decl, path string) {
	k := reached{d, path}
	if r.seen[k] {
		return
	}
	r.seen[k] = true
	r.visit(d, path)
	front.InspectDecl(d, r.names(path))
	if inst, ok := d.(*front.InstanceDecl); ok {
		if ct, ok := inst.T.(*front.ControlType); ok && ct.Decl.Body != nil {
			r.stmt(ct.Decl.Body, path+inst.Name+".")
		}
	}
}

// PipeObjects is what one Pipeline of a TNA program holds once its controls are specialized
// (Specialize): for the ingress [0] and the egress [1], the tables its apply block applies and
// the Register and DirectRegister instances the code it runs uses (through a RegisterAction's
// or DirectRegisterAction's execute, a table's registers property, or their own methods),
// named as their control declares them (a control instance's as "instance.name"), sorted, each
// once.
type PipeObjects struct {
	Pipeline          string
	Tables, Registers [2][]string
}

// PipelineObjects lists PipeObjects for each Pipeline of c's Switch (a checked TNA program),
// in Switch's order: which Pipeline's copy of a register holds its state.
func PipelineObjects(c *front.Checked) ([]PipeObjects, error) {
	pipes, err := c.TNAPipes()
	if err != nil {
		return nil, fmt.Errorf("tofino: %w", err)
	}
	var out []PipeObjects
	for _, p := range pipes {
		o := PipeObjects{Pipeline: p.Name}
		for i, b := range []front.Block{p.Ingress, p.Egress} {
			o.Tables[i], o.Registers[i] = controlObjects(Specialize(b, c.Const))
		}
		out = append(out, o)
	}
	return out, nil
}

// controlObjects is the tables and registers ctl's apply block reaches (PipeObjects).
func controlObjects(ctl *front.ControlDecl) (tables, registers []string) {
	if ctl == nil || ctl.Body == nil {
		return nil, nil
	}
	r := &reacher{seen: map[reached]bool{}, visit: func(d front.Decl, path string) {
		switch d := d.(type) {
		case *front.TableDecl:
			tables = append(tables, path+d.Name)
		case *front.InstanceDecl:
			if n := externName(d); n == "Register" || n == "DirectRegister" {
				registers = append(registers, path+d.Name)
			}
		}
	}}
	r.stmt(ctl.Body, "")
	slices.Sort(tables)
	slices.Sort(registers)
	return slices.Compact(tables), slices.Compact(registers)
}

// SpecializeParser returns the parser b instantiates as b's constructor arguments leave it, as
// bf-p4c's specialization and constant folding do: a select whose one key is a constructor
// parameter with a constant value (ctorValues) goes to the state of the first case that
// matches the value (or default), and the states no longer reachable from start are dropped
// (p4/tna/netlock.p4's fold: half a's parser keeps start_a's states, half b's the bridge's).
// The result shares every state with b.Parser, and it is b.Parser itself when nothing is
// dropped. Not specialized: a parameter read in a state's statements or in a select of
// several keys. b.Parser is nil for a control, and so is the result.
func SpecializeParser(b front.Block, consts map[front.Expr]front.Value) *front.ParserDecl {
	ps := b.Parser
	if ps == nil {
		return nil
	}
	vals := ctorValues(ps.CtorParams, b.Args, consts)
	if len(vals) == 0 {
		return ps
	}
	byName := map[string]*front.ParserState{}
	for _, st := range ps.States {
		byName[st.Name] = st
	}
	reached := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		st := byName[name]
		if st == nil || reached[name] {
			return
		}
		reached[name] = true
		if st.Trans == nil {
			return
		}
		if st.Trans.Target != nil {
			visit(st.Trans.Target.Name)
			return
		}
		sel := st.Trans.Select
		if sel == nil {
			return
		}
		if v, ok := selectedParam(sel, vals); ok {
			for _, c := range sel.Cases {
				if caseMatches(c, v, consts) {
					visit(c.State.Name)
					return
				}
			}
			return // no case matches: reject
		}
		for _, c := range sel.Cases {
			visit(c.State.Name)
		}
	}
	visit("start")
	if len(reached) == len(ps.States) {
		return ps
	}
	spec := *ps
	spec.States = nil
	for _, st := range ps.States {
		if reached[st.Name] {
			spec.States = append(spec.States, st)
		}
	}
	return &spec
}

// selectedParam is the value of sel's key when sel has one key and it is a constructor
// parameter with a value in vals.
func selectedParam(sel *front.SelectExpr, vals map[*front.Param]uint64) (uint64, bool) {
	if len(sel.Keys) != 1 {
		return 0, false
	}
	n, ok := sel.Keys[0].(*front.NameExpr)
	if !ok {
		return 0, false
	}
	p, ok := n.Decl.(*front.Param)
	if !ok {
		return 0, false
	}
	v, ok := vals[p]
	return v, ok
}

// caseMatches reports whether select case c of one key matches value v: default or _, or a
// constant equal to v. A keyset of another kind (a mask, a range, a value set) is taken to
// match, so that its state and those after it are kept.
func caseMatches(c *front.SelectCase, v uint64, consts map[front.Expr]front.Value) bool {
	if len(c.Keyset) != 1 {
		return true
	}
	switch k := c.Keyset[0].(type) {
	case *front.DefaultExpr, *front.DontCareExpr:
		return true
	default:
		switch x := consts[k].(type) {
		case *big.Int:
			return x.IsUint64() && x.Uint64() == v
		case bool:
			return b2u(x) == v
		}
	}
	return true
}
