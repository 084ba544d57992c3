package front

import (
	"fmt"
	"sort"
	"strings"
)

// This file checks the local variables of a RegisterAction's apply as bf-p4c sees them (p4c git
// 34b86e9). Before the stateful ALU is built, the mid end's LocalCopyPropagation
// (midend/local_copyprop.cpp, with bf-p4c's policy skipRegisterActionOutput) replaces each read
// of a variable whose value is known by that value and removes the locals nothing reads any
// more; CreateSaluInstruction (mau/stateful_alu.cpp) then takes what is left:
//
//   - a local that survives must be bit<W> or int<W> with W the stateful ALU's operand width
//     (IR::MAU::StatefulAlu::source_width: the register's cell width, halved for a pair or for
//     a bit<64> cell on Tofino 1, at most 32 bits on Tofino 1 and 64 on Tofino 2), or have the
//     register action's cell type ("RegisterAction can't support local var %s", line 2234);
//     each assignment to a refused local is refused too ("Can't assign to %s in
//     RegisterAction", line 775);
//   - a value propagated into a condition brings its slices of apply's parameters with it: a
//     local initialised from v.lo[15:0] and tested before anything changes it is a slice of the
//     register value in a condition ("slice of register value in condition is not supported",
//     line 954), whether or not the local survives.
//
// What survives is decided as LocalCopyPropagation decides it: a local is kept when some read of
// it finds no known value (it was changed on one branch of an if and not the other, or
// something it was computed from changed since), or when it is the whole right-hand side of an
// assignment to an output of apply (the policy keeps those reads); a read of a known value is
// replaced by it, and a local only ever read that way is removed. The names tracked are apply's
// variables, parameters and their fields (v, v.lo, rv, meta.x), as the pass tracks them.

// tnaSALUSpec is the part of bf-p4c's Device::statefulAluSpec() that decides the operand width.
type tnaSALUSpec struct{ maxSize, maxDualSize, maxPhvInputWidth int }

var tnaSALUSpecs = map[int]tnaSALUSpec{1: {32, 64, 32}, 2: {128, 128, 64}}

// saluSourceWidth is the operand width of the stateful ALU of a register with cells of type
// cell on Tofino gen (source_width: min(MaxPhvInputWidth, width / (dual + 1))), or -1 if the
// cell type is not one a stateful ALU takes (tnaRegisterElement reports that).
func saluSourceWidth(cell Type, gen int) int {
	spec := tnaSALUSpecs[gen]
	width, dual := WidthOf(cell), false
	switch x := underlying(cell).(type) {
	case *StructType:
		dual = len(x.Fields) == 2
	case *BitsType:
		dual = x.Width > spec.maxSize && x.Width == spec.maxDualSize
	default:
		return -1
	}
	if width <= 0 {
		return -1
	}
	if dual {
		width /= 2
	}
	return min(spec.maxPhvInputWidth, width)
}

// cpValue is a value LocalCopyPropagation knows for a name: the statement that assigned it (two
// branches keep a value only if both have the same one) and what it reads once the values it
// was computed from are substituted.
type cpValue struct {
	def    Node
	reads  []string  // names read
	slices []cpSlice // slices of apply's parameters in it
	name   string    // the value is this name of a parameter (v.lo): a slice of it is a slice of the register value
}

// cpSlice is a slice of a parameter of apply, reached through the local at use.
type cpSlice struct {
	text string
	via  string // the local whose value brought it ("" if written in place)
}

// cpState is what LocalCopyPropagation knows at one point of apply's body.
type cpState map[string]*cpValue

func (s cpState) clone() cpState {
	out := make(cpState, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}

// copyName is LocalCopyPropagation's name for an lvalue-like expression (v, v.lo, meta.x), or "".
func copyName(e Expr) string {
	switch x := e.(type) {
	case *NameExpr:
		return x.Name
	case *MemberExpr:
		if b := copyName(x.X); b != "" {
			return b + "." + x.Name
		}
	}
	return ""
}

// cpOverlap reports whether two names denote overlapping locations (v and v.lo do).
func cpOverlap(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
}

// saluLocals runs the model over one apply body.
type saluLocals struct {
	c       *checker
	d       *InstanceDecl
	params  map[string]bool // apply's parameters by name
	outputs map[string]bool // apply's parameters after the first (the policy's outputs)
	locals  map[string]*VarDecl
	live    map[*VarDecl]bool
	inCond  int
	condUse []cpUse
}

// cpUse is a slice of a parameter that reached a condition through a local.
type cpUse struct {
	at    Pos
	slice cpSlice
}

// saluLocalRules refuses the locals of d's apply fn that bf-p4c keeps and its stateful ALU cannot
// hold, the assignments to them, and the slices of the register value that their values bring
// into conditions.
func (c *checker) saluLocalRules(d *InstanceDecl, fn *FunctionDecl) {
	reg, et := saluRegister(d)
	if reg == nil {
		return
	}
	gen := c.out.TofinoGeneration()
	if gen != 2 {
		gen = 1
	}
	rt := reg.T.(*ExternType)
	width := saluSourceWidth(rt.Args[0], gen)
	cell := rt.Args[0]
	if len(et.Args) > 0 && et.Args[0] != nil && !isDontCare(et.Args[0]) {
		cell = et.Args[0]
	}
	m := &saluLocals{c: c, d: d, params: map[string]bool{}, outputs: map[string]bool{},
		locals: map[string]*VarDecl{}, live: map[*VarDecl]bool{}}
	for i, p := range fn.Params {
		m.params[p.Name] = true
		if i > 0 {
			m.outputs[p.Name] = true
		}
	}
	vars := map[*VarDecl]bool{}
	collectLocals(fn.Body, vars)
	for v := range vars {
		m.locals[v.Name] = v
	}
	m.stmt(fn.Body, cpState{})

	reported := map[string]bool{}
	for _, u := range m.condUse {
		key := u.at.String() + u.slice.text
		if reported[key] {
			continue
		}
		reported[key] = true
		c.errorf(u.at, "RegisterAction %s: slice of register value in condition is not supported (%s holds %s here: the Tofino compiler propagates it into the condition)",
			d.Name, u.slice.via, u.slice.text)
	}
	var refused []*VarDecl
	for v := range m.live {
		if width < 0 || saluLocalOK(v.T, width, cell) {
			continue
		}
		refused = append(refused, v)
	}
	sort.Slice(refused, func(i, j int) bool { return posLess(refused[i].P, refused[j].P) })
	bad := map[string]bool{}
	for _, v := range refused {
		bad[v.Name] = true
		also := ""
		if !saluLocalOK(cell, width, nil) {
			also = ", or the register action's " + cell.String()
		}
		c.errorf(v.P, "RegisterAction %s: RegisterAction can't support local var %s (a %s the Tofino compiler keeps: a stateful ALU local is bit<%d> or int<%d>, its operand width on this register%s)",
			d.Name, v.Name, v.T, width, width, also)
	}
	if len(bad) == 0 {
		return
	}
	walkStmts(fn.Body, func(s Stmt) {
		as, ok := s.(*AssignStmt)
		if !ok {
			return
		}
		root := as.LHS
		for {
			if x, ok := root.(*MemberExpr); ok {
				root = x.X
			} else if x, ok := root.(*SliceExpr); ok {
				root = x.X
			} else {
				break
			}
		}
		if n, ok := root.(*NameExpr); ok && bad[n.Name] {
			c.errorf(as.LHS.Position(), "RegisterAction %s: Can't assign to %s in RegisterAction (a local it cannot have)", d.Name, ExprString(as.LHS))
		}
	})
}

// saluRegister returns the Register a RegisterAction instance d is on, and d's type.
func saluRegister(d *InstanceDecl) (*InstanceDecl, *ExternType) {
	et, ok := d.T.(*ExternType)
	if !ok || et.Decl.Name != "RegisterAction" || len(d.Args) == 0 {
		return nil, nil
	}
	reg := registerOf(d.Args[0].Value)
	if reg == nil {
		return nil, nil
	}
	if rt, ok := reg.T.(*ExternType); !ok || len(rt.Args) == 0 || rt.Args[0] == nil || isDontCare(rt.Args[0]) {
		return nil, nil
	}
	return reg, et
}

// saluLocalOK reports whether a local of type t can be a stateful ALU local: bit<width> or
// int<width>, or the register action's cell type.
func saluLocalOK(t Type, width int, cell Type) bool {
	if b, ok := underlying(t).(*BitsType); ok && b.Width == width {
		return true
	}
	return sameType(t, cell)
}

// stmt runs the model over s from state st and returns the state after it.
func (m *saluLocals) stmt(s Stmt, st cpState) cpState {
	switch s := s.(type) {
	case *BlockStmt:
		if s == nil {
			return st
		}
		for _, x := range s.Stmts {
			st = m.stmt(x, st)
		}
	case *DeclStmt:
		v, ok := s.Decl.(*VarDecl)
		if !ok {
			return st
		}
		delete(st, v.Name)
		if v.Init != nil {
			val := m.expr(v.Init, st, false)
			m.assign(v.Name, val, v.Init, s, st)
		}
	case *AssignStmt:
		_, whole := s.LHS.(*NameExpr)
		val := m.expr(s.RHS, st, whole && m.outputs[copyName(s.LHS)])
		dest := copyName(s.LHS)
		if dest == "" || s.Op != "" {
			// A slice or compound assignment reads what it writes.
			root := s.LHS
			for {
				if x, ok := root.(*SliceExpr); ok {
					root = x.X
				} else {
					break
				}
			}
			if n := copyName(root); n != "" {
				m.markLive(n)
				m.drop(n, st)
			}
			return st
		}
		m.assign(dest, val, s.RHS, s, st)
	case *CallStmt:
		m.expr(s.Call, st, false)
	case *IfStmt:
		m.inCond++
		m.expr(s.Cond, st, false)
		m.inCond--
		then := m.stmt(s.Then, st.clone())
		els := st
		if s.Else != nil {
			els = m.stmt(s.Else, st.clone())
		}
		merged := cpState{}
		for k, v := range then {
			if w, ok := els[k]; ok && w == v {
				merged[k] = v
			}
		}
		return merged
	case *ReturnStmt:
		if s.Value != nil {
			m.expr(s.Value, st, false)
		}
	}
	return st
}

// assign records dest = val (rhs, the statement def): values reading dest are forgotten, and
// dest's value is known unless it is computed from dest itself or calls something.
func (m *saluLocals) assign(dest string, val *cpValue, rhs Expr, def Node, st cpState) {
	m.drop(dest, st)
	for _, r := range val.reads {
		if cpOverlap(r, dest) {
			return
		}
	}
	calls := false
	walkExpr(rhs, func(e Expr) {
		_, isCall := e.(*CallExpr)
		calls = calls || isCall
	})
	if calls {
		return
	}
	val.def = def
	st[dest] = val
}

// drop forgets the values of names overlapping dest and the values that read it.
func (m *saluLocals) drop(dest string, st cpState) {
	for k, v := range st {
		if cpOverlap(k, dest) {
			delete(st, k)
			continue
		}
		for _, r := range v.reads {
			if cpOverlap(r, dest) {
				delete(st, k)
				break
			}
		}
	}
}

// markLive marks the locals that a read of name n uses.
func (m *saluLocals) markLive(n string) {
	for name, v := range m.locals {
		if cpOverlap(name, n) {
			m.live[v] = true
		}
	}
}

// expr evaluates e in state st: it returns what e reads once known values are substituted,
// marks the locals read without a known value live, and records the slices of apply's
// parameters that known values bring into a condition. keep is the policy's exception: e is the
// whole right-hand side of an assignment to an output, whose value is not substituted.
func (m *saluLocals) expr(e Expr, st cpState, keep bool) *cpValue {
	out := &cpValue{}
	if n := copyName(e); n != "" {
		if v, ok := st[n]; ok && !keep {
			out.reads = v.reads
			out.name = v.name
			for _, sl := range v.slices {
				sl = cpSlice{sl.text, n}
				out.slices = append(out.slices, sl)
				if m.inCond > 0 {
					m.condUse = append(m.condUse, cpUse{e.Position(), sl})
				}
			}
			return out
		}
		m.markLive(n)
		out.reads = []string{n}
		if root, _, _ := strings.Cut(n, "."); m.params[root] {
			out.name = n
		}
		return out
	}
	switch x := e.(type) {
	case *SliceExpr:
		base := m.expr(x.X, st, false)
		out.reads = base.reads
		out.slices = base.slices
		if base.name != "" {
			sl := cpSlice{text: fmt.Sprintf("%s[%d:%d]", base.name, x.HiV, x.LoV)}
			if bn := copyName(x.X); bn != "" && bn != base.name {
				sl.via = bn
				if m.inCond > 0 {
					m.condUse = append(m.condUse, cpUse{x.P, sl})
				}
			}
			out.slices = append(out.slices, sl)
		}
		return out
	case *TernaryExpr:
		m.inCond++
		c := m.expr(x.Cond, st, false)
		m.inCond--
		out.reads = append(out.reads, c.reads...)
		out.slices = append(out.slices, c.slices...)
		for _, y := range []Expr{x.Then, x.Else} {
			v := m.expr(y, st, false)
			out.reads = append(out.reads, v.reads...)
			out.slices = append(out.slices, v.slices...)
		}
		return out
	case *CallExpr:
		for _, a := range x.Args {
			v := m.expr(a.Value, st, false)
			out.reads = append(out.reads, v.reads...)
			out.slices = append(out.slices, v.slices...)
		}
		return out
	}
	for _, y := range exprChildren(e) {
		if y == nil {
			continue
		}
		v := m.expr(y, st, false)
		out.reads = append(out.reads, v.reads...)
		out.slices = append(out.slices, v.slices...)
	}
	return out
}
