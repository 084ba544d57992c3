package p4rt

import (
	"encoding/binary"
	"math/bits"
	"slices"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// Canonical returns the canonical form of a bytestring for a field of width
// bits: no leading zero bytes, zero as a single 0x00 byte. It accepts the
// canonical form and the form padded with zero bytes to the field's byte
// width; anything longer, an empty string or a value that does not fit in
// width bits is an error.
func Canonical(b []byte, width int) ([]byte, error) {
	if len(b) == 0 {
		return nil, invalid("empty bytestring for a %d-bit value", width)
	}
	if nbytes := (width + 7) / 8; len(b) > nbytes && width > 0 {
		return nil, invalid("bytestring of %d bytes for a %d-bit value is not canonical", len(b), width)
	}
	i := 0
	for i < len(b)-1 && b[i] == 0 {
		i++
	}
	c := b[i:]
	if used := (len(c)-1)*8 + bits.Len8(c[0]); used > width {
		return nil, invalid("value 0x%x does not fit in %d bits", c, width)
	}
	if i == 0 {
		return b, nil
	}
	return slices.Clone(c), nil
}

// padded copies a canonical bytestring into a big-endian slice of exactly n
// bytes, for mask arithmetic.
func padded(b []byte, n int) []byte {
	out := make([]byte, n)
	copy(out[n-len(b):], b)
	return out
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// prefixMask returns a mask of n bytes for a width-bit field with the top
// plen bits set.
func prefixMask(width, plen, n int) []byte {
	m := make([]byte, n)
	// bit positions counted from the most significant bit of the width-bit field
	for i := 0; i < plen; i++ {
		pos := width - 1 - i // bit index from the least significant bit
		m[n-1-pos/8] |= 1 << (pos % 8)
	}
	return m
}

func maxValue(width, n int) []byte {
	return prefixMask(width, width, n)
}

// EntryKey is the identity of a table entry: its table, priority and (canonical)
// match. Two entries with the same key are the same entry. The default entry
// of a table has the key of an entry with no match fields and priority 0.
func EntryKey(e *p4v1.TableEntry) string {
	b := make([]byte, 0, 64)
	b = binary.BigEndian.AppendUint32(b, e.GetTableId())
	b = binary.BigEndian.AppendUint32(b, uint32(e.GetPriority()))
	for _, m := range e.GetMatch() {
		b = binary.BigEndian.AppendUint32(b, m.GetFieldId())
		app := func(tag byte, vs ...[]byte) {
			b = append(b, tag)
			for _, v := range vs {
				b = binary.AppendUvarint(b, uint64(len(v)))
				b = append(b, v...)
			}
		}
		switch fm := m.GetFieldMatchType().(type) {
		case *p4v1.FieldMatch_Exact_:
			app('e', fm.Exact.GetValue())
		case *p4v1.FieldMatch_Lpm:
			app('l', fm.Lpm.GetValue(), []byte{byte(fm.Lpm.GetPrefixLen() >> 8), byte(fm.Lpm.GetPrefixLen())})
		case *p4v1.FieldMatch_Ternary_:
			app('t', fm.Ternary.GetValue(), fm.Ternary.GetMask())
		case *p4v1.FieldMatch_Range_:
			app('r', fm.Range.GetLow(), fm.Range.GetHigh())
		case *p4v1.FieldMatch_Optional_:
			app('o', fm.Optional.GetValue())
		default:
			app('?')
		}
	}
	return string(b)
}

// checkEntry validates a table entry (or, with isDefault, a default-entry
// update) for operation op and returns a canonical copy. Unknown table ids are
// NOT_FOUND; everything else wrong is INVALID_ARGUMENT.
func (s *schema) checkEntry(e *p4v1.TableEntry, op p4v1.Update_Type) (*p4v1.TableEntry, *tableInfo, error) {
	ti, ok := s.tables[e.GetTableId()]
	if !ok {
		return nil, nil, status.Errorf(codes.NotFound, "unknown table id %d", e.GetTableId())
	}
	name := ti.t.GetPreamble().GetName()
	out := proto.Clone(e).(*p4v1.TableEntry)
	if e.GetIsDefaultAction() {
		if op != p4v1.Update_MODIFY {
			return nil, nil, invalid("table %s: the default entry can only be modified, not %s", name, op)
		}
		if len(e.GetMatch()) > 0 || e.GetPriority() != 0 {
			return nil, nil, invalid("table %s: the default entry has no match and priority 0", name)
		}
		if ti.t.GetConstDefaultActionId() != 0 {
			return nil, nil, status.Errorf(codes.PermissionDenied, "table %s: the default action is const", name)
		}
		if e.GetAction() != nil {
			a, err := s.checkTableAction(ti, e.GetAction(), true)
			if err != nil {
				return nil, nil, err
			}
			out.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
		}
		return out, ti, nil
	}
	if ti.t.GetIsConstTable() {
		return nil, nil, status.Errorf(codes.PermissionDenied, "table %s has const entries and cannot be written", name)
	}
	if ti.needsPriority {
		if e.GetPriority() <= 0 {
			return nil, nil, invalid("table %s has ternary, range or optional fields: priority must be > 0, not %d", name, e.GetPriority())
		}
	} else if e.GetPriority() != 0 {
		return nil, nil, invalid("table %s has only exact and lpm fields: priority must be 0, not %d", name, e.GetPriority())
	}
	seen := map[uint32]bool{}
	out.Match = out.Match[:0]
	for _, m := range e.GetMatch() {
		cm, err := s.checkMatch(ti, m, seen)
		if err != nil {
			return nil, nil, err
		}
		out.Match = append(out.Match, cm)
	}
	for _, f := range ti.t.GetMatchFields() {
		if f.GetMatchType() == p4configv1.MatchField_EXACT && !seen[f.GetId()] {
			return nil, nil, invalid("table %s: exact field %s (id %d) is missing", name, f.GetName(), f.GetId())
		}
	}
	slices.SortFunc(out.Match, func(a, b *p4v1.FieldMatch) int { return int(a.GetFieldId()) - int(b.GetFieldId()) })
	if op == p4v1.Update_DELETE {
		out.Action = nil
		out.CounterData, out.MeterConfig = nil, nil
		return out, ti, nil
	}
	if e.GetAction() == nil {
		return nil, nil, invalid("table %s: %s needs an action", name, op)
	}
	a, err := s.checkTableAction(ti, e.GetAction(), false)
	if err != nil {
		return nil, nil, err
	}
	out.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
	if e.GetIdleTimeoutNs() != 0 && ti.t.GetIdleTimeoutBehavior() == p4configv1.Table_NO_TIMEOUT {
		return nil, nil, invalid("table %s does not support idle timeouts", name)
	}
	if e.GetIdleTimeoutNs() < 0 {
		return nil, nil, invalid("table %s: negative idle timeout", name)
	}
	if e.GetCounterData() != nil && ti.directCounter == 0 {
		return nil, nil, invalid("table %s has no direct counter", name)
	}
	if err := checkCounterData(e.GetCounterData()); err != nil {
		return nil, nil, err
	}
	if e.GetMeterConfig() != nil {
		if ti.directMeter == 0 {
			return nil, nil, invalid("table %s has no direct meter", name)
		}
		if err := checkMeterConfig(e.GetMeterConfig()); err != nil {
			return nil, nil, err
		}
	}
	if e.GetMeterCounterData() != nil {
		return nil, nil, status.Errorf(codes.Unimplemented, "meter counter data is not supported")
	}
	return out, ti, nil
}

func (s *schema) checkMatch(ti *tableInfo, m *p4v1.FieldMatch, seen map[uint32]bool) (*p4v1.FieldMatch, error) {
	name := ti.t.GetPreamble().GetName()
	f, ok := ti.fields[m.GetFieldId()]
	if !ok {
		return nil, invalid("table %s: unknown match field id %d", name, m.GetFieldId())
	}
	if seen[m.GetFieldId()] {
		return nil, invalid("table %s: match field %s given twice", name, f.GetName())
	}
	seen[m.GetFieldId()] = true
	w := int(f.GetBitwidth())
	n := (w + 7) / 8
	kind := f.GetMatchType()
	wrong := func(got string) error {
		return invalid("table %s: field %s is %s, not %s", name, f.GetName(), kind, got)
	}
	canon := func(b []byte, what string) ([]byte, error) {
		c, err := Canonical(b, w)
		if err != nil {
			return nil, invalid("table %s: field %s %s: %s", name, f.GetName(), what, status.Convert(err).Message())
		}
		return c, nil
	}
	out := &p4v1.FieldMatch{FieldId: m.GetFieldId()}
	switch fm := m.GetFieldMatchType().(type) {
	case *p4v1.FieldMatch_Exact_:
		if kind != p4configv1.MatchField_EXACT {
			return nil, wrong("exact")
		}
		v, err := canon(fm.Exact.GetValue(), "value")
		if err != nil {
			return nil, err
		}
		out.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: v}}
	case *p4v1.FieldMatch_Lpm:
		if kind != p4configv1.MatchField_LPM {
			return nil, wrong("lpm")
		}
		v, err := canon(fm.Lpm.GetValue(), "value")
		if err != nil {
			return nil, err
		}
		pl := int(fm.Lpm.GetPrefixLen())
		if pl <= 0 || pl > w {
			return nil, invalid("table %s: field %s: prefix length %d not in 1..%d (omit the field for a don't-care match)", name, f.GetName(), pl, w)
		}
		pv, mask := padded(v, n), prefixMask(w, pl, n)
		for i := range pv {
			if pv[i]&^mask[i] != 0 {
				return nil, invalid("table %s: field %s: value 0x%x has bits set past the /%d prefix", name, f.GetName(), v, pl)
			}
		}
		out.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: v, PrefixLen: int32(pl)}}
	case *p4v1.FieldMatch_Ternary_:
		if kind != p4configv1.MatchField_TERNARY {
			return nil, wrong("ternary")
		}
		v, err := canon(fm.Ternary.GetValue(), "value")
		if err != nil {
			return nil, err
		}
		mk, err := canon(fm.Ternary.GetMask(), "mask")
		if err != nil {
			return nil, err
		}
		if isZero(mk) {
			return nil, invalid("table %s: field %s: all-zero mask (omit the field for a don't-care match)", name, f.GetName())
		}
		pv, pm := padded(v, n), padded(mk, n)
		for i := range pv {
			if pv[i]&^pm[i] != 0 {
				return nil, invalid("table %s: field %s: value 0x%x has bits outside mask 0x%x", name, f.GetName(), v, mk)
			}
		}
		out.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: v, Mask: mk}}
	case *p4v1.FieldMatch_Range_:
		if kind != p4configv1.MatchField_RANGE {
			return nil, wrong("range")
		}
		lo, err := canon(fm.Range.GetLow(), "low")
		if err != nil {
			return nil, err
		}
		hi, err := canon(fm.Range.GetHigh(), "high")
		if err != nil {
			return nil, err
		}
		pl, ph := padded(lo, n), padded(hi, n)
		if string(pl) > string(ph) {
			return nil, invalid("table %s: field %s: range low 0x%x > high 0x%x", name, f.GetName(), lo, hi)
		}
		if isZero(pl) && string(ph) == string(maxValue(w, n)) {
			return nil, invalid("table %s: field %s: full range (omit the field for a don't-care match)", name, f.GetName())
		}
		out.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: lo, High: hi}}
	case *p4v1.FieldMatch_Optional_:
		if kind != p4configv1.MatchField_OPTIONAL {
			return nil, wrong("optional")
		}
		v, err := canon(fm.Optional.GetValue(), "value")
		if err != nil {
			return nil, err
		}
		out.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: v}}
	case *p4v1.FieldMatch_Other:
		return nil, status.Errorf(codes.Unimplemented, "table %s: field %s: architecture-specific match kinds are not supported", name, f.GetName())
	default:
		return nil, invalid("table %s: field %s: no match value", name, f.GetName())
	}
	return out, nil
}

// checkTableAction validates a direct table action for a table entry
// (defaultOnly false) or a default action (defaultOnly true).
func (s *schema) checkTableAction(ti *tableInfo, ta *p4v1.TableAction, isDefault bool) (*p4v1.Action, error) {
	name := ti.t.GetPreamble().GetName()
	switch t := ta.GetType().(type) {
	case *p4v1.TableAction_Action:
		ref, ok := ti.actions[t.Action.GetActionId()]
		if !ok {
			if _, known := s.actions[t.Action.GetActionId()]; known {
				return nil, invalid("table %s: action id %d is not one of the table's actions", name, t.Action.GetActionId())
			}
			return nil, invalid("unknown action id %d", t.Action.GetActionId())
		}
		switch {
		case isDefault && ref.GetScope() == p4configv1.ActionRef_TABLE_ONLY:
			return nil, invalid("table %s: action %d cannot be the default action (@tableonly)", name, ref.GetId())
		case !isDefault && ref.GetScope() == p4configv1.ActionRef_DEFAULT_ONLY:
			return nil, invalid("table %s: action %d can only be the default action (@defaultonly)", name, ref.GetId())
		}
		return s.checkAction(t.Action)
	case nil:
		return nil, invalid("table %s: empty table action", name)
	default:
		return nil, status.Errorf(codes.Unimplemented, "table %s: action profiles are not supported", name)
	}
}

// checkAction validates an action's parameters and returns a canonical copy.
func (s *schema) checkAction(a *p4v1.Action) (*p4v1.Action, error) {
	ai, ok := s.actions[a.GetActionId()]
	if !ok {
		return nil, invalid("unknown action id %d", a.GetActionId())
	}
	name := ai.a.GetPreamble().GetName()
	out := &p4v1.Action{ActionId: a.GetActionId()}
	seen := map[uint32]bool{}
	for _, p := range a.GetParams() {
		pi, ok := ai.params[p.GetParamId()]
		if !ok {
			return nil, invalid("action %s: unknown parameter id %d", name, p.GetParamId())
		}
		if seen[p.GetParamId()] {
			return nil, invalid("action %s: parameter %s given twice", name, pi.GetName())
		}
		seen[p.GetParamId()] = true
		v, err := Canonical(p.GetValue(), int(pi.GetBitwidth()))
		if err != nil {
			return nil, invalid("action %s: parameter %s: %s", name, pi.GetName(), status.Convert(err).Message())
		}
		out.Params = append(out.Params, &p4v1.Action_Param{ParamId: p.GetParamId(), Value: v})
	}
	for _, pi := range ai.a.GetParams() {
		if !seen[pi.GetId()] {
			return nil, invalid("action %s: parameter %s (id %d) is missing", name, pi.GetName(), pi.GetId())
		}
	}
	slices.SortFunc(out.Params, func(x, y *p4v1.Action_Param) int { return int(x.GetParamId()) - int(y.GetParamId()) })
	return out, nil
}

func checkCounterData(d *p4v1.CounterData) error {
	if d != nil && (d.GetByteCount() < 0 || d.GetPacketCount() < 0) {
		return invalid("negative counter value")
	}
	return nil
}

func checkMeterConfig(c *p4v1.MeterConfig) error {
	if c == nil {
		return nil
	}
	if c.GetCir() < 0 || c.GetPir() < 0 || c.GetCburst() < 0 || c.GetPburst() < 0 {
		return invalid("negative meter rate or burst")
	}
	if c.GetCir() > c.GetPir() {
		return invalid("meter cir %d > pir %d", c.GetCir(), c.GetPir())
	}
	return nil
}

// checkIndex validates an index against an array of size cells; nil means
// all cells (wildcard).
func checkIndex(ix *p4v1.Index, size int64, what string) error {
	if ix == nil {
		return nil
	}
	if ix.GetIndex() < 0 || ix.GetIndex() >= size {
		return status.Errorf(codes.OutOfRange, "%s: index %d not in 0..%d", what, ix.GetIndex(), size-1)
	}
	return nil
}

// checkReplicas validates PRE replicas: no duplicate (port, instance).
func checkReplicas(rs []*p4v1.Replica, what string) error {
	seen := map[[2]uint32]bool{}
	for _, r := range rs {
		k := [2]uint32{r.GetEgressPort(), r.GetInstance()}
		if seen[k] {
			return invalid("%s: replica (port %d, instance %d) given twice", what, k[0], k[1])
		}
		seen[k] = true
	}
	return nil
}
