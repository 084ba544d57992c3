package tofino

import (
	"fmt"
	"maps"
	"math/big"
	"path/filepath"
	"slices"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// This file is the second stage model: the table dependency graph bf-p4c builds of a control
// (mau/table_dependency_graph.cpp) as the model reconstructs it from the source, and the
// earliest stage of every table in it. Where the first model (Analyze) follows values, this one
// follows bf-p4c's tables and what they read and write:
//
//   - The tables are the ones bf-p4c places. A run of an apply block's statements that p4c
//     makes one action (front.SplitRuns) is a table of its own (tbl_<file><line>), as is an
//     action called from the apply block (tbl_<action>); a table applied is itself; an if is a
//     gateway (cond-<line>) that the tables of its branches run under; a control applied is
//     inlined. An assignment of 0 to a metadata field or local that no table wrote before is no
//     instruction (bf-p4c's RemoveMetadataInits: the parser zeroes metadata).
//   - A table reads what its key, its conditions, the inputs of its hashes, register actions
//     (index and apply body), meters and counters name (the crossbar's reads) and what its
//     actions read; it writes what its actions write. Fields are whole: a slice is its field
//     (bf-p4c orders two writes of slices of one container), a header's validity is a field
//     of its own ($valid).
//   - Two tables exclude each other when they are in different branches of one if or switch,
//     or of a table's hit and miss (as written: bf-p4c knows no other exclusivity). After a
//     table's miss only its default action has run if it is const, after a case of its
//     action_run only that action. Statements after an if whose branch always exits run in the
//     if's other branch (bf-p4c's tables after it are that branch), no earlier than the
//     exiting branch's tables when that is the then branch (bf-p4c merges the gateway into its
//     table).
//   - A table that reads (by the crossbar or in an action) or writes what an earlier table not
//     excluding it writes goes at least one stage after it (IXBAR_READ, ACTION_READ, OUTPUT); a
//     table that writes what an earlier one reads goes no earlier than it (the anti
//     dependencies); a table goes no earlier than the gateway or table it runs under. When a
//     table depends on one under an earlier table of its sequence, the table of the sequence
//     that holds it goes no earlier than every table under that one (bf-p4c's
//     add_logical_deps_from_control_deps: a sequence runs in order by next-table propagation).
//
// Stages is the critical path: the stages of the longest chain, the figure bf-p4c prints as
// "Critical path length through the table dependency graph" (table_summary.log), which no
// layout of one pass beats. Not modelled: bf-p4c's splitting of gateways it cannot place in
// one ($split) and of actions that read more than two containers into one, the tables it adds
// for the checksums of invalidated headers, the copies it makes of tables run from several
// places, its midend's copy propagation, the predication of ifs inside actions (an action's if
// is its reads, both branches' writes), and output dependencies of fields its PHV allocation
// puts in one container.

// TKind says what a table of the graph is.
type TKind uint8

// Table kinds.
const (
	TAction  TKind = iota + 1 // a run of an apply block's statements, or an action called from it
	TMatch                    // a table the program declares
	TGateway                  // an if's condition
)

// DepKind is the kind of a dependency between two tables (bf-p4c's names in the comments).
type DepKind uint8

// Dependency kinds; DepMatch, DepAction and DepOutput cost a stage.
const (
	DepNone    DepKind = iota
	DepMatch           // reads by the crossbar what the other wrote (IXBAR_READ)
	DepAction          // an action reads what the other wrote (ACTION_READ)
	DepOutput          // writes what the other wrote (OUTPUT)
	DepAnti            // writes what the other reads: not before it (ANTI_*)
	DepControl         // runs under the other's outcome: not before it (CONTROL_*)
)

func (k DepKind) String() string {
	return [...]string{"", "match", "action", "output", "anti", "control"}[k]
}

// Table is one table of the graph.
type Table struct {
	Name  string
	Kind  TKind
	P     front.Pos
	Stage int     // the earliest stage the dependencies allow
	By    *Table  // the dependency that sets Stage, nil at stage 0
	ByK   DepKind // its kind
	// what it reads by the crossbar (keys, conditions, hash and extern inputs), reads in its
	// actions, and writes
	match, action, writes fields
	arms                  []arm  // the branches it is in, outermost first
	ctl                   *Table // the gateway or table it runs under
	// Tables[idx:end] of the graph are the table and those that run under it (its subtree)
	idx, end int
	// A table applied: what each of its actions writes; a table whose outcome selects
	// branches: the point they branch at, and what the actions that lead to each write (the
	// others cannot run before a table of that branch).
	actWrites map[string]fields
	dflt      string // its default action, "" when the control plane may change it
	point     int
	armWrites map[int]fields
	in        []edge // the dependencies on tables before it
	// what it sends through hash distribution (hashdist.go): the hashes its actions use as
	// data, and its register, counter and meter indexes
	hdImm   []immHash
	hdIndex []hdUse
}

// edge is a dependency on an earlier table: from's stage plus cost, or (inject) the latest
// stage of from's subtree.
type edge struct {
	from   *Table
	kind   DepKind
	cost   int
	inject bool
}

// arm is one branch (an if's then 0 and else 1, a switch's cases, a table's hit 0 and miss 1)
// of a branching point.
type arm struct{ point, branch int }

// Graph is a control's table dependency graph.
type Graph struct {
	Control string
	Tables  []*Table // in program order
	Stages  int      // the critical path: the longest chain of dependencies that cost a stage, in stages
	m       graphModel
}

// Chain returns the critical path, from its first table to the last.
func (g *Graph) Chain() []*Table {
	var last *Table
	for _, t := range g.Tables {
		if last == nil || t.Stage > last.Stage {
			last = t
		}
	}
	var c []*Table
	for t := last; t != nil; t = t.By {
		c = append(c, t)
	}
	slices.Reverse(c)
	return c
}

// TableGraph builds the table dependency graph of ctl (a checked TNA control).
// consts are the program's compile-time constants (front.Checked.Const).
func TableGraph(ctl *front.ControlDecl, consts map[front.Expr]front.Value) (*Graph, error) {
	return graphModel{}.build(ctl, consts)
}

// graphModel turns rules of the model off, for the tests' negative controls.
type graphModel struct {
	noActionRead, noOutput, noExclusive, noZeroInit, noExitElse, noExitFloor, noNextTable, noArmWrites bool
	// bitSlices takes a slice for its bits of the field, not the whole field
	bitSlices bool
	// assume gives local variables a value: an if whose condition these decide (tests of
	// such a variable against constants, with &&, || and !) keeps only its live branch.
	assume map[string]uint64
	// noFollow keeps only the assumed values, not the values of variables they decide
	noFollow bool
}

func (m graphModel) build(ctl *front.ControlDecl, consts map[front.Expr]front.Value) (*Graph, error) {
	if ctl.Body == nil {
		return nil, fmt.Errorf("control %s has no apply block", ctl.Name)
	}
	b := &graphBuilder{g: &Graph{Control: ctl.Name, m: m}, m: m, consts: consts, written: fields{}, index: map[*front.CallExpr]bool{}}
	if len(m.assume) > 0 {
		b.env = passEnv{}
	}
	if err := b.stmts(ctl.Body.Stmts); err != nil {
		return nil, err
	}
	b.g.stages()
	return b.g, nil
}

type graphBuilder struct {
	g      *Graph
	m      graphModel
	consts map[front.Expr]front.Value
	// written is what the tables so far write: a metadata field's first write of 0 is no
	// instruction (bf-p4c's RemoveMetadataInits: the parser zeroes metadata)
	written fields
	arms    []arm
	ctl     *Table
	points  int
	depth   int
	// inst is the instance path of the control applied (inlined) where the walk is, "" at the
	// top; alias maps its parameters to the arguments it was applied with.
	inst  string
	alias map[*front.Param]string
	// after are tables that every table added now goes no earlier than (the exiting branch
	// of an if that what follows it runs after)
	after []*Table
	// env holds the local variables known under the model's assumptions (assume) where the
	// walk is; nil without assumptions
	env passEnv
	// index are the Hash.get calls that are an extern's index (hashDistUses); noHD is set
	// while a key or a condition is read, whose hashes are not counted
	index map[*front.CallExpr]bool
	noHD  bool
}

// stmts adds the tables of an apply block's statements.
func (b *graphBuilder) stmts(ss []front.Stmt) error {
	for k, s := range ss {
		ifs, ok := s.(*front.IfStmt)
		if !ok {
			continue
		}
		thenExits, elseExits := alwaysExits(ifs.Then), ifs.Else != nil && alwaysExits(ifs.Else)
		if (!thenExits && !elseExits) || b.m.noExitElse {
			continue
		}
		// The statements after the if run in its branch that does not exit.
		if err := b.split(ss[:k]); err != nil {
			return err
		}
		rest := ss[k+1:]
		if thenExits && elseExits {
			rest = nil
		}
		return b.ifStmt(ifs, rest, !thenExits)
	}
	return b.split(ss)
}

// split adds the tables of statements no if of which always exits.
func (b *graphBuilder) split(ss []front.Stmt) error {
	var err error
	front.SplitRuns(ss, func(run []front.Stmt) {
		if err == nil {
			err = b.run(run)
		}
	}, func(s front.Stmt) {
		if err == nil {
			err = b.other(s)
		}
	})
	return err
}

// alwaysExits reports whether every path through s ends in an exit.
func alwaysExits(s front.Stmt) bool {
	switch s := s.(type) {
	case *front.ExitStmt:
		return true
	case *front.BlockStmt:
		for _, x := range s.Stmts {
			if alwaysExits(x) {
				return true
			}
		}
	case *front.IfStmt:
		return s.Else != nil && alwaysExits(s.Then) && alwaysExits(s.Else)
	}
	return false
}

func (b *graphBuilder) table(kind TKind, name string, p front.Pos) *Table {
	t := &Table{Name: name, Kind: kind, P: p, match: fields{}, action: fields{},
		writes: fields{}, arms: append([]arm(nil), b.arms...), ctl: b.ctl}
	for _, u := range b.after {
		t.in = append(t.in, edge{from: u, kind: DepControl})
	}
	return t
}

// run adds the table of one run of statements.
func (b *graphBuilder) run(run []front.Stmt) error {
	p := run[0].Position()
	t := b.table(TAction, fmt.Sprintf("tbl_%s%d", strings.TrimSuffix(filepath.Base(p.File), filepath.Ext(p.File)), p.Line), p)
	kept := false
	for _, s := range run {
		b.step(s)
		if b.zeroInit(s) {
			continue
		}
		kept = true
		if err := b.effects(s, t); err != nil {
			return err
		}
	}
	if !kept {
		return nil // every statement was a metadata init bf-p4c removes
	}
	b.place(t)
	return nil
}

// zeroInit reports whether s assigns 0 to a metadata field (a field of a struct that is no
// header, or a local variable) that no table wrote before: bf-p4c removes it
// (phv/auto_init_metadata.h, RemoveMetadataInits), as the parser zeroes metadata. Unlike
// bf-p4c, a write on an exclusive path before counts, and the parser's writes do not.
func (b *graphBuilder) zeroInit(s front.Stmt) bool {
	if b.m.noZeroInit {
		return false
	}
	var lhs, rhs front.Expr
	var key string
	switch s := s.(type) {
	case *front.AssignStmt:
		if s.Op != "" || !isMetadata(s.LHS) {
			return false
		}
		lhs, rhs = s.LHS, s.RHS
	case *front.DeclStmt:
		v, ok := s.Decl.(*front.VarDecl)
		if !ok || v.Init == nil {
			return false
		}
		rhs, key = v.Init, b.varKey(v)
	default:
		return false
	}
	switch v := b.consts[rhs].(type) {
	case *big.Int:
		if v.Sign() != 0 {
			return false
		}
	case bool:
		if v {
			return false
		}
	default:
		return false
	}
	w := fields{}
	if lhs != nil {
		f, ok := b.fieldOf(lhs)
		if !ok {
			return false
		}
		w.add(f)
	} else {
		w.add(field{key, 0, wholeField})
	}
	return !overlaps(w, b.written)
}

// isMetadata reports whether e is a field of metadata: of a struct parameter that is no
// header (nor the architecture's intrinsic metadata), reached through no header, or a local.
func isMetadata(e front.Expr) bool {
	for {
		switch x := e.(type) {
		case *front.SliceExpr:
			e = x.X
		case *front.MemberExpr:
			if x.Kind != front.MemberField {
				return false
			}
			if st, ok := x.X.Type().(*front.StructType); !ok || st.IsHeader() || st.IsUnion() {
				return false
			}
			e = x.X
		case *front.NameExpr:
			switch d := x.Decl.(type) {
			case *front.VarDecl:
				return true
			case *front.Param:
				st, ok := d.T.(*front.StructType)
				return ok && !st.IsHeader() && !strings.Contains(st.Decl.Name, "intrinsic_metadata")
			}
			return false
		default:
			return false
		}
	}
}

// other adds the tables of a statement that is not part of a run.
func (b *graphBuilder) other(s front.Stmt) error {
	switch s := s.(type) {
	case *front.BlockStmt:
		return b.stmts(s.Stmts)
	case *front.IfStmt:
		return b.ifStmt(s, nil, false)
	case *front.SwitchStmt:
		sel, err := b.selector(s.Expr, TMatch, fmt.Sprintf("switch-%d", s.P.Line), s.P)
		if err != nil {
			return err
		}
		pt := b.point()
		if sel.actWrites != nil && s.OnActionRun {
			// a case without a body falls through to the next: its label leads there too
			var labels [][]string
			var pending []string
			for _, cs := range s.Cases {
				if cs.Default {
					labels, pending = append(labels, nil), nil
					continue
				}
				pending = append(pending, front.ExprString(cs.Label))
				if cs.Body == nil {
					labels = append(labels, []string{})
					continue
				}
				labels, pending = append(labels, pending), nil
			}
			sel.selects(pt, false, labels)
		}
		env0, ends := b.env, []passEnv{b.env}
		defer func() { b.env = b.meet(env0, ends) }()
		for i, cs := range s.Cases {
			if cs.Body == nil {
				continue
			}
			b.env = maps.Clone(env0)
			if err := b.branch(sel, arm{pt, i}, cs.Body.Stmts); err != nil {
				return err
			}
			ends = append(ends, b.env)
		}
		return nil
	case *front.CallStmt:
		b.step(s)
		if act, ok := s.Call.Callee.(*front.ActionDecl); ok {
			t := b.table(TAction, "tbl_"+act.Name, s.P)
			if err := b.callEffects(s.Call, t); err != nil {
				return err
			}
			b.place(t)
			return nil
		}
		if ctl, ok := s.Call.Callee.(*front.ControlDecl); ok {
			return b.inline(ctl, s.Call)
		}
		if s.Call.Method == "apply" {
			_, err := b.apply(s.Call)
			return err
		}
	}
	return nil
}

// inline adds the tables of a control applied from the control, as p4c inlines it: its
// parameters are the arguments, its locals and tables its instance's own.
func (b *graphBuilder) inline(ctl *front.ControlDecl, call *front.CallExpr) error {
	if ctl.Body == nil {
		return nil
	}
	b.depth++
	defer func() { b.depth-- }()
	if b.depth > 32 {
		return fmt.Errorf("%s: controls applied too deep", call.P)
	}
	name := ctl.Name
	if m, ok := call.Fun.(*front.MemberExpr); ok {
		if n, ok := m.X.(*front.NameExpr); ok {
			name = n.Name
		}
	}
	alias := map[*front.Param]string{}
	args := call.Ordered
	if args == nil {
		args = call.Args
	}
	params := ctl.Params
	for i, p := range params {
		if i < len(args) && args[i] != nil {
			if a, ok := b.fieldPath(args[i].Value); ok {
				alias[p] = a
				continue
			}
		}
		alias[p] = b.inst + name + "." + p.Name // a value: no table writes it
	}
	inst, old := b.inst, b.alias
	b.inst, b.alias = b.inst+name+".", alias
	err := b.stmts(ctl.Body.Stmts)
	b.inst, b.alias = inst, old
	return err
}

// selector adds the table whose outcome an if or a switch tests: the table applied in e (its
// hit, miss or action run), or one that matches on e (a gateway, a switch's table).
func (b *graphBuilder) selector(e front.Expr, kind TKind, name string, p front.Pos) (*Table, error) {
	if call := applyCall(e); call != nil {
		return b.apply(call)
	}
	t := b.table(kind, name, p)
	b.noHD = true // a hash a condition or a switch tests is not counted (hashdist.go)
	err := b.reads(e, t, t.match)
	b.noHD = false
	if err != nil {
		return nil, err
	}
	b.place(t)
	return t, nil
}

// ifStmt adds an if's gateway (or the table whose hit or miss it tests) and its branches;
// rest runs in the then branch (restThen) or the else branch.
func (b *graphBuilder) ifStmt(s *front.IfStmt, rest []front.Stmt, restThen bool) error {
	if v, known := b.decide(s.Cond); known {
		live := stmtList(s.Else)
		if v {
			live = stmtList(s.Then)
		}
		if len(rest) > 0 && v == restThen {
			live = append(append([]front.Stmt(nil), live...), rest...)
		}
		return b.stmts(live)
	}
	sel, err := b.selector(s.Cond, TGateway, fmt.Sprintf("cond-%d", s.P.Line), s.P)
	if err != nil {
		return err
	}
	pt := b.point()
	if sel.actWrites != nil {
		sel.selects(pt, missFirst(s.Cond), nil)
	}
	branches := [2][]front.Stmt{stmtList(s.Then), stmtList(s.Else)}
	if len(rest) > 0 {
		i := 1
		if restThen {
			i = 0
		}
		branches[i] = append(append([]front.Stmt(nil), branches[i]...), rest...)
	}
	var exiting []*Table
	env0, ends := b.env, []passEnv(nil)
	defer func() { b.env = b.meet(env0, ends) }()
	for i, ss := range branches {
		b.env = maps.Clone(env0)
		after := b.after
		if i == 1 && len(rest) > 0 && !restThen && !b.m.noExitFloor {
			// bf-p4c merges the gateway into the then branch's table, which exits: what
			// follows runs on its false branch, no earlier than it.
			b.after = append(append([]*Table(nil), after...), exiting...)
		}
		start := len(b.g.Tables)
		if err := b.branch(sel, arm{pt, i}, ss); err != nil {
			return err
		}
		b.after = after
		ends = append(ends, b.env)
		if i == 0 {
			for _, t := range b.g.Tables[start:] {
				if t.ctl == sel {
					exiting = append(exiting, t)
				}
			}
		}
	}
	return nil
}

// decide evaluates cond under the model's assumptions: known is false unless they, and the
// values of local variables they decide, decide it.
func (b *graphBuilder) decide(cond front.Expr) (v, known bool) {
	n, known := b.known(cond)
	return n != 0, known
}

// known is e's value where the assumptions decide it (knownValue).
func (b *graphBuilder) known(e front.Expr) (uint64, bool) {
	if b.env == nil {
		return 0, false
	}
	return knownValue(e, ofVars(func(v *front.VarDecl) (uint64, bool) {
		if n, ok := b.m.assume[v.Name]; ok {
			return n, true
		}
		n, ok := b.env[v]
		return n, ok
	}))
}

// meet is what every one of ends knows (env0 when there is no assumption or no end).
func (b *graphBuilder) meet(env0 passEnv, ends []passEnv) passEnv {
	if env0 == nil || len(ends) == 0 {
		return env0
	}
	out := ends[0]
	for _, e := range ends[1:] {
		out = meet(out, e)
	}
	return out
}

// step follows s's effect on the known values of local variables.
func (b *graphBuilder) step(s front.Stmt) {
	if b.env != nil && !b.m.noFollow {
		b.env.step(s, b.known)
	}
}

func stmtList(s front.Stmt) []front.Stmt {
	switch s := s.(type) {
	case nil:
		return nil
	case *front.BlockStmt:
		return s.Stmts
	}
	return []front.Stmt{s}
}

func (b *graphBuilder) point() int {
	b.points++
	return b.points
}

// branch adds the tables of one branch, run under sel.
func (b *graphBuilder) branch(sel *Table, a arm, ss []front.Stmt) error {
	arms, ctl := b.arms, b.ctl
	b.arms, b.ctl = append(append([]arm(nil), arms...), a), sel
	err := b.stmts(ss)
	b.arms, b.ctl = arms, ctl
	sel.end = len(b.g.Tables)
	return err
}

// applyCall returns the t.apply() call an if's condition or a switch tests (hit, miss,
// action_run, possibly negated), or nil.
func applyCall(e front.Expr) *front.CallExpr {
	for {
		switch x := e.(type) {
		case *front.UnaryExpr:
			e = x.X
		case *front.MemberExpr:
			if x.Kind != front.MemberTableField {
				return nil
			}
			call, _ := x.X.(*front.CallExpr)
			return call
		default:
			return nil
		}
	}
}

// missFirst reports whether an if on a table's outcome takes its then branch on a miss
// (t.apply().miss, !t.apply().hit).
func missFirst(cond front.Expr) bool {
	neg := false
	for {
		switch x := cond.(type) {
		case *front.UnaryExpr:
			neg = !neg
			cond = x.X
		case *front.MemberExpr:
			return (x.Name == "miss") != neg
		default:
			return false
		}
	}
}

// apply adds a table applied.
func (b *graphBuilder) apply(call *front.CallExpr) (*Table, error) {
	td, ok := call.Callee.(*front.TableDecl)
	if !ok {
		return nil, fmt.Errorf("%s: %s: apply of a control is not modelled", call.P, front.ExprString(call))
	}
	t := b.table(TMatch, b.inst+td.Name, call.P)
	if p := td.Prop("key"); p != nil {
		b.noHD = true // a hash in a key is not counted (hashdist.go)
		for _, k := range p.Keys {
			if err := b.reads(k.Expr, t, t.match); err != nil {
				b.noHD = false
				return nil, err
			}
		}
		b.noHD = false
	}
	t.actWrites = map[string]fields{}
	if p := td.Prop("actions"); p != nil {
		for _, ref := range p.Actions {
			if ref.Action == nil || ref.Action.Body == nil {
				continue
			}
			all := t.writes
			t.writes = fields{}
			for _, s := range ref.Action.Body.Stmts {
				if err := b.effects(s, t); err != nil {
					return nil, err
				}
			}
			t.actWrites[ref.Action.Name] = t.writes
			for k, rs := range t.writes {
				all[k] = append(all[k], rs...)
			}
			t.writes = all
		}
	}
	// A miss runs the default action; the control plane may change it unless it is const.
	t.dflt = "NoAction"
	if p := td.Prop("default_action"); p != nil && len(p.Actions) > 0 && p.Actions[0].Action != nil {
		t.dflt = p.Actions[0].Action.Name
		if !p.Const {
			t.dflt = ""
		}
	}
	b.place(t)
	return t, nil
}

// selects records that the branches at point run after the outcome of t, a table applied:
// on a hit or a miss (arms 0 and 1 are hit and miss, or miss and hit when missFirst), or,
// for a switch on the action run, the actions each case names (labels; nil: the default).
func (t *Table) selects(point int, missFirst bool, labels [][]string) {
	t.point = point
	t.armWrites = map[int]fields{}
	miss := t.actWrites[t.dflt]
	switch {
	case t.dflt == "":
		miss = t.writes
	case miss == nil:
		miss = fields{}
	}
	if labels == nil {
		hit, missArm := 0, 1
		if missFirst {
			hit, missArm = 1, 0
		}
		t.armWrites[hit], t.armWrites[missArm] = t.writes, miss
		return
	}
	for i, names := range labels {
		if names == nil {
			continue // the default case: any action
		}
		w := fields{}
		for _, n := range names {
			for k, rs := range t.actWrites[n] {
				w[k] = append(w[k], rs...)
			}
		}
		t.armWrites[i] = w
	}
}

// callEffects adds what an action or function called reads and writes to t.
func (b *graphBuilder) callEffects(call *front.CallExpr, t *Table) error {
	var body *front.BlockStmt
	var params []*front.Param
	switch c := call.Callee.(type) {
	case *front.ActionDecl:
		body, params = c.Body, c.Params
	case *front.FunctionDecl:
		body, params = c.Body, c.Params
	}
	args := call.Ordered
	if args == nil {
		args = call.Args
	}
	for i, a := range args {
		if a == nil {
			continue
		}
		if i < len(params) && (params[i].Dir == front.DirOut || params[i].Dir == front.DirInOut) {
			if err := b.writes(a.Value, t); err != nil {
				return err
			}
			if params[i].Dir == front.DirOut {
				continue
			}
		}
		if err := b.reads(a.Value, t, t.action); err != nil {
			return err
		}
	}
	if body == nil {
		return nil
	}
	b.depth++
	defer func() { b.depth-- }()
	if b.depth > 32 {
		return fmt.Errorf("%s: calls nested too deep", call.P)
	}
	for _, s := range body.Stmts {
		if err := b.effects(s, t); err != nil {
			return err
		}
	}
	return nil
}

// effects adds what a statement of an action reads and writes to t.
func (b *graphBuilder) effects(s front.Stmt, t *Table) error {
	switch s := s.(type) {
	case *front.AssignStmt:
		if err := b.writes(s.LHS, t); err != nil {
			return err
		}
		return b.reads(s.RHS, t, t.action)
	case *front.DeclStmt:
		if v, ok := s.Decl.(*front.VarDecl); ok && v.Init != nil {
			t.writes.add(field{b.varKey(v), 0, wholeField})
			return b.reads(v.Init, t, t.action)
		}
	case *front.CallStmt:
		return b.reads(s.Call, t, t.action)
	case *front.IfStmt:
		if err := b.reads(s.Cond, t, t.action); err != nil {
			return err
		}
		for _, br := range []front.Stmt{s.Then, s.Else} {
			for _, x := range stmtList(br) {
				if err := b.effects(x, t); err != nil {
					return err
				}
			}
		}
	case *front.BlockStmt:
		for _, x := range s.Stmts {
			if err := b.effects(x, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// reads adds what e reads to into, and what the calls in it read and write to t.
func (b *graphBuilder) reads(e front.Expr, t *Table, into fields) error {
	switch e := e.(type) {
	case nil:
	case *front.NameExpr, *front.MemberExpr, *front.SliceExpr:
		if f, ok := b.fieldOf(e); ok {
			into.add(f)
			return nil
		}
		switch e := e.(type) {
		case *front.MemberExpr:
			return b.reads(e.X, t, into)
		case *front.SliceExpr:
			return b.reads(e.X, t, into)
		}
	case *front.IndexExpr:
		return b.readsAll(t, into, e.X, e.Index)
	case *front.CastExpr:
		return b.reads(e.X, t, into)
	case *front.UnaryExpr:
		return b.reads(e.X, t, into)
	case *front.BinaryExpr:
		return b.readsAll(t, into, e.X, e.Y)
	case *front.TernaryExpr:
		return b.readsAll(t, into, e.Cond, e.Then, e.Else)
	case *front.ListExpr:
		return b.readsAll(t, into, e.Elems...)
	case *front.StructExpr:
		for _, x := range e.Fields {
			if err := b.reads(x.Value, t, into); err != nil {
				return err
			}
		}
	case *front.CallExpr:
		return b.call(e, t, into)
	}
	return nil
}

func (b *graphBuilder) readsAll(t *Table, into fields, es ...front.Expr) error {
	for _, e := range es {
		if err := b.reads(e, t, into); err != nil {
			return err
		}
	}
	return nil
}

// writes adds the field an assignment's left side names to t's writes.
func (b *graphBuilder) writes(e front.Expr, t *Table) error {
	if f, ok := b.fieldOf(e); ok {
		t.writes.add(f)
	}
	if x, ok := e.(*front.IndexExpr); ok {
		return b.reads(x.Index, t, t.action)
	}
	return nil
}

// call adds what a call reads and writes.
func (b *graphBuilder) call(call *front.CallExpr, t *Table, into fields) error {
	switch call.Callee.(type) {
	case *front.ActionDecl, *front.FunctionDecl:
		return b.callEffects(call, t)
	case *front.TableDecl:
		return fmt.Errorf("%s: a table applied inside an expression is not modelled", call.P)
	}
	m, _ := call.Fun.(*front.MemberExpr)
	if m == nil {
		for _, a := range call.Args {
			if err := b.reads(a.Value, t, into); err != nil {
				return err
			}
		}
		return nil
	}
	switch call.Method {
	case "setValid", "setInvalid":
		if p, ok := b.fieldPath(m.X); ok {
			t.writes.add(field{p + ".$valid", 0, wholeField})
		}
		return nil
	case "isValid":
		if p, ok := b.fieldPath(m.X); ok {
			into.add(field{p + ".$valid", 0, wholeField})
		}
		return nil
	}
	b.hashDistUses(call, m, t)
	// An extern's method: its arguments (a hash's field list, an index) come through the
	// crossbar, and a register action's apply body reads the control's fields besides its
	// parameters the same way.
	for _, a := range call.Args {
		if err := b.reads(a.Value, t, t.match); err != nil {
			return err
		}
	}
	if inst := instanceOf(m.X); inst != nil && m.Name == "execute" {
		applyBodyReads(inst, func(e front.Expr) bool {
			f, ok := b.fieldOf(e)
			if ok {
				t.match.add(f)
			}
			return ok
		})
	}
	return nil
}

// varKey names a local variable (p4c gives every local a name of its own, and every inlined
// control instance its own locals).
func (b *graphBuilder) varKey(v *front.VarDecl) string {
	return fmt.Sprintf("%s%s@%d:%d", b.inst, v.Name, v.P.Line, v.P.Col)
}

// fieldPath names the field (or local variable, or parameter) e denotes: a slice is its field;
// a parameter of an applied control is the argument it was applied with.
func (b *graphBuilder) fieldPath(e front.Expr) (string, bool) {
	switch e := e.(type) {
	case *front.NameExpr:
		switch d := e.Decl.(type) {
		case *front.VarDecl:
			return b.varKey(d), true
		case *front.Param:
			if a, ok := b.alias[d]; ok {
				return a, true
			}
			return d.Name, true
		}
		return "", false
	case *front.MemberExpr:
		if e.Kind != front.MemberField {
			return "", false
		}
		p, ok := b.fieldPath(e.X)
		return p + "." + e.Name, ok
	case *front.SliceExpr:
		return b.fieldPath(e.X)
	case *front.IndexExpr:
		return b.fieldPath(e.X)
	}
	return "", false
}

// place adds t to the graph; the tables of its branches follow it.
func (b *graphBuilder) place(t *Table) {
	for k, rs := range t.writes {
		b.written[k] = append(b.written[k], rs...)
	}
	t.idx, t.end = len(b.g.Tables), len(b.g.Tables)+1
	b.g.Tables = append(b.g.Tables, t)
}

// stages finds the dependencies between the tables and computes their earliest stages and
// the critical path.
func (g *Graph) stages() {
	for i, t := range g.Tables {
		for _, u := range g.Tables[:i] {
			if exclusive(u, t) && !g.m.noExclusive {
				continue
			}
			e := edge{from: u}
			uw := u.writes
			if n := len(u.arms); u.armWrites != nil && n < len(t.arms) && t.arms[n].point == u.point && !g.m.noArmWrites {
				if w, ok := u.armWrites[t.arms[n].branch]; ok {
					uw = w // t runs after u's actions that lead to its branch
				}
			}
			switch {
			case overlaps(uw, t.match):
				e.kind, e.cost = DepMatch, 1
			case overlaps(uw, t.action) && !g.m.noActionRead:
				e.kind, e.cost = DepAction, 1
			case overlaps(uw, t.writes) && !g.m.noOutput:
				e.kind, e.cost = DepOutput, 1
			case overlaps(u.match, t.writes) || overlaps(u.action, t.writes):
				e.kind = DepAnti
			default:
				continue
			}
			t.in = append(t.in, e)
			// bf-p4c's add_logical_deps_from_control_deps: the tables of a sequence run in
			// order by next-table propagation, so the table of t's sequence that holds t goes
			// no earlier than the tables that run under u.
			if d := divergence(u, t); d != nil && d != t && !g.m.noNextTable {
				d.in = append(d.in, edge{from: u, kind: DepAnti, inject: true})
			}
		}
	}
	for _, t := range g.Tables {
		if t.ctl != nil {
			t.Stage, t.By, t.ByK = t.ctl.Stage, t.ctl, DepControl
		}
		for _, e := range t.in {
			s := e.from.Stage + e.cost
			if e.inject {
				for _, x := range g.Tables[e.from.idx:e.from.end] {
					s = max(s, x.Stage)
				}
			}
			if s > t.Stage || (s == t.Stage && t.By == nil) {
				t.Stage, t.By, t.ByK = s, e.from, e.kind
			}
		}
		g.Stages = max(g.Stages, t.Stage+1)
	}
}

// divergence returns the table of the sequence where u's and t's control paths part that t
// runs under (or t itself), or nil when one runs under the other or they part in different
// branches.
func divergence(u, t *Table) *Table {
	a, b := ancestry(u), ancestry(t)
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		if a[i].ctl != b[i].ctl || (len(a[i].arms) > 0 && a[i].arms[len(a[i].arms)-1] != b[i].arms[len(b[i].arms)-1]) {
			return nil
		}
		return b[i]
	}
	return nil
}

// ancestry is the tables t runs under, outermost first, and t.
func ancestry(t *Table) []*Table {
	var c []*Table
	for x := t; x != nil; x = x.ctl {
		c = append(c, x)
	}
	slices.Reverse(c)
	return c
}

// exclusive reports whether u and t are in different branches of one branching point.
func exclusive(u, t *Table) bool {
	for i := 0; i < len(u.arms) && i < len(t.arms); i++ {
		if u.arms[i].point != t.arms[i].point {
			return false
		}
		if u.arms[i].branch != t.arms[i].branch {
			return true
		}
	}
	return false
}

// wholeField is the high bit of a range that covers a whole field.
const wholeField = 1 << 30

// field is bits lo to hi of the field (or local variable, or parameter) at path.
type field struct {
	path   string
	lo, hi int
}

// fields is a set of fields: the bit ranges of each path.
type fields map[string][][2]int

func (fs fields) add(f field) { fs[f.path] = append(fs[f.path], [2]int{f.lo, f.hi}) }

// fieldOf returns the field e denotes: a slice is its bits of the field.
func (b *graphBuilder) fieldOf(e front.Expr) (field, bool) {
	if x, ok := e.(*front.SliceExpr); ok {
		f, ok := b.fieldOf(x.X)
		switch {
		case !ok || !b.m.bitSlices:
			return f, ok
		case f.hi == wholeField:
			return field{f.path, x.LoV, x.HiV}, true
		}
		return field{f.path, f.lo + x.LoV, f.lo + x.HiV}, true
	}
	p, ok := b.fieldPath(e)
	return field{p, 0, wholeField}, ok
}

// overlaps reports whether a field of w shares bits with, holds or is held by a field of r.
func overlaps(w, r fields) bool {
	if len(w) == 0 || len(r) == 0 {
		return false
	}
	for f, wr := range w {
		if rr, ok := r[f]; ok {
			for _, a := range wr {
				for _, b := range rr {
					if a[0] <= b[1] && b[0] <= a[1] {
						return true
					}
				}
			}
		}
		for p := f; ; {
			i := strings.LastIndexByte(p, '.')
			if i < 0 {
				break
			}
			if p = p[:i]; len(r[p]) > 0 {
				return true
			}
		}
		for g := range r {
			if len(g) > len(f) && strings.HasPrefix(g, f) && g[len(f)] == '.' {
				return true
			}
		}
	}
	return false
}
