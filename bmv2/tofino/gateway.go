package tofino

import (
	"fmt"
	"math/big"
	"sort"

	"github.com/netlock-go/netlock/bmv2/front"
)

// A Tofino 1 gateway's PHV input (bf-p4c 9.13.4, mau/gateway.cpp, CollectGatewayFields::
// compute_offsets; specs/device.cpp's gateway spec): 4 bytes that it matches or XORs, and 12
// bits of the hash bus that it range-matches ("condition too complex, limit of 4 bytes + 12
// bits of PHV input exceeded").
const (
	GatewayBytes = 4
	GatewayBits  = 12
)

// GatewayProblem is an if's condition of an apply block that a Tofino gateway cannot evaluate,
// as bf-p4c refuses it ("condition too complex").
type GatewayProblem struct {
	Pos  front.Pos
	Cond string
	Why  string
}

func (g GatewayProblem) String() string { return fmt.Sprintf("%s: %s: %s", g.Pos, g.Cond, g.Why) }

// Gateways lists the if conditions of control's apply block (and of the blocks under it) that
// read more than a Tofino 1 gateway's input. The front end refuses the conditions a gateway
// cannot evaluate at any width (an order comparison of two fields, a call, an operator that
// computes: front's tnaGatewayConditions); this is the width, laid out as bf-p4c lays it out
// (mau/gateway.cpp):
//
//   - an equality of two fields is an XOR of their bytes: the wider field's bytes, first;
//   - an order comparison with a constant k is first made x < k or x >= k (x > c is x >= c+1,
//     x <= c is x < c+1; CanonGatewayExpr), then the zero low bits of k are sliced off the
//     field (SliceReduce): what is left of k is 1 makes it an equality of the slice with 0;
//     otherwise the slice is range-matched, and a range match takes its bits of the 12;
//     against 0 the comparison is a constant;
//   - a field compared with a constant (and a slice left by the step above, a field masked
//     by a constant as the slice its mask covers) takes a byte per 8 bits, the widest first,
//     while bytes are left; then the rest take their bits of the 12;
//   - a validity test takes a bit of the 12 (Tofino 1's container valid bit).
//
// A field read twice is counted once. An estimate: the container bytes a field's bits share
// with others, and how bf-p4c splits a condition over gateway rows and tables, are not known
// here. consts are the program's compile-time constants (front.Checked.Const).
func Gateways(control *front.ControlDecl, consts map[front.Expr]front.Value) []GatewayProblem {
	if control == nil || control.Body == nil {
		return nil
	}
	var out []GatewayProblem
	constOf := func(e front.Expr) (*big.Int, bool) {
		v, ok := consts[e]
		if !ok {
			return nil, false
		}
		b, isInt := v.(*big.Int)
		return b, isInt
	}
	isConst := func(e front.Expr) bool { _, ok := consts[e]; return ok }
	width := func(e front.Expr) int {
		if t := e.Type(); t != nil {
			return max(front.WidthOf(t), 1)
		}
		return 1
	}
	front.InspectStmts(control.Body, func(s front.Stmt) {
		ifs, ok := s.(*front.IfStmt)
		if !ok || isConst(ifs.Cond) {
			return
		}
		l := gatewayLayout{xor: map[string]int{}, eq: map[string]int{}, rng: map[string]int{}}
		var cond func(e front.Expr)
		// eq records x compared with a constant (or tested alone): x's width, or the part of
		// it a mask with a constant covers.
		eq := func(x front.Expr) {
			w := width(x)
			if b, ok := x.(*front.BinaryExpr); ok && b.Op == "&" {
				if k, ok := constOf(b.Y); ok && k != nil && k.Sign() > 0 {
					w = k.BitLen() - int(k.TrailingZeroBits())
					x = b.X
				} else if k, ok := constOf(b.X); ok && k != nil && k.Sign() > 0 {
					w = k.BitLen() - int(k.TrailingZeroBits())
					x = b.Y
				}
			}
			l.eq[front.ExprString(x)] = max(l.eq[front.ExprString(x)], w)
		}
		cond = func(e front.Expr) {
			switch x := e.(type) {
			case *front.BinaryExpr:
				switch x.Op {
				case "&&", "||":
					cond(x.X)
					cond(x.Y)
					return
				case "==", "!=":
					cx, cy := isConst(x.X), isConst(x.Y)
					switch {
					case cx && cy:
					case cx:
						eq(x.Y)
					case cy:
						eq(x.X)
					default:
						k := front.ExprString(x.X) + " ^ " + front.ExprString(x.Y)
						l.xor[k] = max(width(x.X), width(x.Y))
						l.inXor(front.ExprString(x.X), front.ExprString(x.Y))
					}
					return
				case "<", "<=", ">", ">=":
					f, op, k := x.X, x.Op, x.Y
					if isConst(x.X) {
						f, k = x.Y, x.X
						op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
					}
					kv, ok := constOf(k)
					if !ok || kv == nil || isConst(f) {
						return // two fields: refused by the front end
					}
					l.order(front.ExprString(f), width(f), op, kv)
					return
				}
			case *front.UnaryExpr:
				if x.Op == "!" {
					cond(x.X)
					return
				}
			case *front.CallExpr:
				if x.Method == "isValid" {
					l.valid++
					return
				}
			}
			if !isConst(e) {
				eq(e)
			}
		}
		cond(ifs.Cond)
		if why := l.fits(); why != "" {
			out = append(out, GatewayProblem{Pos: ifs.P, Cond: front.ExprString(ifs.Cond), Why: why})
		}
	})
	return out
}

// gatewayLayout is what one condition asks of a gateway's input.
type gatewayLayout struct {
	xor    map[string]int  // XORed pairs: the wider field's width
	xorred map[string]bool // fields in a pair (their bytes are on the input already)
	eq     map[string]int  // fields (or slices) matched against constants: their width
	rng    map[string]int  // fields range-matched: the width of the slice matched
	valid  int             // validity tests
}

func (l *gatewayLayout) inXor(names ...string) {
	if l.xorred == nil {
		l.xorred = map[string]bool{}
	}
	for _, n := range names {
		l.xorred[n] = true
	}
}

// order records f op k (k a constant, f w bits wide) as bf-p4c canonicalizes it.
func (l *gatewayLayout) order(f string, w int, op string, k *big.Int) {
	k = new(big.Int).Set(k)
	switch op { // to < or >=
	case ">":
		op = ">="
		k.Add(k, big.NewInt(1))
	case "<=":
		op = "<"
		k.Add(k, big.NewInt(1))
	}
	if k.Sign() <= 0 || k.BitLen() > w {
		return // always true or always false
	}
	t := int(k.TrailingZeroBits())
	if new(big.Int).Rsh(k, uint(t)).Cmp(big.NewInt(1)) == 0 {
		key := fmt.Sprintf("%s[%d:%d]", f, w-1, t)
		l.eq[key] = max(l.eq[key], w-t)
		return
	}
	l.rng[f] = max(l.rng[f], w-t)
}

// fits returns why the layout does not fit a Tofino 1 gateway, or "".
func (l *gatewayLayout) fits() string {
	bytes := 0
	for _, w := range l.xor {
		bytes += (w + 7) / 8
	}
	bits := l.valid
	for _, w := range l.rng {
		bits += w
	}
	// the fields matched against constants, a byte slice at a time, widest first
	var slices []int
	for f, w := range l.eq {
		if l.xorred[f] {
			continue
		}
		for ; w > 0; w -= 8 {
			slices = append(slices, min(w, 8))
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(slices)))
	for _, w := range slices {
		if bytes < GatewayBytes {
			bytes++
		} else {
			bits += w
		}
	}
	if bytes > GatewayBytes || bits > GatewayBits {
		return fmt.Sprintf("needs %d bytes and %d bits of PHV input, a gateway %d and %d", bytes, bits, GatewayBytes, GatewayBits)
	}
	return ""
}
