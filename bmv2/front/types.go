package front

import (
	"fmt"
	"math/big"
	"strings"
)

// Type is a checked P4 type. Widths are constant-folded.
type Type interface {
	String() string
	isType()
}

// Value is a compile-time constant: *big.Int (integers, already wrapped to their width), bool,
// string, *EnumMember (enum, error and match_kind members) or []Value (lists, and structs and
// headers with their fields in declaration order).
type Value any

// BitsType is bit<Width> (Signed false) or int<Width> (Signed true).
type BitsType struct {
	Width  int
	Signed bool
}

// VarbitType is varbit<Max>.
type VarbitType struct{ Max int }

// IntType is the arbitrary-precision integer type of untyped literals and "int" constants.
type IntType struct{}

// BoolType is bool.
type BoolType struct{}

// StringType is string (only as an extern argument).
type StringType struct{}

// ErrorType is the error type.
type ErrorType struct{}

// MatchKindType is the match_kind type.
type MatchKindType struct{}

// VoidType is the result type of calls that return nothing.
type VoidType struct{}

// DontCareType is the type of _ .
type DontCareType struct{}

// StructType is a struct, header or header_union.
type StructType struct {
	Decl   *StructDecl
	Fields []*Field // Field.T is resolved
}

// IsHeader reports whether the type is a header.
func (t *StructType) IsHeader() bool { return t.Decl.Kind == "header" }

// IsUnion reports whether the type is a header_union.
func (t *StructType) IsUnion() bool { return t.Decl.Kind == "header_union" }

// Field returns the field called name, or nil.
func (t *StructType) Field(name string) *Field {
	for _, f := range t.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// StackType is a header stack Elem[Size].
type StackType struct {
	Elem Type
	Size int
}

// EnumType is an enum; Underlying is non-nil for serializable enums.
type EnumType struct {
	Decl       *EnumDecl
	Underlying *BitsType
}

// NewType is a type introduced with "type T Name".
type NewType struct {
	Decl       *TypedefDecl
	Underlying Type
}

// ExternType is an instance type of an extern object (including packet_in and packet_out).
type ExternType struct {
	Decl *ExternDecl
	Args []Type
}

// ParserType is the type of a parser (declared with or without body).
type ParserType struct {
	Decl *ParserDecl
	Args []Type
}

// ControlType is the type of a control.
type ControlType struct {
	Decl *ControlDecl
	Args []Type
}

// PackageType is the type of a package instance.
type PackageType struct {
	Decl *PackageDecl
	Args []Type
}

// TupleType is a tuple or the type of a list expression.
type TupleType struct{ Elems []Type }

// StructExprType is the type of a struct expression { a = 1, ... } before it meets a target type.
type StructExprType struct {
	Names []string
	Elems []Type
}

// TableType is the type of a table name.
type TableType struct{ Decl *TableDecl }

// ApplyResultType is the result of t.apply(): fields hit, miss and action_run.
type ApplyResultType struct{ Table *TableDecl }

// ActionRunType is the type of t.apply().action_run.
type ActionRunType struct{ Table *TableDecl }

// ActionType is the type of an action name.
type ActionType struct{ Decl *ActionDecl }

// StateType is the type of a parser state name.
type StateType struct{}

// TypeVar is a type parameter of a generic declaration.
type TypeVar struct {
	Name  string
	Owner Decl
}

// TypeName is the type of an expression that names a type (an enum in MyEnum.A, error in
// error.NoError).
type TypeName struct{ T Type }

// MethodRef is the type of an expression that names a method or function, before the call.
type MethodRef struct {
	Candidates []*MethodDecl // extern methods or functions with this name (overloads)
	Function   *FunctionDecl
	Builtin    string // isValid, setValid, setInvalid, push_front, pop_front, apply, minSizeInBits...
	Recv       Type   // receiver type, nil for free functions
}

func (*BitsType) isType()        {}
func (*VarbitType) isType()      {}
func (*IntType) isType()         {}
func (*BoolType) isType()        {}
func (*StringType) isType()      {}
func (*ErrorType) isType()       {}
func (*MatchKindType) isType()   {}
func (*VoidType) isType()        {}
func (*DontCareType) isType()    {}
func (*StructType) isType()      {}
func (*StackType) isType()       {}
func (*EnumType) isType()        {}
func (*NewType) isType()         {}
func (*ExternType) isType()      {}
func (*ParserType) isType()      {}
func (*ControlType) isType()     {}
func (*PackageType) isType()     {}
func (*TupleType) isType()       {}
func (*StructExprType) isType()  {}
func (*TableType) isType()       {}
func (*ApplyResultType) isType() {}
func (*ActionRunType) isType()   {}
func (*ActionType) isType()      {}
func (*StateType) isType()       {}
func (*TypeVar) isType()         {}
func (*TypeName) isType()        {}
func (*MethodRef) isType()       {}
func (*badType) isType()         {}

// badType marks an expression whose type could not be computed; it suppresses follow-on errors.
type badType struct{}

var (
	tBool   Type = &BoolType{}
	tInt    Type = &IntType{}
	tString Type = &StringType{}
	tError  Type = &ErrorType{}
	tMK     Type = &MatchKindType{}
	tVoid   Type = &VoidType{}
	tDC     Type = &DontCareType{}
	tState  Type = &StateType{}
	tBad    Type = &badType{}
)

func bitsT(w int) *BitsType { return &BitsType{Width: w} }

func (t *BitsType) String() string {
	if t.Signed {
		return fmt.Sprintf("int<%d>", t.Width)
	}
	return fmt.Sprintf("bit<%d>", t.Width)
}
func (t *VarbitType) String() string  { return fmt.Sprintf("varbit<%d>", t.Max) }
func (*IntType) String() string       { return "int" }
func (*BoolType) String() string      { return "bool" }
func (*StringType) String() string    { return "string" }
func (*ErrorType) String() string     { return "error" }
func (*MatchKindType) String() string { return "match_kind" }
func (*VoidType) String() string      { return "void" }
func (*DontCareType) String() string  { return "_" }
func (t *StructType) String() string  { return t.Decl.Kind + " " + t.Decl.Name }
func (t *StackType) String() string   { return fmt.Sprintf("%s[%d]", t.Elem, t.Size) }
func (t *EnumType) String() string    { return "enum " + t.Decl.Name }
func (t *NewType) String() string     { return t.Decl.Name }
func (t *ExternType) String() string  { return t.Decl.Name + typeArgsString(t.Args) }
func (t *ParserType) String() string  { return "parser " + t.Decl.Name + typeArgsString(t.Args) }
func (t *ControlType) String() string { return "control " + t.Decl.Name + typeArgsString(t.Args) }
func (t *PackageType) String() string { return "package " + t.Decl.Name + typeArgsString(t.Args) }
func (t *TupleType) String() string   { return "tuple" + typeArgsString(t.Elems) }
func (t *TableType) String() string   { return "table " + t.Decl.Name }
func (t *ApplyResultType) String() string {
	return "apply result of table " + t.Table.Name
}
func (t *ActionRunType) String() string { return "action_run of table " + t.Table.Name }
func (t *ActionType) String() string    { return "action " + t.Decl.Name }
func (*StateType) String() string       { return "parser state" }
func (t *TypeVar) String() string       { return t.Name }
func (t *TypeName) String() string      { return "type " + t.T.String() }
func (*badType) String() string         { return "<error>" }
func (t *MethodRef) String() string {
	switch {
	case t.Function != nil:
		return "function " + t.Function.Name
	case len(t.Candidates) > 0:
		return "method " + t.Candidates[0].Name
	}
	return "method " + t.Builtin
}
func (t *StructExprType) String() string {
	var parts []string
	for i, n := range t.Names {
		parts = append(parts, n+": "+t.Elems[i].String())
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func typeArgsString(ts []Type) string {
	if len(ts) == 0 {
		return ""
	}
	var parts []string
	for _, t := range ts {
		if t == nil {
			parts = append(parts, "?")
			continue
		}
		parts = append(parts, t.String())
	}
	return "<" + strings.Join(parts, ", ") + ">"
}

// sameType reports whether a and b are the same type (typedefs are already resolved).
func sameType(a, b Type) bool {
	if a == b {
		return true
	}
	switch x := a.(type) {
	case *badType:
		return true
	case *BitsType:
		y, ok := b.(*BitsType)
		return ok && x.Width == y.Width && x.Signed == y.Signed
	case *VarbitType:
		y, ok := b.(*VarbitType)
		return ok && x.Max == y.Max
	case *StructType:
		y, ok := b.(*StructType)
		return ok && x.Decl == y.Decl
	case *StackType:
		y, ok := b.(*StackType)
		return ok && x.Size == y.Size && sameType(x.Elem, y.Elem)
	case *EnumType:
		y, ok := b.(*EnumType)
		return ok && x.Decl == y.Decl
	case *NewType:
		y, ok := b.(*NewType)
		return ok && x.Decl == y.Decl
	case *ExternType:
		y, ok := b.(*ExternType)
		if !ok || x.Decl != y.Decl || len(x.Args) != len(y.Args) {
			return false
		}
		for i := range x.Args {
			_, dx := x.Args[i].(*DontCareType)
			_, dy := y.Args[i].(*DontCareType)
			if !dx && !dy && x.Args[i] != nil && y.Args[i] != nil && !sameType(x.Args[i], y.Args[i]) {
				return false // Register<_, _> stands for any register
			}
		}
		return true
	case *ParserType:
		y, ok := b.(*ParserType)
		return ok && x.Decl == y.Decl
	case *ControlType:
		y, ok := b.(*ControlType)
		return ok && x.Decl == y.Decl
	case *TupleType:
		y, ok := b.(*TupleType)
		return ok && sameTypes(x.Elems, y.Elems)
	case *TypeVar:
		y, ok := b.(*TypeVar)
		return ok && x.Name == y.Name && x.Owner == y.Owner
	case *TableType:
		y, ok := b.(*TableType)
		return ok && x.Decl == y.Decl
	case *ActionRunType:
		y, ok := b.(*ActionRunType)
		return ok && x.Table == y.Table
	}
	if _, ok := b.(*badType); ok {
		return true
	}
	return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b) && a.String() == b.String()
}

func sameTypes(a, b []Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == nil || b[i] == nil {
			continue
		}
		if !sameType(a[i], b[i]) {
			return false
		}
	}
	return true
}

// WidthOf returns the width in bits of a fixed-width type (bit/int, bool, serializable enum,
// headers and structs of fixed-width fields), or -1.
func WidthOf(t Type) int {
	switch x := t.(type) {
	case *BitsType:
		return x.Width
	case *BoolType:
		return 1
	case *EnumType:
		if x.Underlying != nil {
			return x.Underlying.Width
		}
	case *NewType:
		return WidthOf(x.Underlying)
	case *StructType:
		n := 0
		for _, f := range x.Fields {
			w := WidthOf(f.T)
			if w < 0 {
				return -1
			}
			n += w
		}
		return n
	case *StackType:
		w := WidthOf(x.Elem)
		if w < 0 {
			return -1
		}
		return w * x.Size
	}
	return -1
}

func bigInt(v int64) *big.Int { return big.NewInt(v) }

// wrap reduces v to the range of t (two's complement for signed types).
func wrap(v *big.Int, t *BitsType) *big.Int {
	mod := new(big.Int).Lsh(big.NewInt(1), uint(t.Width))
	r := new(big.Int).Mod(v, mod)
	if t.Signed {
		half := new(big.Int).Rsh(mod, 1)
		if r.Cmp(half) >= 0 {
			r.Sub(r, mod)
		}
	}
	return r
}
