package p4rtclient

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	"github.com/gopacket/gopacket/layers"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// syncBuffer collects logrus's output (its writer is called from several goroutines).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// captureLogrus sends the global logrus logger (the one the client library logs with) to a
// buffer at its default level for the rest of the test.
func captureLogrus(t *testing.T) *syncBuffer {
	buf := &syncBuffer{}
	out, level := logrus.StandardLogger().Out, logrus.GetLevel()
	logrus.SetOutput(buf)
	logrus.SetLevel(logrus.InfoLevel)
	t.Cleanup(func() {
		logrus.SetOutput(out)
		logrus.SetLevel(level)
	})
	return buf
}

// TestNoClientLibraryLogs runs a client through everything that ends streams (a primary
// preempted, a switch that goes away, reconnection, close while connected and while the switch
// is down) and fails if the client library logged anything.
func TestNoClientLibraryLogs(t *testing.T) {
	logs := captureLogrus(t)
	s1 := startSwitch(t)
	px := newProxy(t, s1.addr)
	c := primary(t, px.addr(), 2)
	ctx := ctxWait(t)
	sub := c.Subscribe("all", nil, 8)
	if err := c.AddRoutes(ctx, routes, toCPU("10.0.0.0/8", 1)); err != nil {
		t.Fatal(err)
	}
	s1.dev.Inject(1, ipFrame(t, "10.1.1.1", layers.IPProtocolUDP, "in"))
	nextIn(t, sub)
	other := dial(t, px.addr(), 1)
	waitState(t, other, Backup)
	other.Close()

	px.setBackend("")
	s1.stop()
	px.cut()
	waitState(t, c, Connecting)
	down := dial(t, px.addr(), 3)
	down.Close() // closed while the switch is down

	s2 := startSwitch(t)
	px.setBackend(s2.addr)
	if err := c.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.SetPipeline(ctx, testProgram(t), 2); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if l := logs.String(); l != "" {
		t.Fatalf("the client library logged:\n%s", l)
	}
}

// TestLogCaptureNegativeControl: the capture does catch the library's error line when its stream
// is ended the way bmv2/p4ctl used to (closing the connection under it), so an empty capture in
// TestNoClientLibraryLogs means something.
func TestLogCaptureNegativeControl(t *testing.T) {
	logs := captureLogrus(t)
	s := startSwitch(t)
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(p4v1.NewP4RuntimeClient(conn), devID, &p4v1.Uint128{Low: 1})
	arb := make(chan bool, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(make(chan struct{}), arb, make(chan *p4v1.StreamMessageResponse, 4))
	}()
	if !<-arb {
		t.Fatal("not primary")
	}
	conn.Close()
	<-done
	if l := logs.String(); !strings.Contains(l, "level=error") || !strings.Contains(l, "client connection is closing") {
		t.Fatalf("the old close path did not log the error line; captured %q", l)
	}
}
