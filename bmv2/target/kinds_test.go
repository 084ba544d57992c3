package target

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/netlock-go/netlock/bmv2/p4rt"
)

// pushL2L3 pushes bmv2/p4rt's test program (every match kind, direct and
// indexed counters and meters, a register) and returns its P4Info.
func pushL2L3(t *testing.T, c *ctl) *p4configv1.P4Info {
	t.Helper()
	b, err := p4rt.BundleFromFS(os.DirFS("../p4rt/testdata"), "l2l3.p4", "headers.p4")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	txt, err := prog.P4InfoTextCompat()
	if err != nil {
		t.Fatal(err)
	}
	info, err := prog.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetFwdPipeFromBytes(context.Background(), b.Encode(), []byte(txt), 2); err != nil {
		t.Fatal(err)
	}
	return info
}

func meterID(info *p4configv1.P4Info, name string) uint32 {
	for _, m := range info.GetMeters() {
		if m.GetPreamble().GetName() == name {
			return m.GetPreamble().GetId()
		}
	}
	return 0
}

func registerID(info *p4configv1.P4Info, name string) uint32 {
	for _, r := range info.GetRegisters() {
		if r.GetPreamble().GetName() == name {
			return r.GetPreamble().GetId()
		}
	}
	return 0
}

func modify(t *testing.T, c *ctl, e *p4v1.Entity) {
	t.Helper()
	if err := c.WriteUpdate(context.Background(), &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: e}); err != nil {
		t.Fatal(err)
	}
}

func readOne(t *testing.T, c *ctl, e *p4v1.Entity) *p4v1.Entity {
	t.Helper()
	got, err := c.ReadEntitySingle(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestMatchKindsAndExterns drives every match kind, default actions, direct
// and indexed meters and registers of the engine-backed device through the
// controller, and checks forwarding and read-back.
func TestMatchKindsAndExterns(t *testing.T) {
	r := newRig(t, Options{})
	c := r.connect(t)
	ctx := context.Background()
	info := pushL2L3(t, c)

	// vrf_map: port 1 (exact), IPv4 (optional) -> vrf 5.
	vrf := c.NewTableEntry("MyIngress.vrf_map", map[string]client.MatchInterface{
		"std.ingress_port":       &client.ExactMatch{Value: []byte{1}},
		"hdr.ethernet.etherType": &client.OptionalMatch{Value: []byte{0x08, 0x00}},
	}, c.NewTableActionDirect("MyIngress.set_vrf", [][]byte{{5}}), &client.TableEntryOptions{Priority: 1})
	if err := c.InsertTableEntry(ctx, vrf); err != nil {
		t.Fatal(err)
	}
	// ipv4_lpm: (vrf 5, 10.0.2.0/24) -> port 2, with a direct meter config.
	route := c.NewTableEntry("MyIngress.ipv4_lpm", map[string]client.MatchInterface{
		"meta.vrf":     &client.ExactMatch{Value: []byte{5}},
		"hdr.ipv4.dst": &client.LpmMatch{Value: ip4("10.0.2.0"), PLen: 24},
	}, c.NewTableActionDirect("MyIngress.route", [][]byte{hostMAC[2], {2}}), nil)
	route.MeterConfig = &p4v1.MeterConfig{Cir: 1000000, Cburst: 1000, Pir: 2000000, Pburst: 2000}
	if err := c.InsertTableEntry(ctx, route); err != nil {
		t.Fatal(err)
	}
	// acl: dst 10.0.2.7 (ternary) with TTL in 10..100 (range) -> drop.
	acl := c.NewTableEntry("MyIngress.acl", map[string]client.MatchInterface{
		"hdr.ipv4.dst": &client.TernaryMatch{Value: ip4("10.0.2.7"), Mask: []byte{0xff, 0xff, 0xff, 0xff}},
		"hdr.ipv4.ttl": &client.RangeMatch{Low: []byte{10}, High: []byte{100}},
	}, c.NewTableActionDirect("MyIngress.drop", nil), &client.TableEntryOptions{Priority: 10})
	if err := c.InsertTableEntry(ctx, acl); err != nil {
		t.Fatal(err)
	}

	h1, h2 := r.hosts[1], r.hosts[2]
	send := func(dst string, ttl uint8, payload string) {
		t.Helper()
		if err := h1.p.Send(udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", dst, ttl, payload)); err != nil {
			t.Fatal(err)
		}
	}
	send("10.0.2.5", 64, "plain")
	send("10.0.2.7", 64, "acl-dropped") // the acl entry hits
	send("10.0.2.7", 200, "ttl-outside-range")
	for _, want := range []string{"plain", "ttl-outside-range"} {
		f := h2.next(t)
		if !bytesContains(f, want) {
			t.Fatalf("port 2 got %x, want the %q frame", f, want)
		}
	}

	// Read-back: what was written, in canonical form, with the acl's direct counter.
	got := readOne(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{
		TableId: acl.TableId, Match: acl.Match, Priority: 10, CounterData: &p4v1.CounterData{}}}}).GetTableEntry()
	if got.GetCounterData().GetPacketCount() != 1 {
		t.Fatalf("acl direct counter %v, want 1 packet", got.GetCounterData())
	}
	got.CounterData = nil
	// The client builds match fields from a Go map, so their order varies; the server answers in
	// canonical order (by field id).
	slices.SortFunc(acl.Match, func(a, b *p4v1.FieldMatch) int { return int(a.GetFieldId()) - int(b.GetFieldId()) })
	if !proto.Equal(got, acl) {
		t.Fatalf("acl entry read back as %v, want %v", got, acl)
	}
	got = readOne(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{
		TableId: route.TableId, Match: route.Match, MeterConfig: &p4v1.MeterConfig{}}}}).GetTableEntry()
	if !proto.Equal(got.GetMeterConfig(), route.MeterConfig) {
		t.Fatalf("direct meter read back as %v", got.GetMeterConfig())
	}
	// Resetting the direct meter keeps the entry forwarding.
	modify(t, c, &p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{
		TableEntry: &p4v1.TableEntry{TableId: route.TableId, Match: route.Match}}}})
	send("10.0.2.5", 64, "after-meter-reset")
	if f := h2.next(t); !bytesContains(f, "after-meter-reset") {
		t.Fatalf("port 2 got %x", f)
	}

	// Indexed meter.
	mc := &p4v1.MeterConfig{Cir: 125000, Cburst: 1500, Pir: 250000, Pburst: 3000}
	modify(t, c, &p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: &p4v1.MeterEntry{
		MeterId: meterID(info, "MyIngress.port_meter"), Index: &p4v1.Index{Index: 3}, Config: mc}}})
	if got, err := c.ReadMeterEntry(ctx, "MyIngress.port_meter", 3); err != nil || !proto.Equal(got, mc) {
		t.Fatalf("port_meter[3] = %v, %v", got, err)
	}

	// Registers: the pipeline wrote seen[1] = 1; a controller write reads back.
	reg := registerID(info, "MyIngress.seen")
	cell := func(i int64) []byte {
		return readOne(t, c, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
			RegisterId: reg, Index: &p4v1.Index{Index: i}}}}).GetRegisterEntry().GetData().GetBitstring()
	}
	if v := cell(1); len(v) != 1 || v[0] != 1 {
		t.Fatalf("seen[1] = %x, want 01", v)
	}
	modify(t, c, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
		RegisterId: reg, Index: &p4v1.Index{Index: 9},
		Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{0x12, 0x34, 0x56}}}}}})
	if v := cell(9); string(v) != "\x12\x34\x56" {
		t.Fatalf("seen[9] = %x", v)
	}

	// Default action: dmac's default becomes drop, then the program's again.
	dmac := c.NewTableEntry("MyIngress.dmac", nil, c.NewTableActionDirect("MyIngress.drop", nil), nil)
	modify(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: dmac}})
	def := readOne(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{
		TableId: dmac.TableId, IsDefaultAction: true}}}).GetTableEntry()
	if def.GetAction().GetAction().GetActionId() != dmac.GetAction().GetAction().GetActionId() {
		t.Fatalf("dmac default %v", def)
	}
	modify(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: dmac.TableId, IsDefaultAction: true}}})
	def = readOne(t, c, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{
		TableId: dmac.TableId, IsDefaultAction: true}}}).GetTableEntry()
	if a := def.GetAction().GetAction(); len(a.GetParams()) != 1 || string(a.GetParams()[0].GetValue()) != "\x01" {
		t.Fatalf("dmac default after reset %v, want flood(1)", def)
	}

	// Wrong widths and unknown ids are refused before the engine.
	bad := c.NewTableEntry("MyIngress.ipv4_lpm", map[string]client.MatchInterface{
		"meta.vrf":     &client.ExactMatch{Value: []byte{1, 2, 3}},
		"hdr.ipv4.dst": &client.LpmMatch{Value: ip4("10.0.3.0"), PLen: 24},
	}, c.NewTableActionDirect("MyIngress.route", [][]byte{hostMAC[2], {2}}), nil)
	wantUpdateCode(t, c.InsertTableEntry(ctx, bad), codes.InvalidArgument)
	bad = proto.Clone(route).(*p4v1.TableEntry)
	bad.TableId = 12345
	wantUpdateCode(t, c.InsertTableEntry(ctx, bad), codes.NotFound)

	// acl holds 256 entries (one is in): the 257th is RESOURCE_EXHAUSTED.
	for i := 0; i < 255; i++ {
		e := c.NewTableEntry("MyIngress.acl", map[string]client.MatchInterface{
			"hdr.ipv4.src": &client.TernaryMatch{Value: []byte{10, 1, byte(i >> 8), byte(i)}, Mask: []byte{0xff, 0xff, 0xff, 0xff}},
		}, c.NewTableActionDirect("MyIngress.acl_permit", nil), &client.TableEntryOptions{Priority: 1})
		if err := c.InsertTableEntry(ctx, e); err != nil {
			t.Fatalf("acl entry %d: %v", i, err)
		}
	}
	full := c.NewTableEntry("MyIngress.acl", map[string]client.MatchInterface{
		"hdr.ipv4.src": &client.TernaryMatch{Value: ip4("10.2.0.0"), Mask: []byte{0xff, 0xff, 0, 0}},
	}, c.NewTableActionDirect("MyIngress.acl_permit", nil), &client.TableEntryOptions{Priority: 1})
	wantUpdateCode(t, c.InsertTableEntry(ctx, full), codes.ResourceExhausted)
}

func bytesContains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }
