package engine

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// splitFuncs splits the generated blocks of a pipeline into functions of readable size. The
// generator inlines every action, function, table and control into one function per v1model
// block (GenerateGo), thousands of lines for a large program; splitFuncs moves runs of
// consecutive statements out into methods of the pipeline (the block's name and a number,
// ingress3), bottom-up, until no statement list of a function is longer than splitLines or
// nothing in it can move: first the longest branches of a statement of several (an if-else
// chain, a switch) that is still too long, whole, then the longest runs. The code executed is
// the same:
//
//   - a run moves only when it is closed: no variable it declares is used after it, no goto
//     leaves it or enters it;
//   - the variables it uses from the function around it become parameters: by value when the
//     run only reads them, by pointer (and read through it) when it writes them or they are
//     arrays; their Go types are inferred from their declarations, and a run that uses one
//     whose type is not inferred does not move;
//   - a return in it (P4's exit, a parser's reject) returns true from the new method, whose
//     call returns from its caller in turn.
//
// The generated names are unique per file (gen.tmp), which the analysis relies on: a name is
// declared once. Runs shorter than splitMinLines stay where they are (a call per few lines
// would only cost time).
func splitFuncs(src []byte, recv string, blocks []string, lim splitLimits) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "gen.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if lim == (splitLimits{}) {
		lim = splitLimits{lines: splitLines, min: splitMinLines}
	}
	sp := &splitter{fset: fset, src: src, file: f, recv: recv, lim: lim}
	isBlock := map[string]bool{}
	for _, b := range blocks {
		isBlock[b] = true
	}
	var out bytes.Buffer
	last := 0
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || !isBlock[fd.Name.Name] || fd.Body == nil {
			continue
		}
		text, err := sp.splitFunc(fd)
		if err != nil {
			return nil, fmt.Errorf("splitting %s: %w", fd.Name.Name, err)
		}
		start, end := sp.off(fd.Pos()), sp.off(fd.End())
		out.Write(src[last:start])
		out.WriteString(text)
		last = end
	}
	out.Write(src[last:])
	res, err := format.Source(out.Bytes())
	if err != nil {
		return out.Bytes(), err
	}
	return res, nil
}

const (
	// splitLines is the longest statement list (in lines) a split function keeps. Every
	// function moved out is a call on the paths through it: on p4/netlock.p4's acquire and
	// release pairs (BenchmarkSwitchPairs, instructions counted by callgrind) 120 lines cost
	// 3.5% more instructions than one function per block, 200 lines 2.2%, 300 lines 0.8%,
	// 400 lines 0.5% (docs/p4.md, "Go backend").
	splitLines = 300
	// splitMinLines is the shortest run that moves into a function of its own.
	splitMinLines = 24
)

// splitLimits are splitLines and splitMinLines (the zero value), or others (tests).
type splitLimits struct{ lines, min int }

type splitter struct {
	fset *token.FileSet
	src  []byte
	file *ast.File
	recv string
	lim  splitLimits

	// Per block function.
	fn      string
	sType   string               // the type of s, the packet's slots (*[N]uint64)
	decl    map[string]ast.Node  // where each local name is declared (a statement)
	uses    map[string]int       // uses of each local name in the function
	gotos   map[string]int       // gotos to each label in the function
	typeOf  map[string]string    // inferred Go type of each local name ("" unknown)
	runs    []*splitRun          // the runs moved out, in order of their start
	stmtSum map[ast.Stmt]*runSum // summaries of statements
	n       int
}

func (sp *splitter) off(p token.Pos) int  { return sp.fset.Position(p).Offset }
func (sp *splitter) line(p token.Pos) int { return sp.fset.Position(p).Line }

// runSum summarizes a statement or a run of statements.
type runSum struct {
	lines  int             // lines after the runs inside it moved out
	decls  map[string]bool // local names declared in it
	uses   map[string]int  // uses of local names in it
	labels map[string]bool // labels defined in it
	gotos  map[string]int  // gotos in it, by label
	ret    bool            // it contains a return
	writes map[string]bool // local names it assigns, increments or takes the address of
}

func newSum() *runSum {
	return &runSum{decls: map[string]bool{}, uses: map[string]int{}, labels: map[string]bool{}, gotos: map[string]int{}, writes: map[string]bool{}}
}

func (a *runSum) add(b *runSum) {
	a.lines += b.lines
	for k := range b.decls {
		a.decls[k] = true
	}
	for k, v := range b.uses {
		a.uses[k] += v
	}
	for k := range b.labels {
		a.labels[k] = true
	}
	for k, v := range b.gotos {
		a.gotos[k] += v
	}
	for k := range b.writes {
		a.writes[k] = true
	}
	a.ret = a.ret || b.ret
}

// splitRun is a run of statements moved into a function of its own.
type splitRun struct {
	name   string
	stmts  []ast.Stmt
	start  token.Pos
	end    token.Pos
	params []splitParam
	ret    bool
}

type splitParam struct {
	name string
	typ  string // the variable's type
	ptr  bool   // passed by pointer
}

// splitFunc returns the text of a block function with its long runs moved out, followed by
// the functions they moved into.
func (sp *splitter) splitFunc(fd *ast.FuncDecl) (string, error) {
	sp.fn = fd.Name.Name
	sp.decl, sp.uses, sp.gotos, sp.typeOf = map[string]ast.Node{}, map[string]int{}, map[string]int{}, map[string]string{}
	sp.runs, sp.stmtSum, sp.n = nil, map[ast.Stmt]*runSum{}, 0
	sp.sType = ""
	// Local names and their declarations; s is the slot state every function gets.
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						sp.decl[id.Name] = x
					}
				}
			}
		case *ast.DeclStmt:
			if gd, ok := x.Decl.(*ast.GenDecl); ok {
				for _, s := range gd.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						for _, id := range vs.Names {
							sp.decl[id.Name] = vs
						}
					}
				}
			}
		}
		return true
	})
	sDecl, ok := sp.decl["s"].(*ast.AssignStmt)
	if !ok || len(sDecl.Rhs) != 1 {
		return "", fmt.Errorf("no s := (*[N]uint64)(g.S())")
	}
	conv, ok := sDecl.Rhs[0].(*ast.CallExpr)
	if !ok {
		return "", fmt.Errorf("no s := (*[N]uint64)(g.S())")
	}
	sp.sType = strings.Trim(sp.text(conv.Fun), "()")
	delete(sp.decl, "s")
	for name := range sp.decl {
		sp.typeOf[name] = sp.inferType(name, 0)
	}
	sp.summarize(fd.Body.List, func(s *runSum) {
		for k, v := range s.uses {
			sp.uses[k] += v
		}
		for k, v := range s.gotos {
			sp.gotos[k] += v
		}
	})
	sp.split(fd.Body.List)
	// The function, then the runs, each rendered with the runs inside it replaced by calls.
	var b strings.Builder
	b.WriteString(sp.render(fd.Pos(), fd.End(), nil))
	sort.Slice(sp.runs, func(i, j int) bool { return sp.runs[i].start < sp.runs[j].start })
	for _, r := range sp.runs {
		b.WriteString("\n\n")
		b.WriteString(sp.doc(r))
		fmt.Fprintf(&b, "func (p *%s) %s(g *engine.Gen, s %s", sp.recv, r.name, sp.sType)
		for _, pr := range r.params {
			t := pr.typ
			if pr.ptr {
				t = "*" + t
			}
			fmt.Fprintf(&b, ", %s %s", pr.name, t)
		}
		b.WriteString(")")
		if r.ret {
			b.WriteString(" bool")
		}
		b.WriteString(" {\n")
		b.WriteString(sp.render(r.start, r.end, r))
		if r.ret {
			b.WriteString("\nreturn false")
		}
		b.WriteString("\n}")
	}
	return b.String(), nil
}

// doc is the doc comment of a run's function: the P4 tables and actions its code comes from
// (the generator's "// table" and "// action" comments in it).
func (sp *splitter) doc(r *splitRun) string {
	var tables, actions []string
	seen := map[string]bool{}
	for _, cg := range sp.file.Comments {
		if cg.Pos() < r.start || cg.End() > r.end {
			continue
		}
		for _, c := range cg.List {
			t := strings.TrimPrefix(c.Text, "// ")
			kind, name, ok := strings.Cut(t, " ")
			if !ok || seen[t] {
				continue
			}
			seen[t] = true
			switch kind {
			case "table":
				tables = append(tables, name)
			case "action":
				actions = append(actions, name)
			}
		}
	}
	var parts []string
	if len(tables) > 0 {
		parts = append(parts, "tables "+strings.Join(trimList(tables), ", "))
	}
	if len(actions) > 0 {
		parts = append(parts, "actions "+strings.Join(trimList(actions), ", "))
	}
	what := ""
	if len(parts) > 0 {
		what = ", with " + strings.Join(parts, "; ")
	}
	return fmt.Sprintf("// %s is a part of %s%s.\n", r.name, sp.fn, what)
}

func trimList(xs []string) []string {
	if len(xs) > 6 {
		return append(xs[:6:6], fmt.Sprintf("and %d more", len(xs)-6))
	}
	return xs
}

// summarize computes the summary of each statement of list (recursively) and hands the
// list's total to done.
func (sp *splitter) summarize(list []ast.Stmt, done func(*runSum)) {
	total := newSum()
	for _, s := range list {
		total.add(sp.sum(s))
	}
	if done != nil {
		done(total)
	}
}

// sum is the summary of one statement (lines as written).
func (sp *splitter) sum(s ast.Stmt) *runSum {
	if r, ok := sp.stmtSum[s]; ok {
		return r
	}
	r := newSum()
	r.lines = sp.line(s.End()) - sp.line(s.Pos()) + 1
	ast.Inspect(s, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BranchStmt:
			if x.Tok == token.GOTO && x.Label != nil {
				r.gotos[x.Label.Name]++
			} else {
				// break and continue (the generator emits none): never move.
				r.gotos["<"+x.Tok.String()+">"]++
			}
			return false
		case *ast.LabeledStmt:
			r.labels[x.Label.Name] = true
			return true
		case *ast.FuncLit:
			r.gotos["<func literal>"]++ // never move
			return false
		}
		return sp.visit(n, r)
	})
	sp.stmtSum[s] = r
	return r
}

// visit records the names n declares, uses and writes in r (for ast.Inspect).
func (sp *splitter) visit(n ast.Node, r *runSum) bool {
	switch x := n.(type) {
	case *ast.ReturnStmt:
		r.ret = true
	case *ast.SelectorExpr:
		ast.Inspect(x.X, func(m ast.Node) bool { return sp.visit(m, r) })
		return false
	case *ast.Ident:
		if _, ok := sp.decl[x.Name]; ok {
			r.uses[x.Name]++
		}
	case *ast.AssignStmt:
		for _, l := range x.Lhs {
			if id, ok := l.(*ast.Ident); ok {
				if x.Tok == token.DEFINE {
					r.decls[id.Name] = true
				} else {
					r.writes[id.Name] = true
				}
			}
		}
	case *ast.IncDecStmt:
		if id, ok := x.X.(*ast.Ident); ok {
			r.writes[id.Name] = true
		}
	case *ast.UnaryExpr:
		if id, ok := x.X.(*ast.Ident); ok && x.Op == token.AND {
			r.writes[id.Name] = true
		}
	case *ast.ValueSpec:
		for _, id := range x.Names {
			r.decls[id.Name] = true
		}
	}
	return true
}

// lists returns the statement lists directly inside statement s (bodies of blocks, ifs,
// cases, labeled statements).
func lists(s ast.Stmt) [][]ast.Stmt {
	switch x := s.(type) {
	case *ast.BlockStmt:
		return [][]ast.Stmt{x.List}
	case *ast.IfStmt:
		out := [][]ast.Stmt{x.Body.List}
		if x.Else != nil {
			out = append(out, lists(x.Else)...)
		}
		return out
	case *ast.SwitchStmt:
		var out [][]ast.Stmt
		for _, c := range x.Body.List {
			out = append(out, c.(*ast.CaseClause).Body)
		}
		return out
	case *ast.LabeledStmt:
		return lists(x.Stmt)
	}
	return nil
}

// split moves runs of list (after those inside its statements) out until the list is at most
// sp.lim.lines long or no run moves; it returns the list's lines after the moves and the lines
// saved.
func (sp *splitter) split(list []ast.Stmt) (total, saved int) {
	sizes := make([]int, len(list))
	for i, s := range list {
		ls := lists(s)
		effs := make([]int, len(ls))
		in := 0
		for k, l := range ls {
			var sv int
			effs[k], sv = sp.split(l)
			in += sv
		}
		size := sp.sum(s).lines - in
		// A statement of several lists (an if-else chain, a switch) still too long: its
		// longest lists move whole.
		for size > sp.lim.lines && len(ls) > 1 {
			k := -1
			for j := range ls {
				if effs[j] >= sp.lim.min && (k < 0 || effs[j] > effs[k]) {
					k = j
				}
			}
			if k < 0 {
				break
			}
			eff := effs[k]
			effs[k] = 0
			if !sp.closedList(ls[k]) {
				continue
			}
			r := sp.move(ls[k])
			call := 1
			if r.ret {
				call = 3
			}
			size -= eff - call
			in += eff - call
		}
		sizes[i] = size
		total += size
		saved += in
	}
	if total <= sp.lim.lines {
		return total, saved
	}
	// The longest closed run of at most sp.lim.lines lines (and at least sp.lim.min) moves,
	// then the next longest among the statements left, until the list fits: long runs first,
	// so that few calls take the list's place.
	moved := make([]bool, len(list))
	for total > sp.lim.lines {
		bi, bj, bestLines := -1, -1, 0
		for i := range list {
			run := newSum()
			lines := 0
			for j := i; j < len(list) && !moved[j]; j++ {
				run.add(sp.sum(list[j]))
				lines += sizes[j]
				if lines > sp.lim.lines {
					break
				}
				if lines >= sp.lim.min && lines > bestLines && sp.closed(run) {
					bi, bj, bestLines = i, j, lines
				}
			}
		}
		if bi < 0 {
			break
		}
		r := sp.move(list[bi : bj+1])
		for k := bi; k <= bj; k++ {
			moved[k] = true
		}
		call := 1
		if r.ret {
			call = 3
		}
		total -= bestLines - call
		saved += bestLines - call
	}
	return total, saved
}

// closedList is closed for a whole statement list.
func (sp *splitter) closedList(list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	run := newSum()
	for _, s := range list {
		run.add(sp.sum(s))
	}
	return sp.closed(run)
}

// closed reports whether a run can move: no name it declares is used outside it, no goto
// crosses its boundary, and every name it uses from outside has a known type.
func (sp *splitter) closed(r *runSum) bool {
	if r.decls["s"] {
		return false // the function's own s := (*[N]uint64)(g.S())
	}
	for k := range r.decls {
		if r.uses[k] != sp.uses[k] {
			return false
		}
	}
	for l, n := range r.gotos {
		if !r.labels[l] || sp.gotos[l] != n {
			return false
		}
	}
	for l := range r.labels {
		if sp.gotos[l] != r.gotos[l] {
			return false
		}
	}
	for k := range r.uses {
		if !r.decls[k] && sp.typeOf[k] == "" {
			return false
		}
	}
	return true
}

// move records a closed run as a function of its own.
func (sp *splitter) move(stmts []ast.Stmt) *splitRun {
	sum := newSum()
	for _, s := range stmts {
		sum.add(sp.sum(s))
	}
	sp.n++
	r := &splitRun{name: sp.fn + strconv.Itoa(sp.n), stmts: stmts, start: stmts[0].Pos(), end: stmts[len(stmts)-1].End(), ret: sum.ret}
	var free []string
	for k := range sum.uses {
		if !sum.decls[k] {
			free = append(free, k)
		}
	}
	sort.Strings(free)
	for _, k := range free {
		t := sp.typeOf[k]
		r.params = append(r.params, splitParam{name: k, typ: t, ptr: sum.writes[k] || strings.HasPrefix(t, "[")})
	}
	sp.runs = append(sp.runs, r)
	return r
}

// render returns the source between start and end with the runs inside it (not inside
// another run inside it) replaced by their calls; in, when rendering run in's own body, makes
// its pointer parameters read through their pointers and its returns return true.
func (sp *splitter) render(start, end token.Pos, in *splitRun) string {
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	ptr := map[string]bool{}
	if in != nil {
		for _, p := range in.params {
			ptr[p.name] = p.ptr
		}
	}
	var inner []*splitRun
	for _, r := range sp.runs {
		if r != in && r.start >= start && r.end <= end {
			inner = append(inner, r)
		}
	}
	// Keep the outermost.
	var top []*splitRun
	for _, r := range inner {
		nested := false
		for _, o := range inner {
			if o != r && o.start <= r.start && r.end <= o.end {
				nested = true
				break
			}
		}
		if !nested {
			top = append(top, r)
		}
	}
	covered := func(p token.Pos) bool {
		for _, r := range top {
			if r.start <= p && p < r.end {
				return true
			}
		}
		return false
	}
	for _, r := range top {
		var args []string
		args = append(args, "g", "s")
		for _, pr := range r.params {
			switch {
			case pr.ptr && ptr[pr.name]:
				args = append(args, pr.name)
			case pr.ptr:
				args = append(args, "&"+pr.name)
			case ptr[pr.name]:
				args = append(args, "*"+pr.name)
			default:
				args = append(args, pr.name)
			}
		}
		call := fmt.Sprintf("p.%s(%s)", r.name, strings.Join(args, ", "))
		if r.ret {
			ret := "return"
			if in != nil && in.ret {
				ret = "return true"
			}
			call = fmt.Sprintf("if %s {\n%s\n}", call, ret)
		}
		edits = append(edits, edit{sp.off(r.start), sp.off(r.end), call})
	}
	// The body of a run: pointer parameters read through their pointers, returns return true.
	if in != nil {
		for _, s := range in.stmts {
			ast.Inspect(s, func(n ast.Node) bool {
				if n == nil || covered(n.Pos()) {
					return false
				}
				switch x := n.(type) {
				case *ast.SelectorExpr:
					ast.Inspect(x.X, func(m ast.Node) bool {
						if id, ok := m.(*ast.Ident); ok && ptr[id.Name] && !covered(id.Pos()) {
							edits = append(edits, edit{sp.off(id.Pos()), sp.off(id.End()), "(*" + id.Name + ")"})
						}
						return true
					})
					return false
				case *ast.BranchStmt:
					return false
				case *ast.Ident:
					if ptr[x.Name] {
						edits = append(edits, edit{sp.off(x.Pos()), sp.off(x.End()), "(*" + x.Name + ")"})
					}
				case *ast.ReturnStmt:
					if in.ret {
						edits = append(edits, edit{sp.off(x.Pos()), sp.off(x.End()), "return true"})
					}
				}
				return true
			})
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].from < edits[j].from })
	var b strings.Builder
	at := sp.off(start)
	for _, e := range edits {
		b.Write(sp.src[at:e.from])
		b.WriteString(e.text)
		at = e.to
	}
	b.Write(sp.src[at:sp.off(end)])
	return b.String()
}

func (sp *splitter) text(n ast.Node) string { return string(sp.src[sp.off(n.Pos()):sp.off(n.End())]) }

// inferType infers the Go type of local name from its declaration; "" when it cannot.
func (sp *splitter) inferType(name string, depth int) string {
	if t, ok := sp.typeOf[name]; ok && t != "" {
		return t
	}
	if depth > 50 {
		return ""
	}
	switch d := sp.decl[name].(type) {
	case *ast.ValueSpec:
		if d.Type != nil {
			return sp.text(d.Type)
		}
		for i, id := range d.Names {
			if id.Name == name && i < len(d.Values) {
				return sp.exprType(d.Values[i], depth+1)
			}
		}
	case *ast.AssignStmt:
		for i, l := range d.Lhs {
			id, ok := l.(*ast.Ident)
			if !ok || id.Name != name {
				continue
			}
			if len(d.Rhs) == len(d.Lhs) {
				return sp.exprType(d.Rhs[i], depth+1)
			}
			if len(d.Rhs) == 1 {
				if ts := sp.multiType(d.Rhs[0]); i < len(ts) {
					return ts[i]
				}
			}
		}
	}
	return ""
}

// multiType is the result types of the engine calls the generator assigns to two names.
func (sp *splitter) multiType(e ast.Expr) []string {
	switch sp.callName(e) {
	case "g.Apply", "g.Extract":
		return []string{"int", "bool"}
	}
	return nil
}

// callName is "x.f" for a call of x.f, "f" for a call of f, "" otherwise.
func (sp *splitter) callName(e ast.Expr) string {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return ""
	}
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
		if _, ok := f.X.(*ast.IndexExpr); ok {
			return "[]." + f.Sel.Name // p.r[i].Get64
		}
		if x, ok := f.X.(*ast.SelectorExpr); ok {
			if xx, ok := x.X.(*ast.Ident); ok {
				return xx.Name + "." + x.Sel.Name + "." + f.Sel.Name // binary.BigEndian.Uint64
			}
		}
	}
	return ""
}

// exprType infers the Go type of an expression of the generated code; "" when it cannot.
func (sp *splitter) exprType(e ast.Expr, depth int) string {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.INT {
			return "int"
		}
	case *ast.Ident:
		switch x.Name {
		case "true", "false":
			return "bool"
		}
		if _, ok := sp.decl[x.Name]; ok {
			return sp.inferType(x.Name, depth+1)
		}
	case *ast.ParenExpr:
		return sp.exprType(x.X, depth)
	case *ast.UnaryExpr:
		switch x.Op {
		case token.NOT:
			return "bool"
		case token.XOR, token.SUB:
			return sp.exprType(x.X, depth)
		}
	case *ast.BinaryExpr:
		switch x.Op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ, token.LAND, token.LOR:
			return "bool"
		case token.SHL, token.SHR:
			return sp.exprType(x.X, depth)
		}
		if _, lit := x.X.(*ast.BasicLit); !lit {
			if t := sp.exprType(x.X, depth); t != "" {
				return t
			}
		}
		return sp.exprType(x.Y, depth)
	case *ast.IndexExpr:
		switch a := x.X.(type) {
		case *ast.Ident:
			if a.Name == "s" {
				return "uint64"
			}
			if t := sp.exprType(a, depth); strings.HasPrefix(t, "[") {
				return t[strings.IndexByte(t, ']')+1:]
			}
		case *ast.SelectorExpr:
			if sp.text(a) == "p.c" {
				return "uint64"
			}
		}
	case *ast.CallExpr:
		switch n := sp.callName(x); n {
		case "uint64", "int", "bool", "byte":
			return n
		case "g.Arg", "g.Random", "g.ReadDirectMeter", "g.ExecuteMeter", "[].Get32", "[].Get64",
			"engine.B2U", "engine.Sel", "engine.HashCRC32", "engine.HashCRC16", "engine.HashCsum16",
			"engine.HashXor16", "engine.HashIdentity", "engine.RandomIn", "binary.BigEndian.Uint64":
			return "uint64"
		case "g.In", "g.Emit", "g.Scratch", "g.Packed", "g.WithPayload":
			return "[]byte"
		case "g.Packer":
			return "*engine.BitPacker"
		case "g.Failed", "g.Logging":
			return "bool"
		}
	}
	return ""
}
