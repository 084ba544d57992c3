package udpframe

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

var (
	src = Endpoint{MAC: MAC{2, 0, 10, 0, 2, 1}, Addr: netip.MustParseAddrPort("10.0.2.1:40001")}
	dst = Endpoint{MAC: MAC{2, 0, 0, 0, 0, 1}, Addr: netip.MustParseAddrPort("10.0.1.1:8888")}
)

// TestAppendAgainstGopacket decodes Append's frames with gopacket (an independent codec):
// addresses, lengths, TTL and both checksums.
func TestAppendAgainstGopacket(t *testing.T) {
	for _, payload := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte{0xab}, 48), bytes.Repeat([]byte{1}, 1001)} {
		for _, csum := range []bool{true, false} {
			var f []byte
			if csum {
				f = Append([]byte("prefix"), src, dst, payload)[6:]
			} else {
				f = AppendNoChecksum(nil, src, dst, payload)
			}
			pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.DecodeOptions{})
			eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
			ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
			udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
			if eth == nil || ip == nil || udp == nil {
				t.Fatalf("gopacket cannot decode %x", f)
			}
			if !bytes.Equal(eth.SrcMAC, src.MAC[:]) || !bytes.Equal(eth.DstMAC, dst.MAC[:]) ||
				!ip.SrcIP.Equal(net.IP(src.Addr.Addr().AsSlice())) || !ip.DstIP.Equal(net.IP(dst.Addr.Addr().AsSlice())) ||
				ip.TTL != 64 || int(ip.Length) != 28+len(payload) || uint16(udp.SrcPort) != 40001 ||
				uint16(udp.DstPort) != 8888 || int(udp.Length) != 8+len(payload) || !bytes.Equal(udp.Payload, payload) {
				t.Fatalf("decoded %v %v %v", eth, ip, udp)
			}
			// gopacket recomputes the checksums when it serializes: compare.
			buf := gopacket.NewSerializeBuffer()
			if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
				t.Fatal(err)
			}
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true}, eth, ip, udp,
				gopacket.Payload(payload)); err != nil {
				t.Fatal(err)
			}
			want := buf.Bytes()
			if binary.BigEndian.Uint16(f[24:]) != binary.BigEndian.Uint16(want[24:]) {
				t.Errorf("IPv4 checksum %04x, gopacket %04x", binary.BigEndian.Uint16(f[24:]), binary.BigEndian.Uint16(want[24:]))
			}
			if csum && binary.BigEndian.Uint16(f[40:]) != binary.BigEndian.Uint16(want[40:]) {
				t.Errorf("UDP checksum %04x, gopacket %04x", binary.BigEndian.Uint16(f[40:]), binary.BigEndian.Uint16(want[40:]))
			}
			if !csum && binary.BigEndian.Uint16(f[40:]) != 0 {
				t.Error("AppendNoChecksum wrote a UDP checksum")
			}
			var got Frame
			if err := Parse(f, &got); err != nil {
				t.Fatal(err)
			}
			if got.Src != src.Addr || got.Dst != dst.Addr || got.SrcMAC != src.MAC || got.DstMAC != dst.MAC ||
				!bytes.Equal(got.Payload, payload) {
				t.Fatalf("Parse: %+v", got)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	good := Append(nil, src, dst, []byte("payload"))
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, tt := range []struct {
		name string
		b    []byte
		want error
	}{
		{"short", good[:HeaderLen-1], ErrShort},
		{"arp", mod(func(b []byte) []byte { b[12], b[13] = 8, 6; return b }), ErrNotIPv4},
		{"ipv6 version", mod(func(b []byte) []byte { b[14] = 0x65; return b }), ErrNotIPv4},
		{"options", mod(func(b []byte) []byte { b[14] = 0x46; return b }), ErrOptions},
		{"fragment", mod(func(b []byte) []byte { b[20] = 0x20; return b }), ErrOptions},
		{"tcp", mod(func(b []byte) []byte { b[23] = 6; return b }), ErrNotUDP},
		{"ip checksum", mod(func(b []byte) []byte { b[25] ^= 1; return b }), ErrChecksum},
		{"udp checksum", mod(func(b []byte) []byte { b[HeaderLen] ^= 1; return b }), ErrUDPChksum},
		{"truncated", good[:len(good)-1], ErrLength},
	} {
		var f Frame
		if err := Parse(tt.b, &f); err != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// Ethernet padding after the IPv4 packet is ignored.
	var f Frame
	if err := Parse(append(append([]byte(nil), good...), 0, 0, 0), &f); err != nil || string(f.Payload) != "payload" {
		t.Errorf("padded frame: %v %q", err, f.Payload)
	}
}

func TestAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	payload := make([]byte, 48)
	var f Frame
	if n := testing.AllocsPerRun(100, func() {
		buf = Append(buf[:0], src, dst, payload)
		if err := Parse(buf, &f); err != nil {
			panic(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(Append(nil, src, dst, []byte("seed")))
	f.Add(AppendNoChecksum(nil, src, dst, make([]byte, 48)))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		if err := Parse(b, &fr); err != nil {
			return
		}
		// What parses re-encodes to a frame that parses to the same fields.
		again := AppendNoChecksum(nil, Endpoint{MAC: fr.SrcMAC, Addr: fr.Src}, Endpoint{MAC: fr.DstMAC, Addr: fr.Dst}, fr.Payload)
		var fr2 Frame
		if err := Parse(again, &fr2); err != nil || fr2.Src != fr.Src || fr2.Dst != fr.Dst || !bytes.Equal(fr2.Payload, fr.Payload) {
			t.Fatalf("round trip: %v %+v %+v", err, fr, fr2)
		}
	})
}
