package p4rt

import (
	"math/big"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/netlock-go/netlock/bmv2/front"
)

// programDefault finds the default_action the program declares for a table,
// with its constant arguments, by matching the P4Info names
// (Control.table, Control.action or a top-level action) against the AST.
// It returns nil when the table or action cannot be matched (for instance
// tables and actions renamed with @name).
func programDefault(p *Pipeline, ti *tableInfo) *p4v1.Action {
	name := ti.t.GetPreamble().GetName()
	actionsByName := map[string]*p4v1.Action{}
	for _, ref := range ti.t.GetActionRefs() {
		for _, a := range p.P4Info.GetActions() {
			if a.GetPreamble().GetId() == ref.GetId() {
				actionsByName[a.GetPreamble().GetName()] = &p4v1.Action{ActionId: ref.GetId()}
			}
		}
	}
	for _, d := range p.Program.Program.Decls {
		ctl, ok := d.(*front.ControlDecl)
		if !ok || !ctl.HasBody {
			continue
		}
		for _, l := range ctl.Locals {
			td, ok := l.(*front.TableDecl)
			if !ok || ctl.Name+"."+td.Name != name {
				continue
			}
			dp := td.Prop("default_action")
			if dp == nil || len(dp.Actions) == 0 || dp.Actions[0].Action == nil {
				return nil
			}
			ar := dp.Actions[0]
			a := actionsByName[ctl.Name+"."+ar.Action.Name]
			if a == nil {
				a = actionsByName[ar.Action.Name]
			}
			if a == nil {
				return nil
			}
			out := &p4v1.Action{ActionId: a.ActionId}
			for _, pa := range p.P4Info.GetActions() {
				if pa.GetPreamble().GetId() != a.ActionId {
					continue
				}
				if len(pa.GetParams()) != len(ar.Args) {
					return nil
				}
				for i, prm := range pa.GetParams() {
					v, ok := p.Program.Const[ar.Args[i].Value].(*big.Int)
					if !ok || v.Sign() < 0 {
						return nil
					}
					b := v.Bytes()
					if len(b) == 0 {
						b = []byte{0}
					}
					out.Params = append(out.Params, &p4v1.Action_Param{ParamId: prm.GetId(), Value: b})
				}
			}
			return out
		}
	}
	return nil
}
