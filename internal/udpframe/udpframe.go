// Package udpframe builds and reads Ethernet II / IPv4 / UDP frames: the frames that carry
// netlock datagrams through the software switch's ports. It is allocation-free: Append writes
// into a caller's buffer and Parse returns views into the frame.
//
// Only what netlock's rack needs is supported: IPv4 without options, no fragments, UDP with the
// checksum left zero (allowed for IPv4, RFC 768) or checked when present.
package udpframe

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// Sizes of the headers.
const (
	EthLen  = 14
	IPv4Len = 20
	UDPLen  = 8
	// HeaderLen is the size of all three headers: the payload starts there.
	HeaderLen = EthLen + IPv4Len + UDPLen
)

// EtherTypeIPv4 is the EtherType of IPv4.
const EtherTypeIPv4 = 0x0800

// MAC is an Ethernet address.
type MAC [6]byte

// Endpoint is one end of a frame: its MAC and its IPv4 UDP address.
type Endpoint struct {
	MAC  MAC
	Addr netip.AddrPort
}

// Decoding errors.
var (
	ErrShort     = errors.New("udpframe: frame too short")
	ErrNotIPv4   = errors.New("udpframe: not IPv4")
	ErrNotUDP    = errors.New("udpframe: not UDP")
	ErrOptions   = errors.New("udpframe: IPv4 options or fragment")
	ErrLength    = errors.New("udpframe: inconsistent lengths")
	ErrChecksum  = errors.New("udpframe: bad IPv4 header checksum")
	ErrUDPChksum = errors.New("udpframe: bad UDP checksum")
)

// Append appends a frame from src to dst carrying payload to b and returns the extended
// slice. TTL is 64; the UDP checksum is computed. Both addresses must be IPv4.
func Append(b []byte, src, dst Endpoint, payload []byte) []byte {
	return appendFrame(b, src, dst, payload, true)
}

// AppendNoChecksum is Append with the UDP checksum left zero (what netlock.p4 sends).
func AppendNoChecksum(b []byte, src, dst Endpoint, payload []byte) []byte {
	return appendFrame(b, src, dst, payload, false)
}

func appendFrame(b []byte, src, dst Endpoint, payload []byte, csum bool) []byte {
	n := len(b)
	total := HeaderLen + len(payload)
	if cap(b)-n < total {
		nb := make([]byte, n, n+total)
		copy(nb, b)
		b = nb
	}
	b = b[:n+total]
	f := b[n:]
	copy(f[0:6], dst.MAC[:])
	copy(f[6:12], src.MAC[:])
	binary.BigEndian.PutUint16(f[12:], EtherTypeIPv4)
	ip := f[EthLen : EthLen+IPv4Len]
	ip[0], ip[1] = 0x45, 0
	binary.BigEndian.PutUint16(ip[2:], uint16(IPv4Len+UDPLen+len(payload)))
	binary.BigEndian.PutUint32(ip[4:], 0)
	ip[8], ip[9] = 64, 17
	ip[10], ip[11] = 0, 0
	s4, d4 := src.Addr.Addr().Unmap().As4(), dst.Addr.Addr().Unmap().As4()
	copy(ip[12:16], s4[:])
	copy(ip[16:20], d4[:])
	binary.BigEndian.PutUint16(ip[10:], Checksum(ip, 0))
	u := f[EthLen+IPv4Len : HeaderLen]
	binary.BigEndian.PutUint16(u[0:], src.Addr.Port())
	binary.BigEndian.PutUint16(u[2:], dst.Addr.Port())
	binary.BigEndian.PutUint16(u[4:], uint16(UDPLen+len(payload)))
	binary.BigEndian.PutUint16(u[6:], 0)
	copy(f[HeaderLen:], payload)
	if csum {
		binary.BigEndian.PutUint16(u[6:], udpChecksum(ip, f[EthLen+IPv4Len:]))
	}
	return b
}

// Frame is a parsed frame: views into the bytes given to Parse.
type Frame struct {
	DstMAC, SrcMAC MAC
	Src, Dst       netip.AddrPort
	TTL            uint8
	Payload        []byte
}

// Parse reads an Ethernet/IPv4/UDP frame. It checks the IPv4 header checksum and, when it is
// not zero, the UDP checksum. Bytes after the IPv4 total length (Ethernet padding) are ignored.
func Parse(b []byte, f *Frame) error {
	if len(b) < HeaderLen {
		return ErrShort
	}
	if binary.BigEndian.Uint16(b[12:]) != EtherTypeIPv4 {
		return ErrNotIPv4
	}
	ip := b[EthLen : EthLen+IPv4Len]
	if ip[0] != 0x45 {
		if ip[0]>>4 != 4 {
			return ErrNotIPv4
		}
		return ErrOptions
	}
	if binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 {
		return ErrOptions
	}
	if ip[9] != 17 {
		return ErrNotUDP
	}
	if Checksum(ip, 0) != 0 {
		return ErrChecksum
	}
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if total < IPv4Len+UDPLen || EthLen+total > len(b) {
		return ErrLength
	}
	seg := b[EthLen+IPv4Len : EthLen+total]
	ulen := int(binary.BigEndian.Uint16(seg[4:]))
	if ulen < UDPLen || ulen > len(seg) {
		return ErrLength
	}
	seg = seg[:ulen]
	if binary.BigEndian.Uint16(seg[6:]) != 0 && udpChecksum(ip, seg) != 0 {
		return ErrUDPChksum
	}
	copy(f.DstMAC[:], b[0:6])
	copy(f.SrcMAC[:], b[6:12])
	f.Src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(ip[12:16])), binary.BigEndian.Uint16(seg[0:]))
	f.Dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(ip[16:20])), binary.BigEndian.Uint16(seg[2:]))
	f.TTL = ip[8]
	f.Payload = seg[UDPLen:]
	return nil
}

// Checksum is the Internet checksum (RFC 1071) of b folded with an initial sum.
func Checksum(b []byte, initial uint32) uint16 {
	sum := initial
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// udpChecksum computes the UDP checksum of seg (header and payload) under the IPv4 pseudo
// header of ip. A computed 0 is sent as 0xffff (RFC 768). Over a segment whose checksum field
// is set, a correct segment yields 0.
func udpChecksum(ip, seg []byte) uint16 {
	var sum uint32
	for i := 12; i < 20; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	sum += 17 + uint32(len(seg))
	c := Checksum(seg, sum)
	if c == 0 && binary.BigEndian.Uint16(seg[6:]) == 0 {
		return 0xffff
	}
	return c
}
