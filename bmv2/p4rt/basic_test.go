package p4rt

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
)

func TestBundleRoundTrip(t *testing.T) {
	b := testBundle(t)
	got, err := ParseBundle(b.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 2 || got.Main() != "l2l3.p4" || !bytes.Equal(got.Files[1].Data, b.Files[1].Data) {
		t.Fatalf("round trip changed the bundle: %v", got.Main())
	}
	if _, err := got.Compile(); err != nil {
		t.Fatal(err)
	}
	bare, err := ParseBundle([]byte("#include <core.p4>\n"))
	if err != nil || bare.Main() != "main.p4" {
		t.Fatalf("bare source: %v %v", bare, err)
	}
	for _, bad := range []string{
		"",
		"  \n",
		BundleMagic,
		BundleMagic + "file a.p4 10\nshort\n",
		BundleMagic + "file ../a.p4 1\nx\n",
		BundleMagic + "file /a.p4 1\nx\n",
		BundleMagic + "file a.p4 1\nx\nfile a.p4 1\ny\n",
		BundleMagic + "blob a.p4 1\nx\n",
		BundleMagic + "file a.p4 -1\nx\n",
		BundleMagic + "file a.p4 1\nxy",
	} {
		if _, err := ParseBundle([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestCanonical(t *testing.T) {
	for _, tc := range []struct {
		in    []byte
		width int
		want  []byte
		bad   bool
	}{
		{in: []byte{0}, width: 9, want: []byte{0}},
		{in: []byte{0, 0}, width: 9, want: []byte{0}},
		{in: []byte{1, 0xff}, width: 9, want: []byte{1, 0xff}},
		{in: []byte{0, 5}, width: 9, want: []byte{5}},
		{in: []byte{2, 0}, width: 9, bad: true},
		{in: []byte{0, 0, 5}, width: 9, bad: true},
		{in: []byte{}, width: 8, bad: true},
		{in: []byte{0x80}, width: 7, bad: true},
		{in: []byte{0x7f}, width: 7, want: []byte{0x7f}},
		{in: []byte{0, 0, 0, 0, 0, 1}, width: 48, want: []byte{1}},
	} {
		got, err := Canonical(tc.in, tc.width)
		if tc.bad != (err != nil) || !bytes.Equal(got, tc.want) {
			t.Errorf("Canonical(%x, %d) = %x, %v", tc.in, tc.width, got, err)
		}
	}
}

func TestPacketHeaderCodec(t *testing.T) {
	b := testBundle(t)
	p, err := VerifyConfig(&p4v1.ForwardingPipelineConfig{P4Info: mustInfo(t, b), P4DeviceConfig: b.Encode()})
	if err != nil {
		t.Fatal(err)
	}
	sch := newSchema(p.P4Info)
	po := &p4v1.PacketOut{Payload: []byte("payload"), Metadata: []*p4v1.PacketMetadata{
		{MetadataId: 2, Value: []byte{0x55}}, {MetadataId: 1, Value: []byte{1, 0x2c}}, // egress_port 300, pad 0x55
	}}
	frame, err := EncodePacketOut(sch.packetOut, po)
	if err != nil {
		t.Fatal(err)
	}
	// 9 bits 100101100 then 7 bits 1010101: 1001 0110 | 0101 0101
	if !bytes.Equal(frame[:2], []byte{0x96, 0x55}) || string(frame[2:]) != "payload" {
		t.Fatalf("frame %x", frame)
	}
	pi, err := DecodePacketIn(sch.packetIn, frame)
	if err != nil {
		t.Fatal(err)
	}
	if string(pi.Payload) != "payload" || !bytes.Equal(pi.Metadata[0].Value, []byte{1, 0x2c}) || !bytes.Equal(pi.Metadata[1].Value, []byte{0x55}) {
		t.Fatalf("packet-in %v", pi)
	}
	if _, err := DecodePacketIn(sch.packetIn, []byte{1}); err == nil {
		t.Fatal("short packet-in accepted")
	}
	for _, md := range [][]*p4v1.PacketMetadata{
		{{MetadataId: 1, Value: []byte{1}}},                                       // pad missing
		{{MetadataId: 1, Value: []byte{1}}, {MetadataId: 2, Value: []byte{0x80}}}, // 8 bits in a 7-bit field
		{{MetadataId: 1, Value: []byte{1}}, {MetadataId: 1, Value: []byte{1}}},    // twice
		{{MetadataId: 1, Value: []byte{1}}, {MetadataId: 2, Value: []byte{0}}, {MetadataId: 9, Value: []byte{0}}},
	} {
		if _, err := EncodePacketOut(sch.packetOut, &p4v1.PacketOut{Metadata: md}); code(err) != codes.InvalidArgument {
			t.Errorf("metadata %v: %v", md, err)
		}
	}
}

func TestCapabilities(t *testing.T) {
	e := newEnv(t)
	conn := e.dial()
	defer conn.Close()
	resp, err := p4v1.NewP4RuntimeClient(conn).Capabilities(context.Background(), &p4v1.CapabilitiesRequest{})
	if err != nil || resp.GetP4RuntimeApiVersion() != APIVersion {
		t.Fatalf("%v %v", resp, err)
	}
}

func TestPipeline(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := testBundle(t)
	info := testInfoText(t, b)
	c, ok := e.connect(10, "")
	if !ok {
		t.Fatal("not primary")
	}
	// Nothing installed: writes and reads fail, Get answers an empty config.
	err := c.InsertMulticastGroup(ctx, 1, []uint32{1})
	wantCode(t, err, codes.FailedPrecondition)
	got, err := c.GetFwdPipe(ctx, client.GetFwdPipeAll)
	if err != nil || got.P4Info != nil {
		t.Fatalf("empty get: %v %v", got, err)
	}
	// COMMIT without a saved config.
	_, err = c.CommitFwdPipe(ctx)
	wantCode(t, err, codes.FailedPrecondition)
	// A P4Info that does not match the source.
	other := bytes.Replace(info, []byte(`name: "MyIngress.smac"`), []byte(`name: "MyIngress.smac2"`), 1)
	_, err = c.SetFwdPipeFromBytes(ctx, b.Encode(), other, 1)
	wantCode(t, err, codes.InvalidArgument)
	// Source that does not compile.
	_, err = c.SetFwdPipeFromBytes(ctx, []byte("control C() { apply { x = 1; } }"), info, 1)
	wantCode(t, err, codes.InvalidArgument)
	// A bundle missing its include.
	_, err = c.SetFwdPipeFromBytes(ctx, (&Bundle{Files: b.Files[:1]}).Encode(), info, 1)
	wantCode(t, err, codes.InvalidArgument)
	// VERIFY alone installs nothing.
	_, err = c.SetFwdPipeFromBytesWithAction(ctx, b.Encode(), info, 1, p4v1.SetForwardingPipelineConfigRequest_VERIFY)
	if err != nil || e.srv.Pipeline() != nil {
		t.Fatalf("VERIFY: %v", err)
	}
	// SAVE then COMMIT.
	if _, err := c.SaveFwdPipeFromBytes(ctx, b.Encode(), info, 5); err != nil {
		t.Fatal(err)
	}
	if e.srv.Pipeline() != nil {
		t.Fatal("VERIFY_AND_SAVE installed the pipeline")
	}
	if _, err := c.CommitFwdPipe(ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.srv.Pipeline(); p == nil || p.Cookie != 5 {
		t.Fatal("COMMIT did not install")
	}
	got, err = c.GetFwdPipe(ctx, client.GetFwdPipeAll)
	if err != nil || got.Cookie != 5 || got.P4Info == nil || !bytes.Equal(got.P4DeviceConfig, b.Encode()) {
		t.Fatalf("get: %v", err)
	}
	got, err = c.GetFwdPipe(ctx, client.GetFwdPipeCookieOnly)
	if err != nil || got.P4Info != nil || got.P4DeviceConfig != nil || got.Cookie != 5 {
		t.Fatalf("cookie only: %+v %v", got, err)
	}
	// An entry survives RECONCILE_AND_COMMIT of the same program and is gone
	// after VERIFY_AND_COMMIT.
	if err := c.InsertTableEntry(ctx, c.NewTableEntry("MyIngress.dmac",
		map[string]client.MatchInterface{"hdr.ethernet.dst": &client.ExactMatch{Value: mac(1)}},
		c.NewTableActionDirect("MyIngress.forward", [][]byte{{2}}), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetFwdPipeFromBytesWithAction(ctx, b.Encode(), info, 6, p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT); err != nil {
		t.Fatal(err)
	}
	if es, err := c.ReadTableEntryWildcard(ctx, "MyIngress.dmac"); err != nil || len(es) != 1 {
		t.Fatalf("after reconcile: %v %v", es, err)
	}
	if _, err := c.SetFwdPipeFromBytes(ctx, b.Encode(), info, 7); err != nil {
		t.Fatal(err)
	}
	if es, err := c.ReadTableEntryWildcard(ctx, "MyIngress.dmac"); err != nil || len(es) != 0 {
		t.Fatalf("after commit: %v %v", es, err)
	}
	// A backup may not set the pipeline; a wrong device id is NOT_FOUND.
	bk, ok := e.connect(3, "")
	if ok {
		t.Fatal("backup is primary")
	}
	_, err = bk.SetFwdPipeFromBytes(ctx, b.Encode(), info, 1)
	wantCode(t, err, codes.PermissionDenied)
	_, err = c.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{DeviceId: 99, ElectionId: c.eid,
		Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY})
	wantCode(t, err, codes.NotFound)
	_, err = c.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{DeviceId: devID, ElectionId: c.eid})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{DeviceId: devID, ElectionId: c.eid,
		Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT})
	wantCode(t, err, codes.InvalidArgument)
}

func mac(i byte) []byte { return []byte{0x02, 0, 0, 0, 0, i} }

func mustInfo(t testing.TB, b *Bundle) *p4configv1.P4Info {
	t.Helper()
	prog, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	info, err := prog.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestPipelineOtherPrograms pushes the front end's accepted test programs
// (read from bmv2/front/testdata, not copied) and checks that their P4Info
// objects can be read back.
func TestPipelineOtherPrograms(t *testing.T) {
	e := newEnv(t)
	c, ok := e.connect(10, "")
	if !ok {
		t.Fatal("not primary")
	}
	ctx := context.Background()
	for _, files := range [][]string{{"lockqueue.p4", "lockqueue.h.p4"}, {"features.p4"}, {"basic.p4"}} {
		b, err := BundleFromFS(os.DirFS("../front/testdata/accept"), files[0], files[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.SetFwdPipeFromBytes(ctx, b.Encode(), testInfoText(t, b), 1); err != nil {
			t.Fatalf("%s: %v", files[0], err)
		}
		// Wildcard reads of every kind work on every program.
		c.read(t,
			&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}},
			&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{IsDefaultAction: true}}},
			&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{}}},
			&p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: &p4v1.MeterEntry{}}},
			&p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{}}},
			&p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{}}},
			&p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{}}},
		)
	}
}

// TestReconcileChangedProgram: RECONCILE_AND_COMMIT to a changed program keeps
// the entries that still validate and drops the others.
func TestReconcileChangedProgram(t *testing.T) {
	e := newEnv(t)
	c := e.primaryWithPipeline()
	ctx := context.Background()
	if err := c.InsertTableEntry(ctx, c.NewTableEntry("MyIngress.dmac",
		map[string]client.MatchInterface{"hdr.ethernet.dst": &client.ExactMatch{Value: mac(1)}},
		c.NewTableActionDirect("MyIngress.forward", [][]byte{{2}}), nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertTableEntry(ctx, c.NewTableEntry("MyIngress.smac",
		map[string]client.MatchInterface{"hdr.ethernet.src": &client.ExactMatch{Value: mac(1)}},
		c.NewTableActionDirect("NoAction", nil), nil)); err != nil {
		t.Fatal(err)
	}
	// The new program renames forward (a new action id) and grows smac.
	b := testBundle(t)
	src := string(b.Files[0].Data)
	src = strings.ReplaceAll(src, "forward", "send_to")
	src = strings.Replace(src, "size = 1024;", "size = 2048;", 1)
	b.Files[0].Data = []byte(src)
	if _, err := c.SetFwdPipeFromBytesWithAction(ctx, b.Encode(), testInfoText(t, b), 2, p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT); err != nil {
		t.Fatal(err)
	}
	if es, err := c.ReadTableEntryWildcard(ctx, "MyIngress.smac"); err != nil || len(es) != 1 {
		t.Fatalf("smac after reconcile: %v %v", es, err)
	}
	if es, err := c.ReadTableEntryWildcard(ctx, "MyIngress.dmac"); err != nil || len(es) != 0 {
		t.Fatalf("dmac after reconcile: %v %v", es, err)
	}
}
