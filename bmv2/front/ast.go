package front

// This file declares the syntax tree. The parser fills in positions and syntax; the checker fills
// in the fields documented as "set by Check" (resolved types and declarations).

// Node is any syntax tree node.
type Node interface{ Position() Pos }

// Annotation is @name or @name(args). Args holds the raw tokens between the parentheses; Exprs
// holds them parsed as a comma-separated expression list when that succeeds.
type Annotation struct {
	P     Pos
	Name  string
	Args  []Token
	Exprs []Expr
}

// Annotations is a list of annotations on one declaration.
type Annotations []*Annotation

// Get returns the annotation called name, or nil.
func (as Annotations) Get(name string) *Annotation {
	for _, a := range as {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// StringArg returns the annotation's single string argument and whether it has one.
func (a *Annotation) StringArg() (string, bool) {
	if a == nil || len(a.Args) != 1 || a.Args[0].Kind != TString {
		return "", false
	}
	return a.Args[0].Text, true
}

// ---- Types as written in the source -------------------------------------------------------------

// TypeRef is a type as written in the source. The checker resolves it; see Checked.TypeOf.
type TypeRef interface {
	Node
	typeRef()
}

// BaseTypeRef is bit<W>, int<W>, varbit<W>, int, bool, error, string, void or match_kind.
type BaseTypeRef struct {
	P     Pos
	Kind  string // "bit", "int", "varbit", "bool", "error", "string", "void", "match_kind"
	Width Expr   // nil for unsized kinds and for plain "int" (arbitrary precision) and "bit" (bit<1>)
}

// NamedTypeRef names a declared type, optionally with type arguments.
type NamedTypeRef struct {
	P    Pos
	Name string
	Args []TypeRef
}

// StackTypeRef is Elem[Size].
type StackTypeRef struct {
	P    Pos
	Elem TypeRef
	Size Expr
}

// TupleTypeRef is tuple<T1, T2, ...>.
type TupleTypeRef struct {
	P     Pos
	Elems []TypeRef
}

// DontCareTypeRef is _ used as a type argument.
type DontCareTypeRef struct{ P Pos }

func (t *BaseTypeRef) Position() Pos     { return t.P }
func (t *NamedTypeRef) Position() Pos    { return t.P }
func (t *StackTypeRef) Position() Pos    { return t.P }
func (t *TupleTypeRef) Position() Pos    { return t.P }
func (t *DontCareTypeRef) Position() Pos { return t.P }
func (*BaseTypeRef) typeRef()            {}
func (*NamedTypeRef) typeRef()           {}
func (*StackTypeRef) typeRef()           {}
func (*TupleTypeRef) typeRef()           {}
func (*DontCareTypeRef) typeRef()        {}

// ---- Declarations -------------------------------------------------------------------------------

// Decl is a named declaration.
type Decl interface {
	Node
	DeclName() string
}

// Direction of a parameter.
type Direction uint8

// Parameter directions. DirNone is a directionless parameter: a compile-time value for
// constructors and externs, control-plane data for actions.
const (
	DirNone Direction = iota
	DirIn
	DirOut
	DirInOut
)

func (d Direction) String() string {
	switch d {
	case DirIn:
		return "in"
	case DirOut:
		return "out"
	case DirInOut:
		return "inout"
	}
	return "directionless"
}

// Param is a parameter of a parser, control, action, function, method or package.
type Param struct {
	Annos Annotations
	P     Pos
	Dir   Direction
	Type  TypeRef
	Name  string
	Deflt Expr // default value, or nil
	T     Type // set by Check
}

// ConstDecl is const T name = value.
type ConstDecl struct {
	Annos Annotations
	P     Pos
	Type  TypeRef
	Name  string
	Value Expr
	T     Type  // set by Check
	Val   Value // constant value, set by Check
}

// TypedefDecl is typedef T name or type T name (IsNewType).
type TypedefDecl struct {
	Annos     Annotations
	P         Pos
	Type      TypeRef
	Name      string
	IsNewType bool
	T         Type // set by Check: the typedef's target, or the *NewType
}

// Field is one field of a header, header_union or struct.
type Field struct {
	Annos Annotations
	P     Pos
	Type  TypeRef
	Name  string
	T     Type // set by Check
}

// StructDecl declares a struct, header or header_union.
type StructDecl struct {
	Annos  Annotations
	P      Pos
	Kind   string // "struct", "header" or "header_union"
	Name   string
	Fields []*Field
	T      Type // set by Check
}

// EnumMember is a member of an enum, error or match_kind declaration.
type EnumMember struct {
	P     Pos
	Name  string
	Value Expr  // serializable enums only
	Val   Value // set by Check for serializable enums
	Owner Decl
}

// EnumDecl is enum [bit<W>] Name { ... }.
type EnumDecl struct {
	Annos      Annotations
	P          Pos
	Name       string
	Underlying TypeRef // nil unless serializable
	Members    []*EnumMember
	T          Type // set by Check
}

// ErrorDecl is error { ... }; all error declarations extend one error type.
type ErrorDecl struct {
	P       Pos
	Members []*EnumMember
}

// MatchKindDecl is match_kind { ... }.
type MatchKindDecl struct {
	P       Pos
	Members []*EnumMember
}

// MethodDecl is an extern method, constructor, or extern function prototype.
type MethodDecl struct {
	Annos      Annotations
	P          Pos
	Name       string
	Ret        TypeRef // nil for constructors
	TypeParams []string
	Params     []*Param
	Abstract   bool
	Owner      *ExternDecl // nil for extern functions
	RetT       Type        // set by Check; may mention type variables
}

// ExternDecl is an extern object type.
type ExternDecl struct {
	Annos      Annotations
	P          Pos
	Name       string
	TypeParams []string
	Ctors      []*MethodDecl
	Methods    []*MethodDecl
}

// ParserDecl is a parser type declaration (States == nil && !HasBody) or a parser.
type ParserDecl struct {
	Annos      Annotations
	P          Pos
	Name       string
	TypeParams []string
	Params     []*Param
	CtorParams []*Param
	HasBody    bool
	Locals     []Decl
	States     []*ParserState
}

// ParserState is one state of a parser.
type ParserState struct {
	Annos Annotations
	P     Pos
	Name  string
	Stmts []Stmt
	Trans *Transition // nil means "transition reject" is implied
}

// Transition is transition NAME; or transition select(...) {...}.
type Transition struct {
	P      Pos
	Target *NameExpr   // simple transition
	Select *SelectExpr // select transition
}

// ControlDecl is a control type declaration (!HasBody) or a control.
type ControlDecl struct {
	Annos      Annotations
	P          Pos
	Name       string
	TypeParams []string
	Params     []*Param
	CtorParams []*Param
	HasBody    bool
	Locals     []Decl
	Body       *BlockStmt
}

// PackageDecl is a package type declaration.
type PackageDecl struct {
	Annos      Annotations
	P          Pos
	Name       string
	TypeParams []string
	Params     []*Param
}

// InstanceDecl is Type(args) name; or, for an extern with abstract methods,
// Type(args) name = { implementations };.
type InstanceDecl struct {
	Annos Annotations
	P     Pos
	Type  TypeRef
	Args  []*Arg
	Name  string
	// Init implements the extern's abstract methods (RegisterAction's apply). Check sets
	// each implementation's Abstract to the method it implements.
	Init []*FunctionDecl
	// InitInstances are instantiations inside the initializer (outside the netlock subset).
	InitInstances []*InstanceDecl
	T             Type // set by Check
}

// ValueSetDecl is a parser value set, value_set<T>(size) name;: up to size values of T (with
// masks or prefixes, by the fields' @match annotations) that the control plane sets, which a
// select case matches as a whole.
type ValueSetDecl struct {
	Annos Annotations
	P     Pos
	Type  TypeRef
	Size  Expr
	Name  string
	T     Type // set by Check: the element type
	N     int  // set by Check: the size
}

// VarDecl is a local variable T name [= init];.
type VarDecl struct {
	Annos Annotations
	P     Pos
	Type  TypeRef
	Name  string
	Init  Expr
	T     Type // set by Check
}

// ActionDecl is an action.
type ActionDecl struct {
	Annos  Annotations
	P      Pos
	Name   string
	Params []*Param
	Body   *BlockStmt
}

// FunctionDecl is a function with a body, or the implementation of an abstract extern
// method in an instance initializer.
type FunctionDecl struct {
	Annos      Annotations
	P          Pos
	Ret        TypeRef
	Name       string
	TypeParams []string
	Params     []*Param
	Body       *BlockStmt
	RetT       Type // set by Check
	// Abstract is, for an implementation in an instance initializer, the abstract method it
	// implements (set by Check); Instance is that instance.
	Abstract *MethodDecl
	Instance *InstanceDecl
}

// TypeParam is a type parameter of a generic extern, method, parser, control or package.
type TypeParam struct {
	P    Pos
	Name string
	Var  *TypeVar
}

func (d *TypeParam) Position() Pos    { return d.P }
func (d *TypeParam) DeclName() string { return d.Name }

// TableDecl is a table.
type TableDecl struct {
	Annos Annotations
	P     Pos
	Name  string
	Props []*TableProp
}

// Prop returns the property called name, or nil.
func (t *TableDecl) Prop(name string) *TableProp {
	for _, p := range t.Props {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// TableProp is one table property. Exactly one of Keys/Actions/Entries/Value is used, by Name.
type TableProp struct {
	Annos   Annotations
	P       Pos
	Name    string
	Const   bool
	Keys    []*KeyElem
	Actions []*ActionRef
	Entries []*Entry
	Value   Expr
}

// KeyElem is expr : match_kind in a table key.
type KeyElem struct {
	Annos     Annotations
	P         Pos
	Expr      Expr
	MatchKind string
	MKPos     Pos
}

// ActionRef is an action in a table's action list or default_action, possibly with arguments.
type ActionRef struct {
	Annos  Annotations
	P      Pos
	Name   *NameExpr
	Args   []*Arg
	HasArg bool        // written with parentheses
	Action *ActionDecl // set by Check
}

// Entry is one const entry: keyset : action(args).
type Entry struct {
	Annos  Annotations
	P      Pos
	Keys   []Expr
	Action *ActionRef
}

// ---- Statements ---------------------------------------------------------------------------------

// Stmt is a statement.
type Stmt interface {
	Node
	stmt()
}

// AssignStmt is LHS = RHS;.
//
// A compound assignment such as x += y has Op "+" and RHS the BinaryExpr x + y whose X is the
// very LHS node; the location is evaluated once.
type AssignStmt struct {
	P        Pos
	Op       string // "" for plain assignment, else the operator of a compound assignment
	LHS, RHS Expr
}

// CallStmt is a method or function call used as a statement.
type CallStmt struct {
	P    Pos
	Call *CallExpr
}

// IfStmt is if (Cond) Then [else Else].
type IfStmt struct {
	P    Pos
	Cond Expr
	Then Stmt
	Else Stmt
}

// BlockStmt is { ... }, possibly annotated (@atomic { ... }).
type BlockStmt struct {
	P     Pos
	Annos Annotations
	Stmts []Stmt
}

// SwitchStmt is switch (Expr) { cases }.
type SwitchStmt struct {
	P     Pos
	Expr  Expr
	Cases []*SwitchCase
	// OnActionRun is set by Check when Expr is t.apply().action_run.
	OnActionRun bool
}

// SwitchCase is label: block, or label: (fall through to the next case) when Body is nil.
type SwitchCase struct {
	P       Pos
	Label   Expr // nil for default
	Default bool
	Body    *BlockStmt
}

// ExitStmt is exit;.
type ExitStmt struct{ P Pos }

// ReturnStmt is return [value];.
type ReturnStmt struct {
	P     Pos
	Value Expr
}

// EmptyStmt is ;.
type EmptyStmt struct{ P Pos }

// DeclStmt is a local declaration (VarDecl, ConstDecl or InstanceDecl) in a block.
type DeclStmt struct {
	P    Pos
	Decl Decl
}

func (s *AssignStmt) Position() Pos { return s.P }
func (s *CallStmt) Position() Pos   { return s.P }
func (s *IfStmt) Position() Pos     { return s.P }
func (s *BlockStmt) Position() Pos  { return s.P }
func (s *SwitchStmt) Position() Pos { return s.P }
func (s *ExitStmt) Position() Pos   { return s.P }
func (s *ReturnStmt) Position() Pos { return s.P }
func (s *EmptyStmt) Position() Pos  { return s.P }
func (s *DeclStmt) Position() Pos   { return s.P }
func (*AssignStmt) stmt()           {}
func (*CallStmt) stmt()             {}
func (*IfStmt) stmt()               {}
func (*BlockStmt) stmt()            {}
func (*SwitchStmt) stmt()           {}
func (*ExitStmt) stmt()             {}
func (*ReturnStmt) stmt()           {}
func (*EmptyStmt) stmt()            {}
func (*DeclStmt) stmt()             {}

// ---- Expressions --------------------------------------------------------------------------------

// Expr is an expression. Type returns the type the checker assigned (nil before Check).
type Expr interface {
	Node
	Type() Type
	setType(Type)
}

type exprBase struct {
	P Pos
	T Type
	// depth is the height of the expression's tree as the parser built it (a leaf is 1; 0 for
	// expressions made elsewhere); the parser bounds it (Options.MaxNesting).
	depth int32
}

func (e *exprBase) Position() Pos  { return e.P }
func (e *exprBase) Type() Type     { return e.T }
func (e *exprBase) setType(t Type) { e.T = t }

func (e *exprBase) nesting() int32     { return e.depth }
func (e *exprBase) setNesting(d int32) { e.depth = d }

// nester is implemented by every expression (through exprBase).
type nester interface {
	nesting() int32
	setNesting(int32)
}

// NameExpr is a name, or .name (Global) for the top-level scope.
type NameExpr struct {
	exprBase
	Name   string
	Global bool
	Decl   Decl // set by Check: what the name refers to
}

// IntExpr is an integer literal.
type IntExpr struct {
	exprBase
	Lit *IntLit
}

// BoolExpr is true or false.
type BoolExpr struct {
	exprBase
	Val bool
}

// StringExpr is a string literal.
type StringExpr struct {
	exprBase
	Val string
}

// MemberKind says what a member expression selects; set by Check.
type MemberKind uint8

// Member kinds.
const (
	MemberField      MemberKind = iota + 1 // struct/header/union field; Field is set
	MemberEnum                             // enum, error or match_kind member; Enum is set
	MemberMethod                           // extern/packet/header/stack/table/instance method
	MemberStackProp                        // next, last, size, lastIndex of a header stack
	MemberTableField                       // hit, miss, action_run of a table apply result
	MemberTypeProp                         // minSizeInBits and friends
)

// MemberExpr is X.Name.
type MemberExpr struct {
	exprBase
	X     Expr
	Name  string
	Kind  MemberKind  // set by Check
	Field *Field      // set by Check for MemberField
	Enum  *EnumMember // set by Check for MemberEnum
}

// IndexExpr is X[Index] on a header stack.
type IndexExpr struct {
	exprBase
	X, Index Expr
}

// SliceExpr is X[Hi:Lo]; HiV and LoV are set by Check.
type SliceExpr struct {
	exprBase
	X, Hi, Lo Expr
	HiV, LoV  int
}

// UnaryExpr is !X, ~X, -X or +X.
type UnaryExpr struct {
	exprBase
	Op string
	X  Expr
}

// BinaryExpr is X Op Y.
type BinaryExpr struct {
	exprBase
	Op   string
	X, Y Expr
}

// TernaryExpr is Cond ? Then : Else.
type TernaryExpr struct {
	exprBase
	Cond, Then, Else Expr
}

// CastExpr is (Type) X.
type CastExpr struct {
	exprBase
	To TypeRef
	X  Expr
}

// Arg is one call argument, optionally named (name = value).
type Arg struct {
	P     Pos
	Name  string
	Value Expr
}

// CallExpr is Fun<TypeArgs>(Args).
type CallExpr struct {
	exprBase
	Fun      Expr
	TypeArgs []TypeRef
	Args     []*Arg // as written, in source order; Ordered has them in parameter order
	// Set by Check.
	Callee   Decl     // *MethodDecl, *ActionDecl, *FunctionDecl, *TableDecl, *ParserDecl or *ControlDecl (apply) or nil for built-in methods
	Method   string   // method name for built-ins (isValid, setValid, push_front, apply, ...)
	Params   []*Param // the callee's parameters
	Ordered  []*Arg   // the arguments in parameter order; nil where a parameter's default applies
	TypeArgT []Type   // type arguments of a generic callee, explicit or inferred, in declaration order
}

// ListExpr is { e1, e2, ... } (or a parenthesized tuple in select).
type ListExpr struct {
	exprBase
	Elems []Expr
}

// NamedExpr is one name = value in a struct expression.
type NamedExpr struct {
	P     Pos
	Name  string
	Value Expr
}

// StructExpr is { a = 1, b = 2 }.
type StructExpr struct {
	exprBase
	Fields []*NamedExpr
}

// MaskExpr is X &&& Y in a keyset.
type MaskExpr struct {
	exprBase
	X, Y Expr
}

// RangeExpr is X .. Y in a keyset.
type RangeExpr struct {
	exprBase
	X, Y Expr
}

// DefaultExpr is default in a keyset.
type DefaultExpr struct{ exprBase }

// DontCareExpr is _.
type DontCareExpr struct{ exprBase }

// SelectExpr is select(Keys) { cases }.
type SelectExpr struct {
	exprBase
	Keys  []Expr
	Cases []*SelectCase
}

// SelectCase is keyset : state.
type SelectCase struct {
	P      Pos
	Keyset []Expr // one per key; a single default/_ covers all keys
	State  *NameExpr
}

// TypeArgExpr wraps a type used where an expression is expected (e.g. T.minSizeInBits()).
type TypeArgExpr struct {
	exprBase
	Ref TypeRef
}

// ---- Program ------------------------------------------------------------------------------------

// Program is a parsed P4 program: the top-level declarations in source order, including those of
// the included architecture files.
type Program struct {
	File  string // the main source file, when known
	Decls []Decl
	// MaxNesting is the nesting bound the parser enforced (Options.MaxNesting; 0 for a program
	// not made by ParseWith: DefaultMaxNesting). Check refuses a tree nested deeper than twice
	// that (statements and the expressions in them), so that a program built without the parser
	// cannot exhaust the checker's stack either.
	MaxNesting int
}

func (d *ConstDecl) Position() Pos     { return d.P }
func (d *TypedefDecl) Position() Pos   { return d.P }
func (d *StructDecl) Position() Pos    { return d.P }
func (d *EnumDecl) Position() Pos      { return d.P }
func (d *ErrorDecl) Position() Pos     { return d.P }
func (d *MatchKindDecl) Position() Pos { return d.P }
func (d *MethodDecl) Position() Pos    { return d.P }
func (d *ExternDecl) Position() Pos    { return d.P }
func (d *ParserDecl) Position() Pos    { return d.P }
func (d *ControlDecl) Position() Pos   { return d.P }
func (d *PackageDecl) Position() Pos   { return d.P }
func (d *InstanceDecl) Position() Pos  { return d.P }
func (d *VarDecl) Position() Pos       { return d.P }
func (d *ValueSetDecl) Position() Pos  { return d.P }
func (d *ActionDecl) Position() Pos    { return d.P }
func (d *FunctionDecl) Position() Pos  { return d.P }
func (d *TableDecl) Position() Pos     { return d.P }
func (d *ParserState) Position() Pos   { return d.P }
func (d *Param) Position() Pos         { return d.P }
func (d *EnumMember) Position() Pos    { return d.P }
func (d *Field) Position() Pos         { return d.P }

func (d *ConstDecl) DeclName() string     { return d.Name }
func (d *TypedefDecl) DeclName() string   { return d.Name }
func (d *StructDecl) DeclName() string    { return d.Name }
func (d *EnumDecl) DeclName() string      { return d.Name }
func (d *ErrorDecl) DeclName() string     { return "error" }
func (d *MatchKindDecl) DeclName() string { return "match_kind" }
func (d *MethodDecl) DeclName() string    { return d.Name }
func (d *ExternDecl) DeclName() string    { return d.Name }
func (d *ParserDecl) DeclName() string    { return d.Name }
func (d *ControlDecl) DeclName() string   { return d.Name }
func (d *PackageDecl) DeclName() string   { return d.Name }
func (d *InstanceDecl) DeclName() string  { return d.Name }
func (d *VarDecl) DeclName() string       { return d.Name }
func (d *ValueSetDecl) DeclName() string  { return d.Name }
func (d *ActionDecl) DeclName() string    { return d.Name }
func (d *FunctionDecl) DeclName() string  { return d.Name }
func (d *TableDecl) DeclName() string     { return d.Name }
func (d *ParserState) DeclName() string   { return d.Name }
func (d *Param) DeclName() string         { return d.Name }
func (d *EnumMember) DeclName() string    { return d.Name }
func (d *Field) DeclName() string         { return d.Name }
