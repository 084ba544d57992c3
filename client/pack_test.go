package client

import (
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/netlock-go/netlock/wire"
)

// recordingConn records what is written to it and sends nothing.
type recordingConn struct {
	net.PacketConn
	mu   sync.Mutex
	sent []recorded
}

type recorded struct {
	to string
	b  []byte
}

func (r *recordingConn) WriteTo(p []byte, to net.Addr) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, recorded{to.String(), append([]byte(nil), p...)})
	return len(p), nil
}

// TestPackBatches: with Config.Batch = 3, the requests queued at once go out as batch datagrams
// of up to 3 headers per destination, in queue order, every header flagged (a lone request
// too); a retransmission goes single and unflagged. Control: with Batch 0 every request is a
// datagram of its own, unflagged.
func TestPackBatches(t *testing.T) {
	a, b := netip.MustParseAddrPort("127.0.0.1:9001"), netip.MustParseAddrPort("127.0.0.1:9002")
	acq := func(lock uint32, flags wire.Flags) wire.Fields {
		return wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: uint64(lock), Flags: flags}
	}
	queue := []struct {
		to netip.AddrPort
		f  wire.Fields
	}{
		{a, acq(1, 0)}, {b, acq(2, 0)}, {a, acq(3, 0)}, {a, acq(4, wire.FlagRetry)}, {a, acq(5, 0)},
		{a, acq(6, 0)}, {b, acq(7, 0)}, {a, acq(8, 0)},
	}
	tests := []struct {
		batch int
		want  []string // per datagram: destination and locks, "*" for a flagged header
	}{
		{3, []string{"a 1* 3* 5*", "b 2* 7*", "a 4", "a 6* 8*"}},
		{0, []string{"a 1", "b 2", "a 3", "a 4", "a 5", "a 6", "b 7", "a 8"}},
	}
	for _, tt := range tests {
		rc := &recordingConn{}
		c := newClient(t, Config{Servers: []string{a.String()}, Batch: tt.batch,
			WrapConn: func(pc net.PacketConn) net.PacketConn { rc.PacketConn = pc; return rc }})
		c.sendq.mu.Lock()
		for _, q := range queue {
			c.sendq.queue = append(c.sendq.queue, outPkt{to: q.to})
			wire.Header(c.sendq.queue[len(c.sendq.queue)-1].buf[:]).Encode(&q.f)
		}
		c.sendq.mu.Unlock()
		c.flush()
		rc.mu.Lock()
		var got []string
		for _, d := range rc.sent {
			s := map[string]string{a.String(): "a", b.String(): "b"}[d.to]
			k := len(d.b) / wire.Len
			if wire.IsBatch(d.b) {
				var err error
				if k, err = wire.ParseBatch(d.b); err != nil {
					t.Fatalf("batch %d: datagram to %s does not parse: %v", tt.batch, d.to, err)
				}
			}
			for i := 0; i < k; i++ {
				h := wire.Header(d.b[i*wire.Len:])
				s += " " + string(rune('0'+h.Lock()))
				if h.Has(wire.FlagBatch) {
					s += "*"
				}
			}
			got = append(got, s)
		}
		rc.mu.Unlock()
		if len(got) != len(tt.want) {
			t.Fatalf("batch %d: datagrams %q, want %q", tt.batch, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Fatalf("batch %d: datagrams %q, want %q", tt.batch, got, tt.want)
			}
		}
		if st := c.Stats(); st.Datagrams != int64(len(tt.want)) {
			t.Fatalf("batch %d: Stats.Datagrams %d, want %d", tt.batch, st.Datagrams, len(tt.want))
		}
	}
	if _, err := New(Config{Servers: []string{a.String()}, Batch: wire.MaxBatch + 1}); err == nil {
		t.Fatal("Batch above wire.MaxBatch accepted")
	}
}
