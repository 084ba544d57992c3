package p4rtclient

import (
	"context"
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"
)

// Meter is the configuration of one meter cell: committed and peak information rates (units
// per second: packets for a packet meter) and burst sizes.
type Meter struct {
	CIR, CBurst, PIR, PBurst int64
}

// MeterUpdate builds the update that configures cell index of the indexed meter name (a MODIFY:
// P4Runtime meters always exist). A meter with a copy in each of several Pipelines is an error
// here: MeterUpdates configures every copy.
func (c *Client) MeterUpdate(name string, index int64, m Meter) (Update, error) {
	ups, err := c.MeterUpdates(name, index, m)
	if err != nil {
		return Update{}, err
	}
	if len(ups) > 1 {
		return Update{}, fmt.Errorf("controlplane: meter %q has %d copies, one per Pipeline: configure them with MeterUpdates", name, len(ups))
	}
	return ups[0], nil
}

// MeterUpdates builds the updates that configure cell index of the indexed meter name in each
// of its copies: the meters of that name, else of that alias (one, in a program of one
// Pipeline; one per Pipeline in a program of several, as tables: schema).
func (c *Client) MeterUpdates(name string, index int64, m Meter) ([]Update, error) {
	sch, err := c.schema()
	if err != nil {
		return nil, err
	}
	var meters []*p4configv1.Meter
	for _, x := range sch.info.GetMeters() {
		if x.GetPreamble().GetName() == name {
			meters = append(meters, x)
		}
	}
	if len(meters) == 0 {
		for _, x := range sch.info.GetMeters() {
			if x.GetPreamble().GetAlias() == name {
				meters = append(meters, x)
			}
		}
	}
	if len(meters) == 0 {
		return nil, fmt.Errorf("controlplane: no meter %q in the P4Info", name)
	}
	ups := make([]Update, 0, len(meters))
	for _, meter := range meters {
		if index < 0 || index >= meter.GetSize() {
			return nil, fmt.Errorf("controlplane: meter %s: index %d outside 0..%d", name, index, meter.GetSize()-1)
		}
		e := &p4v1.MeterEntry{MeterId: meter.GetPreamble().GetId(), Index: &p4v1.Index{Index: index},
			Config: &p4v1.MeterConfig{Cir: m.CIR, Cburst: m.CBurst, Pir: m.PIR, Pburst: m.PBurst}}
		what := name
		if len(meters) > 1 {
			what = meter.GetPreamble().GetAlias()
		}
		ups = append(ups, Update{Op: Modify, What: fmt.Sprintf("meter %s[%d]", what, index),
			Entity: &p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: e}}})
	}
	return ups, nil
}

// ReadEntries reads every entry of a table (not its default entry) by names, with each entry's
// direct counter (packets) when the table has one. Of a table with a copy in each of several
// Pipelines it reads every copy: an entry (by match and priority) is listed once, as its first
// copy has it, and its count is the sum over the copies (the packets it matched in any pipe).
func (c *Client) ReadEntries(ctx context.Context, table string) ([]Entry, []uint64, error) {
	sch, err := c.schema()
	if err != nil {
		return nil, nil, err
	}
	ts, err := sch.tableCopies(table)
	if err != nil {
		return nil, nil, err
	}
	var out []Entry
	var counts []uint64
	at := map[string]int{} // an entry's match and priority: its index in out
	for _, t := range ts {
		q := &p4v1.TableEntry{TableId: t.GetPreamble().GetId()}
		if t.GetDirectResourceIds() != nil && sch.hasDirectCounter(t) {
			q.CounterData = &p4v1.CounterData{}
		}
		var perr error
		err = c.read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: q}}, func(e *p4v1.Entity) {
			te := e.GetTableEntry()
			if te == nil || perr != nil {
				return
			}
			n := uint64(te.GetCounterData().GetPacketCount())
			key := entryKey(te)
			if i, ok := at[key]; ok {
				counts[i] += n
				return
			}
			en, err := sch.describe(t, te)
			if err != nil {
				perr = err
				return
			}
			at[key] = len(out)
			out = append(out, en)
			counts = append(counts, n)
		})
		if err == nil {
			err = perr
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return out, counts, nil
}

// entryKey is a table entry's identity within its table, the same in each copy of the table:
// its match (field ids are the same in each copy) and priority.
func entryKey(te *p4v1.TableEntry) string {
	k := &p4v1.TableEntry{Match: te.GetMatch(), Priority: te.GetPriority()}
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(k)
	return string(b)
}

func (s *schema) hasDirectCounter(t *p4configv1.Table) bool {
	for _, id := range t.GetDirectResourceIds() {
		for _, dc := range s.info.GetDirectCounters() {
			if dc.GetPreamble().GetId() == id {
				return true
			}
		}
	}
	return false
}

// describe turns a table entry back into names: exact and LPM matches (the kinds netlock's
// tables use; others are reported as errors), the action and its parameters in order.
func (s *schema) describe(t *p4configv1.Table, te *p4v1.TableEntry) (Entry, error) {
	e := Entry{Table: t.GetPreamble().GetName(), Priority: te.GetPriority()}
	for _, fm := range te.GetMatch() {
		var mf *p4configv1.MatchField
		for _, f := range t.GetMatchFields() {
			if f.GetId() == fm.GetFieldId() {
				mf = f
			}
		}
		if mf == nil {
			return Entry{}, fmt.Errorf("controlplane: table %s: unknown match field %d", e.Table, fm.GetFieldId())
		}
		switch m := fm.GetFieldMatchType().(type) {
		case *p4v1.FieldMatch_Exact_:
			e.Match = append(e.Match, Exact{Field: mf.GetName(), Value: m.Exact.GetValue()})
		case *p4v1.FieldMatch_Lpm:
			e.Match = append(e.Match, LPM{Field: mf.GetName(), Value: m.Lpm.GetValue(), PrefixLen: m.Lpm.GetPrefixLen()})
		default:
			return Entry{}, fmt.Errorf("controlplane: table %s: match kind %T not described", e.Table, m)
		}
	}
	act := te.GetAction().GetAction()
	if act == nil {
		return Entry{}, fmt.Errorf("controlplane: table %s: entry without a direct action", e.Table)
	}
	for _, a := range s.info.GetActions() {
		if a.GetPreamble().GetId() != act.GetActionId() {
			continue
		}
		e.Action = a.GetPreamble().GetName()
		for _, p := range a.GetParams() {
			for _, v := range act.GetParams() {
				if v.GetParamId() == p.GetId() {
					e.Params = append(e.Params, Param{Name: p.GetName(), Value: v.GetValue()})
				}
			}
		}
	}
	if e.Action == "" {
		return Entry{}, fmt.Errorf("controlplane: table %s: unknown action %d", e.Table, act.GetActionId())
	}
	return e, nil
}
