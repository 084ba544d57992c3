package p4rtclient

import (
	"fmt"
	"strings"

	"github.com/netlock-go/netlock/internal/p4info"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// schema indexes a P4Info by name: tables, their match fields, actions, their parameters, and
// the packet-in/packet-out metadata. Names resolve by full name or alias; an unknown name is an
// error (the client library resolves it to id 0 silently).
//
// A table of a TNA program of several Pipelines (Switch(pipe_a, pipe_b)) has a copy in each
// Pipeline, each with its own id: the engine's P4Info gives the copies one name and each the
// Pipeline's name in its alias ("pipe_a.NetlockIngress.rack"). A table name resolves to every
// table of that name or alias, and the control plane writes each copy (TableUpdates), as a
// Tofino's driver has every pipe's copy written. (bf-p4c's own P4Info of such a program is not
// read here: a name under one Pipeline's prefix there resolves to that copy only.)
type schema struct {
	info    *p4configv1.P4Info
	tables  map[string][]*p4configv1.Table // by name and alias: a table, or its Pipelines' copies
	actions map[string]*p4configv1.Action
	in, out *p4configv1.ControllerPacketMetadata // nil if the program has none
	inByID  map[uint32]*p4configv1.ControllerPacketMetadata_Metadata
}

func newSchema(info *p4configv1.P4Info) *schema {
	s := &schema{info: info, tables: map[string][]*p4configv1.Table{},
		actions: map[string]*p4configv1.Action{}, inByID: map[uint32]*p4configv1.ControllerPacketMetadata_Metadata{}}
	for _, t := range info.GetTables() {
		s.tables[t.GetPreamble().GetName()] = append(s.tables[t.GetPreamble().GetName()], t)
	}
	aliases := map[string][]*p4configv1.Table{}
	for _, t := range info.GetTables() {
		if a := t.GetPreamble().GetAlias(); a != "" && a != t.GetPreamble().GetName() {
			aliases[a] = append(aliases[a], t)
		}
	}
	for a, ts := range aliases {
		if _, taken := s.tables[a]; !taken { // a name wins over another table's alias
			s.tables[a] = ts
		}
	}
	for _, a := range info.GetActions() {
		s.actions[a.GetPreamble().GetName()] = a
		if al := a.GetPreamble().GetAlias(); al != "" {
			if _, taken := s.actions[al]; !taken {
				s.actions[al] = a
			}
		}
	}
	for _, m := range info.GetControllerPacketMetadata() {
		switch m.GetPreamble().GetName() {
		case "packet_in":
			s.in = m
			for _, f := range m.GetMetadata() {
				s.inByID[f.GetId()] = f
			}
		case "packet_out":
			s.out = m
		}
	}
	return s
}

// tableCopies returns the table called name, or its copies in the Pipelines (schema), in
// P4Info order.
func (s *schema) tableCopies(name string) ([]*p4configv1.Table, error) {
	if ts := s.tables[name]; len(ts) > 0 {
		return ts, nil
	}
	return nil, fmt.Errorf("controlplane: no table %q in the P4Info", name)
}

// table returns the one table called name: an error if the program has copies of it in
// several Pipelines (use tableCopies).
func (s *schema) table(name string) (*p4configv1.Table, error) {
	ts, err := s.tableCopies(name)
	if err != nil {
		return nil, err
	}
	if len(ts) > 1 {
		return nil, fmt.Errorf("controlplane: table %q has %d copies, one per Pipeline (%s): write them with TableUpdates", name, len(ts), copyNames(ts))
	}
	return ts[0], nil
}

// copyNames lists the copies of a table by their most specific names.
func copyNames(ts []*p4configv1.Table) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = copyName(t)
	}
	return strings.Join(names, ", ")
}

// copyName names one copy of a table: its alias when that is its name under a Pipeline's
// prefix (the engine's P4Info), else its name.
func copyName(t *p4configv1.Table) string {
	if a := t.GetPreamble().GetAlias(); p4info.InPipeline(a, t.GetPreamble().GetName()) && a != t.GetPreamble().GetName() {
		return a
	}
	return t.GetPreamble().GetName()
}

func (s *schema) action(name string) (*p4configv1.Action, error) {
	if a, ok := s.actions[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("controlplane: no action %q in the P4Info", name)
}

// canonical returns v without leading zero bytes (zero is one 0x00 byte), after checking
// that it fits width bits: P4Runtime's canonical bytestring.
func canonical(v []byte, width int32, what string) ([]byte, error) {
	i := 0
	for i < len(v)-1 && v[i] == 0 {
		i++
	}
	c := v[i:]
	if len(c) == 0 {
		return nil, fmt.Errorf("%s: empty value", what)
	}
	bits := 8*(len(c)-1) + bitLen(c[0])
	if int32(bits) > width {
		return nil, fmt.Errorf("%s: value 0x%x does not fit %d bits", what, v, width)
	}
	return c, nil
}

func bitLen(b byte) int {
	n := 0
	for ; b != 0; b >>= 1 {
		n++
	}
	return n
}
