// Package tofino estimates how a TNA control would be laid out on Tofino's match-action
// stages: a dependency analysis over the front end's IR computes which tables and registers
// (with all of their register actions) need the results of which others, and a list scheduler
// places them on stages under a generation's per-stage resources.
//
// It is an estimate, not bf-p4c. The model (docs/dataplane.md "Tofino"):
//
//   - The operations placed are table applies, registers (one node per Register: all of its
//     RegisterActions run in the stage that holds it, at most one per pass, which the engine
//     enforces) and meters. Counters, hashes, gateways and assignments are not placed.
//   - A control applied from the analyzed control runs in it (p4c inlines it), each instance
//     with tables, registers and meters of its own, named after the instance path.
//   - An operation in stage s writes its result to the PHV at the end of s: a table, register
//     action or meter that reads it (as a key, an index, an input of its apply body, or in a
//     condition guarding it) goes in s+1 or later.
//   - Every assignment that computes (arithmetic, comparison, a choice) or that runs under a
//     condition is an action of its own: its result is ready one stage after its inputs and
//     guard. Plain copies at the top level (a field, a slice, a cast, a register action's or
//     a hash's result) cost nothing. bf-p4c merges many such actions into one stage's VLIW
//     instructions, and splits others (an action cannot chain two dependent operations), so
//     the stage counts are estimates; Floor ignores assignments altogether (only operations
//     feeding operations), a lower bound.
//   - Folded (a third estimate) counts the same assignments with the program's decisions
//     folded into match tables: a value selected by conditions (constants or copies assigned
//     under conditions, comparisons, boolean operators, choices between such values) is a
//     function of its inputs that one ternary table computes a stage after them, however
//     long the chain of flags it is written as; conditions, guards and the operands of an
//     arithmetic assignment are matched or selected on their inputs the same way. What is
//     left is a stage per dependent arithmetic assignment and per value an operation reads
//     (an index, a key, an apply-body input). Table widths and entries are not checked.
//   - Conditions are merged path-insensitively: a value set in either branch of an if depends
//     on both. A register whose own result reaches one of its register actions (only possible
//     on exclusive paths) is not a dependency.
//   - Placement: a list scheduler, stage by stage; of the operations whose dependencies allow
//     the stage, those with the longest chain of operations after them first, each into the
//     stage if it has a free stateful ALU (registers and meters) and enough SRAM blocks
//     (registers: ceil(cells x cell bits / block bits) plus one spare block), else left for
//     a later stage. Tables are assumed to fit beside them (their memory is not counted).
//     Stage is that placement with the assignments counted, AtFloor with operations only.
package tofino

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// Resources are one Tofino generation's per-pipe resources as the model uses them.
type Resources struct {
	Name       string
	Stages     int // match-action stages per pipe
	SALUs      int // stateful ALUs (registers and meters) per stage
	SRAMBlocks int // SRAM blocks per stage
	BlockBits  int // bits per SRAM block
	// RegisterBlocks is the most SRAM blocks of data one register may take (its spare block
	// not counted): a stateful ALU reaches no more in its stage. Measured, not documented:
	// bf-p4c 9.13.4 places a one-register program with 35 blocks of data on Tofino 1 and
	// refuses 36, with 23 on Tofino 2 and refuses 24 ("could not fit in stage 0 with 1
	// entries along with N entries of Register", 2026-11-30; docs/dataplane.md, "The real
	// compiler").
	RegisterBlocks int
	PHV            PHVCapacity
}

// Tofino1 and Tofino2: 12 and 20 stages, 4 stateful ALUs and 80 SRAM blocks of 1024 x 128
// bits per stage, a register's data in at most 35 and 23 of them, and the PHV of Tofino1PHV
// and Tofino2PHV.
var (
	Tofino1 = Resources{Name: "Tofino 1", Stages: 12, SALUs: 4, SRAMBlocks: 80, BlockBits: 1024 * 128, RegisterBlocks: 35, PHV: Tofino1PHV}
	Tofino2 = Resources{Name: "Tofino 2", Stages: 20, SALUs: 4, SRAMBlocks: 80, BlockBits: 1024 * 128, RegisterBlocks: 23, PHV: Tofino2PHV}
)

// Kind says what an operation is.
type Kind uint8

// Operation kinds.
const (
	KindTable Kind = iota + 1
	KindRegister
	KindMeter
)

func (k Kind) String() string {
	switch k {
	case KindTable:
		return "table"
	case KindRegister:
		return "register"
	case KindMeter:
		return "meter"
	}
	return "?"
}

// Op is a table, a register (with its register actions) or a meter of the control.
type Op struct {
	Kind    Kind
	Name    string      // the P4 name of the table or instance
	Sites   []front.Pos // applies, executes
	Actions []string    // a register's register actions executed, in source order
	Cells   int         // a register's or meter's size
	Bits    int         // a register's cell width
	Blocks  int         // SRAM blocks (registers)
	Deps    []Dep       // the operations whose results it reads
	Base    int         // the earliest stage its inputs that depend on no operation allow

	Floor    int // the earliest stage counting operations only (a lower bound)
	Earliest int // the earliest stage counting computing assignments too
	// Folded is the earliest stage counting computing assignments with decisions folded
	// into match tables (ftaint): each decision one stage after its inputs.
	Folded  int
	FBase   int         // Base, folded
	folded  map[*Op]Dep // the operations whose results it reads, with the steps folded
	Stage   int         // the stage placed in, under the resources (dependencies as for Earliest)
	AtFloor int         // the stage placed in, under the resources, counting operations only
	// AtFolded is the stage placed in, under the resources, with decisions folded.
	AtFolded int
}

// Dep is a result of On that Op reads after Steps computing assignments, first at At.
type Dep struct {
	On    *Op
	Steps int
	At    front.Pos
}

// Layout is the analysis of one control.
type Layout struct {
	Control string
	Res     Resources
	Ops     []*Op // in order of first use
	Floor   int   // stages needed counting operations only
	Depth   int   // stages needed by the dependencies (assignments counted)
	Stages  int   // stages needed once placed under Res
	// FloorStages is the stages needed once placed under Res counting operations only
	// (each dependency one stage): the layout if bf-p4c fits every computing assignment into
	// the VLIW instructions of stages the operations use anyway.
	FloorStages int
	// FoldedDepth and FoldedStages are Depth and Stages with decisions folded into match
	// tables (each decision one stage after its inputs).
	FoldedDepth, FoldedStages int
	SALUs                     int // stateful ALUs: registers and meters
	Blocks                    int // SRAM blocks of the registers
}

// Fits reports whether the placed layout fits Res's stages.
func (l *Layout) Fits() bool { return l.Stages <= l.Res.Stages }

// Op returns the operation called name, or nil.
func (l *Layout) Op(name string) *Op {
	for _, o := range l.Ops {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// Analyze computes the layout of ctl (a checked TNA control) under res.
func Analyze(ctl *front.ControlDecl, res Resources) (*Layout, error) {
	a := &analysis{ops: map[opKey]*Op{}, res: res, ctlVars: map[*front.VarDecl]bool{}}
	for _, d := range ctl.Locals {
		if v, ok := d.(*front.VarDecl); ok {
			a.ctlVars[v] = true
		}
	}
	st := &state{vals: map[string]taint{}}
	if _, err := a.block(ctl.Body, st, ctx{}); err != nil {
		return nil, err
	}
	l := &Layout{Control: ctl.Name, Res: res, Ops: a.order}
	index := map[*Op]int{}
	for i, o := range l.Ops {
		index[o] = i
	}
	for _, o := range l.Ops {
		sort.Slice(o.Deps, func(i, j int) bool { return index[o.Deps[i].On] < index[o.Deps[j].On] })
	}
	if err := l.schedule(); err != nil {
		return nil, err
	}
	return l, nil
}

// taint says where a value comes from: base is the stage it is ready at without any
// operation's result, src the operations whose results it carries with the computing
// assignments after each (-1: usable in the operation's own stage, a table's action data).
// f is the same with decisions folded (ftaint).
type taint struct {
	base int
	src  map[*Op]int
	f    ftaint
}

func (t taint) join(u taint) taint {
	base, src := joinSrc(t.base, t.src, u.base, u.src)
	return taint{base: base, src: src, f: t.f.join(u.f)}
}

func joinSrc(tb int, ts map[*Op]int, ub int, us map[*Op]int) (int, map[*Op]int) {
	if len(us) == 0 && ub <= tb {
		return tb, ts
	}
	if len(ts) == 0 && tb <= ub {
		return ub, us
	}
	r := make(map[*Op]int, len(ts)+len(us))
	for o, n := range ts {
		r[o] = n
	}
	for o, n := range us {
		if m, ok := r[o]; !ok || n > m {
			r[o] = n
		}
	}
	return max(tb, ub), r
}

func stepSrc(b int, s map[*Op]int) (int, map[*Op]int) {
	r := make(map[*Op]int, len(s))
	for o, n := range s {
		r[o] = n + 1
	}
	return b + 1, r
}

// step is the taint of a value computed from t by one assignment (for the folded part, an
// assignment that is not a decision).
func (t taint) step() taint {
	base, src := stepSrc(t.base, t.src)
	return taint{base: base, src: src, f: t.f.value().step()}
}

func opResult(o *Op, steps int) taint {
	return taint{src: map[*Op]int{o: steps}, f: ftaint{src: map[*Op]int{o: steps}}}
}

// ftaint is a value's origin when decisions are folded into match tables. A decision is a
// value selected by conditions: assigned constants or copies under conditions, or computed by
// comparisons, boolean operators and choices between such values. It is a function of its
// inputs (header fields, table and register results, computed values) that one ternary
// table keyed on those inputs computes in one stage, however long the chain of flags it is
// written as. For a decision base and src are its inputs (the value is ready a stage after
// them); for any other value, the value's own.
type ftaint struct {
	base int
	src  map[*Op]int
	dec  bool
}

func (f ftaint) empty() bool { return f.base == 0 && len(f.src) == 0 && !f.dec }

// inputs is what a match on f's value would match on: a decision's inputs, else the value.
func (f ftaint) inputs() ftaint { return ftaint{base: f.base, src: f.src} }

// value is when f's value is ready: a decision a stage after its inputs.
func (f ftaint) value() ftaint {
	if f.dec {
		return f.inputs().step()
	}
	return f
}

func (f ftaint) step() ftaint {
	base, src := stepSrc(f.base, f.src)
	return ftaint{base: base, src: src}
}

// merge joins the origins as they are, a decision when dec.
func (f ftaint) merge(g ftaint, dec bool) ftaint {
	base, src := joinSrc(f.base, f.src, g.base, g.src)
	return ftaint{base: base, src: src, dec: dec}
}

// join is the origin of a value that is f or g (conditions merging): still a decision when
// both are decisions or constants, else the later of the values.
func (f ftaint) join(g ftaint) ftaint {
	switch {
	case g.empty():
		return f
	case f.empty():
		return g
	case f.dec && g.dec:
		return f.inputs().merge(g.inputs(), true)
	}
	return f.value().merge(g.value(), false)
}

// assigned is the taint of a value assigned from rhs under the guard g (a computing or
// guarded assignment): one stage after both; folded, a decision when rhs selects (selecting,
// a copy or a decision), ready a stage after its inputs and the guard's.
func assigned(rhs, g taint, selecting bool) taint {
	t := rhs.join(g).step()
	if selecting {
		t.f = rhs.f.inputs().merge(g.f.inputs(), true)
	} else {
		t.f = rhs.f.value().merge(g.f.inputs(), false).step()
	}
	return t
}

// guardOf is the guard inside a condition cond under the guard g: folded, the inputs of both
// (the table running what the condition guards matches on them).
func guardOf(g, cond taint) taint {
	t := g.join(cond)
	t.f = g.f.inputs().merge(cond.f.inputs(), true)
	return t
}

// state maps value paths (meta.sv.state, hdr.recirc.cur, a local) to their taints.
type state struct{ vals map[string]taint }

func (s *state) clone() *state {
	c := &state{vals: make(map[string]taint, len(s.vals))}
	for k, v := range s.vals {
		c.vals[k] = v
	}
	return c
}

func (s *state) get(path string) taint {
	var t taint
	for k, v := range s.vals {
		if k == path || strings.HasPrefix(path, k+".") || strings.HasPrefix(k, path+".") {
			t = t.join(v)
		}
	}
	return t
}

func (s *state) set(path string, t taint, weak bool) {
	if weak {
		t = t.join(s.get(path))
	}
	for k := range s.vals {
		if strings.HasPrefix(k, path+".") {
			delete(s.vals, k)
		}
	}
	s.vals[path] = t
}

// joinStates merges the states of the live paths (nil when there is none).
func joinStates(states []*state) *state {
	if len(states) == 0 {
		return nil
	}
	r := states[0].clone()
	for _, s := range states[1:] {
		for k, v := range s.vals {
			r.vals[k] = r.vals[k].join(v)
		}
		for k := range r.vals {
			if _, ok := s.vals[k]; !ok {
				r.vals[k] = r.vals[k].join(s.get(k))
			}
		}
	}
	return r
}

// ctx is where a statement runs: the guard of the conditions around it, whether there is
// one, and the frame of the action or function it is inlined in.
type ctx struct {
	guard   taint
	guarded bool
	frame   *frame
	// inst is the path of the control instance being run below the analyzed control ("" for
	// its own body): each instance has tables and registers of its own.
	inst string
}

type frame struct {
	prefix   string // the keys of its parameters
	params   map[string]bool
	returned []*state
	ret      taint
}

// opKey is one table, register or meter of one control instance.
type opKey struct {
	d    front.Decl
	inst string
}

type analysis struct {
	res   Resources
	ops   map[opKey]*Op
	order []*Op
	depth int // of inlined calls
	// ctlVars are the variables the control declares beside its actions and tables: one value
	// for the apply block and every action that reads or writes it (a table's actions write
	// what a later table's key reads), not a copy per inlined action
	ctlVars map[*front.VarDecl]bool
}

func (a *analysis) op(d front.Decl, kind Kind, name string, c ctx) *Op {
	k := opKey{d, c.inst}
	o := a.ops[k]
	if o == nil {
		if c.inst != "" {
			name = c.inst + "." + name
		}
		o = &Op{Kind: kind, Name: name}
		a.ops[k] = o
		a.order = append(a.order, o)
	}
	return o
}

// use records that o runs at pos with inputs t (t.f: the folded inputs, not a decision).
func (a *analysis) use(o *Op, t taint, pos front.Pos) {
	if !slices.Contains(o.Sites, pos) {
		o.Sites = append(o.Sites, pos)
	}
	o.Base = max(o.Base, t.base)
	o.FBase = max(o.FBase, t.f.base)
	for on, n := range t.f.src {
		if on == o {
			continue
		}
		if o.folded == nil {
			o.folded = map[*Op]Dep{}
		}
		if d, ok := o.folded[on]; !ok || n > d.Steps {
			o.folded[on] = Dep{On: on, Steps: n, At: pos}
		}
	}
	for on, n := range t.src {
		if on == o {
			continue // exclusive paths: a register runs one action per pass
		}
		found := false
		for i := range o.Deps {
			if o.Deps[i].On == on {
				found = true
				if n > o.Deps[i].Steps {
					o.Deps[i].Steps, o.Deps[i].At = n, pos
				}
			}
		}
		if !found {
			o.Deps = append(o.Deps, Dep{On: on, Steps: n, At: pos})
		}
	}
}

// block runs the statements of b from st; it returns the state after them, nil when no path
// leaves the block (exit, return).
func (a *analysis) block(b *front.BlockStmt, st *state, c ctx) (*state, error) {
	for _, s := range b.Stmts {
		var err error
		if st, err = a.stmt(s, st, c); err != nil || st == nil {
			return st, err
		}
	}
	return st, nil
}

// stmt runs s from st and returns the state after it (nil: no path continues).
func (a *analysis) stmt(s front.Stmt, st *state, c ctx) (*state, error) {
	switch s := s.(type) {
	case *front.BlockStmt:
		return a.block(s, st, c)
	case *front.AssignStmt:
		t, err := a.expr(s.RHS, st, c)
		if err != nil {
			return nil, err
		}
		return st, a.assign(s.LHS, t, copyLike(s.RHS), st, c)
	case *front.DeclStmt:
		if v, ok := s.Decl.(*front.VarDecl); ok {
			key := a.varKey(v, c)
			if v.Init == nil {
				st.set(key, taint{}, false)
				return st, nil
			}
			t, err := a.expr(v.Init, st, c)
			if err != nil {
				return nil, err
			}
			if !copyLike(v.Init) || c.guarded {
				t = assigned(t, c.guard, copyLike(v.Init) || t.f.dec)
			}
			st.set(key, t, false)
		}
		return st, nil
	case *front.CallStmt:
		_, err := a.call(s.Call, st, c)
		return st, err
	case *front.IfStmt:
		cond, err := a.expr(s.Cond, st, c)
		if err != nil {
			return nil, err
		}
		in := ctx{guard: guardOf(c.guard, cond), guarded: true, frame: c.frame, inst: c.inst}
		var live []*state
		then, err := a.stmt(s.Then, st.clone(), in)
		if err != nil {
			return nil, err
		}
		if then != nil {
			live = append(live, then)
		}
		els := st
		if s.Else != nil {
			if els, err = a.stmt(s.Else, st.clone(), in); err != nil {
				return nil, err
			}
		}
		if els != nil {
			live = append(live, els)
		}
		return joinStates(live), nil
	case *front.SwitchStmt:
		sel, err := a.expr(s.Expr, st, c)
		if err != nil {
			return nil, err
		}
		in := ctx{guard: guardOf(c.guard, sel), guarded: true, frame: c.frame, inst: c.inst}
		live := []*state{st}
		for _, k := range s.Cases {
			if k.Body == nil {
				continue
			}
			out, err := a.block(k.Body, st.clone(), in)
			if err != nil {
				return nil, err
			}
			if out != nil {
				live = append(live, out)
			}
		}
		return joinStates(live), nil
	case *front.ExitStmt:
		return nil, nil
	case *front.ReturnStmt:
		if c.frame == nil {
			return nil, nil
		}
		if s.Value != nil {
			t, err := a.expr(s.Value, st, c)
			if err != nil {
				return nil, err
			}
			c.frame.ret = c.frame.ret.join(t)
		}
		c.frame.returned = append(c.frame.returned, st)
		return nil, nil
	case *front.EmptyStmt:
		return st, nil
	}
	return nil, fmt.Errorf("%s: %T is not analysed", s.Position(), s)
}

// copyLike reports whether e only moves a value (no computing assignment needed).
func copyLike(e front.Expr) bool {
	switch e := e.(type) {
	case *front.NameExpr, *front.IntExpr, *front.BoolExpr:
		return true
	case *front.MemberExpr:
		return e.Kind == front.MemberField || e.Kind == front.MemberEnum
	case *front.SliceExpr:
		return copyLike(e.X)
	case *front.CastExpr:
		return copyLike(e.X)
	case *front.CallExpr:
		m, ok := e.Fun.(*front.MemberExpr)
		return ok && instanceOf(m.X) != nil && (m.Name == "execute" || m.Name == "get")
	}
	return false
}

func (a *analysis) assign(lhs front.Expr, t taint, isCopy bool, st *state, c ctx) error {
	if !isCopy || c.guarded {
		t = assigned(t, c.guard, isCopy || t.f.dec)
	}
	weak := false
	for {
		switch x := lhs.(type) {
		case *front.SliceExpr:
			lhs, weak = x.X, true
			continue
		case *front.IndexExpr:
			lhs, weak = x.X, true
			continue
		}
		break
	}
	p, ok := a.path(lhs, c)
	if !ok {
		return fmt.Errorf("%s: cannot analyse an assignment to %T", lhs.Position(), lhs)
	}
	st.set(p, t, weak)
	return nil
}

func (a *analysis) varKey(v *front.VarDecl, c ctx) string {
	pre := ""
	if c.frame != nil && !a.ctlVars[v] {
		pre = c.frame.prefix
	}
	return fmt.Sprintf("%s%s@%d:%d", pre, v.Name, v.P.Line, v.P.Col)
}

// path names the value e denotes.
func (a *analysis) path(e front.Expr, c ctx) (string, bool) {
	switch e := e.(type) {
	case *front.NameExpr:
		switch d := e.Decl.(type) {
		case *front.VarDecl:
			return a.varKey(d, c), true
		case *front.Param:
			if c.frame != nil && c.frame.params[e.Name] {
				return c.frame.prefix + e.Name, true
			}
			return e.Name, true
		}
		return "", false
	case *front.MemberExpr:
		if e.Kind != front.MemberField {
			return "", false
		}
		p, ok := a.path(e.X, c)
		return p + "." + e.Name, ok
	case *front.SliceExpr:
		return a.path(e.X, c)
	case *front.IndexExpr:
		return a.path(e.X, c)
	}
	return "", false
}

// expr returns the taint of e's value, recording the operations it runs.
func (a *analysis) expr(e front.Expr, st *state, c ctx) (taint, error) {
	switch e := e.(type) {
	case nil, *front.IntExpr, *front.BoolExpr, *front.StringExpr, *front.DefaultExpr, *front.DontCareExpr,
		*front.TypeArgExpr:
		return taint{}, nil
	case *front.NameExpr:
		if p, ok := a.path(e, c); ok {
			return st.get(p), nil
		}
		return taint{}, nil
	case *front.MemberExpr:
		if e.Kind == front.MemberTableField {
			return a.expr(e.X, st, c)
		}
		if p, ok := a.path(e, c); ok {
			return st.get(p), nil
		}
		return a.expr(e.X, st, c)
	case *front.SliceExpr:
		return a.expr(e.X, st, c)
	case *front.IndexExpr:
		t, err := a.expr(e.X, st, c)
		if err != nil {
			return t, err
		}
		u, err := a.expr(e.Index, st, c)
		return t.join(u), err
	case *front.CastExpr:
		return a.expr(e.X, st, c)
	case *front.UnaryExpr:
		t, err := a.expr(e.X, st, c)
		t.f = t.f.inputs().merge(ftaint{}, e.Op == "!")
		return t, err
	case *front.BinaryExpr:
		t, err := a.expr(e.X, st, c)
		if err != nil {
			return t, err
		}
		u, err := a.expr(e.Y, st, c)
		r := t.join(u)
		switch e.Op {
		case "==", "!=", "<", ">", "<=", ">=", "&&", "||":
			r.f = t.f.inputs().merge(u.f.inputs(), true) // a decision
		default:
			r.f = t.f.inputs().merge(u.f.inputs(), false) // arithmetic: on the selected operands
		}
		return r, err
	case *front.TernaryExpr:
		var t taint
		selecting := true
		var f ftaint
		for i, x := range []front.Expr{e.Cond, e.Then, e.Else} {
			u, err := a.expr(x, st, c)
			if err != nil {
				return t, err
			}
			t = t.join(u)
			if i > 0 && !copyLike(x) && !u.f.dec {
				selecting = false
			}
			f = f.merge(u.f.inputs(), false)
		}
		t.f = f.merge(ftaint{}, selecting) // selecting: a choice between copies or decisions
		return t, nil
	case *front.ListExpr:
		var t taint
		for _, x := range e.Elems {
			u, err := a.expr(x, st, c)
			if err != nil {
				return t, err
			}
			t = t.join(u)
		}
		return t, nil
	case *front.StructExpr:
		var t taint
		for _, x := range e.Fields {
			u, err := a.expr(x.Value, st, c)
			if err != nil {
				return t, err
			}
			t = t.join(u)
		}
		return t, nil
	case *front.CallExpr:
		return a.call(e, st, c)
	}
	return taint{}, fmt.Errorf("%s: %T is not analysed", e.Position(), e)
}

// args joins the taints of a call's arguments.
func (a *analysis) args(call *front.CallExpr, st *state, c ctx) (taint, error) {
	var t taint
	for _, x := range call.Args {
		u, err := a.expr(x.Value, st, c)
		if err != nil {
			return t, err
		}
		t = t.join(u)
	}
	return t, nil
}

// call runs a call and returns the taint of its result.
func (a *analysis) call(call *front.CallExpr, st *state, c ctx) (taint, error) {
	switch callee := call.Callee.(type) {
	case *front.TableDecl:
		return a.apply(callee, call, st, c)
	case *front.ActionDecl:
		return a.inline(callee.Name, callee.Params, callee.Body, call, st, c)
	case *front.FunctionDecl:
		return a.inline(callee.Name, callee.Params, callee.Body, call, st, c)
	case *front.ControlDecl:
		// A control applied from the control (an instance's apply, or the type's): its body
		// runs here, as p4c inlines it, with tables and registers of the instance's own.
		in := c
		name := callee.Name
		if m, ok := call.Fun.(*front.MemberExpr); ok {
			if n, ok := m.X.(*front.NameExpr); ok {
				name = n.Name
			}
		}
		if in.inst != "" {
			name = in.inst + "." + name
		}
		in.inst = name
		return a.inline(callee.Name, callee.Params, callee.Body, call, st, in)
	}
	m, _ := call.Fun.(*front.MemberExpr)
	if m == nil {
		return a.args(call, st, c)
	}
	inst := instanceOf(m.X)
	switch {
	case call.Method == "setValid" || call.Method == "setInvalid":
		if p, ok := a.path(m.X, c); ok {
			st.set(p+".$valid", assigned(taint{}, c.guard, true), false)
		}
		return taint{}, nil
	case call.Method == "isValid":
		if p, ok := a.path(m.X, c); ok {
			return st.get(p + ".$valid"), nil
		}
		return taint{}, nil
	case inst != nil && m.Name == "execute":
		return a.execute(inst, call, st, c)
	}
	return a.args(call, st, c) // hash get, counter count, emit: no placed operation
}

// rootParam returns the parameter a field path starts at, or nil.
func rootParam(e front.Expr) *front.Param {
	for {
		switch x := e.(type) {
		case *front.MemberExpr:
			if x.Kind != front.MemberField {
				return nil
			}
			e = x.X
		case *front.NameExpr:
			p, _ := x.Decl.(*front.Param)
			return p
		default:
			return nil
		}
	}
}

// inner is the expression a field access selects from, or nil.
func inner(e front.Expr) front.Expr {
	if m, ok := e.(*front.MemberExpr); ok {
		return m.X
	}
	return nil
}

func instanceOf(e front.Expr) *front.InstanceDecl {
	if n, ok := e.(*front.NameExpr); ok {
		if d, ok := n.Decl.(*front.InstanceDecl); ok {
			return d
		}
	}
	return nil
}

func externName(inst *front.InstanceDecl) string {
	if et, ok := inst.T.(*front.ExternType); ok {
		return et.Decl.Name
	}
	return ""
}

// execute runs a RegisterAction's or a Meter's execute.
func (a *analysis) execute(inst *front.InstanceDecl, call *front.CallExpr, st *state, c ctx) (taint, error) {
	in, err := a.args(call, st, c)
	if err != nil {
		return in, err
	}
	in.f = in.f.value()
	in = opInput(in, c.guard)
	switch externName(inst) {
	case "RegisterAction", "DirectRegisterAction":
		if len(inst.Args) == 0 {
			return taint{}, fmt.Errorf("%s: %s has no register", inst.P, inst.Name)
		}
		reg := instanceOf(inst.Args[0].Value)
		if reg == nil {
			return taint{}, fmt.Errorf("%s: %s: the register is not an instance", inst.P, inst.Name)
		}
		o := a.op(reg, KindRegister, reg.Name, c)
		if o.Bits == 0 {
			o.Cells, o.Bits = registerSize(reg)
			o.Blocks = blocks(o.Cells, o.Bits, a.res.BlockBits)
		}
		if !slices.Contains(o.Actions, inst.Name) {
			o.Actions = append(o.Actions, inst.Name)
		}
		// The apply body reads the control's values (metadata) besides its parameters.
		applyBodyReads(inst, func(e front.Expr) bool {
			p, ok := a.path(e, ctx{})
			if ok {
				v := st.get(p)
				v.f = v.f.value()
				in = in.join(v)
			}
			return ok
		})
		a.use(o, in, call.P)
		return opResult(o, 0), nil
	case "Meter", "DirectMeter", "Lpf", "Wred":
		o := a.op(inst, KindMeter, inst.Name, c)
		if o.Cells == 0 && len(inst.Args) > 0 {
			o.Cells = constInt(inst.Args[0].Value)
		}
		a.use(o, in, call.P)
		return opResult(o, 0), nil
	}
	return in, nil
}

// applyBodyReads calls read with each value a register action's apply body reads besides its
// parameters (a field of the control's parameters), outermost first: when read takes it (returns
// true), the expressions it holds are not visited.
func applyBodyReads(inst *front.InstanceDecl, read func(front.Expr) bool) {
	for _, fn := range inst.Init {
		if fn.Body == nil {
			continue
		}
		local := map[string]bool{}
		for _, p := range fn.Params {
			local[p.Name] = true
		}
		covered := map[front.Expr]bool{}
		front.InspectDecl(fn, func(e front.Expr) {
			if covered[e] {
				return
			}
			if root := rootParam(e); root != nil && !local[root.Name] && read(e) {
				for x := e; x != nil; x = inner(x) {
					covered[x] = true
				}
			}
		})
	}
}

// opInput is the input of an operation reading in (values) under the guard g: folded, the
// guard's inputs (the operation's table or gateway matches on them).
func opInput(in, g taint) taint {
	t := in.join(g)
	t.f = in.f.value().merge(g.f.inputs(), false)
	return t
}

// decisionTable reports whether t is the program's own decision, not a lookup: its entries
// and its default action are const, so that what it does is chosen by its keys alone, as an if
// statement's branches are by its condition (p4/tna/netlock.p4's pass_type, hold_op, ...).
func decisionTable(t *front.TableDecl) bool {
	e, d := t.Prop("entries"), t.Prop("default_action")
	return e != nil && e.Const && d != nil && d.Const
}

// apply runs a table: its keys are its inputs; its actions run with its action data. A
// decision table (decisionTable) is analysed as the if-else chain it replaces: no operation of
// its own, its actions guarded by its keys, their parameters constants.
func (a *analysis) apply(t *front.TableDecl, call *front.CallExpr, st *state, c ctx) (taint, error) {
	if decisionTable(t) {
		return a.decide(t, st, c)
	}
	o := a.op(t, KindTable, t.Name, c)
	var in taint
	if p := t.Prop("key"); p != nil {
		for _, k := range p.Keys {
			u, err := a.expr(k.Expr, st, c)
			if err != nil {
				return in, err
			}
			u.f = u.f.value()
			in = in.join(u)
		}
	}
	a.use(o, opInput(in, c.guard), call.P)
	data := opResult(o, -1)
	inner := ctx{guard: guardOf(c.guard, data), guarded: true, frame: c.frame, inst: c.inst}
	if err := a.runActions(t, st, inner, data); err != nil {
		return taint{}, err
	}
	return opResult(o, 0), nil
}

// decide runs a decision table (apply's comment).
func (a *analysis) decide(t *front.TableDecl, st *state, c ctx) (taint, error) {
	var cond taint
	for _, k := range t.Prop("key").Keys {
		u, err := a.expr(k.Expr, st, c)
		if err != nil {
			return taint{}, err
		}
		cond = cond.join(u)
	}
	inner := ctx{guard: guardOf(c.guard, cond), guarded: true, frame: c.frame, inst: c.inst}
	return taint{}, a.runActions(t, st, inner, taint{})
}

// runActions runs each action of t from st under inner, its parameters holding data (a
// table's action data; a decision table's constants), and leaves in st the join of st (no
// action) and each action's state after it.
func (a *analysis) runActions(t *front.TableDecl, st *state, inner ctx, data taint) error {
	outs := []*state{st}
	if p := t.Prop("actions"); p != nil {
		for _, ref := range p.Actions {
			act := ref.Action
			if act == nil || act.Body == nil {
				continue
			}
			s := st.clone()
			f := &frame{prefix: "act:" + act.Name + ".", params: map[string]bool{}}
			for _, prm := range act.Params {
				f.params[prm.Name] = true
				s.set(f.prefix+prm.Name, data, false)
			}
			in := inner
			in.frame = f
			out, err := a.block(act.Body, s, in)
			if err != nil {
				return err
			}
			if out != nil {
				f.returned = append(f.returned, out)
			}
			if j := joinStates(f.returned); j != nil {
				outs = append(outs, j)
			}
		}
	}
	*st = *joinStates(outs)
	return nil
}

// inline runs an action or function called directly.
func (a *analysis) inline(name string, params []*front.Param, body *front.BlockStmt, call *front.CallExpr,
	st *state, c ctx) (taint, error) {
	if body == nil {
		return a.args(call, st, c)
	}
	a.depth++
	defer func() { a.depth-- }()
	if a.depth > 32 {
		return taint{}, fmt.Errorf("%s: calls nested too deep", call.P)
	}
	f := &frame{prefix: fmt.Sprintf("call%d:%s.", a.depth, name), params: map[string]bool{}}
	args := call.Ordered
	if args == nil {
		args = call.Args
	}
	for i, p := range params {
		f.params[p.Name] = true
		var t taint
		if i < len(args) && args[i] != nil && p.Dir != front.DirOut {
			var err error
			if t, err = a.expr(args[i].Value, st, c); err != nil {
				return t, err
			}
		}
		st.set(f.prefix+p.Name, t, false)
	}
	in := c
	in.frame = f
	out, err := a.block(body, st, in)
	if err != nil {
		return taint{}, err
	}
	if out != nil {
		f.returned = append(f.returned, out)
	}
	res := joinStates(f.returned)
	if res == nil {
		return taint{}, nil // every path exits
	}
	for i, p := range params {
		if (p.Dir == front.DirOut || p.Dir == front.DirInOut) && i < len(args) && args[i] != nil {
			if err := a.assign(args[i].Value, res.get(f.prefix+p.Name), true, res, ctx{frame: c.frame, inst: c.inst}); err != nil {
				return taint{}, err
			}
		}
	}
	for k := range res.vals {
		if strings.HasPrefix(k, f.prefix) {
			delete(res.vals, k)
		}
	}
	*st = *res
	return f.ret, nil
}

// registerSize returns a Register's cells and cell width.
func registerSize(reg *front.InstanceDecl) (cells, bits int) {
	if len(reg.Args) > 0 {
		cells = constInt(reg.Args[0].Value)
	}
	if et, ok := reg.T.(*front.ExternType); ok && len(et.Args) > 0 {
		bits = front.WidthOf(et.Args[0])
	}
	return cells, bits
}

// blocks is the SRAM blocks a register of cells x bits takes: its data and a spare block.
func blocks(cells, bits, blockBits int) int {
	if cells <= 0 || bits <= 0 {
		return 1
	}
	return (cells*bits+blockBits-1)/blockBits + 1
}

// constInt evaluates a constant size expression (literals, constants, + - * << and casts).
func constInt(e front.Expr) int {
	v := constBig(e)
	if v == nil || !v.IsInt64() {
		return 0
	}
	return int(v.Int64())
}

func constBig(e front.Expr) *big.Int {
	switch e := e.(type) {
	case *front.IntExpr:
		if e.Lit == nil {
			return nil
		}
		return e.Lit.Value
	case *front.CastExpr:
		return constBig(e.X)
	case *front.NameExpr:
		if d, ok := e.Decl.(*front.ConstDecl); ok {
			return constBig(d.Value)
		}
	case *front.BinaryExpr:
		x, y := constBig(e.X), constBig(e.Y)
		if x == nil || y == nil {
			return nil
		}
		switch e.Op {
		case "+":
			return new(big.Int).Add(x, y)
		case "-":
			return new(big.Int).Sub(x, y)
		case "*":
			return new(big.Int).Mul(x, y)
		case "<<":
			return new(big.Int).Lsh(x, uint(y.Uint64()))
		}
	}
	return nil
}

// schedule computes Floor and Earliest (longest paths over the dependencies) and places the
// operations under the resources.
func (l *Layout) schedule() error {
	// Longest paths by relaxation: the graph is acyclic unless a dependency cycle spans
	// registers, which no stage order can hold.
	n := len(l.Ops)
	for _, o := range l.Ops {
		o.Floor, o.Earliest, o.Folded = 0, o.Base, o.FBase
	}
	for round := 0; ; round++ {
		changed := false
		for _, o := range l.Ops {
			for _, d := range o.Deps {
				if f := d.On.Floor + 1; f > o.Floor {
					o.Floor, changed = f, true
				}
				if e := d.On.Earliest + 1 + max(d.Steps, 0); e > o.Earliest {
					o.Earliest, changed = e, true
				}
			}
			for on, d := range o.folded {
				if e := on.Folded + 1 + max(d.Steps, 0); e > o.Folded {
					o.Folded, changed = e, true
				}
			}
		}
		if !changed {
			break
		}
		if round > n+1 {
			var cyc []string
			for _, o := range l.Ops {
				if o.Earliest > 2*n {
					cyc = append(cyc, o.Name)
				}
			}
			return fmt.Errorf("%s: a dependency cycle through %s", l.Control, strings.Join(cyc, ", "))
		}
	}
	// Placement, in order of earliest stage (then first use), and again counting
	// operations only, in order of floor.
	earliest := placement{
		base: func(o *Op) int { return o.Base },
		lat:  func(_ *Op, d Dep) int { return 1 + max(d.Steps, 0) },
		set:  func(o *Op, s int) { o.Stage = s },
		get:  func(o *Op) int { return o.Stage },
	}
	floor := placement{
		base: func(*Op) int { return 0 },
		lat:  func(*Op, Dep) int { return 1 },
		set:  func(o *Op, s int) { o.AtFloor = s },
		get:  func(o *Op) int { return o.AtFloor },
	}
	folded := placement{
		base: func(o *Op) int { return o.FBase },
		lat:  func(o *Op, d Dep) int { return 1 + max(o.folded[d.On].Steps, 0) },
		set:  func(o *Op, s int) { o.AtFolded = s },
		get:  func(o *Op) int { return o.AtFolded },
	}
	for _, p := range []placement{earliest, floor, folded} {
		if err := l.place(p); err != nil {
			return err
		}
	}
	for _, o := range l.Ops {
		l.Floor = max(l.Floor, o.Floor+1)
		l.Depth = max(l.Depth, o.Earliest+1)
		l.Stages = max(l.Stages, o.Stage+1)
		l.FloorStages = max(l.FloorStages, o.AtFloor+1)
		l.FoldedDepth = max(l.FoldedDepth, o.Folded+1)
		l.FoldedStages = max(l.FoldedStages, o.AtFolded+1)
		if o.Kind != KindTable {
			l.SALUs++
			l.Blocks += o.Blocks
		}
	}
	return nil
}

// placement says how to place: each operation at or after base and its dependencies'
// stages plus lat; set records the stage, get reads it back.
type placement struct {
	base func(*Op) int
	lat  func(o *Op, d Dep) int // o depending on d.On
	set  func(*Op, int)
	get  func(*Op) int
}

// place is a list scheduler: stage by stage, the operations whose dependencies allow the
// stage are taken in order of their height (the stages the longest chain of operations
// after them needs; then first use), each into the stage if it has a free stateful ALU and
// enough SRAM blocks (tables always fit), the others left for the next stage.
func (l *Layout) place(p placement) error {
	n := len(l.Ops)
	index := map[*Op]int{}
	for i, o := range l.Ops {
		index[o] = i
	}
	height := map[*Op]int{}
	for range n + 1 { // longest paths by relaxation: the graph is acyclic (schedule checked)
		for _, o := range l.Ops {
			for _, d := range o.Deps {
				height[d.On] = max(height[d.On], height[o]+p.lat(o, d))
			}
		}
	}
	for _, o := range l.Ops {
		if o.Kind != KindTable && o.Blocks > l.Res.SRAMBlocks {
			return fmt.Errorf("%s: register %s needs %d SRAM blocks, a stage has %d", l.Control, o.Name, o.Blocks, l.Res.SRAMBlocks)
		}
		if o.Kind == KindRegister && l.Res.RegisterBlocks > 0 && o.Blocks-1 > l.Res.RegisterBlocks {
			return fmt.Errorf("%s: register %s needs %d SRAM blocks of data, a %s stateful ALU reaches %d (split its cells or its width)",
				l.Control, o.Name, o.Blocks-1, l.Res.Name, l.Res.RegisterBlocks)
		}
	}
	placed := map[*Op]bool{}
	for s := 0; len(placed) < n; s++ {
		if s > 4*n+64 {
			return fmt.Errorf("%s: dependencies not placeable", l.Control)
		}
		var ready []*Op
		for _, o := range l.Ops {
			if placed[o] || p.base(o) > s {
				continue
			}
			ok := true
			for _, d := range o.Deps {
				if !placed[d.On] || p.get(d.On)+p.lat(o, d) > s {
					ok = false
					break
				}
			}
			if ok {
				ready = append(ready, o)
			}
		}
		sort.SliceStable(ready, func(i, j int) bool {
			if height[ready[i]] != height[ready[j]] {
				return height[ready[i]] > height[ready[j]]
			}
			return index[ready[i]] < index[ready[j]]
		})
		salus, sram := 0, 0
		for _, o := range ready {
			if o.Kind != KindTable {
				if salus >= l.Res.SALUs || sram+o.Blocks > l.Res.SRAMBlocks {
					continue
				}
				salus++
				sram += o.Blocks
			}
			p.set(o, s)
			placed[o] = true
		}
	}
	return nil
}

// Markdown renders the layout as a table, operations in order of stage.
func (l *Layout) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| at floor | floor | folded | earliest | operation | register actions, cells x bits, SRAM blocks | "+
		"waits for, folded | waits for, earliest |\n")
	fmt.Fprintf(&b, "|---:|---:|---:|---:|---|---|---|---|\n")
	ops := slices.Clone(l.Ops)
	sort.SliceStable(ops, func(i, j int) bool {
		if ops[i].AtFloor != ops[j].AtFloor {
			return ops[i].AtFloor < ops[j].AtFloor
		}
		return ops[i].Folded < ops[j].Folded
	})
	for _, o := range ops {
		what := ""
		switch o.Kind {
		case KindRegister:
			what = fmt.Sprintf("%s; %d x %d, %d blocks", strings.Join(o.Actions, ", "), o.Cells, o.Bits, o.Blocks)
		case KindMeter:
			what = fmt.Sprintf("%d meters", o.Cells)
		}
		// The dependencies that set the folded and the earliest stage.
		waitFor := func(base int, deps []Dep, stage func(*Op) int) string {
			wait, best := "", base
			if base > 0 {
				wait = fmt.Sprintf("inputs (%d)", base)
			}
			for _, d := range deps {
				if e := stage(d.On) + 1 + max(d.Steps, 0); e > best {
					best = e
					wait = fmt.Sprintf("%s (+%d, line %d)", d.On.Name, max(d.Steps, 0), d.At.Line)
				}
			}
			return wait
		}
		var fdeps []Dep
		for _, d := range o.Deps {
			if f, ok := o.folded[d.On]; ok {
				fdeps = append(fdeps, f)
			}
		}
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %s %s | %s | %s | %s |\n", o.AtFloor, o.Floor, o.Folded, o.Earliest, o.Kind, o.Name, what,
			waitFor(o.FBase, fdeps, func(x *Op) int { return x.Folded }),
			waitFor(o.Base, o.Deps, func(x *Op) int { return x.Earliest }))
	}
	fmt.Fprintf(&b, "\n%s: counting operations only, %d stages (%d placed under the resources); with decisions "+
		"folded, %d (%d placed); counting every computing assignment, %d (%d placed); %d available. %d stateful "+
		"ALUs (%d available), %d SRAM blocks for registers (%d available).\n",
		l.Res.Name, l.Floor, l.FloorStages, l.FoldedDepth, l.FoldedStages, l.Depth, l.Stages, l.Res.Stages,
		l.SALUs, l.Res.Stages*l.Res.SALUs, l.Blocks, l.Res.Stages*l.Res.SRAMBlocks)
	return b.String()
}
