package tofino

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// PHV capacity of one pipe, in bits, as bf-p4c's device description has it
// (backends/tofino/bf-p4c/specs/phv_spec.cpp): Tofino 1 has 64 8-bit, 96 16-bit and 64 32-bit
// containers the match-action stages can read and write (4096 bits) and 2048 bits of tagalong
// containers that only the parser and deparser reach; Tofino 2 has 80, 120 and 80 (5120 bits,
// mocha and dark containers among them) and no tagalong containers. Ingress and egress share
// them: each container belongs to one gress.
var (
	Tofino1PHV = PHVCapacity{MAU: 64*8 + 96*16 + 64*32, Tagalong: 32*8 + 48*16 + 32*32, Group: 16}
	Tofino2PHV = PHVCapacity{MAU: 80*8 + 120*16 + 80*32, Group: 16}
)

// PHVCapacity is a generation's PHV per pipe, in bits.
type PHVCapacity struct {
	MAU      int // containers the match-action stages read and write
	Tagalong int // containers only the parser and deparser reach (Tofino 1)
	// Group is the containers of one size in one MAU group that an instruction's operands can
	// take (bf-p4c's specs/phv_spec.cpp: Tofino 1's groups of 16; Tofino 2's of 12 normal and 4
	// mocha containers, its 4 dark ones holding no operand): ClusterWidth's bound.
	Group int
}

// PHVDemand is what one gress's fields ask of the PHV before the compiler overlays any: every
// field its parser, control and deparser use, each once, at its declared width, and a valid bit
// per header. It is neither bound on what bf-p4c allocates: the compiler overlays fields that
// are never live together (headers no parse path extracts together, metadata whose live ranges
// do not meet) and drops fields nothing reads, which lowers it; it rounds fields up to
// containers and adds temporaries of its own, which raise it.
type PHVDemand struct {
	Bits    int // every field the gress uses
	MAUBits int // of Bits, the fields its control reads or writes (keys, actions, conditions, register action inputs), local variables included
	Fields  int // fields counted, valid bits included
	// Cluster is the largest group of fields the compiler must place together (ClusterDemand);
	// zero in a pass's demand (PassPHV).
	Cluster ClusterDemand
	// Widest are the widest clusters of instruction operands (ClusterWidth), at most four,
	// widest first; none in a pass's demand. Above PHVCapacity.Group fields the compiler must
	// overlay some of a cluster's fields.
	Widest []ClusterWidth
	// ByRoot is Bits by what the fields belong to: a header ("header_t.ethernet"), a struct
	// field of a parameter's struct ("metadata_t.sv"), a parameter's struct's scalar fields
	// ("metadata_t"), or the local variables ("locals").
	ByRoot map[string]int
}

// String is the demand as "B bits (M by the control)".
func (d PHVDemand) String() string {
	return fmt.Sprintf("%d bits (%d by the control)", d.Bits, d.MAUBits)
}

// Roots lists ByRoot, the largest first, as "name bits" items.
func (d PHVDemand) Roots() []string {
	names := make([]string, 0, len(d.ByRoot))
	for n := range d.ByRoot {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if d.ByRoot[names[i]] != d.ByRoot[names[j]] {
			return d.ByRoot[names[i]] > d.ByRoot[names[j]]
		}
		return names[i] < names[j]
	})
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%s %d", n, d.ByRoot[n])
	}
	return out
}

// GressPHV counts the PHV demand of one gress: its parser, its control (with everything the
// control reaches: its locals, the actions, functions, tables and controls it applies, the
// register actions it executes) and its deparser. Fields are identified by the struct or
// header type of the parameter they are reached through and their path in it (a struct handed
// to a callee: the argument's), so a field the parser writes and the control reads counts
// once. A field only the parser uses is not counted, nor a field of a header nothing makes
// valid; a struct variable counts by the fields used (calibrated against bf-p4c's phv.json:
// docs/dataplane.md, "The real compiler").
func GressPHV(parser *front.ParserDecl, control, deparser *front.ControlDecl) PHVDemand {
	return gressPHV(parser, control, deparser, nil)
}

// gressPHV is GressPHV; with pass non-nil, the control's own statements are walked as one pass
// (passwalk.go) and only what that pass reaches counts.
func gressPHV(parser *front.ParserDecl, control, deparser *front.ControlDecl, pass map[string]uint64) PHVDemand {
	// The walk binds a struct parameter to the argument of the first call it meets; a body
	// can be walked before its call site (a control's actions are declared before its apply
	// block), so the walk repeats with the bindings of the previous one until they are stable
	// (a chain of calls needs one round a link).
	var w *phvWalk
	bind := map[*front.Param]phvPath{}
	for range 8 {
		w = &phvWalk{fields: map[string]*phvField{}, seen: map[front.Decl]bool{}, skip: map[front.Expr]bool{},
			noPHV: map[*front.Param]bool{}, bind: bind, next: map[*front.Param]phvPath{}, headers: map[string]bool{},
			valid: map[string]bool{}}
		if pass == nil {
			w.cl = newClusters()
		}
		if parser != nil {
			w.parser = true
			w.decl(parser)
			w.parser = false
		}
		if control != nil {
			w.mau = true
			if pass != nil {
				w.passControl(control, pass)
			} else {
				w.decl(control)
			}
			w.mau = false
		}
		if deparser != nil {
			w.seen = map[front.Decl]bool{} // a deparser may call what the control called: its own uses
			w.decl(deparser)
		}
		if maps.Equal(w.next, bind) {
			break
		}
		bind = w.next
	}
	// A header of a parameter's struct that the parser never extracts and the control never
	// makes valid is never valid: the deparser emits nothing of it and bf-p4c allocates none
	// of it.
	for h := range w.headers {
		if w.valid[h] {
			continue
		}
		for k := range w.fields {
			if strings.HasPrefix(k, h+".") {
				delete(w.fields, k)
			}
		}
	}
	d := PHVDemand{ByRoot: map[string]int{}}
	if w.cl != nil {
		if control != nil {
			w.containerSizes(control)
		}
		d.Cluster = w.largest()
		d.Widest = w.widest(4)
	}
	for _, f := range w.fields {
		if f.parserOnly {
			continue
		}
		d.Bits += f.bits
		d.Fields++
		d.ByRoot[f.root] += f.bits
		if f.mau {
			d.MAUBits += f.bits
		}
	}
	return d
}

type phvField struct {
	bits int
	root string
	mau  bool
	// parserOnly: every use is the parser's (an extract, a select). bf-p4c allocates no PHV to
	// such a field: its parser matches on the input buffer, and nothing after the parser reads
	// the field (the intrinsic metadata a parser extracts and the control does not read, a
	// header the deparser does not emit).
	parserOnly bool
}

type phvPath struct{ p, root string }

type phvWalk struct {
	fields map[string]*phvField
	seen   map[front.Decl]bool
	skip   map[front.Expr]bool      // inner parts of a field path already counted, whole-struct arguments of inlined calls
	noPHV  map[*front.Param]bool    // a register action's register cell and result
	bind   map[*front.Param]phvPath // a struct or header parameter: the argument it was given
	next   map[*front.Param]phvPath // the bindings this walk makes, for the next
	mau    bool                     // walking the control
	parser bool                     // walking the parser
	pass   map[string]uint64        // walking the control as one pass (passwalk.go): the flags' values
	// headers are the headers below a parameter's struct the gress uses; valid those it
	// extracts or makes valid.
	headers, valid map[string]bool
	cl             *clusters // the ties between fields (cluster.go); nil when walking a pass
}

func (w *phvWalk) add(key, root string, bits int) {
	f := w.fields[key]
	if f == nil {
		f = &phvField{bits: bits, root: root, parserOnly: w.parser}
		w.fields[key] = f
	}
	f.mau = f.mau || w.mau
	f.parserOnly = f.parserOnly && w.parser
}

// decl walks d once: its expressions, its local variables, and what it calls.
func (w *phvWalk) decl(d front.Decl) {
	if d == nil || w.seen[d] {
		return
	}
	w.seen[d] = true
	var bodies []front.Stmt
	switch d := d.(type) {
	case *front.InstanceDecl:
		w.cells(d)
	case *front.ControlDecl:
		// Its locals are walked with it (InspectDecl): the register cells of its register
		// actions are marked first, its actions' variables counted.
		for _, l := range d.Locals {
			switch l := l.(type) {
			case *front.VarDecl:
				w.local(l)
				if l.Init != nil && w.clustering() {
					w.tieNode(varNode(l), 0, front.WidthOf(l.T), l.Init)
				}
			case *front.InstanceDecl:
				w.cells(l)
			default:
				if b := bodyOf(l); b != nil {
					bodies = append(bodies, b)
				}
			}
		}
		if d.Body != nil {
			bodies = append(bodies, d.Body)
		}
	case *front.ParserDecl:
		for _, l := range d.Locals {
			if v, ok := l.(*front.VarDecl); ok {
				w.local(v)
			}
		}
		for _, s := range d.States {
			bodies = append(bodies, s.Stmts...)
		}
	default:
		if b := bodyOf(d); b != nil {
			bodies = append(bodies, b)
		}
	}
	for _, b := range bodies {
		front.InspectVars(b, w.local)
		if w.clustering() {
			w.clusterBody(b)
		}
	}
	front.InspectDecl(d, w.expr)
}

// clustering reports whether the walk records ties between fields: in the control (the
// match-action stages), not in a pass's walk.
func (w *phvWalk) clustering() bool { return w.cl != nil && w.mau && w.pass == nil }

// bodyOf is an action's or a function's body, or nil.
func bodyOf(d front.Decl) front.Stmt {
	switch d := d.(type) {
	case *front.ActionDecl:
		if d.Body != nil {
			return d.Body
		}
	case *front.FunctionDecl:
		if d.Body != nil {
			return d.Body
		}
	}
	return nil
}

// cells marks the parameters of an instance's initializer (RegisterAction.apply's register
// cell and result): not PHV.
func (w *phvWalk) cells(d *front.InstanceDecl) {
	for _, m := range d.Init {
		for _, p := range m.Params {
			w.noPHV[p] = true
		}
	}
}

// local counts a scalar variable of a control, parser, action or function: bf-p4c gives it a
// metadata field. A struct or header variable counts by the fields that are used (path), as
// bf-p4c leaves the others unallocated.
func (w *phvWalk) local(v *front.VarDecl) {
	if isAggregate(v.T) || w.pass != nil {
		return // a pass counts a scalar variable where it uses it (path)
	}
	if bits := front.WidthOf(v.T); bits > 0 {
		w.add(fmt.Sprintf("var %s@%s", v.Name, v.P), "locals", bits)
	}
}

func (w *phvWalk) expr(e front.Expr) {
	if w.skip[e] {
		if m, ok := e.(*front.MemberExpr); ok {
			w.skip[m.X] = true
		}
		return
	}
	switch e := e.(type) {
	case *front.CallExpr:
		w.call(e)
	case *front.NameExpr:
		switch d := e.Decl.(type) {
		case *front.ActionDecl, *front.TableDecl, *front.InstanceDecl, *front.FunctionDecl:
			w.decl(d)
		case *front.Param, *front.VarDecl:
			w.markRead(e)
			w.field(e)
		}
	case *front.MemberExpr:
		if e.Kind == front.MemberField {
			w.markRead(e)
			w.field(e)
		}
	}
}

func (w *phvWalk) call(c *front.CallExpr) {
	switch callee := c.Callee.(type) {
	case *front.ActionDecl, *front.FunctionDecl, *front.ControlDecl, *front.TableDecl:
		// Its body is walked; a struct or header handed to it whole is counted where the
		// body uses its fields, under the argument's name: the parameter is bound to the
		// argument (a callee applied at several places with different arguments counts its
		// fields under the first, an approximation), so that a local struct a control hands
		// to a sub-control counts once.
		for i, a := range c.Ordered {
			if a == nil || i >= len(c.Params) || !isAggregate(a.Value.Type()) {
				continue
			}
			if _, ok := w.next[c.Params[i]]; !ok {
				if p, root, ok := w.path(a.Value); ok {
					w.next[c.Params[i]] = phvPath{p, root}
				}
			}
		}
		w.decl(callee)
		for _, a := range c.Args {
			if isAggregate(a.Value.Type()) {
				w.skip[a.Value] = true
			}
		}
	}
	m, ok := c.Fun.(*front.MemberExpr)
	if !ok || m.Kind != front.MemberMethod {
		return
	}
	switch c.Method {
	case "isValid", "setValid", "setInvalid":
		if p, root, ok := w.path(m.X); ok {
			w.add(p+".$valid", root, 1)
			w.valid[p] = w.valid[p] || c.Method == "setValid"
		}
		w.skip[m.X] = true
	}
	if m.Name == "extract" && len(c.Args) > 0 {
		if p, _, ok := w.path(c.Args[0].Value); ok {
			w.valid[p] = true
		}
	}
}

// isAggregate reports whether t is a struct, header or header union.
func isAggregate(t front.Type) bool {
	_, ok := t.(*front.StructType)
	return ok
}

// field counts the field (or every field under the struct or header) e denotes.
func (w *phvWalk) field(e front.Expr) {
	p, root, ok := w.path(e)
	if !ok {
		return
	}
	if m, ok := e.(*front.MemberExpr); ok {
		w.skip[m.X] = true
	}
	w.leaves(p, root, e.Type(), 1)
}

// leaves counts the fields of a value of type t at path p (n copies: a header stack's).
func (w *phvWalk) leaves(p, root string, t front.Type, n int) {
	switch t := t.(type) {
	case *front.StructType:
		if t.IsHeader() {
			w.add(p+".$valid", root, n)
			if strings.Contains(p, ".") {
				w.headers[p] = true
				if w.cl != nil {
					w.cl.htype[p] = t
				}
			}
		}
		for _, f := range t.Fields {
			r := root
			if isAggregate(f.T) && r == p0(p) {
				r = p + "." + f.Name // a header or struct of the parameter's struct: a root of its own
			}
			w.leaves(p+"."+f.Name, r, f.T, n)
		}
	case *front.StackType:
		w.leaves(p+"[]", root, t.Elem, n*t.Size)
	default:
		if bits := front.WidthOf(t); bits > 0 {
			w.add(p, root, bits*n)
		}
	}
}

// p0 is a path's first element (the parameter's type).
func p0(p string) string {
	if i := strings.IndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return p
}

// path names a field by the type of the parameter (or the variable) it is reached through and
// the fields after it; root is what the field belongs to (see PHVDemand.ByRoot). It fails for
// what is not PHV: action data, a register cell, a value a function is given.
func (w *phvWalk) path(e front.Expr) (p, root string, ok bool) {
	switch e := e.(type) {
	case *front.NameExpr:
		switch d := e.Decl.(type) {
		case *front.Param:
			if b, ok := w.bind[d]; ok {
				return b.p, b.root, true
			}
			st, isStruct := d.T.(*front.StructType)
			if !isStruct || d.Dir == front.DirNone || w.noPHV[d] {
				return "", "", false // action data; a scalar parameter (its argument is counted); a register cell
			}
			return st.Decl.Name, st.Decl.Name, true
		case *front.VarDecl:
			if _, isStruct := d.T.(*front.StructType); !isStruct && w.pass == nil {
				return "", "", false // a scalar local: counted as declared
			}
			return fmt.Sprintf("var %s@%s", d.Name, d.P), "locals", true
		}
	case *front.MemberExpr:
		if e.Kind != front.MemberField {
			return "", "", false
		}
		q, root, ok := w.path(e.X)
		if !ok {
			return "", "", false
		}
		if st, ok := e.X.Type().(*front.StructType); ok && st.IsHeader() && strings.Contains(q, ".") {
			w.headers[q] = true
			if w.cl != nil {
				w.cl.htype[q] = st
			}
		}
		if root == p0(q) && isAggregate(e.Type()) {
			root = q + "." + e.Name
		}
		return q + "." + e.Name, root, true
	case *front.IndexExpr:
		q, root, ok := w.path(e.X)
		return q + "[]", root, ok
	}
	return "", "", false
}

// ProgramEstimate is the estimate of one Pipeline of a TNA program under one generation's
// resources (a pipe of the chip runs it, with its own stages, logical tables, stateful ALUs
// and PHV). The stage figures are the larger of the ingress's and the egress's (they share the
// pipe's stages), the stateful ALUs and SRAM blocks their sums; PHV is each gress's demand
// (ingress first).
type ProgramEstimate struct {
	Res Resources
	// Pipeline is the Pipeline's name (front.TNAPipe.Name), its index in Switch's arguments
	// Index.
	Pipeline                           string
	Index                              int
	Ingress, Egress                    *Layout
	Floor, FloorStages, Folded, Placed int // Layout's Floor, FloorStages, FoldedStages, Stages
	SALUs, Blocks                      int
	PHV                                [2]PHVDemand
	Gateways                           []GatewayProblem // ingress's, then egress's (Gateways)
	// Graphs are the ingress's and the egress's table dependency graphs (TableGraph), Chain
	// the larger of their critical paths.
	Graphs [2]*Graph
	Chain  int
	// Logical is each gress's logical tables: its tables and the gateways that merge with
	// none (Graph.LogicalTables).
	Logical [2][2]int
	// HashDist is what the tables of both gresses take of hash distribution (hashdist.go).
	HashDist HashDistUse
}

// LogicalTotal is the logical tables of both gresses, which share a stage's IDs.
func (e *ProgramEstimate) LogicalTotal() int {
	return e.Logical[0][0] + e.Logical[0][1] + e.Logical[1][0] + e.Logical[1][1]
}

// pipeOf is the first pipe of c, a checked TNA program.
func pipeOf(c *front.Checked) (*front.TNAPipe, error) {
	pipes, err := c.TNAPipes()
	if err != nil {
		return nil, err
	}
	if len(pipes) == 0 {
		return nil, fmt.Errorf("the program has no pipe")
	}
	return pipes[0], nil
}

// EstimateProgram analyzes the first Pipeline of c (a checked TNA program) under res: the
// program's one Pipeline, which bf-p4c's binary loads into every pipe (EstimatePipelines
// analyzes each of a program of several).
func EstimateProgram(c *front.Checked, res Resources) (*ProgramEstimate, error) {
	p, err := pipeOf(c)
	if err != nil {
		return nil, err
	}
	return estimatePipe(c, p, 0, res)
}

// EstimatePipelines analyzes every Pipeline of c's Switch (a checked TNA program) under res,
// in Switch's order: each runs in a pipe of its own (Switch(pipe0, pipe1), bf_switchd's pipe
// scopes), with its own resources, so each is estimated as a whole pipe.
func EstimatePipelines(c *front.Checked, res Resources) ([]*ProgramEstimate, error) {
	pipes, err := c.TNAPipes()
	if err != nil {
		return nil, err
	}
	if len(pipes) == 0 {
		return nil, fmt.Errorf("the program has no pipe")
	}
	var es []*ProgramEstimate
	for i, p := range pipes {
		e, err := estimatePipe(c, p, i, res)
		if err != nil {
			return nil, fmt.Errorf("pipeline %s: %w", p.Name, err)
		}
		es = append(es, e)
	}
	return es, nil
}

// estimatePipe analyzes pipeline p, the i-th of c's Switch, under res: its controls as p's
// instances of them leave them (Specialize), so that nothing an instance's constructor
// arguments drop counts.
func estimatePipe(c *front.Checked, p *front.TNAPipe, i int, res Resources) (*ProgramEstimate, error) {
	e := &ProgramEstimate{Res: res, Pipeline: p.Name, Index: i}
	ig, eg := Specialize(p.Ingress, c.Const), Specialize(p.Egress, c.Const)
	for i, b := range []front.Block{p.Ingress, p.Egress} {
		ctl := [2]*front.ControlDecl{ig, eg}[i]
		l, err := Analyze(ctl, res)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		if i == 0 {
			e.Ingress = l
		} else {
			e.Egress = l
		}
		g, err := TableGraph(ctl, c.Const)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		e.Graphs[i] = g
		e.Chain = max(e.Chain, g.Stages)
		e.Logical[i][0], e.Logical[i][1] = g.LogicalTables()
		e.Floor = max(e.Floor, l.Floor)
		e.FloorStages = max(e.FloorStages, l.FloorStages)
		e.Folded = max(e.Folded, l.FoldedStages)
		e.Placed = max(e.Placed, l.Stages)
		e.SALUs += l.SALUs
		e.Blocks += l.Blocks
	}
	e.HashDist = HashDistOf(e.Graphs[0], e.Graphs[1])
	e.Gateways = append(Gateways(ig, c.Const), Gateways(eg, c.Const)...)
	e.PHV[0] = GressPHV(SpecializeParser(p.IngressParser, c.Const), ig, Specialize(p.IngressDeparser, c.Const))
	e.PHV[1] = GressPHV(SpecializeParser(p.EgressParser, c.Const), eg, Specialize(p.EgressDeparser, c.Const))
	return e, nil
}

// Text is the estimate as netlock p4 tofino prints it.
func (e *ProgramEstimate) Text() string {
	var b strings.Builder
	r := e.Res
	fmt.Fprintf(&b, "%s: %d stages, %d stateful ALUs and %d SRAM blocks per stage, %d PHV bits the stages reach",
		r.Name, r.Stages, r.SALUs, r.SRAMBlocks, r.PHV.MAU)
	if r.PHV.Tagalong > 0 {
		fmt.Fprintf(&b, " + %d tagalong", r.PHV.Tagalong)
	}
	fmt.Fprintf(&b, "\ncritical path of the table dependency graph (bf-p4c's, as modelled): %d stages (ingress %d, egress %d)",
		e.Chain, e.Graphs[0].Stages, e.Graphs[1].Stages)
	if e.Chain > r.Stages {
		fmt.Fprintf(&b, ": more than the pipe's %d, no layout of one pass fits", r.Stages)
	}
	lt, sb := e.LogicalTotal(), StageBound(e.Graphs[0], e.Graphs[1])
	fmt.Fprintf(&b, "\nlogical tables (bf-p4c's, as modelled): %d of the pipe's %d (%d a stage): ingress %d tables and %d gateways that merge with none, egress %d and %d; by their earliest stages at least %d stages",
		lt, r.Stages*LogicalIDs, LogicalIDs, e.Logical[0][0], e.Logical[0][1], e.Logical[1][0], e.Logical[1][1], sb)
	if lt > r.Stages*LogicalIDs || sb > r.Stages {
		fmt.Fprintf(&b, ": more than the pipe's %d, no layout of one pass fits", r.Stages)
	}
	hd := e.HashDist
	fmt.Fprintf(&b, "\nhash distribution (bf-p4c's, as modelled: %d units of 16 bits a stage in %d hash functions of three, ingress and egress together): %d tables ask for %d units, %d pairs among them (two units of one hash function: a hash wider than 16 bits as data, a meter's index); by the tables' earliest and latest stages at least %d stages, %d if no two tables share a unit",
		HashDistUnits, HashDistPairs, hd.Tables, hd.Units, hd.Pairs, hd.Bound, hd.Apart)
	if hd.Bound > r.Stages {
		fmt.Fprintf(&b, ": more than the pipe's %d, no layout of one pass fits", r.Stages)
	}
	fmt.Fprintf(&b, "\nstages by dependencies between values: %d counting operations only (%d placed), %d with decisions folded, %d counting every computing assignment\n",
		e.Floor, e.FloorStages, e.Folded, e.Placed)
	// The value model's known error, that no reader takes its counts for the compiler's.
	b.WriteString("  (the value model's counts can be far below the compiler's: bf-p4c orders tables by what they\n" +
		"   read and write, not by values; the critical path above models that: docs/dataplane.md, \"Stages\")\n")
	fmt.Fprintf(&b, "stateful ALUs: %d of %d; SRAM blocks (registers): %d of %d\n",
		e.SALUs, r.Stages*r.SALUs, e.Blocks, r.Stages*r.SRAMBlocks)
	for i, g := range []string{"ingress", "egress"} {
		fmt.Fprintf(&b, "PHV demand, %s: %v, %d fields; largest: %s\n", g, e.PHV[i], e.PHV[i].Fields,
			strings.Join(firstN(e.PHV[i].Roots(), 6), ", "))
	}
	for i, g := range []string{"ingress", "egress"} {
		fmt.Fprintf(&b, "largest super cluster (fields tied by instructions and headers), %s: %v\n", g, e.PHV[i].Cluster)
	}
	for i, g := range []string{"ingress", "egress"} {
		for j, w := range e.PHV[i].Widest {
			if j > 0 && w.Fields <= r.PHV.Group {
				break
			}
			fmt.Fprintf(&b, "cluster of operands (fields one MAU group of %d containers of a size must hold), %s: %v\n", r.PHV.Group, g, w)
			if w.Fields > r.PHV.Group {
				fmt.Fprintf(&b, "  wider than a MAU group: allocated only if the compiler overlays %d of its fields\n", w.Fields-r.PHV.Group)
			}
		}
	}
	total := e.PHV[0].Bits + e.PHV[1].Bits
	if ig := e.PHV[0].MAUBits; ig > r.PHV.MAU {
		fmt.Fprintf(&b, "PHV: the ingress's control reads or writes %d bits, the stages reach %d: the compiler must overlay fields that are never live together to allocate them\n",
			ig, r.PHV.MAU)
	}
	if capacity := r.PHV.MAU + r.PHV.Tagalong; total > capacity {
		fmt.Fprintf(&b, "PHV: the two gresses ask for %d bits before overlay, the pipe has %d: the compiler must overlay fields that are never live together to allocate them\n",
			total, capacity)
	}
	if e.FloorStages > r.Stages {
		fmt.Fprintf(&b, "stages: even counting operations only, the program needs %d stages, the pipe has %d\n", e.FloorStages, r.Stages)
	}
	if len(e.Gateways) > 0 {
		fmt.Fprintf(&b, "gateways: %d if conditions a gateway cannot evaluate (bf-p4c: \"condition too complex\"):\n", len(e.Gateways))
		for _, g := range e.Gateways {
			fmt.Fprintf(&b, "  %v\n", g)
		}
	}
	return b.String()
}

// ChainText is the ingress's critical path, a table a line: its stage, name, source line and
// the dependency that puts it there.
func (e *ProgramEstimate) ChainText() string {
	var b strings.Builder
	for i, g := range e.Graphs {
		fmt.Fprintf(&b, "%s: critical path %d stages\n", []string{"ingress", "egress"}[i], g.Stages)
		chainText(&b, g)
	}
	return b.String()
}

// chainText writes g's critical path, a table a line with the dependency that places it.
func chainText(b *strings.Builder, g *Graph) {
	for _, t := range g.Chain() {
		by := ""
		if t.By != nil {
			by = fmt.Sprintf(" (%s after %s)", t.ByK, t.By.Name)
		}
		fmt.Fprintf(b, "  %2d  %s  %s%s\n", t.Stage, t.Name, t.P, by)
	}
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}
