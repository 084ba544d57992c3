package front

import (
	"math/big"
	"strings"
)

// This file holds what p4c's bmv2 backend (p4c-bm2-ss) refuses in a v1model program that the
// front end accepts: the rules of the bmv2 JSON format rather than of the language. A switch
// that runs a program as bmv2's simple_switch would (the engine) refuses the same programs,
// with p4c's reason.
//
// The table rule. The bmv2 JSON gives each table one fixed set of successors (the next node
// for each action, or for hit and miss), so p4c builds the control flow graph of each control
// (backends/bmv2/common/controlFlowGraph.cpp, CFG::checkImplementable) and refuses
//
//   - a path from a table back to itself ("Program can not be implemented on this target since
//     it contains a path from table T back to itself"), and
//   - a table applied at several places whose applications do not all lead to the same nodes
//     ("Program is not supported by this target, because table T has multiple successors").
//
// p4c builds that graph after its front and mid end, so the graph here is built from the
// source the way those passes reshape it, as far as they bear on the two rules:
//
//   - nodes are made in p4c's order (the control's entry, its exit, then every node in
//     preorder of the body) and p4c's depth-first search is run over them in that order, with
//     its visited set: which of the two errors is reported, and for which table, follows it;
//   - every maximal run of statements of one block that are not control flow (assignments,
//     extern and function calls, exit, declarations with an initializer) is one node, a table
//     of its own (p4c's SynthesizeActions and MoveActionsToTables), and so is every action
//     called from the body (one table per call); an exit does not end a path (p4c moves it
//     into such an action);
//   - if (t.apply().hit), if (!t.apply().hit) and .miss make the table the branch node; an
//     application anywhere else in an expression is hoisted before the statement as the table
//     with one node for each outcome (SideEffectOrdering, TableHit);
//   - switch on t.apply().action_run makes the table the node with an edge to each case and
//     one to what follows; a switch on a value is a table of its own (EliminateSwitch);
//   - nested blocks are flattened, an if whose branches are both empty and whose condition
//     applies nothing disappears, and an if on a constant keeps its taken branch only
//     (SimplifyControlFlow, ConstantFolding);
//   - the statements after an if one of whose branches ends in an exit or a return move into
//     the other branch (MoveToElseAfterBranch); then a return ends the statements after it in its
//     block, or, when it may or may not have run, puts them under a new branch node
//     (RemoveReturns), and its flag's assignments make nodes only when such a branch reads the
//     flag (SimplifyDefUse removes them otherwise);
//   - a control instance's apply is inlined, its tables named under the instance (Inline): an
//     instance applied twice applies each of its tables twice.
//
// What the model does not follow: statements p4c removes as dead (SimplifyDefUse: an
// assignment never read) and conditions that only become constant after its mid end
// (LocalCopyPropagation); either can join two successors p4c sees as one. TestRealBMv2Rules
// (bmv2/front) compares the model with p4c-bm2-ss on every program of the tests.
//
// The division rule. bmv2 has no division or modulo: p4c-bm2-ss's mid end
// (midend/compileTimeOps.h, CompileTimeOperations) refuses every / and % left after constant
// folding and strength reduction ("x / 7: could not evaluate expression at compilation time"),
// which turn a division by 1 or by a power of two into the value or a shift, a modulo by a power
// of two into a mask, and 0 / x and 0 % x into 0. Divisors made constant only by the mid end's
// copy propagation, and divisions in assignments its dead-code elimination removes, are not
// followed: the rule then refuses what p4c compiles.

// CheckBMv2 returns what p4c-bm2-ss refuses in the v1model program c (nil when it would
// compile, as far as the rules above go): the division rule's first offence alone (p4c's mid
// end stops the compilation before the backend), else the table rule for the ingress and egress
// controls, one error per control at most (p4c stops at its first), positioned at the table's
// declaration. Programs of other architectures have no bmv2 rules: nil.
func (c *Checked) CheckBMv2() ErrorList {
	if c.Arch() != ArchV1Model {
		return nil
	}
	v1, err := c.V1Switch()
	if err != nil {
		return nil // the engine reports it
	}
	var errs ErrorList
	if e := c.runtimeDivision(v1); e != nil {
		return ErrorList{e} // p4c's mid end stops before its backend builds the graph
	}
	for _, b := range []Block{v1.Ingress, v1.Egress} {
		if b.Control == nil {
			continue
		}
		g := newBMv2CFG(c)
		g.build(b.Control, cpName("", b.Control.Annos, b.Control.Name))
		if e := g.checkImplementable(); e != nil {
			errs = append(errs, e)
		}
	}
	return errs
}

// cfgTable is a table of the graph: one of the program's (decl, under the control-plane name
// name) or one p4c synthesizes (decl nil, name "").
type cfgTable struct {
	decl *TableDecl
	name string
}

// cfgNode is a node of the graph: a table application (tab set), a branch, the entry or the
// exit. succ lists the endpoints of its outgoing edges, one per edge, in p4c's order.
type cfgNode struct {
	tab   *cfgTable
	preds []*cfgNode // the sources of the incoming edges, one per edge
	succ  []*cfgNode
}

type bmv2CFG struct {
	c      *Checked
	nodes  []*cfgNode // in creation order
	tables map[cfgTableKey]*cfgTable
	order  []*cfgTable // the program's tables, first application first
	entry  *cfgNode
	exit   *cfgNode
	// deadReturn: the control being built has no read of DoRemoveReturns's flag (body).
	deadReturn bool
}

type cfgTableKey struct {
	decl   *TableDecl
	prefix string
}

func newBMv2CFG(c *Checked) *bmv2CFG {
	return &bmv2CFG{c: c, tables: map[cfgTableKey]*cfgTable{}}
}

func (g *bmv2CFG) node(t *cfgTable) *cfgNode {
	n := &cfgNode{tab: t}
	g.nodes = append(g.nodes, n)
	return n
}

// synth makes a node for a table p4c synthesizes.
func (g *bmv2CFG) synth() *cfgNode { return g.node(&cfgTable{}) }

func (g *bmv2CFG) table(d *TableDecl, prefix string) *cfgTable {
	k := cfgTableKey{d, prefix}
	if t, ok := g.tables[k]; ok {
		return t
	}
	t := &cfgTable{decl: d, name: cpName(prefix, d.Annos, d.Name)}
	g.tables[k] = t
	g.order = append(g.order, t)
	return t
}

// live is the set of edges that reach the next node: their sources.
type live []*cfgNode

func (n *cfgNode) addPreds(l live) { n.preds = append(n.preds, l...) }

func (g *bmv2CFG) build(d *ControlDecl, prefix string) {
	g.entry = g.node(nil)
	g.exit = g.node(nil)
	l := g.body(d.Body, prefix, live{g.entry})
	g.exit.addPreds(l)
	for _, n := range g.nodes {
		for _, p := range n.preds {
			p.succ = append(p.succ, n)
		}
	}
}

// body is a control's apply block after RemoveReturns: when it returns somewhere, the flag's
// initialization comes first.
func (g *bmv2CFG) body(b *BlockStmt, prefix string, l live) live {
	if b == nil {
		return l
	}
	ss, _ := moveToElse(b.Stmts)
	// DoRemoveReturns's flag (hasReturned = false, then = true at each return) is read only by
	// the guards it puts after a statement that may or may not return; without one, p4c's
	// SimplifyDefUse removes its assignments, which then make no node.
	saved := g.deadReturn
	g.deadReturn = !returnGuarded(ss)
	defer func() { g.deadReturn = saved }()
	if hasReturn(b) && !g.deadReturn {
		n := g.synth()
		n.addPreds(l)
		l = live{n}
	}
	return g.stmts(ss, prefix, l)
}

// stmtList is the flattened statements of a branch (nil for none).
func stmtList(s Stmt) []Stmt {
	switch s := s.(type) {
	case nil:
		return nil
	case *BlockStmt:
		return flatten(s.Stmts)
	}
	return []Stmt{s}
}

// moveToElse rewrites a block as p4c's front end does before it removes returns
// (frontends/p4/removeReturns.h, MoveToElseAfterBranch): the statements after an if one of whose
// branches ends in an exit or a return move into the other branch. It returns the statements
// (new if statements where it moved some; the program's own are not changed) and whether the
// point after them is unreachable, as p4c's hasJumped.
func moveToElse(list []Stmt) (out []Stmt, jumped bool) {
	ss := flatten(list)
	for i := 0; i < len(ss); i++ {
		switch s := ss[i].(type) {
		case *ExitStmt, *ReturnStmt:
			out = append(out, s)
			jumped = true
		case *IfStmt:
			rest := ss[i+1:]
			thenS, jt := moveToElse(stmtList(s.Then))
			elseS := stmtList(s.Else)
			moved := false
			if jt && len(rest) > 0 {
				elseS = append(append([]Stmt(nil), elseS...), rest...)
				moved = true
			}
			elseS, je := moveToElse(elseS)
			if je && !jt && len(rest) > 0 {
				thenS, _ = moveToElse(append(append([]Stmt(nil), thenS...), rest...))
				moved = true
			}
			jumped = je && jt
			ns := &IfStmt{P: s.P, Cond: s.Cond, Then: &BlockStmt{P: s.P, Stmts: thenS}}
			if s.Else != nil || len(elseS) > 0 {
				ns.Else = &BlockStmt{P: s.P, Stmts: elseS}
			}
			out = append(out, ns)
			if moved {
				return out, jumped
			}
		case *SwitchStmt:
			ns := *s
			ns.Cases = nil
			fall := false
			for _, c := range s.Cases {
				nc := *c
				if c.Body != nil {
					body, j := moveToElse(c.Body.Stmts)
					nc.Body = &BlockStmt{P: c.Body.P, Stmts: body}
					fall = fall || !j
				} else {
					fall = true
				}
				ns.Cases = append(ns.Cases, &nc)
			}
			out = append(out, &ns)
			jumped = !fall
		default:
			out = append(out, s)
		}
	}
	return out, jumped
}

// returnGuarded reports whether DoRemoveReturns guards some statements of ss with its flag:
// statements that follow, in one block, a statement that may or may not return.
func returnGuarded(ss []Stmt) bool {
	for i, s := range ss {
		if returns(s) == retMaybe && i+1 < len(ss) {
			return true
		}
		switch s := s.(type) {
		case *IfStmt:
			if returnGuarded(stmtList(s.Then)) || returnGuarded(stmtList(s.Else)) {
				return true
			}
		case *SwitchStmt:
			for _, c := range s.Cases {
				if c.Body != nil && returnGuarded(c.Body.Stmts) {
					return true
				}
			}
		}
	}
	return false
}

// flatten inlines nested blocks (SimplifyControlFlow).
func flatten(ss []Stmt) []Stmt {
	var out []Stmt
	for _, s := range ss {
		if b, ok := s.(*BlockStmt); ok {
			out = append(out, flatten(b.Stmts)...)
			continue
		}
		out = append(out, s)
	}
	return out
}

// retState says whether a statement returns: never, maybe, or always.
type retState uint8

const (
	retNo retState = iota
	retMaybe
	retYes
)

func hasReturn(s Stmt) bool {
	found := false
	var walk func(Stmt)
	walk = func(s Stmt) {
		switch s := s.(type) {
		case *ReturnStmt:
			found = true
		case *BlockStmt:
			for _, x := range s.Stmts {
				walk(x)
			}
		case *IfStmt:
			walk(s.Then)
			if s.Else != nil {
				walk(s.Else)
			}
		case *SwitchStmt:
			for _, c := range s.Cases {
				if c.Body != nil {
					walk(c.Body)
				}
			}
		}
	}
	walk(s)
	return found
}

func returns(s Stmt) retState {
	switch s := s.(type) {
	case *ReturnStmt:
		return retYes
	case *BlockStmt:
		st := retNo
		for _, x := range s.Stmts {
			switch returns(x) {
			case retYes:
				return retYes
			case retMaybe:
				st = retMaybe
			}
		}
		return st
	case *IfStmt:
		a, b := returns(s.Then), retNo
		if s.Else != nil {
			b = returns(s.Else)
		}
		if a == retYes && b == retYes {
			return retYes
		}
		if a != retNo || b != retNo {
			return retMaybe
		}
	case *SwitchStmt:
		if hasReturn(s) {
			return retMaybe
		}
	}
	return retNo
}

// stmts adds the nodes of a flattened statement list.
func (g *bmv2CFG) stmts(ss []Stmt, prefix string, l live) live {
	var run *cfgNode // the open run of plain statements
	plain := func() {
		if run == nil {
			run = g.synth()
			run.addPreds(l)
			l = live{run}
		}
	}
	for i, s := range ss {
		switch s := s.(type) {
		case *EmptyStmt:
			continue
		case *DeclStmt:
			if v, ok := s.Decl.(*VarDecl); ok && (v.Init != nil || containsHeader(v.T)) {
				l = g.hoist(v.Init, prefix, l, &run)
				plain()
			}
			continue
		case *AssignStmt:
			l = g.hoist(s.RHS, prefix, g.hoist(s.LHS, prefix, l, &run), &run)
			plain()
		case *ExitStmt:
			plain()
		case *ReturnStmt:
			if !g.deadReturn {
				plain() // hasReturned = true
			}
			return l
		case *CallStmt:
			l = g.call(s.Call, prefix, l, &run, plain)
		default:
			run = nil
			l = g.control(s, prefix, l)
		}
		if st := returns(s); st == retYes {
			return l
		} else if st == retMaybe && i+1 < len(ss) {
			// if (!hasReturned) { the rest }
			n := g.node(nil)
			n.addPreds(l)
			rest := g.stmts(ss[i+1:], prefix, live{n})
			return append(rest, n)
		}
	}
	return l
}

// call adds a call statement: a table or control application, an action (a table of its own),
// or an extern or function call (part of the run).
func (g *bmv2CFG) call(e *CallExpr, prefix string, l live, run **cfgNode, plain func()) live {
	switch d := e.Callee.(type) {
	case *TableDecl:
		if e.Method == "apply" {
			l = g.hoistArgs(e, prefix, l, run)
			*run = nil
			n := g.node(g.table(d, prefix))
			n.addPreds(l)
			return live{n}
		}
	case *ControlDecl:
		l = g.hoistArgs(e, prefix, l, run)
		*run = nil
		inst := controlInstance(e)
		if inst == nil {
			return l
		}
		return g.body(d.Body, cpName(prefix, inst.Annos, inst.Name), l)
	case *ActionDecl:
		l = g.hoistArgs(e, prefix, l, run)
		*run = nil
		n := g.synth()
		n.addPreds(l)
		return live{n}
	}
	l = g.hoistArgs(e, prefix, l, run)
	plain()
	return l
}

// controlInstance is the instance a control's apply is called on.
func controlInstance(e *CallExpr) *InstanceDecl {
	if m, ok := e.Fun.(*MemberExpr); ok {
		if n, ok := m.X.(*NameExpr); ok {
			if inst, ok := n.Decl.(*InstanceDecl); ok {
				return inst
			}
		}
	}
	return nil
}

func (g *bmv2CFG) hoistArgs(e *CallExpr, prefix string, l live, run **cfgNode) live {
	for _, a := range e.Args {
		l = g.hoist(a.Value, prefix, l, run)
	}
	return l
}

// tableApply returns the table applied by e (t.apply()), or nil.
func tableApply(e Expr) *TableDecl {
	if call, ok := e.(*CallExpr); ok && call.Method == "apply" {
		if t, ok := call.Callee.(*TableDecl); ok {
			return t
		}
	}
	return nil
}

// hitCondition recognizes t.apply().hit (true), !t.apply().hit and t.apply().miss (false).
func hitCondition(e Expr) (*TableDecl, bool) {
	neg := false
	if u, ok := e.(*UnaryExpr); ok && u.Op == "!" {
		e, neg = u.X, true
	}
	m, ok := e.(*MemberExpr)
	if !ok || (m.Name != "hit" && m.Name != "miss") {
		return nil, false
	}
	t := tableApply(m.X)
	if t == nil {
		return nil, false
	}
	return t, (m.Name == "hit") != neg
}

// hoist adds, before the statement that holds e, every table applied inside e, in evaluation
// order: the table, then a node for each outcome (tmp = true, tmp = false).
func (g *bmv2CFG) hoist(e Expr, prefix string, l live, run **cfgNode) live {
	if e == nil {
		return l
	}
	var applies []*TableDecl
	walkExpr(e, func(x Expr) {
		if t := tableApply(x); t != nil {
			applies = append(applies, t)
		}
	})
	// walkExpr visits outer expressions first; inner applications run first.
	for i := len(applies) - 1; i >= 0; i-- {
		*run = nil
		n := g.node(g.table(applies[i], prefix))
		n.addPreds(l)
		a, b := g.synth(), g.synth()
		a.addPreds(live{n})
		b.addPreds(live{n})
		l = live{a, b}
	}
	return l
}

// control adds an if or a switch.
func (g *bmv2CFG) control(s Stmt, prefix string, l live) live {
	switch s := s.(type) {
	case *IfStmt:
		if v, ok := g.c.Const[s.Cond].(bool); ok {
			taken := s.Then
			if !v {
				taken = s.Else
			}
			if taken == nil {
				return l
			}
			return g.stmts(flatten([]Stmt{taken}), prefix, l)
		}
		thenS, elseS := branchStmts(s.Then), branchStmts(s.Else)
		t, _ := hitCondition(s.Cond)
		if t == nil {
			var run *cfgNode
			l = g.hoist(s.Cond, prefix, l, &run)
			if len(thenS) == 0 && len(elseS) == 0 && !hasCall(s.Cond) {
				return l
			}
		}
		var n *cfgNode
		if t != nil {
			n = g.node(g.table(t, prefix))
		} else {
			n = g.node(nil)
		}
		n.addPreds(l)
		out := g.stmts(thenS, prefix, live{n})
		if s.Else != nil {
			out = append(out, g.stmts(elseS, prefix, live{n})...)
		} else {
			out = append(out, n)
		}
		return out
	case *SwitchStmt:
		var n *cfgNode
		if t := actionRunTable(s); t != nil {
			n = g.node(g.table(t, prefix))
		} else {
			var run *cfgNode
			l = g.hoist(s.Expr, prefix, l, &run)
			n = g.synth() // EliminateSwitch's table
		}
		n.addPreds(l)
		out := live{n} // no label matches
		labels := live{}
		for _, cs := range s.Cases {
			labels = append(labels, n)
			if cs.Body != nil {
				out = append(out, g.stmts(flatten(cs.Body.Stmts), prefix, labels)...)
				labels = live{}
			}
		}
		return out
	}
	return l
}

func branchStmts(s Stmt) []Stmt {
	if s == nil {
		return nil
	}
	var out []Stmt
	for _, x := range flatten([]Stmt{s}) {
		if _, ok := x.(*EmptyStmt); !ok {
			out = append(out, x)
		}
	}
	return out
}

func hasCall(e Expr) bool {
	found := false
	walkExpr(e, func(x Expr) {
		if _, ok := x.(*CallExpr); ok {
			found = true
		}
	})
	return found
}

func actionRunTable(s *SwitchStmt) *TableDecl {
	if !s.OnActionRun {
		return nil
	}
	if m, ok := s.Expr.(*MemberExpr); ok && m.Name == "action_run" {
		return tableApply(m.X)
	}
	return nil
}

// containsHeader reports whether a local of type t needs statements to initialize it (p4c's
// ResetHeaders marks the headers of a local invalid).
func containsHeader(t Type) bool {
	switch t := underlying(t).(type) {
	case *StructType:
		if t.Decl.Kind != "struct" {
			return true
		}
		for _, f := range t.Fields {
			if containsHeader(f.T) {
				return true
			}
		}
	case *StackType:
		return true
	}
	return false
}

// checkImplementable is p4c's CFG::checkImplementable.
func (g *bmv2CFG) checkImplementable() *Error {
	visited := map[*cfgNode]bool{}
	stack := map[*cfgTable]bool{}
	for _, n := range g.nodes {
		if bad := g.dfs(n, visited, stack); bad != nil {
			return errorf(bad.decl.P, "Program can not be implemented on this target since it contains a path from table %s back to itself", bad.name)
		}
	}
	byTable := map[*cfgTable][]*cfgNode{}
	for _, n := range g.nodes {
		if n.tab != nil && n.tab.decl != nil {
			byTable[n.tab] = append(byTable[n.tab], n)
		}
	}
	for _, t := range g.order {
		ns := byTable[t]
		for _, n := range ns[1:] {
			if !sameDestinations(ns[0].succ, n.succ) {
				return errorf(t.decl.P, "Program is not supported by this target, because table %s has multiple successors", t.name)
			}
		}
	}
	return nil
}

// dfs is p4c's CFG::dfs; it returns the table found on a path back to itself.
func (g *bmv2CFG) dfs(n *cfgNode, visited map[*cfgNode]bool, stack map[*cfgTable]bool) *cfgTable {
	t := n.tab
	if t != nil && stack[t] {
		return t
	}
	if visited[n] {
		return nil
	}
	if t != nil {
		stack[t] = true
	}
	for _, s := range n.succ {
		if bad := g.dfs(s, visited, stack); bad != nil {
			return bad
		}
	}
	if t != nil {
		delete(stack, t)
	}
	visited[n] = true
	return nil
}

// sameDestinations is p4c's EdgeSet::checkSame: as many edges, and every endpoint of each set
// is an endpoint of the other (the same node, or a node of the same table).
func sameDestinations(a, b []*cfgNode) bool {
	if len(a) != len(b) {
		return false
	}
	isDest := func(set []*cfgNode, n *cfgNode) bool {
		for _, m := range set {
			if m == n || m.tab != nil && m.tab == n.tab {
				return true
			}
		}
		return false
	}
	for _, n := range a {
		if !isDest(b, n) {
			return false
		}
	}
	for _, n := range b {
		if !isDest(a, n) {
			return false
		}
	}
	return true
}

// runtimeDivision returns the first / or % in the code the program's blocks run (their bodies,
// the actions, tables and functions they use, the controls and parsers they instantiate) that
// p4c's bmv2 mid end cannot evaluate at compile time, or nil.
func (c *Checked) runtimeDivision(v1 *V1Switch) *Error {
	seen := map[Decl]bool{}
	var found *Error
	var visit func(d Decl)
	check := func(e Expr) {
		switch x := e.(type) {
		case *BinaryExpr:
			if (x.Op == "/" || x.Op == "%") && !c.divisionFolds(x) {
				// p4c reports every one; the first in the source is the one reported here.
				if p := x.Position(); found == nil || p.File == found.Pos.File && (p.Line < found.Pos.Line || p.Line == found.Pos.Line && p.Col < found.Pos.Col) {
					es := ExprString(x)
					if strings.HasPrefix(es, "(") && strings.HasSuffix(es, ")") {
						es = es[1 : len(es)-1] // p4c prints the outermost operation bare
					}
					found = errorf(p, "%s: could not evaluate expression at compilation time", es)
				}
			}
		case *CallExpr:
			if f, ok := x.Callee.(*FunctionDecl); ok {
				visit(f)
			}
		}
	}
	visit = func(d Decl) {
		if d == nil || seen[d] {
			return
		}
		seen[d] = true
		switch d := d.(type) {
		case *ControlDecl:
			for u := range controlUsage(d) {
				switch u := u.(type) {
				case *InstanceDecl:
					visit(instanceBlock(u))
				default:
					if u != Decl(d) {
						visit(u)
					}
				}
			}
			walkStmt(d.Body, check)
		case *ParserDecl:
			inspectDecl(d, check)
			for _, l := range d.Locals {
				if inst, ok := l.(*InstanceDecl); ok {
					visit(instanceBlock(inst))
				}
			}
		case *ActionDecl, *FunctionDecl, *TableDecl, *VarDecl, *ConstDecl:
			inspectDecl(d, check)
		}
	}
	for _, b := range []Block{v1.Parser, v1.VerifyChecksum, v1.Ingress, v1.Egress, v1.ComputeChecksum, v1.Deparser} {
		if b.Parser != nil {
			visit(b.Parser)
		}
		if b.Control != nil {
			visit(b.Control)
		}
	}
	return found
}

// instanceBlock is the control or parser an instance declaration instantiates, or nil.
func instanceBlock(inst *InstanceDecl) Decl {
	switch t := inst.T.(type) {
	case *ControlType:
		return t.Decl
	case *ParserType:
		return t.Decl
	}
	return nil
}

// divisionFolds reports whether p4c's constant folding or strength reduction removes the
// division or modulo x: a constant value, a divisor of 1 (division) or a power of two, or a
// dividend of 0.
func (c *Checked) divisionFolds(x *BinaryExpr) bool {
	if _, ok := c.Const[x]; ok {
		return true
	}
	if l, ok := c.Const[x.X].(*big.Int); ok && l.Sign() == 0 {
		return true
	}
	r, ok := c.Const[x.Y].(*big.Int)
	if !ok || r.Sign() <= 0 {
		return false
	}
	return x.Op == "/" && r.Cmp(big.NewInt(1)) == 0 || new(big.Int).And(r, new(big.Int).Sub(r, big.NewInt(1))).Sign() == 0
}
