package front

import (
	"strings"
)

// This file checks instances that implement abstract extern methods (RegisterAction's apply)
// and the rules of the Tofino Native Architecture (arch/tna.p4) that a type checker can see:
// where the parser and deparser externs may be called, what a register action's apply body
// may do, and that a RegisterAction's cell and index types are its Register's.

// tnaArchFiles are the embedded files that declare TNA; declarations from them are TNA's.
var tnaArchFiles = map[string]bool{"tofino1_base.p4": true, "tofino1_arch.p4": true, "tofino1_specs.p4": true,
	"tofino2_base.p4": true, "tofino2_arch.p4": true, "tofino2_specs.p4": true}

// isTNAExtern reports whether d is one of tna.p4's externs (not a user declaration that
// happens to share a name).
func isTNAExtern(d *ExternDecl) bool { return d != nil && tnaArchFiles[d.P.File] }

// isTNADecl reports whether a declaration comes from tna.p4.
func isTNADecl(d Decl) bool { return d != nil && tnaArchFiles[d.Position().File] }

// tnaDeclared reports whether the program includes tna.p4.
func (c *checker) tnaDeclared() bool {
	for _, d := range c.global.names["Pipeline"] {
		if isTNADecl(d) {
			return true
		}
	}
	return false
}

func abstractNames(d *ExternDecl) string {
	var ns []string
	for _, m := range d.Methods {
		if m.Abstract {
			ns = append(ns, m.Name)
		}
	}
	return strings.Join(ns, ", ")
}

// synchronousAnnotations checks @synchronous(m1, m2, ...) on abstract methods: it names the
// methods of the extern during whose call the abstract method runs.
func (c *checker) synchronousAnnotations(d *ExternDecl) {
	for _, m := range d.Methods {
		a := m.Annos.Get("synchronous")
		if a == nil {
			continue
		}
		if !m.Abstract {
			c.errorf(a.P, "%s.%s: @synchronous applies to abstract methods only", d.Name, m.Name)
			continue
		}
		n := 0
		for _, t := range a.Args {
			if t.Text == "," {
				continue
			}
			n++
			found := false
			for _, x := range d.Methods {
				found = found || x.Name == t.Text && !x.Abstract
			}
			if t.Kind != TIdent || !found {
				c.errorf(a.P, "%s.%s: @synchronous names %s, which is not a method of %s", d.Name, m.Name, t.Text, d.Name)
			}
		}
		if n == 0 {
			c.errorf(a.P, "%s.%s: @synchronous needs the methods that run it", d.Name, m.Name)
		}
	}
}

// implementAbstract checks the { ... } of an instance: one implementation per abstract
// method, with the method's name, return type and parameters (directions and types, with
// the instance's type arguments substituted; trailing @optional parameters may be left
// out), and a body checked like a function body that can see the enclosing block's
// declarations.
func (c *checker) implementAbstract(d *InstanceDecl, tt *ExternType, cx *ctx) {
	sub := map[*TypeVar]Type{}
	for i, tv := range c.externTypeVars(tt.Decl) {
		if i < len(tt.Args) && tt.Args[i] != nil {
			sub[tv] = tt.Args[i]
		}
	}
	for _, n := range d.InitInstances {
		c.unsupported(n.P, "instantiations inside an instance initializer")
	}
	done := map[*MethodDecl]*FunctionDecl{}
	for _, f := range d.Init {
		f.Instance = d
		var m *MethodDecl
		for _, x := range tt.Decl.Methods {
			if x.Abstract && x.Name == f.Name {
				m = x
			}
		}
		if m == nil {
			c.errorf(f.P, "%s: extern %s has no abstract method %s (abstract methods: %s)", d.Name, tt.Decl.Name, f.Name, abstractNames(tt.Decl))
			continue
		}
		if prev := done[m]; prev != nil {
			c.errorf(f.P, "%s: %s is implemented twice (previous implementation at %s)", d.Name, f.Name, prev.P)
			continue
		}
		done[m] = f
		f.Abstract = m
		if len(f.TypeParams) > 0 {
			c.unsupported(f.P, "generic abstract method implementations")
			continue
		}
		f.RetT = c.resolveType(f.Ret, cx.sc)
		c.params(f.Params, cx.sc)
		if want := subst(m.RetT, sub); !sameType(want, f.RetT) {
			c.errorf(f.P, "%s.%s must return %s, not %s", d.Name, f.Name, want, f.RetT)
		}
		if len(f.Params) > len(m.Params) {
			c.errorf(f.P, "%s.%s takes at most %d parameters, not %d", d.Name, f.Name, len(m.Params), len(f.Params))
		}
		for i, mp := range m.Params {
			if i >= len(f.Params) {
				if mp.Annos.Get("optional") == nil {
					c.errorf(f.P, "%s.%s: missing parameter %s %s %s", d.Name, f.Name, mp.Dir, subst(mp.T, sub), mp.Name)
				}
				continue
			}
			fp := f.Params[i]
			if fp.Dir != mp.Dir {
				c.errorf(fp.P, "%s.%s: parameter %s must have direction %s, not %s", d.Name, f.Name, fp.Name, mp.Dir, fp.Dir)
			}
			if want := subst(mp.T, sub); !hasTypeVar(want) && !sameType(want, fp.T) {
				c.errorf(fp.P, "%s.%s: parameter %s must have type %s, not %s", d.Name, f.Name, fp.Name, want, fp.T)
			}
		}
		body := newScope(cx.sc)
		for _, p := range f.Params {
			c.noShadowParam(p.Name, p.P, &ctx{sc: cx.sc})
			c.declare(body, p.Name, p)
		}
		c.block(f.Body, &ctx{sc: body, control: cx.control, parser: cx.parser, fn: f})
		if _, void := f.RetT.(*VoidType); !void && !isBad(f.RetT) && !alwaysReturns(f.Body) {
			c.errorf(f.P, "%s.%s: not every path returns a value", d.Name, f.Name)
		}
		if isTNAExtern(tt.Decl) {
			c.registerActionBody(d, f)
		}
	}
	for _, m := range tt.Decl.Methods {
		// An @optional abstract method (Tofino 2's overflow and underflow) may be left out.
		if m.Abstract && done[m] == nil && m.Annos.Get("optional") == nil {
			c.errorf(d.P, "%s: abstract method %s of %s is not implemented", d.Name, m.Name, tt.Decl.Name)
		}
	}
}

// registerActionBody checks the apply body of a TNA register action: it runs on the
// stateful ALU, so it may not apply tables, call actions or access other stateful objects;
// the only calls it may make are MathUnit.execute, RegisterParam.read, min and max.
func (c *checker) registerActionBody(d *InstanceDecl, f *FunctionDecl) {
	walkStmt(f.Body, func(e Expr) {
		call, ok := e.(*CallExpr)
		if !ok {
			return
		}
		if call.Method != "" {
			if call.Method == "isValid" {
				return
			}
			c.errorf(call.P, "%s.%s: a register action cannot call %s (it runs on the register's ALU)", d.Name, f.Name, ExprString(call.Fun))
			return
		}
		switch m := call.Callee.(type) {
		case *MethodDecl:
			if m.Owner != nil && isTNAExtern(m.Owner) && (m.Owner.Name == "MathUnit" && m.Name == "execute" || m.Owner.Name == "RegisterParam" && m.Name == "read") {
				return
			}
			if m.Owner == nil && isTNADecl(m) && (m.Name == "min" || m.Name == "max") {
				return
			}
			if m.Owner != nil && (m.Owner.Name == "Register" || strings.HasSuffix(m.Owner.Name, "RegisterAction")) {
				c.errorf(call.P, "%s.%s: a register action reads and writes one cell of its own register; it cannot call %s", d.Name, f.Name, ExprString(call.Fun))
				return
			}
		case nil:
			return
		}
		c.errorf(call.P, "%s.%s: a register action cannot call %s (it runs on the register's ALU)", d.Name, f.Name, ExprString(call.Fun))
	})
}

// hasPacketOut reports whether a control is a deparser (takes a packet_out).
func hasPacketOut(d *ControlDecl) bool {
	if d == nil {
		return false
	}
	for _, p := range d.Params {
		if et, ok := p.T.(*ExternType); ok && et.Decl.Name == "packet_out" {
			return true
		}
	}
	return false
}

// tnaRestrictCall enforces where TNA's externs may be called: the parser externs in parsers,
// the deparser externs in deparsers (controls with a packet_out parameter), and the
// match-action externs in controls that are not deparsers.
func (c *checker) tnaRestrictCall(e *CallExpr, m *MethodDecl, cx *ctx) {
	inParser := cx.parser != nil
	inDeparser := cx.parser == nil && hasPacketOut(cx.control)
	where := func(ok bool, what string) {
		if !ok {
			c.errorf(e.P, "%s can only be called in %s", ExprString(e.Fun), what)
		}
	}
	// A deparser extern in a control without a packet_out is decided at the end: it is in a
	// deparser when a deparser applies that control (p4c inlines it there).
	deparserOnly := func() {
		if inDeparser {
			return
		}
		if cx.control != nil && cx.parser == nil && cx.fn == nil {
			c.tnaDeferred = append(c.tnaDeferred, deferredCall{call: e, control: cx.control})
			return
		}
		where(false, "a deparser")
	}
	if m.Owner == nil {
		switch m.Name {
		case "port_metadata_unpack":
			where(inParser, "an ingress parser")
		}
		return
	}
	switch m.Owner.Name {
	case "Checksum":
		if m.Name == "update" {
			deparserOnly()
		} else {
			where(inParser, "a parser")
		}
	case "ParserCounter", "ParserPriority":
		where(inParser, "a parser")
	case "Mirror", "Resubmit", "Digest":
		deparserOnly()
	case "Counter", "DirectCounter", "Meter", "DirectMeter", "Lpf", "DirectLpf", "Wred", "DirectWred",
		"Register", "DirectRegister", "RegisterAction", "DirectRegisterAction", "Hash", "Random", "SelectorAction":
		if cx.fn != nil && cx.fn.Abstract != nil {
			return // reported by registerActionBody
		}
		where(!inParser && !inDeparser, "a control that is not a deparser (a match-action stage)")
	}
}

// deferredCall is a deparser extern's call in a control that is not a deparser itself.
type deferredCall struct {
	call    *CallExpr
	control *ControlDecl
}

// tnaDeferredCalls decides the deferred deparser-extern calls: each must be in a control that a
// deparser (a control with a packet_out parameter) applies, directly or through controls it
// applies, and that no control other than such ones applies.
func (c *checker) tnaDeferredCalls() {
	if len(c.tnaDeferred) == 0 {
		return
	}
	applies := map[*ControlDecl][]*ControlDecl{} // control -> the controls it applies
	var controls []*ControlDecl
	for _, d := range c.out.Program.Decls {
		if cd, ok := d.(*ControlDecl); ok {
			controls = append(controls, cd)
			walkStmt(cd.Body, func(e Expr) {
				if call, ok := e.(*CallExpr); ok {
					if sub, ok := call.Callee.(*ControlDecl); ok {
						applies[cd] = append(applies[cd], sub)
					}
				}
			})
			for _, l := range cd.Locals {
				if a, ok := l.(*ActionDecl); ok {
					walkStmt(a.Body, func(e Expr) {
						if call, ok := e.(*CallExpr); ok {
							if sub, ok := call.Callee.(*ControlDecl); ok {
								applies[cd] = append(applies[cd], sub)
							}
						}
					})
				}
			}
		}
	}
	inDeparser, elsewhere := map[*ControlDecl]bool{}, map[*ControlDecl]bool{}
	var mark func(cd *ControlDecl, m map[*ControlDecl]bool)
	mark = func(cd *ControlDecl, m map[*ControlDecl]bool) {
		for _, sub := range applies[cd] {
			if !m[sub] && !hasPacketOut(sub) {
				m[sub] = true
				mark(sub, m)
			}
		}
	}
	for _, cd := range controls {
		if hasPacketOut(cd) {
			mark(cd, inDeparser)
		}
	}
	for _, cd := range controls {
		if !hasPacketOut(cd) && !inDeparser[cd] {
			mark(cd, elsewhere)
		}
	}
	for _, d := range c.tnaDeferred {
		if !inDeparser[d.control] || elsewhere[d.control] {
			c.errorf(d.call.P, "%s can only be called in a deparser (or a control that only deparsers apply)", ExprString(d.call.Fun))
		}
	}
}

// tnaPipelineRules checks what depends on a block's place in the pipeline: resubmission and
// digests are ingress deparser operations, port metadata exists in the ingress parser only,
// a resubmit header is at most 64 bits on Tofino 1, the egress parser's depth is bounded on
// Tofino 1 (tnaParseDepth), a deparser's field lists hold no constant but 0
// (tnaFieldListConstants), a parser writes a field once per path unless it ORs
// (tnaParserRewrites), and a condition in an action of an ingress or egress control is a
// constant or a bool action data parameter (tnaActionConditions), no hash reads a field
// a hash wrote in the same action (tnaHashOfHash), an if's condition is one a gateway
// evaluates (tnaGatewayConditions), a table's actions fit the immediate pathway
// (tnaTableImmediateBits, a warning) and a stage's instruction memory (tnaInstructionMemory).
func (c *checker) tnaPipelineRules() {
	pipes, err := c.out.TNAPipes()
	if err != nil {
		return // reported where it matters (the engine); MultiParserSwitch is accepted here
	}
	// A parser or deparser shared by pipes is checked once (as egress parser for the depth).
	parsers, egress, deparsers := map[*ParserDecl]bool{}, map[*ParserDecl]bool{}, map[*ControlDecl]bool{}
	controls := map[*ControlDecl]bool{}
	for _, p := range pipes {
		if ep := p.EgressParser.Parser; ep != nil && !egress[ep] {
			egress[ep] = true
			c.tnaConstantAdvance(ep, true)
			parsers[ep] = true
			c.tnaParseDepth(ep)
			c.tnaParserRewrites(ep, "egress")
		}
		if ip := p.IngressParser.Parser; ip != nil && !parsers[ip] {
			parsers[ip] = true
			c.tnaConstantAdvance(ip, false)
			c.tnaParserRewrites(ip, "ingress")
		}
		for _, b := range []Block{p.Ingress, p.Egress} {
			if b.Control != nil && !controls[b.Control] {
				controls[b.Control] = true
				c.tnaActionConditions(b)
				c.tnaHashOfHash(b)
				c.tnaSubActionData(b)
				c.tnaSharedCounters(b)
				c.tnaTableExterns(b)
				c.tnaActionAnswers(b)
				c.tnaAnswerSlots(b)
				c.tnaGatewayConditions(b)
				c.tnaImmediateBits(b)
				c.tnaTableImmediateBits(b)
				c.tnaHashPathway(b)
				c.tnaInstructionMemory(b)
			}
		}
		for _, b := range []Block{p.IngressDeparser, p.EgressDeparser} {
			if b.Control != nil && !deparsers[b.Control] {
				deparsers[b.Control] = true
				c.tnaFieldListConstants(b)
			}
		}
		c.tnaBlockCalls(p.EgressParser, func(call *CallExpr, m *MethodDecl) {
			if m.Owner == nil && m.Name == "port_metadata_unpack" {
				c.errorf(call.P, "port_metadata_unpack: port metadata only exists in the ingress parser")
			}
		})
		c.tnaBlockCalls(p.EgressDeparser, func(call *CallExpr, m *MethodDecl) {
			if m.Owner != nil && (m.Owner.Name == "Resubmit" || m.Owner.Name == "Digest") {
				c.errorf(call.P, "%s: %s is an ingress deparser extern", ExprString(call.Fun), m.Owner.Name)
			}
		})
		c.tnaBlockCalls(p.IngressDeparser, func(call *CallExpr, m *MethodDecl) {
			if m.Owner != nil && m.Owner.Name == "Resubmit" && m.Name == "emit" && len(call.Args) == 1 {
				t := call.Args[0].Value.Type()
				if len(call.TypeArgT) > 0 && call.TypeArgT[0] != nil {
					t = call.TypeArgT[0]
				}
				if w := WidthOf(t); w > 64 {
					c.errorf(call.P, "%s: a resubmit header is at most 64 bits on Tofino 1, not %d", ExprString(call.Fun), w)
				}
			}
			c.tnaTypedResubmit(call, m)
		})
	}
}

// tnaBlockCalls calls f for every extern method or function call in a block and in the
// parsers and controls it applies.
func (c *checker) tnaBlockCalls(b Block, f func(*CallExpr, *MethodDecl)) {
	seen := map[Decl]bool{}
	var visitDecl func(d Decl)
	visit := func(e Expr) {
		call, ok := e.(*CallExpr)
		if !ok {
			return
		}
		switch d := call.Callee.(type) {
		case *MethodDecl:
			f(call, d)
		case *ParserDecl, *ControlDecl, *ActionDecl, *FunctionDecl:
			visitDecl(d)
		}
	}
	visitDecl = func(d Decl) {
		if d == nil || seen[d] {
			return
		}
		seen[d] = true
		switch d := d.(type) {
		case *ParserDecl:
			for _, l := range d.Locals {
				inspectDecl(l, visit)
			}
			for _, s := range d.States {
				for _, st := range s.Stmts {
					walkStmt(st, visit)
				}
			}
		case *ControlDecl:
			for _, l := range d.Locals {
				inspectDecl(l, visit)
			}
			walkStmt(d.Body, visit)
		case *ActionDecl:
			walkStmt(d.Body, visit)
		case *FunctionDecl:
			walkStmt(d.Body, visit)
		}
	}
	if b.Parser != nil {
		visitDecl(b.Parser)
	}
	if b.Control != nil {
		visitDecl(b.Control)
	}
}

// tnaTypedResubmitMsg is bf-p4c 9.13.4's (p4c 34b86e9) failure on a Resubmit declared with its
// type as a constructor argument, on Tofino 2 with --alt-phv-alloc.
const tnaTypedResubmitMsg = "Compiler Bug: Trying to create field slice larger than field: bit[127..0].size() > ...resubmit_type<3>"

// tnaTypedResubmit warns, on Tofino 2, of an emit of a Resubmit declared with a constructor
// argument (Resubmit(type)): bf-p4c gives that emit's digest selector, the deparser metadata's
// resubmit_type, no type (parde/extract_deparser.cpp, processResubmitEmit: the Mirror case gets
// one), and its physical live ranges (--alt-phv-alloc, FinalizePhysicalLiverange) then take the
// selector's width as 128 bits and stop. Seen 2026-12-01 on a 40-line program; the same
// program with Resubmit() inside `if (resubmit_type == type)` compiles. Without
// --alt-phv-alloc both compile: a warning, not an error.
func (c *checker) tnaTypedResubmit(call *CallExpr, m *MethodDecl) {
	if c.out.TofinoGeneration() != 2 || m.Owner == nil || m.Owner.Name != "Resubmit" || m.Name != "emit" {
		return
	}
	me, ok := call.Fun.(*MemberExpr)
	if !ok {
		return
	}
	n, ok := me.X.(*NameExpr)
	if !ok {
		return
	}
	if inst, ok := n.Decl.(*InstanceDecl); ok && len(inst.Args) > 0 {
		c.warnf(call.P, "%s: likely refused by bf-p4c on Tofino 2 with --alt-phv-alloc (%s): declare %s as Resubmit() and emit it inside if (resubmit_type == type)",
			ExprString(call.Fun), tnaTypedResubmitMsg, inst.Name)
	}
}
