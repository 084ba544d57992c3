package simpleswitch

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/testenv"
)

// TestRealSeveralSwitches starts two simple_switch instances at once, each with its own
// Thrift port, device id and notifications socket, sends a frame through each and uses each
// one's CLI. The negative control: a third simple_switch on bmv2's default notifications
// socket while another holds it fails to bind it, as two of the driver's switches did before
// they had sockets of their own.
func TestRealSeveralSwitches(t *testing.T) {
	tools := RequireTools(t)
	dir := t.TempDir()
	json, _, _, err := Compile(tools.P4c, filepath.Join(testenv.ModuleRoot(t), "bmv2", "stf", "testdata", "l3.p4"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sws []*Switch
	for i := 0; i < 2; i++ {
		s, err := Start(Options{Switch: tools.Switch, CLI: tools.CLI, JSON: json, Ports: []int{1, 2}, Debug: true, Dir: t.TempDir()})
		if err != nil {
			t.Fatalf("switch %d: %v", i, err)
		}
		defer s.Close()
		sws = append(sws, s)
	}
	if sws[0].ThriftPort() == sws[1].ThriftPort() || sws[0].DeviceID() == sws[1].DeviceID() {
		t.Errorf("thrift ports %d, %d; device ids %d, %d", sws[0].ThriftPort(), sws[1].ThriftPort(), sws[0].DeviceID(), sws[1].DeviceID())
	}
	frame := append(bytes.Repeat([]byte{0xAA}, 12), 0x88, 0xB5, 1, 2, 3, 4)
	for i, s := range sws {
		if _, err := s.CLI("show_tables"); err != nil {
			t.Errorf("switch %d: %v", i, err)
		}
		if err := s.Send(1, frame); err != nil {
			t.Fatal(err)
		}
		if err := s.Wait(time.Minute); err != nil {
			t.Errorf("switch %d: %v", i, err)
		}
	}
	// Two switches on the default socket: the second cannot bind it.
	const sock = "/tmp/bmv2-93-notifications.ipc"
	_ = os.Remove(sock) // a killed switch leaves its socket file
	first := exec.Command(tools.Switch, "--thrift-port", "9390", "--device-id", "93", json)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { first.Process.Kill(); first.Wait(); os.Remove(sock) }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first switch did not create %s", sock)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, tools.Switch, "--thrift-port", "9391", "--device-id", "93", json).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "address in use") && !strings.Contains(string(out), "Address already in use") {
		t.Errorf("a second switch on ipc://%s: %v, %s", sock, err, lastLines(string(out), 5))
	}
}
