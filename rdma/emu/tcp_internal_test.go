package emu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Every verb survives an encode/decode round trip through the transport framing.
func TestRequestFramingRoundTrip(t *testing.T) {
	p := verbs.MakePtr(3, 4096)
	wrs := []verbs.WorkRequest{
		{Op: verbs.OpRead, Remote: p},
		{Op: verbs.OpRead, Remote: p, Words: 17},
		{Op: verbs.OpWrite, Remote: p, Value: 9},
		{Op: verbs.OpWrite, Remote: p, Data: []uint64{1, 2, 3}},
		{Op: verbs.OpCAS, Remote: p, Compare: 1, Value: 2},
		{Op: verbs.OpFAA, Remote: p, Value: 5},
		{Op: verbs.OpMaskedCAS, Remote: p, Compare: 1, CompareMask: 3, Value: 4, SwapMask: 5},
		{Op: verbs.OpMaskedFAA, Remote: p, Value: 6, Boundary: 1 << 7},
	}
	for _, wr := range wrs {
		b := appendRequest(nil, &wr, 11)
		h := reqHeader(b[:reqHeaderLen])
		if err := h.validate(); err != nil {
			t.Fatalf("%v: %v", wr.Op, err)
		}
		if h.From() != 11 || len(b) != reqHeaderLen+8*h.operands() {
			t.Fatalf("%v: from %d, %d bytes for %d operands", wr.Op, h.From(), len(b), h.operands())
		}
		got := decodeRequest(h, b[reqHeaderLen:])
		if got.Op != wr.Op || got.Remote != wr.Remote || got.Compare != wr.Compare || got.CompareMask != wr.CompareMask ||
			got.SwapMask != wr.SwapMask || got.Boundary != wr.Boundary || got.Len() != wr.Len() ||
			(len(wr.Data) == 0 && wr.Op == verbs.OpWrite && got.Value != wr.Value) || (len(wr.Data) > 0 && got.Data[2] != 3) {
			t.Fatalf("%v: round trip gave %+v", wr.Op, got)
		}
	}
}

// FuzzRequestHeader: any 16 bytes either fail validation or decode to a request whose re-encoding
// reproduces the frame.
func FuzzRequestHeader(f *testing.F) {
	for _, wr := range []verbs.WorkRequest{{Op: verbs.OpRead, Words: 4}, {Op: verbs.OpMaskedCAS}, {Op: verbs.OpWrite, Data: []uint64{1, 2}}} {
		f.Add(appendRequest(nil, &wr, 1))
	}
	f.Add(make([]byte, 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < reqHeaderLen {
			if reqHeader(b).validate() == nil {
				t.Fatal("short header accepted")
			}
			return
		}
		h := reqHeader(b[:reqHeaderLen])
		if h.validate() != nil {
			return
		}
		need := reqHeaderLen + 8*h.operands()
		if len(b) < need {
			return
		}
		wr := decodeRequest(h, b[reqHeaderLen:need])
		if again := appendRequest(nil, &wr, h.From()); !bytes.Equal(again, b[:need]) {
			t.Fatalf("re-encoding %x gave %x", b[:need], again)
		}
	})
}

// FuzzResponseHeader: validation never panics and accepts only counts that match the request.
func FuzzResponseHeader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1}, uint8(verbs.OpCAS), 1)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 4}, uint8(verbs.OpRead), 4)
	f.Fuzz(func(t *testing.T, b []byte, op uint8, words int) {
		h := respHeader(b)
		if h.validate(verbs.Opcode(op), words) != nil {
			return
		}
		if h.Status() == statusOK && verbs.Opcode(op) == verbs.OpRead && int(h.Count()) != words {
			t.Fatalf("count %d accepted for %d words", h.Count(), words)
		}
	})
}

// A malformed request header is answered with status 2 and the connection is closed.
func TestMalformedFrameClosesConnection(t *testing.T) {
	n, err := NewNode(Config{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.Serve(ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	frame := make([]byte, reqHeaderLen)
	frame[0] = byte(verbs.OpRead)
	binary.BigEndian.PutUint32(frame[4:], verbs.MaxWords+1)
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, respHeaderLen)
	if _, err := io.ReadFull(c, resp); err != nil {
		t.Fatal(err)
	}
	if resp[0] != statusMalformed {
		t.Fatalf("status %d, want %d", resp[0], statusMalformed)
	}
	if _, err := c.Read(resp); !errors.Is(err, io.EOF) {
		t.Fatalf("connection not closed: %v", err)
	}
}
