package front

import (
	"fmt"
	"strings"
)

// ExprString renders an expression in P4 syntax, the way p4c names table keys
// ("hdr.ipv4.dstAddr", "hdr.ipv4.isValid()", "meta.x[7:0]").
func ExprString(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

func writeExpr(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *NameExpr:
		if e.Global {
			b.WriteByte('.')
		}
		b.WriteString(e.Name)
	case *IntExpr:
		if e.Lit == nil {
			b.WriteString("?")
			return
		}
		if e.Lit.HasWidth {
			s := "w"
			if e.Lit.Signed {
				s = "s"
			}
			fmt.Fprintf(b, "%d%s%s", e.Lit.Width, s, e.Lit.Value)
			return
		}
		b.WriteString(e.Lit.Value.String())
	case *BoolExpr:
		fmt.Fprint(b, e.Val)
	case *StringExpr:
		fmt.Fprintf(b, "%q", e.Val)
	case *MemberExpr:
		writeExpr(b, e.X)
		b.WriteByte('.')
		b.WriteString(e.Name)
	case *IndexExpr:
		writeExpr(b, e.X)
		b.WriteByte('[')
		writeExpr(b, e.Index)
		b.WriteByte(']')
	case *SliceExpr:
		writeExpr(b, e.X)
		b.WriteByte('[')
		writeExpr(b, e.Hi)
		b.WriteByte(':')
		writeExpr(b, e.Lo)
		b.WriteByte(']')
	case *UnaryExpr:
		b.WriteString(e.Op)
		writeExpr(b, e.X)
	case *BinaryExpr:
		b.WriteByte('(')
		writeExpr(b, e.X)
		b.WriteString(" " + e.Op + " ")
		writeExpr(b, e.Y)
		b.WriteByte(')')
	case *TernaryExpr:
		writeExpr(b, e.Cond)
		b.WriteString(" ? ")
		writeExpr(b, e.Then)
		b.WriteString(" : ")
		writeExpr(b, e.Else)
	case *CastExpr:
		b.WriteString("(")
		b.WriteString(typeRefString(e.To))
		b.WriteString(")")
		writeExpr(b, e.X)
	case *CallExpr:
		writeExpr(b, e.Fun)
		b.WriteByte('(')
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			if a.Name != "" {
				b.WriteString(a.Name + " = ")
			}
			writeExpr(b, a.Value)
		}
		b.WriteByte(')')
	case *ListExpr:
		b.WriteByte('{')
		for i, x := range e.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, x)
		}
		b.WriteByte('}')
	case *StructExpr:
		b.WriteByte('{')
		for i, f := range e.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name + " = ")
			writeExpr(b, f.Value)
		}
		b.WriteByte('}')
	case *DefaultExpr:
		b.WriteString("default")
	case *DontCareExpr:
		b.WriteString("_")
	case *MaskExpr:
		writeExpr(b, e.X)
		b.WriteString(" &&& ")
		writeExpr(b, e.Y)
	case *RangeExpr:
		writeExpr(b, e.X)
		b.WriteString(" .. ")
		writeExpr(b, e.Y)
	case *TypeArgExpr:
		b.WriteString(typeRefString(e.Ref))
	default:
		fmt.Fprintf(b, "<%T>", e)
	}
}

// KeyName is the control-plane name p4c gives a table key expression: its source text, with
// fields renamed by their @name annotations (a leading dot drops what precedes the field) and
// h.isValid() named after the hidden valid bit, h.$valid$.
func KeyName(e Expr) string {
	if c, ok := e.(*CallExpr); ok && len(c.Args) == 0 {
		if me, ok := c.Fun.(*MemberExpr); ok && me.Name == "isValid" {
			return KeyName(me.X) + ".$valid$"
		}
	}
	switch x := e.(type) {
	case *MemberExpr:
		name := x.Name
		if x.Field != nil {
			if s, ok := x.Field.Annos.Get("name").StringArg(); ok {
				if strings.HasPrefix(s, ".") {
					return s[1:]
				}
				name = s
			}
		}
		return KeyName(x.X) + "." + name
	case *IndexExpr:
		return KeyName(x.X) + "[" + ExprString(x.Index) + "]"
	case *SliceExpr:
		return KeyName(x.X) + "[" + ExprString(x.Hi) + ":" + ExprString(x.Lo) + "]"
	case *BinaryExpr:
		if m, ok := x.Y.(*IntExpr); ok && x.Op == "&" && m.Lit != nil {
			return KeyName(x.X) + " & 0x" + m.Lit.Value.Text(16)
		}
	}
	return ExprString(e)
}

func typeRefString(t TypeRef) string {
	switch t := t.(type) {
	case *BaseTypeRef:
		if t.Width != nil {
			return t.Kind + "<" + ExprString(t.Width) + ">"
		}
		return t.Kind
	case *NamedTypeRef:
		if len(t.Args) == 0 {
			return t.Name
		}
		var parts []string
		for _, a := range t.Args {
			parts = append(parts, typeRefString(a))
		}
		return t.Name + "<" + strings.Join(parts, ", ") + ">"
	case *StackTypeRef:
		return typeRefString(t.Elem) + "[" + ExprString(t.Size) + "]"
	case *TupleTypeRef:
		var parts []string
		for _, a := range t.Elems {
			parts = append(parts, typeRefString(a))
		}
		return "tuple<" + strings.Join(parts, ", ") + ">"
	case *DontCareTypeRef:
		return "_"
	}
	return "?"
}
