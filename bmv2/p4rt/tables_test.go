package p4rt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// names resolves P4Info names to ids for hand-built requests.
type names struct{ info *p4configv1.P4Info }

func (n names) table(name string) uint32 {
	for _, t := range n.info.GetTables() {
		if t.GetPreamble().GetName() == name {
			return t.GetPreamble().GetId()
		}
	}
	panic("no table " + name)
}

func (n names) action(name string) uint32 {
	for _, a := range n.info.GetActions() {
		if a.GetPreamble().GetName() == name {
			return a.GetPreamble().GetId()
		}
	}
	panic("no action " + name)
}

func (n names) id(kind, name string) uint32 {
	var pres []*p4configv1.Preamble
	switch kind {
	case "counter":
		for _, x := range n.info.GetCounters() {
			pres = append(pres, x.GetPreamble())
		}
	case "meter":
		for _, x := range n.info.GetMeters() {
			pres = append(pres, x.GetPreamble())
		}
	case "register":
		for _, x := range n.info.GetRegisters() {
			pres = append(pres, x.GetPreamble())
		}
	case "digest":
		for _, x := range n.info.GetDigests() {
			pres = append(pres, x.GetPreamble())
		}
	}
	for _, p := range pres {
		if p.GetName() == name {
			return p.GetId()
		}
	}
	panic("no " + kind + " " + name)
}

func exact(id uint32, v ...byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: v}}}
}

func lpm(id uint32, plen int32, v ...byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: v, PrefixLen: plen}}}
}

func ternary(id uint32, v, m []byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: v, Mask: m}}}
}

func rng(id uint32, lo, hi []byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: lo, High: hi}}}
}

func optional(id uint32, v ...byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: v}}}
}

func act(id uint32, params ...[]byte) *p4v1.TableAction {
	a := &p4v1.Action{ActionId: id}
	for i, p := range params {
		a.Params = append(a.Params, &p4v1.Action_Param{ParamId: uint32(i + 1), Value: p})
	}
	return &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
}

func upd(op p4v1.Update_Type, ent any) *p4v1.Update {
	e := &p4v1.Entity{}
	switch x := ent.(type) {
	case *p4v1.TableEntry:
		e.Entity = &p4v1.Entity_TableEntry{TableEntry: x}
	case *p4v1.CounterEntry:
		e.Entity = &p4v1.Entity_CounterEntry{CounterEntry: x}
	case *p4v1.DirectCounterEntry:
		e.Entity = &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: x}
	case *p4v1.MeterEntry:
		e.Entity = &p4v1.Entity_MeterEntry{MeterEntry: x}
	case *p4v1.DirectMeterEntry:
		e.Entity = &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: x}
	case *p4v1.RegisterEntry:
		e.Entity = &p4v1.Entity_RegisterEntry{RegisterEntry: x}
	case *p4v1.MulticastGroupEntry:
		e.Entity = &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
			Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: x}}}
	case *p4v1.CloneSessionEntry:
		e.Entity = &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
			Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: x}}}
	case *p4v1.DigestEntry:
		e.Entity = &p4v1.Entity_DigestEntry{DigestEntry: x}
	case *p4v1.ActionProfileMember:
		e.Entity = &p4v1.Entity_ActionProfileMember{ActionProfileMember: x}
	case nil:
		e = nil
	default:
		panic(fmt.Sprintf("%T", ent))
	}
	return &p4v1.Update{Type: op, Entity: e}
}

func (c *ctl) write(ctx context.Context, us ...*p4v1.Update) error {
	_, err := c.Write(ctx, &p4v1.WriteRequest{DeviceId: devID, ElectionId: c.eid, Updates: us})
	return err
}

func (c *ctl) read(t *testing.T, ents ...*p4v1.Entity) []*p4v1.Entity {
	t.Helper()
	rc, err := c.Read(context.Background(), &p4v1.ReadRequest{DeviceId: devID, Entities: ents})
	if err != nil {
		t.Fatal(err)
	}
	var out []*p4v1.Entity
	for {
		r, err := rc.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.GetEntities()...)
	}
}

func (c *ctl) readErr(ents ...*p4v1.Entity) error {
	rc, err := c.Read(context.Background(), &p4v1.ReadRequest{DeviceId: devID, Entities: ents})
	if err != nil {
		return err
	}
	for {
		if _, err := rc.Recv(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func TestTableEntries(t *testing.T) {
	e := newEnv(t)
	c := e.primaryWithPipeline()
	ctx := context.Background()
	nm := names{e.srv.Pipeline().P4Info}
	// Every match kind through the controller library.
	entries := []*p4v1.TableEntry{
		c.NewTableEntry("MyIngress.smac", map[string]client.MatchInterface{
			"hdr.ethernet.src": &client.ExactMatch{Value: mac(1)}}, c.NewTableActionDirect("NoAction", nil), nil),
		c.NewTableEntry("MyIngress.ipv4_lpm", map[string]client.MatchInterface{
			"meta.vrf":     &client.ExactMatch{Value: []byte{0, 1}},
			"hdr.ipv4.dst": &client.LpmMatch{Value: []byte{10, 1, 0, 0}, PLen: 16}},
			c.NewTableActionDirect("MyIngress.route", [][]byte{mac(9), {0, 3}}), nil),
		c.NewTableEntry("MyIngress.acl", map[string]client.MatchInterface{
			"hdr.ipv4.src": &client.TernaryMatch{Value: []byte{10, 0, 0, 0}, Mask: []byte{255, 0, 0, 0}},
			"hdr.ipv4.ttl": &client.RangeMatch{Low: []byte{1}, High: []byte{64}}},
			c.NewTableActionDirect("MyIngress.to_cpu", nil), &client.TableEntryOptions{Priority: 10}),
		c.NewTableEntry("MyIngress.vrf_map", map[string]client.MatchInterface{
			"std.ingress_port":       &client.ExactMatch{Value: []byte{1}},
			"hdr.ethernet.etherType": &client.OptionalMatch{Value: []byte{8, 0}}},
			c.NewTableActionDirect("MyIngress.set_vrf", [][]byte{{0, 1}}), &client.TableEntryOptions{Priority: 1}),
	}
	for _, te := range entries {
		if err := c.InsertTableEntry(ctx, te); err != nil {
			t.Fatalf("insert %v: %v", te, err)
		}
	}
	// Wildcard read of all tables returns the four entries, canonical.
	all := c.read(t, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}})
	if len(all) != 4 {
		t.Fatalf("read %d entries", len(all))
	}
	for _, ent := range all {
		te := ent.GetTableEntry()
		if te.GetTableId() == nm.table("MyIngress.ipv4_lpm") {
			p := te.GetAction().GetAction().GetParams()
			if !bytes.Equal(p[1].GetValue(), []byte{3}) || !bytes.Equal(te.GetMatch()[0].GetExact().GetValue(), []byte{1}) {
				t.Fatalf("not canonical: %v", te)
			}
		}
	}
	// Read one entry by its key, then modify and read it again.
	got, err := c.ReadTableEntry(ctx, "MyIngress.smac", []client.MatchInterface{&client.ExactMatch{Value: mac(1)}})
	if err != nil || got.GetAction().GetAction().GetActionId() != nm.action("NoAction") {
		t.Fatalf("read one: %v %v", got, err)
	}
	mod := c.NewTableEntry("MyIngress.smac", map[string]client.MatchInterface{
		"hdr.ethernet.src": &client.ExactMatch{Value: mac(1)}}, c.NewTableActionDirect("MyIngress.learn", nil), nil)
	if err := c.ModifyTableEntry(ctx, mod); err != nil {
		t.Fatal(err)
	}
	got, _ = c.ReadTableEntry(ctx, "MyIngress.smac", []client.MatchInterface{&client.ExactMatch{Value: mac(1)}})
	if got.GetAction().GetAction().GetActionId() != nm.action("MyIngress.learn") {
		t.Fatalf("modify not applied: %v", got)
	}
	// A key that is not there reads as nothing.
	if _, err := c.ReadTableEntry(ctx, "MyIngress.smac", []client.MatchInterface{&client.ExactMatch{Value: mac(2)}}); err == nil {
		t.Fatal("read of a missing entry returned an entry")
	}
	// Delete, then the table is empty.
	if err := c.DeleteTableEntry(ctx, mod); err != nil {
		t.Fatal(err)
	}
	if es, _ := c.ReadTableEntryWildcard(ctx, "MyIngress.smac"); len(es) != 0 {
		t.Fatalf("after delete: %v", es)
	}
	// Default actions: the program's, then modified, then reset.
	n := nm
	dmac := n.table("MyIngress.dmac")
	def := func() *p4v1.Action {
		r := c.read(t, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: dmac, IsDefaultAction: true}}})
		if len(r) != 1 {
			t.Fatalf("default read: %v", r)
		}
		return r[0].GetTableEntry().GetAction().GetAction()
	}
	if a := def(); a.GetActionId() != n.action("MyIngress.flood") || !bytes.Equal(a.GetParams()[0].GetValue(), []byte{1}) {
		t.Fatalf("program default: %v", a)
	}
	if err := c.write(ctx, upd(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: dmac, IsDefaultAction: true, Action: act(n.action("MyIngress.drop"))})); err != nil {
		t.Fatal(err)
	}
	if a := def(); a.GetActionId() != n.action("MyIngress.drop") {
		t.Fatalf("modified default: %v", a)
	}
	if err := c.write(ctx, upd(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: dmac, IsDefaultAction: true})); err != nil {
		t.Fatal(err)
	}
	if a := def(); a.GetActionId() != n.action("MyIngress.flood") {
		t.Fatalf("reset default: %v", a)
	}
	// Direct counter of the acl entry: written, read as a DirectCounterEntry and with the entry.
	aclKey := proto.Clone(all[0].GetTableEntry()).(*p4v1.TableEntry)
	for _, ent := range all {
		if ent.GetTableEntry().GetTableId() == n.table("MyIngress.acl") {
			aclKey = proto.Clone(ent.GetTableEntry()).(*p4v1.TableEntry)
		}
	}
	aclKey.Action = nil
	if err := c.write(ctx, upd(p4v1.Update_MODIFY, &p4v1.DirectCounterEntry{TableEntry: aclKey, Data: &p4v1.CounterData{PacketCount: 3, ByteCount: 300}})); err != nil {
		t.Fatal(err)
	}
	dc := c.read(t, &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: &p4v1.TableEntry{TableId: n.table("MyIngress.acl")}}}})
	if len(dc) != 1 || dc[0].GetDirectCounterEntry().GetData().GetPacketCount() != 3 {
		t.Fatalf("direct counter: %v", dc)
	}
	withCounter := c.read(t, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: n.table("MyIngress.acl"), CounterData: &p4v1.CounterData{}}}})
	if len(withCounter) != 1 || withCounter[0].GetTableEntry().GetCounterData().GetByteCount() != 300 {
		t.Fatalf("entry with counter data: %v", withCounter)
	}
	without := c.read(t, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: n.table("MyIngress.acl")}}})
	if without[0].GetTableEntry().GetCounterData() != nil {
		t.Fatal("counter data returned without being asked for")
	}
	// Direct meter of the lpm entry.
	var lpmKey *p4v1.TableEntry
	for _, ent := range all {
		if ent.GetTableEntry().GetTableId() == n.table("MyIngress.ipv4_lpm") {
			lpmKey = proto.Clone(ent.GetTableEntry()).(*p4v1.TableEntry)
		}
	}
	lpmKey.Action = nil
	if err := c.write(ctx, upd(p4v1.Update_MODIFY, &p4v1.DirectMeterEntry{TableEntry: lpmKey, Config: &p4v1.MeterConfig{Cir: 10, Cburst: 5, Pir: 20, Pburst: 5}})); err != nil {
		t.Fatal(err)
	}
	dm := c.read(t, &p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{}}})
	if len(dm) != 1 || dm[0].GetDirectMeterEntry().GetConfig().GetPir() != 20 {
		t.Fatalf("direct meter: %v", dm)
	}
	// A full table is RESOURCE_EXHAUSTED (acl holds 256 entries).
	var us []*p4v1.Update
	for i := 0; i < 256; i++ {
		us = append(us, upd(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: n.table("MyIngress.acl"), Priority: int32(i + 1),
			Match: []*p4v1.FieldMatch{ternary(2, []byte{byte(i)}, []byte{255})}, Action: act(n.action("MyIngress.drop"))}))
	}
	errs := UpdateErrors(c.write(ctx, us...))
	if len(errs) != 256 || errs[0] != nil || errs[254] != nil || errs[255].Code() != codes.ResourceExhausted {
		t.Fatalf("table full: %d errors, last %v", len(errs), errs[len(errs)-1])
	}
}

// TestWriteErrors checks every validation error of Write with its status code.
func TestWriteErrors(t *testing.T) {
	e := newEnv(t)
	c := e.primaryWithPipeline()
	ctx := context.Background()
	n := names{e.srv.Pipeline().P4Info}
	smac, dmac, lpmT, acl, vrf := n.table("MyIngress.smac"), n.table("MyIngress.dmac"), n.table("MyIngress.ipv4_lpm"), n.table("MyIngress.acl"), n.table("MyIngress.vrf_map")
	fwd, drop, route, setVrf, learn := n.action("MyIngress.forward"), n.action("MyIngress.drop"), n.action("MyIngress.route"), n.action("MyIngress.set_vrf"), n.action("MyIngress.learn")
	good := &p4v1.TableEntry{TableId: dmac, Match: []*p4v1.FieldMatch{exact(1, mac(7)...)}, Action: act(fwd, []byte{1})}
	if err := c.write(ctx, upd(p4v1.Update_INSERT, good)); err != nil {
		t.Fatal(err)
	}
	if err := c.write(ctx, upd(p4v1.Update_INSERT, &p4v1.MulticastGroupEntry{MulticastGroupId: 1, Replicas: []*p4v1.Replica{{EgressPort: 1}}})); err != nil {
		t.Fatal(err)
	}
	if err := c.write(ctx, upd(p4v1.Update_INSERT, &p4v1.DigestEntry{DigestId: n.id("digest", "learn_t"), Config: &p4v1.DigestEntry_Config{}})); err != nil {
		t.Fatal(err)
	}
	te := func(table uint32, prio int32, a *p4v1.TableAction, ms ...*p4v1.FieldMatch) *p4v1.TableEntry {
		return &p4v1.TableEntry{TableId: table, Priority: prio, Match: ms, Action: a}
	}
	I, M, D := p4v1.Update_INSERT, p4v1.Update_MODIFY, p4v1.Update_DELETE
	cnt, mtr, reg := n.id("counter", "MyIngress.port_counter"), n.id("meter", "MyIngress.port_meter"), n.id("register", "MyIngress.seen")
	for _, tc := range []struct {
		name string
		u    *p4v1.Update
		want codes.Code
	}{
		{"unknown table", upd(I, te(12345, 0, act(fwd, []byte{1}), exact(1, 1))), codes.NotFound},
		{"unknown field id", upd(I, te(dmac, 0, act(fwd, []byte{1}), exact(1, mac(8)...), exact(9, 1))), codes.InvalidArgument},
		{"wrong match kind", upd(I, te(dmac, 0, act(fwd, []byte{1}), lpm(1, 48, mac(8)...))), codes.InvalidArgument},
		{"value too wide", upd(I, te(dmac, 0, act(fwd, []byte{1}), exact(1, 1, 0, 0, 0, 0, 0, 0))), codes.InvalidArgument},
		{"value over bitwidth", upd(I, te(vrf, 1, act(setVrf, []byte{1}), exact(1, 2, 0))), codes.InvalidArgument},
		{"non-canonical bytes", upd(I, te(vrf, 1, act(setVrf, []byte{1}), exact(1, 0, 0, 1))), codes.InvalidArgument},
		{"empty bytes", upd(I, te(dmac, 0, act(fwd, []byte{1}), exact(1))), codes.InvalidArgument},
		{"missing exact field", upd(I, te(lpmT, 0, act(drop), lpm(2, 8, 10))), codes.InvalidArgument},
		{"field twice", upd(I, te(dmac, 0, act(fwd, []byte{1}), exact(1, 1), exact(1, 2))), codes.InvalidArgument},
		{"no match value", upd(I, te(dmac, 0, act(fwd, []byte{1}), &p4v1.FieldMatch{FieldId: 1})), codes.InvalidArgument},
		{"lpm bits past prefix", upd(I, te(lpmT, 0, act(drop), exact(1, 1), lpm(2, 8, 10, 1, 0, 0))), codes.InvalidArgument},
		{"lpm prefix 0", upd(I, te(lpmT, 0, act(drop), exact(1, 1), lpm(2, 0, 0))), codes.InvalidArgument},
		{"lpm prefix too long", upd(I, te(lpmT, 0, act(drop), exact(1, 1), lpm(2, 33, 10, 0, 0, 0))), codes.InvalidArgument},
		{"ternary value outside mask", upd(I, te(acl, 1, act(drop), ternary(1, []byte{10, 0, 0, 1}, []byte{255, 0, 0, 0}))), codes.InvalidArgument},
		{"ternary zero mask", upd(I, te(acl, 1, act(drop), ternary(1, []byte{0}, []byte{0}))), codes.InvalidArgument},
		{"range low above high", upd(I, te(acl, 1, act(drop), rng(4, []byte{9}, []byte{3}))), codes.InvalidArgument},
		{"full range", upd(I, te(acl, 1, act(drop), rng(4, []byte{0}, []byte{255}))), codes.InvalidArgument},
		{"ternary table without priority", upd(I, te(acl, 0, act(drop), ternary(3, []byte{6}, []byte{255}))), codes.InvalidArgument},
		{"optional table without priority", upd(I, te(vrf, 0, act(setVrf, []byte{1}), exact(1, 1))), codes.InvalidArgument},
		{"exact table with priority", upd(I, te(dmac, 5, act(fwd, []byte{1}), exact(1, mac(8)...))), codes.InvalidArgument},
		{"insert without action", upd(I, te(dmac, 0, nil, exact(1, mac(8)...))), codes.InvalidArgument},
		{"unknown action", upd(I, te(dmac, 0, act(999), exact(1, mac(8)...))), codes.InvalidArgument},
		{"action not in table", upd(I, te(dmac, 0, act(route, mac(1), []byte{1}), exact(1, mac(8)...))), codes.InvalidArgument},
		{"missing param", upd(I, te(dmac, 0, act(fwd), exact(1, mac(8)...))), codes.InvalidArgument},
		{"extra param", upd(I, te(dmac, 0, act(fwd, []byte{1}, []byte{2}), exact(1, mac(8)...))), codes.InvalidArgument},
		{"param too wide", upd(I, te(dmac, 0, act(fwd, []byte{2, 0}), exact(1, mac(8)...))), codes.InvalidArgument},
		{"param not canonical", upd(I, te(dmac, 0, act(fwd, []byte{0, 0, 1}), exact(1, mac(8)...))), codes.InvalidArgument},
		{"idle timeout unsupported", upd(I, &p4v1.TableEntry{TableId: dmac, Match: []*p4v1.FieldMatch{exact(1, 9)}, Action: act(fwd, []byte{1}), IdleTimeoutNs: 5}), codes.InvalidArgument},
		{"counter data without direct counter", upd(I, &p4v1.TableEntry{TableId: dmac, Match: []*p4v1.FieldMatch{exact(1, 9)}, Action: act(fwd, []byte{1}), CounterData: &p4v1.CounterData{}}), codes.InvalidArgument},
		{"duplicate insert", upd(I, good), codes.AlreadyExists},
		{"missing delete", upd(D, te(dmac, 0, nil, exact(1, mac(99)...))), codes.NotFound},
		{"missing modify", upd(M, te(dmac, 0, act(fwd, []byte{1}), exact(1, mac(99)...))), codes.NotFound},
		{"insert default entry", upd(I, &p4v1.TableEntry{TableId: dmac, IsDefaultAction: true, Action: act(drop)}), codes.InvalidArgument},
		{"default entry with match", upd(M, &p4v1.TableEntry{TableId: dmac, IsDefaultAction: true, Match: []*p4v1.FieldMatch{exact(1, 1)}, Action: act(drop)}), codes.InvalidArgument},
		{"default action not in table", upd(M, &p4v1.TableEntry{TableId: smac, IsDefaultAction: true, Action: act(drop)}), codes.InvalidArgument},
		{"default-only action in an entry", upd(I, te(smac, 0, act(learn), exact(1, mac(3)...))), codes.OK},
		{"update type unspecified", upd(p4v1.Update_UNSPECIFIED, good), codes.InvalidArgument},
		{"no entity", upd(I, nil), codes.InvalidArgument},
		{"counter insert", upd(I, &p4v1.CounterEntry{CounterId: cnt, Index: &p4v1.Index{Index: 1}}), codes.InvalidArgument},
		{"unknown counter", upd(M, &p4v1.CounterEntry{CounterId: 4, Index: &p4v1.Index{Index: 1}}), codes.NotFound},
		{"counter index out of range", upd(M, &p4v1.CounterEntry{CounterId: cnt, Index: &p4v1.Index{Index: 64}}), codes.OutOfRange},
		{"negative counter", upd(M, &p4v1.CounterEntry{CounterId: cnt, Index: &p4v1.Index{Index: 1}, Data: &p4v1.CounterData{PacketCount: -1}}), codes.InvalidArgument},
		{"direct counter of missing entry", upd(M, &p4v1.DirectCounterEntry{TableEntry: te(acl, 1, nil, ternary(3, []byte{6}, []byte{255}))}), codes.NotFound},
		{"direct counter on table without one", upd(M, &p4v1.DirectCounterEntry{TableEntry: te(dmac, 0, nil, exact(1, mac(7)...))}), codes.InvalidArgument},
		{"direct counter without entry", upd(M, &p4v1.DirectCounterEntry{}), codes.InvalidArgument},
		{"unknown meter", upd(M, &p4v1.MeterEntry{MeterId: 4, Index: &p4v1.Index{Index: 1}}), codes.NotFound},
		{"meter cir above pir", upd(M, &p4v1.MeterEntry{MeterId: mtr, Index: &p4v1.Index{Index: 1}, Config: &p4v1.MeterConfig{Cir: 5, Pir: 1}}), codes.InvalidArgument},
		{"meter index out of range", upd(M, &p4v1.MeterEntry{MeterId: mtr, Index: &p4v1.Index{Index: -1}}), codes.OutOfRange},
		{"unknown register", upd(M, &p4v1.RegisterEntry{RegisterId: 4, Index: &p4v1.Index{Index: 1}}), codes.NotFound},
		{"register value too wide", upd(M, &p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 1}, Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{1, 0, 0, 0, 0}}}}), codes.InvalidArgument},
		{"register not a bitstring", upd(M, &p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 1}, Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bool{Bool: true}}}), codes.InvalidArgument},
		{"register delete", upd(D, &p4v1.RegisterEntry{RegisterId: reg}), codes.InvalidArgument},
		{"multicast group 0", upd(I, &p4v1.MulticastGroupEntry{}), codes.InvalidArgument},
		{"duplicate multicast group", upd(I, &p4v1.MulticastGroupEntry{MulticastGroupId: 1}), codes.AlreadyExists},
		{"duplicate replica", upd(M, &p4v1.MulticastGroupEntry{MulticastGroupId: 1, Replicas: []*p4v1.Replica{{EgressPort: 1}, {EgressPort: 1}}}), codes.InvalidArgument},
		{"missing multicast group", upd(D, &p4v1.MulticastGroupEntry{MulticastGroupId: 2}), codes.NotFound},
		{"missing clone session", upd(D, &p4v1.CloneSessionEntry{SessionId: 5}), codes.NotFound},
		{"clone session 0", upd(I, &p4v1.CloneSessionEntry{}), codes.InvalidArgument},
		{"unknown digest", upd(I, &p4v1.DigestEntry{DigestId: 4, Config: &p4v1.DigestEntry_Config{}}), codes.NotFound},
		{"digest inserted twice", upd(I, &p4v1.DigestEntry{DigestId: n.id("digest", "learn_t"), Config: &p4v1.DigestEntry_Config{}}), codes.AlreadyExists},
		{"digest without config", upd(M, &p4v1.DigestEntry{DigestId: n.id("digest", "learn_t")}), codes.InvalidArgument},
		{"action profiles", upd(I, &p4v1.ActionProfileMember{ActionProfileId: 1}), codes.Unimplemented},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := updateCode(t, c.write(ctx, tc.u)); got != tc.want {
				t.Fatalf("got %v, want %v (%v)", got, tc.want, c.write(ctx, tc.u))
			}
		})
	}
	// A batch reports one error per update, in order, and applies the good ones.
	err := c.write(ctx,
		upd(I, te(dmac, 0, act(fwd, []byte{2}), exact(1, mac(20)...))),
		upd(I, good),
		upd(I, te(dmac, 0, act(fwd, []byte{2}), exact(1, mac(21)...))),
		upd(D, te(dmac, 0, nil, exact(1, mac(22)...))),
	)
	errs := UpdateErrors(err)
	if code(err) != codes.Unknown || len(errs) != 4 || errs[0] != nil || errs[1].Code() != codes.AlreadyExists || errs[2] != nil || errs[3].Code() != codes.NotFound {
		t.Fatalf("batch: %v %v", err, errs)
	}
	if es, _ := c.ReadTableEntryWildcard(ctx, "MyIngress.dmac"); len(es) != 3 {
		t.Fatalf("batch applied %d entries, want 3", len(es))
	}
	// Data-plane atomic batches are not implemented.
	_, err = c.Write(ctx, &p4v1.WriteRequest{DeviceId: devID, ElectionId: c.eid, Atomicity: p4v1.WriteRequest_DATAPLANE_ATOMIC})
	wantCode(t, err, codes.Unimplemented)
	// Read errors.
	for _, tc := range []struct {
		name string
		ent  *p4v1.Entity
		want codes.Code
	}{
		{"unknown table", &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: 5}}}, codes.NotFound},
		{"match without table", &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{Match: []*p4v1.FieldMatch{exact(1, 1)}}}}, codes.InvalidArgument},
		{"bad key", &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: dmac, Match: []*p4v1.FieldMatch{exact(1, 0, 0, 0, 0, 0, 0, 1)}}}}, codes.InvalidArgument},
		{"unknown counter", &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: 3}}}, codes.NotFound},
		{"counter index", &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cnt, Index: &p4v1.Index{Index: 100}}}}, codes.OutOfRange},
		{"direct counter on wrong table", &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: &p4v1.TableEntry{TableId: dmac}}}}, codes.InvalidArgument},
		{"empty entity", &p4v1.Entity{}, codes.InvalidArgument},
		{"value sets", &p4v1.Entity{Entity: &p4v1.Entity_ValueSetEntry{ValueSetEntry: &p4v1.ValueSetEntry{}}}, codes.Unimplemented},
	} {
		t.Run("read "+tc.name, func(t *testing.T) {
			wantCode(t, c.readErr(tc.ent), tc.want)
		})
	}
}

// TestRollbackOnError: a ROLLBACK_ON_ERROR batch either applies completely or
// leaves every entity as it was.
func TestRollbackOnError(t *testing.T) {
	e := newEnv(t)
	c := e.primaryWithPipeline()
	ctx := context.Background()
	n := names{e.srv.Pipeline().P4Info}
	dmac, fwd, drop := n.table("MyIngress.dmac"), n.action("MyIngress.forward"), n.action("MyIngress.drop")
	cnt, reg := n.id("counter", "MyIngress.port_counter"), n.id("register", "MyIngress.seen")
	dig := n.id("digest", "learn_t")
	entry := func(m byte, port byte) *p4v1.TableEntry {
		return &p4v1.TableEntry{TableId: dmac, Match: []*p4v1.FieldMatch{exact(1, mac(m)...)}, Action: act(fwd, []byte{port})}
	}
	batch := func(a p4v1.WriteRequest_Atomicity, us ...*p4v1.Update) error {
		_, err := c.Write(ctx, &p4v1.WriteRequest{DeviceId: devID, ElectionId: c.eid, Atomicity: a, Updates: us})
		return err
	}
	// Initial state: entry 1 (port 1), entry 2, counter cell 0 = 5 packets, register 0 = 7, group 1.
	if err := batch(p4v1.WriteRequest_ROLLBACK_ON_ERROR,
		upd(p4v1.Update_INSERT, entry(1, 1)),
		upd(p4v1.Update_INSERT, entry(2, 1)),
		upd(p4v1.Update_MODIFY, &p4v1.CounterEntry{CounterId: cnt, Index: &p4v1.Index{Index: 0}, Data: &p4v1.CounterData{PacketCount: 5}}),
		upd(p4v1.Update_MODIFY, &p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 0}, Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{7}}}}),
		upd(p4v1.Update_INSERT, &p4v1.MulticastGroupEntry{MulticastGroupId: 1, Replicas: []*p4v1.Replica{{EgressPort: 1}}}),
	); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string {
		ents := c.read(t,
			&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}},
			&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: dmac, IsDefaultAction: true}}},
			&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cnt}}},
			&p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{RegisterId: reg}}},
			&p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
				Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: &p4v1.MulticastGroupEntry{}}}}},
			&p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{}}},
		)
		var out []byte
		for _, x := range ents {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(x)
			out = append(out, b...)
		}
		return string(out)
	}
	before := snapshot()
	err := batch(p4v1.WriteRequest_ROLLBACK_ON_ERROR,
		upd(p4v1.Update_INSERT, entry(3, 1)),
		upd(p4v1.Update_MODIFY, entry(1, 9)),
		upd(p4v1.Update_DELETE, entry(2, 0)),
		upd(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: dmac, IsDefaultAction: true, Action: act(drop)}),
		upd(p4v1.Update_MODIFY, &p4v1.CounterEntry{CounterId: cnt, Data: &p4v1.CounterData{PacketCount: 99}}),
		upd(p4v1.Update_MODIFY, &p4v1.RegisterEntry{RegisterId: reg, Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{1}}}}),
		upd(p4v1.Update_MODIFY, &p4v1.MulticastGroupEntry{MulticastGroupId: 1}),
		upd(p4v1.Update_INSERT, &p4v1.MulticastGroupEntry{MulticastGroupId: 2}),
		upd(p4v1.Update_INSERT, &p4v1.DigestEntry{DigestId: dig, Config: &p4v1.DigestEntry_Config{}}),
		upd(p4v1.Update_INSERT, entry(1, 1)), // fails: ALREADY_EXISTS
		upd(p4v1.Update_INSERT, entry(4, 1)), // never attempted
	)
	errs := UpdateErrors(err)
	if len(errs) != 11 || errs[9].Code() != codes.AlreadyExists {
		t.Fatalf("errors: %v", errs)
	}
	for i, st := range errs {
		if i != 9 && st.Code() != codes.Aborted {
			t.Fatalf("update %d: %v, want ABORTED", i, st)
		}
	}
	if after := snapshot(); after != before {
		t.Fatal("a failed ROLLBACK_ON_ERROR batch changed the state")
	}
	// The same batch without the failing update applies completely.
	if err := batch(p4v1.WriteRequest_ROLLBACK_ON_ERROR,
		upd(p4v1.Update_INSERT, entry(3, 1)),
		upd(p4v1.Update_DELETE, entry(2, 0)),
	); err != nil {
		t.Fatal(err)
	}
	if es, _ := c.ReadTableEntryWildcard(ctx, "MyIngress.dmac"); len(es) != 2 {
		t.Fatalf("entries after a good batch: %d", len(es))
	}
}
