package p4rt

import (
	"bytes"
	"context"
	"testing"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
)

func TestCountersMetersRegisters(t *testing.T) {
	e := newEnv(t)
	c := e.primaryWithPipeline()
	ctx := context.Background()
	n := names{e.srv.Pipeline().P4Info}
	cnt := n.id("counter", "MyIngress.port_counter")
	// The data plane counts; the controller reads one cell and the wildcard.
	e.dev.AddCounter(cnt, 3, 2, 128)
	d, err := c.ReadCounterEntry(ctx, "MyIngress.port_counter", 3)
	if err != nil || d.GetPacketCount() != 2 || d.GetByteCount() != 128 {
		t.Fatalf("counter: %v %v", d, err)
	}
	all, err := c.ReadCounterEntryWildcard(ctx, "MyIngress.port_counter")
	if err != nil || len(all) != 64 || all[3].GetByteCount() != 128 || all[4].GetByteCount() != 0 {
		t.Fatalf("wildcard: %d %v", len(all), err)
	}
	if err := c.ModifyCounterEntry(ctx, "MyIngress.port_counter", 3, &p4v1.CounterData{}); err != nil {
		t.Fatal(err)
	}
	if d, _ := c.ReadCounterEntry(ctx, "MyIngress.port_counter", 3); d.GetPacketCount() != 0 {
		t.Fatalf("reset: %v", d)
	}
	// A wildcard MODIFY (no index) writes every cell.
	if err := c.write(ctx, upd(p4v1.Update_MODIFY, &p4v1.CounterEntry{CounterId: cnt, Data: &p4v1.CounterData{PacketCount: 1}})); err != nil {
		t.Fatal(err)
	}
	if all, _ := c.ReadCounterEntryWildcard(ctx, "MyIngress.port_counter"); all[63].GetPacketCount() != 1 {
		t.Fatal("wildcard modify")
	}
	// Meters: configured, read back, reset; unconfigured cells have no config.
	mcfg := &p4v1.MeterConfig{Cir: 1000, Cburst: 100, Pir: 2000, Pburst: 200}
	if err := c.write(ctx, upd(p4v1.Update_MODIFY, &p4v1.MeterEntry{MeterId: n.id("meter", "MyIngress.port_meter"), Index: &p4v1.Index{Index: 2}, Config: mcfg})); err != nil {
		t.Fatal(err)
	}
	m, err := c.ReadMeterEntry(ctx, "MyIngress.port_meter", 2)
	if err != nil || m.GetPir() != 2000 {
		t.Fatalf("meter: %v %v", m, err)
	}
	ms, err := c.ReadMeterEntryWildcard(ctx, "MyIngress.port_meter")
	if err != nil || len(ms) != 32 || ms[0].GetConfig() != nil {
		t.Fatalf("meter wildcard: %d %v", len(ms), err)
	}
	// Registers (bmv2 answers UNIMPLEMENTED here; this target serves them).
	reg := n.id("register", "MyIngress.seen")
	if err := c.WriteUpdate(ctx, upd(p4v1.Update_MODIFY, &p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 5},
		Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{0, 0, 1, 2}}}})); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadEntitySingle(ctx, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 5}}}})
	if err != nil || !bytes.Equal(got.GetRegisterEntry().GetData().GetBitstring(), []byte{1, 2}) {
		t.Fatalf("register: %v %v", got, err)
	}
	regs := c.read(t, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{}}})
	if len(regs) != 16 {
		t.Fatalf("register wildcard: %d", len(regs))
	}
	// Everything at once: one wildcard read per kind in one request.
	mixed := c.read(t,
		&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{}}},
		&p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: &p4v1.MeterEntry{}}},
	)
	if len(mixed) != 64+32 {
		t.Fatalf("mixed read: %d", len(mixed))
	}
}

func TestPRE(t *testing.T) {
	e := newEnv(t)
	c := e.primaryWithPipeline()
	ctx := context.Background()
	if err := c.InsertMulticastGroup(ctx, 7, []uint32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, updateErr(c.InsertMulticastGroup(ctx, 7, []uint32{1})), codes.AlreadyExists)
	if err := c.InsertCloneSession(ctx, 100, []uint32{255}, client.CloneSessionOptions{PacketLenBytes: 64}); err != nil {
		t.Fatal(err)
	}
	pre := func(ent *p4v1.PacketReplicationEngineEntry) []*p4v1.Entity {
		return c.read(t, &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: ent}})
	}
	groups := pre(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: &p4v1.MulticastGroupEntry{}}})
	if len(groups) != 1 || len(groups[0].GetPacketReplicationEngineEntry().GetMulticastGroupEntry().GetReplicas()) != 3 {
		t.Fatalf("groups: %v", groups)
	}
	if err := c.write(ctx, upd(p4v1.Update_MODIFY, &p4v1.MulticastGroupEntry{MulticastGroupId: 7, Replicas: []*p4v1.Replica{{EgressPort: 4}}})); err != nil {
		t.Fatal(err)
	}
	groups = pre(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: &p4v1.MulticastGroupEntry{MulticastGroupId: 7}}})
	if r := groups[0].GetPacketReplicationEngineEntry().GetMulticastGroupEntry().GetReplicas(); len(r) != 1 || r[0].GetEgressPort() != 4 {
		t.Fatalf("modified group: %v", r)
	}
	sessions := pre(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: &p4v1.CloneSessionEntry{}}})
	if len(sessions) != 1 || sessions[0].GetPacketReplicationEngineEntry().GetCloneSessionEntry().GetPacketLengthBytes() != 64 {
		t.Fatalf("sessions: %v", sessions)
	}
	if err := c.DeleteMulticastGroup(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteCloneSession(ctx, 100); err != nil {
		t.Fatal(err)
	}
	wantCode(t, updateErr(c.DeleteCloneSession(ctx, 100)), codes.NotFound)
	// The PRE does not depend on the program: it survives a pipeline push.
	if err := c.InsertMulticastGroup(ctx, 8, []uint32{1}); err != nil {
		t.Fatal(err)
	}
	b := testBundle(t)
	if _, err := c.SetFwdPipeFromBytes(ctx, b.Encode(), testInfoText(t, b), 9); err != nil {
		t.Fatal(err)
	}
	if g := pre(&p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: &p4v1.MulticastGroupEntry{}}}); len(g) != 1 {
		t.Fatalf("groups after push: %v", g)
	}
}

// updateErr turns a one-update batch error into its update's status error.
func updateErr(err error) error {
	if errs := UpdateErrors(err); len(errs) == 1 && errs[0] != nil {
		return errs[0].Err()
	}
	return err
}

func TestPacketIO(t *testing.T) {
	e := newEnv(t)
	c := e.primaryWithPipeline()
	ctx := context.Background()
	// PacketOut with packet_out metadata comes back (MemDevice loopback) as a
	// PacketIn whose packet_in metadata decodes from the same bits.
	po := &p4v1.PacketOut{Payload: []byte("hello"), Metadata: []*p4v1.PacketMetadata{
		{MetadataId: 1, Value: []byte{1, 2}}, {MetadataId: 2, Value: []byte{0}}}}
	if err := c.SendPacketOut(ctx, po); err != nil {
		t.Fatal(err)
	}
	m := c.next(t)
	pi := m.GetPacket()
	if pi == nil || string(pi.GetPayload()) != "hello" || !bytes.Equal(pi.GetMetadata()[0].GetValue(), []byte{1, 2}) || !bytes.Equal(pi.GetMetadata()[1].GetValue(), []byte{0}) {
		t.Fatalf("packet-in: %v", m)
	}
	// The data plane sends a frame to the CPU: ingress_port 5, reason 1.
	e.dev.EmitPacketIn(append([]byte{0x02, 0x81}, "frame"...))
	pi = c.next(t).GetPacket()
	if string(pi.GetPayload()) != "frame" || !bytes.Equal(pi.GetMetadata()[0].GetValue(), []byte{5}) || !bytes.Equal(pi.GetMetadata()[1].GetValue(), []byte{1}) {
		t.Fatalf("packet-in from the data plane: %v", pi)
	}
	// Bad metadata: a stream error carrying the packet, nothing injected.
	before := e.dev.PacketOuts()
	if err := c.SendPacketOut(ctx, &p4v1.PacketOut{Payload: []byte("x"), Metadata: []*p4v1.PacketMetadata{{MetadataId: 1, Value: []byte{4, 0}}}}); err != nil {
		t.Fatal(err)
	}
	se := c.next(t).GetError()
	if codes.Code(se.GetCanonicalCode()) != codes.InvalidArgument || string(se.GetPacketOut().GetPacketOut().GetPayload()) != "x" {
		t.Fatalf("stream error: %v", se)
	}
	if e.dev.PacketOuts() != before {
		t.Fatal("invalid packet-out injected")
	}
	// A backup may not send packets and does not receive packet-ins.
	bk, _ := e.connect(2, "")
	if err := bk.SendPacketOut(ctx, po); err != nil {
		t.Fatal(err)
	}
	if se := bk.next(t).GetError(); codes.Code(se.GetCanonicalCode()) != codes.PermissionDenied {
		t.Fatalf("backup packet-out: %v", se)
	}
	e.dev.EmitPacketIn([]byte{0, 0, 1})
	if pi := c.next(t).GetPacket(); pi == nil {
		t.Fatal("primary lost a packet-in")
	}
	bk.none(t)
	// Idle-timeout notifications go to the primary too.
	key := &p4v1.TableEntry{TableId: names{e.srv.Pipeline().P4Info}.table("MyIngress.dmac"), Match: []*p4v1.FieldMatch{exact(1, 1)}}
	e.dev.EmitIdleTimeout(key)
	if n := c.next(t).GetIdleTimeoutNotification(); len(n.GetTableEntry()) != 1 || n.GetTableEntry()[0].GetTableId() != key.GetTableId() {
		t.Fatalf("idle timeout: %v", n)
	}
}

func TestDigests(t *testing.T) {
	e := newEnv(t)
	c := e.primaryWithPipeline()
	ctx := context.Background()
	n := names{e.srv.Pipeline().P4Info}
	dig := n.id("digest", "learn_t")
	learn := func(src byte, port byte) *p4v1.P4Data {
		return &p4v1.P4Data{Data: &p4v1.P4Data_Struct{Struct: &p4v1.P4StructLike{Members: []*p4v1.P4Data{
			{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{src}}}, {Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{port}}}}}}}
	}
	// Not configured: dropped.
	e.dev.EmitDigest(dig, learn(1, 1))
	if e.srv.OutstandingDigestLists() != 0 {
		t.Fatal("digest sent without a config")
	}
	// Lists of two, no timeout-based flush (a very long max timeout).
	if err := c.EnableDigest(ctx, "learn_t", &p4v1.DigestEntry_Config{MaxListSize: 2, MaxTimeoutNs: int64(1e12)}); err != nil {
		t.Fatal(err)
	}
	cfgs := c.read(t, &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{}}})
	if len(cfgs) != 1 || cfgs[0].GetDigestEntry().GetConfig().GetMaxListSize() != 2 {
		t.Fatalf("digest config read: %v", cfgs)
	}
	e.dev.EmitDigest(dig, learn(1, 1))
	e.dev.EmitDigest(dig, learn(1, 1)) // same data in the pending list: suppressed
	e.dev.EmitDigest(dig, learn(2, 1))
	dl := c.next(t).GetDigest()
	if dl.GetDigestId() != dig || len(dl.GetData()) != 2 || dl.GetListId() == 0 {
		t.Fatalf("digest list: %v", dl)
	}
	// Outstanding data is not sent again until acked.
	e.dev.EmitDigest(dig, learn(1, 1))
	e.dev.EmitDigest(dig, learn(2, 1))
	if e.srv.OutstandingDigestLists() != 1 {
		t.Fatal("duplicate data started a new list")
	}
	if err := c.AckDigestList(ctx, dl); err != nil {
		t.Fatal(err)
	}
	// An ack of an unknown list is a stream error.
	if err := c.AckDigestList(ctx, &p4v1.DigestList{DigestId: dig, ListId: 999}); err != nil {
		t.Fatal(err)
	}
	if se := c.next(t).GetError(); codes.Code(se.GetCanonicalCode()) != codes.NotFound || se.GetDigestListAck().GetDigestListAck().GetListId() != 999 {
		t.Fatalf("bad ack: %v", se)
	}
	// After the ack (which the stream processed before the bad ack's error) the data flows again.
	e.dev.EmitDigest(dig, learn(1, 1))
	e.dev.EmitDigest(dig, learn(3, 1))
	if dl2 := c.next(t).GetDigest(); len(dl2.GetData()) != 2 || dl2.GetListId() == dl.GetListId() {
		t.Fatalf("after ack: %v", dl2)
	}
	// max_list_size 1 (or 0) sends every digest at once.
	if err := c.ModifyDigest(ctx, "learn_t", &p4v1.DigestEntry_Config{MaxListSize: 1}); err != nil {
		t.Fatal(err)
	}
	e.dev.EmitDigest(dig, learn(9, 9))
	if dl3 := c.next(t).GetDigest(); len(dl3.GetData()) != 1 {
		t.Fatalf("list of one: %v", dl3)
	}
	if err := c.DisableDigest(ctx, "learn_t"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, updateErr(c.DisableDigest(ctx, "learn_t")), codes.NotFound)
}
