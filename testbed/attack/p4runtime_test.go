package attack

import (
	"bytes"
	"context"
	"net/netip"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/netlock-go/netlock/internal/testenv"
	"github.com/netlock-go/netlock/internal/tlsconf"
	"github.com/netlock-go/netlock/internal/tlsconf/tlstest"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
)

var listening = regexp.MustCompile(`Server listening on (\S+)`)

const rackKey = 0x4e4c5357_1234abcd

// controller is a P4Runtime client with its stream arbitrated.
type controller struct {
	*client.Client
	conn *grpc.ClientConn
}

func dialP4RT(t *testing.T, addr string, creds credentials.TransportCredentials, eid uint64) (*controller, bool) {
	t.Helper()
	logrus.SetLevel(logrus.PanicLevel)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(p4v1.NewP4RuntimeClient(conn), 0, &p4v1.Uint128{Low: eid})
	arb := make(chan bool, 10)
	done := make(chan error, 1)
	go func() { done <- c.Run(make(chan struct{}), arb, make(chan *p4v1.StreamMessageResponse, 100)) }()
	t.Cleanup(func() { conn.Close(); <-done })
	select {
	case ok := <-arb:
		return &controller{Client: c, conn: conn}, ok
	case err := <-done:
		done <- err
		return &controller{Client: c, conn: conn}, false
	case <-time.After(5 * time.Second):
		return &controller{Client: c, conn: conn}, false
	}
}

// setRack makes c's switch use rackKey: the default action of the rack table.
func setRack(t *testing.T, c *controller) {
	t.Helper()
	r := dataplane.Rack{Key: rackKey, SwitchIP: netip.MustParseAddr("10.0.0.254"), SwitchMAC: dataplane.MAC{2, 0, 0, 0, 0, 0xfe},
		DefaultLease: time.Second, MaxLease: 2 * time.Second}
	action, args, err := r.Action()
	if err != nil {
		t.Fatal(err)
	}
	e := c.NewTableEntry(dataplane.TableRack, nil, c.NewTableActionDirect(action, args), &client.TableEntryOptions{})
	e.IsDefaultAction = true
	if err := c.ModifyTableEntry(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}

// readKey reads the rack table's default action through conn and returns its key parameter.
func readKey(t *testing.T, conn *grpc.ClientConn, tableID uint32) []byte {
	t.Helper()
	rc, err := p4v1.NewP4RuntimeClient(conn).Read(context.Background(), &p4v1.ReadRequest{Entities: []*p4v1.Entity{
		{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tableID, IsDefaultAction: true}}}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetEntities()[0].GetTableEntry().GetAction().GetAction().GetParams()[0].GetValue()
}

// TestP4RuntimeStrangers (issue 18, item 2), against `netlock switch` running p4/netlock.p4:
//   - plaintext on loopback: a client that never arbitrated reads the rack table and gets the key
//     zeroed (it used to get the key, and with it forge control datagrams); writing with the
//     primary's election id from its own connection is refused; the primary reads the key;
//   - mutual TLS (--grpc-server-ssl --grpc-server-with-client-auth): a client without the
//     controller's certificate cannot even arbitrate, so it can neither take primacy nor read.
func TestP4RuntimeStrangers(t *testing.T) {
	program := netlockProgram(t)
	t.Run("plaintext", func(t *testing.T) {
		sw := start(t, "switch", program, "--grpc-server-addr", "127.0.0.1:0", "--device-id", "0")
		addr := sw.waitFor(t, listening)[1]
		primary, ok := dialP4RT(t, addr, insecure.NewCredentials(), 10)
		if !ok {
			t.Fatal("the controller did not become primary")
		}
		tableID, actionID := pushNetlock(t, primary)
		setRack(t, primary)
		if k := readKey(t, primary.conn, tableID); !bytes.Equal(k, be64(rackKey)) {
			t.Fatalf("the primary read key %x", k)
		}
		stranger, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer stranger.Close()
		if k := readKey(t, stranger, tableID); !bytes.Equal(k, []byte{0}) {
			t.Fatalf("a stranger read the rack key %x", k)
		}
		forged := &p4v1.WriteRequest{ElectionId: &p4v1.Uint128{Low: 10}, Updates: []*p4v1.Update{{Type: p4v1.Update_MODIFY,
			Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tableID,
				IsDefaultAction: true, Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{
					Action: &p4v1.Action{ActionId: actionID, Params: []*p4v1.Action_Param{
						{ParamId: 1, Value: be64(1)}, {ParamId: 2, Value: []byte{10, 0, 0, 254}},
						{ParamId: 3, Value: []byte{2, 0, 0, 0, 0, 0xfe}}, {ParamId: 4, Value: []byte{0, 0, 3, 0xe8}},
						{ParamId: 5, Value: []byte{0, 0, 7, 0xd0}}}}}}}}}}}}
		if _, err := p4v1.NewP4RuntimeClient(stranger).Write(context.Background(), forged); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("a stranger's write with the primary's election id: %v, want PERMISSION_DENIED", err)
		}
		if k := readKey(t, primary.conn, tableID); !bytes.Equal(k, be64(rackKey)) {
			t.Fatalf("the key changed to %x", k)
		}
	})
	t.Run("mutual-tls", func(t *testing.T) {
		pki := tlstest.NewPKI(t)
		sw := start(t, "switch", program, "--grpc-server-addr", "127.0.0.1:0", "--device-id", "0",
			"--grpc-server-ssl", "--grpc-server-cert", pki.ServerCert, "--grpc-server-key", pki.ServerKey,
			"--grpc-server-cacert", pki.CA, "--grpc-server-with-client-auth")
		addr := sw.waitFor(t, listening)[1]
		certless, err := tlsconf.Client(pki.CA, "", "", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := dialP4RT(t, addr, credentials.NewTLS(certless), 1<<62); ok {
			t.Fatal("a client without a certificate took primacy")
		}
		stranger, err := tlsconf.Client(pki.CA, pki.StrangerCert, pki.StrangerKey, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := dialP4RT(t, addr, credentials.NewTLS(stranger), 1<<62); ok {
			t.Fatal("a client with another CA's certificate took primacy")
		}
		ctl, err := tlsconf.Client(pki.CA, pki.ClientCert, pki.ClientKey, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := dialP4RT(t, addr, credentials.NewTLS(ctl), 10); !ok {
			t.Fatal("the controller's certificate did not make it primary")
		}
	})
}

func be64(v uint64) []byte {
	return []byte{byte(v >> 56), byte(v >> 48), byte(v >> 40), byte(v >> 32), byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

// netlockProgram is the path of p4/netlock.p4.
func netlockProgram(t *testing.T) string {
	t.Helper()
	return filepath.Join(testenv.ModuleRoot(t), "p4", "netlock.p4")
}

// pushNetlock pushes p4/netlock.p4 (as the switch runs it) with its P4Info, as a controller
// does, and returns the ids of the rack table and its set_rack action.
func pushNetlock(t *testing.T, c *controller) (tableID, actionID uint32) {
	t.Helper()
	b := dpengine.Bundle(dataplane.DefaultSizing)
	checked, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	info, err := checked.P4InfoTextCompat() // the client's p4runtime rc.5 messages lack 1.4.0's fields
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetFwdPipeFromBytes(context.Background(), b.Encode(), []byte(info), 1); err != nil {
		t.Fatal(err)
	}
	pi, err := checked.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range pi.GetTables() {
		if tb.GetPreamble().GetName() == dataplane.TableRack {
			tableID = tb.GetPreamble().GetId()
		}
	}
	for _, a := range pi.GetActions() {
		if a.GetPreamble().GetName() == dataplane.ActionSetRack {
			actionID = a.GetPreamble().GetId()
		}
	}
	if tableID == 0 || actionID == 0 {
		t.Fatal("no rack table or set_rack action in the P4Info")
	}
	return tableID, actionID
}
