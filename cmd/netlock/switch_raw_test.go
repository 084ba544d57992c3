package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/internal/testenv"
)

// rawHost is a host on the far end of a veth pair: an AF_PACKET socket on
// the veth end inside a network namespace. It keeps IPv4 frames only (the
// kernel sends IPv6 neighbour discovery on the switch's veth ends).
type rawHost struct {
	p  *port.RawPort
	rx chan []byte
}

func (h *rawHost) send(t *testing.T, frame []byte) {
	t.Helper()
	if err := h.p.Send(frame); err != nil {
		t.Fatal(err)
	}
}

func (h *rawHost) next(t *testing.T) []byte {
	t.Helper()
	select {
	case f := <-h.rx:
		return f
	case <-time.After(switchWait):
		t.Fatal("no frame")
	}
	return nil
}

func (h *rawHost) rxQueue() <-chan []byte { return h.rx }

func newRawHost(t *testing.T, p *port.RawPort) *rawHost {
	h := &rawHost{p: p, rx: make(chan []byte, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, port.MaxFrame)
		for {
			n, err := p.Recv(buf)
			if err != nil {
				return
			}
			if n >= 14 && buf[12] == 0x08 && buf[13] == 0x00 {
				h.rx <- append([]byte(nil), buf[:n]...)
			}
		}
	}()
	t.Cleanup(func() {
		p.Close()
		<-done
	})
	return h
}

// TestSwitchRawEndToEnd is the Mininet set-up without Mininet: netlock
// switch attaches two veth ends with -i N@IFACE (AF_PACKET); the other ends
// live in a fresh network namespace where test goroutines act as hosts.
// Needs root; deleting the namespace removes both veth pairs.
func TestSwitchRawEndToEnd(t *testing.T) {
	testenv.RequireRoot(t, "netlock switch on AF_PACKET ports in a network namespace")
	testenv.RequireTool(t, "ip", "apt-get install -y iproute2")
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	logrus.SetLevel(logrus.PanicLevel)

	id := os.Getpid() % 100000
	ns := fmt.Sprintf("nlsw%d", id)
	sw1, sw2 := fmt.Sprintf("nls%da", id), fmt.Sprintf("nls%db", id)
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	ipCmd := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			testenv.Unavailable(t, "ip %v: %v %s", args, err, out)
		}
	}
	ipCmd("link", "add", sw1, "type", "veth", "peer", "name", "h1", "netns", ns)
	ipCmd("link", "add", sw2, "type", "veth", "peer", "name", "h2", "netns", ns)
	// No IPv6 on the four ends: a link coming up sends router solicitations and MLD reports,
	// which the switch and the hosts would count among the frames the test exchanges.
	for _, i := range []string{sw1, sw2} {
		os.WriteFile("/proc/sys/net/ipv6/conf/"+i+"/disable_ipv6", []byte("1"), 0o644) // absent without IPv6
	}
	ipCmd("netns", "exec", ns, "sh", "-c", "for i in h1 h2; do f=/proc/sys/net/ipv6/conf/$i/disable_ipv6; [ ! -e $f ] || echo 1 > $f; done")
	ipCmd("link", "set", sw1, "up")
	ipCmd("link", "set", sw2, "up")
	ipCmd("-n", ns, "link", "set", "h1", "up")
	ipCmd("-n", ns, "link", "set", "h2", "up")

	var h1, h2 *port.RawPort
	var openErr error
	done := make(chan struct{})
	go func() { // a throwaway thread: it enters the namespace and is never reused
		defer close(done)
		runtime.LockOSThread()
		fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			openErr = err
			return
		}
		defer unix.Close(fd)
		if openErr = unix.Setns(fd, unix.CLONE_NEWNET); openErr != nil {
			return
		}
		if h1, openErr = port.OpenRaw("h1"); openErr != nil {
			return
		}
		h2, openErr = port.OpenRaw("h2")
	}()
	<-done
	if openErr != nil {
		if h1 != nil {
			h1.Close()
		}
		testenv.Unavailable(t, "open AF_PACKET ports in the namespace: %v", openErr)
	}
	a, b := newRawHost(t, h1), newRawHost(t, h2)

	sw := startSwitch(t, []string{
		"-i", "1@" + sw1, "-i", "2@" + sw2, "--device-id", "1", "--no-p4",
		"--", "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255",
	})
	sw.out.waitFor(t, regexpQuote("Adding interface "+sw2+" as port 2"))
	exchange(t, programL3(t, sw.grpc), a, b)
	sw.stop()
}

func regexpQuote(s string) *regexp.Regexp { return regexp.MustCompile(regexp.QuoteMeta(s)) }
