package front

// This file holds two rules of p4c's Tofino backend (bf-p4c, p4c git 34b86e9) on what one
// table's actions share: the immediate data pathway, which carries the outputs of hash
// distribution, the random number generator and meter colors into the table's actions
// (mau/action_format.cpp), and the instruction memory of a stage, whose rows hold the actions'
// VLIW instructions (mau/instruction_memory.cpp).

import (
	"fmt"
	"sort"
	"strings"
)

// appliedTables calls f with each table cd's apply block applies, and the distinct actions the
// table lists (actions, default_action, entries), in the order it lists them. bf-p4c drops a
// table nothing applies.
func appliedTables(cd *ControlDecl, f func(t *TableDecl, actions []*ActionDecl)) {
	applied := map[*TableDecl]bool{}
	walkStmt(cd.Body, func(e Expr) {
		if call, ok := e.(*CallExpr); ok {
			if t, ok := call.Callee.(*TableDecl); ok {
				applied[t] = true
			}
		}
	})
	byTable := map[*TableDecl][]*ActionDecl{}
	seen := map[*TableDecl]map[*ActionDecl]bool{}
	tableActions(cd, func(t *TableDecl, r *ActionRef) {
		if seen[t] == nil {
			seen[t] = map[*ActionDecl]bool{}
		}
		if !seen[t][r.Action] {
			seen[t][r.Action] = true
			byTable[t] = append(byTable[t], r.Action)
		}
	})
	for _, l := range cd.Locals {
		if t, ok := l.(*TableDecl); ok && applied[t] {
			f(t, byTable[t])
		}
	}
}

// inlinedStmts calls f with the statements of a's body in order, the bodies of the actions it
// calls in place of their calls (nested statements after the statement that holds them, as
// walkStmts visits them), and with their actions (a first) before their statements.
func inlinedStmts(a *ActionDecl, f func(Stmt), actions func(*ActionDecl)) {
	var visit func(a *ActionDecl, depth int)
	visit = func(a *ActionDecl, depth int) {
		if a == nil || a.Body == nil || depth > 8 {
			return
		}
		if actions != nil {
			actions(a)
		}
		walkStmts(a.Body, func(s Stmt) {
			if cs, ok := s.(*CallStmt); ok {
				if inner, ok := cs.Call.Callee.(*ActionDecl); ok {
					visit(inner, depth+1)
					return
				}
			}
			f(s)
		})
	}
	visit(a, 0)
}

// immSource is one output that goes through a table's immediate pathway: a Hash's get, a
// Random's get or a meter's color.
type immSource struct {
	kind string // "hash", "random" or "meter"
	key  any    // the extern instance (its declaration, else its text)
	name string
	bits int
}

// immSources returns the immediate pathway's sources e reads: the gets of Hash and Random
// instances and the executes of meters (a color, 8 bits), not those in another extern's
// arguments (a register action's or a meter's index goes to the attached memory's address). A
// hash's output sliced or cast to fewer bits counts those bits (bf-p4c slices the hash
// function: BuildP4HashFunction, mau/ixbar_expr.cpp).
func immSources(e Expr) []immSource {
	var out []immSource
	var visit func(e Expr)
	visit = func(e Expr) {
		if e == nil {
			return
		}
		narrowed := 0
		switch x := e.(type) {
		case *SliceExpr:
			if isHashGet(x.X) {
				narrowed = x.HiV - x.LoV + 1
			}
		case *CastExpr:
			if isHashGet(x.X) && x.Type() != nil {
				narrowed = WidthOf(x.Type())
			}
		}
		if narrowed > 0 {
			n := len(out)
			visit(exprChildren(e)[0])
			if len(out) == n+1 && narrowed < out[n].bits {
				out[n].bits = narrowed
			}
			return
		}
		if call, ok := e.(*CallExpr); ok {
			if m, ok := call.Callee.(*MethodDecl); ok && m.Owner != nil {
				var key any
				name := ExprString(call.Fun)
				if me, ok := call.Fun.(*MemberExpr); ok {
					name = ExprString(me.X)
					key = name
					if n, ok := me.X.(*NameExpr); ok && n.Decl != nil {
						key = n.Decl
					}
				}
				bits := 0
				if t := call.Type(); t != nil {
					bits = WidthOf(t)
				}
				switch {
				case m.Owner.Name == "Hash" && m.Name == "get":
					out = append(out, immSource{"hash", key, name, bits})
				case m.Owner.Name == "Random" && m.Name == "get":
					out = append(out, immSource{"random", key, name, bits})
				case (m.Owner.Name == "Meter" || m.Owner.Name == "DirectMeter") && m.Name == "execute":
					out = append(out, immSource{"meter", key, name, 8})
				}
				return
			}
		}
		for _, x := range exprChildren(e) {
			visit(x)
		}
	}
	visit(e)
	return out
}

// actionImmediate is what action a (with the actions it calls) sends through its table's
// immediate pathway: the Hash instances it reads, with their outputs' bits, and the meters whose
// colors it reads (by instance), and the bits of its Random outputs. A hash's output that a
// later instruction of the action computes with beside a constant or another hash's output is
// left out: bf-p4c loads it in a $precompute table of its own (preloaded).
func actionImmediate(a *ActionDecl) (hashes map[any]immSource, meters map[any]immSource, random int) {
	hashes, meters = map[any]immSource{}, map[any]immSource{}
	hashOut := map[string]int{} // a hash's destination in the action: its bits
	destOf := map[string]any{}  // a hash's destination: the Hash instance
	gets, pre := map[any]int{}, map[any]int{}
	inlinedStmts(a, func(s Stmt) {
		var dest string
		var rhs Expr
		switch st := s.(type) {
		case *AssignStmt:
			dest, rhs = sliceBase(ExprString(st.LHS)), st.RHS
		case *DeclStmt:
			if v, ok := st.Decl.(*VarDecl); ok && v.Init != nil {
				dest, rhs = v.Name, v.Init
			}
		}
		if rhs == nil {
			return
		}
		if !isHashGet(rhs) {
			before := make([]string, 0, len(hashOut))
			for d := range hashOut {
				before = append(before, d)
			}
			if preloaded(rhs, hashOut) > 0 {
				for _, d := range before {
					if _, ok := hashOut[d]; !ok {
						pre[destOf[d]]++
					}
				}
			}
		}
		for _, src := range immSources(rhs) {
			switch src.kind {
			case "hash":
				gets[src.key]++
				if old, ok := hashes[src.key]; !ok || src.bits > old.bits {
					hashes[src.key] = src
				}
			case "random":
				random += src.bits
			case "meter":
				meters[src.key] = src
			}
		}
		if isHashGet(rhs) {
			hashOut[dest] = WidthOf(rhs.Type())
			if srcs := immSources(rhs); len(srcs) == 1 {
				destOf[dest] = srcs[0].key
			}
		}
	}, nil)
	for k := range hashes {
		if gets[k] <= pre[k] {
			delete(hashes, k)
		}
	}
	return hashes, meters, random
}

// tnaTableImmediateBits warns of a table, in the controls of an ingress or egress block and the
// controls they apply, whose actions together need more than the 32 bits of the immediate
// pathway (tnaImmediateMsg) for their Hash and Random outputs and meter colors, on Tofino 1 and
// 2. bf-p4c (mau/action_format.cpp, Format::analyze_actions, p4c 34b86e9) ORs those outputs into
// the immediate bits whichever action runs, so it packs the sections of all of a table's
// actions together ("locked_in_all_actions", condensed by Format::condense_action as one
// action's sections are) and refuses the table when they take more than Format::IMMEDIATE_BITS,
// 32 on every target. Sections overlap only where RamSection::condense finds the same data:
//
//   - a Hash's outputs overlap where they are the same hash function's bits
//     (P4HashFunction::overlap, mau/ixbar_expr.cpp): a TNA Hash.get is a dynamic hash named
//     after its extern instance (HashGenSetup::CreateHashGenExprs, mau/instruction_selection.cpp),
//     so the gets of one instance in two actions share its bits, and two instances never share,
//     whatever their algorithms and inputs: a table needs each instance's width once;
//   - Random outputs of different actions overlap (RandomNumber::overlap: the actions exclude
//     each other), not those of one action: a table needs its widest action's;
//   - a meter's colors overlap with that meter's only (MeterColor::overlap): 8 bits a meter.
//
// The count is the outputs' widths; the compiler's is the sections' sizes as laid out on
// containers after PHV allocation, never fewer (tnaImmediateBits), so a table over 32 here is
// over 32 there, unless a transformation takes a hash out of an action: the rule models one,
// the $precompute table (preloaded), and warns rather than refuses for the others it does not,
// as the per-action rule does; a per-table case has the same escape. A symmetric hash
// (@symmetric, not a dynamic hash in bf-p4c) would share with an instance of the same algorithm
// and inputs; it is counted as its own. Seen: bf-p4c 9.13.4 refused the branch decide's table
// decide (32 actions) on Tofino 2 with 112 bits, 2026-12-01, where no action alone took more
// than 32.
func (c *checker) tnaTableImmediateBits(b Block) {
	if b.Control == nil {
		return
	}
	for _, cd := range appliedControls(b.Control) {
		appliedTables(cd, func(t *TableDecl, actions []*ActionDecl) {
			hashes, meters := map[any]immSource{}, map[any]immSource{}
			random, randomAction := 0, ""
			for _, a := range actions {
				h, m, r := actionImmediate(a)
				for k, src := range h {
					if old, ok := hashes[k]; !ok || src.bits > old.bits {
						hashes[k] = src
					}
				}
				for k, src := range m {
					meters[k] = src
				}
				if r > random {
					random, randomAction = r, a.Name
				}
			}
			total := random
			var parts []string
			for _, src := range hashes {
				total += src.bits
				parts = append(parts, fmt.Sprintf("hash %s %d", src.name, src.bits))
			}
			for _, src := range meters {
				total += src.bits
				parts = append(parts, fmt.Sprintf("meter %s's color %d", src.name, src.bits))
			}
			sort.Strings(parts)
			if random > 0 {
				parts = append(parts, fmt.Sprintf("random numbers %d (action %s)", random, randomAction))
			}
			if total > 32 {
				c.warnf(t.P, "likely refused by bf-p4c: in table %s, "+tnaImmediateMsg+" (bits: %s; the outputs of all the table's actions are ORed into its immediate bits: a hash's gets share its bits, two hashes do not)",
					t.Name, total, strings.Join(parts, ", "))
			}
		})
	}
}

// tnaIMemMsg is bf-p4c's reason for a table the instruction memory of a stage cannot hold
// (mau/table_placement.cpp, TablePlacement::try_alloc_imem: "The table t could not fit within
// the instruction memory", reported as "Could not place table t: ..." when no stage holds it).
const tnaIMemMsg = "could not fit within the instruction memory"

// tnaIMemRows, tnaIMemColors: a stage's instruction memory per gress, on Tofino 1 and 2
// (TofinoIMemSpec, specs/mau_spec.cpp; JBayMauSpec uses it too).
const (
	tnaIMemRows   = 32
	tnaIMemColors = 2
)

// tnaIMemWrite is a write of an action: a field (by its text) and the bits written.
type tnaIMemWrite struct {
	key    string
	lo, hi int
}

// actionPHVWrites returns the writes of action a (with the actions it calls) to fields,
// headers' validity and the control's variables: what needs a VLIW instruction on the
// containers holding them. Writes to the action's parameters and local variables are left out.
func actionPHVWrites(a *ActionDecl) []tnaIMemWrite {
	locals := map[Decl]bool{} // the actions' parameters and local variables
	inlinedStmts(a, func(s Stmt) {
		if ds, ok := s.(*DeclStmt); ok {
			locals[ds.Decl] = true
		}
	}, func(a *ActionDecl) {
		for _, p := range a.Params {
			locals[p] = true
		}
	})
	// root is the declaration a location's text starts with (md in md.idx[3:0]).
	var root func(e Expr) Decl
	root = func(e Expr) Decl {
		switch x := e.(type) {
		case *NameExpr:
			return x.Decl
		case *MemberExpr:
			return root(x.X)
		case *IndexExpr:
			return root(x.X)
		case *SliceExpr:
			return root(x.X)
		}
		return nil
	}
	var out []tnaIMemWrite
	inlinedStmts(a, func(s Stmt) {
		switch st := s.(type) {
		case *AssignStmt:
			if d := root(st.LHS); d == nil || locals[d] {
				return
			}
			target, lo, hi := st.LHS, -1, -1
			if sl, ok := target.(*SliceExpr); ok {
				target, lo, hi = sl.X, sl.LoV, sl.HiV
			}
			if lo < 0 {
				w := WidthOf(target.Type())
				if w < 1 {
					w = 1
				}
				lo, hi = 0, w-1
			}
			out = append(out, tnaIMemWrite{ExprString(target), lo, hi})
		case *CallStmt:
			if st.Call.Method != "setValid" && st.Call.Method != "setInvalid" {
				return
			}
			if me, ok := st.Call.Fun.(*MemberExpr); ok {
				if d := root(me.X); d != nil && !locals[d] {
					out = append(out, tnaIMemWrite{ExprString(me.X) + ".$valid", 0, 0})
				}
			}
		}
	}, nil)
	return out
}

// tnaInstructionMemory refuses or warns of a table, in the controls of an ingress or egress
// block and the controls they apply, whose actions one stage's instruction memory cannot hold.
// bf-p4c (mau/instruction_memory.h and .cpp, InstructionMemory::allocate_imem and
// find_row_and_color, p4c 34b86e9) gives each action of a table a slot of its own, a row and a
// color, in the stage's instruction memory of its gress: 32 rows of 2 colors on Tofino 1 and 2
// (tnaIMemRows, tnaIMemColors). Two actions share a row only if they write no container in
// common (a row's colors are ORed per ALU); row 0's color 0 is the noop slot, which the first
// action of a table that writes no container takes (every table's: bf-p4c shares it; later ones
// take slots of their own); on Tofino 2 address 63, row 31's color 1, is the always-run action's
// (JBayDevice::getAlwaysRunIMemAddr, specs/device.h). The stage's other tables of the gress take
// slots too, but a table alone needs:
//
//   - a row of its own for each action that writes a bit of a field another writes (the same
//     container whatever the PHV allocation): more than 32 such actions is an error on both
//     targets (row 0's color 1 takes one);
//   - a slot for each action but one that writes nothing: more than 63 (Tofino 1) or 62
//     (Tofino 2) is an error;
//   - more than 32 slots fit only if its actions pair up into rows by writing disjoint
//     containers, which the PHV allocation decides: a warning. On Tofino 2 bf-p4c 9.13.4 may
//     crash there instead of refusing ("Compiler Bug: Unreachable section of the instruction
//     memory allocation"): find_row_and_color scans the rows in order, and one whose only free
//     slot is the always-run address ends the scan with a BUG.
//
// What the stage's other tables take is not known here, so the rule stops at what one table
// cannot hold alone; the compiler moves a table that does not fit beside others to a later
// stage, except that on Tofino 2 the scan above crashes when it reaches row 31 with its color 0
// taken: bf-p4c 9.13.4 crashed so on the branch decide's table decide (32 actions, eleven of
// which write nothing: 31 slots, which cannot reach row 31 alone, so the other tables of its
// stage had taken rows), 2026-12-01, which this rule does not foresee. The first action writing nothing is taken to
// take the noop slot (bf-p4c: one whose VLIW is empty, unless it writes a temporary not yet
// allocated), and only writes to the same field bits count as conflicts (fields sharing a
// container conflict too): both make the count a lower bound. Actions listed by several tables
// (an action profile's) are counted in each.
func (c *checker) tnaInstructionMemory(b Block) {
	if b.Control == nil {
		return
	}
	slots := tnaIMemRows*tnaIMemColors - 1 // the noop slot apart
	target := "Tofino 1"
	if c.out.TofinoGeneration() == 2 {
		slots-- // the always-run address
		target = "Tofino 2"
	}
	for _, cd := range appliedControls(b.Control) {
		appliedTables(cd, func(t *TableDecl, actions []*ActionDecl) {
			empty := 0
			bits := map[string][]int{} // a field's bits: how many actions write each
			for _, a := range actions {
				ws := actionPHVWrites(a)
				if len(ws) == 0 {
					empty++
					continue
				}
				mine := map[string]map[int]bool{}
				for _, w := range ws {
					if mine[w.key] == nil {
						mine[w.key] = map[int]bool{}
					}
					for i := w.lo; i <= w.hi; i++ {
						mine[w.key][i] = true
					}
				}
				for k, set := range mine {
					for i := range set {
						for len(bits[k]) <= i {
							bits[k] = append(bits[k], 0)
						}
						bits[k][i]++
					}
				}
			}
			most, field := 0, ""
			keys := make([]string, 0, len(bits))
			for k := range bits {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				for i, n := range bits[k] {
					if n > most {
						most, field = n, k
						if len(bits[k]) > 1 {
							field = fmt.Sprintf("%s (bit %d)", k, i)
						}
					}
				}
			}
			need := len(actions)
			if empty > 0 {
				need-- // the noop slot
			}
			switch {
			case most > tnaIMemRows:
				c.errorf(t.P, "table %s %s: %d of its actions write %s, and a stage's instruction memory holds them in %d rows, one each (two actions share a row only if they write no container in common)",
					t.Name, tnaIMemMsg, most, field, tnaIMemRows)
			case need > slots:
				c.errorf(t.P, "table %s %s: its %d actions need %d instruction slots (one that writes nothing takes the noop slot), and a stage has %d on %s",
					t.Name, tnaIMemMsg, len(actions), need, slots, target)
			case need > tnaIMemRows:
				c.warnf(t.P, "table %s may not fit within the instruction memory: its %d actions need %d instruction slots (one that writes nothing takes the noop slot), more than a stage's %d rows, so they fit only where two of them write no container in common (the PHV allocation decides); on Tofino 2 bf-p4c 9.13.4 may crash instead (\"Compiler Bug: Unreachable section of the instruction memory allocation\")",
					t.Name, len(actions), need, tnaIMemRows)
			}
		})
	}
}
