package p4rt

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"

	"github.com/netlock-go/netlock/internal/tlsconf"
	"github.com/netlock-go/netlock/internal/tlsconf/tlstest"
)

// secretEnv pushes testdata/secret.p4 from a primary controller and writes the default action
// set_cfg(key, ip); it returns the primary, the ids, and the key written.
func secretEnv(t *testing.T) (e *env, primary *ctl, tableID, actionID uint32, key []byte) {
	t.Helper()
	e = newEnv(t)
	primary, ok := e.connect(10, "")
	if !ok {
		t.Fatal("not primary")
	}
	b, err := BundleFromFS(os.DirFS("testdata"), "secret.p4")
	if err != nil {
		t.Fatal(err)
	}
	info := testInfoText(t, b)
	if _, err := primary.SetFwdPipeFromBytes(context.Background(), b.Encode(), info, 1); err != nil {
		t.Fatal(err)
	}
	sch := e.srv.sch
	for id, ti := range sch.tables {
		if ti.t.GetPreamble().GetName() == "I.cfg" {
			tableID = id
		}
	}
	for id, ai := range sch.actions {
		if ai.a.GetPreamble().GetName() == "I.set_cfg" {
			actionID = id
			if !ai.secret[1] || ai.secret[2] {
				t.Fatalf("secret parameters %v, want key (1) only: the P4Info lost the @secret annotation", ai.secret)
			}
		}
	}
	key = []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}
	entry := &p4v1.TableEntry{TableId: tableID, IsDefaultAction: true, Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{
		Action: &p4v1.Action{ActionId: actionID, Params: []*p4v1.Action_Param{{ParamId: 1, Value: key}, {ParamId: 2, Value: []byte{10, 0, 0, 1}}}}}}}
	if err := primary.ModifyTableEntry(context.Background(), entry); err != nil {
		t.Fatal(err)
	}
	return e, primary, tableID, actionID, key
}

// dialForTest opens a client connection that the test closes at its end.
func (e *env) dialForTest() *grpc.ClientConn {
	conn := e.dial()
	e.t.Cleanup(func() { conn.Close() })
	return conn
}

func readDefault(t *testing.T, c p4v1.P4RuntimeClient, tableID uint32) *p4v1.Action {
	t.Helper()
	rc, err := c.Read(context.Background(), &p4v1.ReadRequest{DeviceId: devID, Entities: []*p4v1.Entity{
		{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tableID, IsDefaultAction: true}}}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetEntities()[0].GetTableEntry().GetAction().GetAction()
}

// TestSecretsOnlyToThePrimary: the rack key (a @secret parameter) reads back to the primary
// controller only; an unarbitrated reader and a backup read zero (issue 18: an unarbitrated Read
// of the rack table handed out the rack key).
func TestSecretsOnlyToThePrimary(t *testing.T) {
	e, primary, tableID, _, key := secretEnv(t)
	if a := readDefault(t, primary.Client, tableID); !bytes.Equal(a.GetParams()[0].GetValue(), key) {
		t.Fatalf("the primary read key %x, want %x", a.GetParams()[0].GetValue(), key)
	}
	stranger := p4v1.NewP4RuntimeClient(e.dialForTest())
	a := readDefault(t, stranger, tableID)
	if v := a.GetParams()[0].GetValue(); !bytes.Equal(v, []byte{0}) {
		t.Fatalf("an unarbitrated reader read key %x, want it zeroed", v)
	}
	if v := a.GetParams()[1].GetValue(); !bytes.Equal(v, []byte{10, 0, 0, 1}) {
		t.Fatalf("a parameter that is no secret read %x, want 0a000001", v)
	}
	backup, isPrimary := e.connect(5, "")
	if isPrimary {
		t.Fatal("a lower election id became primary")
	}
	if v := readDefault(t, backup.Client, tableID).GetParams()[0].GetValue(); !bytes.Equal(v, []byte{0}) {
		t.Fatalf("a backup read key %x, want it zeroed", v)
	}
}

// TestWriteNeedsThePrimarysConnection: a client that sends the primary's election id from a
// connection of its own (no stream, or a stream that lost the arbitration) is refused
// (issue 18: any client could write with the primary's election id without a stream).
func TestWriteNeedsThePrimarysConnection(t *testing.T) {
	e, primary, tableID, actionID, _ := secretEnv(t)
	forged := &p4v1.WriteRequest{DeviceId: devID, ElectionId: primary.eid, Updates: []*p4v1.Update{{Type: p4v1.Update_MODIFY,
		Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tableID, IsDefaultAction: true,
			Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: actionID,
				Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{1}}, {ParamId: 2, Value: []byte{1}}}}}}}}}}}}
	stranger := p4v1.NewP4RuntimeClient(e.dialForTest())
	_, err := stranger.Write(context.Background(), forged)
	wantCode(t, err, codes.PermissionDenied)
	backup, _ := e.connect(5, "")
	_, err = p4v1.NewP4RuntimeClient(backup.conn).Write(context.Background(), forged)
	wantCode(t, err, codes.PermissionDenied)
	// Control: the same request from the primary's connection is applied.
	if _, err := p4v1.NewP4RuntimeClient(primary.conn).Write(context.Background(), forged); err != nil {
		t.Fatalf("the primary's own write: %v", err)
	}
}

// TestMutualTLS: a switch that requires client certificates serves only controllers holding one
// signed by its CA; a client without one cannot even arbitrate.
func TestMutualTLS(t *testing.T) {
	p := tlstest.NewPKI(t)
	stc, err := tlsconf.Server(p.ServerCert, p.ServerKey, p.CA, true)
	if err != nil {
		t.Fatal(err)
	}
	dev := NewMemDevice()
	srv, err := NewServer(Config{DeviceID: devID, Device: dev, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, err := Serve("127.0.0.1:0", srv, grpc.Creds(credentials.NewTLS(stc)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	arbitrate := func(certFile, keyFile string) error {
		ctc, err := tlsconf.Client(p.CA, certFile, keyFile, "")
		if err != nil {
			t.Fatal(err)
		}
		conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(credentials.NewTLS(ctc)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c := client.NewClient(p4v1.NewP4RuntimeClient(conn), devID, &p4v1.Uint128{Low: 1})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = c.GetFwdPipe(ctx, client.GetFwdPipeCookieOnly)
		return err
	}
	if err := arbitrate("", ""); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	if err := arbitrate(p.StrangerCert, p.StrangerKey); err == nil {
		t.Fatal("a client whose certificate another CA signed was served")
	}
	if err := arbitrate(p.ClientCert, p.ClientKey); err != nil {
		t.Fatalf("the controller's certificate was refused: %v", err)
	}
}
