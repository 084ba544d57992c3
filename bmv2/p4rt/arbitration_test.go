package p4rt

import (
	"context"
	"io"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
)

func TestArbitrationWithClient(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c1, ok := e.connect(1, "")
	if !ok {
		t.Fatal("first client is not primary")
	}
	b := testBundle(t)
	if _, err := c1.SetFwdPipeFromBytes(ctx, b.Encode(), testInfoText(t, b), 1); err != nil {
		t.Fatal(err)
	}
	// A higher election id takes over; the old primary is told it is a backup.
	c2, ok := e.connect(2, "")
	if !ok {
		t.Fatal("higher election id is not primary")
	}
	if c1.nextArb(t) {
		t.Fatal("old primary still primary")
	}
	// Only the primary may write.
	wantCode(t, c1.InsertMulticastGroup(ctx, 1, []uint32{1}), codes.PermissionDenied)
	if err := c2.InsertMulticastGroup(ctx, 1, []uint32{1}); err != nil {
		t.Fatal(err)
	}
	// A lower election id joins as a backup; reads are allowed to anyone.
	c0, ok := e.connect(4, "r")
	if !ok {
		t.Fatal("first client of role r is not its primary")
	}
	cb, ok := e.connect(0, "")
	if ok {
		t.Fatal("election id 0 below the primary is primary")
	}
	if es, err := cb.ReadTableEntryWildcard(ctx, "MyIngress.dmac"); err != nil || len(es) != 0 {
		t.Fatalf("backup read: %v", err)
	}
	// The primary disconnects: the highest remaining client takes over.
	c2.close()
	if !c1.nextArb(t) {
		t.Fatal("c1 not promoted after the primary left")
	}
	if cb.nextArb(t) {
		t.Fatal("c0 promoted instead of c1")
	}
	if err := c1.DeleteMulticastGroup(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// A write with a stale election id is refused even from a connected client.
	_, err := c1.Write(ctx, &p4v1.WriteRequest{DeviceId: devID, ElectionId: &p4v1.Uint128{Low: 2}})
	wantCode(t, err, codes.PermissionDenied)
	_, err = c1.Write(ctx, &p4v1.WriteRequest{DeviceId: devID})
	wantCode(t, err, codes.PermissionDenied)
	_, err = c1.Write(ctx, &p4v1.WriteRequest{DeviceId: 5, ElectionId: c1.eid})
	wantCode(t, err, codes.NotFound)
	// Roles are separate arbitration domains: role r's primary cannot write as role "".
	_, err = c0.Write(ctx, &p4v1.WriteRequest{DeviceId: devID, ElectionId: c0.eid})
	wantCode(t, err, codes.PermissionDenied)
	if _, err := c0.Write(ctx, &p4v1.WriteRequest{DeviceId: devID, ElectionId: c0.eid, Role: "r"}); err != nil {
		t.Fatal(err)
	}
}

// rawStream opens a StreamChannel without the client library, to check codes.
type rawStream struct {
	s p4v1.P4Runtime_StreamChannelClient
}

func (e *env) raw(t *testing.T) *rawStream {
	conn := e.dial()
	t.Cleanup(func() { conn.Close() })
	s, err := p4v1.NewP4RuntimeClient(conn).StreamChannel(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &rawStream{s: s}
}

func (r *rawStream) arb(t *testing.T, dev uint64, role string, eid *p4v1.Uint128) {
	t.Helper()
	var ro *p4v1.Role
	if role != "" {
		ro = &p4v1.Role{Name: role}
	}
	if err := r.s.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: &p4v1.MasterArbitrationUpdate{
		DeviceId: dev, ElectionId: eid, Role: ro}}}); err != nil {
		t.Fatal(err)
	}
}

// answer reads the next arbitration answer and returns its status code and election id.
func (r *rawStream) answer(t *testing.T) (codes.Code, uint64) {
	t.Helper()
	m, err := r.s.Recv()
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	a := m.GetArbitration()
	if a == nil {
		t.Fatalf("not an arbitration answer: %v", m)
	}
	return codes.Code(a.GetStatus().GetCode()), a.GetElectionId().GetLow()
}

func (r *rawStream) closedWith(t *testing.T) codes.Code {
	t.Helper()
	for {
		_, err := r.s.Recv()
		if err == io.EOF {
			return codes.OK
		}
		if err != nil {
			return code(err)
		}
	}
}

func TestArbitrationCodes(t *testing.T) {
	e := newEnv(t)
	// No election id: a backup, and with nobody else there is no primary.
	a := e.raw(t)
	a.arb(t, devID, "", nil)
	if c, _ := a.answer(t); c != codes.NotFound {
		t.Fatalf("no primary: %v", c)
	}
	b := e.raw(t)
	b.arb(t, devID, "", &p4v1.Uint128{Low: 5})
	if c, id := b.answer(t); c != codes.OK || id != 5 {
		t.Fatalf("primary: %v %d", c, id)
	}
	if c, id := a.answer(t); c != codes.AlreadyExists || id != 5 {
		t.Fatalf("backup told of new primary: %v %d", c, id)
	}
	// A backup learns the primary's election id.
	c := e.raw(t)
	c.arb(t, devID, "", &p4v1.Uint128{Low: 3})
	if code, id := c.answer(t); code != codes.AlreadyExists || id != 5 {
		t.Fatalf("backup: %v %d", code, id)
	}
	// A duplicate election id is refused and the stream closed.
	d := e.raw(t)
	d.arb(t, devID, "", &p4v1.Uint128{Low: 5})
	if got := d.closedWith(t); got != codes.InvalidArgument {
		t.Fatalf("duplicate election id: %v", got)
	}
	// The same stream can raise its election id and take over.
	c.arb(t, devID, "", &p4v1.Uint128{Low: 9})
	if code, id := c.answer(t); code != codes.OK || id != 9 {
		t.Fatalf("raised: %v %d", code, id)
	}
	if code, id := b.answer(t); code != codes.AlreadyExists || id != 9 {
		t.Fatalf("demoted: %v %d", code, id)
	}
	// Changing role on a stream is refused.
	c.arb(t, devID, "other", &p4v1.Uint128{Low: 9})
	if got := c.closedWith(t); got != codes.FailedPrecondition {
		t.Fatalf("role change: %v", got)
	}
	// That closed the primary's stream: b (5) is the highest left.
	if code, id := b.answer(t); code != codes.OK || id != 5 {
		t.Fatalf("after primary left: %v %d", code, id)
	}
	// Wrong device id.
	w := e.raw(t)
	w.arb(t, 77, "", &p4v1.Uint128{Low: 1})
	if got := w.closedWith(t); got != codes.NotFound {
		t.Fatalf("wrong device: %v", got)
	}
	// A packet-out before arbitration.
	p := e.raw(t)
	p.s.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: &p4v1.PacketOut{}}})
	if got := p.closedWith(t); got != codes.FailedPrecondition {
		t.Fatalf("packet before arbitration: %v", got)
	}
	// a heard of both primary changes.
	if code, id := a.answer(t); code != codes.AlreadyExists || id != 9 {
		t.Fatalf("a after raise: %v %d", code, id)
	}
	if code, id := a.answer(t); code != codes.AlreadyExists || id != 5 {
		t.Fatalf("a after role change: %v %d", code, id)
	}
	// The last primary leaves: the backup without an election id hears there is none.
	b.s.CloseSend()
	if got := b.closedWith(t); got != codes.OK {
		t.Fatalf("close: %v", got)
	}
	if code, id := a.answer(t); code != codes.NotFound || id != 9 {
		t.Fatalf("no primary left: %v %d", code, id)
	}
}

// TestSlowClientDoesNotBlock: a primary that never reads its stream loses
// packet-ins (its queue is bounded) but blocks neither the data plane nor
// arbitration nor writes.
func TestSlowClientDoesNotBlock(t *testing.T) {
	e := newEnv(t)
	c := e.primaryWithPipeline()
	slow := e.raw(t)
	slow.arb(t, devID, "", &p4v1.Uint128{Low: 20})
	if c.nextArb(t) {
		t.Fatal("c still primary")
	}
	frame := make([]byte, 1024)
	for i := 0; i < 5000; i++ {
		e.dev.EmitPacketIn(frame) // must return although nobody reads
	}
	// A new primary still gets its arbitration answer and can write.
	c2, ok := e.connect(30, "")
	if !ok {
		t.Fatal("new primary not answered")
	}
	if err := c2.InsertMulticastGroup(context.Background(), 3, []uint32{1}); err != nil {
		t.Fatal(err)
	}
}
