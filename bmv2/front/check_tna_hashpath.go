package front

import (
	"fmt"
	"math/big"
	"math/bits"
)

// This file holds bf-p4c's rules on the tables whose actions need the hash distribution unit
// or the random number generator (p4c git 34b86e9, mau/table_layout.cpp, DoTableLayout::
// preorder(IR::MAU::Action *)). Such an action reads its hash or random number on the table's
// hit pathway only. A table with no key hits only if it has no match overhead, one action and
// no action data (the driver programs a keyless table's miss pathway, never its hit pathway),
// so bf-p4c refuses ("The table t with no key cannot have the action a. This action requires
// hash, which can only be done through the hit pathway. However, because ...") a keyless table
// with such an action when
//
//   - the table has more than one action ("the table has multiple actions"): the actions it
//     lists, and NoAction when it declares no default action (p4c adds it);
//   - the action has action data ("the table requires programming action data"): parameters,
//     or a constant no instruction can hold, which bf-p4c moves into action data
//     (ActionAnalysis::check_constant_to_actiondata, mau/action_analysis.cpp; tnaConstantData).
//
// The runs of statements of an apply block that p4c makes an action of (SplitRuns) are such
// tables too: one action, the default, no parameters, so only their constants can break the
// rule. A table with a key may not have such an action as its default action ("Cannot specify
// a as the default action, as it requires the hash distribution unit") or mark it
// @defaultonly ("cannot have action a marked as defaultonly, as this action can only run on
// hit"). Every verdict of hashPathCases was checked with bf-p4c on 2026-12-01
// (TestRealTNARules); the table's hash outputs that bf-p4c loads in a $precompute table of
// their own are not the action's (actionImmediate).

// tnaHashPathMsg is the heart of bf-p4c's refusal of a keyless table's hash or random action.
const tnaHashPathMsg = "which can only be done through the hit pathway"

// needsHashUnit names what action a (with the actions it calls) reads on its table's hit
// pathway: "hash" (a Hash's get bf-p4c does not preload), "rng" (a Random's get), or "".
func needsHashUnit(a *ActionDecl) string {
	hashes, _, random := actionImmediate(a)
	switch {
	case len(hashes) > 0:
		return "hash"
	case random > 0:
		return "rng"
	}
	return ""
}

// tnaHashPathway applies the rules of this file to the tables of an ingress or egress control
// and the controls it applies, and to the actions p4c makes of their apply blocks' statements.
func (c *checker) tnaHashPathway(b Block) {
	if b.Control == nil {
		return
	}
	for _, cd := range appliedControls(b.Control) {
		appliedTables(cd, func(t *TableDecl, actions []*ActionDecl) {
			c.hashPathTable(t, actions)
		})
		actionRuns(cd.Body.Stmts, func(run []Stmt) {
			a := &ActionDecl{Name: "(apply block)", Body: &BlockStmt{Stmts: run}}
			unit := needsHashUnit(a)
			if unit == "" {
				return
			}
			if s, why := c.constantData(a); s != nil {
				c.errorf(s.Position(), "the statements of %s's apply block from line %d become an action of a table with no key (p4c's SynthesizeActions), which needs the %s and has action data: %s (bf-p4c: \"This action requires %s, %s. However, because the table requires programming action data, ...\"; an action of its own for the %s, or the constant from a field, avoids it)",
					cd.Name, run[0].Position().Line, unitName(unit), why, unit, tnaHashPathMsg, unit)
			}
		})
	}
}

// hashPathTable checks one applied table t listing actions.
func (c *checker) hashPathTable(t *TableDecl, actions []*ActionDecl) {
	keyless := true
	if k := t.Prop("key"); k != nil && len(k.Keys) > 0 {
		keyless = false
	}
	def := t.Prop("default_action")
	var defAction *ActionDecl
	if def != nil && len(def.Actions) > 0 {
		defAction = def.Actions[0].Action
	}
	n := len(actions)
	if defAction == nil {
		noAction := false
		for _, a := range actions {
			noAction = noAction || a.Name == "NoAction"
		}
		if !noAction {
			n++ // p4c's default action
		}
	}
	for _, a := range actions {
		unit := needsHashUnit(a)
		if unit == "" {
			continue
		}
		if !keyless {
			if a == defAction {
				needs := "the hash distribution unit"
				if unit == "rng" {
					needs = "a random number"
				}
				c.errorf(def.Actions[0].P, "table %s: the default action %s uses the %s (bf-p4c: \"Cannot specify %s as the default action, as it requires %s\"; an entry that matches every key can run it)",
					t.Name, a.Name, unitName(unit), a.Name, needs)
			}
			if r := listedRef(t, a); r != nil && r.Annos.Get("defaultonly") != nil {
				c.errorf(r.P, "table %s cannot have action %s marked as defaultonly, as this action can only run on hit because of its use of %s (bf-p4c)", t.Name, a.Name, unit)
			}
			continue
		}
		var why string
		switch {
		case n > 1:
			why = fmt.Sprintf("the table has multiple actions (%d, with NoAction when no default action is declared): declare only %s and make it the default action", n, a.Name)
		case len(actionData(a)) > 0:
			why = fmt.Sprintf("the table requires programming action data (the parameters of %s)", a.Name)
		default:
			if _, d := c.constantData(a); d != "" {
				why = "the table requires programming action data: " + d
			}
		}
		if why != "" {
			c.errorf(t.P, "The table %s with no key cannot have the action %s. This action requires %s, %s. However, because %s (bf-p4c)",
				t.Name, a.Name, unit, tnaHashPathMsg, why)
		}
	}
}

// unitName is the unit a hash-path action needs, in words.
func unitName(unit string) string {
	if unit == "rng" {
		return "random number generator"
	}
	return "hash distribution unit"
}

// listedRef is t's reference to a in its actions property, or nil.
func listedRef(t *TableDecl, a *ActionDecl) *ActionRef {
	if p := t.Prop("actions"); p != nil {
		for _, r := range p.Actions {
			if r.Action == a {
				return r
			}
		}
	}
	return nil
}

// actionData returns a's parameters without a direction: the action data of its table.
func actionData(a *ActionDecl) []*Param {
	var out []*Param
	for _, p := range a.Params {
		if p.Dir == DirNone {
			out = append(out, p)
		}
	}
	return out
}

// tnaConstSrc is the range of an instruction's constant operand (ActionAnalysis, mau/
// action_analysis.h: CONST_SRC_MAX 3, and JBAY_CONST_SRC_MIN 2): 0..7 zero-extended, and the
// last 8 (Tofino 1) or 4 (Tofino 2) values of the container sign-extended; tnaLoadConstBits is
// LOADCONST_MAX, the width of a load_const's constant (a set of a whole container).
const (
	tnaConstSrcMax   = 8
	tnaLoadConstBits = 21
)

// depositConstant reports whether a deposit-field instruction holds constant v written to a
// w-bit field that is part of its container, beyond the operand range (canRotateConstant in
// mau/action_analysis.cpp): its set bits, at most 3, lie within 3 bits (rotated into place), or
// its clear bits within the field, at most 3 (Tofino 1) or 2 (Tofino 2), do. Seen with bf-p4c
// on a 9-bit field, 2026-12-01: 0x38, 0x1c0 and 0x100 compile, 196 and 0x41 do not.
func depositConstant(v uint64, w int, gen2 bool) bool {
	window := func(x uint64, n int) bool {
		if x == 0 {
			return true
		}
		lo, hi := -1, 0
		for i := 0; i < 64; i++ {
			if x&(1<<i) != 0 {
				if lo < 0 {
					lo = i
				}
				hi = i
			}
		}
		return bits.OnesCount64(x) <= n && hi-lo+1 <= n
	}
	clearMax := 3
	if gen2 {
		clearMax = 2
	}
	mask := uint64(1)<<w - 1
	return window(v, 3) || window(^v&mask, clearMax)
}

// constantData returns the first statement of action a (with the actions it calls) that makes
// bf-p4c move a constant into action data, and why, or nil. A field of 8, 16 or 32 bits is
// taken to be its container (the allocation can place it otherwise). Observed with bf-p4c on Tofino 1, 2026-12-01
// (hashPathCases): a set of a whole 32-bit field to a constant of 2^21 or more (a load_const
// holds 21 bits; 8- and 16-bit fields take any), an & of a field with a constant, and a +, -,
// |, ^ of a field with a constant outside the instruction's range (0..7, or the last 8 values
// of the field's width: 0xfffffff8, b - 8). On Tofino 2 the range's top is the last 4 values,
// and a set of a whole field takes a constant in the range only (bf-p4c 9.13.4 placed the
// fields of those cases in mocha containers, which have no load_const). The allocation decides
// that: an 8-bit field set to 8 compiled in a header of six fields and was refused in one of
// eight (hashPathCases), and the rule refuses it. A field of another width
// up to 32 bits is part of a container: only its sets to a constant are judged, as a
// deposit-field's (depositConstant). An operand a hash wrote earlier in the action is
// not judged (bf-p4c folds the constant into the hash, or preloads it: P1 of hashPathCases).
func (c *checker) constantData(a *ActionDecl) (Stmt, string) {
	gen2 := c.out.TofinoGeneration() == 2
	minSE := int64(tnaConstSrcMax)
	if gen2 {
		minSE = 4
	}
	hashed := map[string]bool{}
	var at Stmt
	var why string
	inlinedStmts(a, func(s Stmt) {
		as, ok := s.(*AssignStmt)
		if !ok || at != nil {
			return
		}
		dest := ExprString(as.LHS)
		if isHashGet(as.RHS) || len(immSources(as.RHS)) > 0 {
			hashed[sliceBase(dest)] = true
			return
		}
		if _, slice := as.LHS.(*SliceExpr); slice || hashed[dest] {
			return
		}
		w := WidthOf(as.LHS.Type())
		if w <= 0 || w > 32 {
			return
		}
		whole := w == 8 || w == 16 || w == 32 // the field is taken to be its container
		mod := new(big.Int).Lsh(big.NewInt(1), uint(w))
		val := func(e Expr) *big.Int {
			v := constInt(c.out.Const[e])
			if v == nil {
				return nil
			}
			return new(big.Int).Mod(v, mod)
		}
		top := new(big.Int).Sub(mod, big.NewInt(minSE)) // the first sign-extended constant
		operand := func(v *big.Int) bool {
			return v.Cmp(big.NewInt(tnaConstSrcMax)) < 0 || v.Cmp(top) >= 0
		}
		if v := val(as.RHS); v != nil {
			switch {
			case !whole && !operand(v) && !depositConstant(v.Uint64(), w, gen2):
				at, why = s, fmt.Sprintf("%s = 0x%x sets a %d-bit field, part of a container, to a constant a deposit-field instruction cannot hold (0..7, the field's last %d values, or at most 3 set bits within 3 bits, or as few clear ones)", dest, v, w, minSE)
			case !whole:
			case gen2 && !operand(v):
				at, why = s, fmt.Sprintf("%s = 0x%x: on Tofino 2 the field's container takes an instruction's constant operand only (0..7 or 0x%x and up; bf-p4c placed such fields in mocha containers, which have no load_const)", dest, v, top)
			case !gen2 && w == 32 && v.BitLen() > tnaLoadConstBits:
				at, why = s, fmt.Sprintf("%s = 0x%x sets a 32-bit field to a constant wider than a load_const's %d bits", dest, v, tnaLoadConstBits)
			}
			return
		}
		b, ok := as.RHS.(*BinaryExpr)
		if !ok || !whole {
			return
		}
		k, other := b.Y, b.X
		if c.isConst(b.X) && b.Op != "-" {
			k, other = b.X, b.Y
		}
		v := val(k)
		if v == nil || c.isConst(other) || hashed[sliceBase(ExprString(other))] {
			return
		}
		switch b.Op {
		case "&":
			at, why = s, fmt.Sprintf("%s & 0x%x: an & with a constant takes the constant from action data", ExprString(other), v)
		case "-", "+", "|", "^":
			if b.Op == "-" {
				v.Mod(v.Neg(v), mod)
			}
			if !operand(v) {
				at, why = s, fmt.Sprintf("%s: the constant (0x%x in %d bits) is outside an instruction's constant operand (0..7 or 0x%x and up)", ExprString(as.RHS), v, w, top)
			}
		}
	}, nil)
	return at, why
}
