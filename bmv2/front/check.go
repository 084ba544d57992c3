package front

import (
	"fmt"
	"math/big"
	"os"
)

// Checked is a type-checked program. Every expression in Program has its Type set, every
// NameExpr its Decl, and every constant expression its value in Const.
type Checked struct {
	Program *Program
	// Main is the top-level package instance called "main" (V1Switch(...) main;).
	Main *InstanceDecl
	// ErrorMembers and MatchKinds list all members of the error and match_kind types.
	ErrorMembers []*EnumMember
	MatchKinds   []*EnumMember
	// Const holds the value of every expression that is a compile-time constant.
	Const map[Expr]Value
	// Types holds the resolved type of every TypeRef in the program.
	Types map[TypeRef]Type
	// Globals maps top-level names to their declarations (several for overloaded externs).
	Globals map[string][]Decl
	// Warnings are diagnostics that do not reject the program (constants truncated to fit,
	// deprecated externs), in the order found.
	Warnings ErrorList
}

// TypeOf returns the resolved type of a type reference.
func (c *Checked) TypeOf(ref TypeRef) Type { return c.Types[ref] }

// Load preprocesses, parses and checks the P4 file at path.
func Load(path string) (*Checked, error) {
	return LoadWith(path, os.ReadFile)
}

// LoadWith is Load with a custom file reader (used by tests and the fuzzer).
func LoadWith(path string, read ReadFileFunc) (*Checked, error) {
	return LoadOptions(path, Options{ReadFile: read})
}

// LoadOptions is Load with preprocessor options (predefined macros, a file reader).
func LoadOptions(path string, opts Options) (*Checked, error) {
	toks, errs := PreprocessWith(path, opts)
	if len(errs) > 0 {
		return nil, errs
	}
	prog, err := ParseWith(toks, opts)
	if err != nil {
		return nil, err
	}
	prog.File = path
	return Check(prog)
}

// Check type-checks a parsed program. The returned error is an ErrorList.
func Check(prog *Program) (*Checked, error) {
	c := &checker{
		out:    &Checked{Program: prog, Const: map[Expr]Value{}, Types: map[TypeRef]Type{}},
		global: &scope{names: map[string][]Decl{}},
		errors: map[string]*EnumMember{}, matchKinds: map[string]*EnumMember{},
	}
	c.out.Globals = c.global.names
	bound := prog.MaxNesting
	if bound <= 0 {
		bound = DefaultMaxNesting
	}
	c.maxDepth = 2*bound + 16
	func() {
		defer func() {
			if r := recover(); r != nil {
				if r == errTooMany {
					return
				}
				panic(r)
			}
		}()
		for _, d := range prog.Decls {
			c.topDecl(d)
		}
		c.tnaDeferredCalls()
		if c.tnaDeclared() {
			c.tnaRegisterRules()
			c.tnaNestedCasts()
		}
	}()
	if len(c.errs) == 0 && c.out.Arch() == ArchTNA {
		c.tnaPipelineRules()
	}
	if len(c.errs) == 0 && c.out.Main != nil {
		// Control-plane names must be unique (p4c checks this while compiling, too).
		if _, _, err := c.out.p4infoWithMap(false); err != nil {
			c.errs = append(c.errs, err.(ErrorList)...)
		}
	}
	if len(c.errs) > 0 {
		return c.out, c.errs
	}
	return c.out, nil
}

var errTooMany = fmt.Errorf("too many errors")

// enter starts checking a nested expression or statement; it reports false (once, with the
// nesting error) when the nesting passes the checker's bound, and the caller must not descend.
// Each true enter is paired with a leave.
func (c *checker) enter(pos Pos) bool {
	if c.depth >= c.maxDepth {
		if !c.tooDeep {
			c.tooDeep = true
			c.errorf(pos, "%s: more than %d levels", errNesting, c.maxDepth)
		}
		return false
	}
	c.depth++
	return true
}

func (c *checker) leave() { c.depth-- }

// maxWidth is the widest bit<>/int<> type, as in p4c.
const maxWidth = 2048

type scope struct {
	parent *scope
	names  map[string][]Decl
}

func (s *scope) lookup(name string) []Decl {
	for ; s != nil; s = s.parent {
		if ds, ok := s.names[name]; ok {
			return ds
		}
	}
	return nil
}

func newScope(parent *scope) *scope { return &scope{parent: parent, names: map[string][]Decl{}} }

// ctx is where a statement or expression is being checked.
type ctx struct {
	sc      *scope
	parser  *ParserDecl
	control *ControlDecl
	action  *ActionDecl
	fn      *FunctionDecl
	inApply bool // inside a control's apply block (not in an action)
}

type checker struct {
	out        *Checked
	errs       ErrorList
	global     *scope
	errors     map[string]*EnumMember
	matchKinds map[string]*EnumMember
	// depth is the nesting of expressions and statements being checked; past maxDepth the
	// checker reports the program as nested too deeply and stops descending (tooDeep).
	depth, maxDepth int
	tooDeep         bool
	// tnaDeferred are deparser-extern calls in controls without a packet_out, decided once the
	// whole program is checked (tnaDeferredCalls).
	tnaDeferred []deferredCall
}

func (c *checker) errorf(pos Pos, format string, args ...any) {
	c.errs = append(c.errs, errorf(pos, format, args...))
	if len(c.errs) >= 100 {
		panic(errTooMany)
	}
}

// warnf records a warning: the program is still accepted.
func (c *checker) warnf(pos Pos, format string, args ...any) {
	c.out.Warnings = append(c.out.Warnings, errorf(pos, format, args...))
}

func (c *checker) unsupported(pos Pos, format string, args ...any) {
	c.errs = append(c.errs, unsupported(pos, format, args...))
}

func (c *checker) declare(sc *scope, name string, d Decl) {
	if prev, ok := sc.names[name]; ok {
		_, m1 := d.(*MethodDecl)
		_, m2 := prev[0].(*MethodDecl)
		if m1 && m2 {
			sc.names[name] = append(prev, d)
			return
		}
		c.errorf(d.Position(), "%s: duplicate declaration (previous declaration at %s)", name, prev[0].Position())
		return
	}
	sc.names[name] = []Decl{d}
}

// ---- types --------------------------------------------------------------------------------------

func (c *checker) resolveType(ref TypeRef, sc *scope) Type {
	t := c.resolveType1(ref, sc)
	c.out.Types[ref] = t
	return t
}

func (c *checker) constInt(e Expr, sc *scope, what string) (int, bool) {
	c.expr(e, &ctx{sc: sc}, nil)
	v, ok := c.out.Const[e].(*big.Int)
	if !ok {
		if _, bad := e.Type().(*badType); !bad {
			c.errorf(e.Position(), "%s must be a compile-time constant integer", what)
		}
		return 0, false
	}
	if !v.IsInt64() || v.Int64() < 0 || v.Int64() > 1<<16 {
		c.errorf(e.Position(), "%s %s is out of range", what, v)
		return 0, false
	}
	return int(v.Int64()), true
}

func (c *checker) resolveType1(ref TypeRef, sc *scope) Type {
	switch r := ref.(type) {
	case *BaseTypeRef:
		switch r.Kind {
		case "bit", "int", "varbit":
			if r.Width == nil {
				if r.Kind == "int" {
					return tInt
				}
				return bitsT(1)
			}
			w, ok := c.constInt(r.Width, sc, "width")
			if !ok {
				return tBad
			}
			if w > maxWidth {
				c.errorf(r.P, "%s<%d>: widths up to %d bits are supported", r.Kind, w, maxWidth)
				return tBad
			}
			switch r.Kind {
			case "bit":
				return &BitsType{Width: w}
			case "int":
				if w < 1 {
					c.errorf(r.P, "int<%d>: signed types must be at least 1 bit wide", w)
					return tBad
				}
				return &BitsType{Width: w, Signed: true}
			default:
				return &VarbitType{Max: w}
			}
		case "bool":
			return tBool
		case "error":
			return tError
		case "string":
			return tString
		case "void":
			return tVoid
		case "match_kind":
			return tMK
		}
	case *DontCareTypeRef:
		return tDC
	case *StackTypeRef:
		el := c.resolveType(r.Elem, sc)
		n, ok := c.constInt(r.Size, sc, "header stack size")
		if !ok {
			return tBad
		}
		if st, ok := el.(*StructType); !ok || st.Decl.Kind == "struct" {
			if _, bad := el.(*badType); !bad {
				c.errorf(r.P, "header stack elements must be headers or header unions, not %s", el)
			}
			return tBad
		}
		return &StackType{Elem: el, Size: n}
	case *TupleTypeRef:
		tt := &TupleType{}
		for _, e := range r.Elems {
			et := c.resolveType(e, sc)
			switch et.(type) {
			case *PackageType, *ParserType, *ControlType:
				c.errorf(e.Position(), "%s: not supported as a tuple field", et)
			}
			tt.Elems = append(tt.Elems, et)
		}
		return tt
	case *NamedTypeRef:
		ds := sc.lookup(r.Name)
		if len(ds) == 0 {
			c.errorf(r.P, "%s: undeclared type", r.Name)
			return tBad
		}
		var args []Type
		for _, a := range r.Args {
			args = append(args, c.resolveType(a, sc))
		}
		noArgs := func(n int) bool {
			if len(args) != n {
				c.errorf(r.P, "%s: expected %d type arguments, got %d", r.Name, n, len(args))
				return false
			}
			return true
		}
		switch d := ds[0].(type) {
		case *StructDecl:
			if !noArgs(0) {
				return tBad
			}
			if d.T == nil {
				c.errorf(r.P, "%s: recursive type", r.Name)
				return tBad
			}
			return d.T
		case *EnumDecl:
			if !noArgs(0) || d.T == nil {
				return tBad
			}
			return d.T
		case *TypedefDecl:
			if !noArgs(0) || d.T == nil {
				return tBad
			}
			return d.T
		case *TypeParam:
			return d.Var
		case *ExternDecl:
			if len(args) != len(d.TypeParams) {
				if len(args) == 0 && len(d.TypeParams) > 0 {
					return &ExternType{Decl: d, Args: make([]Type, len(d.TypeParams))}
				}
				noArgs(len(d.TypeParams))
				return tBad
			}
			for _, a := range args {
				if selfReferencing(a, d) {
					c.errorf(r.P, "%s: contains itself (%s) as a type argument", r.Name, a)
				}
			}
			return &ExternType{Decl: d, Args: args}
		case *ParserDecl:
			if len(args) != 0 && len(args) != len(d.TypeParams) {
				noArgs(len(d.TypeParams))
				return tBad
			}
			return &ParserType{Decl: d, Args: args}
		case *ControlDecl:
			if len(args) != 0 && len(args) != len(d.TypeParams) {
				noArgs(len(d.TypeParams))
				return tBad
			}
			return &ControlType{Decl: d, Args: args}
		case *PackageDecl:
			return &PackageType{Decl: d, Args: args}
		}
		c.errorf(r.P, "%s is not a type", r.Name)
		return tBad
	}
	c.errorf(ref.Position(), "unsupported type")
	return tBad
}

func (c *checker) typeParamScope(parent *scope, owner Decl, names []string, pos Pos) *scope {
	if len(names) == 0 {
		return parent
	}
	sc := newScope(parent)
	for _, n := range names {
		c.declare(sc, n, &TypeParam{P: pos, Name: n, Var: &TypeVar{Name: n, Owner: owner}})
	}
	return sc
}

func (c *checker) params(ps []*Param, sc *scope) {
	seen := map[string]bool{}
	for _, p := range ps {
		p.T = c.resolveType(p.Type, sc)
		switch pt := p.T.(type) {
		case *ControlType:
			if pt.Decl.HasBody {
				c.errorf(p.P, "%s: parameter cannot have type control %s (use a control type declaration)", p.Name, pt.Decl.Name)
			}
		case *ParserType:
			if pt.Decl.HasBody {
				c.errorf(p.P, "%s: parameter cannot have type parser %s (use a parser type declaration)", p.Name, pt.Decl.Name)
			}
		}
		if p.Dir != DirNone {
			switch p.T.(type) {
			case *IntType, *StringType, *ExternType:
				c.errorf(p.P, "%s: a parameter with type %s cannot have a direction", p.Name, p.T)
			}
			if p.Deflt != nil && p.Dir != DirIn {
				c.errorf(p.P, "%s: %s parameters cannot have default values", p.Name, p.Dir)
			}
		}
		if seen[p.Name] {
			c.errorf(p.P, "%s: duplicate parameter name", p.Name)
		}
		seen[p.Name] = true
		if p.Deflt != nil && !pkgLike(p.T) {
			c.expr(p.Deflt, &ctx{sc: sc}, p.T)
			c.assignable(p.T, p.Deflt, "default value of "+p.Name)
			if _, ok := c.out.Const[p.Deflt]; !ok && !isBad(p.Deflt.Type()) {
				c.errorf(p.Deflt.Position(), "%s: a default value must be a compile-time constant", p.Name)
			}
		} else if p.Deflt != nil {
			c.expr(p.Deflt, &ctx{sc: sc}, nil) // a parser or control instance for a package
		}
	}
}

// ---- top-level declarations ---------------------------------------------------------------------

func (c *checker) topDecl(d Decl) {
	cx := &ctx{sc: c.global}
	switch d.(type) {
	case *ExternDecl, *StructDecl, *EnumDecl, *TypedefDecl, *PackageDecl, *ParserDecl, *ControlDecl:
		if d.DeclName() == "main" {
			c.errorf(d.Position(), "main must be a package instance, not a type")
		}
	}
	switch d := d.(type) {
	case *ConstDecl:
		c.constDecl(d, cx)
	case *TypedefDecl:
		c.typedefDecl(d, c.global)
	case *StructDecl:
		c.structDecl(d)
	case *EnumDecl:
		c.enumDecl(d)
	case *ErrorDecl:
		for _, m := range d.Members {
			m.Owner = d
			if prev := c.errors[m.Name]; prev != nil {
				c.errorf(m.P, "error.%s: duplicate declaration (previous declaration at %s)", m.Name, prev.P)
				continue
			}
			c.errors[m.Name] = m
			c.out.ErrorMembers = append(c.out.ErrorMembers, m)
		}
	case *MatchKindDecl:
		for _, m := range d.Members {
			m.Owner = d
			if prev := c.matchKinds[m.Name]; prev != nil {
				c.errorf(m.P, "%s: duplicate match_kind (previous declaration at %s)", m.Name, prev.P)
				continue
			}
			c.matchKinds[m.Name] = m
			c.out.MatchKinds = append(c.out.MatchKinds, m)
			c.declare(c.global, m.Name, m)
		}
	case *ExternDecl:
		c.declare(c.global, d.Name, d)
		c.noDuplicateMethods(d)
		c.synchronousAnnotations(d)
		sc := c.typeParamScope(c.global, d, d.TypeParams, d.P)
		for _, m := range d.Ctors {
			c.params(m.Params, sc)
			c.runtimeParams(m.Params, "constructor of "+d.Name)
			m.RetT = &ExternType{Decl: d}
		}
		for _, m := range d.Methods {
			msc := c.typeParamScope(sc, m, m.TypeParams, m.P)
			c.params(m.Params, msc)
			c.runtimeParams(m.Params, d.Name+"."+m.Name)
			m.RetT = c.resolveType(m.Ret, msc)
			if _, isInt := m.RetT.(*IntType); isInt {
				c.errorf(m.P, "%s.%s: int is not a legal return type for a method", d.Name, m.Name)
			}
		}
	case *MethodDecl:
		c.declare(c.global, d.Name, d)
		msc := c.typeParamScope(c.global, d, d.TypeParams, d.P)
		c.params(d.Params, msc)
		d.RetT = c.resolveType(d.Ret, msc)
	case *ParserDecl:
		c.declare(c.global, d.Name, d)
		c.parserDecl(d)
	case *ControlDecl:
		c.declare(c.global, d.Name, d)
		c.controlDecl(d)
	case *PackageDecl:
		c.declare(c.global, d.Name, d)
		sc := c.typeParamScope(c.global, d, d.TypeParams, d.P)
		c.params(d.Params, sc)
	case *ActionDecl:
		c.declare(c.global, d.Name, d)
		c.actionDecl(d, cx)
	case *FunctionDecl:
		c.declare(c.global, d.Name, d)
		c.functionDecl(d)
	case *InstanceDecl:
		c.instanceDecl(d, cx)
		c.declare(c.global, d.Name, d)
		switch d.T.(type) {
		case *ParserType, *ControlType:
			c.errorf(d.P, "%s: parsers and controls cannot be instantiated at the top level", d.Name)
		}
		if d.Name == "main" {
			if _, ok := d.T.(*PackageType); ok {
				c.out.Main = d
			} else if !isBad(d.T) {
				c.errorf(d.P, "main must be an instance of a package, not %s", d.T)
			}
		}
	default:
		c.errorf(d.Position(), "unexpected declaration")
	}
}

func (c *checker) constDecl(d *ConstDecl, cx *ctx) {
	d.T = c.resolveType(d.Type, cx.sc)
	c.expr(d.Value, cx, d.T)
	c.assignable(d.T, d.Value, "initializer of "+d.Name)
	v, ok := c.out.Const[d.Value]
	if !ok {
		if _, bad := d.Value.Type().(*badType); !bad {
			c.errorf(d.Value.Position(), "%s: initializer is not a compile-time constant", d.Name)
		}
	} else {
		d.Val = castValue(v, d.T)
	}
	c.declare(cx.sc, d.Name, d)
}

func (c *checker) typedefDecl(d *TypedefDecl, sc *scope) {
	t := c.resolveType(d.Type, sc)
	if d.IsNewType {
		switch t.(type) {
		case *BitsType, *BoolType, *NewType, *badType:
		default:
			c.errorf(d.P, "type %s: the underlying type must be bit<>, int<>, bool or another type, not %s", d.Name, t)
		}
		d.T = &NewType{Decl: d, Underlying: t}
		if a := d.Annos.Get("p4runtime_translation"); a != nil {
			ok := len(a.Args) >= 3 && a.Args[0].Kind == TString && a.Args[1].Text == ","
			if ok {
				rest := a.Args[2:]
				switch {
				case len(rest) == 1 && (rest[0].Kind == TInt || rest[0].Text == "string"):
				case len(rest) == 4 && rest[0].Text == "bit" && rest[1].Text == "<" && rest[2].Kind == TInt && rest[3].Text == ">":
				default:
					ok = false
				}
			}
			if !ok {
				c.errorf(a.P, "@p4runtime_translation needs a URI string and a width (an integer, bit<W> or string)")
			}
		}
	} else {
		d.T = t
	}
	c.declare(c.global, d.Name, d)
}

func (c *checker) structDecl(d *StructDecl) {
	c.declare(c.global, d.Name, d)
	st := &StructType{Decl: d}
	seen := map[string]bool{}
	varbits := 0
	for _, f := range d.Fields {
		f.T = c.resolveType(f.Type, c.global)
		if seen[f.Name] {
			c.errorf(f.P, "%s.%s: duplicate field", d.Name, f.Name)
		}
		seen[f.Name] = true
		switch d.Kind {
		case "header":
			switch ft := f.T.(type) {
			case *BitsType, *BoolType, *badType:
			case *VarbitType:
				varbits++
				if varbits > 1 {
					c.errorf(f.P, "header %s: at most one varbit field is allowed", d.Name)
				}
			case *EnumType:
				if ft.Underlying == nil {
					c.errorf(f.P, "header %s: field %s has type %s; only serializable enums may be header fields", d.Name, f.Name, f.T)
				}
			case *NewType:
			case *StructType:
				if ft.Decl.Kind != "struct" || WidthOf(ft) < 0 {
					c.errorf(f.P, "header %s: field %s has type %s; header fields must be bit<>, int<>, varbit<>, bool or serializable enum types", d.Name, f.Name, f.T)
				}
			default:
				c.errorf(f.P, "header %s: field %s has type %s; header fields must be bit<>, int<>, varbit<>, bool or serializable enum types", d.Name, f.Name, f.T)
			}
		case "header_union":
			if ft, ok := f.T.(*StructType); !ok || !ft.IsHeader() {
				if _, bad := f.T.(*badType); !bad {
					c.errorf(f.P, "header_union %s: field %s has type %s; union members must be headers", d.Name, f.Name, f.T)
				}
			}
		default:
			switch f.T.(type) {
			case *ExternType, *ParserType, *ControlType, *PackageType, *VoidType, *StringType, *IntType, *MatchKindType:
				c.errorf(f.P, "struct %s: field %s cannot have type %s", d.Name, f.Name, f.T)
			}
		}
	}
	st.Fields = d.Fields
	d.T = st
}

func (c *checker) enumDecl(d *EnumDecl) {
	et := &EnumType{Decl: d}
	cx := &ctx{sc: c.global}
	if d.Underlying != nil {
		ut := c.resolveType(d.Underlying, c.global)
		bt, ok := ut.(*BitsType)
		if !ok {
			if _, bad := ut.(*badType); !bad {
				c.errorf(d.Underlying.Position(), "enum %s: the underlying type must be bit<> or int<>, not %s", d.Name, ut)
			}
		} else {
			et.Underlying = bt
		}
	}
	seen := map[string]bool{}
	for _, m := range d.Members {
		m.Owner = d
		if seen[m.Name] {
			c.errorf(m.P, "%s.%s: duplicate enum member", d.Name, m.Name)
		}
		seen[m.Name] = true
		if m.Value != nil && et.Underlying != nil {
			c.expr(m.Value, cx, et.Underlying)
			c.assignable(et.Underlying, m.Value, "value of "+d.Name+"."+m.Name)
			if v, ok := c.out.Const[m.Value].(*big.Int); ok {
				m.Val = wrap(v, et.Underlying)
			} else {
				c.errorf(m.Value.Position(), "%s.%s: value is not a compile-time constant", d.Name, m.Name)
			}
		}
	}
	d.T = et
	c.declare(c.global, d.Name, d)
}

func (c *checker) instanceDecl(d *InstanceDecl, cx *ctx) {
	t := c.resolveType(d.Type, cx.sc)
	d.T = t
	switch tt := t.(type) {
	case *badType:
		return
	case *ExternType:
		if len(tt.Decl.Ctors) == 0 {
			c.errorf(d.P, "%s: extern %s has no constructor", d.Name, tt.Decl.Name)
			return
		}
		if hasAbstract(tt.Decl) && d.Init == nil {
			c.errorf(d.P, "%s: extern %s has abstract methods (%s); the instance must implement them: %s(...) %s = { ... };", d.Name, tt.Decl.Name, abstractNames(tt.Decl), tt.Decl.Name, d.Name)
			return
		}
		if !hasAbstract(tt.Decl) && d.Init != nil {
			c.errorf(d.P, "%s: extern %s has no abstract methods to implement", d.Name, tt.Decl.Name)
			return
		}
		var cands []*MethodDecl
		for _, m := range tt.Decl.Ctors {
			if arityOK(m.Params, d.Args) {
				cands = append(cands, m)
			}
		}
		if len(cands) == 0 {
			c.errorf(d.P, "%s: no constructor of %s takes %d arguments", d.Name, tt.Decl.Name, len(d.Args))
			return
		}
		sub := map[*TypeVar]Type{}
		tps := c.externTypeVars(tt.Decl)
		for i, tv := range tps {
			if tt.Args[i] != nil {
				sub[tv] = tt.Args[i]
			}
		}
		c.args(cands[0].Params, d.Args, sub, cx, d.P, "constructor of "+tt.Decl.Name, true)
		if tt.Decl.Name == "register" && len(tt.Args) > 0 && tt.Args[0] != nil {
			switch x := underlying(tt.Args[0]).(type) {
			case *BitsType, *badType:
			case *EnumType:
				if x.Underlying == nil {
					c.unsupported(d.P, "register %s of type %s (bmv2 registers hold bit<> or int<> values)", d.Name, tt.Args[0])
				}
			default:
				c.unsupported(d.P, "register %s of type %s (bmv2 registers hold bit<> or int<> values)", d.Name, tt.Args[0])
			}
		}
		for i, tv := range tps {
			if tt.Args[i] == nil {
				if b, ok := sub[tv]; ok {
					tt.Args[i] = b
				} else {
					c.errorf(d.P, "%s: cannot infer type argument %s of %s", d.Name, tv.Name, tt.Decl.Name)
				}
			}
		}
		if d.Init != nil {
			c.implementAbstract(d, tt, cx)
		}
	case *ParserType:
		c.noInitializer(d)
		c.ctorArgs(d.P, tt.Decl.CtorParams, d.Args, cx, tt.Decl.Name)
	case *ControlType:
		c.noInitializer(d)
		c.ctorArgs(d.P, tt.Decl.CtorParams, d.Args, cx, tt.Decl.Name)
	case *PackageType:
		c.noInitializer(d)
		c.packageArgs(d, tt, cx)
	default:
		c.errorf(d.P, "%s: cannot instantiate %s", d.Name, t)
	}
}

func (c *checker) ctorArgs(pos Pos, ps []*Param, args []*Arg, cx *ctx, what string) {
	if !arityOK(ps, args) {
		c.errorf(pos, "%s expects %d constructor arguments, got %d", what, len(ps), len(args))
		return
	}
	c.args(ps, args, map[*TypeVar]Type{}, cx, pos, "constructor of "+what, true)
}

func (c *checker) externTypeVars(d *ExternDecl) []*TypeVar {
	// The type variables of an extern are the ones its methods' parameters refer to; recover
	// them from the first constructor or method scope by name.
	var out []*TypeVar
	for _, n := range d.TypeParams {
		out = append(out, c.findTypeVar(d, n))
	}
	return out
}

// findTypeVar returns the TypeVar object for type parameter name of owner, searching the resolved
// parameter types of its methods (they share one TypeVar per name).
func (c *checker) findTypeVar(owner Decl, name string) *TypeVar {
	var found *TypeVar
	var visit func(t Type)
	visit = func(t Type) {
		if found != nil || t == nil {
			return
		}
		switch x := t.(type) {
		case *TypeVar:
			if x.Owner == owner && x.Name == name {
				found = x
			}
		case *ExternType:
			for _, a := range x.Args {
				visit(a)
			}
		case *ParserType:
			for _, a := range x.Args {
				visit(a)
			}
		case *ControlType:
			for _, a := range x.Args {
				visit(a)
			}
		case *PackageType:
			for _, a := range x.Args {
				visit(a)
			}
		case *TupleType:
			for _, a := range x.Elems {
				visit(a)
			}
		case *StackType:
			visit(x.Elem)
		}
	}
	switch d := owner.(type) {
	case *ExternDecl:
		for _, m := range append(append([]*MethodDecl(nil), d.Ctors...), d.Methods...) {
			for _, p := range m.Params {
				visit(p.T)
			}
			visit(m.RetT)
		}
	case *ParserDecl:
		for _, p := range d.Params {
			visit(p.T)
		}
	case *ControlDecl:
		for _, p := range d.Params {
			visit(p.T)
		}
	case *PackageDecl:
		for _, p := range d.Params {
			visit(p.T)
		}
	}
	if found == nil {
		// Unused type parameter: make a fresh variable.
		found = &TypeVar{Name: name, Owner: owner}
	}
	return found
}

func arityOK(ps []*Param, args []*Arg) bool {
	if len(args) > len(ps) {
		return false
	}
	need := 0
	for _, p := range ps {
		if p.Deflt == nil && p.Annos.Get("optional") == nil {
			need++
		}
	}
	for _, a := range args {
		if a.Name != "" {
			return true // checked by args
		}
	}
	return len(args) >= need
}

// runtimeParams rejects parameter types that only packages and constructors may take.
func (c *checker) runtimeParams(ps []*Param, what string) {
	for _, p := range ps {
		switch p.T.(type) {
		case *ParserType, *ControlType, *PackageType, *TableType:
			c.errorf(p.P, "%s: parameter %s cannot have type %s", what, p.Name, p.T)
		}
	}
}

// noDuplicateMethods rejects overloads that no call can tell apart: same name, same number and
// names of parameters.
func (c *checker) noDuplicateMethods(d *ExternDecl) {
	seen := map[string]*MethodDecl{}
	for _, m := range append(append([]*MethodDecl(nil), d.Ctors...), d.Methods...) {
		key := m.Name
		for _, p := range m.Params {
			key += "/" + p.Name
		}
		if prev := seen[key]; prev != nil {
			c.errorf(m.P, "%s.%s: duplicate declaration (previous declaration at %s)", d.Name, m.Name, prev.P)
			continue
		}
		seen[key] = m
	}
}

// noInitializer rejects an initializer { ... } on an instance that is not an extern.
func (c *checker) noInitializer(d *InstanceDecl) {
	if d.Init != nil {
		c.errorf(d.P, "%s: only instances of externs with abstract methods take an initializer", d.Name)
	}
}

// selfReferencing reports whether type argument a of extern d is a parser or control whose
// parameters have type d (an extern that would contain itself).
func selfReferencing(a Type, d *ExternDecl) bool {
	var ps []*Param
	switch x := a.(type) {
	case *ControlType:
		ps = x.Decl.Params
	case *ParserType:
		ps = x.Decl.Params
	}
	for _, p := range ps {
		if et, ok := p.T.(*ExternType); ok && et.Decl == d {
			return true
		}
	}
	return false
}

func hasAbstract(d *ExternDecl) bool {
	for _, m := range d.Methods {
		if m.Abstract {
			return true
		}
	}
	return false
}

// visibleNames lists the names declared in s and its parents.
func (s *scope) visibleNames() []string {
	var out []string
	for ; s != nil; s = s.parent {
		for n := range s.names {
			out = append(out, n)
		}
	}
	return out
}

// suggest returns "; did you mean X?" for the known name closest to name (at most two edits
// away, and less than half the name), or "".
func suggest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if k == name {
			continue
		}
		d := editDistance(name, k)
		if d < bestD || d == bestD && best != "" && k < best {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > 2 || 2*bestD >= len(name) {
		return ""
	}
	return "; did you mean " + best + "?"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
