package engine

import (
	"fmt"

	"github.com/netlock-go/netlock/bmv2/front"
)

// Tofino's rules for register actions, checked when a TNA program is loaded (the engine also
// checks the per-pass rule on every packet, as it does in Tofino-constraint mode):
//
//   - a register action reads and writes one cell of its register, with the register's ALU:
//     the cell is 1, 8, 16 or 32 bits, or a pair of two 8, 16 or 32-bit fields; the body
//     computes on at most 32 bits (no 64-bit arithmetic) and returns at most 32 bits;
//   - one register action per register per pass: two register actions (or register reads and
//     writes outside one action) of one register that can both run in one pass of the
//     ingress or of the egress control are refused; actions of one table, and the branches
//     of an if, a switch or ?:, exclude each other;
//   - a register belongs to one gress: ingress and egress cannot share it.
//
// Every error names the source lines involved.

// tnaRules checks the program's register actions and the controls of pipe p.
func (cp *compiler) tnaRules(p *front.TNAPipe) {
	for _, d := range cp.checked.Program.Decls {
		cd, ok := d.(*front.ControlDecl)
		if !ok || !cd.HasBody {
			continue
		}
		for _, l := range cd.Locals {
			if inst, ok := l.(*front.InstanceDecl); ok && len(inst.Init) > 0 {
				cp.registerActionRules(inst)
			}
		}
	}
	ig := newRegAnalysis(cp)
	igInfo := ig.control(p.Ingress.Control)
	eg := newRegAnalysis(cp)
	egInfo := eg.control(p.Egress.Control)
	for _, a := range []*regAnalysis{ig, eg} {
		if a.err != "" {
			cp.fail(front.Pos{}, "%s", a.err)
		}
	}
	for r, is := range igInfo.all {
		if es, ok := egInfo.all[r]; ok {
			cp.fail(is[0].pos, "register %s is used in ingress (%s at %s) and in egress (%s at %s); a Tofino register belongs to one gress",
				r.Name, is[0].what, is[0].pos, es[0].what, es[0].pos)
		}
	}
}

// registerActionRules checks one RegisterAction instance: its cell, its result and the width
// of what its apply body computes.
func (cp *compiler) registerActionRules(inst *front.InstanceDecl) {
	et, ok := inst.T.(*front.ExternType)
	if !ok || !front.IsTNADecl(et.Decl) || et.Decl.Name != "RegisterAction" || len(et.Args) < 3 {
		return
	}
	if !tofinoCell(et.Args[0]) {
		cp.fail(inst.P, "register action %s on %s: a Tofino register cell is 1, 8, 16 or 32 bits or a pair of two 8, 16 or 32-bit fields, not %s (a register action reads and writes one cell; use a pair of bit<32> for 64 bits)",
			inst.Name, front.ExprString(inst.Args[0].Value), et.Args[0])
	}
	if w := front.WidthOf(et.Args[2]); w > 32 {
		cp.fail(inst.P, "register action %s returns %s: a Tofino register action returns at most 32 bits", inst.Name, et.Args[2])
	}
	for _, f := range inst.Init {
		inspectStmt(f.Body, func(e front.Expr) {
			var ts []front.Type
			switch x := e.(type) {
			case *front.BinaryExpr:
				ts = []front.Type{x.Type(), x.X.Type(), x.Y.Type()}
			case *front.UnaryExpr:
				ts = []front.Type{x.Type(), x.X.Type()}
			case *front.CastExpr:
				ts = []front.Type{x.Type(), x.X.Type()}
			default:
				return
			}
			for _, t := range ts {
				if bt, ok := t.(*front.BitsType); ok && bt.Width > 32 {
					cp.fail(e.Position(), "register action %s: %s computes on %d bits; a Tofino register ALU computes on 32 bits (a register action reads and writes one cell)",
						inst.Name, front.ExprString(e), bt.Width)
				}
			}
		})
	}
}

// tofinoCell reports whether t is a Tofino register cell type.
func tofinoCell(t front.Type) bool {
	ok := func(t front.Type) (int, bool) {
		switch x := t.(type) {
		case *front.NewType:
			t = x.Underlying
		}
		if bt, isBits := t.(*front.BitsType); isBits {
			switch bt.Width {
			case 1, 8, 16, 32:
				return bt.Width, true
			}
		}
		return 0, false
	}
	if _, scalar := ok(t); scalar {
		return true
	}
	st, isStruct := t.(*front.StructType)
	if !isStruct || st.IsHeader() || len(st.Fields) != 2 {
		return false
	}
	w0, ok0 := ok(st.Fields[0].T)
	w1, ok1 := ok(st.Fields[1].T)
	return ok0 && ok1 && w0 == w1 && w0 >= 8
}

// inspectStmt calls f on every expression under s.
func inspectStmt(s front.Stmt, f func(front.Expr)) {
	prog := &front.Program{Decls: []front.Decl{&front.FunctionDecl{Body: &front.BlockStmt{Stmts: []front.Stmt{s}}}}}
	front.Inspect(prog, f)
}

// regSite is one register access: a register action's execute or a Register read or write.
type regSite struct {
	pos    front.Pos
	what   string // the call, as written
	direct bool   // Register.read/write (inside one action they form one register action)
}

type siteSet map[*front.InstanceDecl][]regSite

// regInfo summarizes a piece of code: the registers it may access, those accessed on paths
// that continue after it, and whether any path continues.
type regInfo struct {
	all, fall siteSet
	canFall   bool
}

// regAnalysis finds, in one gress, register accesses that can happen in one pass.
type regAnalysis struct {
	cp    *compiler
	memo  map[front.Decl]*regInfo
	busy  map[front.Decl]bool
	inAct int // nesting of action bodies: direct accesses merge there
	err   string
	empty regInfo
}

func newRegAnalysis(cp *compiler) *regAnalysis {
	return &regAnalysis{cp: cp, memo: map[front.Decl]*regInfo{}, busy: map[front.Decl]bool{}, empty: regInfo{all: siteSet{}, fall: siteSet{}, canFall: true}}
}

func (s siteSet) union(o siteSet) siteSet {
	out := siteSet{}
	for r, v := range s {
		out[r] = append(out[r], v...)
	}
	for r, v := range o {
		out[r] = append(out[r], v...)
	}
	return out
}

// seq is a then b.
func (a *regAnalysis) seq(x, y regInfo) regInfo {
	if !x.canFall {
		return x // y is unreachable
	}
	for r, xs := range x.fall {
		ys, ok := y.all[r]
		if !ok || a.err != "" {
			continue
		}
		if a.inAct > 0 && allDirect(xs) && allDirect(ys) {
			continue // one action's reads and writes of a register are one register action
		}
		a.err = fmt.Sprintf("%s: register %s is accessed by two register actions in one pass: %s at %s and %s at %s (a Tofino register runs one register action per pass)",
			ys[0].pos, r.Name, xs[0].what, xs[0].pos, ys[0].what, ys[0].pos)
	}
	return regInfo{all: x.all.union(y.all), fall: x.fall.union(y.fall), canFall: y.canFall}
}

func allDirect(ss []regSite) bool {
	for _, s := range ss {
		if !s.direct {
			return false
		}
	}
	return true
}

// alt is one of several branches.
func alt(branches ...regInfo) regInfo {
	out := regInfo{all: siteSet{}, fall: siteSet{}}
	for _, b := range branches {
		out.all = out.all.union(b.all)
		if b.canFall {
			out.fall = out.fall.union(b.fall)
			out.canFall = true
		}
	}
	return out
}

func (a *regAnalysis) control(d *front.ControlDecl) regInfo {
	if d == nil || d.Body == nil {
		return a.empty
	}
	return a.block(d.Body)
}

func (a *regAnalysis) block(b *front.BlockStmt) regInfo {
	out := a.empty
	if b == nil {
		return out
	}
	for _, s := range b.Stmts {
		out = a.seq(out, a.stmt(s))
	}
	return out
}

func (a *regAnalysis) stmt(s front.Stmt) regInfo {
	switch s := s.(type) {
	case *front.BlockStmt:
		return a.block(s)
	case *front.AssignStmt:
		return a.seq(a.expr(s.LHS), a.expr(s.RHS))
	case *front.CallStmt:
		return a.expr(s.Call)
	case *front.IfStmt:
		th := a.stmt(s.Then)
		el := a.empty
		if s.Else != nil {
			el = a.stmt(s.Else)
		}
		return a.seq(a.expr(s.Cond), alt(th, el))
	case *front.SwitchStmt:
		var cases []regInfo
		hasDefault := false
		for _, c := range s.Cases {
			hasDefault = hasDefault || c.Default
			if c.Body != nil {
				cases = append(cases, a.block(c.Body))
			}
		}
		if !hasDefault {
			cases = append(cases, a.empty)
		}
		return a.seq(a.expr(s.Expr), alt(cases...))
	case *front.ExitStmt:
		return regInfo{all: siteSet{}, fall: siteSet{}}
	case *front.ReturnStmt:
		out := a.empty
		if s.Value != nil {
			out = a.expr(s.Value)
		}
		return a.seq(out, regInfo{all: siteSet{}, fall: siteSet{}})
	case *front.DeclStmt:
		if v, ok := s.Decl.(*front.VarDecl); ok && v.Init != nil {
			return a.expr(v.Init)
		}
	}
	return a.empty
}

func (a *regAnalysis) expr(e front.Expr) regInfo {
	switch x := e.(type) {
	case *front.CallExpr:
		out := a.empty
		if m, ok := x.Fun.(*front.MemberExpr); ok {
			out = a.expr(m.X)
		}
		for _, arg := range x.Args {
			out = a.seq(out, a.expr(arg.Value))
		}
		return a.seq(out, a.call(x))
	case *front.TernaryExpr:
		return a.seq(a.expr(x.Cond), alt(a.expr(x.Then), a.expr(x.Else)))
	case *front.BinaryExpr:
		return a.seq(a.expr(x.X), a.expr(x.Y))
	case *front.UnaryExpr:
		return a.expr(x.X)
	case *front.CastExpr:
		return a.expr(x.X)
	case *front.MemberExpr:
		return a.expr(x.X)
	case *front.SliceExpr:
		return a.expr(x.X)
	case *front.IndexExpr:
		return a.seq(a.expr(x.X), a.expr(x.Index))
	case *front.ListExpr:
		out := a.empty
		for _, el := range x.Elems {
			out = a.seq(out, a.expr(el))
		}
		return out
	case *front.StructExpr:
		out := a.empty
		for _, f := range x.Fields {
			out = a.seq(out, a.expr(f.Value))
		}
		return out
	}
	return a.empty
}

// registerOf resolves an instance name to a Register instance (through a RegisterAction).
func registerOf(e front.Expr) *front.InstanceDecl {
	n, ok := e.(*front.NameExpr)
	if !ok {
		return nil
	}
	inst, ok := n.Decl.(*front.InstanceDecl)
	if !ok {
		return nil
	}
	et, ok := inst.T.(*front.ExternType)
	if !ok || !front.IsTNADecl(et.Decl) {
		return nil
	}
	switch et.Decl.Name {
	case "Register":
		return inst
	case "RegisterAction":
		if len(inst.Args) > 0 {
			return registerOf(inst.Args[0].Value)
		}
	}
	return nil
}

func (a *regAnalysis) call(x *front.CallExpr) regInfo {
	one := func(r *front.InstanceDecl, direct bool) regInfo {
		s := siteSet{r: {{pos: x.Position(), what: front.ExprString(x.Fun), direct: direct}}}
		return regInfo{all: s, fall: s, canFall: true}
	}
	switch d := x.Callee.(type) {
	case *front.MethodDecl:
		m, ok := x.Fun.(*front.MemberExpr)
		if !ok || d.Owner == nil || !front.IsTNADecl(d.Owner) {
			return a.empty
		}
		switch {
		case d.Owner.Name == "RegisterAction" && (d.Name == "execute" || d.Name == "execute_log"):
			if r := registerOf(m.X); r != nil {
				return one(r, false)
			}
		case d.Owner.Name == "Register" && (d.Name == "read" || d.Name == "write"):
			if r := registerOf(m.X); r != nil {
				return one(r, true)
			}
		}
	case *front.ActionDecl:
		return a.body(d, func() regInfo {
			a.inAct++
			defer func() { a.inAct-- }()
			return a.block(d.Body)
		})
	case *front.FunctionDecl:
		return a.body(d, func() regInfo { return a.block(d.Body) })
	case *front.ControlDecl:
		return a.body(d, func() regInfo { return a.control(d) })
	case *front.TableDecl:
		if x.Method != "apply" {
			return a.empty
		}
		return a.body(d, func() regInfo {
			var acts []regInfo
			for _, p := range d.Props {
				for _, ar := range p.Actions {
					if ar.Action != nil {
						acts = append(acts, a.call(&front.CallExpr{Callee: ar.Action}))
					}
				}
				for _, en := range p.Entries {
					if en.Action != nil && en.Action.Action != nil {
						acts = append(acts, a.call(&front.CallExpr{Callee: en.Action.Action}))
					}
				}
			}
			if len(acts) == 0 {
				return a.empty
			}
			return alt(acts...)
		})
	}
	return a.empty
}

// body memoizes the summary of an action, function, control or table.
func (a *regAnalysis) body(d front.Decl, f func() regInfo) regInfo {
	if r, ok := a.memo[d]; ok {
		return *r
	}
	if a.busy[d] {
		return a.empty
	}
	a.busy[d] = true
	r := f()
	a.busy[d] = false
	a.memo[d] = &r
	return r
}
