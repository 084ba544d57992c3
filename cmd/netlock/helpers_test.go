package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/netlock-go/netlock/bmv2/p4rt"
)

// primaryController connects a P4Runtime controller to device of the switch at addr, with
// election id 1, and waits (at most switchWait) until the switch names it primary. The stream's
// messages other than arbitration go to msgs. When t ends the connection is closed and the
// stream's goroutine has returned.
func primaryController(t *testing.T, addr string, device uint64, msgs chan *p4v1.StreamMessageResponse) *client.Client {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(p4v1.NewP4RuntimeClient(conn), device, &p4v1.Uint128{Low: 1})
	arb := make(chan bool, 10)
	runDone := make(chan error, 1)
	go func() { runDone <- c.Run(make(chan struct{}), arb, msgs) }()
	t.Cleanup(func() {
		conn.Close()
		<-runDone
	})
	select {
	case ok := <-arb:
		if !ok {
			t.Fatal("not primary")
		}
	case <-time.After(switchWait):
		t.Fatal("no arbitration answer")
	}
	return c
}

// bundleFile is the P4 program at path, its directory the root of its includes.
func bundleFile(t *testing.T, path string) *p4rt.Bundle {
	t.Helper()
	bundle, err := p4rt.BundleFromFS(os.DirFS(filepath.Dir(path)), filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	return bundle
}

// pushPipeline compiles bundle and makes it, with its P4Info, the forwarding pipeline of c's
// device (SetForwardingPipelineConfig, VERIFY_AND_COMMIT).
func pushPipeline(t *testing.T, c *client.Client, bundle *p4rt.Bundle) {
	t.Helper()
	if err := setPipeline(c, bundle); err != nil {
		t.Fatal(err)
	}
}

// setPipeline pushes bundle's program (with its P4Info) over P4Runtime and returns the switch's
// answer.
func setPipeline(c *client.Client, bundle *p4rt.Bundle) error {
	checked, err := bundle.Compile()
	if err != nil {
		return err
	}
	info, err := checked.P4InfoTextCompat()
	if err != nil {
		return err
	}
	_, err = c.SetFwdPipeFromBytes(context.Background(), bundle.Encode(), []byte(info), 1)
	return err
}
