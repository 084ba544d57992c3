package front

// Inspect calls f on every expression of the program's declarations (constants, parameter
// defaults, variable initializers, parser statements and select cases, table properties and
// entries, action and control bodies, package arguments), parents before children.
func Inspect(prog *Program, f func(Expr)) {
	for _, d := range prog.Decls {
		inspectDecl(d, f)
	}
}

func inspectParams(ps []*Param, f func(Expr)) {
	for _, p := range ps {
		if p.Deflt != nil {
			walkExpr(p.Deflt, f)
		}
	}
}

func inspectDecl(d Decl, f func(Expr)) {
	switch d := d.(type) {
	case *ConstDecl:
		walkExpr(d.Value, f)
	case *VarDecl:
		if d.Init != nil {
			walkExpr(d.Init, f)
		}
	case *ValueSetDecl:
		walkExpr(d.Size, f)
	case *EnumDecl:
		for _, m := range d.Members {
			if m.Value != nil {
				walkExpr(m.Value, f)
			}
		}
	case *InstanceDecl:
		for _, a := range d.Args {
			walkExpr(a.Value, f)
		}
		for _, m := range d.Init {
			inspectDecl(m, f)
		}
	case *ActionDecl:
		inspectParams(d.Params, f)
		walkStmt(d.Body, f)
	case *FunctionDecl:
		inspectParams(d.Params, f)
		walkStmt(d.Body, f)
	case *TableDecl:
		for _, p := range d.Props {
			for _, k := range p.Keys {
				walkExpr(k.Expr, f)
			}
			for _, a := range p.Actions {
				walkExpr(a.Name, f)
				for _, x := range a.Args {
					walkExpr(x.Value, f)
				}
			}
			for _, e := range p.Entries {
				for _, k := range e.Keys {
					walkExpr(k, f)
				}
				walkExpr(e.Action.Name, f)
				for _, x := range e.Action.Args {
					walkExpr(x.Value, f)
				}
			}
			if p.Value != nil {
				walkExpr(p.Value, f)
			}
		}
	case *ParserDecl:
		inspectParams(d.Params, f)
		inspectParams(d.CtorParams, f)
		for _, l := range d.Locals {
			inspectDecl(l, f)
		}
		for _, s := range d.States {
			for _, st := range s.Stmts {
				walkStmt(st, f)
			}
			if s.Trans == nil {
				continue
			}
			if s.Trans.Target != nil {
				walkExpr(s.Trans.Target, f)
			}
			if se := s.Trans.Select; se != nil {
				walkExpr(se, f)
				for _, k := range se.Keys {
					walkExpr(k, f)
				}
				for _, c := range se.Cases {
					for _, k := range c.Keyset {
						walkExpr(k, f)
					}
					walkExpr(c.State, f)
				}
			}
		}
	case *ControlDecl:
		inspectParams(d.Params, f)
		inspectParams(d.CtorParams, f)
		for _, l := range d.Locals {
			inspectDecl(l, f)
		}
		if d.Body != nil {
			walkStmt(d.Body, f)
		}
	case *MethodDecl:
		inspectParams(d.Params, f)
	case *ExternDecl:
		for _, m := range d.Ctors {
			inspectParams(m.Params, f)
		}
		for _, m := range d.Methods {
			inspectParams(m.Params, f)
		}
	case *PackageDecl:
		inspectParams(d.Params, f)
	}
}

// walkStmts calls f on s and on every statement under it (blocks, branches, switch cases), parents
// before children.
func walkStmts(s Stmt, f func(Stmt)) {
	switch s := s.(type) {
	case nil:
		return
	case *BlockStmt:
		if s == nil {
			return
		}
		f(s)
		for _, x := range s.Stmts {
			walkStmts(x, f)
		}
		return
	case *IfStmt:
		f(s)
		walkStmts(s.Then, f)
		if s.Else != nil {
			walkStmts(s.Else, f)
		}
		return
	case *SwitchStmt:
		f(s)
		for _, c := range s.Cases {
			if c.Body != nil {
				walkStmts(c.Body, f)
			}
		}
		return
	}
	f(s)
}

// walkStmt calls f on every expression under s.
func walkStmt(s Stmt, f func(Expr)) {
	switch s := s.(type) {
	case nil:
	case *BlockStmt:
		if s == nil {
			return
		}
		for _, x := range s.Stmts {
			walkStmt(x, f)
		}
	case *AssignStmt:
		walkExpr(s.LHS, f)
		walkExpr(s.RHS, f)
	case *CallStmt:
		walkExpr(s.Call, f)
	case *IfStmt:
		walkExpr(s.Cond, f)
		walkStmt(s.Then, f)
		if s.Else != nil {
			walkStmt(s.Else, f)
		}
	case *SwitchStmt:
		walkExpr(s.Expr, f)
		for _, c := range s.Cases {
			if c.Label != nil {
				walkExpr(c.Label, f)
			}
			if c.Body != nil {
				walkStmt(c.Body, f)
			}
		}
	case *ReturnStmt:
		if s.Value != nil {
			walkExpr(s.Value, f)
		}
	case *DeclStmt:
		inspectDecl(s.Decl, f)
	}
}

// walkExpr calls f on e and its subexpressions.
func walkExpr(e Expr, f func(Expr)) {
	if e == nil {
		return
	}
	f(e)
	for _, x := range exprChildren(e) {
		walkExpr(x, f)
	}
}

// exprChildren returns e's direct subexpressions (some may be nil), in the order walkExpr
// visits them.
func exprChildren(e Expr) []Expr {
	var out []Expr
	switch e := e.(type) {
	case *MemberExpr:
		out = append(out, e.X)
	case *IndexExpr:
		out = append(out, e.X, e.Index)
	case *SliceExpr:
		out = append(out, e.X, e.Hi, e.Lo)
	case *UnaryExpr:
		out = append(out, e.X)
	case *BinaryExpr:
		out = append(out, e.X, e.Y)
	case *TernaryExpr:
		out = append(out, e.Cond, e.Then, e.Else)
	case *CastExpr:
		out = append(out, e.X)
	case *CallExpr:
		out = append(out, e.Fun)
		for _, a := range e.Args {
			out = append(out, a.Value)
		}
	case *ListExpr:
		out = append(out, e.Elems...)
	case *StructExpr:
		for _, x := range e.Fields {
			out = append(out, x.Value)
		}
	case *MaskExpr:
		out = append(out, e.X, e.Y)
	case *RangeExpr:
		out = append(out, e.X, e.Y)
	}
	return out
}

// InspectDecl calls f on every expression of d, as Inspect does for each of a program's
// declarations (a control's locals and body, an instance's arguments and initializer, a table's
// properties, ...), parents before children.
func InspectDecl(d Decl, f func(Expr)) { inspectDecl(d, f) }

// InspectVars calls f on every variable a statement under s declares.
func InspectVars(s Stmt, f func(*VarDecl)) {
	walkStmts(s, func(x Stmt) {
		if d, ok := x.(*DeclStmt); ok {
			if v, ok := d.Decl.(*VarDecl); ok {
				f(v)
			}
		}
	})
}

// InspectStmts calls f on s and on every statement under it (a block's, a branch's, a switch
// case's), parents first.
func InspectStmts(s Stmt, f func(Stmt)) { walkStmts(s, f) }

// InspectExpr calls f on e and on each of its subexpressions, parents first, as Inspect does.
func InspectExpr(e Expr, f func(Expr)) { walkExpr(e, f) }
