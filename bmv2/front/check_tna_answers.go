package front

import "strings"

// tnaActionAnswers refuses an action of a control that writes the answers of two register
// actions (the values their execute returns), itself or through the actions it calls:
// bf-p4c 9.13.4 gives a stateful ALU's answer to an action over one path, "At most one
// stateful ALU operation with a given address is allowed per action" (2026-12-01, on Tofino 1
// and 2: two 32-bit answers at one index into two fields or two slices of one field are
// refused; one answer beside a register action without one, or two without, compile). An
// answer the compiler finds dead is removed before it checks, so it accepts some programs
// this refuses; the runs of an apply block's statements never hold two register actions
// (p4c's SynthesizeActions keeps externs apart).
func (c *checker) tnaActionAnswers(b Block) {
	if b.Control == nil {
		return
	}
	for _, l := range b.Control.Locals {
		a, ok := l.(*ActionDecl)
		if !ok || a.Body == nil {
			continue
		}
		var answers []string
		seen := map[*ActionDecl]bool{}
		var visit func(a *ActionDecl)
		visit = func(a *ActionDecl) {
			if a == nil || a.Body == nil || seen[a] {
				return
			}
			seen[a] = true
			walkStmts(a.Body, func(s Stmt) {
				var e Expr
				switch s := s.(type) {
				case *AssignStmt:
					e = s.RHS
				case *DeclStmt:
					if v, ok := s.Decl.(*VarDecl); ok {
						e = v.Init
					}
				case *CallStmt:
					if d, ok := s.Call.Callee.(*ActionDecl); ok {
						visit(d)
					}
				}
				if e == nil {
					return
				}
				walkExpr(e, func(x Expr) {
					if n := registerActionExecuted(x); n != nil {
						answers = append(answers, n.Name)
					}
				})
			})
		}
		visit(a)
		if len(answers) > 1 {
			c.errorf(a.P, "action %s writes the answers of %d register actions (%s): bf-p4c takes one stateful ALU's answer an action (\"At most one stateful ALU operation with a given address is allowed per action\")",
				a.Name, len(answers), strings.Join(answers, ", "))
		}
	}
}

// registerActionExecuted is the name of the RegisterAction instance whose execute e calls, or
// nil.
func registerActionExecuted(e Expr) *NameExpr {
	call, ok := e.(*CallExpr)
	if !ok {
		return nil
	}
	m, ok := call.Callee.(*MethodDecl)
	if !ok || m.Owner == nil || !isTNAExtern(m.Owner) || m.Owner.Name != "RegisterAction" || m.Name != "execute" {
		return nil
	}
	if me, ok := call.Fun.(*MemberExpr); ok {
		if n, ok := me.X.(*NameExpr); ok {
			return n
		}
	}
	return nil
}
