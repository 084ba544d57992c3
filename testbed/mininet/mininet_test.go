// Package mininet holds the Mininet switch class and topology runner of netlock's testbed
// (p4runtime_switch.py, run.py, topology.json), and the Go test that runs them.
package mininet

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMininetPingAndUDP builds netlock, starts topology.json in Mininet (two hosts on one
// `netlock switch` running basic.p4, programmed over P4Runtime by `netlock p4 push`), and checks
// ping and a UDP exchange between the hosts and that an unrouted address is dropped. It needs root
// and Debian's mininet (apt-get install mininet iputils-ping ethtool); .ci/run installs them.
func TestMininetPingAndUDP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Mininet")
	}
	if os.Geteuid() != 0 {
		t.Skip("Mininet needs root")
	}
	for _, tool := range []string{"/usr/bin/mn", "/usr/bin/python3"} {
		if _, err := os.Stat(tool); err != nil {
			t.Skipf("%s not installed (apt-get install mininet)", tool)
		}
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import mininet.net").Run(); err != nil {
		t.Skip("Debian's python3 has no mininet module (apt-get install mininet)")
	}
	if _, err := exec.LookPath("ping"); err != nil {
		t.Skip("ping not installed (apt-get install iputils-ping)")
	}
	bin := filepath.Join(t.TempDir(), "netlock")
	build := exec.Command("go", "build", "-o", bin, "./cmd/netlock")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := exec.Command(bin, "switch", "--help").Run(); err != nil {
		t.Skip("this build has no netlock switch command")
	}
	// Interfaces left over by an earlier run that was killed would make Mininet fail.
	for _, ifc := range []string{"s1-eth1", "s1-eth2"} {
		_ = exec.Command("ip", "link", "del", ifc).Run()
	}
	logs := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "run.py", "--test", "--netlock", bin,
		"--log-dir", logs, "--grpc-base-port", strconv.Itoa(freePort(t)))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("run.py --test: %v\n%s", err, out)
		if b, rerr := os.ReadFile(filepath.Join(logs, "s1.log")); rerr == nil {
			t.Logf("s1.log:\n%s", tail(string(b), 60))
		}
		return
	}
	for _, want := range []string{"ping h1 -> 10.0.2.2: ok", "ping h2 -> 10.0.1.1: ok", "udp h1 -> 10.0.2.2: ok",
		"unrouted 10.9.9.9 dropped: ok"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
