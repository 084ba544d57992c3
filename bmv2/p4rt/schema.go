package p4rt

import (
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// schema indexes a P4Info by id for validation.
type schema struct {
	info           *p4configv1.P4Info
	tables         map[uint32]*tableInfo
	actions        map[uint32]*actionInfo
	counters       map[uint32]*p4configv1.Counter
	directCounters map[uint32]*p4configv1.DirectCounter
	meters         map[uint32]*p4configv1.Meter
	directMeters   map[uint32]*p4configv1.DirectMeter
	registers      map[uint32]*registerInfo
	digests        map[uint32]*p4configv1.Digest
	packetIn       *p4configv1.ControllerPacketMetadata
	packetOut      *p4configv1.ControllerPacketMetadata
}

type tableInfo struct {
	t             *p4configv1.Table
	fields        map[uint32]*p4configv1.MatchField
	actions       map[uint32]*p4configv1.ActionRef
	needsPriority bool   // some field is ternary, range or optional
	directCounter uint32 // 0: none
	directMeter   uint32
}

type actionInfo struct {
	a      *p4configv1.Action
	params map[uint32]*p4configv1.Action_Param
	secret map[uint32]bool // parameters annotated @secret (auth.go); nil if none
}

type registerInfo struct {
	r      *p4configv1.Register
	width  int   // bitwidth of a cell; 0 if the type is not a bitstring
	fields []int // member widths of a cell that is a struct of bitstrings (register_struct.go)
}

func newSchema(info *p4configv1.P4Info) *schema {
	s := &schema{
		info:           info,
		tables:         map[uint32]*tableInfo{},
		actions:        map[uint32]*actionInfo{},
		counters:       map[uint32]*p4configv1.Counter{},
		directCounters: map[uint32]*p4configv1.DirectCounter{},
		meters:         map[uint32]*p4configv1.Meter{},
		directMeters:   map[uint32]*p4configv1.DirectMeter{},
		registers:      map[uint32]*registerInfo{},
		digests:        map[uint32]*p4configv1.Digest{},
	}
	for _, a := range info.GetActions() {
		ai := &actionInfo{a: a, params: map[uint32]*p4configv1.Action_Param{}, secret: secretParams(a)}
		for _, p := range a.GetParams() {
			ai.params[p.GetId()] = p
		}
		s.actions[a.GetPreamble().GetId()] = ai
	}
	for _, c := range info.GetCounters() {
		s.counters[c.GetPreamble().GetId()] = c
	}
	for _, c := range info.GetDirectCounters() {
		s.directCounters[c.GetPreamble().GetId()] = c
	}
	for _, m := range info.GetMeters() {
		s.meters[m.GetPreamble().GetId()] = m
	}
	for _, m := range info.GetDirectMeters() {
		s.directMeters[m.GetPreamble().GetId()] = m
	}
	for _, r := range info.GetRegisters() {
		ri := &registerInfo{r: r}
		if bs := r.GetTypeSpec().GetBitstring(); bs != nil {
			switch {
			case bs.GetBit() != nil:
				ri.width = int(bs.GetBit().GetBitwidth())
			case bs.GetInt() != nil:
				ri.width = int(bs.GetInt().GetBitwidth())
			}
		}
		if ri.fields = structFields(info, r.GetTypeSpec()); ri.fields != nil {
			ri.width = 0
			for _, w := range ri.fields {
				ri.width += w
			}
		}
		s.registers[r.GetPreamble().GetId()] = ri
	}
	for _, d := range info.GetDigests() {
		s.digests[d.GetPreamble().GetId()] = d
	}
	for _, c := range info.GetControllerPacketMetadata() {
		switch c.GetPreamble().GetName() {
		case "packet_in":
			s.packetIn = c
		case "packet_out":
			s.packetOut = c
		}
	}
	for _, t := range info.GetTables() {
		ti := &tableInfo{t: t, fields: map[uint32]*p4configv1.MatchField{}, actions: map[uint32]*p4configv1.ActionRef{}}
		for _, f := range t.GetMatchFields() {
			ti.fields[f.GetId()] = f
			switch f.GetMatchType() {
			case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
				ti.needsPriority = true
			}
		}
		for _, a := range t.GetActionRefs() {
			ti.actions[a.GetId()] = a
		}
		for _, id := range t.GetDirectResourceIds() {
			if _, ok := s.directCounters[id]; ok {
				ti.directCounter = id
			}
			if _, ok := s.directMeters[id]; ok {
				ti.directMeter = id
			}
		}
		s.tables[t.GetPreamble().GetId()] = ti
	}
	return s
}
