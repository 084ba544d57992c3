package layer_test

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/netlock-go/netlock/wire"
	"github.com/netlock-go/netlock/wire/layer"
)

var update = flag.Bool("update", false, "rewrite testdata/sample.pcap")

// capturePacket is one netlock datagram of a capture: either a header (fields) or raw UDP
// payload bytes (to build malformed packets).
type capturePacket struct {
	src, dst netip.AddrPort
	fields   *wire.Fields
	version  uint8  // with fields: nonzero overrides the version byte
	trailer  []byte // with fields: bytes after the header
	raw      []byte // instead of fields
}

var (
	clientAddr = netip.MustParseAddrPort("127.0.0.1:40001")
	serverAddr = netip.MustParseAddrPort("127.0.0.2:8888")
	switchAddr = netip.MustParseAddrPort("127.0.0.3:8888")
	ctlAddr    = netip.MustParseAddrPort("127.0.0.4:7000")
)

// sampleCapture is a short conversation that uses every op, both modes, every flag, reject
// reasons, admin sub-operations, a trailer and malformed packets. testdata/sample.pcap holds it.
func sampleCapture() []capturePacket {
	key := []byte{0x6e, 0x65, 0x74, 0x6c, 0x6f, 0x63, 0x6b, 0x21}
	var statsBody []byte
	statsBody = wire.AppendLockStat(statsBody, wire.LockStat{Lock: 7, Requests: 1200, Overflows: 30, Depth: 9, Declared: 16})
	statsBody = wire.AppendLockStat(statsBody, wire.LockStat{Lock: 8, Requests: 5})
	acq := &wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 42, Txn: 1001, Tenant: 3,
		Priority: 1, Timestamp: 1_700_000_000_000_000_000, LeaseMicros: 250_000}
	return []capturePacket{
		{src: clientAddr, dst: serverAddr, fields: acq},
		{src: serverAddr, dst: clientAddr, fields: &wire.Fields{Op: wire.OpGrant, Mode: wire.Exclusive,
			Lock: 42, Txn: 1001, Tenant: 3, Priority: 1, Token: 77, Timestamp: acq.Timestamp,
			LeaseMicros: 250_000}},
		{src: clientAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpLeaseProbe, Mode: wire.Exclusive,
			Lock: 42, Txn: 1001, Token: 77}},
		{src: serverAddr, dst: clientAddr, fields: &wire.Fields{Op: wire.OpLeaseProbe, Mode: wire.Exclusive,
			Flags: wire.FlagReply | wire.FlagRenewed, Lock: 42, Txn: 1001, Token: 77, LeaseMicros: 500_000}},
		{src: clientAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive,
			Flags: wire.FlagRetry, Lock: 42, Txn: 1001, Token: 77}},
		{src: serverAddr, dst: clientAddr, fields: &wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive,
			Flags: wire.FlagReply, Lock: 42, Txn: 1001, Token: 77}},
		{src: clientAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared,
			Flags: wire.FlagTry, Lock: 43, Txn: 1002}},
		{src: serverAddr, dst: clientAddr, fields: &wire.Fields{Op: wire.OpReject, Mode: wire.Shared,
			Status: wire.StatusWouldBlock, Lock: 43, Txn: 1002}},
		{src: switchAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpOverflow, Mode: wire.Exclusive,
			Flags: wire.FlagForwarded, Lock: 7, Txn: 1003, Client: clientAddr}},
		{src: switchAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpQueueEmpty, Lock: 7, Slots: 12}},
		{src: serverAddr, dst: switchAddr, fields: &wire.Fields{Op: wire.OpPushBack, Mode: wire.Exclusive,
			Flags: wire.FlagForwarded, Lock: 7, Txn: 1003, Client: clientAddr}},
		{src: clientAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing}},
		{src: serverAddr, dst: clientAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing,
			Flags: wire.FlagReply, Slots: 2}},
		{src: clientAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive,
			Lock: 44, Txn: 1004}, trailer: []byte("one-RTT payload")},
		// The control plane's sub-operations, with the rack key after the header.
		{src: ctlAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminTokenFloor, Lock: 7,
			Txn: 5001, Token: 1 << 41}, trailer: key},
		{src: ctlAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminYield, Lock: 7, Txn: 5002,
			Timestamp: 3}, trailer: key},
		{src: serverAddr, dst: ctlAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminAdopt,
			Flags: wire.FlagReply, Lock: 7, Txn: 5003, Token: 1<<41 + 9, LeaseMicros: 2, Slots: 1}, trailer: key},
		{src: serverAddr, dst: ctlAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminStats,
			Flags: wire.FlagReply, Txn: 5004, Token: 1_000_000_000, Slots: 2},
			trailer: append(append(append([]byte(nil), key...), statsBody...), "x"...)},
		{src: ctlAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminTakeover, Txn: 5005,
			Token: 3, LeaseMicros: 2_000_000}, trailer: key},
		{src: serverAddr, dst: ctlAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminResidents,
			Flags: wire.FlagReply, Txn: 5006, Slots: 3}, trailer: append(append([]byte(nil), key...), 0, 0, 0, 7, 0, 0, 0, 9,
			0, 1, 0, 0)},
		{src: ctlAddr, dst: switchAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminSwitchProbe, Lock: 7,
			Txn: 5007}, trailer: key},
		{src: serverAddr, dst: clientAddr, fields: &wire.Fields{Op: wire.OpGrant, Mode: wire.Exclusive,
			Flags: 0xff, Status: 200, Priority: 255, Tenant: math.MaxUint16, Lock: math.MaxUint32,
			Txn: math.MaxUint64, Token: math.MaxUint64, Timestamp: math.MaxUint64,
			LeaseMicros: math.MaxUint32, Client: netip.MustParseAddrPort("255.255.255.255:65535"),
			Slots: math.MaxUint16}}, // every field at its maximum, reserved flag bits set
		{src: clientAddr, dst: serverAddr, raw: []byte{1, 0, 1, 0, 0}},                                            // short
		{src: clientAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpAcquire, Lock: 1, Txn: 1}, version: 2}, // bad version
		{src: clientAddr, dst: serverAddr, raw: func() []byte { // unknown op
			b := wire.Append(nil, &wire.Fields{Lock: 1, Txn: 1})
			b[1] = 200
			return b
		}()},
		{src: clientAddr, dst: serverAddr, raw: func() []byte { // unknown mode
			b := wire.Append(nil, &wire.Fields{Lock: 1, Txn: 1})
			b[2] = 5
			return b
		}()},
	}
}

var captureStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// serializeFrame builds Ethernet/IPv4/UDP/netlock with gopacket, lengths and checksums fixed.
func serializeFrame(t testing.TB, p capturePacket) []byte {
	t.Helper()
	eth := &layers.Ethernet{
		SrcMAC:       net.HardwareAddr{0x02, 0, 0, 0, 0, 1},
		DstMAC:       net.HardwareAddr{0x02, 0, 0, 0, 0, 2},
		EthernetType: layers.EthernetTypeIPv4,
	}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: p.src.Addr().AsSlice(), DstIP: p.dst.Addr().AsSlice()}
	udp := &layers.UDP{SrcPort: layers.UDPPort(p.src.Port()), DstPort: layers.UDPPort(p.dst.Port())}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	ls := []gopacket.SerializableLayer{eth, ip, udp}
	switch {
	case p.raw != nil:
		ls = append(ls, gopacket.Payload(p.raw))
	default:
		ls = append(ls, &layer.NetLock{Version: p.version, Fields: *p.fields})
		if p.trailer != nil {
			ls = append(ls, gopacket.Payload(p.trailer))
		}
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writePcap writes the packets as an Ethernet pcap with deterministic timestamps.
func writePcap(t testing.TB, path string, pkts []capturePacket) {
	t.Helper()
	var out bytes.Buffer
	w := pcapgo.NewWriter(&out)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, p := range pkts {
		frame := serializeFrame(t, p)
		ci := gopacket.CaptureInfo{Timestamp: captureStart.Add(time.Duration(i) * time.Millisecond),
			CaptureLength: len(frame), Length: len(frame)}
		if err := w.WritePacket(ci, frame); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readPcap decodes every packet of an Ethernet pcap with gopacket's default decoders.
func readPcap(t testing.TB, path string) []gopacket.Packet {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var pkts []gopacket.Packet
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		p.Metadata().CaptureInfo = ci
		pkts = append(pkts, p)
	}
	return pkts
}

func TestLayerPcapRoundTrip(t *testing.T) {
	want := sampleCapture()
	path := filepath.Join(t.TempDir(), "netlock.pcap")
	writePcap(t, path, want)
	got := readPcap(t, path)
	if len(got) != len(want) {
		t.Fatalf("read %d packets, wrote %d", len(got), len(want))
	}
	for i, p := range got {
		w := want[i]
		if udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP); udp == nil ||
			uint16(udp.SrcPort) != w.src.Port() || uint16(udp.DstPort) != w.dst.Port() {
			t.Fatalf("#%d: UDP layer %v", i, p.Layer(layers.LayerTypeUDP))
		}
		l, _ := p.Layer(layer.TypeNetLock).(*layer.NetLock)
		if w.raw != nil || w.version != 0 {
			// Malformed: no netlock layer, an error layer instead.
			if l != nil {
				t.Fatalf("#%d: malformed packet decoded as %v", i, l)
			}
			if p.ErrorLayer() == nil {
				t.Fatalf("#%d: malformed packet without error layer: %v", i, p)
			}
			continue
		}
		if l == nil {
			t.Fatalf("#%d: no netlock layer in %v", i, p)
		}
		if p.ErrorLayer() != nil {
			t.Fatalf("#%d: error layer %v", i, p.ErrorLayer().Error())
		}
		if l.Fields != *w.fields || l.Version != wire.Version {
			t.Fatalf("#%d: decoded %+v, want %+v", i, l.Fields, *w.fields)
		}
		if app := p.ApplicationLayer(); app != l {
			t.Fatalf("#%d: application layer %v", i, app)
		}
		if len(l.LayerContents()) != wire.Len {
			t.Fatalf("#%d: contents %d bytes", i, len(l.LayerContents()))
		}
		if !bytes.Equal(l.Payload(), w.trailer) && (len(l.Payload()) != 0 || w.trailer != nil) {
			t.Fatalf("#%d: payload %q, want %q", i, l.Payload(), w.trailer)
		}
		if w.trailer != nil {
			pl, _ := p.Layer(gopacket.LayerTypePayload).(*gopacket.Payload)
			if pl == nil || !bytes.Equal(*pl, w.trailer) {
				t.Fatalf("#%d: payload layer %v", i, pl)
			}
		}
		if s := gopacket.LayerString(l); s != "NetLock\t"+w.fields.String() {
			t.Fatalf("#%d: LayerString %q", i, s)
		}
	}
}

func TestLayerErrors(t *testing.T) {
	tests := []struct {
		name      string
		b         []byte
		want      error
		truncated bool
	}{
		{"short", make([]byte, 47), wire.ErrShort, true},
		{"version", make([]byte, 48), wire.ErrVersion, false},
		{"op", append([]byte{1, 99}, make([]byte, 46)...), wire.ErrOp, false},
		{"mode", append([]byte{1, 0, 9}, make([]byte, 45)...), wire.ErrMode, false},
	}
	for _, tt := range tests {
		var l layer.NetLock
		var fb feedback
		if err := l.DecodeFromBytes(tt.b, &fb); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
		if bool(fb) != tt.truncated {
			t.Errorf("%s: truncated %v", tt.name, fb)
		}
	}
}

type feedback bool

func (f *feedback) SetTruncated() { *f = true }

// TestDecodingLayerParser decodes with gopacket's allocation-light DecodingLayerParser, the way a
// capture tool would, and checks that UDP hands port 8888 to the netlock layer in both directions.
func TestDecodingLayerParser(t *testing.T) {
	var (
		eth layers.Ethernet
		ip  layers.IPv4
		udp layers.UDP
		nl  layer.NetLock
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip, &udp, &nl)
	decoded := make([]gopacket.LayerType, 0, 4)
	for i, p := range sampleCapture()[:6] {
		if err := parser.DecodeLayers(serializeFrame(t, p), &decoded); err != nil {
			t.Fatalf("#%d: %v", i, err)
		}
		if len(decoded) != 4 || decoded[3] != layer.TypeNetLock {
			t.Fatalf("#%d: decoded %v", i, decoded)
		}
		if nl.Fields != *p.fields {
			t.Fatalf("#%d: %+v", i, nl.Fields)
		}
	}
	if layers.UDPPort(wire.Port).LayerType() != layer.TypeNetLock {
		t.Fatal("port 8888 not registered")
	}
	if layer.TypeNetLock.String() != "NetLock" {
		t.Fatal(layer.TypeNetLock.String())
	}
}

// TestSamplePcap keeps testdata/sample.pcap (a capture for people to open in Wireshark with
// wire/wireshark/netlock.lua) equal to what sampleCapture serializes; -update rewrites it.
func TestSamplePcap(t *testing.T) {
	golden := filepath.Join("testdata", "sample.pcap")
	if *update {
		writePcap(t, golden, sampleCapture())
	}
	fresh := filepath.Join(t.TempDir(), "sample.pcap")
	writePcap(t, fresh, sampleCapture())
	a, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./wire/layer -run TestSamplePcap -update)", err)
	}
	b, _ := os.ReadFile(fresh)
	if !bytes.Equal(a, b) {
		t.Fatal("testdata/sample.pcap is stale: run go test ./wire/layer -run TestSamplePcap -update")
	}
	if n := len(readPcap(t, golden)); n != len(sampleCapture()) {
		t.Fatalf("golden has %d packets", n)
	}
}
