package p4rt

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func TestMain(m *testing.M) {
	logrus.SetLevel(logrus.PanicLevel) // the client logs every closed stream as an error
	goleak.VerifyTestMain(m)
}

// env is a P4Runtime server on loopback TCP backed by a MemDevice.
type env struct {
	t    *testing.T
	dev  *MemDevice
	srv  *Server
	addr string
}

const devID = 1

func newEnv(t *testing.T) *env {
	t.Helper()
	dev := NewMemDevice()
	srv, err := NewServer(Config{DeviceID: devID, Device: dev, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, err := Serve("127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return &env{t: t, dev: dev, srv: srv, addr: addr.String()}
}

// ctl is a controller: the antoninbas client with its stream running.
type ctl struct {
	*client.Client
	conn *grpc.ClientConn
	arb  chan bool
	msgs chan *p4v1.StreamMessageResponse
	stop chan struct{}
	done chan error
	eid  *p4v1.Uint128
}

const wait = 20 * time.Second // guards against hangs only; no test asserts timing

func (e *env) dial() *grpc.ClientConn {
	conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		e.t.Fatal(err)
	}
	return conn
}

// connect opens a controller with election id eid (role "" unless given) and
// waits for its first arbitration answer.
func (e *env) connect(eid uint64, role string) (*ctl, bool) {
	e.t.Helper()
	conn := e.dial()
	var r *p4v1.Role
	if role != "" {
		r = &p4v1.Role{Name: role}
	}
	c := &ctl{
		conn: conn,
		arb:  make(chan bool, 100),
		msgs: make(chan *p4v1.StreamMessageResponse, 1000),
		stop: make(chan struct{}),
		done: make(chan error, 1),
		eid:  &p4v1.Uint128{Low: eid},
	}
	c.Client = client.NewClientForRole(p4v1.NewP4RuntimeClient(conn), devID, c.eid, r)
	go func() { c.done <- c.Run(c.stop, c.arb, c.msgs) }()
	e.t.Cleanup(c.close)
	return c, c.nextArb(e.t)
}

func (c *ctl) nextArb(t *testing.T) bool {
	t.Helper()
	select {
	case ok := <-c.arb:
		return ok
	case err := <-c.done:
		c.done <- err
		t.Fatalf("stream ended before arbitration: %v", err)
	case <-time.After(wait):
		t.Fatal("no arbitration answer")
	}
	return false
}

// close drops the connection (an abrupt disconnect) and waits for Run to end.
func (c *ctl) close() {
	if c.conn == nil {
		return
	}
	c.conn.Close()
	c.conn = nil
	<-c.done
	c.done <- nil
}

// next returns the next non-arbitration stream message.
func (c *ctl) next(t *testing.T) *p4v1.StreamMessageResponse {
	t.Helper()
	select {
	case m := <-c.msgs:
		return m
	case <-time.After(wait):
		t.Fatal("no stream message")
	}
	return nil
}

// none checks that no stream message has arrived so far. Callers use it
// after a message sent later to another client has arrived, so anything
// addressed to c would have been queued before it.
func (c *ctl) none(t *testing.T) {
	t.Helper()
	select {
	case m := <-c.msgs:
		t.Fatalf("unexpected stream message %v", m)
	default:
	}
}

func code(err error) codes.Code { return status.Code(err) }

func wantCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	if code(err) != want {
		t.Fatalf("got %v, want %v", err, want)
	}
}

// updateCode returns the code of the single update of a failed one-update
// Write (OK if err is nil).
func updateCode(t *testing.T, err error) codes.Code {
	t.Helper()
	if err == nil {
		return codes.OK
	}
	errs := UpdateErrors(err)
	if len(errs) != 1 || errs[0] == nil {
		t.Fatalf("not a one-update batch error: %v", err)
	}
	return errs[0].Code()
}

// testBundle is testdata/l2l3.p4 with its header file.
func testBundle(t testing.TB) *Bundle {
	t.Helper()
	b, err := BundleFromFS(os.DirFS("testdata"), "l2l3.p4", "headers.p4")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testInfoText is the P4Info text the front end generates for the bundle.
func testInfoText(t testing.TB, b *Bundle) []byte {
	t.Helper()
	prog, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	txt, err := prog.P4InfoTextCompat()
	if err != nil {
		t.Fatal(err)
	}
	return []byte(txt)
}

// primaryWithPipeline connects a primary controller and pushes the test program.
func (e *env) primaryWithPipeline() *ctl {
	e.t.Helper()
	c, ok := e.connect(10, "")
	if !ok {
		e.t.Fatal("not primary")
	}
	b := testBundle(e.t)
	if _, err := c.SetFwdPipeFromBytes(context.Background(), b.Encode(), testInfoText(e.t, b), 7); err != nil {
		e.t.Fatal(err)
	}
	return c
}
