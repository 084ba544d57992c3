package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/client/rdmaclient"
	"github.com/netlock-go/netlock/wire"
)

// TestServerRDMAFlags runs `netlock server --rdma` in-process and takes one lock through both of
// its doors: a remote client over the emulated NIC (which makes a try acquire over UDP refuse),
// then a UDP client (which gets a shared request granted exclusively).
func TestServerRDMAFlags(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "rack.key")
	if err := os.WriteFile(keyFile, []byte("0x72646d616b657921\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "server", "--listen", "127.0.0.1:0", "--rdma", "--rdma-locks", "0"); err == nil {
		t.Error("netlock server --rdma --rdma-locks 0: no error")
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The command tree is shared by the tests: an earlier Execute gave the server command a
	// context already, which ExecuteContext would not replace.
	srvCmd, _, err := rootCmd.Find([]string{"server"})
	if err != nil {
		t.Fatal(err)
	}
	srvCmd.SetContext(ctx)
	defer srvCmd.SetContext(context.Background())
	resetFlags(rootCmd)
	rootCmd.SetArgs([]string{"server", "--config", "", "--listen", addr, "--shards", "1", "--sockets", "1", "--log-level", "error",
		"--rdma", "--rdma-locks", "4", "--rdma-listen", "127.0.0.1:0", "--rack-key-file", keyFile,
		"--rdma-node", "127.0.0.1", "--state-file", filepath.Join(dir, "server.state"), "--init"})
	done := make(chan error, 1)
	go func() { done <- rootCmd.Execute() }()
	rc, err := rdmaclient.Dial(ctx, rdmaclient.Config{Server: addr, RackKey: 0x72646d616b657921})
	if err != nil {
		select {
		case serr := <-done:
			t.Fatalf("%v (server: %v)", err, serr)
		default:
			t.Fatal(err)
		}
	}
	defer rc.Close()
	if rc.Len() != 4 {
		t.Fatalf("table of %d locks, want 4", rc.Len())
	}
	if err := rc.Lock(ctx, 3); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Config{Servers: []string{addr}, Local: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.TryAcquire(ctx, 3, wire.Exclusive); !errors.Is(err, client.ErrWouldBlock) {
		t.Fatalf("UDP try acquire while a remote client holds the lock: %v, want would-block", err)
	}
	if err := rc.Unlock(3); err != nil {
		t.Fatal(err)
	}
	actx, acancel := context.WithTimeout(ctx, 10*time.Second)
	defer acancel()
	g, err := c.Acquire(actx, 3, wire.Shared)
	if err != nil {
		t.Fatal(err)
	}
	if g.Mode() != wire.Exclusive {
		t.Fatalf("granted %v, want exclusive", g.Mode())
	}
	if err := g.Release(actx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Leave the shared command's flags as the other tests expect them.
	resetFlags(rootCmd)
	rootCmd.SetArgs([]string{"server", "--rdma=false", "--help"})
	_ = rootCmd.Execute()
}
