package front

import (
	"fmt"
	"math/big"
	"strings"
)

// This file holds bf-p4c's rule on a field that a parser writes more than once on one path
// (parde/check_parser_multi_write.cpp, InferWriteMode::infer_write_mode, p4c git 34b86e9): a
// parser writes a container by extracting into it, and a second write on the same path either
// ORs into what is there (bitwise-or mode) or, on Tofino 2 only, clears it first
// (clear-on-write mode). The compiler picks a mode per field from the field's writes:
//
//   - a first write of the constant 0 (no write before it) is dropped (the container starts at
//     zero), and of several writes in one state only the last counts, unless some write ORs
//     (x = x | e, x = e || x) or one is a checksum verify (never dropped);
//   - if no path holds two of the remaining writes, the field is written once: accepted;
//   - if every later write ORs, or could be ORed without clearing a bit (a constant that keeps
//     the earlier constant's bits, a constant of all ones, anything after a constant 0), the
//     field is in bitwise-or mode: accepted;
//   - otherwise a later write that ORs next to one that overwrites is refused on Tofino 1 and 2
//     ("Inconsistent parser write semantic");
//   - otherwise Tofino 2 clears on write, and refuses only a checksum verify assigned that way
//     ("Using checksum verify in direct assignment ..."); Tofino 1 cannot clear and refuses the
//     re-assignment when the earlier write's state is postdominated by the field's writes (every
//     path from it, to accept or reject not counted, meets a write again: "is assigned in state
//     ... but has also previous assignment"), else it only warns (not reported here).
//
// The states and transitions are the parser's as written (parserGraph): bf-p4c's mid end may
// split or merge states first. A write is an extract (each field of the header), an
// assignment to a field or a whole header or struct of the parser's parameters; writes through
// a header stack, a slice, a sub-parser or Checksum.get (a residual, written at the parser's
// end) are not followed, nor the parser's locals.

// parserWrite is one write of a field in a parser state.
type parserWrite struct {
	state  string
	order  int      // place among the parser's writes, in state and statement order
	p      Pos      // the statement
	konst  *big.Int // the value written when it is a constant
	width  int      // the field's width in bits
	verify string   // the call when the value is (a cast of) Checksum.verify(): ck.verify()
	or     bool     // the field ORed with the value (x = x | e, x = e || x)
}

// tnaParserRewrites checks parser p of gress ("ingress", "egress") for fields written twice on
// one path (see the file comment).
func (c *checker) tnaParserRewrites(p *ParserDecl, gress string) {
	if p == nil {
		return
	}
	params := map[*Param]bool{}
	for _, pr := range p.Params {
		if pr.Dir == DirOut || pr.Dir == DirInOut {
			params[pr] = true
		}
	}
	writes := map[string][]*parserWrite{}
	var fields []string
	add := func(path string, w *parserWrite) {
		if writes[path] == nil {
			fields = append(fields, path)
		}
		writes[path] = append(writes[path], w)
	}
	n := 0
	for _, s := range p.States {
		for _, st := range s.Stmts {
			walkStmts(st, func(st Stmt) {
				switch st := st.(type) {
				case *CallStmt:
					call := st.Call
					if !isPacketInMethod(call, "extract") || len(call.Args) == 0 {
						return
					}
					path, ok := paramPath(call.Args[0].Value, params)
					if !ok {
						return
					}
					for _, leaf := range leafFields(path, call.Args[0].Value.Type()) {
						n++
						add(leaf.path, &parserWrite{state: s.Name, order: n, p: st.P, width: leaf.width})
					}
				case *AssignStmt:
					path, ok := paramPath(st.LHS, params)
					if !ok || isChecksumCall(st.RHS, "get") {
						return
					}
					leaves := leafFields(path, st.LHS.Type())
					for _, leaf := range leaves {
						n++
						w := &parserWrite{state: s.Name, order: n, p: st.P, width: leaf.width}
						if len(leaves) == 1 {
							w.konst = constInt(c.out.Const[st.RHS])
							v := st.RHS
							if w.or = orsInto(st.RHS, path, params); w.or {
								v = orOperand(st.RHS, path, params)
							}
							if isChecksumCall(v, "verify") {
								w.verify = ExprString(stripCasts(v))
							}
						}
						add(leaf.path, w)
					}
				}
			})
		}
	}
	if len(fields) == 0 {
		return
	}
	g := c.parserGraph(p, 0)
	for _, f := range fields {
		if len(writes[f]) > 1 {
			c.tnaFieldRewrites(g, gress, f, writes[f])
		}
	}
}

// tnaFieldRewrites is tnaParserRewrites for one field's writes (in order).
func (c *checker) tnaFieldRewrites(g *parserGraph, gress, field string, all []*parserWrite) {
	reach := g.reachability()
	before := func(q, w *parserWrite) bool {
		return reach[q.state][w.state] || q.state == w.state && q.order < w.order
	}
	inits := func(ws []*parserWrite) map[*parserWrite]bool {
		out := map[*parserWrite]bool{}
		for _, w := range ws {
			first := true
			for _, q := range ws {
				if before(q, w) {
					first = false
				}
			}
			out[w] = first
		}
		return out
	}
	// A constant 0 written first is dropped; of a state's writes only the last counts unless
	// one ORs (a checksum verify is kept).
	first := inits(all)
	var ws []*parserWrite
	forcedOr := false
	for _, w := range all {
		if first[w] && w.konst != nil && w.konst.Sign() == 0 {
			continue
		}
		ws = append(ws, w)
		forcedOr = forcedOr || w.or
	}
	if !forcedOr {
		last := map[string]*parserWrite{}
		for _, w := range ws {
			last[w.state] = w
		}
		kept := ws[:0:0]
		for _, w := range ws {
			if last[w.state] == w || w.verify != "" {
				kept = append(kept, w)
			}
		}
		ws = kept
	}
	prev := func(w *parserWrite) []*parserWrite {
		var out []*parserWrite
		for _, q := range ws {
			if q.konst != nil && w.konst != nil && q.konst.Cmp(w.konst) == 0 {
				continue
			}
			if before(q, w) {
				out = append(out, q)
			}
		}
		return out
	}
	states := map[string]bool{}
	for _, w := range ws {
		states[w.state] = true
	}
	var curr *parserWrite
	var earlier []*parserWrite
	always := false
	for _, w := range ws {
		ps := prev(w)
		for _, q := range ps {
			if w.or || absorbs(q, w) {
				continue
			}
			// bf-p4c keeps the last counterexample that is always rewritten, else the first.
			if a := g.postdominatedBy(q.state, states); curr == nil || a {
				curr, earlier, always = w, ps, a
			}
		}
	}
	if curr == nil {
		return // written once on every path, or ORed
	}
	init := inits(ws)
	for _, w := range ws {
		if !init[w] && w.or {
			c.errorf(w.p, "Inconsistent parser write semantic for field %s::%s in parser state %s::%s. (it is ORed into here and overwritten elsewhere on a path; write every assignment after the first as an OR, or none)",
				gress, field, gress, w.state)
			return
		}
	}
	if c.out.TofinoGeneration() == 2 {
		for _, w := range all {
			if w.verify != "" {
				c.errorf(w.p, "Using checksum verify in direct assignment to set %s::%s is not supported when the left-hand side of the assignment can be written multiple times for one packet. (Tofino 2 clears the field on this write; OR the result in: %s = %s || %s, or assign it once)",
					gress, field, field, field, w.verify)
				return
			}
		}
		return
	}
	if !always {
		return // bf-p4c warns: the rewrite is on some paths only
	}
	var where []string
	onLoop := false
	for _, q := range earlier {
		if q == curr {
			onLoop = true
			continue
		}
		where = append(where, gress+"::"+q.state)
	}
	plural, loop := "", ""
	if len(earlier) > 1 {
		plural = "s"
	}
	if onLoop {
		loop = " in the same state due to a loop"
		if len(earlier) > 1 {
			loop = " including assignment" + loop
		}
	}
	hint := ""
	if curr.verify != "" {
		hint = fmt.Sprintf("; to accumulate checksum errors write the OR: %s = %s || %s", field, field, curr.verify)
	}
	c.errorf(curr.p, "%s::%s is assigned in state %s::%s but has also previous assignment%s%s. This re-assignment is not supported by Tofino. (Tofino 1 cannot clear a field the parser wrote; previously assigned in %s; assign it once on every path, or first to 0%s)",
		gress, field, gress, curr.state, plural, loop, strings.Join(where, ", "), hint)
}

// absorbs reports whether write w can be ORed over the earlier write q without clearing a bit:
// q's constant bits are all in w's constant, w is a constant of all ones, or q is the constant 0.
func absorbs(q, w *parserWrite) bool {
	if q.verify != "" || w.verify != "" {
		return false
	}
	switch {
	case q.konst != nil && w.konst != nil:
		return new(big.Int).Or(q.konst, w.konst).Cmp(w.konst) == 0
	case w.konst != nil:
		ones := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(w.width)), big.NewInt(1))
		return new(big.Int).And(w.konst, ones).Cmp(ones) == 0
	}
	return q.konst != nil && q.konst.Sign() == 0
}

// reachability returns, for each state, the states reachable from it by one transition or
// more (accept and reject are no states).
func (g *parserGraph) reachability() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for s := range g.succs {
		seen := map[string]bool{}
		stack := append([]string(nil), g.succs[s]...)
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[n] || n == "accept" || n == "reject" {
				continue
			}
			seen[n] = true
			stack = append(stack, g.succs[n]...)
		}
		out[s] = seen
	}
	return out
}

// postdominatedBy is bf-p4c's is_postdominated_by_set: every successor of s (accept and reject
// are none) is in set or, recursively, postdominated by it; a state without successors is not.
// A transition back to a state on the way is a loopback, which bf-p4c's graph leaves out of
// the successors (its loopback rule, is_loopback_reassignment, is not modelled: such a rewrite
// is taken, as the compiler takes the one state that extracts on a loop, with a warning).
func (g *parserGraph) postdominatedBy(s string, set map[string]bool) bool {
	onWay := map[string]bool{}
	var rec func(s string) bool
	rec = func(s string) bool {
		onWay[s] = true
		defer delete(onWay, s)
		n := 0
		for _, x := range g.succs[s] {
			if x == "accept" || x == "reject" || onWay[x] {
				continue
			}
			n++
			if !set[x] && !rec(x) {
				return false
			}
		}
		return n > 0
	}
	return rec(s)
}

// fieldLeaf is a field a write reaches, by path, and its width.
type fieldLeaf struct {
	path  string
	width int
}

// leafFields returns the scalar fields under path of type t (t itself when scalar); a header
// stack under it is left out.
func leafFields(path string, t Type) []fieldLeaf {
	switch u := underlying(t).(type) {
	case *StructType:
		var out []fieldLeaf
		for _, f := range u.Fields {
			out = append(out, leafFields(path+"."+f.Name, f.T)...)
		}
		return out
	case *StackType:
		return nil
	}
	return []fieldLeaf{{path, max(WidthOf(t), 1)}}
}

// paramPath returns a.b.c for an lvalue that selects fields from one of params, false for
// anything else (a stack element, a slice, a local).
func paramPath(e Expr, params map[*Param]bool) (string, bool) {
	switch x := e.(type) {
	case *NameExpr:
		p, ok := x.Decl.(*Param)
		if !ok || !params[p] {
			return "", false
		}
		return x.Name, true
	case *MemberExpr:
		if x.Kind != MemberField {
			return "", false
		}
		if _, stack := x.X.Type().(*StackType); stack {
			return "", false
		}
		base, ok := paramPath(x.X, params)
		return base + "." + x.Name, ok
	}
	return "", false
}

// stripCasts returns e without the casts around it.
func stripCasts(e Expr) Expr {
	for {
		c, ok := e.(*CastExpr)
		if !ok {
			return e
		}
		e = c.X
	}
}

// isChecksumCall reports whether e is (a cast of) a call of tna.p4's Checksum method name.
func isChecksumCall(e Expr, name string) bool {
	call, ok := stripCasts(e).(*CallExpr)
	if !ok {
		return false
	}
	m, ok := call.Callee.(*MethodDecl)
	return ok && m.Owner != nil && isTNAExtern(m.Owner) && m.Owner.Name == "Checksum" && m.Name == name
}

// orsInto reports whether e is path | v, v | path, path || v or v || path.
func orsInto(e Expr, path string, params map[*Param]bool) bool {
	return orOperand(e, path, params) != nil
}

// orOperand returns v of orsInto's forms, nil for anything else.
func orOperand(e Expr, path string, params map[*Param]bool) Expr {
	b, ok := e.(*BinaryExpr)
	if !ok || b.Op != "|" && b.Op != "||" {
		return nil
	}
	if p, ok := paramPath(stripCasts(b.X), params); ok && p == path {
		return b.Y
	}
	if p, ok := paramPath(stripCasts(b.Y), params); ok && p == path {
		return b.X
	}
	return nil
}

// constInt returns a folded constant as an integer (a bool as 0 or 1), nil for anything else.
func constInt(v Value) *big.Int {
	switch v := v.(type) {
	case *big.Int:
		return v
	case bool:
		if v {
			return big.NewInt(1)
		}
		return big.NewInt(0)
	}
	return nil
}
