package p4rtclient

import (
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// schema indexes a P4Info by name: tables, their match fields, actions, their parameters, and
// the packet-in/packet-out metadata. Names resolve by full name or alias; an unknown name is an
// error (the client library resolves it to id 0 silently).
type schema struct {
	info    *p4configv1.P4Info
	tables  map[string]*p4configv1.Table
	actions map[string]*p4configv1.Action
	in, out *p4configv1.ControllerPacketMetadata // nil if the program has none
	inByID  map[uint32]*p4configv1.ControllerPacketMetadata_Metadata
}

func newSchema(info *p4configv1.P4Info) *schema {
	s := &schema{info: info, tables: map[string]*p4configv1.Table{}, actions: map[string]*p4configv1.Action{},
		inByID: map[uint32]*p4configv1.ControllerPacketMetadata_Metadata{}}
	for _, t := range info.GetTables() {
		s.tables[t.GetPreamble().GetName()] = t
		if a := t.GetPreamble().GetAlias(); a != "" {
			if _, taken := s.tables[a]; !taken {
				s.tables[a] = t
			}
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

func (s *schema) table(name string) (*p4configv1.Table, error) {
	if t, ok := s.tables[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("controlplane: no table %q in the P4Info", name)
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
