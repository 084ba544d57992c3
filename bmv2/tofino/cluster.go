package tofino

import (
	"fmt"
	"sort"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// ClusterDemand is the largest group of fields of one gress that the compiler must place
// together: bf-p4c's largest super cluster, as this package estimates it. bf-p4c ties the
// operands of each match-action instruction into a cluster (a field written from another sits
// in containers of the same size, aligned or rotated), and the fields of each header into a
// slice list (deparsed in order, container after container); clusters that share a slice
// list form a super cluster, and its PHV allocator slices each super cluster into container-
// sized pieces by a depth-first search over all of its slice lists at once (phv/slicing). The
// search's work grows with the super cluster: a program whose headers are all copied into one
// another makes one super cluster of them all, and bf-p4c can spend hours slicing it
// (docs/dataplane.md, "Where it stands").
type ClusterDemand struct {
	Bits    int      // its bits (of a field, the bits in the group: a field's slices can be in different groups)
	Fields  int      // fields with bits in it (valid bits not counted)
	Headers []string // the headers among them, sorted
}

// String is "B bits, F fields, H headers (h1, h2, ...)".
func (c ClusterDemand) String() string {
	return fmt.Sprintf("%d bits, %d fields, %d headers (%s)", c.Bits, c.Fields, len(c.Headers), strings.Join(c.Headers, ", "))
}

// clusters collects what ties fields together while a gress is walked, bit by bit, as bf-p4c
// ties field slices: a field written from another (an assignment in the control, a variable's
// initializer) ties each written bit to the bit it is written from (a slice, a concatenation, a
// cast and a shift by a constant move bits; an arithmetic or logic operation ties its operands'
// bits at the same positions); a parameter an action or function is called with stands for its
// arguments; a condition's comparison of two fields for equality ties them (a gateway XORs the
// two: compareTies). Other conditions, table keys and what an extern is handed (a hash's inputs,
// a register action's index) are not ties: the gateway, the match and the input crossbar read
// them wherever they are.
type clusters struct {
	ties  []tie
	args  map[string][]bits // parameter node -> the bits of its arguments at every call
	whole map[string]bool   // nodes an adder or a subtracter writes: not split (bf-p4c's no_split)
	// solitary are the nodes bf-p4c gives a container of their own (phv/cluster_phv_operations.cpp):
	// what a non-move instruction (an add, a subtract, a shift) writes, and a shift's source.
	// A header's slice list breaks around them.
	solitary map[string]bool
	htype    map[string]*front.StructType // a header's path -> its type
	// lhs are the expressions assignments write; read the nodes some other expression of the
	// gress reads (a field written and never read is dead: bf-p4c removes the write, and it
	// ties nothing).
	lhs  map[front.Expr]bool
	read map[string]bool
}

// bits are bits lo..lo+n-1 of node, placed at position at of what they are part of.
type bits struct {
	node      string
	lo, n, at int
}

// tie is bits at..at+src.n-1 of the written node dst, written from src's bits.
type tie struct {
	dst string
	at  int
	src bits
}

func newClusters() *clusters {
	return &clusters{args: map[string][]bits{}, whole: map[string]bool{}, solitary: map[string]bool{},
		htype: map[string]*front.StructType{}, lhs: map[front.Expr]bool{}, read: map[string]bool{}}
}

// clusterBody records the ties of the statements under s (walked in the control: not the
// parser's, whose writes are extractions, and not a register action's, which the stateful ALU
// computes).
func (w *phvWalk) clusterBody(s front.Stmt) {
	front.InspectStmts(s, func(x front.Stmt) {
		switch x := x.(type) {
		case *front.AssignStmt:
			w.tie(x.LHS, x.RHS)
		case *front.DeclStmt:
			if v, ok := x.Decl.(*front.VarDecl); ok && v.Init != nil {
				w.tieNode(varNode(v), 0, front.WidthOf(v.T), v.Init)
			}
		case *front.CallStmt:
			w.callTies(x.Call)
		case *front.IfStmt:
			w.compareTies(x.Cond)
		}
	})
}

// compareTies records the fields a condition compares for equality with one another: a gateway
// compares two fields by XORing them, and bf-p4c aligns the two in one cluster as it does an
// instruction's operands (phv/make_clusters.cpp, CollectGatewayFields' xor_with). A field
// compared with a constant ties nothing. An order of two fields (<, >) is left out: what
// bf-p4c makes of it is not modeled.
func (w *phvWalk) compareTies(cond front.Expr) {
	front.InspectExpr(cond, func(e front.Expr) {
		b, ok := e.(*front.BinaryExpr)
		if !ok || b.Op != "==" && b.Op != "!=" {
			return
		}
		x, at := unslice(b.X, nil)
		if node, ok := w.node(x); ok {
			for _, o := range w.operands(b.Y, 0, front.WidthOf(b.X.Type()), nil) {
				w.cl.ties = append(w.cl.ties, tie{dst: node, at: at + o.at, src: o})
			}
		}
	})
}

// tie records that the bits lhs denotes are written from what rhs reads.
func (w *phvWalk) tie(lhs, rhs front.Expr) {
	n := front.WidthOf(lhs.Type())
	lhs, at := unslice(lhs, func(e front.Expr) { w.cl.lhs[e] = true })
	if node, ok := w.node(lhs); ok {
		w.tieNode(node, at, n, rhs)
	}
}

// unslice returns the expression under e's slices (e when it is no slice) and the bit of it
// e starts at; each, when not nil, sees e and every expression under it on the way down.
func unslice(e front.Expr, each func(front.Expr)) (front.Expr, int) {
	at := 0
	for {
		if each != nil {
			each(e)
		}
		s, ok := e.(*front.SliceExpr)
		if !ok {
			return e, at
		}
		at += s.LoV
		e = s.X
	}
}

// tieNode ties bits at..at+n-1 of node to what rhs reads.
func (w *phvWalk) tieNode(node string, at, n int, rhs front.Expr) {
	for _, b := range w.operands(rhs, 0, n, nil) {
		w.cl.ties = append(w.cl.ties, tie{dst: node, at: at + b.at, src: b})
	}
	if arith(rhs) {
		w.cl.whole[node] = true
	}
	if b, ok := rhs.(*front.BinaryExpr); ok && (arith(rhs) || b.Op == "<<" || b.Op == ">>") {
		w.cl.solitary[node] = true
	}
	front.InspectExpr(rhs, func(e front.Expr) {
		switch e := e.(type) {
		case *front.BinaryExpr: // a shift's source is solitary
			if e.Op == "<<" || e.Op == ">>" {
				for _, o := range w.operands(e.X, 0, front.WidthOf(e.X.Type()), nil) {
					w.cl.solitary[o.node] = true
				}
			}
		case *front.CallExpr: // an action or function called for its value: its arguments
			w.callTies(e)
		}
	})
}

// arith reports whether e's value comes from an adder or a subtracter.
func arith(e front.Expr) bool {
	b, ok := e.(*front.BinaryExpr)
	return ok && (b.Op == "+" || b.Op == "-" || b.Op == "|+|" || b.Op == "|-|")
}

// callTies records the arguments of a call to an action or function: bf-p4c inlines the
// callee, and its parameters become the arguments.
func (w *phvWalk) callTies(c *front.CallExpr) {
	switch c.Callee.(type) {
	case *front.ActionDecl, *front.FunctionDecl:
	default:
		return
	}
	for i, a := range c.Ordered {
		if a == nil || i >= len(c.Params) || isAggregate(c.Params[i].T) {
			continue
		}
		p := paramNode(c.Params[i])
		w.cl.args[p] = append(w.cl.args[p], w.operands(a.Value, 0, front.WidthOf(c.Params[i].T), nil)...)
	}
}

// operands appends the bits e reads into a value of n bits, placed at position at: fields,
// variables and parameters, not what a call (an extern's method, isValid) is handed nor a
// conditional's condition. Bits shifted or cut out of the n bits are left out.
func (w *phvWalk) operands(e front.Expr, at, n int, out []bits) []bits {
	if n <= 0 {
		return out
	}
	switch e := e.(type) {
	case *front.CallExpr:
		return out
	case *front.TernaryExpr:
		return w.operands(e.Else, at, n, w.operands(e.Then, at, n, out))
	case *front.CastExpr:
		return w.operands(e.X, at, n, out)
	case *front.UnaryExpr:
		return w.operands(e.X, at, n, out)
	case *front.SliceExpr:
		return moved(w.operands(e.X, 0, front.WidthOf(e.X.Type()), nil), -e.LoV, min(n, e.HiV-e.LoV+1), at, out)
	case *front.BinaryExpr:
		switch e.Op {
		case "++":
			wy := front.WidthOf(e.Y.Type())
			out = w.operands(e.Y, at, min(n, wy), out)
			return w.operands(e.X, at+wy, n-wy, out)
		case "<<", ">>":
			v := constBig(e.Y)
			if v == nil || !v.IsInt64() || v.Int64() < 0 || v.Int64() > 1<<16 {
				return w.operands(e.X, at, n, out)
			}
			shift := int(v.Int64())
			if e.Op == ">>" {
				shift = -shift
			}
			return moved(w.operands(e.X, 0, front.WidthOf(e.X.Type()), nil), shift, n, at, out)
		case "==", "!=", "<", ">", "<=", ">=", "&&", "||":
			return out // a comparison: a gateway's
		}
		return w.operands(e.Y, at, n, w.operands(e.X, at, n, out))
	}
	node, ok := w.node(e)
	if !ok {
		return out
	}
	if wd := front.WidthOf(e.Type()); wd < n {
		n = wd
	}
	return append(out, bits{node: node, n: n, at: at})
}

// moved appends the bits of inner (placed in a value of their own) moved by shift positions (a
// slice's low bound taken off, a shift's amount), keeping what lands in positions 0..m-1, and
// placed from position at on.
func moved(inner []bits, shift, m, at int, out []bits) []bits {
	for _, b := range inner {
		lo, hi := max(b.at+shift, 0), min(b.at+b.n-1+shift, m-1)
		if lo > hi {
			continue
		}
		out = append(out, bits{node: b.node, lo: b.lo + lo - (b.at + shift), n: hi - lo + 1, at: at + lo})
	}
	return out
}

// node names the scalar field, variable or parameter e denotes.
func (w *phvWalk) node(e front.Expr) (string, bool) {
	if isAggregate(e.Type()) {
		return "", false
	}
	if n, ok := e.(*front.NameExpr); ok {
		switch d := n.Decl.(type) {
		case *front.VarDecl:
			return varNode(d), true
		case *front.Param:
			if _, isStruct := d.T.(*front.StructType); !isStruct {
				return paramNode(d), true
			}
		}
	}
	if p, _, ok := w.path(e); ok {
		return p, true
	}
	return "", false
}

// containerSizes marks solitary the fields a @pa_container_size annotation of the control
// names (bf-p4c: "solitary(pragma_container_size)"): the annotation fixes the field's
// containers, and its header's slice list breaks around it. The field is named through the
// control's parameter ("hdr.ans.txn"); the annotation's gress is not checked against the
// control's.
func (w *phvWalk) containerSizes(control *front.ControlDecl) {
	for _, a := range control.Annos {
		if a.Name != "pa_container_size" {
			continue
		}
		var name string
		for _, t := range a.Args {
			if t.Kind == front.TString {
				name = t.Text
			}
		}
		first, rest, ok := strings.Cut(name, ".")
		if !ok {
			continue
		}
		for _, p := range control.Params {
			if st, ok := p.T.(*front.StructType); ok && p.Name == first {
				w.cl.solitary[st.Decl.Name+"."+rest] = true
			}
		}
	}
}

// markRead records that the walk met e somewhere other than as an assignment's target.
func (w *phvWalk) markRead(e front.Expr) {
	if w.cl == nil || w.cl.lhs[e] {
		return
	}
	if n, ok := w.node(e); ok {
		w.cl.read[n] = true
	}
}

// inHeader reports whether node is a header's field (the deparser reads every one).
func (w *phvWalk) inHeader(node string) bool {
	for h := range w.headers {
		if strings.HasPrefix(node, h+".") {
			return true
		}
	}
	return false
}

func varNode(v *front.VarDecl) string { return fmt.Sprintf("var %s@%s", v.Name, v.P) }

func paramNode(p *front.Param) string { return fmt.Sprintf("param %s@%s", p.Name, p.P) }

// resolve maps b, bits of a node, to bits of fields: a parameter's bits are its arguments'.
func (cl *clusters) resolve(b bits, seen map[string]bool, out []bits) []bits {
	if !strings.HasPrefix(b.node, "param ") {
		return append(out, b)
	}
	if seen[b.node] {
		return out
	}
	seen[b.node] = true
	defer delete(seen, b.node)
	for _, a := range cl.args[b.node] {
		// a covers the parameter's bits a.at..a.at+a.n-1; keep what b reads of them.
		lo, hi := max(a.at, b.lo), min(a.at+a.n-1, b.lo+b.n-1)
		if lo > hi {
			continue
		}
		out = cl.resolve(bits{node: a.node, lo: a.lo + lo - a.at, n: hi - lo + 1, at: b.at + lo - b.lo}, seen, out)
	}
	return out
}

// bit is bit i of a field (or of a header's slice list).
type bit struct {
	node string
	i    int
}

// unionFind joins bits into groups.
type unionFind map[bit]bit

func (u unionFind) find(x bit) bit {
	p, ok := u[x]
	if !ok || p == x {
		return x
	}
	r := u.find(p)
	u[x] = r
	return r
}

func (u unionFind) union(a, b bit) {
	if ra, rb := u.find(a), u.find(b); ra != rb {
		u[ra] = rb
	}
}

// instructionTies joins the bits the walk's instructions tie: each written bit to the bit it is
// written from (a parameter standing for its arguments; a dead write tying nothing), and the
// bits of a field an adder reads or writes (not split: one container).
func (w *phvWalk) instructionTies(u unionFind) {
	seen := map[string]bool{}
	for _, t := range w.cl.ties {
		for _, d := range w.cl.resolve(bits{node: t.dst, lo: t.at, n: t.src.n, at: 0}, seen, nil) {
			if !w.cl.read[d.node] && !w.inHeader(d.node) {
				continue // a dead write (to the field an out parameter stands for, too)
			}
			// d: bits d.lo.. of a field are the tie's written bits at d.at..
			src := bits{node: t.src.node, lo: t.src.lo + d.at, n: d.n}
			for _, s := range w.cl.resolve(src, seen, nil) {
				for i := range s.n {
					u.union(bit{d.node, d.lo + s.at + i}, bit{s.node, s.lo + i})
				}
			}
		}
	}
	for k, f := range w.fields {
		if w.cl.whole[k] {
			for i := range f.bits {
				u.union(bit{k, i}, bit{k, 0})
			}
		}
	}
}

// largest is the largest group of the walk's counted fields tied together, bit by bit, by an
// instruction or a header (whose fields the deparser emits in order: one slice list). A field
// an adder reads or writes is not split: its bits are tied. A parameter stands for its
// arguments; one no call gives a field (action data, a constant) ties nothing.
func (w *phvWalk) largest() ClusterDemand {
	u := unionFind{}
	w.instructionTies(u)
	// A header's fields: its slice lists, the runs of fields between solitary ones (a solitary
	// field is one of its own), as the deparser emits them in order. A field an adder writes:
	// one container.
	header := map[string]string{}
	for h, st := range w.cl.htype {
		list := 0
		for _, f := range st.Fields {
			k := h + "." + f.Name
			pf := w.fields[k]
			if pf == nil {
				continue
			}
			header[k] = h
			if w.cl.solitary[k] {
				list++
			}
			for i := range pf.bits {
				u.union(bit{k, i}, bit{fmt.Sprintf("%s.$slicelist%d", h, list), 0})
			}
			if w.cl.solitary[k] {
				list++
			}
		}
	}
	type group struct {
		ClusterDemand
		fs, hs map[string]bool
	}
	groups := map[bit]*group{}
	for k, f := range w.fields {
		if f.parserOnly || strings.HasSuffix(k, ".$valid") {
			continue
		}
		for i := range f.bits {
			r := u.find(bit{k, i})
			g := groups[r]
			if g == nil {
				g = &group{fs: map[string]bool{}, hs: map[string]bool{}}
				groups[r] = g
			}
			g.Bits++
			g.fs[k] = true
			if h, ok := header[k]; ok {
				g.hs[h] = true
			}
		}
	}
	// The largest; of equal ones, the one with more headers, then the first by its headers'
	// names (the same answer on every run).
	var best *group
	for _, g := range groups {
		g.Fields = len(g.fs)
		for h := range g.hs {
			g.Headers = append(g.Headers, shortHeader(h))
		}
		sort.Strings(g.Headers)
		if best == nil || g.Bits > best.Bits || g.Bits == best.Bits && (len(g.Headers) > len(best.Headers) ||
			len(g.Headers) == len(best.Headers) && strings.Join(g.Headers, ",") < strings.Join(best.Headers, ",")) {
			best = g
		}
	}
	if best == nil {
		return ClusterDemand{}
	}
	return best.ClusterDemand
}

// ClusterWidth is the widest cluster of instruction operands of a gress: the most fields its
// instructions tie at one bit (a written bit to the bit it is written from, an adder's operands
// whole). bf-p4c places the operands of an instruction at one alignment (or a rotation of it) in
// containers of one MAU group (phv/make_clusters.h), so each of these fields takes a container of
// its own in that group, and a group has PHVCapacity.Group containers of a size: a cluster wider
// than that is allocated only if the compiler overlays some of its fields (live ranges that
// never meet), and it stays unallocated with twice the containers (more groups, none larger).
type ClusterWidth struct {
	Fields int      // fields with a bit at the widest bit
	Names  []string // their names, sorted ("size", "admin.head", a local variable's name: two locals may share one)
}

// String is "F fields (a, b, ...)", at most eight names.
func (c ClusterWidth) String() string {
	names := c.Names
	more := ""
	if len(names) > 8 {
		names, more = names[:8], ", ..."
	}
	return fmt.Sprintf("%d fields (%s%s)", c.Fields, strings.Join(names, ", "), more)
}

// widest is the walk's n widest clusters of instruction operands (ClusterWidth), widest first:
// of equal width, the first by their names (the same answer on every run). A cluster appears
// once however many bits it spans.
func (w *phvWalk) widest(n int) []ClusterWidth {
	u := unionFind{}
	w.instructionTies(u)
	groups := map[bit]map[string]bool{}
	for k, f := range w.fields {
		if f.parserOnly || strings.HasSuffix(k, ".$valid") {
			continue
		}
		for i := range f.bits {
			r := u.find(bit{k, i})
			if groups[r] == nil {
				groups[r] = map[string]bool{}
			}
			groups[r][k] = true
		}
	}
	var all []ClusterWidth
	dup := map[string]bool{}
	for _, g := range groups {
		keys := make([]string, 0, len(g))
		for k := range g {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		key := strings.Join(keys, ",")
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = fieldName(k)
		}
		sort.Strings(names)
		if len(names) < 2 || dup[key] {
			continue // a field alone, or the same fields at another bit
		}
		dup[key] = true
		all = append(all, ClusterWidth{Fields: len(names), Names: names})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Fields != all[j].Fields {
			return all[i].Fields > all[j].Fields
		}
		return strings.Join(all[i].Names, ",") < strings.Join(all[j].Names, ",")
	})
	return all[:min(n, len(all))]
}

// fieldName is a field's name for a report: its path after the parameter's type ("size" of
// "metadata_t.size", "admin.head"), and a local variable's name.
func fieldName(k string) string {
	if v, ok := strings.CutPrefix(k, "var "); ok {
		if i := strings.IndexByte(v, '@'); i >= 0 {
			v = v[:i]
		}
		return v
	}
	return shortHeader(k)
}

// shortHeader drops the parameter type from a header's path: "headers_t.ans" is "ans".
func shortHeader(h string) string {
	if i := strings.IndexByte(h, '.'); i >= 0 {
		return h[i+1:]
	}
	return h
}
