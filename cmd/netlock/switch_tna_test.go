package main

import (
	"bytes"
	"context"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"
)

const tnaProgram = "../../bmv2/target/testdata/tna_l2.p4"

// TestSwitchTNA runs netlock switch with a TNA program (the architecture is detected from
// the source) on two UDP-tunnel ports, programs it over P4Runtime and checks forwarding both
// ways through ingress and egress, a drop, and the table log lines.
func TestSwitchTNA(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	logrus.SetLevel(logrus.PanicLevel)

	a, b := newUDPHost(t), newUDPHost(t)
	sw := startSwitch(t, []string{
		"--udp-port", "1@127.0.0.1:0," + a.conn.LocalAddr().String(),
		"--udp-port", "2@127.0.0.1:0," + b.conn.LocalAddr().String(),
		"--device-id", "1", "--log-console", tnaProgram,
		"--", "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255",
	})
	for i, h := range []*udpHost{a, b} {
		m := sw.out.waitFor(t, regexp.MustCompile(`Adding UDP tunnel port `+string(rune('1'+i))+` on (\S+),`))
		addr, err := net.ResolveUDPAddr("udp", m[1])
		if err != nil {
			t.Fatal(err)
		}
		h.sw = addr
	}
	c := programTNA(t, sw.grpc)
	frame := func(dst, src net.HardwareAddr, payload string) []byte {
		return append(append(append(append([]byte(nil), dst...), src...), 0x88, 0xb5), payload...)
	}
	f := frame(bMAC, aMAC, "hello b")
	a.send(t, f)
	if got := b.next(t); !bytes.Equal(got, f) {
		t.Fatalf("b got %x, want %x", got, f)
	}
	f = frame(aMAC, bMAC, "hello a")
	b.send(t, f)
	if got := a.next(t); !bytes.Equal(got, f) {
		t.Fatalf("a got %x, want %x", got, f)
	}
	// Unknown destination: dropped; the frame sent after it arrives first.
	a.send(t, frame(net.HardwareAddr{2, 9, 9, 9, 9, 9}, aMAC, "nowhere"))
	f = frame(bMAC, aMAC, "after")
	a.send(t, f)
	if got := b.next(t); !bytes.Equal(got, f) {
		t.Fatalf("b got %x, want %x", got, f)
	}
	cd, err := c.ReadCounterEntry(context.Background(), "SwitchIngress.rx_port", 1)
	if err != nil || cd.PacketCount != 3 {
		t.Fatalf("rx_port[1] = %v (%v), want 3 packets", cd, err)
	}
	sw.stop()
	log := sw.out.String()
	for _, want := range []string{
		"table SwitchIngress.dmac: hit, action SwitchIngress.forward",
		"table SwitchIngress.dmac: miss, default action SwitchIngress.drop",
		"Switch stopped: 4 frames received, 3 transmitted, 0 packet-ins, 1 dropped, 0 errors",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("switch output lacks %q:\n%s", want, log)
		}
	}
}

// programTNA connects a primary controller to device 1, pushes tna_l2.p4 and sends aMAC to
// port 1 and bMAC to port 2.
func programTNA(t *testing.T, addr string) *client.Client {
	t.Helper()
	c := primaryController(t, addr, 1, make(chan *p4v1.StreamMessageResponse, 10))
	pushPipeline(t, c, bundleFile(t, tnaProgram))
	bg := context.Background()
	for _, r := range []struct {
		mac  net.HardwareAddr
		port byte
	}{{aMAC, 1}, {bMAC, 2}} {
		for _, e := range []*p4v1.TableEntry{
			c.NewTableEntry("SwitchIngress.dmac",
				map[string]client.MatchInterface{"hdr.ethernet.dst": &client.ExactMatch{Value: r.mac}},
				c.NewTableActionDirect("SwitchIngress.forward", [][]byte{{0, r.port}}), nil),
			c.NewTableEntry("SwitchIngress.smac",
				map[string]client.MatchInterface{"hdr.ethernet.src": &client.ExactMatch{Value: r.mac}},
				c.NewTableActionDirect("NoAction", nil), nil),
		} {
			if err := c.InsertTableEntry(bg, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c
}
