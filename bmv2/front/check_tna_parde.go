package front

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// This file holds three rules of p4c's Tofino backend (bf-p4c, p4c git 34b86e9) on parsers and
// deparsers, with the compiler's reasons:
//
//   - the longest path through Tofino 1's egress parser is at most 160 bytes
//     (midend/parser_enforce_depth_req.cpp, IdentifyPadRequirements: "longest path through parser
//     (%2%B) exceeds maximum parse depth (%3%B)"; PardeSpec::maxParseDepth is 160 for Tofino's
//     egress and unbounded for its ingress and for Tofino 2);
//   - an advance takes a constant, in any parser on Tofino 1 and 2
//     (parde/extract_parser.cpp: "Advancing by a non-constant distance is not supported"; in
//     Tofino 1's egress parser the parse-depth check says "Variable-length advance statement
//     found in state ..." first);
//   - a field list of Mirror.emit, Resubmit.emit, Digest.pack or Pktgen.emit holds no constant but
//     0 (parde/extract_deparser.cpp, ExtractDeparser::generateDigest: "Non-zero constant value %1%
//     in digest field list is not supported on tofino."), on Tofino 1 and 2.

// tnaMaxParseDepth is PardeSpec::maxParseDepth(EGRESS) of Tofino 1, in bytes; its minimum
// (65 bytes) is met by padding the compiler adds, not an error.
const (
	tnaMaxParseDepth = 160
	tnaMinParseDepth = 65
)

// tnaParseDepth refuses a Tofino 1 egress parser whose longest path is longer than
// tnaMaxParseDepth bytes, counted as bf-p4c's IdentifyPadRequirements counts it:
//
//   - a state's bytes are the widths of the headers it extracts (the intrinsic metadata
//     included: egress_intrinsic_metadata_t is 27 bytes; a varbit field at its maximum) and the
//     bits it advances, summed over
//     the whole state (both arms of an if) and rounded down to bytes; lookahead counts nothing;
//   - a path's bytes are the sum of its states', from start to accept or reject; a state on a
//     loop that extracts into a header stack that is a field (hdr.st.next) counts once per
//     element of the smallest such stack, any other state once per path (the walk never enters
//     a state twice; a stack in the parser's locals is not seen);
//   - the longest path is found by bf-p4c's walk, round by round from start (states of a round
//     in name order, successors in the order of their select cases): on a graph with loops the
//     result is the walk's, which is what the compiler compares;
//   - a parser that calls no method is bypassed and not checked;
//   - a sub-parser's apply counts its longest path to accept (p4c inlines its states);
//   - @command_line("--disable-parse-max-depth-limit") on a top-level declaration turns the
//     check off (parseDepthLimitOff), as the compiler's option does.
//
// An advance whose argument is not a constant is refused in that parser first
// (tnaConstantAdvance).
func (c *checker) tnaParseDepth(p *ParserDecl) {
	if p == nil || c.out.TofinoGeneration() == 2 || c.parseDepthLimitOff() {
		return
	}
	g := c.parserGraph(p, 0)
	if !g.calls {
		return
	}
	depth, route := g.longestPath()
	if depth <= tnaMaxParseDepth {
		return
	}
	parts := make([]string, len(route))
	for i, s := range route {
		if n := g.loopDepth[s]; n > 1 {
			parts[i] = fmt.Sprintf("%s %d x %dB", s, n, g.size[s])
		} else {
			parts[i] = fmt.Sprintf("%s %dB", s, g.size[s])
			if s == "accept" || s == "reject" {
				parts[i] = "then " + s
			}
		}
	}
	c.errorf(p.P, "Parser %s: longest path through parser (%dB) exceeds maximum parse depth (%dB) (Tofino 1's egress parser; the path: %s)",
		p.Name, depth, tnaMaxParseDepth, strings.Join(parts, ", "))
}

// parseDepthLimitOff reports whether a top-level declaration carries the compiler option that
// turns the maximum parse depth off: @command_line("--disable-parse-max-depth-limit"), or
// @pragma command_line --disable-parse-max-depth-limit (bf-p4c's BFNOptionPragmaParser; its
// --disable-parse-depth-limit is "disabled in this compiler version" there and ignored here).
func (c *checker) parseDepthLimitOff() bool {
	const opt = "--disable-parse-max-depth-limit"
	for _, d := range c.out.Program.Decls {
		for _, a := range declAnnotations(d) {
			var text []string
			for _, t := range a.Args {
				text = append(text, t.Text)
			}
			args := strings.Join(text, "")
			if a.Name == "command_line" && (args == opt || strings.HasPrefix(args, opt+",")) ||
				a.Name == "pragma" && strings.HasPrefix(args, "command_line"+opt) {
				return true
			}
		}
	}
	return false
}

// declAnnotations returns the annotations of a top-level declaration.
func declAnnotations(d Decl) Annotations {
	switch d := d.(type) {
	case *ConstDecl:
		return d.Annos
	case *TypedefDecl:
		return d.Annos
	case *StructDecl:
		return d.Annos
	case *EnumDecl:
		return d.Annos
	case *ExternDecl:
		return d.Annos
	case *MethodDecl:
		return d.Annos
	case *ParserDecl:
		return d.Annos
	case *ControlDecl:
		return d.Annos
	case *PackageDecl:
		return d.Annos
	case *InstanceDecl:
		return d.Annos
	case *ActionDecl:
		return d.Annos
	case *FunctionDecl:
		return d.Annos
	}
	return nil
}

// parserGraph is a parser's states as bf-p4c's parse-depth check sees them.
type parserGraph struct {
	size      map[string]int      // bytes a state extracts and advances
	succs     map[string][]string // successors in select-case order, each once
	loopDepth map[string]int      // for a state on a loop, the size of the smallest stack it extracts into
	calls     bool                // some state calls a method
}

// isPacketInMethod reports whether call is packet_in's method name.
func isPacketInMethod(call *CallExpr, name string) bool {
	m, ok := call.Callee.(*MethodDecl)
	return ok && m.Owner != nil && m.Owner.Name == "packet_in" && m.Name == name
}

// parserGraph builds p's graph: state sizes, transitions, loop depths; depth counts the
// sub-parsers it is inlined into.
func (c *checker) parserGraph(p *ParserDecl, depth int) *parserGraph {
	g := &parserGraph{size: map[string]int{}, succs: map[string][]string{}, loopDepth: map[string]int{}}
	stacks := map[string]int{} // per state, the smallest stack it extracts into (0: none)
	for _, s := range p.States {
		bits := 0
		visit := func(e Expr) {
			call, ok := e.(*CallExpr)
			if !ok {
				return
			}
			g.calls = true
			switch {
			case isPacketInMethod(call, "extract") && len(call.Args) >= 1:
				t := call.Args[0].Value.Type()
				if len(call.TypeArgT) > 0 && call.TypeArgT[0] != nil {
					t = call.TypeArgT[0]
				}
				bits += parsedBits(t)
			case isPacketInMethod(call, "advance") && len(call.Args) == 1:
				if v, ok := c.out.Const[call.Args[0].Value].(*big.Int); ok && v.IsInt64() {
					bits += int(v.Int64())
				}
			}
			// A sub-parser's states are inlined here (p4c's front end): its longest path to
			// accept counts as part of this state.
			if sub, ok := call.Callee.(*ParserDecl); ok && sub != p && depth < 16 {
				subGraph := c.parserGraph(sub, depth+1)
				g.calls = g.calls || subGraph.calls
				d, _ := subGraph.longestPathTo("accept")
				bits += 8 * d
			}
			// bf-p4c's GetMaxLoopDepth: the first argument is a member (next, last) of a stack that
			// is itself a field (hdr.st.next); a stack in the parser's locals (st.next, or
			// t.st.next of a local struct t, which the mid end's NestedStructs flattens) does not
			// count.
			if len(call.Args) > 0 {
				if m, ok := call.Args[0].Value.(*MemberExpr); ok {
					if _, field := m.X.(*MemberExpr); field && sliceRoot(m.X) != nil {
						if st, ok := m.X.Type().(*StackType); ok && (stacks[s.Name] == 0 || st.Size < stacks[s.Name]) {
							stacks[s.Name] = st.Size
						}
					}
				}
			}
		}
		for _, st := range s.Stmts {
			walkStmt(st, visit)
		}
		var next []string
		add := func(n string) {
			for _, x := range next {
				if x == n {
					return
				}
			}
			next = append(next, n)
		}
		switch {
		case s.Trans == nil:
			add("reject")
		case s.Trans.Target != nil:
			add(s.Trans.Target.Name)
		case s.Trans.Select != nil:
			for _, k := range s.Trans.Select.Keys {
				walkExpr(k, visit)
			}
			for _, cs := range s.Trans.Select.Cases {
				if cs.State != nil {
					add(cs.State.Name)
				}
			}
		}
		g.size[s.Name] = bits / 8
		g.succs[s.Name] = next
	}
	for _, scc := range stronglyConnected(g.succs) {
		loop := len(scc) > 1
		for _, n := range g.succs[scc[0]] {
			loop = loop || n == scc[0]
		}
		if !loop {
			continue
		}
		for _, s := range scc {
			if stacks[s] > 0 {
				g.loopDepth[s] = stacks[s]
			}
		}
	}
	return g
}

// parsedBits is how many bits bf-p4c's depth check counts for an extract of type t: its width,
// a varbit field at its maximum (DesugarVarbitExtract makes a state per length, the longest of
// which counts).
func parsedBits(t Type) int {
	if w := WidthOf(t); w >= 0 {
		return w
	}
	st, ok := underlying(t).(*StructType)
	if !ok {
		return 0
	}
	n := 0
	for _, f := range st.Fields {
		if vb, ok := f.T.(*VarbitType); ok {
			n += vb.Max
		} else if w := WidthOf(f.T); w > 0 {
			n += w
		}
	}
	return n
}

// longestPath is bf-p4c's walk for the maximum parse depth (IdentifyPadRequirements::postorder):
// it returns the depth of accept or reject, whichever is deeper, and the states of that path.
func (g *parserGraph) longestPath() (int, []string) {
	depth, route := g.walk()
	end := "accept"
	if d, ok := depth["reject"]; ok && d > depth["accept"] {
		end = "reject"
	}
	return depth[end], route[end]
}

// walk is bf-p4c's walk from start: the depth of every state it reaches and the path to it.
func (g *parserGraph) walk() (map[string]int, map[string][]string) {
	depth := map[string]int{"start": g.size["start"]}
	route := map[string][]string{"start": {"start"}}
	onPath := func(s, n string) bool {
		for _, x := range route[s] {
			if x == n {
				return true
			}
		}
		return false
	}
	round := []string{"start"}
	for len(round) > 0 {
		next := map[string]bool{}
		for _, s := range round {
			for _, n := range g.succs[s] {
				times := 1
				if d := g.loopDepth[n]; d > 0 {
					times = d
				}
				size := depth[s] + times*g.size[n]
				if d, seen := depth[n]; !seen || size > d && !onPath(s, n) {
					depth[n] = size
					route[n] = append(append([]string(nil), route[s]...), n)
					next[n] = true
				}
			}
		}
		round = round[:0]
		for n := range next {
			round = append(round, n)
		}
		sort.Strings(round)
	}
	return depth, route
}

// longestPathTo is longestPath's depth and path to one end state (accept).
func (g *parserGraph) longestPathTo(end string) (int, []string) {
	depth, route := g.walk()
	return depth[end], route[end]
}

// stronglyConnected returns the strongly connected components of the graph succs (Tarjan).
func stronglyConnected(succs map[string][]string) [][]string {
	var names []string
	for n := range succs {
		names = append(names, n)
	}
	sort.Strings(names)
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v] = len(index)
		low[v] = index[v]
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range succs[v] {
			if _, ok := index[w]; !ok {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			out = append(out, scc)
		}
	}
	for _, n := range names {
		if _, ok := index[n]; !ok {
			visit(n)
		}
	}
	return out
}

// tnaConstantAdvance refuses an advance whose argument is not a constant, in any parser of a
// pipe, on Tofino 1 and 2 (parde/extract_parser.cpp, rewriteAdvance: "Advancing by a
// non-constant distance is not supported on %1%"); in Tofino 1's egress parser the parse-depth
// check refuses it first, with its own message (egress says which).
func (c *checker) tnaConstantAdvance(p *ParserDecl, egress bool) {
	if p == nil {
		return
	}
	device := "Tofino"
	if c.out.TofinoGeneration() == 2 {
		device = "Tofino2"
	}
	for _, s := range p.States {
		for _, st := range s.Stmts {
			walkStmt(st, func(e Expr) {
				call, ok := e.(*CallExpr)
				if !ok || !isPacketInMethod(call, "advance") || len(call.Args) != 1 {
					return
				}
				if _, ok := c.out.Const[call.Args[0].Value].(*big.Int); ok {
					return
				}
				if egress && device == "Tofino" {
					c.errorf(call.P, "Variable-length advance statement found in state %s of parser %s. Please manually enforce minimum (%dB) / maximum (%dB) parse depths in the parse graph.",
						s.Name, p.Name, tnaMinParseDepth, tnaMaxParseDepth)
					return
				}
				c.errorf(call.P, "Advancing by a non-constant distance is not supported on %s: %s", device, ExprString(call.Args[0].Value))
			})
		}
	}
}

// tnaFieldListConstants refuses a constant other than 0 among the fields of a field list that a
// deparser's Mirror.emit, Resubmit.emit, Digest.pack or Pktgen.emit sends (a {...} argument;
// Mirror.emit's session is the list's first field), on Tofino 1 and 2: bf-p4c deparses a
// constant field only as zeros. The constants are those after the front end's folding (named
// constants, casts of constants, serializable enum members).
func (c *checker) tnaFieldListConstants(b Block) {
	c.tnaBlockCalls(b, func(call *CallExpr, m *MethodDecl) {
		if m.Owner == nil || !isTNAExtern(m.Owner) {
			return
		}
		var lists []Expr
		switch {
		case m.Owner.Name == "Mirror" && m.Name == "emit" && len(call.Args) == 2:
			if isFieldList(call.Args[1].Value) {
				lists = append(lists, call.Args[0].Value) // the session, first field of the list
				lists = append(lists, fieldListElems(call.Args[1].Value)...)
			}
		case (m.Owner.Name == "Resubmit" || m.Owner.Name == "Pktgen") && m.Name == "emit" && len(call.Args) == 1,
			m.Owner.Name == "Digest" && m.Name == "pack" && len(call.Args) == 1:
			lists = fieldListElems(call.Args[0].Value)
		}
		for _, e := range lists {
			v, ok := c.out.Const[e].(*big.Int)
			if !ok || v.Sign() == 0 {
				continue
			}
			c.errorf(e.Position(), "Non-zero constant value %s in digest field list is not supported on tofino. (%s.%s: a deparsed field list carries constant zeros only; put the value in a metadata field)",
				constString(v, e.Type()), m.Owner.Name, m.Name)
		}
	})
}

// isFieldList reports whether e is a {...} list or struct expression.
func isFieldList(e Expr) bool {
	switch e.(type) {
	case *ListExpr, *StructExpr:
		return true
	}
	return false
}

// fieldListElems returns the fields of a {...} list or struct expression, nil for anything else.
func fieldListElems(e Expr) []Expr {
	switch x := e.(type) {
	case *ListExpr:
		return x.Elems
	case *StructExpr:
		out := make([]Expr, len(x.Fields))
		for i, f := range x.Fields {
			out[i] = f.Value
		}
		return out
	}
	return nil
}

// constString prints a constant as p4c does in this message: 8w7, 8w0xa3 (p4c keeps the base
// it was written in; here values from 10 on are hexadecimal).
func constString(v *big.Int, t Type) string {
	w := WidthOf(t)
	switch {
	case w > 0 && v.Cmp(big.NewInt(10)) < 0:
		return fmt.Sprintf("%dw%s", w, v)
	case w > 0:
		return fmt.Sprintf("%dw0x%s", w, v.Text(16))
	}
	return v.String()
}
