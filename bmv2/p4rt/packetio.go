package p4rt

import (
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// headerLen is the byte length of a controller header: its fields packed
// most-significant bit first, padded with zero bits to a whole byte.
func headerLen(h *p4configv1.ControllerPacketMetadata) int {
	bitsum := 0
	for _, m := range h.GetMetadata() {
		bitsum += int(m.GetBitwidth())
	}
	return (bitsum + 7) / 8
}

// getBits reads width bits starting at bit offset off (MSB first) of b.
func getBits(b []byte, off, width int) []byte {
	n := (width + 7) / 8
	out := make([]byte, n)
	for i := 0; i < width; i++ {
		src := off + i
		if b[src/8]&(0x80>>(src%8)) != 0 {
			dst := n*8 - width + i // right-align in out
			out[dst/8] |= 0x80 >> (dst % 8)
		}
	}
	return out
}

// putBits writes the low width bits of the big-endian value v at bit offset off of b.
func putBits(b []byte, off, width int, v []byte) {
	vbits := len(v) * 8
	for i := 0; i < width; i++ {
		src := vbits - width + i
		if src < 0 {
			continue
		}
		if v[src/8]&(0x80>>(src%8)) != 0 {
			dst := off + i
			b[dst/8] |= 0x80 >> (dst % 8)
		}
	}
}

// EncodePacketOut builds the frame a PacketOut injects: the packet_out
// controller header (every field of the header must be given, each once)
// followed by the payload. With no packet_out header in the P4Info, metadata
// must be empty and the frame is the payload.
func EncodePacketOut(h *p4configv1.ControllerPacketMetadata, po *p4v1.PacketOut) ([]byte, error) {
	if h == nil {
		if len(po.GetMetadata()) > 0 {
			return nil, invalid("packet-out metadata given but the program has no @controller_header(\"packet_out\") header")
		}
		return append([]byte(nil), po.GetPayload()...), nil
	}
	vals := map[uint32][]byte{}
	for _, m := range po.GetMetadata() {
		if _, dup := vals[m.GetMetadataId()]; dup {
			return nil, invalid("packet-out metadata id %d given twice", m.GetMetadataId())
		}
		vals[m.GetMetadataId()] = m.GetValue()
	}
	hl := headerLen(h)
	frame := make([]byte, hl, hl+len(po.GetPayload()))
	off := 0
	for _, f := range h.GetMetadata() {
		v, ok := vals[f.GetId()]
		if !ok {
			return nil, invalid("packet-out metadata %s (id %d) is missing", f.GetName(), f.GetId())
		}
		delete(vals, f.GetId())
		c, err := Canonical(v, int(f.GetBitwidth()))
		if err != nil {
			return nil, invalid("packet-out metadata %s: %s", f.GetName(), status.Convert(err).Message())
		}
		putBits(frame, off, int(f.GetBitwidth()), c)
		off += int(f.GetBitwidth())
	}
	for id := range vals {
		return nil, invalid("unknown packet-out metadata id %d", id)
	}
	return append(frame, po.GetPayload()...), nil
}

// DecodePacketIn splits a frame sent to the CPU port into packet_in metadata
// (canonical bytestrings) and payload.
func DecodePacketIn(h *p4configv1.ControllerPacketMetadata, frame []byte) (*p4v1.PacketIn, error) {
	if h == nil {
		return &p4v1.PacketIn{Payload: append([]byte(nil), frame...)}, nil
	}
	hl := headerLen(h)
	if len(frame) < hl {
		return nil, status.Errorf(codes.DataLoss, "packet-in of %d bytes is shorter than its %d-byte header", len(frame), hl)
	}
	pi := &p4v1.PacketIn{Payload: append([]byte(nil), frame[hl:]...)}
	off := 0
	for _, f := range h.GetMetadata() {
		w := int(f.GetBitwidth())
		v, _ := Canonical(getBits(frame, off, w), w)
		pi.Metadata = append(pi.Metadata, &p4v1.PacketMetadata{MetadataId: f.GetId(), Value: v})
		off += w
	}
	return pi, nil
}
