package front

import (
	"fmt"
	"sort"
	"strings"
)

// tnaAnswerSlotMsg is bfas's refusal of a stateful ALU's answers on the action bus
// (bf-asm/action_bus.cpp: "action bus slice (0..31) can't fit in a single slot for 16 bit
// access"), as it refused bf-p4c's Tofino 2 assembly of the TNA program on 2026-12-01.
const tnaAnswerSlotMsg = "can't fit in a single slot"

// tnaAnswerSlots warns of a table, in the controls of an ingress or egress block and the
// controls they apply, whose actions may put the answers of one register's register actions
// (the values their execute returns) into 16-bit and 32-bit containers both. The stateful
// ALU's answer takes one action bus slot, which every container that reads it shares, and
// bfas refuses a slot read by a 16-bit and a 32-bit container: bf-p4c 9.13.4 (p4c 34b86e9)
// allocated a 1-bit answer (txn_hi_cmp's, hold_rel's) in a 16-bit container beside the same
// register's 32-bit read in a 32-bit one, and q_take's bit in a 32-bit container beside
// q_sub's 16 bits, and bfas refused the three tables ("action bus slice (0..31) can't fit in a
// single slot for 16 bit access", then a crash; Tofino 2, 2026-12-01); it took lk_state's
// 1-bit answers in 8-bit containers beside its 32-bit reads. An answer's container size is
// its field's @pa_container_size of one size in the block's control, else the field's width
// when that is 8, 16 or 32 (the size the allocator gave such fields here), else unknown: the
// table is warned of when the known sizes include 16 and 32, or an unknown one is beside a
// 16- or 32-bit one. The compiler chooses the containers, so a table this warns of may
// assemble. A warning: bf-p4c itself accepts the program.
func (c *checker) tnaAnswerSlots(b Block) {
	if b.Control == nil {
		return
	}
	pinned := containerSizes(b.Control.Annos)
	for _, cd := range appliedControls(b.Control) {
		appliedTables(cd, func(t *TableDecl, actions []*ActionDecl) {
			type answer struct {
				field string
				width int
				size  int // pinned container size, 0 if none
			}
			byReg := map[*InstanceDecl][]answer{}
			var regs []*InstanceDecl
			for _, a := range actions {
				inlinedStmts(a, func(s Stmt) {
					as, ok := s.(*AssignStmt)
					if !ok {
						return
					}
					walkExpr(as.RHS, func(x Expr) {
						n := registerActionExecuted(x)
						if n == nil {
							return
						}
						ra, ok := n.Decl.(*InstanceDecl)
						if !ok || len(ra.Args) == 0 {
							return
						}
						reg := registerOf(ra.Args[0].Value)
						// a slice's field is in the field's containers
						dst := as.LHS
						for {
							sl, ok := dst.(*SliceExpr)
							if !ok {
								break
							}
							dst = sl.X
						}
						if reg == nil || dst.Type() == nil {
							return
						}
						f := ExprString(dst)
						if _, ok := byReg[reg]; !ok {
							regs = append(regs, reg)
						}
						byReg[reg] = append(byReg[reg], answer{f, WidthOf(dst.Type()), pinned[f]})
					})
				}, nil)
			}
			for _, reg := range regs {
				ans := byReg[reg]
				sizes := map[int]bool{}
				for _, x := range ans {
					sizes[containerSize(x.width, x.size)] = true
				}
				if !(sizes[16] && sizes[32]) && !(sizes[0] && (sizes[16] || sizes[32])) {
					continue
				}
				var list []string
				for _, x := range ans {
					s := fmt.Sprintf("%s (%d bits", x.field, x.width)
					if x.size != 0 {
						s += fmt.Sprintf(", pinned to %d", x.size)
					}
					list = append(list, s+")")
				}
				sort.Strings(list)
				c.warnf(t.P, "may be refused by bfas: in table %s, the answers of register %s may go to 16-bit and 32-bit containers (%s): bfas refuses an answer's action bus slot read by both (%q): pin the answers' fields with @pa_container_size (8-bit containers beside 32-bit ones were taken)",
					t.Name, reg.Name, strings.Join(list, ", "), tnaAnswerSlotMsg)
			}
		})
	}
}

// containerSize is the container size an answer of width bits goes to: pinned (a
// @pa_container_size), else its width when that is a container's, else 0 (unknown).
func containerSize(width, pinned int) int {
	switch {
	case pinned != 0:
		return pinned
	case width == 8 || width == 16 || width == 32:
		return width
	}
	return 0
}

// containerSizes returns the fields (as written) that annos pin to one container size with
// @pa_container_size(gress, field, size): their size. A field given several sizes (its slices
// in containers of different sizes) is not in the map.
func containerSizes(annos Annotations) map[string]int {
	m := map[string]int{}
	for _, a := range annos {
		if a.Name != "pa_container_size" {
			continue
		}
		var strs []string
		var ints []int
		for _, tok := range a.Args {
			switch tok.Kind {
			case TString:
				strs = append(strs, tok.Text)
			case TInt:
				if tok.Lit != nil && tok.Lit.Value.IsInt64() {
					ints = append(ints, int(tok.Lit.Value.Int64()))
				}
			}
		}
		if len(strs) == 2 && len(ints) == 1 {
			m[strs[1]] = ints[0]
		}
	}
	return m
}
