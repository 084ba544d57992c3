// Package mininet holds the Mininet switch class and topology runner of netlock's testbed
// (p4runtime_switch.py, run.py, topology.json), and the Go test that runs them.
package mininet

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "run.py", "--test", "--lock-held", "--netlock", bin,
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

// lockMininet takes an exclusive lock on a file that every run of these tests takes, and run.py
// and rack.py too (runlock.py; the tests pass them --lock-held), and holds it until the test
// ends, so that two Mininet runs never run at once (its interface names, s1-eth1 and so on, are
// global, and TestMininetPingAndUDP deletes leftovers of killed runs).
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

// TestScriptsTakeMininetLock: run.py and rack.py take the lock the tests take (runlock.py, the
// same file as lockMininet's): while this test holds it, each script says that it waits for
// another run and starts nothing. Needs Debian's python3 with mininet, not root.
func TestScriptsTakeMininetLock(t *testing.T) {
	const install = "apt-get install -y mininet"
	testenv.RequireTool(t, "/usr/bin/python3", install)
	testenv.RequireCommand(t, "Debian's python3 module mininet", install, "/usr/bin/python3", "-c", "import mininet.net")
	lockMininet(t)
	path, err := exec.Command("/usr/bin/python3", "-B", "-c", "import runlock; print(runlock.lock_path())").Output()
	if err != nil {
		t.Fatalf("runlock.lock_path: %v", err)
	}
	if want := filepath.Join(os.TempDir(), "netlock-mininet.lock"); strings.TrimSpace(string(path)) != want {
		t.Fatalf("the scripts lock %s, the tests %s", strings.TrimSpace(string(path)), want)
	}
	for _, args := range [][]string{
		{"rack.py", "--netlock", "/bin/false", "--out", t.TempDir()},
		{"run.py", "--test", "--netlock", "/bin/false", "--log-dir", t.TempDir()},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, "/usr/bin/python3", append([]string{"-B"}, args...)...)
		var out lockedBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		for !strings.Contains(out.String(), "waiting for another Mininet run") && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond) // it must still be waiting
		cancel()
		_ = cmd.Wait()
		if s := out.String(); !strings.Contains(s, "waiting for another Mininet run") || strings.Contains(s, "starting Mininet") {
			t.Errorf("%s while the lock is held:\n%s", args[0], s)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for a process's output and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
