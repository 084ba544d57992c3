package client

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// TestAcquireEndsOnExpiryNotice: the switch granted an acquire, the grant was lost, and the
// grant's lease ran out before a retransmission fetched it again; the switch's lease sweep
// force-releases it and tells the holder with reject lease-expired carrying the grant's token
// and the acquire's timestamp (p4/netlock.p4, admin force-release). From then on the switch
// ignores the acquire's retransmissions (the request ended), so that notice is the acquire's
// only answer: the waiting acquire must end with ErrLeaseLost on it, not wait for its context
// (the switch soak's "lost" acquisitions). A lease-expired notice with the timestamp of an
// earlier request of the same txn is not this acquire's answer and is ignored (the acquire is
// then granted).
func TestAcquireEndsOnExpiryNotice(t *testing.T) {
	for _, tt := range []struct {
		name     string
		tsOffset uint64 // subtracted from the acquire's timestamp in the notice
		want     error  // nil: granted after the notice
	}{
		{"this acquire's grant expired", 0, ErrLeaseLost},
		{"an earlier request's notice", 1000, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sw, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer sw.Close()
			c := newClient(t, Config{Servers: []string{sw.LocalAddr().String()}})
			go func() {
				buf := make([]byte, 2048)
				n, from, err := sw.ReadFrom(buf)
				if err != nil {
					return
				}
				h, err := wire.Parse(buf[:n])
				if err != nil {
					return
				}
				var acq wire.Fields
				h.Decode(&acq)
				send := func(f wire.Fields) {
					var b [wire.Len]byte
					wire.Header(b[:]).Encode(&f)
					_, _ = sw.WriteTo(b[:], from)
				}
				// The grant (token 77) is "lost": only the force-release notice is sent.
				send(wire.Fields{Op: wire.OpReject, Status: wire.StatusLeaseExpired, Mode: acq.Mode, Lock: acq.Lock,
					Txn: acq.Txn, Token: 77, Timestamp: acq.Timestamp - tt.tsOffset})
				if tt.want == nil {
					send(wire.Fields{Op: wire.OpGrant, Mode: acq.Mode, Lock: acq.Lock, Txn: acq.Txn, Token: 78,
						Timestamp: acq.Timestamp, LeaseMicros: acq.LeaseMicros})
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			g, err := c.Acquire(ctx, 7, wire.Exclusive)
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("Acquire = %v, want the grant after the ignored notice", err)
			case tt.want == nil && g.Token() != 78:
				t.Fatalf("granted token %d, want 78", g.Token())
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Fatalf("Acquire = %v, want %v (the notice is the acquire's only answer)", err, tt.want)
			}
		})
	}
}
