package target

import (
	"bytes"
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/netlock-go/netlock/bmv2/p4rt"
	"github.com/netlock-go/netlock/bmv2/port"
)

func TestMain(m *testing.M) {
	logrus.SetLevel(logrus.PanicLevel) // the client logs every closed stream as an error
	goleak.VerifyTestMain(m)
}

const (
	devID   = 1
	cpuPort = 255
	// wait guards against hangs only; no test asserts timing.
	wait = 20 * time.Second
)

var (
	routerMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xfe}
	hostMAC   = []net.HardwareAddr{nil, {0x02, 0, 0, 0, 0, 1}, {0x02, 0, 0, 0, 0, 2}, {0x02, 0, 0, 0, 0, 3}}
)

// host is the far end of one switch port; frames it receives land in rx.
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

// udpFrame builds an Ethernet/IPv4/UDP frame with a valid IPv4 checksum.
func udpFrame(t testing.TB, src, dst net.HardwareAddr, sip, dip string, ttl uint8, payload string) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: ttl, Protocol: layers.IPProtocolUDP,
		SrcIP: net.ParseIP(sip).To4(), DstIP: net.ParseIP(dip).To4()}
	udp := &layers.UDP{SrcPort: 4000, DstPort: 5000}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkRouted decodes a forwarded frame and checks the rewrite of route().
func checkRouted(t *testing.T, f []byte, dmac net.HardwareAddr, ttl uint8, payload string) {
	t.Helper()
	pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if eth == nil || ip == nil {
		t.Fatalf("not Ethernet/IPv4: %x", f)
	}
	if !bytes.Equal(eth.SrcMAC, routerMAC) || !bytes.Equal(eth.DstMAC, dmac) {
		t.Fatalf("macs %s -> %s, want %s -> %s", eth.SrcMAC, eth.DstMAC, routerMAC, dmac)
	}
	if ip.TTL != ttl {
		t.Fatalf("ttl %d, want %d", ip.TTL, ttl)
	}
	// The checksum the pipeline wrote must be the one of the new header.
	got := ip.Checksum
	hdr := append([]byte(nil), f[14:34]...)
	hdr[10], hdr[11] = 0, 0
	if want := csum16(hdr); got != want {
		t.Fatalf("ipv4 checksum %#x, want %#x", got, want)
	}
	if string(pkt.ApplicationLayer().Payload()) != payload {
		t.Fatalf("payload %q, want %q", pkt.ApplicationLayer().Payload(), payload)
	}
}

func csum16(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// rig is an engine-backed device with three in-memory ports and a P4Runtime
// server on loopback.
type rig struct {
	dev   *Device
	hosts []*host // index = switch port
	addr  string
}

func newRig(t *testing.T, opts Options) *rig {
	t.Helper()
	opts.CPUPort = cpuPort
	dev := New(opts)
	r := &rig{dev: dev, hosts: make([]*host, 4)}
	for i := 1; i <= 3; i++ {
		sw, far := port.NewPair("sw", "host")
		if err := dev.AddPort(i, sw); err != nil {
			t.Fatal(err)
		}
		r.hosts[i] = newHost(far)
		t.Cleanup(func() { far.Close() })
	}
	dev.Start()
	t.Cleanup(func() { dev.Close() })
	srv, err := p4rt.NewServer(p4rt.Config{DeviceID: devID, Device: dev, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, err := p4rt.Serve("127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	r.addr = addr.String()
	return r
}

// ctl is a primary controller (the antoninbas client) with its stream.
type ctl struct {
	*client.Client
	msgs chan *p4v1.StreamMessageResponse
}

func (r *rig) connect(t *testing.T) *ctl {
	t.Helper()
	conn, err := grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c := &ctl{msgs: make(chan *p4v1.StreamMessageResponse, 100)}
	c.Client = client.NewClient(p4v1.NewP4RuntimeClient(conn), devID, &p4v1.Uint128{Low: 10})
	arb := make(chan bool, 10)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- c.Run(stop, arb, c.msgs) }()
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
	select {
	case ok := <-arb:
		if !ok {
			t.Fatal("not primary")
		}
	case <-time.After(wait):
		t.Fatal("no arbitration answer")
	}
	return c
}

func (c *ctl) next(t *testing.T) *p4v1.StreamMessageResponse {
	t.Helper()
	select {
	case m := <-c.msgs:
		return m
	case <-time.After(wait):
		t.Fatal("no stream message")
	}
	return nil
}

// pushL3 pushes testdata/l3.p4 as the pipeline.
func pushL3(t *testing.T, c *ctl) {
	t.Helper()
	b, err := p4rt.BundleFromFS(os.DirFS("testdata"), "l3.p4")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	info, err := prog.P4InfoTextCompat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetFwdPipeFromBytes(context.Background(), b.Encode(), []byte(info), 1); err != nil {
		t.Fatal(err)
	}
}

func ip4(s string) []byte { return net.ParseIP(s).To4() }

func routeEntry(c *ctl, prefix string, plen int32, dmac net.HardwareAddr, p uint32) *p4v1.TableEntry {
	return c.NewTableEntry("MyIngress.ipv4_lpm",
		map[string]client.MatchInterface{"hdr.ipv4.dst": &client.LpmMatch{Value: ip4(prefix), PLen: plen}},
		c.NewTableActionDirect("MyIngress.route", [][]byte{routerMAC, dmac, {byte(p >> 8), byte(p)}}), nil)
}

func wantUpdateCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	errs := p4rt.UpdateErrors(err)
	if len(errs) != 1 || errs[0] == nil {
		t.Fatalf("got %v, want one update error %v", err, want)
	}
	if errs[0].Code() != want {
		t.Fatalf("got %v, want %v", errs[0], want)
	}
}

func TestControllerL3(t *testing.T) {
	r := newRig(t, Options{})
	c := r.connect(t)
	ctx := context.Background()
	pushL3(t, c)

	for i, e := range []*p4v1.TableEntry{
		routeEntry(c, "10.0.1.0", 24, hostMAC[1], 1),
		routeEntry(c, "10.0.2.0", 24, hostMAC[2], 2),
		routeEntry(c, "10.0.3.0", 24, hostMAC[3], 3),
	} {
		if err := c.InsertTableEntry(ctx, e); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	cpu := c.NewTableEntry("MyIngress.ipv4_lpm",
		map[string]client.MatchInterface{"hdr.ipv4.dst": &client.LpmMatch{Value: ip4("10.9.0.0"), PLen: 16}},
		c.NewTableActionDirect("MyIngress.to_cpu", nil), nil)
	if err := c.InsertTableEntry(ctx, cpu); err != nil {
		t.Fatal(err)
	}
	// Error paths reach the engine-backed device and come back as the spec says.
	wantUpdateCode(t, c.InsertTableEntry(ctx, routeEntry(c, "10.0.1.0", 24, hostMAC[2], 2)), codes.AlreadyExists)
	wantUpdateCode(t, c.DeleteTableEntry(ctx, routeEntry(c, "10.7.0.0", 16, hostMAC[2], 2)), codes.NotFound)
	wantUpdateCode(t, c.ModifyTableEntry(ctx, routeEntry(c, "10.7.0.0", 16, hostMAC[2], 2)), codes.NotFound)

	// Forwarding follows the entries: 1 -> 2, an unrouted destination is
	// dropped (the frame sent after it from the same port arrives first on
	// port 3, so the unrouted one produced nothing), 2 -> 1.
	h1, h2, h3 := r.hosts[1], r.hosts[2], r.hosts[3]
	if err := h1.p.Send(udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", "10.0.2.2", 64, "one-to-two")); err != nil {
		t.Fatal(err)
	}
	checkRouted(t, h2.next(t), hostMAC[2], 63, "one-to-two")
	if err := h1.p.Send(udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", "10.0.8.8", 64, "unrouted")); err != nil {
		t.Fatal(err)
	}
	if err := h1.p.Send(udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", "10.0.3.3", 64, "one-to-three")); err != nil {
		t.Fatal(err)
	}
	checkRouted(t, h3.next(t), hostMAC[3], 63, "one-to-three")
	if err := h2.p.Send(udpFrame(t, hostMAC[2], routerMAC, "10.0.2.2", "10.0.1.1", 9, "two-to-one")); err != nil {
		t.Fatal(err)
	}
	checkRouted(t, h1.next(t), hostMAC[1], 8, "two-to-one")

	// Modify re-points 10.0.2.0/24 to port 3.
	if err := c.ModifyTableEntry(ctx, routeEntry(c, "10.0.2.0", 24, hostMAC[3], 3)); err != nil {
		t.Fatal(err)
	}
	if err := h1.p.Send(udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", "10.0.2.2", 64, "moved")); err != nil {
		t.Fatal(err)
	}
	checkRouted(t, h3.next(t), hostMAC[3], 63, "moved")

	// Counters: port 1 received four frames, port 2 one; the direct counter
	// of 10.0.3.0/24 saw one hit, the one of 10.0.2.0/24 two.
	for p, want := range map[int64]int64{1: 4, 2: 1, 3: 0} {
		cd, err := c.ReadCounterEntry(ctx, "MyIngress.rx_port", p)
		if err != nil {
			t.Fatal(err)
		}
		if cd.PacketCount != want {
			t.Fatalf("rx_port[%d] = %d packets, want %d", p, cd.PacketCount, want)
		}
	}
	ents, err := c.ReadTableEntryWildcard(ctx, "MyIngress.ipv4_lpm")
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 4 {
		t.Fatalf("%d entries read, want 4", len(ents))
	}
	hits := map[string]int64{}
	for _, e := range ents {
		// Reading with counter_data is what gives direct counters; read each.
		req := &p4v1.TableEntry{TableId: e.TableId, Match: e.Match, CounterData: &p4v1.CounterData{}}
		got, err := c.ReadEntitySingle(ctx, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: req}})
		if err != nil {
			t.Fatal(err)
		}
		hits[net.IP(e.Match[0].GetLpm().Value).String()] = got.GetTableEntry().GetCounterData().GetPacketCount()
	}
	if hits["10.0.2.0"] != 2 || hits["10.0.3.0"] != 1 || hits["10.0.1.0"] != 1 {
		t.Fatalf("direct counter hits %v", hits)
	}
	// Indexed counter write goes to the engine.
	if err := c.ModifyCounterEntry(ctx, "MyIngress.rx_port", 1, &p4v1.CounterData{PacketCount: 100, ByteCount: 7}); err != nil {
		t.Fatal(err)
	}
	if cd, err := c.ReadCounterEntry(ctx, "MyIngress.rx_port", 1); err != nil || cd.PacketCount != 100 || cd.ByteCount != 7 {
		t.Fatalf("rx_port[1] after write: %v, %v", cd, err)
	}

	// Packet-in: 10.9.0.0/16 goes to the CPU with the ingress port.
	if err := h3.p.Send(udpFrame(t, hostMAC[3], routerMAC, "10.0.3.3", "10.9.1.1", 64, "to-cpu")); err != nil {
		t.Fatal(err)
	}
	m := c.next(t)
	pin := m.GetPacket()
	if pin == nil {
		t.Fatalf("want a packet-in, got %v", m)
	}
	if len(pin.Metadata) != 2 || !bytes.Equal(pin.Metadata[0].Value, []byte{3}) || !bytes.Equal(pin.Metadata[1].Value, []byte{1}) {
		t.Fatalf("packet-in metadata %v", pin.Metadata)
	}
	if !bytes.Contains(pin.Payload, []byte("to-cpu")) {
		t.Fatalf("packet-in payload %x", pin.Payload)
	}

	// Packet-out to port 2: the payload leaves port 2 unchanged.
	out := udpFrame(t, routerMAC, hostMAC[2], "10.0.0.254", "10.0.2.2", 64, "from-controller")
	if err := c.SendPacketOut(ctx, &p4v1.PacketOut{Payload: out, Metadata: []*p4v1.PacketMetadata{
		{MetadataId: 1, Value: []byte{2}}, {MetadataId: 2, Value: []byte{0}},
	}}); err != nil {
		t.Fatal(err)
	}
	if got := h2.next(t); !bytes.Equal(got, out) {
		t.Fatalf("packet-out arrived as %x, want %x", got, out)
	}

	// Digests: a known source running learn() sends (src, port) to the controller.
	if err := c.EnableDigest(ctx, "learn_t", &p4v1.DigestEntry_Config{MaxListSize: 1}); err != nil {
		t.Fatal(err)
	}
	learn := c.NewTableEntry("MyIngress.known_src",
		map[string]client.MatchInterface{"hdr.ethernet.src": &client.ExactMatch{Value: hostMAC[1]}},
		c.NewTableActionDirect("MyIngress.learn", nil), nil)
	if err := c.InsertTableEntry(ctx, learn); err != nil {
		t.Fatal(err)
	}
	if err := h1.p.Send(udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", "10.0.3.3", 64, "learn")); err != nil {
		t.Fatal(err)
	}
	checkRouted(t, h3.next(t), hostMAC[3], 63, "learn")
	dl := c.next(t).GetDigest()
	if dl == nil || len(dl.Data) != 1 {
		t.Fatalf("want one digest, got %v", dl)
	}
	mem := dl.Data[0].GetStruct().GetMembers()
	if len(mem) != 2 || !bytes.Equal(mem[0].GetBitstring(), canonical(hostMAC[1])) || !bytes.Equal(mem[1].GetBitstring(), []byte{1}) {
		t.Fatalf("digest data %v", dl.Data[0])
	}

	// Delete: 10.0.3.0/24 is gone, its traffic is dropped. The next routed
	// frame proves the dropped one produced nothing before it.
	if err := c.DeleteTableEntry(ctx, routeEntry(c, "10.0.3.0", 24, hostMAC[3], 3)); err != nil {
		t.Fatal(err)
	}
	if err := h2.p.Send(udpFrame(t, hostMAC[2], routerMAC, "10.0.2.2", "10.0.3.3", 64, "deleted")); err != nil {
		t.Fatal(err)
	}
	if err := h2.p.Send(udpFrame(t, hostMAC[2], routerMAC, "10.0.2.2", "10.0.1.1", 64, "after")); err != nil {
		t.Fatal(err)
	}
	checkRouted(t, h1.next(t), hostMAC[1], 63, "after")
	select {
	case f := <-h3.rx:
		t.Fatalf("port 3 got %x after its route was deleted", f)
	default:
	}
}

func TestPRE(t *testing.T) {
	r := newRig(t, Options{})
	c := r.connect(t)
	ctx := context.Background()
	pushL3(t, c)
	if err := c.InsertMulticastGroup(ctx, 5, []uint32{1, 3}); err != nil {
		t.Fatal(err)
	}
	wantUpdateCode(t, c.InsertMulticastGroup(ctx, 5, []uint32{2}), codes.AlreadyExists)
	if err := c.InsertCloneSession(ctx, 7, []uint32{2}, client.CloneSessionOptions{}); err != nil {
		t.Fatal(err)
	}
	// The PRE survives a pipeline change, in the engine too.
	pushL3(t, c)
	d := r.dev
	d.mu.Lock()
	rs, ok := d.sw.MulticastGroup(5)
	_, sok := d.sw.CloneSessionOf(7)
	d.mu.Unlock()
	if !ok || len(rs) != 2 || !sok {
		t.Fatalf("PRE after pipeline change: group %v %v, session %v", rs, ok, sok)
	}
	var n int
	ch := make(chan *p4v1.Entity, 10)
	go func() { // ReadEntityWildcard closes ch
		if err := c.ReadEntityWildcard(ctx, &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{
			PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{
				MulticastGroupEntry: &p4v1.MulticastGroupEntry{}}}}}, ch); err != nil {
			t.Error(err)
		}
	}()
	for range ch {
		n++
	}
	if n != 1 {
		t.Fatalf("%d multicast groups read, want 1", n)
	}
	if err := c.DeleteMulticastGroup(ctx, 5); err != nil {
		t.Fatal(err)
	}
	wantUpdateCode(t, c.DeleteMulticastGroup(ctx, 5), codes.NotFound)
}

func TestNoPipeline(t *testing.T) {
	dev := New(Options{CPUPort: cpuPort})
	sw, far := port.NewPair("sw", "host")
	defer far.Close()
	if err := dev.AddPort(1, sw); err != nil {
		t.Fatal(err)
	}
	if err := dev.AddPort(1, sw); err == nil {
		t.Fatal("port 1 attached twice")
	}
	dev.Start()
	if err := dev.AddPort(2, sw); err == nil {
		t.Fatal("AddPort after Start succeeded")
	}
	// Frames without a program are dropped; control calls fail cleanly.
	dev.Inject(1, udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", "10.0.2.2", 64, "x"))
	if st := dev.Stats(); st.Received != 1 || st.Errors != 1 {
		t.Fatalf("stats %+v", st)
	}
	if err := dev.PacketOut([]byte{1, 2}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("PacketOut without pipeline: %v", err)
	}
	if _, err := dev.Counter(1, 0); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("Counter without pipeline: %v", err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
}
