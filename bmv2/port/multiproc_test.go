package port

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"testing"
)

// TestUDPAcrossProcesses forms a two-node "rack" from two processes on
// loopback: this test's port 1 learns its peer from the child's frames and
// answers each of them.
func TestUDPAcrossProcesses(t *testing.T) {
	if os.Getenv("NETLOCK_PORT_CHILD") != "" {
		t.Skip("helper process")
	}
	sw, err := ListenUDP(UDPSpec{Num: 1, Local: netip.MustParseAddrPort("127.0.0.1:0")})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestUDPChildHost$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NETLOCK_PORT_CHILD=1@127.0.0.1:0,"+sw.LocalAddr().String())
	out := make(chan []byte, 1)
	go func() {
		b, err := cmd.CombinedOutput()
		if err != nil {
			sw.Close() // unblock Recv below
		}
		out <- b
	}()
	buf := make([]byte, MaxFrame)
	for i := 0; i < 10; i++ {
		n, err := sw.Recv(buf)
		if err != nil {
			t.Fatalf("%v; child output:\n%s", err, <-out)
		}
		if seq(buf[:n]) != i {
			t.Fatalf("frame %d: seq %d", i, seq(buf[:n]))
		}
		if err := sw.Send(frame(100 + i)); err != nil {
			t.Fatal(err)
		}
	}
	b := <-out
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("child failed: %s", b)
	}
}

// TestUDPChildHost is the other process of TestUDPAcrossProcesses: a host
// port configured with NETLOCK_PORT_CHILD that sends a frame and waits for the
// answer, ten times.
func TestUDPChildHost(t *testing.T) {
	spec := os.Getenv("NETLOCK_PORT_CHILD")
	if spec == "" {
		return // not a test of its own: it runs as TestUDPAcrossProcesses's child (a skip would count as one)
	}
	sp, err := ParseUDPSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ListenUDP(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	buf := make([]byte, MaxFrame)
	for i := 0; i < 10; i++ {
		if err := h.Send(frame(i)); err != nil {
			t.Fatal(err)
		}
		n, err := h.Recv(buf)
		if err != nil || seq(buf[:n]) != 100+i {
			t.Fatal(fmt.Sprint("reply ", i, err))
		}
	}
}
