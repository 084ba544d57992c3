package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
)

// switchWait guards against hangs only; no test asserts timing.
const switchWait = 20 * time.Second

// lockedBuffer is the switch's stdout, read while the switch runs.
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

// waitFor polls the output until re matches (a hang guard, not a timing check).
func (l *lockedBuffer) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(switchWait)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(l.String()); m != nil {
			return m
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %v in switch output:\n%s", re, l.String())
	return nil
}

// udpHost owns the UDP socket at the far end of one UDP-tunnel switch port.
type udpHost struct {
	conn *net.UDPConn
	sw   *net.UDPAddr
	rx   chan []byte
}

func newUDPHost(t *testing.T) *udpHost {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	h := &udpHost{conn: conn, rx: make(chan []byte, 64)}
	go func() {
		defer close(h.rx)
		buf := make([]byte, 9216)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			h.rx <- append([]byte(nil), buf[:n]...)
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		for range h.rx {
		}
	})
	return h
}

func (h *udpHost) send(t *testing.T, frame []byte) {
	t.Helper()
	if _, err := h.conn.WriteToUDP(frame, h.sw); err != nil {
		t.Fatal(err)
	}
}

func (h *udpHost) next(t *testing.T) []byte {
	t.Helper()
	select {
	case f := <-h.rx:
		return f
	case <-time.After(switchWait):
		t.Fatal("no frame")
	}
	return nil
}

var (
	swMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xfe}
	aMAC  = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x0a}
	bMAC  = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x0b}
)

func ethUDP(t *testing.T, src, dst net.HardwareAddr, sip, dip string, payload string) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.ParseIP(sip).To4(), DstIP: net.ParseIP(dip).To4()}
	udp := &layers.UDP{SrcPort: 4000, DstPort: 5000}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, udp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkDelivered checks that f is the routed frame: addresses rewritten, TTL
// decremented, the UDP payload intact.
func checkDelivered(t *testing.T, f []byte, dst net.HardwareAddr, payload string) {
	t.Helper()
	pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if eth == nil || ip == nil || udp == nil {
		t.Fatalf("not Ethernet/IPv4/UDP: %x", f)
	}
	if !bytes.Equal(eth.SrcMAC, swMAC) || !bytes.Equal(eth.DstMAC, dst) || ip.TTL != 63 || string(udp.Payload) != payload {
		t.Fatalf("delivered %s -> %s ttl %d payload %q; want %s -> %s ttl 63 payload %q",
			eth.SrcMAC, eth.DstMAC, ip.TTL, udp.Payload, swMAC, dst, payload)
	}
}

// testHost is the far end of one switch port.
type testHost interface {
	send(t *testing.T, frame []byte)
	next(t *testing.T) []byte
	rxQueue() <-chan []byte
}

func (h *udpHost) rxQueue() <-chan []byte { return h.rx }

// switchRun is a netlock switch running in-process.
type switchRun struct {
	out  *lockedBuffer
	stop func() // cancels and waits; idempotent
	grpc string
}

func startSwitch(t *testing.T, args []string) *switchRun {
	t.Helper()
	r := &switchRun{out: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := newSwitchCommand()
	cmd.SetOut(r.out)
	cmd.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	stopped := false
	r.stop = func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("switch: %v", err)
			}
		}
	}
	t.Cleanup(r.stop)
	r.grpc = r.out.waitFor(t, regexp.MustCompile(`Server listening on (\S+)`))[1]
	return r
}

const l3Program = "../../bmv2/target/testdata/l3.p4"

// programL3 connects a primary controller to device 1, pushes l3.p4 (a
// switch started with a program still needs the P4Info pushed, as
// simple_switch_grpc does) and routes 10.0.1.0/24 to port 1 and 10.0.2.0/24
// to port 2.
func programL3(t *testing.T, addr string) *client.Client {
	t.Helper()
	c := primaryController(t, addr, 1, make(chan *p4v1.StreamMessageResponse, 10))
	pushPipeline(t, c, bundleFile(t, l3Program))
	bg := context.Background()
	for _, r := range []struct {
		prefix string
		mac    net.HardwareAddr
		port   byte
	}{{"10.0.1.0", aMAC, 1}, {"10.0.2.0", bMAC, 2}} {
		e := c.NewTableEntry("MyIngress.ipv4_lpm",
			map[string]client.MatchInterface{"hdr.ipv4.dst": &client.LpmMatch{Value: net.ParseIP(r.prefix).To4(), PLen: 24}},
			c.NewTableActionDirect("MyIngress.route", [][]byte{swMAC, r.mac, {r.port}}), nil)
		if err := c.InsertTableEntry(bg, e); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// exchange checks delivery both ways between hosts a (port 1) and b (port
// 2) and a drop for an unrouted destination.
func exchange(t *testing.T, c *client.Client, a, b testHost) {
	t.Helper()
	a.send(t, ethUDP(t, aMAC, swMAC, "10.0.1.1", "10.0.2.2", "hello b"))
	checkDelivered(t, b.next(t), bMAC, "hello b")
	b.send(t, ethUDP(t, bMAC, swMAC, "10.0.2.2", "10.0.1.1", "hello a"))
	checkDelivered(t, a.next(t), aMAC, "hello a")
	// Unrouted: dropped. Port 1's frames go through the pipeline in order, so
	// once the frame sent after it arrives, the unrouted one was processed.
	a.send(t, ethUDP(t, aMAC, swMAC, "10.0.1.1", "10.0.99.9", "nowhere"))
	a.send(t, ethUDP(t, aMAC, swMAC, "10.0.1.1", "10.0.2.2", "after"))
	checkDelivered(t, b.next(t), bMAC, "after")
	select {
	case f := <-a.rxQueue():
		t.Fatalf("host a got %x", f)
	default:
	}
	cd, err := c.ReadCounterEntry(context.Background(), "MyIngress.rx_port", 1)
	if err != nil {
		t.Fatal(err)
	}
	if cd.PacketCount != 3 {
		t.Fatalf("rx_port[1] = %d packets, want 3", cd.PacketCount)
	}
}

// TestSwitchUDPEndToEnd runs netlock switch in-process with two UDP-tunnel
// ports whose far ends are test "hosts", programs it over P4Runtime and
// checks delivery both ways and a drop for an unrouted destination.
func TestSwitchUDPEndToEnd(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs after the other cleanups
	logrus.SetLevel(logrus.PanicLevel)                 // the client logs every closed stream as an error

	a, b := newUDPHost(t), newUDPHost(t)
	pcap := t.TempDir()
	sw := startSwitch(t, []string{
		"--udp-port", "1@127.0.0.1:0," + a.conn.LocalAddr().String(),
		"--udp-port", "2@127.0.0.1:0," + b.conn.LocalAddr().String(),
		"--device-id", "1", "--log-console", "--pcap", pcap, "--thrift-port", "9090",
		l3Program,
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
	if !strings.Contains(sw.out.String(), "Ignoring --thrift-port 9090") {
		t.Errorf("no note about --thrift-port:\n%s", sw.out)
	}
	exchange(t, programL3(t, sw.grpc), a, b)

	sw.stop()
	log := sw.out.String()
	for _, want := range []string{
		"Processing packet received on port 1",
		"Transmitting packet of size 60 out of port 2",
		"Dropping packet received on port 1 (60 bytes): no output",
		"table MyIngress.ipv4_lpm: hit, action MyIngress.route",
		"table MyIngress.ipv4_lpm: miss, default action MyIngress.drop",
		"Switch stopped: 4 frames received, 3 transmitted, 0 packet-ins, 1 dropped, 0 errors\n" +
			"  1 no output (the program dropped it, or kept it: a lock request it queued):\n" +
			"         1 IPv4 UDP\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("switch output lacks %q:\n%s", want, log)
		}
	}
	// bmv2-style pcap files: port 1 received 3 frames (24-byte file header,
	// 16-byte record headers, frames padded to 60 bytes).
	fi, err := os.Stat(filepath.Join(pcap, "port1_in.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(24 + 3*(16+60)); fi.Size() != want {
		t.Errorf("port1_in.pcap is %d bytes, want %d", fi.Size(), want)
	}
}

func TestSwitchCommandLine(t *testing.T) {
	run := func(args ...string) error {
		cmd := newSwitchCommand()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(args)
		return cmd.Execute()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--no-p4 is required"},
		{[]string{"--no-p4", "x.p4"}, "exclude each other"},
		{[]string{"a.p4", "b.p4"}, "one program argument"},
		{[]string{"--no-p4", "--udp-port", "nonsense"}, "udp"},
		{[]string{"--no-p4", "--", "--cpu-port", "600"}, "--cpu-port 600"},
		{[]string{"--no-p4", "--pipes", "3"}, "--pipes 3"},
		{[]string{"--no-p4", "--loopback-port", "600"}, "--loopback-port 600"},
		{[]string{"missing/build/x.json"}, "not bmv2 JSON"},
	} {
		err := run(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	// A bmv2 JSON path runs the P4 source p4c-bm2-ss compiled it from.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "basic.p4")
	if err := os.WriteFile(src, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := programPath(filepath.Join(dir, "build", "basic.json")); err != nil || got != src {
		t.Errorf("programPath: %q, %v; want %q", got, err, src)
	}
}

// TestSwitchSignal: SIGTERM stops a running switch gracefully (the command
// returns nil after printing its counts). It also takes the bmv2 flags that
// are accepted and ignored, and --log-file.
func TestSwitchSignal(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	out := &lockedBuffer{}
	cmd := newSwitchCommand()
	cmd.SetOut(out)
	logFile := filepath.Join(t.TempDir(), "switch.log")
	cmd.SetArgs([]string{"--no-p4", "--grpc-server-addr", "127.0.0.1:0", "--udp-port", "1@127.0.0.1:0",
		"--log-file", logFile, "-L", "debug", "--nanolog", "ipc:///tmp/bm-0-log.ipc", "--debugger"})
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	// The handler is installed before this line is printed.
	out.waitFor(t, regexp.MustCompile(`Server listening on`))
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("switch after SIGTERM: %v", err)
		}
	case <-time.After(switchWait):
		t.Fatal("switch did not stop on SIGTERM")
	}
	for _, want := range []string{"Switch stopped: 0 frames received", "Ignoring --nanolog ipc:///tmp/bm-0-log.ipc", "Ignoring --debugger"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(logFile); err != nil {
		t.Errorf("--log-file: %v", err)
	}
}

// TestSwitchPipesFlags: a switch started with --pipes 2 and the fold's loopback ports takes
// p4/tna/netlock.p4's Tofino 1 fold over P4Runtime (two Pipelines, one per pipe); one started
// without them refuses it (a program of two Pipelines needs two pipes), and takes the program
// of one Pipeline.
func TestSwitchPipesFlags(t *testing.T) {
	logrus.SetLevel(logrus.PanicLevel)
	push := func(flags []string, prog dataplane.Program) error {
		t.Helper()
		sw := startSwitch(t, append(append([]string{"--no-p4"}, flags...), "--", "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255"))
		defer sw.stop()
		c := primaryController(t, sw.grpc, 0, make(chan *p4v1.StreamMessageResponse, 10))
		return setPipeline(c, dpengine.BundleProgram(prog, dataplane.DefaultSizing))
	}
	fold := []string{"--pipes", "2", "--loopback-port", "68", "--loopback-port", "196"}
	if err := push(fold, dataplane.TNAFold); err != nil {
		t.Errorf("the fold on a switch of two pipes: %v", err)
	}
	if err := push(nil, dataplane.TNAFold); err == nil {
		t.Error("the fold on a switch of one pipe: accepted")
	}
	if err := push(nil, dataplane.TNA); err != nil {
		t.Errorf("the program of one Pipeline on a switch of one pipe: %v", err)
	}
}
