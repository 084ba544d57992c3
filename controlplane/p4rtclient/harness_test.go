package p4rtclient

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/bmv2/p4rt"
	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/bmv2/target"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	goleak.VerifyTestMain(m)
}

const (
	devID   = 1
	cpuPort = 255
	// wait guards against hangs only; no test asserts timing.
	wait = 30 * time.Second
)

var (
	routes = RouteTable{Table: "MyIngress.ipv4_lpm", Field: "hdr.ipv4.dst"}
	srcMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01}
	dstMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x02}
)

// testProgram is controlplane/testdata/cptest.p4 as a Program.
func testProgram(t testing.TB) *Program {
	t.Helper()
	p, err := ProgramFromFS(os.DirFS("testdata"), "cptest.p4")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// host is the far end of one switch port; the frames it receives land in rx.
type host struct {
	p  port.Port
	rx chan []byte
}

func newHost(p port.Port) *host {
	h := &host{p: p, rx: make(chan []byte, 64)}
	go func() {
		defer close(h.rx)
		buf := make([]byte, port.MaxFrame)
		for {
			n, err := p.Recv(buf)
			if err != nil {
				return
			}
			h.rx <- append([]byte(nil), buf[:n]...)
		}
	}()
	return h
}

func (h *host) next(t *testing.T) []byte {
	t.Helper()
	select {
	case f, ok := <-h.rx:
		if !ok {
			t.Fatal("port closed")
		}
		return f
	case <-time.After(wait):
		t.Fatal("no frame")
	}
	return nil
}

// sw is netlock's engine-backed switch with three in-memory ports and a P4Runtime server on
// an ephemeral loopback port.
type sw struct {
	addr  string
	dev   *target.Device
	hosts []*host // index = switch port
	stop  func()
}

func startSwitch(t *testing.T) *sw {
	t.Helper()
	dev := target.New(target.Options{CPUPort: cpuPort})
	s := &sw{dev: dev, hosts: make([]*host, 4)}
	for i := 1; i <= 3; i++ {
		a, b := port.NewPair("sw", "host")
		if err := dev.AddPort(i, a); err != nil {
			t.Fatal(err)
		}
		s.hosts[i] = newHost(b)
		t.Cleanup(func() { b.Close() })
	}
	dev.Start()
	srv, err := p4rt.NewServer(p4rt.Config{DeviceID: devID, Device: dev})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, err := p4rt.Serve("127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			stop()
			dev.Close()
		})
	}
	t.Cleanup(s.stop)
	s.addr = addr.String()
	return s
}

// testLog is a slog.Logger writing to the test log.
func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}

// dial connects a controller with election id eid and closes it at the end of the test.
func dial(t *testing.T, addr string, eid uint64) *Client {
	t.Helper()
	c, err := Dial(Config{Addr: addr, DeviceID: devID, ElectionID: ElectionID{Low: eid}, Log: testLog(t),
		Backoff: Backoff{Initial: 10 * time.Millisecond, Max: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxWait(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// waitState waits until c is in state s.
func waitState(t *testing.T, c *Client, s State) {
	t.Helper()
	deadline := time.After(wait)
	for {
		ch := c.Changed()
		if c.State() == s {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("client still %s, want %s", c.State(), s)
		}
	}
}

// primary dials a controller, waits until it is primary and pushes the test program.
func primary(t *testing.T, addr string, eid uint64) *Client {
	t.Helper()
	c := dial(t, addr, eid)
	if err := c.WaitPrimary(ctxWait(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetPipeline(ctxWait(t), testProgram(t), 42); err != nil {
		t.Fatal(err)
	}
	return c
}

// ipFrame builds an Ethernet/IPv4 frame from 10.0.0.1 to dst with the given protocol.
func ipFrame(t testing.TB, dst string, proto layers.IPProtocol, payload string) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: srcMAC, DstMAC: net.HardwareAddr{0x02, 0, 0, 0, 0, 0xfe}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto,
		SrcIP: net.ParseIP("10.0.0.1").To4(), DstIP: net.ParseIP(dst).To4()}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, ip, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decode returns the frame's destination MAC, TTL and payload.
func decode(t *testing.T, f []byte) (net.HardwareAddr, uint8, string) {
	t.Helper()
	pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if eth == nil || ip == nil {
		t.Fatalf("not Ethernet/IPv4: %x", f)
	}
	return eth.DstMAC, ip.TTL, string(ip.Payload)
}

func route(prefix string, port uint64) Route {
	return Route{Prefix: netip.MustParsePrefix(prefix), Action: "MyIngress.route",
		Params: []Param{{"dmac", MAC(dstMAC)}, {"port", Uint(port)}}}
}

// proxy is a TCP proxy in front of a switch, to break and restore the connection at will.
type proxy struct {
	ln      net.Listener
	mu      sync.Mutex
	backend string // "" refuses connections
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

func newProxy(t *testing.T, backend string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, backend: backend, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		be := p.backend
		p.mu.Unlock()
		if be == "" {
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", be)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		pipe := func(a, b net.Conn) {
			defer p.wg.Done()
			_, _ = io.Copy(a, b)
			a.Close()
			b.Close()
		}
		go pipe(in, out)
		go pipe(out, in)
	}
}

// cut closes every proxied connection.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *proxy) setBackend(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backend = addr
}
