package front

import (
	"fmt"
)

// Parse parses preprocessed tokens into a Program, with the default nesting bound
// (DefaultMaxNesting). It stops at the first syntax error.
func Parse(toks []Token) (prog *Program, err error) {
	return ParseWith(toks, Options{})
}

// ParseWith is Parse with options: opts.MaxNesting bounds the nesting (see [Options]).
//
// Invariant of the returned program: no expression, statement or type is nested deeper than
// the bound, so every recursive walk of it (the checker, constant folding, the engine's
// compiler) recurses at most that deep per construct.
func ParseWith(toks []Token, opts Options) (prog *Program, err error) {
	p := &parser{toks: toks, types: map[string]int{}, maxSteps: 200*len(toks) + 10000, maxDepth: opts.maxNesting()}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok {
				prog, err = nil, ErrorList{e}
				return
			}
			panic(r)
		}
	}()
	prog = &Program{MaxNesting: p.maxDepth}
	for p.peek().Kind != TEOF {
		if p.is(";") {
			p.next()
			continue
		}
		prog.Decls = append(prog.Decls, p.topDecl())
	}
	return prog, nil
}

type parser struct {
	toks  []Token
	i     int
	types map[string]int // names currently known to be types (count of active declarations)
	steps int
	// maxSteps bounds the work (speculative parsing can revisit tokens) so that no input hangs.
	maxSteps int
	// depth is the nesting of the productions being parsed (expressions, statements, types);
	// maxDepth bounds it and the depth of every expression tree built (see nested).
	depth, maxDepth int
}

func (p *parser) peek() Token { return p.at(0) }

func (p *parser) at(k int) Token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	if len(p.toks) == 0 {
		return Token{Kind: TEOF}
	}
	last := p.toks[len(p.toks)-1]
	return Token{Kind: TEOF, Pos: last.Pos}
}

func (p *parser) next() Token {
	t := p.peek()
	if p.i < len(p.toks) {
		p.i++
	}
	return t
}

// is reports whether the next token is the punctuation or keyword s.
func (p *parser) is(s string) bool {
	t := p.peek()
	return (t.Kind == TPunct || t.Kind == TIdent) && t.Text == s
}

func (p *parser) isAt(k int, s string) bool {
	t := p.at(k)
	return (t.Kind == TPunct || t.Kind == TIdent) && t.Text == s
}

func (p *parser) accept(s string) bool {
	if p.is(s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) fail(pos Pos, format string, args ...any) {
	panic(errorf(pos, format, args...))
}

func describe(t Token) string {
	switch t.Kind {
	case TEOF:
		return "end of file"
	case TString:
		return fmt.Sprintf("string %q", t.Text)
	}
	return fmt.Sprintf("%q", t.Text)
}

func (p *parser) expect(s string) Token {
	t := p.peek()
	if !p.is(s) {
		p.fail(t.Pos, "syntax error: expected %q, found %s", s, describe(t))
	}
	return p.next()
}

var keywords = map[string]bool{
	"action": true, "apply": true, "bit": true, "bool": true, "const": true, "control": true,
	"default": true, "else": true, "enum": true, "error": true, "exit": true, "extern": true,
	"false": true, "header": true, "header_union": true, "if": true, "in": true, "inout": true,
	"int": true, "key": false, "match_kind": true, "out": true, "package": true, "parser": true,
	"return": true, "select": true, "state": true, "string": true, "struct": true, "switch": true,
	"table": true, "transition": true, "true": true, "tuple": true, "typedef": true, "type": true,
	"varbit": true, "void": true, "value_set": true, "abstract": true, "list": true, "this": true,
	"entries": false, "actions": false,
}

// softKeywords may also be used as names, as in p4c's grammar.
var softKeywords = map[string]bool{"type": true, "apply": true, "state": true, "list": true}

func (p *parser) ident() (string, Pos) {
	t := p.peek()
	if t.Kind != TIdent || keywords[t.Text] && !softKeywords[t.Text] || t.Text == "_" {
		p.fail(t.Pos, "syntax error: expected a name, found %s", describe(t))
	}
	p.next()
	return t.Text, t.Pos
}

// memberName accepts the grammar's name where p4c's does: a field, an enum member, a member
// after '.', a method, a table property, a match kind, an action reference or an annotation.
// Like p4c, it takes an identifier or one of the keywords that P4_16 lets be names (apply,
// key, actions, entries, state, type, list, priority) and refuses the others (in, out, inout,
// bit, if, ...): p4c's parser says "syntax error, unexpected OUT" for header h { bit<8> out; }.
func (p *parser) memberName() (string, Pos) {
	t := p.peek()
	if t.Kind != TIdent || t.Text == "_" {
		p.fail(t.Pos, "syntax error: expected a member name, found %s", describe(t))
	}
	if keywords[t.Text] && !softKeywords[t.Text] {
		p.fail(t.Pos, "syntax error: %q is a P4_16 keyword and cannot be used as a name", t.Text)
	}
	p.next()
	return t.Text, t.Pos
}

func (p *parser) tick() {
	p.steps++
	if p.maxSteps > 0 && p.steps > p.maxSteps {
		p.fail(p.peek().Pos, "program too complex to parse (nesting too deep)")
	}
}

// enter starts a nested production and fails when the nesting passes the bound; leave ends it.
// A failure unwinds the parser (a panic), so enter and leave pair up only on success: a
// caller that recovers from a failure restores depth itself (callTypeArgsAhead).
func (p *parser) enter() {
	p.depth++
	if p.depth > p.maxDepth {
		p.fail(p.peek().Pos, "%s: more than %d levels", errNesting, p.maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// nested records e's depth, one more than the deepest of its operands (nil ones skipped), and
// fails when it passes the bound. Operator chains (a + b + c ..., a.b.c ..., f()()...) are
// parsed by loops, not recursion: this is what bounds the trees they build.
func (p *parser) nested(e Expr, operands ...Expr) Expr {
	d := int32(0)
	for _, o := range operands {
		if o != nil {
			d = max(d, o.(nester).nesting())
		}
	}
	d++
	if int(d) > p.maxDepth {
		p.fail(e.Position(), "%s: more than %d levels", errNesting, p.maxDepth)
	}
	e.(nester).setNesting(d)
	return e
}

// argExprs returns the values of a call's arguments (for nested).
func argExprs(fun Expr, args []*Arg) []Expr {
	out := make([]Expr, 0, len(args)+1)
	out = append(out, fun)
	for _, a := range args {
		out = append(out, a.Value)
	}
	return out
}

func (p *parser) isTypeName(s string) bool { return p.types[s] > 0 }

func (p *parser) declareType(s string) { p.types[s]++ }

func (p *parser) pushTypeParams(tps []string) {
	for _, t := range tps {
		p.types[t]++
	}
}

func (p *parser) popTypeParams(tps []string) {
	for _, t := range tps {
		p.types[t]--
	}
}

// ---- annotations --------------------------------------------------------------------------------

func (p *parser) annotations() Annotations {
	var as Annotations
	for p.is("@") {
		at := p.next()
		name, _ := p.memberName()
		a := &Annotation{P: at.Pos, Name: name}
		if p.is("(") {
			p.next()
			depth := 1
			for {
				t := p.peek()
				if t.Kind == TEOF {
					p.fail(at.Pos, "syntax error: unterminated annotation @%s", name)
				}
				p.next()
				if t.Kind == TPunct && t.Text == "(" {
					depth++
				}
				if t.Kind == TPunct && t.Text == ")" {
					depth--
					if depth == 0 {
						break
					}
				}
				a.Args = append(a.Args, t)
			}
			a.Exprs = parseAnnotationExprs(a.Args, p.types, p.maxDepth)
			switch name {
			case "name", "deprecated", "controller_header", "brief", "description":
				if len(a.Args) != 1 || a.Args[0].Kind != TString {
					p.fail(at.Pos, "@%s: the argument must be a single string", name)
				}
			}
		} else if p.is("[") {
			p.fail(at.Pos, "%s", unsupported(at.Pos, "structured annotation @%s[...]", name).Msg)
		}
		as = append(as, a)
	}
	return as
}

func parseAnnotationExprs(toks []Token, types map[string]int, maxDepth int) (exprs []Expr) {
	if len(toks) == 0 {
		return nil
	}
	sub := &parser{toks: append(append([]Token(nil), toks...), Token{Kind: TEOF, Pos: toks[len(toks)-1].Pos}), types: types, maxSteps: 200*len(toks) + 10000, maxDepth: maxDepth}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*Error); !ok {
				panic(r)
			}
			exprs = nil
		}
	}()
	for {
		exprs = append(exprs, sub.expr())
		if !sub.accept(",") {
			break
		}
	}
	if sub.peek().Kind != TEOF {
		return nil
	}
	return exprs
}

// ---- types --------------------------------------------------------------------------------------

// startsType reports whether a type can start at the current token.
func (p *parser) startsType() bool {
	t := p.peek()
	if t.Kind != TIdent {
		return false
	}
	switch t.Text {
	case "bit", "int", "varbit", "bool", "error", "string", "void", "tuple", "match_kind":
		return true
	}
	return p.isTypeName(t.Text)
}

func (p *parser) typeRef() TypeRef {
	p.enter()
	defer p.leave()
	t := p.peek()
	var ty TypeRef
	switch {
	case t.Kind == TIdent && (t.Text == "bit" || t.Text == "int" || t.Text == "varbit"):
		p.next()
		b := &BaseTypeRef{P: t.Pos, Kind: t.Text}
		if p.is("<") {
			p.next()
			switch {
			case p.peek().Kind == TInt:
				it := p.next()
				b.Width = &IntExpr{exprBase: exprBase{P: it.Pos}, Lit: it.Lit}
			case p.is("("):
				p.next()
				b.Width = p.expr()
				p.expect(")")
			default:
				p.fail(p.peek().Pos, "syntax error: expected a width (an integer or a parenthesized expression), found %s", describe(p.peek()))
			}
			p.expect(">")
		} else if t.Text == "varbit" {
			p.fail(p.peek().Pos, "syntax error: varbit needs a maximum width")
		} else if t.Text == "bit" {
			b.Width = &IntExpr{exprBase: exprBase{P: t.Pos}, Lit: &IntLit{Value: bigInt(1)}}
		}
		ty = b
	case t.Kind == TIdent && (t.Text == "bool" || t.Text == "error" || t.Text == "string" || t.Text == "void" || t.Text == "match_kind"):
		p.next()
		ty = &BaseTypeRef{P: t.Pos, Kind: t.Text}
	case t.Kind == TIdent && t.Text == "tuple":
		p.next()
		p.expect("<")
		tt := &TupleTypeRef{P: t.Pos}
		for !p.is(">") {
			tt.Elems = append(tt.Elems, p.typeArg())
			if !p.accept(",") {
				break
			}
		}
		p.expect(">")
		ty = tt
	case t.Kind == TIdent && t.Text == "list":
		p.fail(t.Pos, "%s", unsupported(t.Pos, "list types").Msg)
	case t.Kind == TPunct && t.Text == ".":
		p.next()
		return p.typeRef()
	case t.Kind == TIdent && !keywords[t.Text]:
		p.next()
		n := &NamedTypeRef{P: t.Pos, Name: t.Text}
		if p.is("<") {
			p.next()
			for !p.is(">") {
				n.Args = append(n.Args, p.typeArg())
				if !p.accept(",") {
					break
				}
			}
			p.expect(">")
		}
		ty = n
	default:
		p.fail(t.Pos, "syntax error: expected a type, found %s", describe(t))
	}
	for p.is("[") {
		lb := p.next()
		size := p.expr()
		p.expect("]")
		ty = &StackTypeRef{P: lb.Pos, Elem: ty, Size: size}
	}
	return ty
}

func (p *parser) typeArg() TypeRef {
	if p.is("_") {
		t := p.next()
		return &DontCareTypeRef{P: t.Pos}
	}
	return p.typeRef()
}

func (p *parser) typeParams() []string {
	var tps []string
	if !p.accept("<") {
		return nil
	}
	for !p.is(">") {
		n, _ := p.ident()
		tps = append(tps, n)
		if !p.accept(",") {
			break
		}
	}
	p.expect(">")
	return tps
}

func (p *parser) params() []*Param {
	p.expect("(")
	var ps []*Param
	for !p.is(")") {
		annos := p.annotations()
		pr := &Param{Annos: annos, P: p.peek().Pos}
		switch {
		case p.accept("in"):
			pr.Dir = DirIn
		case p.accept("out"):
			pr.Dir = DirOut
		case p.accept("inout"):
			pr.Dir = DirInOut
		}
		pr.Type = p.typeRef()
		pr.Name, pr.P = p.ident()
		if p.accept("=") {
			pr.Deflt = p.expr()
		}
		ps = append(ps, pr)
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	return ps
}

// ---- declarations -------------------------------------------------------------------------------

func (p *parser) topDecl() Decl {
	p.tick()
	annos := p.annotations()
	t := p.peek()
	if t.Kind != TIdent {
		p.fail(t.Pos, "syntax error: expected a declaration, found %s", describe(t))
	}
	switch t.Text {
	case "const":
		return p.constDecl(annos)
	case "typedef", "type":
		return p.typedefDecl(annos)
	case "header", "struct", "header_union":
		return p.structDecl(annos)
	case "enum":
		return p.enumDecl(annos)
	case "error":
		if p.isAt(1, "{") {
			p.next()
			return &ErrorDecl{P: t.Pos, Members: p.memberList()}
		}
	case "match_kind":
		p.next()
		return &MatchKindDecl{P: t.Pos, Members: p.memberList()}
	case "extern":
		return p.externDecl(annos)
	case "parser":
		return p.parserDecl(annos)
	case "control":
		return p.controlDecl(annos)
	case "package":
		p.next()
		name, pos := p.ident()
		p.declareType(name)
		d := &PackageDecl{Annos: annos, P: pos, Name: name}
		d.TypeParams = p.typeParams()
		p.pushTypeParams(d.TypeParams)
		d.Params = p.params()
		p.popTypeParams(d.TypeParams)
		p.expect(";")
		return d
	case "action":
		return p.actionDecl(annos)
	case "value_set":
		p.fail(t.Pos, "syntax error: value sets are only allowed in parsers")
	}
	// A function definition or an instantiation, both starting with a type.
	if !p.startsType() && !(t.Kind == TIdent && !keywords[t.Text] && (p.isAt(1, "(") || p.isAt(1, "<"))) {
		p.fail(t.Pos, "syntax error: expected a declaration, found %s", describe(t))
	}
	ty := p.typeRef()
	if p.is("(") {
		return p.instanceRest(annos, ty)
	}
	name, pos := p.ident()
	if p.is("<") || p.is("(") {
		f := &FunctionDecl{Annos: annos, P: pos, Ret: ty, Name: name}
		f.TypeParams = p.typeParams()
		p.pushTypeParams(f.TypeParams)
		f.Params = p.params()
		f.Body = p.block()
		p.popTypeParams(f.TypeParams)
		return f
	}
	p.fail(pos, "syntax error: top-level variable %s must be declared const", name)
	return nil
}

func (p *parser) instanceRest(annos Annotations, ty TypeRef) *InstanceDecl {
	d := &InstanceDecl{Annos: annos, P: ty.Position(), Type: ty}
	d.Args = p.args()
	if p.is("{") {
		p.fail(p.peek().Pos, "%s", unsupported(p.peek().Pos, "abstract method implementations in instantiations").Msg)
	}
	d.Name, d.P = p.ident()
	if p.accept("=") {
		d.Init = p.objInitializer(&d.InitInstances)
	}
	p.expect(";")
	return d
}

// objInitializer parses the { ... } of an instantiation that implements abstract methods:
// function declarations, and instantiations (returned in nested).
func (p *parser) objInitializer(nested *[]*InstanceDecl) []*FunctionDecl {
	p.expect("{")
	fs := []*FunctionDecl{} // non-nil: the instance has an initializer, perhaps empty
	for !p.is("}") {
		p.tick()
		annos := p.annotations()
		if !p.startsType() && p.peek().Kind != TIdent {
			p.fail(p.peek().Pos, "syntax error: expected a method implementation, found %s", describe(p.peek()))
		}
		ret := p.typeRef()
		if p.is("(") {
			// An instance inside the initializer (this.x in p4c): outside the subset, reported
			// by the checker so that errors before it come first.
			*nested = append(*nested, p.instanceRest(annos, ret))
			continue
		}
		f := &FunctionDecl{Annos: annos, Ret: ret}
		f.Name, f.P = p.ident()
		f.TypeParams = p.typeParams()
		p.pushTypeParams(f.TypeParams)
		f.Params = p.params()
		f.Body = p.block()
		p.popTypeParams(f.TypeParams)
		fs = append(fs, f)
	}
	p.expect("}")
	return fs
}

func (p *parser) constDecl(annos Annotations) *ConstDecl {
	p.expect("const")
	d := &ConstDecl{Annos: annos}
	d.Type = p.typeRef()
	d.Name, d.P = p.ident()
	p.expect("=")
	d.Value = p.expr()
	p.expect(";")
	return d
}

func (p *parser) typedefDecl(annos Annotations) *TypedefDecl {
	kw := p.next()
	d := &TypedefDecl{Annos: annos, IsNewType: kw.Text == "type"}
	if p.is("header") || p.is("struct") || p.is("enum") {
		p.fail(p.peek().Pos, "%s", unsupported(p.peek().Pos, "typedef of an inline %s declaration", p.peek().Text).Msg)
	}
	d.Type = p.typeRef()
	d.Name, d.P = p.ident()
	p.declareType(d.Name)
	p.expect(";")
	return d
}

func (p *parser) structDecl(annos Annotations) *StructDecl {
	kw := p.next()
	d := &StructDecl{Annos: annos, Kind: kw.Text}
	d.Name, d.P = p.ident()
	p.declareType(d.Name)
	if p.is("<") {
		p.fail(p.peek().Pos, "%s", unsupported(p.peek().Pos, "generic %s types", kw.Text).Msg)
	}
	p.expect("{")
	for !p.is("}") {
		p.tick()
		fa := p.annotations()
		f := &Field{Annos: fa}
		f.Type = p.typeRef()
		f.Name, f.P = p.memberName()
		p.expect(";")
		d.Fields = append(d.Fields, f)
	}
	p.expect("}")
	return d
}

func (p *parser) memberList() []*EnumMember {
	p.expect("{")
	var ms []*EnumMember
	for !p.is("}") {
		p.annotations()
		n, pos := p.memberName()
		ms = append(ms, &EnumMember{P: pos, Name: n})
		if !p.accept(",") {
			break
		}
	}
	p.expect("}")
	return ms
}

func (p *parser) enumDecl(annos Annotations) *EnumDecl {
	p.expect("enum")
	d := &EnumDecl{Annos: annos}
	if !(p.peek().Kind == TIdent && p.isAt(1, "{")) {
		d.Underlying = p.typeRef()
	}
	d.Name, d.P = p.ident()
	p.declareType(d.Name)
	p.expect("{")
	for !p.is("}") {
		p.annotations()
		n, pos := p.memberName()
		m := &EnumMember{P: pos, Name: n, Owner: d}
		if d.Underlying != nil {
			p.expect("=")
			m.Value = p.expr()
		}
		d.Members = append(d.Members, m)
		if !p.accept(",") {
			break
		}
	}
	p.expect("}")
	return d
}

func (p *parser) externDecl(annos Annotations) Decl {
	p.expect("extern")
	t := p.peek()
	if t.Kind == TIdent && !keywords[t.Text] && !p.isTypeName(t.Text) && (p.isAt(1, "{") || p.isAt(1, "<")) {
		// extern object type
		p.next()
		d := &ExternDecl{Annos: annos, P: t.Pos, Name: t.Text}
		p.declareType(d.Name)
		d.TypeParams = p.typeParams()
		p.pushTypeParams(d.TypeParams)
		defer p.popTypeParams(d.TypeParams)
		p.expect("{")
		for !p.is("}") {
			p.tick()
			ma := p.annotations()
			m := &MethodDecl{Annos: ma, Owner: d}
			if p.accept("abstract") {
				m.Abstract = true
			}
			if p.peek().Kind == TIdent && p.peek().Text == d.Name && p.isAt(1, "(") {
				m.Name, m.P = p.ident()
				m.Params = p.params()
				p.expect(";")
				d.Ctors = append(d.Ctors, m)
				continue
			}
			// Method type parameters may appear in the return type: peek ahead.
			tps := p.scanMethodTypeParams()
			p.pushTypeParams(tps)
			m.Ret = p.typeRef()
			m.Name, m.P = p.memberName()
			if m.Name == d.Name {
				p.fail(m.P, "%s: invalid constructor; a constructor cannot have a return type", d.Name)
			}
			m.TypeParams = p.typeParams()
			m.Params = p.params()
			p.popTypeParams(tps)
			p.expect(";")
			d.Methods = append(d.Methods, m)
		}
		p.expect("}")
		return d
	}
	tps := p.scanMethodTypeParams()
	p.pushTypeParams(tps)
	defer p.popTypeParams(tps)
	m := &MethodDecl{Annos: annos}
	m.Ret = p.typeRef()
	m.Name, m.P = p.ident()
	m.TypeParams = p.typeParams()
	m.Params = p.params()
	p.expect(";")
	return m
}

// scanMethodTypeParams looks ahead over "RetType name<T, U>(" and returns T, U so that the
// return type can mention them.
func (p *parser) scanMethodTypeParams() []string {
	for k := 0; k < 64; k++ {
		t := p.at(k)
		if t.Kind == TEOF || t.Text == ";" || t.Text == "(" {
			return nil
		}
		if t.Kind == TIdent && p.isAt(k+1, "<") {
			// Could be Ret<...> or name<...>; name<...> is followed by '('.
			var tps []string
			j := k + 2
			for ; j < k+40; j++ {
				a := p.at(j)
				if a.Kind == TIdent {
					tps = append(tps, a.Text)
				} else if a.Text == ">" {
					break
				} else if a.Text != "," {
					tps = nil
					break
				}
			}
			if tps != nil && p.isAt(j, ">") && p.isAt(j+1, "(") {
				return tps
			}
		}
	}
	return nil
}

func (p *parser) parserDecl(annos Annotations) *ParserDecl {
	p.expect("parser")
	d := &ParserDecl{Annos: annos}
	d.Name, d.P = p.ident()
	p.declareType(d.Name)
	d.TypeParams = p.typeParams()
	p.pushTypeParams(d.TypeParams)
	defer p.popTypeParams(d.TypeParams)
	d.Params = p.params()
	if p.accept(";") {
		return d
	}
	if p.is("(") {
		d.CtorParams = p.params()
	}
	d.HasBody = true
	p.expect("{")
	for !p.is("}") {
		p.tick()
		annos := p.annotations()
		if p.is("state") {
			d.States = append(d.States, p.parserState(annos))
			continue
		}
		d.Locals = append(d.Locals, p.localDecl(annos, false))
	}
	p.expect("}")
	return d
}

func (p *parser) parserState(annos Annotations) *ParserState {
	p.expect("state")
	s := &ParserState{Annos: annos}
	s.Name, s.P = p.ident()
	p.expect("{")
	for !p.is("}") && !p.is("transition") {
		s.Stmts = append(s.Stmts, p.stmt())
	}
	if p.is("transition") {
		tt := p.next()
		tr := &Transition{P: tt.Pos}
		if p.is("select") {
			tr.Select = p.selectExpr()
			p.accept(";")
		} else {
			n, pos := p.ident()
			tr.Target = &NameExpr{exprBase: exprBase{P: pos}, Name: n}
			p.expect(";")
		}
		s.Trans = tr
	}
	p.expect("}")
	return s
}

func (p *parser) selectExpr() *SelectExpr {
	st := p.expect("select")
	se := &SelectExpr{exprBase: exprBase{P: st.Pos}}
	p.expect("(")
	for !p.is(")") {
		se.Keys = append(se.Keys, p.expr())
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	p.expect("{")
	for !p.is("}") {
		p.tick()
		c := &SelectCase{P: p.peek().Pos}
		c.Keyset = p.keyset()
		p.expect(":")
		n, pos := p.ident()
		c.State = &NameExpr{exprBase: exprBase{P: pos}, Name: n}
		p.expect(";")
		se.Cases = append(se.Cases, c)
	}
	p.expect("}")
	return se
}

// keyset parses a select or entry keyset: a single simple keyset or a parenthesized tuple.
func (p *parser) keyset() []Expr {
	if p.is("(") {
		// A tuple keyset, unless it is a parenthesized expression followed by an operator; we
		// treat "(a, b)" as a tuple and "(a)" as one keyset.
		save := p.i
		p.next()
		var ks []Expr
		for !p.is(")") {
			ks = append(ks, p.simpleKeyset())
			if !p.accept(",") {
				break
			}
		}
		if p.accept(")") && (p.is(":")) {
			return ks
		}
		p.i = save
	}
	return []Expr{p.simpleKeyset()}
}

func (p *parser) simpleKeyset() Expr {
	t := p.peek()
	if p.is("default") {
		p.next()
		return &DefaultExpr{exprBase{P: t.Pos}}
	}
	if p.is("_") {
		p.next()
		return &DontCareExpr{exprBase{P: t.Pos}}
	}
	e := p.expr()
	if p.is("&&&") {
		op := p.next()
		y := p.expr()
		return p.nested(&MaskExpr{exprBase: exprBase{P: op.Pos}, X: e, Y: y}, e, y)
	}
	if p.is("..") {
		op := p.next()
		y := p.expr()
		return p.nested(&RangeExpr{exprBase: exprBase{P: op.Pos}, X: e, Y: y}, e, y)
	}
	return e
}

func (p *parser) controlDecl(annos Annotations) *ControlDecl {
	p.expect("control")
	d := &ControlDecl{Annos: annos}
	d.Name, d.P = p.ident()
	p.declareType(d.Name)
	d.TypeParams = p.typeParams()
	p.pushTypeParams(d.TypeParams)
	defer p.popTypeParams(d.TypeParams)
	d.Params = p.params()
	if p.accept(";") {
		return d
	}
	if p.is("(") {
		d.CtorParams = p.params()
	}
	d.HasBody = true
	p.expect("{")
	for !p.is("apply") {
		p.tick()
		if p.is("}") || p.peek().Kind == TEOF {
			p.fail(p.peek().Pos, "syntax error: control %s has no apply block", d.Name)
		}
		annos := p.annotations()
		d.Locals = append(d.Locals, p.localDecl(annos, true))
	}
	p.expect("apply")
	d.Body = p.block()
	p.expect("}")
	return d
}

// localDecl parses a declaration inside a parser or control body.
func (p *parser) localDecl(annos Annotations, inControl bool) Decl {
	t := p.peek()
	switch {
	case p.is("const"):
		return p.constDecl(annos)
	case p.is("action"):
		return p.actionDecl(annos)
	case p.is("table"):
		if !inControl {
			p.fail(t.Pos, "syntax error: tables are only allowed in controls")
		}
		return p.tableDecl(annos)
	case p.is("value_set"):
		if inControl {
			p.fail(t.Pos, "syntax error: value sets are only allowed in parsers")
		}
		p.next()
		d := &ValueSetDecl{Annos: annos}
		p.expect("<")
		d.Type = p.typeArg()
		p.expect(">")
		p.expect("(")
		d.Size = p.expr()
		p.expect(")")
		d.Name, d.P = p.ident()
		p.expect(";")
		return d
	case p.is("state"):
		p.fail(t.Pos, "syntax error: states are only allowed in parsers")
	}
	if !p.startsType() && !(t.Kind == TIdent && !keywords[t.Text]) {
		p.fail(t.Pos, "syntax error: expected a declaration, found %s", describe(t))
	}
	ty := p.typeRef()
	if p.is("(") {
		return p.instanceRest(annos, ty)
	}
	d := &VarDecl{Annos: annos, Type: ty}
	d.Name, d.P = p.ident()
	if p.accept("=") {
		d.Init = p.expr()
	}
	p.expect(";")
	return d
}

func (p *parser) actionDecl(annos Annotations) *ActionDecl {
	p.expect("action")
	d := &ActionDecl{Annos: annos}
	d.Name, d.P = p.ident()
	d.Params = p.params()
	d.Body = p.block()
	return d
}

func (p *parser) tableDecl(annos Annotations) *TableDecl {
	p.expect("table")
	d := &TableDecl{Annos: annos}
	d.Name, d.P = p.ident()
	p.expect("{")
	for !p.is("}") {
		p.tick()
		pa := p.annotations()
		prop := &TableProp{Annos: pa, P: p.peek().Pos}
		if p.accept("const") {
			prop.Const = true
		}
		prop.Name, prop.P = p.memberName()
		switch prop.Name {
		case "key":
			p.expect("=")
			p.expect("{")
			for !p.is("}") {
				k := &KeyElem{P: p.peek().Pos}
				k.Expr = p.expr()
				p.expect(":")
				k.MatchKind, k.MKPos = p.memberName()
				k.Annos = p.annotations()
				p.expect(";")
				prop.Keys = append(prop.Keys, k)
			}
			p.expect("}")
			p.accept(";")
		case "actions":
			p.expect("=")
			p.expect("{")
			for !p.is("}") {
				aa := p.annotations()
				ar := p.actionRef()
				ar.Annos = aa
				p.expect(";")
				prop.Actions = append(prop.Actions, ar)
			}
			p.expect("}")
			p.accept(";")
		case "entries":
			p.expect("=")
			p.expect("{")
			for !p.is("}") {
				ea := p.annotations()
				e := &Entry{Annos: ea, P: p.peek().Pos}
				if p.is("priority") && p.isAt(1, "=") {
					p.fail(p.peek().Pos, "%s", unsupported(p.peek().Pos, "entry priorities").Msg)
				}
				if p.is("const") {
					p.next()
				}
				e.Keys = p.keyset()
				p.expect(":")
				e.Action = p.actionRef()
				// Annotations after the action belong to the entry (p4c: keyset ':' actionRef
				// optAnnotations ';'), e.g. @priority.
				e.Annos = append(e.Annos, p.annotations()...)
				p.expect(";")
				prop.Entries = append(prop.Entries, e)
			}
			p.expect("}")
			p.accept(";")
		case "default_action":
			p.expect("=")
			ar := p.actionRef()
			prop.Actions = []*ActionRef{ar}
			p.expect(";")
		default:
			p.expect("=")
			prop.Value = p.expr()
			p.expect(";")
		}
		d.Props = append(d.Props, prop)
	}
	p.expect("}")
	return d
}

func (p *parser) actionRef() *ActionRef {
	ar := &ActionRef{P: p.peek().Pos}
	global := p.accept(".")
	n, pos := p.memberName()
	ar.Name = &NameExpr{exprBase: exprBase{P: pos}, Name: n, Global: global}
	if p.is("(") {
		ar.HasArg = true
		ar.Args = p.args()
	}
	return ar
}

func (p *parser) args() []*Arg {
	p.expect("(")
	var as []*Arg
	for !p.is(")") {
		a := &Arg{P: p.peek().Pos}
		if p.peek().Kind == TIdent && p.isAt(1, "=") && !p.isAt(2, "=") {
			a.Name = p.next().Text
			p.next()
		}
		if p.is("_") {
			t := p.next()
			a.Value = &DontCareExpr{exprBase{P: t.Pos}}
		} else {
			a.Value = p.expr()
		}
		as = append(as, a)
		if !p.accept(",") {
			break
		}
	}
	p.expect(")")
	return as
}

// ---- statements ---------------------------------------------------------------------------------

func (p *parser) block() *BlockStmt {
	p.enter()
	defer p.leave()
	lb := p.expect("{")
	b := &BlockStmt{P: lb.Pos}
	for !p.is("}") {
		if p.peek().Kind == TEOF {
			p.fail(lb.Pos, "syntax error: unterminated block")
		}
		b.Stmts = append(b.Stmts, p.stmt())
	}
	p.expect("}")
	return b
}

func (p *parser) stmt() Stmt {
	p.tick()
	annos := p.annotations()
	t := p.peek()
	if t.Kind == TPunct {
		switch t.Text {
		case "{":
			b := p.block()
			b.Annos = annos
			return b
		case ";":
			p.next()
			return &EmptyStmt{P: t.Pos}
		}
	}
	if t.Kind == TIdent {
		switch t.Text {
		case "if":
			p.next()
			p.enter()
			defer p.leave()
			s := &IfStmt{P: t.Pos}
			p.expect("(")
			s.Cond = p.expr()
			p.expect(")")
			s.Then = p.stmt()
			if p.accept("else") {
				s.Else = p.stmt()
			}
			return s
		case "switch":
			return p.switchStmt()
		case "exit":
			p.next()
			p.expect(";")
			return &ExitStmt{P: t.Pos}
		case "return":
			p.next()
			s := &ReturnStmt{P: t.Pos}
			if !p.is(";") {
				s.Value = p.expr()
			}
			p.expect(";")
			return s
		case "const":
			return &DeclStmt{P: t.Pos, Decl: p.constDecl(annos)}
		case "transition":
			p.fail(t.Pos, "syntax error: transition must be the last statement of a parser state")
		case "for":
			p.fail(t.Pos, "%s", unsupported(t.Pos, "for loops").Msg)
		case "action", "table":
			p.fail(t.Pos, "syntax error: %s declarations are not allowed inside a block", t.Text)
		}
		// A declaration starts with a type followed by a name (T x), a '<' (generic), or '(' for an
		// instantiation; an expression statement starts with a name followed by '.', '[', '(' or '='.
		if p.startsType() && !p.isAt(1, ".") || (t.Kind == TIdent && p.isAt(1, "<") && !keywords[t.Text]) && p.isTypeName(t.Text) {
			ty := p.typeRef()
			if p.is("(") {
				return &DeclStmt{P: t.Pos, Decl: p.instanceRest(annos, ty)}
			}
			d := &VarDecl{Annos: annos, Type: ty}
			d.Name, d.P = p.ident()
			if p.accept("=") {
				d.Init = p.expr()
			}
			p.expect(";")
			return &DeclStmt{P: t.Pos, Decl: d}
		}
	}
	lhs := p.expr()
	if p.is("=") {
		eq := p.next()
		rhs := p.expr()
		p.expect(";")
		return &AssignStmt{P: eq.Pos, LHS: lhs, RHS: rhs}
	}
	if op, n := p.compoundOp(); op != "" {
		opTok := p.peek()
		p.i += n
		rhs := p.expr()
		p.expect(";")
		return &AssignStmt{P: opTok.Pos, Op: op, LHS: lhs, RHS: p.nested(&BinaryExpr{exprBase: exprBase{P: opTok.Pos}, Op: op, X: lhs, Y: rhs}, lhs, rhs)}
	}
	call, ok := lhs.(*CallExpr)
	if !ok {
		p.fail(lhs.Position(), "syntax error: expression is not a statement (expected an assignment or a call)")
	}
	p.expect(";")
	return &CallStmt{P: call.P, Call: call}
}

// compoundOp recognizes a compound assignment operator (+=, <<=, |+|= ...) at the current token
// and returns the binary operator and the number of tokens it spans.
func (p *parser) compoundOp() (string, int) {
	t := p.peek()
	if t.Kind != TPunct {
		return "", 0
	}
	adjacent := func(k int, text string, col int) bool {
		n := p.at(k)
		return n.Kind == TPunct && n.Text == text && n.Pos.Line == t.Pos.Line && n.Pos.Col == col
	}
	switch t.Text {
	case "+", "-", "*", "/", "%", "&", "|", "^", "<<", "|+|", "|-|":
		if adjacent(1, "=", t.Pos.Col+len(t.Text)) {
			return t.Text, 2
		}
	case ">":
		if adjacent(1, ">=", t.Pos.Col+1) {
			return ">>", 2
		}
	}
	return "", 0
}

func (p *parser) switchStmt() *SwitchStmt {
	st := p.expect("switch")
	s := &SwitchStmt{P: st.Pos}
	p.expect("(")
	s.Expr = p.expr()
	p.expect(")")
	p.expect("{")
	for !p.is("}") {
		p.tick()
		c := &SwitchCase{P: p.peek().Pos}
		if p.is("default") {
			p.next()
			c.Default = true
		} else {
			c.Label = p.expr()
		}
		p.expect(":")
		if p.is("{") {
			c.Body = p.block()
		}
		s.Cases = append(s.Cases, c)
	}
	p.expect("}")
	return s
}

// ---- expressions --------------------------------------------------------------------------------

func (p *parser) expr() Expr {
	p.tick()
	p.enter()
	defer p.leave()
	cond := p.binary(0)
	if p.is("?") {
		q := p.next()
		then := p.expr()
		p.expect(":")
		els := p.expr()
		return p.nested(&TernaryExpr{exprBase: exprBase{P: q.Pos}, Cond: cond, Then: then, Else: els}, cond, then, els)
	}
	return cond
}

// Binary operator precedence, following p4c's grammar (lowest first).
var binPrec = map[string]int{
	"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4,
	"|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8,
	"++": 9, "+": 9, "-": 9, "|+|": 9, "|-|": 9, "*": 10, "/": 10, "%": 10,
}

// binOp returns the binary operator at the current token, joining adjacent '>' '>' into ">>".
func (p *parser) binOp() (string, int) {
	t := p.peek()
	if t.Kind != TPunct {
		return "", 0
	}
	if t.Text == ">" {
		n := p.at(1)
		if n.Kind == TPunct && n.Text == ">" && n.Pos.Line == t.Pos.Line && n.Pos.Col == t.Pos.Col+1 && n.Pos.File == t.Pos.File {
			return ">>", 2
		}
		if n.Kind == TPunct && n.Text == ">=" && n.Pos.Line == t.Pos.Line && n.Pos.Col == t.Pos.Col+1 {
			return "", 0
		}
	}
	if _, ok := binPrec[t.Text]; ok {
		return t.Text, 1
	}
	return "", 0
}

func (p *parser) binary(minPrec int) Expr {
	x := p.unary()
	for {
		op, n := p.binOp()
		if op == "" {
			return x
		}
		prec := binPrec[op]
		if prec <= minPrec {
			return x
		}
		opTok := p.peek()
		if eq := p.at(n); eq.Kind == TPunct && eq.Text == "=" && eq.Pos.Line == opTok.Pos.Line && eq.Pos.Col == opTok.Pos.Col+len(op) {
			return x // a compound assignment operator such as +=; the statement parser takes it
		}
		p.i += n
		y := p.binary(prec)
		x = p.nested(&BinaryExpr{exprBase: exprBase{P: opTok.Pos}, Op: op, X: x, Y: y}, x, y)
	}
}

func (p *parser) unary() Expr {
	p.tick()
	t := p.peek()
	if t.Kind == TPunct {
		switch t.Text {
		case "!", "~", "-", "+":
			p.next()
			p.enter()
			x := p.unary()
			p.leave()
			return p.nested(&UnaryExpr{exprBase: exprBase{P: t.Pos}, Op: t.Text, X: x}, x)
		case "(":
			// A cast if a type follows and then ')'.
			if p.castAhead() {
				p.next()
				ty := p.typeRef()
				p.expect(")")
				p.enter()
				x := p.unary()
				p.leave()
				return p.nested(&CastExpr{exprBase: exprBase{P: t.Pos}, To: ty, X: x}, x)
			}
		}
	}
	return p.postfix(p.primary())
}

func (p *parser) castAhead() bool {
	n := p.at(1)
	if n.Kind != TIdent {
		return false
	}
	switch n.Text {
	case "bit", "int", "varbit", "bool", "tuple":
		return true
	}
	if !p.isTypeName(n.Text) {
		return false
	}
	// (T) or (T<...>) or (T[..]) followed by ')' then something that starts an expression.
	return p.isAt(2, ")") || p.isAt(2, "<")
}

func (p *parser) primary() Expr {
	t := p.peek()
	switch t.Kind {
	case TInt:
		p.next()
		return &IntExpr{exprBase: exprBase{P: t.Pos}, Lit: t.Lit}
	case TString:
		p.next()
		return &StringExpr{exprBase: exprBase{P: t.Pos}, Val: t.Text}
	case TIdent:
		switch t.Text {
		case "true", "false":
			p.next()
			return &BoolExpr{exprBase: exprBase{P: t.Pos}, Val: t.Text == "true"}
		case "error", "bit", "int", "varbit", "bool":
			if t.Text == "error" && p.isAt(1, ".") {
				p.next()
				return &NameExpr{exprBase: exprBase{P: t.Pos}, Name: "error"}
			}
			ty := p.typeRef()
			return &TypeArgExpr{exprBase: exprBase{P: t.Pos}, Ref: ty}
		case "_":
			p.next()
			return &DontCareExpr{exprBase{P: t.Pos}}
		case "this":
			p.fail(t.Pos, "%s", unsupported(t.Pos, "this").Msg)
		}
		if keywords[t.Text] && !softKeywords[t.Text] {
			p.fail(t.Pos, "syntax error: unexpected keyword %q in expression", t.Text)
		}
		p.next()
		return &NameExpr{exprBase: exprBase{P: t.Pos}, Name: t.Text}
	case TPunct:
		switch t.Text {
		case ".":
			p.next()
			n, _ := p.ident()
			return &NameExpr{exprBase: exprBase{P: t.Pos}, Name: n, Global: true}
		case "(":
			p.next()
			e := p.expr()
			p.expect(")")
			return e
		case "{":
			return p.braceExpr()
		}
	}
	p.fail(t.Pos, "syntax error: expected an expression, found %s", describe(t))
	return nil
}

// braceExpr parses { e, ... } (a list) or { name = e, ... } (a struct expression).
func (p *parser) braceExpr() Expr {
	lb := p.expect("{")
	if p.peek().Kind == TIdent && p.isAt(1, "=") && !p.isAt(2, "=") {
		se := &StructExpr{exprBase: exprBase{P: lb.Pos}}
		for !p.is("}") {
			n, pos := p.memberName()
			p.expect("=")
			se.Fields = append(se.Fields, &NamedExpr{P: pos, Name: n, Value: p.expr()})
			if !p.accept(",") {
				break
			}
		}
		p.expect("}")
		ops := make([]Expr, len(se.Fields))
		for i, f := range se.Fields {
			ops[i] = f.Value
		}
		return p.nested(se, ops...)
	}
	le := &ListExpr{exprBase: exprBase{P: lb.Pos}}
	for !p.is("}") {
		if p.is("...") {
			p.fail(p.peek().Pos, "%s", unsupported(p.peek().Pos, "... in list expressions").Msg)
		}
		le.Elems = append(le.Elems, p.expr())
		if !p.accept(",") {
			break
		}
	}
	p.expect("}")
	return p.nested(le, le.Elems...)
}

func (p *parser) postfix(x Expr) Expr {
	start := x.Position() // a call is positioned at the start of the callee expression
	for {
		p.tick()
		t := p.peek()
		switch {
		case p.is("."):
			p.next()
			n, _ := p.memberName()
			x = p.nested(&MemberExpr{exprBase: exprBase{P: t.Pos}, X: x, Name: n}, x)
		case p.is("["):
			p.next()
			idx := p.expr()
			if p.accept(":") {
				lo := p.expr()
				p.expect("]")
				x = p.nested(&SliceExpr{exprBase: exprBase{P: t.Pos}, X: x, Hi: idx, Lo: lo}, x, idx, lo)
			} else {
				p.expect("]")
				x = p.nested(&IndexExpr{exprBase: exprBase{P: t.Pos}, X: x, Index: idx}, x, idx)
			}
		case p.is("("):
			args := p.args()
			x = p.nested(&CallExpr{exprBase: exprBase{P: start}, Fun: x, Args: args}, argExprs(x, args)...)
		case p.is("<") && p.callTypeArgsAhead():
			p.next()
			var tas []TypeRef
			for !p.is(">") {
				tas = append(tas, p.typeArg())
				if !p.accept(",") {
					break
				}
			}
			p.expect(">")
			args := p.args()
			x = p.nested(&CallExpr{exprBase: exprBase{P: start}, Fun: x, TypeArgs: tas, Args: args}, argExprs(x, args)...)
		default:
			return x
		}
	}
}

// callTypeArgsAhead reports whether '<' starts the type arguments of a call: f<T...>(...).
func (p *parser) callTypeArgsAhead() (ok bool) {
	save, depth := p.i, p.depth
	defer func() {
		p.depth = depth
		if r := recover(); r != nil {
			if _, isErr := r.(*Error); !isErr {
				panic(r)
			}
			ok = false
		}
		p.i = save
	}()
	p.next()
	for !p.is(">") {
		t := p.peek()
		if t.Kind != TIdent || !(p.startsType() || t.Text == "_") {
			return false
		}
		p.typeArg()
		if !p.accept(",") {
			break
		}
	}
	if !p.accept(">") {
		return false
	}
	return p.is("(")
}
