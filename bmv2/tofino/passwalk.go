package tofino

import (
	"fmt"
	"maps"
	"math/big"
	"strconv"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// This file counts the PHV demand of one pass type of a control that decides, at its start,
// what a packet's pass does and records the decision in exclusive 1-bit flags, or in the values
// of one variable (p4/tna/netlock.p4's ptype: P_ACQ, P_REL, ...), then tests them in separate if
// statements. bf-p4c overlays metadata only when it finds two fields on no common control-flow
// path (phv/analysis/build_mutex.h, BuildMetadataOverlay); a flag tested in separate if
// statements hides that exclusivity from it. The demand of each pass type says what an
// allocation that knew it could reach: the whole is at least the largest pass type's.

// PassDemand is the PHV demand of the passes that set one flag.
type PassDemand struct {
	// Flag is the flag set (the others clear); "" for the passes that set none.
	Flag string
	// Pass is the values the walk assumed: the flag's variable (or every flag's) and its value.
	Pass map[string]uint64
	PHVDemand
	// Graph is the table dependency graph of the control's tables that such a pass can reach
	// (TableGraph with the values of Pass assumed; IngressPassPHV sets it): its critical path
	// is what the pass type alone would need if its tables excluded the other types' as the
	// compiler sees it.
	Graph *Graph
}

// PassPHV counts, for each of flags (1-bit local variables the control's apply block declares)
// and for none of them, the PHV demand of a gress whose control runs a pass with that flag set
// and the others clear: the parser and deparser as GressPHV counts them, and of the control what
// that pass reaches. The control's statements are walked with the values of its local
// variables that are known (a constant assigned on every path there, the flags as assumed),
// and an if statement whose condition is then known contributes only the branch taken.
//
// It fails unless the flags are exclusive as the control is written: every assignment of a
// flag is of a constant, and two assignments of 1 to different flags sit in different branches
// of one if statement.
func PassPHV(parser *front.ParserDecl, control, deparser *front.ControlDecl, flags []string) ([]PassDemand, error) {
	if control == nil || control.Body == nil {
		return nil, fmt.Errorf("tofino: no control to walk")
	}
	specs := make([]passSpec, len(flags))
	for i, f := range flags {
		sp, err := parsePassSpec(f)
		if err != nil {
			return nil, err
		}
		specs[i] = sp
	}
	if err := checkExclusive(control, specs); err != nil {
		return nil, err
	}
	var out []PassDemand
	for i := 0; i <= len(specs); i++ {
		pass := make(map[string]uint64, len(flags))
		for _, g := range specs {
			pass[g.name] = 0
		}
		label := ""
		if i < len(specs) {
			pass[specs[i].name] = specs[i].value
			label = flags[i]
		}
		out = append(out, PassDemand{Flag: label, Pass: pass, PHVDemand: gressPHV(parser, control, deparser, pass)})
	}
	return out, nil
}

// passSpec is one pass type: a variable and its value in that pass (a 1-bit flag of the apply
// block set: 1).
type passSpec struct {
	name  string
	value uint64
	flag  bool // given as a flag's name: a bit<1> set to 1, exclusive with the others by branches
}

// parsePassSpec reads "flag" (a 1-bit variable set to 1) or "var=N" (a variable holding N, N > 0).
func parsePassSpec(f string) (passSpec, error) {
	name, val, ok := strings.Cut(f, "=")
	if !ok {
		return passSpec{name: f, value: 1, flag: true}, nil
	}
	n, err := strconv.ParseUint(strings.TrimSpace(val), 0, 64)
	if err != nil || n == 0 {
		return passSpec{}, fmt.Errorf("tofino: pass %q: want VAR=N with N a positive integer", f)
	}
	return passSpec{name: strings.TrimSpace(name), value: n}, nil
}

// ifArm is one branch of an if statement: where an assignment sits.
type ifArm struct {
	s      *front.IfStmt
	inElse bool
}

// checkExclusive checks that flags are declared in control's apply block as 1-bit variables,
// assigned only constants, and set to non-zero only in different branches of a common if
// statement. A variable given with its value (VAR=N) may be the control's own instead (declared
// beside its actions, which a table's entries choose): one variable holds one value, so its
// passes exclude each other whoever writes it. A flag may not: the sets of two flags in actions
// cannot be told apart by the branches they sit in.
func checkExclusive(control *front.ControlDecl, specs []passSpec) error {
	var body front.Stmt = control.Body
	want := map[string]bool{}
	isFlag := map[string]bool{}
	for _, sp := range specs {
		want[sp.name] = true
		isFlag[sp.name] = sp.flag
	}
	declared := map[string]bool{}
	type set struct {
		flag string
		p    front.Pos
		arms []ifArm
	}
	var sets []set
	var errs []string
	var walk func(s front.Stmt, arms []ifArm)
	walk = func(s front.Stmt, arms []ifArm) {
		switch s := s.(type) {
		case *front.BlockStmt:
			if s == nil {
				return
			}
			for _, x := range s.Stmts {
				walk(x, arms)
			}
		case *front.IfStmt:
			walk(s.Then, append(arms[:len(arms):len(arms)], ifArm{s, false}))
			if s.Else != nil {
				walk(s.Else, append(arms[:len(arms):len(arms)], ifArm{s, true}))
			}
		case *front.SwitchStmt:
			for _, c := range s.Cases {
				if c.Body != nil {
					walk(c.Body, arms) // cases of a switch are not told apart: a flag set in two conflicts
				}
			}
		case *front.DeclStmt:
			if v, ok := s.Decl.(*front.VarDecl); ok && want[v.Name] {
				if isFlag[v.Name] && front.WidthOf(v.T) != 1 {
					errs = append(errs, fmt.Sprintf("%s: flag %s is not a bit<1>", v.P, v.Name))
				}
				declared[v.Name] = true
				if v.Init != nil {
					if n, ok := constOf(v.Init); !ok || n != 0 {
						errs = append(errs, fmt.Sprintf("%s: flag %s starts other than 0", v.P, v.Name))
					}
				}
			}
		case *front.AssignStmt:
			n, ok := s.LHS.(*front.NameExpr)
			if !ok || !want[n.Name] {
				return
			}
			if _, isVar := n.Decl.(*front.VarDecl); !isVar {
				return
			}
			c, known := constOf(s.RHS)
			switch {
			case s.Op != "" || !known:
				errs = append(errs, fmt.Sprintf("%s: flag %s is assigned what is not a constant", s.P, n.Name))
			case c != 0 && isFlag[n.Name]:
				sets = append(sets, set{n.Name, s.P, arms})
			}
		}
	}
	walk(body, nil)
	ofControl := map[string]bool{}
	for _, l := range control.Locals {
		if v, ok := l.(*front.VarDecl); ok {
			ofControl[v.Name] = true
		}
	}
	told := map[string]bool{}
	for _, sp := range specs {
		f := sp.name
		switch {
		case declared[f] || told[f]:
		case ofControl[f] && !sp.flag:
			declared[f] = true
		case ofControl[f]:
			told[f] = true
			errs = append(errs, fmt.Sprintf("flag %s is a variable of the control, not of the apply block (give its passes as %s=N)", f, f))
		default:
			told[f] = true
			errs = append(errs, fmt.Sprintf("flag %s is not a variable of the apply block or of the control", f))
		}
	}
	for i, a := range sets {
		for _, b := range sets[i+1:] {
			if a.flag != b.flag && !diverge(a.arms, b.arms) {
				errs = append(errs, fmt.Sprintf("flags %s (%s) and %s (%s) can both be set in one pass", a.flag, a.p, b.flag, b.p))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("tofino: the pass flags are not exclusive: %s", strings.Join(errs, "; "))
	}
	return nil
}

// diverge reports whether two chains of branches part at a common if statement.
func diverge(a, b []ifArm) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i].s != b[i].s {
			return false
		}
		if a[i].inElse != b[i].inElse {
			return true
		}
	}
	return false
}

// constOf is the value of an integer or boolean literal, or of a declared constant (constBig).
func constOf(e front.Expr) (uint64, bool) {
	switch e := e.(type) {
	case *front.IntExpr, *front.NameExpr:
		if v := constBig(e); v != nil && v.Sign() >= 0 && v.IsUint64() {
			return v.Uint64(), true
		}
	case *front.BoolExpr:
		if e.Val {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// passEnv holds the local variables whose values are known at a point of the walk.
type passEnv map[*front.VarDecl]uint64

// passControl walks control as one pass: its apply block with the flags' values of pass; the
// actions, tables and register actions it declares count when a reached statement uses them.
func (w *phvWalk) passControl(control *front.ControlDecl, pass map[string]uint64) {
	w.pass = pass
	w.seen[control] = true
	for _, l := range control.Locals {
		switch l := l.(type) {
		case *front.VarDecl:
			if l.Init != nil {
				front.InspectExpr(l.Init, w.expr)
			}
		case *front.InstanceDecl:
			w.cells(l)
		}
	}
	w.stmt(control.Body, passEnv{})
	w.pass = nil
}

// stmt walks s from env and returns the values known after it.
func (w *phvWalk) stmt(s front.Stmt, env passEnv) passEnv {
	switch s := s.(type) {
	case *front.BlockStmt:
		if s == nil {
			return env
		}
		for _, x := range s.Stmts {
			env = w.stmt(x, env)
		}
	case *front.DeclStmt:
		if v, ok := s.Decl.(*front.VarDecl); ok {
			if v.Init != nil {
				front.InspectExpr(v.Init, w.expr)
			}
		} else {
			front.InspectDecl(s.Decl, w.expr)
		}
		env.step(s, func(e front.Expr) (uint64, bool) { return w.eval(e, env) })
	case *front.AssignStmt:
		front.InspectExpr(s.LHS, w.expr)
		front.InspectExpr(s.RHS, w.expr)
		env.step(s, func(e front.Expr) (uint64, bool) { return w.eval(e, env) })
	case *front.CallStmt:
		front.InspectExpr(s.Call, w.expr)
		env.step(s, nil)
	case *front.IfStmt:
		front.InspectExpr(s.Cond, w.expr)
		if c, ok := w.eval(s.Cond, env); ok {
			if c != 0 {
				return w.stmt(s.Then, env)
			}
			if s.Else != nil {
				return w.stmt(s.Else, env)
			}
			return env
		}
		a := w.stmt(s.Then, maps.Clone(env))
		b := env
		if s.Else != nil {
			b = w.stmt(s.Else, maps.Clone(env))
		}
		return meet(a, b)
	case *front.SwitchStmt:
		front.InspectExpr(s.Expr, w.expr)
		out := env
		for _, c := range s.Cases {
			if c.Body != nil {
				out = meet(out, w.stmt(c.Body, maps.Clone(env)))
			}
		}
		return out
	case *front.ReturnStmt:
		if s.Value != nil {
			front.InspectExpr(s.Value, w.expr)
		}
	}
	return env
}

// step updates env for a declaration, an assignment or a call: a local variable declared or
// assigned a value that eval knows holds it; one assigned anything else, or passed to a call
// (an out or inout argument), is no longer known.
func (env passEnv) step(s front.Stmt, eval func(front.Expr) (uint64, bool)) {
	switch s := s.(type) {
	case *front.DeclStmt:
		if v, ok := s.Decl.(*front.VarDecl); ok {
			delete(env, v)
			if v.Init != nil {
				if n, ok := eval(v.Init); ok {
					env[v] = n
				}
			}
		}
	case *front.AssignStmt:
		if n, ok := s.LHS.(*front.NameExpr); ok {
			if v, ok := n.Decl.(*front.VarDecl); ok {
				delete(env, v)
				if c, ok := eval(s.RHS); ok && s.Op == "" {
					env[v] = c
				}
			}
		}
	case *front.CallStmt:
		for _, a := range s.Call.Args {
			if n, ok := a.Value.(*front.NameExpr); ok {
				if v, ok := n.Decl.(*front.VarDecl); ok {
					delete(env, v)
				}
			}
		}
	}
}

// meet keeps the values a and b agree on.
func meet(a, b passEnv) passEnv {
	out := passEnv{}
	for v, x := range a {
		if y, ok := b[v]; ok && x == y {
			out[v] = x
		}
	}
	return out
}

// eval is e's value where the flags and env decide it (knownValue).
func (w *phvWalk) eval(e front.Expr, env passEnv) (uint64, bool) {
	return knownValue(e, ofVars(func(v *front.VarDecl) (uint64, bool) {
		if n, ok := w.pass[v.Name]; ok {
			return n, true
		}
		n, ok := env[v]
		return n, ok
	}))
}

// knownValue is e's value where the values of the declarations that val knows (local
// variables, an instance's constructor parameters) decide it: literals, constants, known
// names, ==, !=, &&, || and !.
func knownValue(e front.Expr, val func(front.Decl) (uint64, bool)) (uint64, bool) {
	switch e := e.(type) {
	case *front.IntExpr, *front.BoolExpr:
		return constOf(e)
	case *front.NameExpr:
		if n, ok := constOf(e); ok {
			return n, true
		}
		return val(e.Decl)
	case *front.UnaryExpr:
		if e.Op == "!" {
			if x, ok := knownValue(e.X, val); ok {
				return b2u(x == 0), true
			}
		}
	case *front.BinaryExpr:
		x, xok := knownValue(e.X, val)
		y, yok := knownValue(e.Y, val)
		switch e.Op {
		case "&&":
			if (xok && x == 0) || (yok && y == 0) {
				return 0, true
			}
			if xok && yok {
				return 1, true
			}
		case "||":
			if (xok && x != 0) || (yok && y != 0) {
				return 1, true
			}
			if xok && yok {
				return 0, true
			}
		case "==":
			if xok && yok {
				return b2u(x == y), true
			}
		case "!=":
			if xok && yok {
				return b2u(x != y), true
			}
		}
	}
	return 0, false
}

// ofVars is a knownValue lookup that knows the local variables val knows, and nothing else.
func ofVars(val func(*front.VarDecl) (uint64, bool)) func(front.Decl) (uint64, bool) {
	return func(d front.Decl) (uint64, bool) {
		v, ok := d.(*front.VarDecl)
		if !ok {
			return 0, false
		}
		return val(v)
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// IngressPassPHV is PassPHV of the ingress of c's first pipe (c a checked TNA program), as that
// Pipeline instantiates it (Specialize). A pass given as "var=NAME" names a top-level constant
// of the program for its value; the demands keep the names as given.
func IngressPassPHV(c *front.Checked, flags []string) ([]PassDemand, error) {
	p, err := pipeOf(c)
	if err != nil {
		return nil, err
	}
	specs := make([]string, len(flags))
	for i, f := range flags {
		specs[i] = f
		name, val, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		if _, err := strconv.ParseUint(strings.TrimSpace(val), 0, 64); err == nil {
			continue
		}
		v, ok := globalConst(c, strings.TrimSpace(val))
		if !ok {
			return nil, fmt.Errorf("tofino: pass %q: %s is no integer constant of the program", f, val)
		}
		specs[i] = fmt.Sprintf("%s=%d", name, v)
	}
	ig := Specialize(p.Ingress, c.Const) // the first Pipeline's instance of its ingress
	ds, err := PassPHV(SpecializeParser(p.IngressParser, c.Const), ig, Specialize(p.IngressDeparser, c.Const), specs)
	if err != nil {
		return nil, err
	}
	for i := range ds {
		if i < len(flags) {
			ds[i].Flag = flags[i]
		}
		if ds[i].Graph, err = (graphModel{assume: ds[i].Pass}).build(ig, c.Const); err != nil {
			return nil, fmt.Errorf("tofino: pass %q: %w", ds[i].Flag, err)
		}
	}
	return ds, nil
}

// globalConst is the value of the program's top-level constant name.
func globalConst(c *front.Checked, name string) (uint64, bool) {
	for _, d := range c.Globals[name] {
		if cd, ok := d.(*front.ConstDecl); ok {
			if b, ok := c.Const[cd.Value].(*big.Int); ok && b.IsUint64() {
				return b.Uint64(), true
			}
		}
	}
	return 0, false
}

// PassText is passes as lines "ingress pass FLAG: critical path N stages; PHV demand B bits
// (M by the control), F fields", in the order given; with chain, each pass's critical path
// follows it, a table a line.
func PassText(passes []PassDemand, chain bool) string {
	var b strings.Builder
	for _, p := range passes {
		name := p.Flag
		if name == "" {
			name = "(no flag)"
		}
		fmt.Fprintf(&b, "ingress pass %s: ", name)
		if p.Graph != nil {
			fmt.Fprintf(&b, "critical path %d stages; ", p.Graph.Stages)
		}
		fmt.Fprintf(&b, "PHV demand %v, %d fields\n", p.PHVDemand, p.Fields)
		if chain && p.Graph != nil {
			chainText(&b, p.Graph)
		}
	}
	return b.String()
}
