package engine

import (
	"errors"
	"fmt"
	"go/format"
	"path"
	"reflect"
	"strconv"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// The Go backend: GenerateGo compiles a checked v1model program into the Go source of a
// package that declares the program's six blocks as a pipeline (engine.Generated, bound by
// passing it in Config.Generated) with the program's Fingerprint. The generated code is
// straight-line Go over the same flat slot state as the interpreter (headers, user metadata and
// standard_metadata at the interpreter's slots, so the traffic manager, clone/resubmit field
// lists and the runtime API are shared); locals, parameters and temporaries are Go variables,
// constants are folded (also through the parameters of actions and functions called with
// constant arguments), actions, functions and sub-controls are inlined, a table application is
// a key store, one lookup in the engine and a Go switch over the table's actions, and headers
// are extracted and emitted with constant shifts over 8-byte big-endian words. A constant whose
// value depends on a parameter of the program (a -D value, front.IntLit.Param) is not folded:
// the code reads it from a field Bind sets from the switch's program (Switch.GenConst), so one
// generated pipeline serves every value of the parameters. The inlined blocks are then split
// into functions of readable size (splitFuncs, gogen_split.go). What it does not support it
// refuses with an error wrapping ErrGenUnsupported that names the construct and its
// file:line:col.

// ErrGenUnsupported is wrapped by GenerateGo's errors for a construct the Go backend does not
// compile (the interpreter still runs such programs).
var ErrGenUnsupported = errors.New("not supported by the Go backend")

// GenOptions configures GenerateGo.
type GenOptions struct {
	// Package is the generated package's name (default "main").
	Package string
	// Name is the pipeline's Go identifier and name (default "pipeline"; engine.Generated.Name);
	// a package may hold several pipelines of different names.
	Name string
	// Source names the program in the generated file's header (e.g. the command's arguments).
	Source string
	// Generate, if set, is the command of the file's //go:generate line.
	Generate string

	// split, if set, replaces splitLines and splitMinLines (tests).
	split splitLimits
}

type genRefusal struct{ err error }

// GenerateGo compiles a checked v1model program to gofmt'ed Go source (see the comment at the
// top of this file).
func GenerateGo(checked *front.Checked, opts GenOptions) (src []byte, err error) {
	if opts.Package == "" {
		opts.Package = "main"
	}
	if opts.Name == "" {
		opts.Name = "pipeline"
	}
	if !isGoIdent(opts.Name) || !isGoIdent(opts.Package) {
		return nil, fmt.Errorf("%w: package %q and pipeline name %q must be Go identifiers", ErrInvalid, opts.Package, opts.Name)
	}
	if checked.Arch() == front.ArchTNA {
		return nil, fmt.Errorf("%s: %w: TNA programs", programName(checked), ErrGenUnsupported)
	}
	sw, err := Load(checked, Config{Pipeline: PipelineInterpreted})
	if err != nil {
		return nil, err
	}
	gn := &gen{checked: checked, sw: sw, opts: opts,
		regIdx: map[*Register]int{}, ctrIdx: map[*Counter]int{}, mtrIdx: map[*Meter]int{}, tblIdx: map[*Table]int{},
		paramIdx: map[front.Expr]int{}, pinned: map[front.Expr]bool{}, pdep: map[front.Expr]bool{}}
	var exprs []front.Expr
	gn.fp, exprs = fingerprintExprs(checked)
	gn.exprIdx = make(map[front.Expr]int, len(exprs))
	for i, e := range exprs {
		if _, ok := gn.exprIdx[e]; !ok {
			gn.exprIdx[e] = i
		}
	}
	gn.cp = &compiler{checked: checked, sw: sw, sizes: map[front.Type]int{}, errCodes: map[*front.EnumMember]int{}}
	for i, m := range checked.ErrorMembers {
		gn.cp.errCodes[m] = i
	}
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case genRefusal:
				src, err = nil, e.err
			case aliasPanic:
				src, err = nil, e.err
			case compileError:
				src, err = nil, e.err
			default:
				panic(r)
			}
		}
	}()
	return gn.program()
}

func isGoIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

type gen struct {
	checked *front.Checked
	sw      *Switch
	cp      *compiler
	opts    GenOptions
	b       *strings.Builder
	n       int
	root    *gsc

	regs    []*Register
	regIdx  map[*Register]int
	ctrs    []*Counter
	ctrIdx  map[*Counter]int
	mtrs    []*Meter
	mtrIdx  map[*Meter]int
	tbls    []*Table
	tblIdx  map[*Table]int
	tblActs [][]string
	fls     [][]int
	flIdx   map[uint64]int

	nslots int      // slots of headers, metadata and standard metadata (what the code indexes)
	outs   []string // the clearing of out parameters bound by the current call (flushOuts)
	exits  []*gexit // calls inlined with copy-in/copy-out, innermost last
	active []aliasRange
	lazy   int // > 0 inside a right operand of && / || or a ternary arm
	usesBE bool

	// The program's parameters (paramRead, pin): fp is its Fingerprint and exprIdx the index of
	// each expression in it (what Switch.GenConst takes); params are the constant expressions
	// that depend on a parameter, read at run time from p.c[paramIdx[e]]; pins are those the
	// code folds anyway (Bind checks the switch's value is the folded one); pdep caches
	// paramDep.
	fp       string
	exprIdx  map[front.Expr]int
	params   []front.Expr
	paramIdx map[front.Expr]int
	pins     []front.Expr
	pinned   map[front.Expr]bool
	pdep     map[front.Expr]bool
}

func (gn *gen) refuse(pos front.Pos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if pos.Line > 0 {
		panic(genRefusal{fmt.Errorf("%s: %w: %s", pos, ErrGenUnsupported, msg)})
	}
	panic(genRefusal{fmt.Errorf("%w: %s", ErrGenUnsupported, msg)})
}

func (gn *gen) p(format string, args ...any) {
	fmt.Fprintf(gn.b, format, args...)
	gn.b.WriteByte('\n')
}

func (gn *gen) tmp(prefix string) string {
	gn.n++
	return prefix + strconv.Itoa(gn.n)
}

// ---- scopes ----

type gbKind uint8

const (
	gbLoc gbKind = iota + 1
	gbConst
	gbReg
	gbCounter
	gbMeter
	gbTable
	gbInst
	gbPacket
)

// gloc is where a value lives: slots of an array (the packet's state "s" or a local array),
// or, for a scalar, a Go variable.
type gloc struct {
	arr  string
	base int
	v    string
	t    front.Type
}

func (l gloc) ref() string {
	if l.arr == "" {
		return l.v
	}
	return l.arr + "[" + strconv.Itoa(l.base) + "]"
}

type gb struct {
	kind gbKind
	loc  gloc
	val  uint64
	// pe, for a constant declaration whose value depends on a parameter of the program, is the
	// value's expression: uses read it at run time (paramRead); val is its value when
	// generated.
	pe   front.Expr
	idx  int
	obj  any
	inst *ginst
	// A parameter bound to its argument's location (inout, out, composite in): the binding
	// the argument was reached through (nil: a block parameter or a local), so that an access
	// through a parameter bound from it is not taken for an alias.
	byRef bool
	via   *gb
}

// aliasRange is the location of a parameter bound by reference while its callee's body is
// generated: an access to it through any other name would see the argument change under
// copy-in/copy-out semantics (or not see it), so such a call is generated again with copies
// (gen.inline).
type aliasRange struct {
	b *gb
	l gloc
	n int
}

type ginst struct {
	decl   *front.ControlDecl
	static *gsc
}

// gret is the end of an inlined body (action, function, control apply): return jumps there.
type gret struct {
	label string
	used  bool
	v     string // a function's result variable
	w     int
}

type gsc struct {
	parent *gsc
	m      map[front.Decl]*gb
	prefix string
	ctrl   *front.ControlDecl // set on the scope of a control apply
	ret    *gret
}

func (s *gsc) child() *gsc { return &gsc{parent: s, m: map[front.Decl]*gb{}, prefix: s.prefix} }

func (s *gsc) lookup(d front.Decl) *gb {
	for ; s != nil; s = s.parent {
		if b, ok := s.m[d]; ok {
			return b
		}
	}
	return nil
}

func (s *gsc) retOf() *gret {
	for ; s != nil; s = s.parent {
		if s.ret != nil {
			return s.ret
		}
	}
	return nil
}

// ---- the program ----

func (gn *gen) program() ([]byte, error) {
	v1, err := gn.checked.V1Switch()
	if err != nil {
		return nil, err
	}
	sw := gn.sw
	gn.nslots = sw.smBase + sw.smN
	gn.root = &gsc{m: map[front.Decl]*gb{}}
	for _, d := range gn.checked.Program.Decls {
		switch d := d.(type) {
		case *front.ConstDecl:
			if v, ok := gn.cp.valueU128(d.Val); ok {
				gn.root.m[d] = gn.constBinding(d, v.lo)
			}
		case *front.InstanceDecl:
			if d == gn.checked.Main {
				continue
			}
			if _, ok := d.T.(*front.ExternType); ok {
				gn.instance(gn.root, d)
			}
		}
	}
	var body strings.Builder
	hT := v1.Parser.Parser.Params[1].T
	_ = hT
	regions := []gloc{{arr: "s", base: sw.hdrBase}, {arr: "s", base: sw.metaBase}, {arr: "s", base: sw.smBase}}
	block := func(name string, b front.Block, order []int) {
		gn.b = &body
		var params, ctor []*front.Param
		if b.Parser != nil {
			params, ctor = b.Parser.Params, b.Parser.CtorParams
		} else {
			params, ctor = b.Control.Params, b.Control.CtorParams
		}
		if len(ctor) > 0 {
			gn.refuse(b.Args[0].P, "constructor parameters of %s", b.Name())
		}
		static := &gsc{parent: gn.root, m: map[front.Decl]*gb{}, prefix: cpName("", nil, b.Name())}
		binds := map[front.Decl]*gb{}
		for i, p := range params {
			if i < len(order) && order[i] >= 0 {
				l := regions[order[i]]
				l.t = p.T
				binds[p] = &gb{kind: gbLoc, loc: l}
			} else {
				binds[p] = &gb{kind: gbPacket}
			}
		}
		gn.p("func (p *%s) %s(g *engine.Gen) {", gn.opts.Name, name)
		gn.p("s := (*[%d]uint64)(g.S())", gn.nslots)
		gn.p("_ = s")
		if b.Parser != nil {
			gn.parser(static, b.Parser, binds)
		} else {
			gn.staticControl(static, b.Control)
			gn.applyControl(&ginst{decl: b.Control, static: static}, b.Control.P,
				func(bool, *[]string) map[front.Decl]*gb { return binds })
		}
		gn.p("}")
		gn.p("")
	}
	block("parser", v1.Parser, []int{-1, 0, 1, 2})
	block("verify", v1.VerifyChecksum, []int{0, 1})
	block("ingress", v1.Ingress, []int{0, 1, 2})
	block("egress", v1.Egress, []int{0, 1, 2})
	block("compute", v1.ComputeChecksum, []int{0, 1})
	block("deparser", v1.Deparser, []int{-1, 0})

	var out strings.Builder
	gn.b = &out
	name := gn.opts.Name
	src := gn.opts.Source
	if src == "" {
		src = programName(gn.checked)
	}
	gn.p("// Code generated by netlock p4 gen-go from %s; DO NOT EDIT.", src)
	gn.p("")
	if gn.opts.Generate != "" {
		gn.p("//go:generate %s", gn.opts.Generate)
		gn.p("")
	}
	gn.p("//lint:file-ignore SA4006 constant folding leaves some values unused (a register read an action overwrites)")
	gn.p("")
	gn.p("package %s", gn.opts.Package)
	gn.p("")
	gn.p("import (")
	if gn.usesBE {
		gn.p("\"encoding/binary\"")
	}
	gn.p("\"github.com/netlock-go/netlock/bmv2/engine\"")
	gn.p(")")
	gn.p("")
	exp := strings.ToUpper(name[:1]) + name[1:]
	gn.p("// %sPipeline is the pipeline: engine.Config{Generated: %sPipeline} runs the program on it.", exp, exp)
	gn.p("var %sPipeline = engine.Generated{Name: %q, Bind: %sBind}", exp, name, exp)
	gn.p("")
	gn.p("// %sFingerprint is engine.Fingerprint of the program this pipeline was generated from (its", exp)
	gn.p("// parameters' values left out).")
	gn.p("const %sFingerprint = %q", exp, gn.fp)
	gn.p("")
	gn.p("// %sLayout is the engine.Switch GenLayout the pipeline was generated against.", exp)
	gn.p("const %sLayout = %q", exp, gn.sw.GenLayout())
	gn.p("")
	gn.p("// %s holds the runtime objects of a switch the pipeline is bound to.", name)
	gn.p("type %s struct {", name)
	gn.p("t [%d]*engine.Table", len(gn.tbls))
	gn.p("r [%d]*engine.Register", len(gn.regs))
	gn.p("k [%d]*engine.Counter", len(gn.ctrs))
	gn.p("m [%d]*engine.Meter", len(gn.mtrs))
	gn.p("fl [%d]int", len(gn.fls))
	if len(gn.params) > 0 {
		gn.p("// c holds the values, in the bound switch's program, of the constant expressions that")
		gn.p("// depend on the program's parameters (its -D values): set by Bind (engine.Switch.GenConst).")
		gn.p("c [%d]uint64", len(gn.params))
	}
	gn.p("}")
	gn.p("")
	gn.p("// %sBind binds the pipeline to a switch loaded from the same program, with any values of its", exp)
	gn.p("// parameters (an engine.GenBinder).")
	gn.p("func %sBind(sw *engine.Switch) (engine.GenBlocks, error) {", exp)
	gn.p("p := &%s{}", name)
	gn.p("var err error")
	gn.p("_ = err")
	gn.p("if err := sw.GenCheck(%sFingerprint, %sLayout); err != nil { return engine.GenBlocks{}, err }", exp, exp)
	for i, e := range gn.params {
		if !strings.Contains(body.String(), fmt.Sprintf("p.c[%d]", i)) {
			continue // read, then folded (pinned, below)
		}
		v, _, _ := constValue(gn.checked, gn.cp, e)
		gn.p("// %s", gn.paramNote(e, v))
		gn.p("if p.c[%d], err = sw.GenConst(%d); err != nil { return engine.GenBlocks{}, err }", i, gn.exprIdx[e])
	}
	for _, e := range gn.pins {
		v, _, _ := constValue(gn.checked, gn.cp, e)
		gn.p("// %s, folded", gn.paramNote(e, v))
		gn.p("if err = sw.GenConstIs(%d, %#x); err != nil { return engine.GenBlocks{}, err }", gn.exprIdx[e], v)
	}
	for i, t := range gn.tbls {
		gn.p("if p.t[%d], err = sw.GenTable(%q); err != nil { return engine.GenBlocks{}, err }", i, t.Name)
		var qs []string
		for _, a := range gn.tblActs[i] {
			qs = append(qs, strconv.Quote(a))
		}
		gn.p("if err = p.t[%d].GenTableActions(%s); err != nil { return engine.GenBlocks{}, err }", i, strings.Join(qs, ", "))
	}
	for i, r := range gn.regs {
		gn.p("if p.r[%d], err = sw.GenRegister(%q); err != nil { return engine.GenBlocks{}, err }", i, r.Name)
	}
	for i, k := range gn.ctrs {
		gn.p("if p.k[%d], err = sw.GenCounter(%q); err != nil { return engine.GenBlocks{}, err }", i, k.Name)
	}
	for i, m := range gn.mtrs {
		gn.p("if p.m[%d], err = sw.GenMeter(%q); err != nil { return engine.GenBlocks{}, err }", i, m.Name)
	}
	for i, fl := range gn.fls {
		var xs []string
		for _, x := range fl {
			xs = append(xs, strconv.Itoa(x))
		}
		gn.p("p.fl[%d] = sw.GenFieldList(%s)", i, strings.Join(xs, ", "))
	}
	gn.p("return engine.GenBlocks{Parser: p.parser, Verify: p.verify, Ingress: p.ingress, Egress: p.egress, Compute: p.compute, Deparser: p.deparser}, nil")
	gn.p("}")
	gn.p("")
	out.WriteString(body.String())
	res, err := format.Source([]byte(out.String()))
	if err != nil {
		return []byte(out.String()), fmt.Errorf("engine: the generated Go does not parse (a generator bug): %w", err)
	}
	res, err = splitFuncs(res, gn.opts.Name, []string{"parser", "verify", "ingress", "egress", "compute", "deparser"}, gn.opts.split)
	if err != nil {
		return res, fmt.Errorf("engine: splitting the generated functions (a generator bug): %w", err)
	}
	return res, nil
}

// instance binds a local or global instance declaration (as the interpreter names it).
func (gn *gen) instance(sc *gsc, d *front.InstanceDecl) {
	name := cpName(sc.prefix, d.Annos, d.Name)
	switch t := d.T.(type) {
	case *front.ExternType:
		switch t.Decl.Name {
		case "register":
			r, err := gn.sw.GenRegister(name)
			if err != nil {
				gn.refuse(d.P, "register %s", name)
			}
			if r.Width > 64 {
				gn.refuse(d.P, "register %s of %d bits (at most 64)", name, r.Width)
			}
			if _, ok := gn.regIdx[r]; !ok {
				gn.regIdx[r] = len(gn.regs)
				gn.regs = append(gn.regs, r)
			}
			sc.m[d] = &gb{kind: gbReg, idx: gn.regIdx[r], obj: r}
		case "counter", "direct_counter":
			k, err := gn.sw.GenCounter(name)
			if err != nil {
				gn.refuse(d.P, "counter %s", name)
			}
			if _, ok := gn.ctrIdx[k]; !ok {
				gn.ctrIdx[k] = len(gn.ctrs)
				gn.ctrs = append(gn.ctrs, k)
			}
			sc.m[d] = &gb{kind: gbCounter, idx: gn.ctrIdx[k], obj: k}
		case "meter", "direct_meter":
			m, err := gn.sw.GenMeter(name)
			if err != nil {
				gn.refuse(d.P, "meter %s", name)
			}
			if _, ok := gn.mtrIdx[m]; !ok {
				gn.mtrIdx[m] = len(gn.mtrs)
				gn.mtrs = append(gn.mtrs, m)
			}
			sc.m[d] = &gb{kind: gbMeter, idx: gn.mtrIdx[m], obj: m}
		default:
			gn.refuse(d.P, "extern %s", t.Decl.Name)
		}
	case *front.ControlType:
		if len(t.Decl.CtorParams) > 0 {
			gn.refuse(d.P, "constructor parameters of control %s", t.Decl.Name)
		}
		if hasExternParam(t.Decl.Params) {
			gn.refuse(d.P, "extern parameters of control %s", t.Decl.Name)
		}
		inner := &gsc{parent: gn.root, m: map[front.Decl]*gb{}, prefix: name}
		gn.staticControl(inner, t.Decl)
		sc.m[d] = &gb{kind: gbInst, inst: &ginst{decl: t.Decl, static: inner}}
	default:
		gn.refuse(d.P, "instance of %s", d.T)
	}
}

// staticControl binds a control instance's extern instances, sub-controls and tables.
func (gn *gen) staticControl(sc *gsc, d *front.ControlDecl) {
	for _, l := range d.Locals {
		if in, ok := l.(*front.InstanceDecl); ok {
			gn.instance(sc, in)
		}
	}
	for _, l := range d.Locals {
		if td, ok := l.(*front.TableDecl); ok {
			gn.table(sc, td)
		}
	}
}

type gtable struct {
	t    *Table
	decl *front.TableDecl
	acts []gtact
}

type gtact struct {
	decl *front.ActionDecl
	ref  *front.ActionRef
}

func (gn *gen) table(sc *gsc, d *front.TableDecl) {
	name := cpName(sc.prefix, d.Annos, d.Name)
	t, err := gn.sw.GenTable(name)
	if err != nil {
		gn.refuse(d.P, "table %s", name)
	}
	if t.profile != nil {
		gn.refuse(d.P, "table %s with an action profile or selector", name)
	}
	gt := &gtable{t: t, decl: d}
	idx := map[*front.ActionDecl]bool{}
	if p := d.Prop("actions"); p != nil {
		for _, ar := range p.Actions {
			idx[ar.Action] = true
			gt.acts = append(gt.acts, gtact{ar.Action, ar})
		}
	}
	if p := d.Prop("default_action"); p != nil && len(p.Actions) == 1 {
		if ar := p.Actions[0]; !idx[ar.Action] {
			gt.acts = append(gt.acts, gtact{ar.Action, ar})
		}
	} else {
		var na *front.ActionDecl
		for _, g := range gn.checked.Globals["NoAction"] {
			if a, ok := g.(*front.ActionDecl); ok {
				na = a
			}
		}
		if !idx[na] {
			gt.acts = append(gt.acts, gtact{na, nil})
		}
	}
	if len(gt.acts) != len(t.actions) {
		gn.refuse(d.P, "table %s: action list", name)
	}
	if p := d.Prop("key"); p != nil {
		for _, k := range p.Keys {
			if k.MatchKind == "selector" {
				gn.refuse(k.P, "selector keys")
			}
			if widthOf(k.Expr.Type()) > 64 {
				gn.refuse(k.P, "table keys wider than 64 bits")
			}
		}
	}
	if _, ok := gn.tblIdx[t]; !ok {
		gn.tblIdx[t] = len(gn.tbls)
		gn.tbls = append(gn.tbls, t)
		var names []string
		for _, a := range t.actions {
			names = append(names, a.Name)
		}
		gn.tblActs = append(gn.tblActs, names)
	}
	sc.m[d] = &gb{kind: gbTable, idx: gn.tblIdx[t], obj: gt}
}

// applyControl inlines a control's apply block; bind binds its parameters (in the caller's
// scope).
func (gn *gen) applyControl(in *ginst, pos front.Pos, bind func(copyMode bool, outs *[]string) map[front.Decl]*gb) {
	ret := &gret{label: gn.tmp("end")}
	gn.inline(in.decl.Params, ret, bind, func(binds map[front.Decl]*gb) {
		sc := &gsc{parent: in.static, m: binds, prefix: in.static.prefix, ctrl: in.decl, ret: ret}
		for _, l := range in.decl.Locals {
			switch d := l.(type) {
			case *front.VarDecl:
				gn.declVar(sc, d)
			case *front.ConstDecl:
				gn.declConst(sc, d)
			}
		}
		gn.stmts(sc, in.decl.Body.Stmts)
	})
}

// gexit is where an exit statement goes inside the body of a call inlined with
// copy-in/copy-out: set the flag, jump to the copy-out, then exit from there.
type gexit struct {
	flag string
	ret  *gret
	used bool
}

// exitStmt generates an exit statement.
func (gn *gen) exitStmt() {
	if n := len(gn.exits); n > 0 {
		e := gn.exits[n-1]
		e.used, e.ret.used = true, true
		gn.p("%s = true", e.flag)
		gn.p("goto %s", e.ret.label)
		return
	}
	gn.p("return")
}

// aliasPanic is raised when a location is reached through another name than the parameter
// bound to it by reference (gn.active[idx]); the call that bound it catches it and inlines
// itself again with copy-in/copy-out.
type aliasPanic struct {
	idx int
	err error
}

// inline generates an inlined call: bind binds the parameters (by reference, or with
// copy-in/copy-out when copyMode is set, appending the copy-out statements to outs), body
// generates the body with those bindings, ret is its end. The parameters are bound by
// reference first; when the body reaches one of their arguments through another name, the
// call is generated again with copy-in/copy-out (P4's semantics, which by reference only
// matches without aliasing).
func (gn *gen) inline(params []*front.Param, ret *gret, bind func(copyMode bool, outs *[]string) map[front.Decl]*gb, body func(map[front.Decl]*gb)) {
	attempt := func(copyMode bool) (retry bool) {
		saveB, nAct, nOuts, lazy, nEx := gn.b, len(gn.active), len(gn.outs), gn.lazy, len(gn.exits)
		mine := 0
		buf := &strings.Builder{}
		gn.b = buf
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			gn.b = saveB
			ap, ok := r.(aliasPanic)
			if !ok || copyMode || ap.idx < nAct || ap.idx >= nAct+mine {
				panic(r)
			}
			gn.active, gn.outs, gn.lazy, gn.exits = gn.active[:nAct], gn.outs[:nOuts], lazy, gn.exits[:nEx]
			retry = true
		}()
		ret.used = false
		gn.p("{")
		var ex *gexit
		if copyMode {
			ex = &gexit{flag: gn.tmp("ex"), ret: ret}
			gn.p("%s := false", ex.flag)
		}
		var copyOuts []string
		m := bind(copyMode, &copyOuts)
		gn.flushOuts(nOuts)
		for _, p := range params {
			if b := m[p]; b != nil && b.byRef {
				k := 1
				if !isScalar(b.loc.t) {
					k = gn.cp.slotsOf(b.loc.t)
				}
				gn.active = append(gn.active, aliasRange{b: b, l: b.loc, n: k})
				mine++
			}
		}
		if ex != nil {
			gn.exits = append(gn.exits, ex)
		}
		gn.p("{")
		body(m)
		gn.p("}")
		gn.exits = gn.exits[:nEx]
		gn.active = gn.active[:nAct]
		if ret.used {
			gn.p("%s:", ret.label)
		}
		for _, st := range copyOuts {
			gn.p("%s", st)
		}
		if ex != nil {
			if ex.used {
				gn.p("if %s {", ex.flag)
				gn.exitStmt()
				gn.p("}")
			} else {
				gn.p("_ = %s", ex.flag)
			}
		}
		gn.p("}")
		gn.b = saveB
		gn.b.WriteString(buf.String())
		return false
	}
	if attempt(false) {
		attempt(true)
	}
}

func (gn *gen) declConst(sc *gsc, d *front.ConstDecl) {
	v, ok := gn.cp.valueU128(d.Val)
	if !ok || v.hi != 0 {
		gn.refuse(d.P, "constant %s", d.Name)
	}
	sc.m[d] = gn.constBinding(d, v.lo)
}

// constBinding binds a constant declaration: its value, read at run time when it depends on a
// parameter of the program.
func (gn *gen) constBinding(d *front.ConstDecl, v uint64) *gb {
	b := &gb{kind: gbConst, val: v, loc: gloc{t: d.T}}
	if d.Value != nil && gn.paramDep(d.Value) {
		if _, ok := gn.constOf(d.Value); !ok {
			gn.refuse(d.P, "constant %s", d.Name)
		}
		b.pe = d.Value
	}
	return b
}

// declVar declares a local variable: a Go variable for a scalar, a local slot array otherwise.
func (gn *gen) declVar(sc *gsc, d *front.VarDecl) {
	t := d.T
	if isScalar(t) {
		gn.scalarType(d.P, t)
		v := gn.tmp("v")
		init := "0"
		if d.Init != nil {
			init = gn.val(sc, d.Init).s
		}
		gn.p("%s := uint64(%s)", v, init)
		gn.p("_ = %s", v)
		sc.m[d] = &gb{kind: gbLoc, loc: gloc{v: v, t: t}}
		return
	}
	n := gn.cp.slotsOf(t)
	a := gn.tmp("l")
	gn.p("var %s [%d]uint64", a, n)
	gn.p("_ = %s", a)
	l := gloc{arr: a, base: 0, t: t}
	sc.m[d] = &gb{kind: gbLoc, loc: l}
	if d.Init != nil {
		gn.assignComposite(sc, l, d.Init, d.P)
	}
}

func (gn *gen) scalarType(pos front.Pos, t front.Type) {
	if widthOf(t) > 64 {
		gn.refuse(pos, "values wider than 64 bits (%s)", t)
	}
	if signed(t) {
		if _, ok := under(t).(*front.IntType); !ok {
			gn.refuse(pos, "signed values (%s)", t)
		}
	}
}

// ---- statements ----

func (gn *gen) stmts(sc *gsc, ss []front.Stmt) {
	for _, s := range ss {
		gn.stmt(sc, s)
	}
}

func (gn *gen) stmt(sc *gsc, s front.Stmt) {
	switch s := s.(type) {
	case *front.BlockStmt:
		gn.p("{")
		gn.stmts(sc.child(), s.Stmts)
		gn.p("}")
	case *front.EmptyStmt:
	case *front.DeclStmt:
		switch d := s.Decl.(type) {
		case *front.VarDecl:
			gn.declVar(sc, d)
		case *front.ConstDecl:
			gn.declConst(sc, d)
		default:
			gn.refuse(s.P, "local declaration %T", d)
		}
	case *front.AssignStmt:
		gn.assign(sc, s)
	case *front.IfStmt:
		c := gn.cond(sc, s.Cond)
		if c.c {
			if c.v != 0 {
				gn.p("{")
				gn.stmt(sc.child(), s.Then)
				gn.p("}")
			} else if s.Else != nil {
				gn.p("{")
				gn.stmt(sc.child(), s.Else)
				gn.p("}")
			}
			return
		}
		gn.p("if %s {", c.s)
		gn.stmt(sc.child(), s.Then)
		if s.Else != nil {
			gn.p("} else {")
			gn.stmt(sc.child(), s.Else)
		}
		gn.p("}")
	case *front.ExitStmt:
		gn.exitStmt()
	case *front.ReturnStmt:
		r := sc.retOf()
		if r == nil {
			gn.refuse(s.P, "return outside an action, function or control")
		}
		if s.Value != nil {
			if r.v == "" {
				gn.refuse(s.P, "return value")
			}
			gn.p("%s = %s", r.v, gn.val(sc, s.Value).s)
		}
		r.used = true
		gn.p("goto %s", r.label)
	case *front.CallStmt:
		gn.call(sc, s.Call)
	case *front.SwitchStmt:
		gn.switchStmt(sc, s)
	default:
		gn.refuse(s.Position(), "statement %T", s)
	}
}

func (gn *gen) switchStmt(sc *gsc, s *front.SwitchStmt) {
	var sel string
	var labelOf func(e front.Expr) string
	if s.OnActionRun {
		m := s.Expr.(*front.MemberExpr)
		call := m.X.(*front.CallExpr)
		ai, _, gt := gn.applyTable(sc, call, false)
		sel = ai
		labelOf = func(e front.Expr) string {
			n, ok := e.(*front.NameExpr)
			if !ok {
				gn.refuse(e.Position(), "switch label %s", front.ExprString(e))
			}
			for i, a := range gt.acts {
				if a.decl == n.Decl {
					return strconv.Itoa(i)
				}
			}
			gn.refuse(e.Position(), "switch label %s is not an action of the table", front.ExprString(e))
			return ""
		}
	} else {
		x := gn.val(sc, s.Expr)
		sel = x.s
		labelOf = func(e front.Expr) string {
			c := gn.val(sc, e)
			if c.pe != nil {
				return c.s // constant for the bound switch
			}
			if !c.c {
				gn.refuse(e.Position(), "a switch label that is not constant")
			}
			return fmt.Sprintf("%#x", c.v)
		}
	}
	gn.p("switch %s {", sel)
	var pending []string
	for _, c := range s.Cases {
		if c.Default {
			pending = append(pending, "default")
		} else {
			pending = append(pending, labelOf(c.Label))
		}
		if c.Body == nil {
			continue
		}
		var vals []string
		def := false
		for _, l := range pending {
			if l == "default" {
				def = true
			} else {
				vals = append(vals, l)
			}
		}
		switch {
		case def && len(vals) > 0:
			gn.refuse(c.P, "default grouped with labels")
		case def:
			gn.p("default:")
		default:
			gn.p("case %s:", strings.Join(vals, ", "))
		}
		gn.stmt(sc.child(), c.Body)
		pending = nil
	}
	gn.p("}")
}

func (gn *gen) assign(sc *gsc, s *front.AssignStmt) {
	if _, ok := s.LHS.(*front.DontCareExpr); ok {
		x := gn.val(sc, s.RHS)
		gn.p("_ = %s", x.s)
		return
	}
	t := s.LHS.Type()
	if sl, ok := s.LHS.(*front.SliceExpr); ok {
		l := gn.loc(sc, sl.X)
		v := gn.val(sc, s.RHS)
		w := sl.HiV - sl.LoV + 1
		if lo, ok := gn.sliceLo(sl); ok {
			gn.p("%s = %s&^(uint64(%#x)<<(%s)) | (%s)<<(%s)&(uint64(%#x)<<(%s))", l.ref(), l.ref(), mask64(w), lo, typed(v), lo, mask64(w), lo)
			return
		}
		m := mask64(w) << uint(sl.LoV)
		gn.p("%s = %s&^%#x | (%s)<<%d&%#x", l.ref(), l.ref(), m, v.s, sl.LoV, m)
		return
	}
	if isScalar(t) {
		l := gn.loc(sc, s.LHS)
		v := gn.val(sc, s.RHS)
		if v.s != l.ref() { // x = x | 0 folds to nothing
			gn.p("%s = %s", l.ref(), v.s)
		}
		return
	}
	gn.assignComposite(sc, gn.loc(sc, s.LHS), s.RHS, s.P)
}

// assignComposite stores a struct or header value: from another location, a struct
// expression or a list. As the interpreter builds the value in scratch and then copies it,
// every field of the right side is read before any store (so {p.y, p.x} swaps, and an
// isValid() on the right side sees the old validity bit).
func (gn *gen) assignComposite(sc *gsc, dst gloc, e front.Expr, pos front.Pos) {
	var stores []string
	gn.buildComposite(sc, dst, e, pos, &stores)
	for _, st := range stores {
		gn.p("%s", st)
	}
}

// buildComposite emits the reads of e's fields into temporaries and appends the stores into
// dst to stores.
func (gn *gen) buildComposite(sc *gsc, dst gloc, e front.Expr, pos front.Pos, stores *[]string) {
	st, ok := under(dst.t).(*front.StructType)
	if !ok {
		gn.refuse(pos, "assignment of %s", dst.t)
	}
	field := func(fl gloc, v front.Expr) {
		if !isScalar(fl.t) {
			gn.buildComposite(sc, fl, v, pos, stores)
			return
		}
		gn.scalarType(pos, fl.t)
		x := gn.val(sc, v)
		if x.c {
			*stores = append(*stores, fmt.Sprintf("%s = %s", fl.ref(), x.s))
			return
		}
		t := gn.tmp("f")
		gn.p("%s := uint64(%s)", t, x.s)
		*stores = append(*stores, fmt.Sprintf("%s = %s", fl.ref(), t))
	}
	switch x := e.(type) {
	case *front.StructExpr:
		if st.IsHeader() {
			*stores = append(*stores, fmt.Sprintf("%s[%d] = 1", dst.arr, dst.base))
		}
		for _, f := range x.Fields {
			off, ft := gn.cp.fieldOffset(st, f.Name)
			field(gloc{arr: dst.arr, base: dst.base + off, t: ft}, f.Value)
		}
		return
	case *front.ListExpr:
		if st.IsHeader() {
			*stores = append(*stores, fmt.Sprintf("%s[%d] = 1", dst.arr, dst.base))
		}
		for i, f := range st.Fields {
			if i >= len(x.Elems) {
				break
			}
			off, ft := gn.cp.fieldOffset(st, f.Name)
			field(gloc{arr: dst.arr, base: dst.base + off, t: ft}, x.Elems[i])
		}
		return
	}
	src := gn.loc(sc, e)
	n := gn.cp.slotsOf(dst.t)
	if len(*stores) == 0 {
		// A whole copy at the top: Go's copy handles overlap.
		*stores = append(*stores, fmt.Sprintf("copy(%s[%d:%d], %s[%d:%d])", dst.arr, dst.base, dst.base+n, src.arr, src.base, src.base+n))
		return
	}
	t := gn.tmp("c")
	gn.p("var %s [%d]uint64", t, n)
	gn.p("copy(%s[:], %s[%d:%d])", t, src.arr, src.base, src.base+n)
	*stores = append(*stores, fmt.Sprintf("copy(%s[%d:%d], %s[:])", dst.arr, dst.base, dst.base+n, t))
}

// ---- locations ----

func (gn *gen) isLoc(sc *gsc, e front.Expr) bool {
	switch x := e.(type) {
	case *front.NameExpr:
		b := sc.lookup(x.Decl)
		return b != nil && b.kind == gbLoc
	case *front.MemberExpr:
		return x.Kind == front.MemberField && gn.isLoc(sc, x.X)
	}
	return false
}

// loc resolves a location and checks it against the parameters bound by reference (aliasRange).
func (gn *gen) loc(sc *gsc, e front.Expr) gloc {
	l, root := gn.locRoot(sc, e)
	n := 1
	if !isScalar(l.t) {
		n = gn.cp.slotsOf(l.t)
	}
	for i, a := range gn.active {
		if a.l.arr != l.arr || (l.arr == "" && a.l.v != l.v) || (l.arr != "" && (l.base >= a.l.base+a.n || a.l.base >= l.base+n)) {
			continue
		}
		ok := false
		for b := root; b != nil; b = b.via {
			if b == a.b {
				ok = true
				break
			}
		}
		if !ok {
			panic(aliasPanic{idx: i, err: fmt.Errorf("%s: %w: %s aliases the argument of a parameter (copy-in/copy-out)", e.Position(), ErrGenUnsupported, front.ExprString(e))})
		}
	}
	return l
}

// locRoot resolves a location and returns the binding it starts from.
func (gn *gen) locRoot(sc *gsc, e front.Expr) (gloc, *gb) {
	switch x := e.(type) {
	case *front.NameExpr:
		b := sc.lookup(x.Decl)
		if b == nil || b.kind != gbLoc {
			gn.refuse(e.Position(), "%s is not a location", x.Name)
		}
		return b.loc, b
	case *front.MemberExpr:
		if x.Kind != front.MemberField {
			break
		}
		l, root := gn.locRoot(sc, x.X)
		st, ok := under(l.t).(*front.StructType)
		if !ok || l.arr == "" {
			gn.refuse(e.Position(), "field of %s", l.t)
		}
		if st.IsUnion() {
			gn.refuse(e.Position(), "header unions")
		}
		off, ft := gn.cp.fieldOffset(st, x.Name)
		if _, ok := under(ft).(*front.VarbitType); ok {
			gn.refuse(e.Position(), "varbit fields")
		}
		if _, ok := under(ft).(*front.StackType); ok {
			gn.refuse(e.Position(), "header stacks")
		}
		return gloc{arr: l.arr, base: l.base + off, t: ft}, root
	case *front.IndexExpr:
		gn.refuse(e.Position(), "header stacks")
	}
	gn.refuse(e.Position(), "location %s", front.ExprString(e))
	return gloc{}, nil
}

// ---- expressions ----

// gx is a generated expression: Go source of a uint64 (values, within their width) or a bool
// (conditions); c and v when it is a constant.
type gx struct {
	s string
	c bool
	v uint64
	// pe is set when s reads a constant that depends on a parameter of the program (paramRead):
	// constant for the bound switch, not folded; v is its value when generated.
	pe front.Expr
}

func cx(v uint64) gx { return gx{s: fmt.Sprintf("%#x", v), c: true, v: v} }

// typed is x's Go text with a constant typed uint64: an untyped constant as the left operand
// of a variable shift would take the type of its context (int for :=), and a constant shifted
// by a constant past 64 bits would overflow at compile time.
func typed(x gx) string {
	if x.c {
		return "uint64(" + x.s + ")"
	}
	return x.s
}

func cb(b bool) gx {
	if b {
		return gx{s: "true", c: true, v: 1}
	}
	return gx{s: "false", c: true, v: 0}
}

func mask64(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

func (gn *gen) width(e front.Expr) int {
	t := e.Type()
	if _, ok := under(t).(*front.IntType); ok {
		return 64
	}
	w := widthOf(t)
	if w > 64 {
		gn.refuse(e.Position(), "values wider than 64 bits (%s)", t)
	}
	if signed(t) {
		gn.refuse(e.Position(), "signed values (%s)", t)
	}
	return w
}

// constOf returns the value of constant expression e (constValue), refusing one the backend
// does not represent. Its callers fold the value; those that can read it at run time instead
// ask paramRead first, the others take it through constNeed.
func (gn *gen) constOf(e front.Expr) (uint64, bool) {
	v, ok, why := constValue(gn.checked, gn.cp, e)
	if why != "" {
		gn.refuse(e.Position(), "%s", why)
	}
	return v, ok
}

// constNeed is constOf for a value the code must fold (an algorithm, a field list): when it
// depends on a parameter of the program, Bind checks that the switch's program has the value
// folded (pin), so a pipeline folded for one value refuses another instead of running it
// wrongly.
func (gn *gen) constNeed(e front.Expr) (uint64, bool) {
	v, ok := gn.constOf(e)
	if ok {
		gn.pin(e)
	}
	return v, ok
}

// pin records a folded constant that depends on a parameter (constNeed).
func (gn *gen) pin(e front.Expr) {
	if gn.paramDep(e) && !gn.pinned[e] {
		gn.pinned[e] = true
		gn.pins = append(gn.pins, e)
	}
}

// paramRead returns, for constant expression e whose value depends on a parameter of the
// program, the expression that reads its value at run time (p.c[i], set by Bind), with its
// value in the program generated from (v) and e (pe) recorded; ok is false for any other
// expression.
func (gn *gen) paramRead(e front.Expr, v uint64) (gx, bool) {
	if !gn.paramDep(e) {
		return gx{}, false
	}
	if _, ok := gn.exprIdx[e]; !ok {
		gn.refuse(e.Position(), "a constant that depends on a parameter outside the program's syntax tree (%s)", front.ExprString(e))
	}
	i, ok := gn.paramIdx[e]
	if !ok {
		i = len(gn.params)
		gn.paramIdx[e] = i
		gn.params = append(gn.params, e)
	}
	return gx{s: fmt.Sprintf("p.c[%d]", i), v: v, pe: e}, true
}

// paramDep reports whether the value of constant expression e may depend on a parameter of
// the program: whether a parameter's literal (front.IntLit.Param) is reachable from e through
// the exported fields of the syntax tree (its operands, the constants and enum members it
// names, the types it spells out). It may say yes for a value that does not depend on one,
// which is then read at run time too: correct, only not folded. It never says no for one that
// does, which the fingerprint would not tell apart.
func (gn *gen) paramDep(e front.Expr) bool {
	if d, ok := gn.pdep[e]; ok {
		return d
	}
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value) bool
	walk = func(v reflect.Value) bool {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return false
			}
			seen[v.Pointer()] = true
			if l, ok := v.Interface().(*front.IntLit); ok {
				return l.Param != ""
			}
			return walk(v.Elem())
		case reflect.Interface:
			return !v.IsNil() && walk(v.Elem())
		case reflect.Struct:
			t := v.Type()
			if t == posType || t.PkgPath() == "math/big" {
				return false
			}
			for i := 0; i < t.NumField(); i++ {
				if t.Field(i).IsExported() && walk(v.Field(i)) {
					return true
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				if walk(v.Index(i)) {
					return true
				}
			}
		}
		return false
	}
	d := walk(reflect.ValueOf(e))
	gn.pdep[e] = d
	return d
}

// paramNote describes a constant that depends on parameters for the comment above its read in
// Bind: the parameters, where it is, what it is and its value when generated.
func (gn *gen) paramNote(e front.Expr, v uint64) string {
	names := map[string]bool{}
	var list []string
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if l, ok := v.Interface().(*front.IntLit); ok {
				if l.Param != "" && !names[l.Param] {
					names[l.Param] = true
					list = append(list, l.Param)
				}
				return
			}
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			t := v.Type()
			if t == posType || t.PkgPath() == "math/big" {
				return
			}
			for i := 0; i < t.NumField(); i++ {
				if t.Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(e))
	text := front.ExprString(e)
	if len(text) > 60 {
		text = text[:57] + "..."
	}
	p := e.Position()
	return fmt.Sprintf("%s: %s:%d:%d %s (%#x when generated)", strings.Join(list, ", "), path.Base(p.File), p.Line, p.Col, text, v)
}

func isBool(t front.Type) bool {
	_, ok := under(t).(*front.BoolType)
	return ok
}

// val generates a value expression (bools as 0 or 1).
func (gn *gen) val(sc *gsc, e front.Expr) gx {
	if v, ok := gn.constOf(e); ok {
		if r, ok := gn.paramRead(e, v); ok {
			return r
		}
		return cx(v)
	}
	if isBool(e.Type()) {
		c := gn.cond(sc, e)
		if c.c {
			return cx(c.v)
		}
		return gx{s: "engine.B2U(" + c.s + ")"}
	}
	w := gn.width(e)
	m := mask64(w)
	switch x := e.(type) {
	case *front.NameExpr:
		b := sc.lookup(x.Decl)
		if b == nil {
			gn.refuse(e.Position(), "name %s", x.Name)
		}
		switch b.kind {
		case gbConst:
			if b.pe != nil {
				r, _ := gn.paramRead(b.pe, b.val)
				return gn.maskx(r, m)
			}
			return cx(b.val & m)
		case gbLoc:
			// Through loc, which checks the name against the parameters bound by reference.
			return gx{s: gn.loc(sc, e).ref()}
		}
		gn.refuse(e.Position(), "value of %s", x.Name)
	case *front.MemberExpr:
		if x.Kind == front.MemberField {
			return gx{s: gn.loc(sc, e).ref()}
		}
		gn.refuse(e.Position(), "value %s", front.ExprString(e))
	case *front.CastExpr:
		if isBool(x.X.Type()) {
			c := gn.cond(sc, x.X)
			if c.c {
				return cx(c.v & m)
			}
			return gx{s: "engine.B2U(" + c.s + ")"}
		}
		in := gn.val(sc, x.X)
		if gn.width(x.X) <= w {
			return in
		}
		return gn.maskx(in, m)
	case *front.SliceExpr:
		in := gn.val(sc, x.X)
		if lo, ok := gn.sliceLo(x); ok {
			// The bounds depend on a parameter (the width does not: it is the slice's type).
			return gx{s: fmt.Sprintf("((%s)>>(%s)&%#x)", typed(in), lo, m)}
		}
		if in.c {
			return cx(in.v >> uint(x.LoV) & m)
		}
		if x.LoV == 0 {
			return gn.maskx(in, m)
		}
		if x.HiV+1 >= gn.width(x.X) {
			return gx{s: "((" + in.s + ")>>" + strconv.Itoa(x.LoV) + ")"}
		}
		return gx{s: fmt.Sprintf("((%s)>>%d&%#x)", in.s, x.LoV, m)}
	case *front.UnaryExpr:
		in := gn.val(sc, x.X)
		switch x.Op {
		case "~":
			if in.c {
				return cx(^in.v & m)
			}
			return gn.maskx(gx{s: "^(" + in.s + ")"}, m)
		case "-":
			if in.c {
				return cx(-in.v & m)
			}
			return gn.maskx(gx{s: "-(" + in.s + ")"}, m)
		case "+":
			return in
		}
	case *front.BinaryExpr:
		return gn.binary(sc, x, w)
	case *front.TernaryExpr:
		c := gn.cond(sc, x.Cond)
		if c.c {
			if c.v != 0 {
				return gn.val(sc, x.Then)
			}
			return gn.val(sc, x.Else)
		}
		if hasCall(x.Then) || hasCall(x.Else) {
			// An arm calls: evaluate only the arm taken, as statements.
			t := gn.tmp("t")
			gn.p("var %s uint64", t)
			gn.p("if %s {", c.s)
			a := gn.val(sc, x.Then)
			gn.p("%s = %s", t, a.s)
			gn.p("} else {")
			b := gn.val(sc, x.Else)
			gn.p("%s = %s", t, b.s)
			gn.p("}")
			return gx{s: t}
		}
		gn.lazy++
		a, b := gn.val(sc, x.Then), gn.val(sc, x.Else)
		gn.lazy--
		return gx{s: fmt.Sprintf("engine.Sel(%s, %s, %s)", c.s, a.s, b.s)}
	case *front.CallExpr:
		if fd, ok := x.Callee.(*front.FunctionDecl); ok {
			return gx{s: gn.callFunction(sc, x, fd)}
		}
	}
	gn.refuse(e.Position(), "expression %s", front.ExprString(e))
	return gx{}
}

func (gn *gen) maskx(x gx, m uint64) gx {
	if x.c {
		return cx(x.v & m)
	}
	if m == ^uint64(0) {
		return x
	}
	return gx{s: fmt.Sprintf("((%s)&%#x)", x.s, m)}
}

// snap keeps P4's left-to-right order: when the right operand calls a function (which may
// write what the left one read), the left operand's value is taken into a variable first.
func (gn *gen) snap(a gx, right front.Expr) gx {
	if a.c || !hasCall(right) {
		return a
	}
	t := gn.tmp("t")
	gn.p("%s := %s", t, a.s)
	return gx{s: t}
}

// hasCall reports whether e calls a function or applies a table.
func hasCall(e front.Expr) bool {
	found := false
	var walk func(e front.Expr)
	walk = func(e front.Expr) {
		if e == nil || found {
			return
		}
		switch x := e.(type) {
		case *front.CallExpr:
			switch x.Callee.(type) {
			case *front.FunctionDecl, *front.TableDecl:
				found = true
				return
			}
			for _, a := range x.Args {
				walk(a.Value)
			}
		case *front.BinaryExpr:
			walk(x.X)
			walk(x.Y)
		case *front.UnaryExpr:
			walk(x.X)
		case *front.CastExpr:
			walk(x.X)
		case *front.SliceExpr:
			walk(x.X)
		case *front.TernaryExpr:
			walk(x.Cond)
			walk(x.Then)
			walk(x.Else)
		case *front.MemberExpr:
			walk(x.X)
		case *front.ListExpr:
			for _, el := range x.Elems {
				walk(el)
			}
		}
	}
	walk(e)
	return found
}

func (gn *gen) binary(sc *gsc, x *front.BinaryExpr, w int) gx {
	m := mask64(w)
	if x.Op == "++" {
		a := gn.snap(gn.val(sc, x.X), x.Y)
		b := gn.val(sc, x.Y)
		wb := gn.width(x.Y)
		if a.c && b.c {
			return cx((a.v<<uint(wb) | b.v) & m)
		}
		return gx{s: fmt.Sprintf("((%s)<<%d | %s)", a.s, wb, b.s)}
	}
	a := gn.snap(gn.val(sc, x.X), x.Y)
	b := gn.val(sc, x.Y)
	if a.c && b.c {
		var r uint64
		switch x.Op {
		case "+":
			r = a.v + b.v
		case "-":
			r = a.v - b.v
		case "*":
			r = a.v * b.v
		case "&":
			r = a.v & b.v
		case "|":
			r = a.v | b.v
		case "^":
			r = a.v ^ b.v
		case "<<":
			if b.v < 64 {
				r = a.v << b.v
			}
		case ">>":
			if b.v < 64 {
				r = a.v >> b.v
			}
		case "/":
			if b.v == 0 {
				gn.refuse(x.P, "division by zero")
			}
			r = a.v / b.v
		case "%":
			if b.v == 0 {
				gn.refuse(x.P, "division by zero")
			}
			r = a.v % b.v
		case "|+|":
			r = a.v + b.v
			if r > m || r < a.v {
				r = m
			}
		case "|-|":
			r = 0
			if a.v > b.v {
				r = a.v - b.v
			}
		default:
			gn.refuse(x.P, "operator %s", x.Op)
		}
		return cx(r & m)
	}
	// Identities with a constant operand (both are within the width).
	if b.c {
		switch {
		case (x.Op == "<<" || x.Op == ">>") && b.v >= uint64(w):
			return cx(0) // everything shifted out (and no shift count Go's vet flags)
		case b.v == 0 && (x.Op == "+" || x.Op == "-" || x.Op == "|" || x.Op == "^" || x.Op == "<<" || x.Op == ">>"):
			return a
		case b.v == 0 && (x.Op == "&" || x.Op == "*"):
			return cx(0)
		case x.Op == "&" && b.v&m == m, x.Op == "*" && b.v == 1:
			return a
		}
	}
	if a.c {
		switch {
		case a.v == 0 && (x.Op == "+" || x.Op == "|" || x.Op == "^"):
			return b
		case a.v == 0 && (x.Op == "&" || x.Op == "*" || x.Op == "<<" || x.Op == ">>"):
			return cx(0)
		case x.Op == "&" && a.v&m == m, x.Op == "*" && a.v == 1:
			return b
		}
	}
	switch x.Op {
	case "+", "-", "*":
		return gn.maskx(gx{s: fmt.Sprintf("(%s %s %s)", a.s, x.Op, b.s)}, m)
	case "&", "|", "^":
		return gx{s: fmt.Sprintf("(%s %s %s)", a.s, x.Op, b.s)}
	case "<<":
		return gn.maskx(gx{s: fmt.Sprintf("(%s << (%s))", typed(a), b.s)}, m)
	case ">>":
		return gx{s: fmt.Sprintf("(%s >> (%s))", typed(a), b.s)}
	case "/", "%":
		if b.pe != nil {
			// A divisor that depends on a parameter: folded (and pinned), so that a zero
			// divisor is refused when generated rather than a panic when run.
			gn.pin(b.pe)
			b = cx(b.v)
		}
		if !b.c || b.v == 0 {
			gn.refuse(x.P, "division by a value that is not a non-zero constant")
		}
		return gx{s: fmt.Sprintf("(%s %s %#x)", a.s, x.Op, b.v)}
	case "|+|":
		t := gn.tmp("t")
		gn.p("%s := %s + %s", t, a.s, b.s)
		gn.p("if %s > %#x || %s < %s { %s = %#x }", t, m, t, a.s, t, m)
		return gx{s: t}
	case "|-|":
		t := gn.tmp("t")
		gn.p("%s := uint64(0)", t)
		gn.p("if %s > %s { %s = %s - %s }", a.s, b.s, t, a.s, b.s)
		return gx{s: t}
	}
	gn.refuse(x.P, "operator %s", x.Op)
	return gx{}
}

// cond generates a Go bool expression.
func (gn *gen) cond(sc *gsc, e front.Expr) gx {
	if v, ok := gn.constOf(e); ok {
		if r, ok := gn.paramRead(e, v); ok {
			return gx{s: "(" + r.s + " != 0)", v: r.v, pe: r.pe}
		}
		return cb(v != 0)
	}
	switch x := e.(type) {
	case *front.UnaryExpr:
		if x.Op == "!" {
			c := gn.cond(sc, x.X)
			if c.c {
				return cb(c.v == 0)
			}
			return gx{s: "!(" + c.s + ")"}
		}
	case *front.BinaryExpr:
		switch x.Op {
		case "&&", "||":
			a := gn.cond(sc, x.X)
			if a.c {
				if (a.v != 0) == (x.Op == "&&") {
					return gn.cond(sc, x.Y)
				}
				return a
			}
			if hasCall(x.Y) {
				// The right operand calls: evaluate it only when it decides, as statements.
				t := gn.tmp("t")
				gn.p("%s := %s", t, a.s)
				if x.Op == "&&" {
					gn.p("if %s {", t)
				} else {
					gn.p("if !%s {", t)
				}
				b := gn.cond(sc, x.Y)
				gn.p("%s = %s", t, b.s)
				gn.p("}")
				return gx{s: t}
			}
			gn.lazy++
			b := gn.cond(sc, x.Y)
			gn.lazy--
			if b.c {
				if (b.v != 0) == (x.Op == "&&") {
					return a
				}
				// a && false, a || true: a has no side effects (calls are hoisted).
				return b
			}
			return gx{s: "(" + a.s + " " + x.Op + " " + b.s + ")"}
		case "==", "!=", "<", "<=", ">", ">=":
			if isBool(x.X.Type()) && (x.Op == "==" || x.Op == "!=") {
				a := gn.cond(sc, x.X)
				if !a.c && hasCall(x.Y) {
					t := gn.tmp("t")
					gn.p("%s := %s", t, a.s)
					a = gx{s: t}
				}
				b := gn.cond(sc, x.Y)
				if a.c && b.c {
					return cb((a.v == b.v) == (x.Op == "=="))
				}
				return gx{s: "(" + a.s + " " + x.Op + " " + b.s + ")"}
			}
			if _, ok := under(x.X.Type()).(*front.StructType); ok {
				gn.refuse(x.P, "comparison of %s", x.X.Type())
			}
			a := gn.snap(gn.val(sc, x.X), x.Y)
			b := gn.val(sc, x.Y)
			if a.c && b.c {
				var r bool
				switch x.Op {
				case "==":
					r = a.v == b.v
				case "!=":
					r = a.v != b.v
				case "<":
					r = a.v < b.v
				case "<=":
					r = a.v <= b.v
				case ">":
					r = a.v > b.v
				case ">=":
					r = a.v >= b.v
				}
				return cb(r)
			}
			return gx{s: "(" + a.s + " " + x.Op + " " + b.s + ")"}
		}
	case *front.CastExpr:
		if !isBool(x.X.Type()) {
			v := gn.val(sc, x.X)
			return gx{s: "(" + v.s + " != 0)"}
		}
		return gn.cond(sc, x.X)
	case *front.TernaryExpr:
		c := gn.cond(sc, x.Cond)
		if c.c {
			if c.v != 0 {
				return gn.cond(sc, x.Then)
			}
			return gn.cond(sc, x.Else)
		}
		if hasCall(x.Then) || hasCall(x.Else) {
			t := gn.tmp("t")
			gn.p("var %s bool", t)
			gn.p("if %s {", c.s)
			a := gn.cond(sc, x.Then)
			gn.p("%s = %s", t, a.s)
			gn.p("} else {")
			b := gn.cond(sc, x.Else)
			gn.p("%s = %s", t, b.s)
			gn.p("}")
			return gx{s: t}
		}
		gn.lazy++
		a, b := gn.cond(sc, x.Then), gn.cond(sc, x.Else)
		gn.lazy--
		return gx{s: fmt.Sprintf("(engine.Sel(%s, %s, %s) != 0)", c.s, "engine.B2U("+a.s+")", "engine.B2U("+b.s+")")}
	case *front.CallExpr:
		if x.Method == "isValid" {
			m := x.Fun.(*front.MemberExpr)
			l := gn.loc(sc, m.X)
			if st, ok := under(l.t).(*front.StructType); !ok || !st.IsHeader() {
				gn.refuse(x.P, "isValid of %s", l.t)
			}
			return gx{s: "(" + l.ref() + " != 0)"}
		}
	case *front.MemberExpr:
		if x.Kind == front.MemberTableField {
			call, ok := x.X.(*front.CallExpr)
			if !ok {
				break
			}
			if x.Name != "hit" && x.Name != "miss" {
				break
			}
			_, hit, _ := gn.applyTable(sc, call, true)
			if x.Name == "hit" {
				return gx{s: hit}
			}
			return gx{s: "!" + hit}
		}
	}
	if isBool(e.Type()) {
		v := gn.val2(sc, e)
		if v.c {
			return cb(v.v != 0)
		}
		return gx{s: "(" + v.s + " != 0)"}
	}
	gn.refuse(e.Position(), "condition %s", front.ExprString(e))
	return gx{}
}

// val2 reads a bool-typed location or calls a bool function (bools stored as 0 or 1).
func (gn *gen) val2(sc *gsc, e front.Expr) gx {
	switch x := e.(type) {
	case *front.NameExpr:
		b := sc.lookup(x.Decl)
		if b != nil && b.kind == gbConst && b.pe != nil {
			r, _ := gn.paramRead(b.pe, b.val)
			return r
		}
		if b != nil && b.kind == gbConst {
			return cx(b.val)
		}
		if b != nil && b.kind == gbLoc {
			return gx{s: gn.loc(sc, e).ref()}
		}
	case *front.MemberExpr:
		if x.Kind == front.MemberField {
			return gx{s: gn.loc(sc, e).ref()}
		}
	case *front.CallExpr:
		if fd, ok := x.Callee.(*front.FunctionDecl); ok {
			return gx{s: gn.callFunction(sc, x, fd)}
		}
	}
	gn.refuse(e.Position(), "bool expression %s", front.ExprString(e))
	return gx{}
}

// ---- calls ----

func (gn *gen) call(sc *gsc, call *front.CallExpr) {
	switch call.Method {
	case "setValid", "setInvalid":
		l := gn.loc(sc, call.Fun.(*front.MemberExpr).X)
		if st, ok := under(l.t).(*front.StructType); !ok || !st.IsHeader() {
			gn.refuse(call.P, "%s of %s", call.Method, l.t)
		}
		v := 0
		if call.Method == "setValid" {
			v = 1
		}
		gn.p("%s = %d", l.ref(), v)
		return
	case "isValid":
		return
	case "push_front", "pop_front":
		gn.refuse(call.P, "header stacks")
	}
	switch d := call.Callee.(type) {
	case *front.TableDecl:
		gn.applyTable(sc, call, false)
	case *front.ControlDecl:
		m, ok := call.Fun.(*front.MemberExpr)
		if !ok {
			gn.refuse(call.P, "direct control invocation")
		}
		n, ok := m.X.(*front.NameExpr)
		if !ok {
			gn.refuse(call.P, "apply of %s", front.ExprString(m.X))
		}
		b := sc.lookup(n.Decl)
		if b == nil || b.kind != gbInst {
			gn.refuse(call.P, "apply of %s (direct control invocation)", n.Name)
		}
		gn.applyControl(b.inst, call.P, func(copyMode bool, outs *[]string) map[front.Decl]*gb {
			binds := map[front.Decl]*gb{}
			for i, p := range d.Params {
				var a front.Expr
				if i < len(call.Ordered) && call.Ordered[i] != nil {
					a = call.Ordered[i].Value
				} else if p.Deflt != nil {
					a = p.Deflt
				} else {
					gn.refuse(call.P, "missing argument %s", p.Name)
				}
				binds[p] = gn.bindParam(sc, p, a, call.P, copyMode, outs)
			}
			return binds
		})
	case *front.ActionDecl:
		gn.callAction(sc, d, call.Ordered, nil, call.P)
	case *front.FunctionDecl:
		gn.callFunction(sc, call, d)
	case *front.MethodDecl:
		gn.externCall(sc, call, d)
	default:
		gn.refuse(call.P, "call of %s", front.ExprString(call.Fun))
	}
}

// bindParam binds a parameter to an argument: a constant, a Go variable holding the value of
// an in argument, or the argument's location (inout and out, and composite in arguments).
//
// With copyMode, inout, out and composite in parameters are copies instead (P4's
// copy-in/copy-out): a Go variable or local array, copied in (out: zero) and, for inout and
// out, copied back by the statements appended to outs.
func (gn *gen) bindParam(sc *gsc, p *front.Param, a front.Expr, pos front.Pos, copyMode bool, outs *[]string) *gb {
	if isExtern(p.T) {
		gn.refuse(pos, "extern arguments")
	}
	if _, ok := a.(*front.DontCareExpr); ok {
		// _ as an argument: a fresh variable, zero as the interpreter's.
		if isScalar(p.T) {
			gn.scalarType(pos, p.T)
			v := gn.tmp("v")
			gn.p("%s := uint64(0)", v)
			gn.p("_ = %s", v)
			return &gb{kind: gbLoc, loc: gloc{v: v, t: p.T}}
		}
		v := gn.tmp("l")
		gn.p("var %s [%d]uint64", v, gn.cp.slotsOf(p.T))
		gn.p("_ = %s", v)
		return &gb{kind: gbLoc, loc: gloc{arr: v, t: p.T}}
	}
	if copyMode && (p.Dir == front.DirOut || p.Dir == front.DirInOut || !isScalar(p.T)) {
		if !gn.isLoc(sc, a) {
			gn.refuse(pos, "a composite argument that is not a location")
		}
		l := gn.loc(sc, a)
		if isScalar(p.T) {
			gn.scalarType(pos, p.T)
			v := gn.tmp("c")
			if p.Dir == front.DirOut {
				gn.p("%s := uint64(0)", v)
			} else {
				gn.p("%s := %s", v, l.ref())
			}
			gn.p("_ = %s", v)
			*outs = append(*outs, l.ref()+" = "+v)
			return &gb{kind: gbLoc, loc: gloc{v: v, t: p.T}}
		}
		n := gn.cp.slotsOf(p.T)
		v := gn.tmp("c")
		gn.p("var %s [%d]uint64", v, n)
		if p.Dir != front.DirOut {
			gn.p("copy(%s[:], %s[%d:%d])", v, l.arr, l.base, l.base+n)
		}
		if p.Dir != front.DirIn && p.Dir != front.DirNone {
			*outs = append(*outs, fmt.Sprintf("copy(%s[%d:%d], %s[:])", l.arr, l.base, l.base+n, v))
		}
		return &gb{kind: gbLoc, loc: gloc{arr: v, t: p.T}}
	}
	switch p.Dir {
	case front.DirOut, front.DirInOut:
		_, root := gn.locRoot(sc, a)
		l := gn.loc(sc, a)
		if isScalar(p.T) {
			gn.scalarType(pos, p.T)
		}
		if p.Dir == front.DirOut {
			// An out parameter starts at zero (the interpreter clears it; copy-out writes it),
			// after every argument is copied in (flushOuts).
			if isScalar(p.T) {
				gn.outs = append(gn.outs, l.ref()+" = 0")
			} else {
				gn.outs = append(gn.outs, fmt.Sprintf("clear(%s[%d:%d])", l.arr, l.base, l.base+gn.cp.slotsOf(p.T)))
			}
		}
		return &gb{kind: gbLoc, loc: gloc{arr: l.arr, base: l.base, v: l.v, t: p.T}, byRef: true, via: root}
	}
	if !isScalar(p.T) {
		if !gn.isLoc(sc, a) {
			gn.refuse(pos, "a composite argument that is not a location")
		}
		_, root := gn.locRoot(sc, a)
		l := gn.loc(sc, a)
		return &gb{kind: gbLoc, loc: gloc{arr: l.arr, base: l.base, t: p.T}, byRef: true, via: root}
	}
	gn.scalarType(pos, p.T)
	x := gn.val(sc, a)
	if x.c {
		return &gb{kind: gbConst, val: x.v, loc: gloc{t: p.T}}
	}
	v := gn.tmp("a")
	gn.p("%s := %s", v, x.s)
	gn.p("_ = %s", v)
	return &gb{kind: gbLoc, loc: gloc{v: v, t: p.T}}
}

// flushOuts clears the out parameters of the call whose arguments were just bound (those
// recorded since start: a call in an argument flushes its own).
func (gn *gen) flushOuts(start int) {
	for _, st := range gn.outs[start:] {
		gn.p("%s", st)
	}
	gn.outs = gn.outs[:start]
}

// actionScope is the scope an action's body resolves names in: the apply scope of the control
// that declares it, or the top level.
func (gn *gen) actionScope(sc *gsc, d *front.ActionDecl) *gsc {
	for s := sc; s != nil; s = s.parent {
		if s.ctrl != nil {
			for _, l := range s.ctrl.Locals {
				if l == d {
					return s
				}
			}
		}
	}
	return gn.root
}

// callAction inlines an action. args are the call's arguments in parameter order; with
// fromTable, the parameters after them take the action data of the last Apply.
func (gn *gen) callAction(sc *gsc, d *front.ActionDecl, args []*front.Arg, ref *front.ActionRef, pos front.Pos) {
	ret := &gret{label: gn.tmp("end")}
	if ref != nil {
		// From a table, as the interpreter's boundAction: the arguments of the action reference
		// bind the directional parameters (all of them, or none); the directionless ones always
		// take the action data.
		nbound := 0
		for _, p := range d.Params {
			if p.Dir != front.DirNone {
				nbound++
			}
		}
		if len(args) < nbound {
			args = nil
		} else {
			args = args[:nbound]
		}
	}
	bind := func(copyMode bool, outs *[]string) map[front.Decl]*gb {
		m := map[front.Decl]*gb{}
		cpi := 0
		for i, p := range d.Params {
			var a front.Expr
			if i < len(args) && args[i] != nil {
				a = args[i].Value
			}
			if p.Dir == front.DirNone && ref != nil {
				// Control-plane data from the table.
				gn.scalarType(p.P, p.T)
				v := gn.tmp("d")
				gn.p("%s := g.Arg(%d)&%#x", v, cpi, mask64(widthOf(p.T)))
				gn.p("_ = %s", v)
				cpi++
				m[p] = &gb{kind: gbLoc, loc: gloc{v: v, t: p.T}}
				continue
			}
			if a == nil {
				gn.refuse(pos, "missing argument %s of action %s", p.Name, d.Name)
			}
			// Arguments evaluate in the caller's scope.
			m[p] = gn.bindParam(sc, p, a, pos, copyMode, outs)
		}
		return m
	}
	gn.inline(d.Params, ret, bind, func(m map[front.Decl]*gb) {
		gn.p("// action %s", cpName(gn.actionScope(sc, d).prefix, d.Annos, d.Name))
		as := gn.actionScope(sc, d).child()
		as.ret = ret
		for k, v := range m {
			as.m[k] = v
		}
		gn.stmts(as, d.Body.Stmts)
	})
}

// callFunction inlines a function and returns the Go variable holding its result ("" for
// void). Functions with out or inout parameters are only called as statements.
func (gn *gen) callFunction(sc *gsc, call *front.CallExpr, d *front.FunctionDecl) string {
	if d.Abstract != nil {
		gn.refuse(call.P, "extern method implementations")
	}
	if gn.lazy > 0 {
		gn.refuse(call.P, "a function call in a conditional operand (&&, ||, ?:)")
	}
	ret := &gret{label: gn.tmp("end")}
	void := d.RetT == nil
	if _, ok := d.RetT.(*front.VoidType); ok {
		void = true
	}
	if !void {
		gn.scalarType(d.P, d.RetT)
		ret.v = gn.tmp("r")
		ret.w = widthOf(d.RetT)
		gn.p("var %s uint64", ret.v)
		gn.p("_ = %s", ret.v)
	}
	for _, p := range d.Params {
		if gn.lazy > 0 && p.Dir != front.DirIn && p.Dir != front.DirNone {
			gn.refuse(call.P, "a call with out or inout arguments in a conditional operand")
		}
	}
	bind := func(copyMode bool, outs *[]string) map[front.Decl]*gb {
		m := map[front.Decl]*gb{}
		for i, p := range d.Params {
			if i >= len(call.Ordered) || call.Ordered[i] == nil {
				gn.refuse(call.P, "missing argument %s", p.Name)
			}
			m[p] = gn.bindParam(sc, p, call.Ordered[i].Value, call.P, copyMode, outs)
		}
		return m
	}
	gn.inline(d.Params, ret, bind, func(m map[front.Decl]*gb) {
		fs := &gsc{parent: gn.root, m: m, ret: ret}
		gn.stmts(fs, d.Body.Stmts)
	})
	return ret.v
}

// applyTable generates a table application and returns the Go variables of the action index
// and (if wantHit) the hit flag.
func (gn *gen) applyTable(sc *gsc, call *front.CallExpr, wantHit bool) (string, string, *gtable) {
	if gn.lazy > 0 {
		gn.refuse(call.P, "a table application in a conditional operand")
	}
	d := call.Callee.(*front.TableDecl)
	b := sc.lookup(d)
	if b == nil || b.kind != gbTable {
		gn.refuse(call.P, "table %s", d.Name)
	}
	gt := b.obj.(*gtable)
	t := fmt.Sprintf("p.t[%d]", b.idx)
	gn.p("// table %s", gt.t.Name)
	if p := d.Prop("key"); p != nil {
		for i, k := range p.Keys {
			gn.p("g.Key(%s, %d, %s)", t, i, gn.val(sc, k.Expr).s)
		}
	}
	ai, hit := gn.tmp("ai"), gn.tmp("hit")
	gn.p("%s, %s := g.Apply(%s)", ai, hit, t)
	gn.p("_ = %s", hit)
	gn.p("switch %s {", ai)
	for i, a := range gt.acts {
		gn.p("case %d:", i)
		var args []*front.Arg
		if a.ref != nil {
			args = a.ref.Args
		}
		// Arguments in an action reference bind the first (directional) parameters.
		ordered := make([]*front.Arg, len(args))
		copy(ordered, args)
		gn.callAction(sc, a.decl, ordered, &front.ActionRef{}, call.P)
	}
	gn.p("}")
	gn.p("g.EndApply()")
	return ai, hit, gt
}

// ---- externs ----

func (gn *gen) argN(call *front.CallExpr, i int) front.Expr {
	if i < len(call.Ordered) && call.Ordered[i] != nil {
		return call.Ordered[i].Value
	}
	if i < len(call.Params) && call.Params[i].Deflt != nil {
		return call.Params[i].Deflt
	}
	gn.refuse(call.P, "missing argument %d of %s", i+1, front.ExprString(call.Fun))
	return nil
}

func (gn *gen) constArg(call *front.CallExpr, i int) uint64 {
	e := gn.argN(call, i)
	v, ok := gn.constNeed(e)
	if !ok {
		gn.refuse(e.Position(), "argument %d of %s must be a constant", i+1, front.ExprString(call.Fun))
	}
	return v
}

func (gn *gen) recv(sc *gsc, call *front.CallExpr) *gb {
	m, ok := call.Fun.(*front.MemberExpr)
	if !ok {
		return nil
	}
	n, ok := m.X.(*front.NameExpr)
	if !ok {
		return nil
	}
	return sc.lookup(n.Decl)
}

// regWords is the accessor width (Get32/Set32 or Get64/Set64) of a v1model register of at
// most 64 bits: its cells' storage (Register.c32 or c64).
func regWords(r *Register) int {
	if r.c32 != nil {
		return 32
	}
	return 64
}

func (gn *gen) externCall(sc *gsc, call *front.CallExpr, d *front.MethodDecl) {
	pos := call.P
	if d.Owner == nil {
		gn.externFunc(sc, call, d)
		return
	}
	switch d.Owner.Name {
	case "packet_in":
		if d.Name == "extract" && len(call.Args) == 1 {
			gn.extract(sc, gn.argN(call, 0))
			return
		}
		gn.refuse(pos, "packet_in.%s", d.Name)
	case "packet_out":
		if d.Name == "emit" {
			gn.emit(sc, gn.argN(call, 0))
			return
		}
		gn.refuse(pos, "packet_out.%s", d.Name)
	}
	b := gn.recv(sc, call)
	if b == nil {
		gn.refuse(pos, "method call %s", front.ExprString(call.Fun))
	}
	switch b.kind {
	case gbReg:
		r := b.obj.(*Register)
		switch d.Name {
		case "read":
			out := gn.loc(sc, gn.argN(call, 0))
			idx := gn.val(sc, gn.argN(call, 1))
			gn.p("%s = p.r[%d].Get%d(%s)", out.ref(), b.idx, regWords(r), idx.s)
			return
		case "write":
			idx := gn.val(sc, gn.argN(call, 0))
			v := gn.maskx(gn.val(sc, gn.argN(call, 1)), mask64(r.Width))
			gn.p("p.r[%d].Set%d(%s, %s)", b.idx, regWords(r), idx.s, v.s)
			return
		}
	case gbCounter:
		k := b.obj.(*Counter)
		if d.Name == "count" {
			if k.direct {
				return // every hit of the table counts
			}
			gn.p("g.Count(p.k[%d], %s)", b.idx, gn.val(sc, gn.argN(call, 0)).s)
			return
		}
	case gbMeter:
		m := b.obj.(*Meter)
		if m.direct && d.Name == "read" {
			out := gn.loc(sc, gn.argN(call, 0))
			gn.p("%s = g.ReadDirectMeter(p.m[%d])&%#x", out.ref(), b.idx, mask64(widthOf(out.t)))
			return
		}
		if !m.direct && d.Name == "execute_meter" {
			idx := gn.val(sc, gn.argN(call, 0))
			out := gn.loc(sc, gn.argN(call, 1))
			gn.p("%s = g.ExecuteMeter(p.m[%d], %s)&%#x", out.ref(), b.idx, idx.s, mask64(widthOf(out.t)))
			return
		}
	}
	gn.refuse(pos, "%s.%s", d.Owner.Name, d.Name)
}

// fieldList returns the slot ranges (offset, count pairs) of the metadata fields annotated
// @field_list(idx), as the interpreter's, and its index in the bound pipeline.
func (gn *gen) fieldList(idx uint64) int {
	if gn.flIdx == nil {
		gn.flIdx = map[uint64]int{}
	}
	if i, ok := gn.flIdx[idx]; ok {
		return i
	}
	cp := gn.cp
	cp.metaBase, cp.metaT = gn.sw.metaBase, nil
	v1, _ := gn.checked.V1Switch()
	cp.metaT = v1.Parser.Parser.Params[2].T
	var pairs []int
	for _, r := range cp.fieldList(idx) {
		pairs = append(pairs, r.off, r.n)
	}
	gn.fls = append(gn.fls, pairs)
	gn.flIdx[idx] = len(gn.fls) - 1
	return len(gn.fls) - 1
}

func (gn *gen) smSlot(pos front.Pos, name string) int {
	off, ok := gn.sw.smOff[name]
	if !ok {
		gn.refuse(pos, "standard_metadata_t without %s", name)
	}
	return gn.sw.smBase + off
}

func (gn *gen) externFunc(sc *gsc, call *front.CallExpr, d *front.MethodDecl) {
	pos := call.P
	switch d.Name {
	case "mark_to_drop":
		dst := gloc{arr: "s", base: gn.sw.smBase + gn.sw.smOff["egress_spec"]}
		if len(call.Args) == 1 {
			// The argument's own location: a copy-in/copy-out copy or a local standard_metadata_t.
			l := gn.loc(sc, gn.argN(call, 0))
			if l.arr == "" {
				gn.refuse(pos, "mark_to_drop of a non-slot location")
			}
			dst = gloc{arr: l.arr, base: l.base + gn.sw.smOff["egress_spec"]}
		}
		gn.p("%s = %d", dst.ref(), DropPort)
	case "static_assert":
	case "verify":
		c := gn.cond(sc, gn.argN(call, 0))
		code := gn.val(sc, gn.argN(call, 1))
		if c.c && c.v != 0 {
			return
		}
		gn.p("if !(%s) { g.ParserError(int(%s)); return }", c.s, code.s)
	case "assert", "assume":
		c := gn.cond(sc, gn.argN(call, 0))
		if c.c && c.v != 0 {
			return
		}
		gn.p("if !(%s) { g.Fail(%q); return }", c.s, fmt.Sprintf("%s: %s failed", pos, d.Name))
	case "truncate":
		gn.p("g.Truncate(%s)", gn.val(sc, gn.argN(call, 0)).s)
	case "log_msg":
		format := ""
		if s, ok := gn.argN(call, 0).(*front.StringExpr); ok {
			format = s.Val
		}
		var vals []string
		if len(call.Args) > 1 {
			for _, pc := range gn.flatten(sc, gn.argN(call, 1)) {
				vals = append(vals, pc.v)
			}
		}
		args := ""
		if len(vals) > 0 {
			args = ", " + strings.Join(vals, ", ")
		}
		gn.p("if g.Logging() { g.LogMsg(%q%s) }", format, args)
	case "random":
		out := gn.loc(sc, gn.argN(call, 0))
		lo, hi := gn.val(sc, gn.argN(call, 1)), gn.val(sc, gn.argN(call, 2))
		l, h, v := gn.tmp("lo"), gn.tmp("hi"), gn.tmp("rnd")
		gn.p("%s, %s := uint64(%s), uint64(%s)", l, h, lo.s, hi.s)
		gn.p("%s := %s", v, l)
		// The full 64-bit range (h-l+1 == 0) takes the random value as it is.
		gn.p("if %s > %s { %s = %s + engine.RandomIn(g.Random(), %s-%s+1) }", h, l, v, l, h, l)
		gn.p("%s = %s&%#x", out.ref(), v, mask64(widthOf(out.t)))
	case "hash":
		out := gn.loc(sc, gn.argN(call, 0))
		algo := gn.algo(pos, gn.constArg(call, 1))
		base := gn.val(sc, gn.argN(call, 2))
		h := gn.serialHash(sc, gn.argN(call, 3), algo, false, true)
		mx := gn.val(sc, gn.argN(call, 4))
		ow := widthOf(out.t)
		r := h
		if !mx.c {
			r = fmt.Sprintf("engine.Sel(%s != 0, %s %% (%s|engine.B2U(%s == 0)), %s)", mx.s, h, mx.s, mx.s, h)
		} else if mx.v != 0 {
			r = fmt.Sprintf("%s %% %#x", h, mx.v)
		}
		gn.p("%s = (%s + %s)&%#x", out.ref(), base.s, r, mask64(ow))
	case "verify_checksum", "verify_checksum_with_payload", "update_checksum", "update_checksum_with_payload":
		c := gn.cond(sc, gn.argN(call, 0))
		if c.c && c.v == 0 {
			return
		}
		algo := gn.algo(pos, gn.constArg(call, 3))
		ck := gn.argN(call, 2)
		cw := widthOf(ck.Type())
		if cw > 64 {
			gn.refuse(pos, "checksums wider than 64 bits")
		}
		gn.p("if %s {", c.s)
		h := gn.serialHash(sc, gn.argN(call, 1), algo, strings.HasSuffix(d.Name, "_with_payload"), false)
		if strings.HasPrefix(d.Name, "verify") {
			got := gn.val(sc, ck)
			gn.p("if (%s)&%#x != %s { s[%d] = 1 }", h, mask64(cw), got.s, gn.smSlot(pos, "checksum_error"))
		} else {
			gn.p("%s = (%s)&%#x", gn.loc(sc, ck).ref(), h, mask64(cw))
		}
		gn.p("}")
	case "clone", "clone_preserving_field_list":
		sess := gn.val(sc, gn.argN(call, 1))
		fl := "-1"
		if d.Name == "clone_preserving_field_list" {
			fl = fmt.Sprintf("p.fl[%d]", gn.fieldList(gn.constArg(call, 2)))
		}
		gn.p("g.Clone(%s, %s)", sess.s, fl)
	case "resubmit_preserving_field_list", "recirculate_preserving_field_list":
		fl := fmt.Sprintf("p.fl[%d]", gn.fieldList(gn.constArg(call, 0)))
		if strings.HasPrefix(d.Name, "resubmit") {
			gn.p("g.Resubmit(%s)", fl)
		} else {
			gn.p("g.Recirculate(%s)", fl)
		}
	case "digest":
		recv := gn.val(sc, gn.argN(call, 0))
		data := gn.argN(call, 1)
		name := data.Type().String()
		dt := data.Type()
		if len(call.TypeArgT) > 0 && call.TypeArgT[0] != nil {
			dt = call.TypeArgT[0]
		}
		if st, ok := under(dt).(*front.StructType); ok {
			name = st.Decl.Name
		} else if dt != nil {
			name = dt.String()
		}
		var ws, vs []string
		for _, pc := range gn.flatten(sc, data) {
			ws = append(ws, strconv.Itoa(pc.w))
			vs = append(vs, pc.v)
		}
		vals := ""
		if len(vs) > 0 {
			vals = ", " + strings.Join(vs, ", ")
		}
		gn.p("g.Digest(%s, %q, []int{%s}%s)", recv.s, name, strings.Join(ws, ", "), vals)
	case "resubmit", "recirculate":
		if len(call.Args) > 0 {
			gn.refuse(pos, "%s with a field list argument (the deprecated form)", d.Name)
		}
		if d.Name == "resubmit" {
			gn.p("g.Resubmit(-1)")
		} else {
			gn.p("g.Recirculate(-1)")
		}
	default:
		gn.refuse(pos, "extern %s", d.Name)
	}
}

func (gn *gen) algo(pos front.Pos, code uint64) string {
	var name string
	for _, d := range gn.checked.Globals["HashAlgorithm"] {
		if ed, ok := d.(*front.EnumDecl); ok && int(code) < len(ed.Members) {
			name = ed.Members[code].Name
		}
	}
	switch name {
	case "crc32", "crc32_custom":
		return "engine.HashCRC32"
	case "crc16", "crc16_custom":
		return "engine.HashCRC16"
	case "identity":
		return "engine.HashIdentity"
	case "csum16":
		return "engine.HashCsum16"
	case "xor16":
		return "engine.HashXor16"
	}
	gn.refuse(pos, "hash algorithm %q", name)
	return ""
}

// gpiece is one scalar of a hash, checksum or log input: its Go value, width and the
// validity slot of the header it is a field of (-1: none).
type gpiece struct {
	v     string
	w     int
	vslot int
	varr  string
	c     bool   // a constant: its value is cv
	cv    uint64 // the constant (when c)
}

func (gn *gen) flatten(sc *gsc, e front.Expr) []gpiece {
	switch x := e.(type) {
	case *front.ListExpr:
		var out []gpiece
		for _, el := range x.Elems {
			out = append(out, gn.flatten(sc, el)...)
		}
		return out
	case *front.StructExpr:
		var out []gpiece
		for _, el := range x.Fields {
			out = append(out, gn.flatten(sc, el.Value)...)
		}
		return out
	}
	t := e.Type()
	if isScalar(t) {
		w := gn.width(e)
		pc := gpiece{w: w, vslot: -1}
		if m, ok := e.(*front.MemberExpr); ok && m.Kind == front.MemberField && gn.isLoc(sc, m.X) {
			if st, ok := under(m.X.Type()).(*front.StructType); ok && st.IsHeader() {
				l := gn.loc(sc, m.X)
				pc.vslot, pc.varr = l.base, l.arr
			}
		}
		x := gn.val(sc, e)
		pc.v, pc.c, pc.cv = typed(x), x.c, x.v
		return []gpiece{pc}
	}
	if !gn.isLoc(sc, e) {
		gn.refuse(e.Position(), "data argument %s", front.ExprString(e))
	}
	var out []gpiece
	var walk func(l gloc, vslot int, varr string)
	walk = func(l gloc, vslot int, varr string) {
		switch tt := under(l.t).(type) {
		case *front.StructType:
			if tt.IsHeader() {
				vslot, varr = l.base, l.arr
			}
			for _, f := range tt.Fields {
				off, ft := gn.cp.fieldOffset(tt, f.Name)
				walk(gloc{arr: l.arr, base: l.base + off, t: ft}, vslot, varr)
			}
		default:
			if !isScalar(l.t) || widthOf(l.t) > 64 {
				gn.refuse(e.Position(), "data of type %s", l.t)
			}
			out = append(out, gpiece{v: l.ref(), w: widthOf(l.t), vslot: vslot, varr: varr})
		}
	}
	walk(gn.loc(sc, e), -1, "")
	return out
}

// serialHash lays the pieces out MSB-first (as bmv2's BufBuilder: fields of invalid headers
// left out, unless allFields: hash(), whose data p4c-bm2-ss copies into temporaries first)
// and returns a Go variable holding the algorithm over them. With up to three headers among
// the pieces, each combination of their validity bits gets a layout fixed at generation time
// (built with constant shifts); with more, a bit packer lays them out at run time. It writes
// statements.
func (gn *gen) serialHash(sc *gsc, e front.Expr, algo string, withPayload, allFields bool) string {
	ps := gn.flatten(sc, e)
	if allFields {
		for i := range ps {
			ps[i].vslot = -1
		}
	}
	type vkey struct {
		arr  string
		slot int
	}
	var hdrs []vkey
	seen := map[vkey]bool{}
	for _, pc := range ps {
		if k := (vkey{pc.varr, pc.vslot}); pc.vslot >= 0 && !seen[k] {
			seen[k] = true
			hdrs = append(hdrs, k)
		}
	}
	h := gn.tmp("h")
	gn.p("var %s uint64", h)
	wrap := func(data string) string {
		if withPayload {
			return "g.WithPayload(" + data + ")"
		}
		return data
	}
	if len(hdrs) > 3 {
		pk := gn.tmp("pk")
		gn.p("%s := g.Packer()", pk)
		for _, pc := range ps {
			if pc.vslot >= 0 {
				gn.p("if %s[%d] != 0 { %s.Put(%d, %s) }", pc.varr, pc.vslot, pk, pc.w, pc.v)
			} else {
				gn.p("%s.Put(%d, %s)", pk, pc.w, pc.v)
			}
		}
		gn.p("%s = %s(%s)", h, algo, wrap("g.Packed()"))
		return h
	}
	// layout emits the static layout of the pieces present when the headers in valid are.
	layout := func(valid map[vkey]bool) {
		var in []gpiece
		total := 0
		for _, pc := range ps {
			if pc.vslot < 0 || valid[vkey{pc.varr, pc.vslot}] {
				in = append(in, pc)
				total += pc.w
			}
		}
		if len(in) == 0 {
			data := "nil"
			if withPayload {
				data = "g.WithPayload(g.Scratch(0)[:0])"
			}
			gn.p("%s = %s(%s)", h, algo, data)
			return
		}
		nb := (total + 7) / 8
		b := gn.tmp("b")
		gn.p("%s := g.Scratch(%d)", b, nb)
		gn.words(b, in, nb)
		gn.p("%s = %s(%s)", h, algo, wrap(fmt.Sprintf("%s[:%d]", b, nb)))
	}
	var rec func(k int, valid map[vkey]bool)
	rec = func(k int, valid map[vkey]bool) {
		if k == len(hdrs) {
			layout(valid)
			return
		}
		v := hdrs[k]
		gn.p("if %s[%d] != 0 {", v.arr, v.slot)
		valid[v] = true
		rec(k+1, valid)
		gn.p("} else {")
		valid[v] = false
		rec(k+1, valid)
		gn.p("}")
	}
	gn.p("{")
	rec(0, map[vkey]bool{})
	gn.p("}")
	return h
}

// words writes pieces (values within their widths) MSB-first into buffer b of nb bytes (and 8
// spare) as 64-bit big-endian words built with constant shifts.
func (gn *gen) words(b string, ps []gpiece, nb int) {
	gn.usesBE = true
	nw := (nb + 7) / 8
	parts := make([][]string, nw)
	o := 0
	for _, pc := range ps {
		end := o + pc.w
		k := o / 64
		if pc.c {
			// A constant is shifted here: in Go, a constant shifted past 64 bits does not compile.
			if end <= 64*(k+1) {
				parts[k] = append(parts[k], fmt.Sprintf("%#x", pc.cv<<uint(64*(k+1)-end)))
			} else {
				parts[k] = append(parts[k], fmt.Sprintf("%#x", pc.cv>>uint(end-64*(k+1))))
				parts[k+1] = append(parts[k+1], fmt.Sprintf("%#x", pc.cv<<uint(64*(k+2)-end)))
			}
			o = end
			continue
		}
		if end <= 64*(k+1) {
			parts[k] = append(parts[k], shl(pc.v, 64*(k+1)-end))
		} else {
			parts[k] = append(parts[k], fmt.Sprintf("(%s)>>%d", pc.v, end-64*(k+1)))
			parts[k+1] = append(parts[k+1], shl(pc.v, 64*(k+2)-end))
		}
		o = end
	}
	for k := 0; k < nw; k++ {
		w := "0"
		if len(parts[k]) > 0 {
			w = strings.Join(parts[k], " | ")
		}
		gn.p("binary.BigEndian.PutUint64(%s[%d:], %s)", b, 8*k, w)
	}
}

func shl(v string, n int) string {
	if n == 0 {
		return v
	}
	return fmt.Sprintf("(%s)<<%d", v, n)
}

// ---- parser, extraction, emission ----

func (gn *gen) headerFields(pos front.Pos, l gloc) (*front.StructType, int) {
	st, ok := under(l.t).(*front.StructType)
	if !ok || !st.IsHeader() {
		gn.refuse(pos, "extract or emit of %s", l.t)
	}
	total := 0
	for _, f := range st.Fields {
		if _, ok := under(f.T).(*front.VarbitType); ok {
			gn.refuse(pos, "varbit fields")
		}
		if !isScalar(f.T) || widthOf(f.T) > 64 {
			gn.refuse(pos, "header fields wider than 64 bits")
		}
		total += widthOf(f.T)
	}
	if total%8 != 0 {
		gn.refuse(pos, "headers whose width is not a whole number of bytes")
	}
	return st, total
}

func (gn *gen) extract(sc *gsc, e front.Expr) {
	l := gn.loc(sc, e)
	st, total := gn.headerFields(e.Position(), l)
	nb := total / 8
	gn.usesBE = true
	off, ok := gn.tmp("off"), gn.tmp("ok")
	gn.p("{")
	gn.p("%s, %s := g.Extract(%d, %d)", off, ok, nb, gn.cp.errCode("PacketTooShort"))
	gn.p("if !%s { return }", ok)
	in := gn.tmp("in")
	gn.p("%s := g.In()", in)
	nw := (nb + 7) / 8
	ws := make([]string, nw)
	for k := range ws {
		ws[k] = gn.tmp("w")
		gn.p("%s := binary.BigEndian.Uint64(%s[%s+%d:])", ws[k], in, off, 8*k)
	}
	o := 0
	for _, f := range st.Fields {
		fo, ft := gn.cp.fieldOffset(st, f.Name)
		w := widthOf(ft)
		k := o / 64
		end := o + w
		fl := gloc{arr: l.arr, base: l.base + fo}
		var v string
		if end <= 64*(k+1) {
			v = fmt.Sprintf("%s<<%d>>%d", ws[k], o-64*k, 64-w)
		} else {
			a := o - 64*k
			v = fmt.Sprintf("(%s<<%d | %s>>%d)>>%d", ws[k], a, ws[k+1], 64-a, 64-w)
		}
		gn.p("%s = %s", fl.ref(), v)
		o = end
	}
	gn.p("%s[%d] = 1", l.arr, l.base)
	gn.p("}")
}

func (gn *gen) emit(sc *gsc, e front.Expr) {
	l := gn.loc(sc, e)
	gn.emitLoc(e.Position(), l)
}

func (gn *gen) emitLoc(pos front.Pos, l gloc) {
	st, ok := under(l.t).(*front.StructType)
	if !ok {
		gn.refuse(pos, "emit of %s", l.t)
	}
	if !st.IsHeader() {
		for _, f := range st.Fields {
			off, ft := gn.cp.fieldOffset(st, f.Name)
			gn.emitLoc(pos, gloc{arr: l.arr, base: l.base + off, t: ft})
		}
		return
	}
	_, total := gn.headerFields(pos, l)
	nb := total / 8
	var ps []gpiece
	for _, f := range st.Fields {
		off, ft := gn.cp.fieldOffset(st, f.Name)
		ps = append(ps, gpiece{v: gloc{arr: l.arr, base: l.base + off}.ref(), w: widthOf(ft)})
	}
	gn.p("if %s[%d] != 0 {", l.arr, l.base)
	b := gn.tmp("o")
	gn.p("%s := g.Emit(%d)", b, nb)
	gn.words(b, ps, nb)
	gn.p("}")
}

func (gn *gen) parser(static *gsc, d *front.ParserDecl, binds map[front.Decl]*gb) {
	sc := &gsc{parent: static, m: binds, prefix: static.prefix}
	for _, l := range d.Locals {
		switch x := l.(type) {
		case *front.VarDecl:
			gn.declVar(sc, x)
		case *front.ConstDecl:
			gn.declConst(sc, x)
		case *front.InstanceDecl:
			gn.refuse(x.P, "instances in a parser")
		}
	}
	index := map[string]int{}
	for i, s := range d.States {
		index[s.Name] = i
	}
	// The state graph must be acyclic (no parser loops: header stacks are not supported).
	color := make([]int, len(d.States))
	var visit func(i int)
	visit = func(i int) {
		color[i] = 1
		s := d.States[i]
		var next []string
		if s.Trans != nil {
			if s.Trans.Target != nil {
				next = append(next, s.Trans.Target.Name)
			} else {
				for _, c := range s.Trans.Select.Cases {
					next = append(next, c.State.Name)
				}
			}
		}
		for _, n := range next {
			j, ok := index[n]
			if !ok {
				continue
			}
			if color[j] == 1 {
				gn.refuse(s.P, "parser loops (state %s goes back to %s)", s.Name, n)
			}
			if color[j] == 0 {
				visit(j)
			}
		}
		color[i] = 2
	}
	start, ok := index["start"]
	if !ok {
		gn.refuse(d.P, "parser without a start state")
	}
	visit(start)
	outer := gn.b
	bodies := make([]string, len(d.States))
	used := map[string]bool{}
	goTo := func(name string) string {
		switch name {
		case "accept", "reject":
			return "return"
		}
		used[name] = true
		return "goto st_" + name
	}
	order := []int{start}
	for i := range d.States {
		if i != start && color[i] == 2 {
			order = append(order, i)
		}
	}
	for _, i := range order {
		s := d.States[i]
		var b strings.Builder
		gn.b = &b
		st := sc.child()
		gn.p("{")
		gn.stmts(st, s.Stmts)
		switch {
		case s.Trans == nil:
			gn.p("return")
		case s.Trans.Target != nil:
			gn.p("%s", goTo(s.Trans.Target.Name))
		default:
			gn.selectTrans(st, s.Trans.Select, goTo)
		}
		gn.p("}")
		bodies[i] = b.String()
	}
	gn.b = outer
	for _, i := range order {
		if used[d.States[i].Name] {
			gn.p("st_%s:", d.States[i].Name)
		}
		gn.b.WriteString(bodies[i])
	}
}

// keysetConst returns the value of a select case's constant (within mask m), or, when it
// depends on a parameter of the program, the expression that reads it at run time (masked).
func (gn *gen) keysetConst(e front.Expr, m uint64) (uint64, string) {
	v, ok := gn.constOf(e)
	if !ok {
		gn.refuse(e.Position(), "keyset that is not constant")
	}
	if r, ok := gn.paramRead(e, v); ok {
		return v, gn.maskx(r, m).s
	}
	return v, ""
}

// sliceLo returns, for a slice whose bounds depend on a parameter of the program, the
// expression that reads its low bound at run time; ok is false for any other slice (its
// bounds are folded).
func (gn *gen) sliceLo(x *front.SliceExpr) (string, bool) {
	if !gn.paramDep(x.Hi) && !gn.paramDep(x.Lo) {
		return "", false
	}
	v, ok := gn.constOf(x.Lo)
	if !ok {
		gn.refuse(x.P, "a slice bound that is not constant")
	}
	r, _ := gn.paramRead(x.Lo, v)
	if r.pe == nil {
		return fmt.Sprintf("%#x", v), true
	}
	return r.s, true
}

func (gn *gen) selectTrans(sc *gsc, se *front.SelectExpr, goTo func(string) string) {
	var keys []string
	var widths []int
	for _, k := range se.Keys {
		x := gn.val(sc, k)
		v := gn.tmp("k")
		gn.p("%s := uint64(%s)", v, x.s)
		gn.p("_ = %s", v)
		keys = append(keys, v)
		widths = append(widths, gn.width(k))
	}
	for _, c := range se.Cases {
		ks := c.Keyset
		if len(ks) == 1 && len(keys) > 1 {
			if l, ok := ks[0].(*front.ListExpr); ok {
				ks = l.Elems
			}
		}
		var conds []string
		for i, k := range ks {
			if i >= len(keys) {
				break
			}
			m := mask64(widths[i])
			switch x := k.(type) {
			case *front.DefaultExpr, *front.DontCareExpr:
			case *front.MaskExpr:
				v, vs := gn.keysetConst(x.X, m)
				mk, ms := gn.keysetConst(x.Y, m)
				if vs == "" && ms == "" {
					conds = append(conds, fmt.Sprintf("%s&%#x == %#x", keys[i], mk&m, v&mk&m))
					break
				}
				if vs == "" {
					vs = fmt.Sprintf("%#x", v)
				}
				if ms == "" {
					ms = fmt.Sprintf("%#x", mk&m)
				}
				conds = append(conds, fmt.Sprintf("%s&(%s) == (%s)&(%s)", keys[i], ms, vs, ms))
			case *front.RangeExpr:
				lo, los := gn.keysetConst(x.X, m)
				hi, his := gn.keysetConst(x.Y, m)
				if los == "" {
					los = fmt.Sprintf("%#x", lo&m)
				}
				if his == "" {
					his = fmt.Sprintf("%#x", hi&m)
				}
				conds = append(conds, fmt.Sprintf("%s >= %s && %s <= %s", keys[i], los, keys[i], his))
			default:
				v, vs := gn.keysetConst(k, m)
				if vs == "" {
					vs = fmt.Sprintf("%#x", v&m)
				}
				conds = append(conds, fmt.Sprintf("%s == %s", keys[i], vs))
			}
		}
		if len(conds) == 0 {
			gn.p("%s", goTo(c.State.Name))
			return
		}
		gn.p("if %s { %s }", strings.Join(conds, " && "), goTo(c.State.Name))
	}
	// No case matches: the parser stops with no error, as bmv2 with p4c-bm2-ss's JSON does
	// (compile_block.go, selectFn).
	gn.p("return")
}
