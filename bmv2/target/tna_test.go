package target

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"

	"github.com/netlock-go/netlock/bmv2/p4rt"
)

// pushTNA pushes testdata/tna_l2.p4 (a TNA program) as the pipeline and returns its P4Info.
func pushTNA(t *testing.T, c *ctl) *p4configv1.P4Info {
	t.Helper()
	b, err := p4rt.BundleFromFS(os.DirFS("testdata"), "tna_l2.p4")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	text, err := prog.P4InfoTextCompat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetFwdPipeFromBytes(context.Background(), b.Encode(), []byte(text), 1); err != nil {
		t.Fatal(err)
	}
	info, err := prog.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func l2Frame(dst, src []byte, payload string) []byte {
	f := append(append(append([]byte(nil), dst...), src...), 0x88, 0xb5)
	return append(f, payload...)
}

// TestControllerTNA drives a TNA program over P4Runtime as TestControllerL3 drives a v1model
// one: pipeline push (P4Info in bf-p4c's standard form), table writes, forwarding through
// ingress and egress, digests, packet-in and packet-out, counters and a register.
func TestControllerTNA(t *testing.T) {
	r := newRig(t, Options{})
	c := r.connect(t)
	ctx := context.Background()
	info := pushTNA(t, c)
	rxFrames := registerID(info, "SwitchIngress.rx_frames")
	if rxFrames == 0 {
		t.Fatal("no register SwitchIngress.rx_frames in the P4Info")
	}
	h1, h2, h3 := r.hosts[1], r.hosts[2], r.hosts[3]
	cpuMAC := []byte{0x02, 0, 0, 0, 0, 0xcc}

	fwd := func(mac []byte, p byte) *p4v1.TableEntry {
		return c.NewTableEntry("SwitchIngress.dmac",
			map[string]client.MatchInterface{"hdr.ethernet.dst": &client.ExactMatch{Value: mac}},
			c.NewTableActionDirect("SwitchIngress.forward", [][]byte{{0, p}}), nil)
	}
	for i, e := range []*p4v1.TableEntry{
		fwd(hostMAC[1], 1), fwd(hostMAC[2], 2), fwd(hostMAC[3], 3),
		c.NewTableEntry("SwitchIngress.dmac",
			map[string]client.MatchInterface{"hdr.ethernet.dst": &client.ExactMatch{Value: cpuMAC}},
			c.NewTableActionDirect("SwitchIngress.to_cpu", nil), nil),
		c.NewTableEntry("SwitchIngress.smac",
			map[string]client.MatchInterface{"hdr.ethernet.src": &client.ExactMatch{Value: hostMAC[1]}},
			c.NewTableActionDirect("NoAction", nil), nil),
	} {
		if err := c.InsertTableEntry(ctx, e); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if err := c.EnableDigest(ctx, "SwitchIngressDeparser.learn", &p4v1.DigestEntry_Config{MaxListSize: 1}); err != nil {
		t.Fatal(err)
	}

	// A known source: forwarded through egress, no digest.
	f := l2Frame(hostMAC[2], hostMAC[1], "one-to-two")
	if err := h1.p.Send(f); err != nil {
		t.Fatal(err)
	}
	if got := h2.next(t); !bytes.Equal(got, f) {
		t.Fatalf("port 2 got %x, want %x", got, f)
	}
	// An unknown source is learned: forwarded, and a digest (src, port) reaches the controller.
	f = l2Frame(hostMAC[1], hostMAC[3], "three-to-one")
	if err := h3.p.Send(f); err != nil {
		t.Fatal(err)
	}
	if got := h1.next(t); !bytes.Equal(got, f) {
		t.Fatalf("port 1 got %x, want %x", got, f)
	}
	dl := c.next(t).GetDigest()
	if dl == nil || len(dl.Data) != 1 {
		t.Fatalf("want one digest list entry, got %v", dl)
	}
	mem := dl.Data[0].GetStruct().GetMembers()
	if len(mem) != 2 || !bytes.Equal(mem[0].GetBitstring(), canonical(hostMAC[3])) || !bytes.Equal(mem[1].GetBitstring(), []byte{3}) {
		t.Fatalf("digest data %v", dl.Data[0])
	}
	// An unknown destination is dropped (drop_ctl); the next frame from the same port
	// arrives first.
	if err := h1.p.Send(l2Frame([]byte{2, 9, 9, 9, 9, 9}, hostMAC[1], "nowhere")); err != nil {
		t.Fatal(err)
	}
	f = l2Frame(hostMAC[3], hostMAC[1], "one-to-three")
	if err := h1.p.Send(f); err != nil {
		t.Fatal(err)
	}
	if got := h3.next(t); !bytes.Equal(got, f) {
		t.Fatalf("port 3 got %x, want %x", got, f)
	}

	// Packet-in: the frame with the packet_in header (ingress port 2, 9 bits + 7 of padding).
	if err := h2.p.Send(l2Frame(cpuMAC, hostMAC[1], "to-cpu")); err != nil {
		t.Fatal(err)
	}
	m := c.next(t)
	pin := m.GetPacket()
	if pin == nil {
		t.Fatalf("want a packet-in, got %v", m)
	}
	if len(pin.Metadata) != 2 || !bytes.Equal(pin.Metadata[0].Value, []byte{2}) {
		t.Fatalf("packet-in metadata %v", pin.Metadata)
	}
	if want := l2Frame(cpuMAC, hostMAC[1], "to-cpu"); !bytes.Equal(pin.Payload, want) {
		t.Fatalf("packet-in payload %x, want %x", pin.Payload, want)
	}
	// Packet-out to port 3: the frame leaves port 3 without the packet_out header.
	out := l2Frame(hostMAC[3], cpuMAC, "from-controller")
	if err := c.SendPacketOut(ctx, &p4v1.PacketOut{Payload: out, Metadata: []*p4v1.PacketMetadata{
		{MetadataId: 1, Value: []byte{3}}, {MetadataId: 2, Value: []byte{0}},
	}}); err != nil {
		t.Fatal(err)
	}
	if got := h3.next(t); !bytes.Equal(got, out) {
		t.Fatalf("packet-out arrived as %x, want %x", got, out)
	}

	// Counters (ingress and egress) and the register the RegisterAction updates.
	for p, want := range map[int64]int64{1: 3, 2: 1, 3: 1} {
		cd, err := c.ReadCounterEntry(ctx, "SwitchIngress.rx_port", p)
		if err != nil {
			t.Fatal(err)
		}
		if cd.PacketCount != want {
			t.Errorf("rx_port[%d] = %d packets, want %d", p, cd.PacketCount, want)
		}
		reg, err := c.ReadEntitySingle(ctx, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
			RegisterId: rxFrames, Index: &p4v1.Index{Index: p}}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := reg.GetRegisterEntry().GetData().GetBitstring(); !bytes.Equal(got, []byte{byte(want)}) {
			t.Errorf("rx_frames[%d] = %x, want %d", p, got, want)
		}
	}
	// Egress counted the three frames that went through it (bypassed ones did not).
	for p, want := range map[int64]int64{1: 1, 2: 1, 3: 1, 255: 0} {
		cd, err := c.ReadCounterEntry(ctx, "SwitchEgress.tx_port", p)
		if err != nil {
			t.Fatal(err)
		}
		if cd.PacketCount != want {
			t.Errorf("tx_port[%d] = %d packets, want %d", p, cd.PacketCount, want)
		}
	}
	// The pair register travels as a struct (frames, last_len); port 1 saw three frames of
	// type 88b5.
	pairs := registerID(info, "SwitchIngress.port_pairs")
	pairEntity := func(i int64, d *p4v1.P4Data) *p4v1.Entity {
		return &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{RegisterId: pairs, Index: &p4v1.Index{Index: i}, Data: d}}}
	}
	structOf := func(a, b []byte) *p4v1.P4Data {
		return &p4v1.P4Data{Data: &p4v1.P4Data_Struct{Struct: &p4v1.P4StructLike{Members: []*p4v1.P4Data{
			{Data: &p4v1.P4Data_Bitstring{Bitstring: a}}, {Data: &p4v1.P4Data_Bitstring{Bitstring: b}}}}}}
	}
	pe, err := c.ReadEntitySingle(ctx, pairEntity(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := pe.GetRegisterEntry().GetData(); !proto.Equal(got, structOf([]byte{3}, []byte{0x88, 0xb5})) {
		t.Errorf("port_pairs[1] = %v, want {3, 0x88b5}", got)
	}
	if err := c.WriteUpdate(ctx, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: pairEntity(7, structOf([]byte{5}, []byte{1, 0, 0, 0}))}); err != nil {
		t.Fatal(err)
	}
	if pe, err := c.ReadEntitySingle(ctx, pairEntity(7, nil)); err != nil || !proto.Equal(pe.GetRegisterEntry().GetData(), structOf([]byte{5}, []byte{1, 0, 0, 0})) {
		t.Errorf("port_pairs[7] after the write: %v %v", pe, err)
	}
	// A bitstring, or a member too wide for its field, is refused.
	if err := c.WriteUpdate(ctx, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: pairEntity(7, &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{1}}})}); err == nil {
		t.Error("a bitstring for a pair register was accepted")
	}
	if err := c.WriteUpdate(ctx, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: pairEntity(7, structOf([]byte{1, 0, 0, 0, 0}, []byte{1}))}); err == nil {
		t.Error("a 33-bit member was accepted")
	}

	// A register write from the controller is what the next packet's RegisterAction sees.
	if err := c.WriteUpdate(ctx, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
		RegisterId: rxFrames, Index: &p4v1.Index{Index: 2},
		Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{0x10}}}}}}}); err != nil {
		t.Fatal(err)
	}
	f = l2Frame(hostMAC[1], hostMAC[2], "two-to-one")
	if err := h2.p.Send(f); err != nil {
		t.Fatal(err)
	}
	h1.next(t)
	r.dev.mu.Lock()
	reg, err := r.dev.sw.Register("SwitchIngress.rx_frames")
	var v []byte
	if err == nil {
		v, err = reg.Read(2)
	}
	r.dev.mu.Unlock()
	if err != nil || !bytes.Equal(v, []byte{0, 0, 0, 0x11}) {
		t.Fatalf("rx_frames[2] = %x (%v), want 0x11", v, err)
	}
}
