package tofino

import (
	"fmt"

	"github.com/netlock-go/netlock/bmv2/front"
)

// GatewayInputBits is what a Tofino gateway reads of the PHV: 4 bytes and 12 bits (bf-p4c
// 9.13.4: "condition too complex, limit of 4 bytes + 12 bits of PHV input exceeded").
const GatewayInputBits = 32 + 12

// GatewayProblem is an if's condition of an apply block that a Tofino gateway cannot evaluate,
// as bf-p4c refuses it ("condition too complex").
type GatewayProblem struct {
	Pos  front.Pos
	Cond string
	Why  string
}

func (g GatewayProblem) String() string { return fmt.Sprintf("%s: %s: %s", g.Pos, g.Cond, g.Why) }

// Gateways lists the if conditions of control's apply block (and of the blocks under it) that
// read more than a gateway's input (the front end refuses the conditions a gateway cannot
// evaluate at any width: an order comparison of two fields, a call, an operator that
// computes; front.tnaGatewayConditions), counted as the compiler's messages show: a field compared with a constant, a validity test or
// a flag costs its bits, each field once; a comparison of two fields (the XOR) the wider one's
// bits, unless one of them is read anyway. It is an estimate of what bf-p4c refuses, not its rule: what it
// reports as "condition expression too complex" (a compound of comparisons it cannot lay out)
// is not modeled. consts are the program's compile-time constants (front.Checked.Const).
func Gateways(control *front.ControlDecl, consts map[front.Expr]front.Value) []GatewayProblem {
	if control == nil || control.Body == nil {
		return nil
	}
	var out []GatewayProblem
	isConst := func(e front.Expr) bool { _, ok := consts[e]; return ok }
	front.InspectStmts(control.Body, func(s front.Stmt) {
		ifs, ok := s.(*front.IfStmt)
		if !ok || isConst(ifs.Cond) {
			return
		}
		// The fields the gateway reads (compared with a constant, or tested) and the pairs it
		// XORs; a pair costs the wider field's bits unless one of its fields is read anyway.
		seen := map[string]int{}
		type pair struct{ x, y string }
		var pairs []pair
		pw := map[pair]int{}
		add := func(key string, w int) { seen[key] = w }
		width := func(e front.Expr) int {
			if t := e.Type(); t != nil {
				return max(front.WidthOf(t), 1)
			}
			return 1
		}
		var cond func(e front.Expr)
		cond = func(e front.Expr) {
			switch x := e.(type) {
			case *front.BinaryExpr:
				switch x.Op {
				case "&&", "||":
					cond(x.X)
					cond(x.Y)
					return
				case "==", "!=", "<", "<=", ">", ">=":
					cx, cy := isConst(x.X), isConst(x.Y)
					switch {
					case cx && cy:
					case cx:
						add(front.ExprString(x.Y), width(x.Y))
					case cy:
						add(front.ExprString(x.X), width(x.X))
					default:
						pr := pair{front.ExprString(x.X), front.ExprString(x.Y)}
						pairs = append(pairs, pr)
						pw[pr] = max(width(x.X), width(x.Y))
					}
					return
				}
			case *front.UnaryExpr:
				if x.Op == "!" {
					cond(x.X)
					return
				}
			}
			if !isConst(e) {
				add(front.ExprString(e), width(e))
			}
		}
		cond(ifs.Cond)
		bits := 0
		for _, w := range seen {
			bits += w
		}
		done := map[pair]bool{}
		for _, pr := range pairs {
			_, rx := seen[pr.x]
			_, ry := seen[pr.y]
			if !done[pr] && !rx && !ry {
				bits += pw[pr]
			}
			done[pr] = true
		}
		if bits > GatewayInputBits {
			out = append(out, GatewayProblem{Pos: ifs.P, Cond: front.ExprString(ifs.Cond),
				Why: fmt.Sprintf("reads %d bits of PHV, a gateway %d", bits, GatewayInputBits)})
		}
	})
	return out
}
