package attack

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/testenv"
	"github.com/netlock-go/netlock/wire"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// netlockBin builds cmd/netlock once per test binary.
func netlockBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "netlock-attack-")
		if err != nil {
			binErr = err
			return
		}
		binPath = dir + "/netlock"
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/netlock")
		cmd.Dir = testenv.ModuleRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/netlock: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// proc is a running netlock process with its combined output.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	done chan error
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start runs netlock with args; the process is killed at the end of the test.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(netlockBin(t), args...), done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill sends SIGKILL (kill -9) and waits for the process.
func (p *proc) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(10 * time.Second):
	}
}

// wait waits for the process to exit by itself and returns its error.
func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(d):
		t.Fatalf("still running after %v; output:\n%s", d, p.output())
		return nil
	}
}

// waitFor waits until the output matches re and returns the submatches.
func (p *proc) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.output()); m != nil {
			return m
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("exited (%v) before %q; output:\n%s", err, re, p.output())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no %q in the output:\n%s", re, p.output())
	return nil
}

// freeUDP returns a loopback UDP address nobody uses now.
func freeUDP(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}

// peer is a raw UDP endpoint speaking the wire format.
type peer struct {
	t    *testing.T
	conn *net.UDPConn
	to   netip.AddrPort
}

func newPeer(t *testing.T, to string) *peer {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &peer{t: t, conn: c, to: netip.MustParseAddrPort(to)}
}

func (p *peer) addr() netip.AddrPort { return p.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

func (p *peer) send(f wire.Fields) {
	p.t.Helper()
	if _, err := p.conn.WriteToUDPAddrPort(wire.Append(nil, &f), p.to); err != nil {
		p.t.Fatal(err)
	}
}

// recv returns the next datagram's fields within d, or false.
func (p *peer) recv(d time.Duration) (wire.Fields, bool) {
	p.t.Helper()
	buf := make([]byte, 2048)
	_ = p.conn.SetReadDeadline(time.Now().Add(d))
	for {
		n, _, err := p.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return wire.Fields{}, false
		}
		h, err := wire.Parse(buf[:n])
		if err != nil {
			continue
		}
		var f wire.Fields
		h.Decode(&f)
		return f, true
	}
}

// expectOp waits (retransmitting send every 100ms, the way a client does) for a datagram of op
// about txn.
func (p *peer) expectOp(op wire.Op, txn uint64, send *wire.Fields, d time.Duration) (wire.Fields, time.Time) {
	p.t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if send != nil {
			p.send(*send)
			send.Flags |= wire.FlagRetry
		}
		if f, ok := p.recv(100 * time.Millisecond); ok && f.Op == op && f.Txn == txn {
			return f, time.Now()
		}
	}
	p.t.Fatalf("no %s for txn %d within %v", op, txn, d)
	return wire.Fields{}, time.Time{}
}

func netipAddr(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	a, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
