package p4rtclient

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/netip"
	"slices"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// Update is one entity to write, as built by TableUpdate, CloneSessionUpdate and
// MulticastGroupUpdate, for Write.
type Update struct {
	Op     p4v1.Update_Type
	Entity *p4v1.Entity
	// What names the entity in errors.
	What string
}

// The update types, for brevity.
const (
	Insert = p4v1.Update_INSERT
	Modify = p4v1.Update_MODIFY
	Delete = p4v1.Update_DELETE
)

// Write sends updates in one Write RPC, in order. With atomic, the switch applies all of them
// or none (ROLLBACK_ON_ERROR); otherwise it applies each one it can (CONTINUE_ON_ERROR). A
// failure is a *WriteError for a single update, a *BatchError for several.
func (c *Client) Write(ctx context.Context, atomic bool, ups ...Update) error {
	if len(ups) == 0 {
		return nil
	}
	a := p4v1.WriteRequest_CONTINUE_ON_ERROR
	if atomic {
		a = p4v1.WriteRequest_ROLLBACK_ON_ERROR
	}
	return c.write(ctx, a, ups)
}

// Match is one field of a table entry's key: Exact, LPM, Ternary, Range or Optional.
type Match interface {
	field() string
	build(mf *p4configv1.MatchField) (*p4v1.FieldMatch, error)
}

// Exact matches a field's value.
type Exact struct {
	Field string
	Value []byte
}

// LPM matches the first PrefixLen bits of a field (the bits past the prefix must be zero).
type LPM struct {
	Field     string
	Value     []byte
	PrefixLen int32
}

// Ternary matches the bits of Mask (the value's bits outside it must be zero).
type Ternary struct {
	Field       string
	Value, Mask []byte
}

// Range matches Low <= field <= High.
type Range struct {
	Field     string
	Low, High []byte
}

// Optional matches a field's value (P4Runtime's optional match kind).
type Optional struct {
	Field string
	Value []byte
}

func (m Exact) field() string    { return m.Field }
func (m LPM) field() string      { return m.Field }
func (m Ternary) field() string  { return m.Field }
func (m Range) field() string    { return m.Field }
func (m Optional) field() string { return m.Field }

func wantKind(mf *p4configv1.MatchField, k p4configv1.MatchField_MatchType) error {
	if mf.GetMatchType() != k {
		return fmt.Errorf("field %s is %v, not %v", mf.GetName(), mf.GetMatchType(), k)
	}
	return nil
}

func (m Exact) build(mf *p4configv1.MatchField) (*p4v1.FieldMatch, error) {
	if err := wantKind(mf, p4configv1.MatchField_EXACT); err != nil {
		return nil, err
	}
	v, err := canonical(m.Value, mf.GetBitwidth(), "field "+m.Field)
	if err != nil {
		return nil, err
	}
	return &p4v1.FieldMatch{FieldId: mf.GetId(), FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: v}}}, nil
}

func (m LPM) build(mf *p4configv1.MatchField) (*p4v1.FieldMatch, error) {
	if err := wantKind(mf, p4configv1.MatchField_LPM); err != nil {
		return nil, err
	}
	w := mf.GetBitwidth()
	if m.PrefixLen < 1 || m.PrefixLen > w {
		return nil, fmt.Errorf("field %s: prefix length %d: want 1..%d (omit the field for /0)", m.Field, m.PrefixLen, w)
	}
	v, err := canonical(m.Value, w, "field "+m.Field)
	if err != nil {
		return nil, err
	}
	if n := new(big.Int).SetBytes(v); n.TrailingZeroBits() < uint(w-m.PrefixLen) && n.Sign() != 0 {
		return nil, fmt.Errorf("field %s: value 0x%x has bits set past the /%d prefix", m.Field, m.Value, m.PrefixLen)
	}
	return &p4v1.FieldMatch{FieldId: mf.GetId(), FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: v, PrefixLen: m.PrefixLen}}}, nil
}

func (m Ternary) build(mf *p4configv1.MatchField) (*p4v1.FieldMatch, error) {
	if err := wantKind(mf, p4configv1.MatchField_TERNARY); err != nil {
		return nil, err
	}
	v, err := canonical(m.Value, mf.GetBitwidth(), "field "+m.Field)
	if err != nil {
		return nil, err
	}
	k, err := canonical(m.Mask, mf.GetBitwidth(), "mask of field "+m.Field)
	if err != nil {
		return nil, err
	}
	vi, ki := new(big.Int).SetBytes(v), new(big.Int).SetBytes(k)
	if ki.Sign() == 0 {
		return nil, fmt.Errorf("field %s: all-zero mask (omit the field to match anything)", m.Field)
	}
	if new(big.Int).AndNot(vi, ki).Sign() != 0 {
		return nil, fmt.Errorf("field %s: value 0x%x has bits outside the mask 0x%x", m.Field, m.Value, m.Mask)
	}
	return &p4v1.FieldMatch{FieldId: mf.GetId(), FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: v, Mask: k}}}, nil
}

func (m Range) build(mf *p4configv1.MatchField) (*p4v1.FieldMatch, error) {
	if err := wantKind(mf, p4configv1.MatchField_RANGE); err != nil {
		return nil, err
	}
	lo, err := canonical(m.Low, mf.GetBitwidth(), "low of field "+m.Field)
	if err != nil {
		return nil, err
	}
	hi, err := canonical(m.High, mf.GetBitwidth(), "high of field "+m.Field)
	if err != nil {
		return nil, err
	}
	if new(big.Int).SetBytes(lo).Cmp(new(big.Int).SetBytes(hi)) > 0 {
		return nil, fmt.Errorf("field %s: low 0x%x above high 0x%x", m.Field, m.Low, m.High)
	}
	return &p4v1.FieldMatch{FieldId: mf.GetId(), FieldMatchType: &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: lo, High: hi}}}, nil
}

func (m Optional) build(mf *p4configv1.MatchField) (*p4v1.FieldMatch, error) {
	if err := wantKind(mf, p4configv1.MatchField_OPTIONAL); err != nil {
		return nil, err
	}
	v, err := canonical(m.Value, mf.GetBitwidth(), "field "+m.Field)
	if err != nil {
		return nil, err
	}
	return &p4v1.FieldMatch{FieldId: mf.GetId(), FieldMatchType: &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: v}}}, nil
}

// Param is an action parameter by name.
type Param struct {
	Name  string
	Value []byte
}

// Entry is a table entry by names, resolved against the client's P4Info.
type Entry struct {
	Table    string
	Match    []Match
	Action   string
	Params   []Param
	Priority int32
	// Default makes the entry the table's default action (MODIFY only, no Match).
	Default bool
}

// TableUpdate builds the update of a table entry: names resolved, values checked against the
// field and parameter widths and made canonical, every parameter given exactly once. A DELETE
// needs only the table, match and priority. A table with a copy in each of several Pipelines is
// an error here: TableUpdates writes every copy.
func (c *Client) TableUpdate(op p4v1.Update_Type, e Entry) (Update, error) {
	sch, err := c.schema()
	if err != nil {
		return Update{}, err
	}
	t, err := sch.table(e.Table)
	if err != nil {
		return Update{}, err
	}
	return tableUpdate(sch, t, op, e)
}

// TableUpdates builds the updates of a table entry in every copy of the table (one for a
// program of one Pipeline; one per Pipeline that has the table otherwise), as TableUpdate.
func (c *Client) TableUpdates(op p4v1.Update_Type, e Entry) ([]Update, error) {
	sch, err := c.schema()
	if err != nil {
		return nil, err
	}
	ts, err := sch.tableCopies(e.Table)
	if err != nil {
		return nil, err
	}
	ups := make([]Update, 0, len(ts))
	for _, t := range ts {
		u, err := tableUpdate(sch, t, op, e)
		if err != nil {
			return nil, err
		}
		if len(ts) > 1 {
			u.What = "table " + copyName(t)
		}
		ups = append(ups, u)
	}
	return ups, nil
}

func tableUpdate(sch *schema, t *p4configv1.Table, op p4v1.Update_Type, e Entry) (Update, error) {
	te, err := sch.tableEntry(t, e, op != Delete)
	if err != nil {
		return Update{}, fmt.Errorf("controlplane: %s %s: %w", op, e.Table, err)
	}
	return Update{Op: op, What: "table " + e.Table, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}}, nil
}

func (s *schema) tableEntry(t *p4configv1.Table, e Entry, withAction bool) (*p4v1.TableEntry, error) {
	te := &p4v1.TableEntry{TableId: t.GetPreamble().GetId(), Priority: e.Priority, IsDefaultAction: e.Default}
	if e.Default && len(e.Match) > 0 {
		return nil, fmt.Errorf("a default entry has no match")
	}
	seen := map[string]bool{}
	for _, m := range e.Match {
		i := slices.IndexFunc(t.GetMatchFields(), func(mf *p4configv1.MatchField) bool { return mf.GetName() == m.field() })
		if i < 0 {
			return nil, fmt.Errorf("no match field %q", m.field())
		}
		if seen[m.field()] {
			return nil, fmt.Errorf("match field %q given twice", m.field())
		}
		seen[m.field()] = true
		fm, err := m.build(t.GetMatchFields()[i])
		if err != nil {
			return nil, err
		}
		te.Match = append(te.Match, fm)
	}
	slices.SortFunc(te.Match, func(a, b *p4v1.FieldMatch) int { return int(a.GetFieldId()) - int(b.GetFieldId()) })
	if !withAction {
		return te, nil
	}
	a, err := s.action(e.Action)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(t.GetActionRefs(), func(r *p4configv1.ActionRef) bool { return r.GetId() == a.GetPreamble().GetId() }) {
		return nil, fmt.Errorf("action %s is not an action of table %s", e.Action, e.Table)
	}
	act := &p4v1.Action{ActionId: a.GetPreamble().GetId()}
	given := map[string][]byte{}
	for _, p := range e.Params {
		if _, dup := given[p.Name]; dup {
			return nil, fmt.Errorf("action %s: parameter %q given twice", e.Action, p.Name)
		}
		given[p.Name] = p.Value
	}
	for _, p := range a.GetParams() {
		v, ok := given[p.GetName()]
		if !ok {
			return nil, fmt.Errorf("action %s: missing parameter %q", e.Action, p.GetName())
		}
		cv, err := canonical(v, p.GetBitwidth(), "action "+e.Action+" parameter "+p.GetName())
		if err != nil {
			return nil, err
		}
		act.Params = append(act.Params, &p4v1.Action_Param{ParamId: p.GetId(), Value: cv})
		delete(given, p.GetName())
	}
	for name := range given {
		return nil, fmt.Errorf("action %s has no parameter %q", e.Action, name)
	}
	te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}
	return te, nil
}

// InsertEntry, ModifyEntry and DeleteEntry write one table entry.
func (c *Client) InsertEntry(ctx context.Context, e Entry) error { return c.writeEntry(ctx, Insert, e) }

// ModifyEntry changes an entry's action (or, with Default, the table's default action).
func (c *Client) ModifyEntry(ctx context.Context, e Entry) error { return c.writeEntry(ctx, Modify, e) }

// DeleteEntry removes the entry with e's table, match and priority.
func (c *Client) DeleteEntry(ctx context.Context, e Entry) error { return c.writeEntry(ctx, Delete, e) }

// writeEntry writes e into every copy of its table, all or none.
func (c *Client) writeEntry(ctx context.Context, op p4v1.Update_Type, e Entry) error {
	ups, err := c.TableUpdates(op, e)
	if err != nil {
		return err
	}
	return c.Write(ctx, len(ups) > 1, ups...)
}

// TableEntries reads every entry of a table (not its default entry), of each of its copies in
// a program of several Pipelines (the entries' table ids tell the copies apart).
func (c *Client) TableEntries(ctx context.Context, table string) ([]*p4v1.TableEntry, error) {
	sch, err := c.schema()
	if err != nil {
		return nil, err
	}
	ts, err := sch.tableCopies(table)
	if err != nil {
		return nil, err
	}
	var out []*p4v1.TableEntry
	for _, t := range ts {
		err = c.read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: t.GetPreamble().GetId()}}},
			func(e *p4v1.Entity) { out = append(out, e.GetTableEntry()) })
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// read streams the entities matching one read entity to fn.
func (c *Client) read(ctx context.Context, ent *p4v1.Entity, fn func(*p4v1.Entity)) error {
	if c.State() == Closed {
		return ErrClosed
	}
	stream, err := c.rt.Read(ctx, &p4v1.ReadRequest{DeviceId: c.cfg.DeviceID, Role: c.cfg.Role, Entities: []*p4v1.Entity{ent}})
	if err != nil {
		return fmt.Errorf("controlplane: read: %w", err)
	}
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("controlplane: read: %w", err)
		}
		for _, e := range resp.GetEntities() {
			fn(e)
		}
	}
}

// Uint encodes v as a canonical P4Runtime bytestring (big-endian, no leading zero bytes).
func Uint(v uint64) []byte {
	b := big.NewInt(0).SetUint64(v).Bytes()
	if len(b) == 0 {
		return []byte{0}
	}
	return b
}

// IPv4 encodes an IPv4 address as 4 bytes.
func IPv4(a netip.Addr) []byte {
	b := a.As4()
	return b[:]
}

// MAC encodes a MAC address as 6 bytes.
func MAC(m net.HardwareAddr) []byte { return []byte(m) }
