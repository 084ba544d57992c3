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

	"golang.org/x/sys/unix"

	"github.com/netlock-go/netlock/internal/testenv"
)

// TestMininetPingAndUDP builds netlock, starts topology.json in Mininet (two hosts on one
// `netlock switch` running basic.p4, programmed over P4Runtime by `netlock p4 push`), and checks
// ping and a UDP exchange between the hosts and that an unrouted address is dropped. It needs root
// and Debian's mininet (apt-get install mininet iputils-ping ethtool); .ci/run installs them.
// Without them it fails under CI=true and skips elsewhere (internal/testenv). Mininet's interface
// names are global, so runs of this test in several processes take turns (lockMininet).
func TestMininetPingAndUDP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Mininet")
	}
	const install = "apt-get install -y mininet iputils-ping ethtool"
	testenv.RequireRoot(t, "Mininet")
	testenv.RequireTool(t, "/usr/bin/mn", install)
	testenv.RequireTool(t, "/usr/bin/python3", install)
	testenv.RequireCommand(t, "Debian's python3 module mininet", install, "/usr/bin/python3", "-c", "import mininet.net")
	testenv.RequireTool(t, "ping", install)
	testenv.RequireTool(t, "ethtool", install)
	bin := testenv.BuildNetlock(t)
	if out, err := exec.Command(bin, "switch", "--help").CombinedOutput(); err != nil {
		t.Fatalf("%s switch --help: %v\n%s", bin, err, out)
	}
	lockMininet(t)
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

// lockMininet takes an exclusive lock on a file that every run of this test takes, and holds it
// until the test ends, so that two test processes never run Mininet at once (its interface names,
// s1-eth1 and so on, are global, and this test deletes leftovers of killed runs).
func lockMininet(t *testing.T) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "netlock-mininet.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("lock %s: %v", f.Name(), err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}
