package p4rtclient

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// PacketIn is a packet the switch sent to the controller: the payload after the
// @controller_header("packet_in") header, and that header's fields by name (canonical bytes).
type PacketIn struct {
	Payload []byte
	Meta    map[string][]byte
}

// Uint returns a metadata field as a number (false if the packet has no such field).
func (p *PacketIn) Uint(name string) (uint64, bool) {
	v, ok := p.Meta[name]
	if !ok {
		return 0, false
	}
	return new(big.Int).SetBytes(v).Uint64(), true
}

// Subscription receives the packet-ins its filter accepts, on C, until it or the Client is
// closed (then C is closed).
type Subscription struct {
	C <-chan *PacketIn

	name   string
	filter func(*PacketIn) bool
	ch     chan *PacketIn
	c      *Client
	once   sync.Once
	dropMu sync.Mutex
	drops  uint64
}

// Dropped is how many packet-ins for this subscription were dropped because C was full.
func (s *Subscription) Dropped() uint64 {
	s.dropMu.Lock()
	defer s.dropMu.Unlock()
	return s.drops
}

// Close stops the subscription and closes C.
func (s *Subscription) Close() {
	s.once.Do(func() {
		c := s.c
		c.mu.Lock()
		defer c.mu.Unlock()
		if i := slices.Index(c.subs, s); i >= 0 {
			c.subs = slices.Delete(c.subs, i, i+1)
			close(s.ch)
		}
	})
}

// Subscribe registers a packet-in demultiplexer route: every packet-in goes to the first
// subscription, in the order of Subscribe calls, whose filter returns true (a nil filter takes
// everything), on a channel of buffer packets. The stream is never blocked by a subscriber: a
// packet-in for a full subscription is dropped and counted, and one that no subscription takes
// is counted as unclaimed (Stats). Filters run on the stream's goroutine and must be quick.
func (c *Client) Subscribe(name string, filter func(*PacketIn) bool, buffer int) *Subscription {
	ch := make(chan *PacketIn, buffer)
	s := &Subscription{C: ch, name: name, filter: filter, ch: ch, c: c}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == Closed {
		close(ch)
		return s
	}
	c.subs = append(c.subs, s)
	return s
}

// deliver decodes a packet-in and hands it to the first subscription that takes it.
func (c *Client) deliver(p *p4v1.PacketIn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.PacketIns++
	pi := &PacketIn{Payload: p.GetPayload(), Meta: map[string][]byte{}}
	for _, m := range p.GetMetadata() {
		name := fmt.Sprintf("id%d", m.GetMetadataId())
		if c.sch != nil {
			if f, ok := c.sch.inByID[m.GetMetadataId()]; ok {
				name = f.GetName()
			}
		}
		pi.Meta[name] = m.GetValue()
	}
	for _, s := range c.subs {
		if s.filter != nil && !s.filter(pi) {
			continue
		}
		select {
		case s.ch <- pi:
		default:
			c.stats.PacketInsDropped++
			s.dropMu.Lock()
			s.drops++
			s.dropMu.Unlock()
		}
		return
	}
	c.stats.PacketInsUnclaimed++
}

// SendPacketOut sends payload to the switch as a packet-out with the
// @controller_header("packet_out") fields in meta (by name; every field of the header must be
// given, values are checked against the field widths). Packet-outs are queued on the stream and
// best effort, like the packets they carry: one sent while the stream is down goes out when it
// is back, and one the switch refuses comes back as a stream error (Stats.StreamErrors).
func (c *Client) SendPacketOut(ctx context.Context, payload []byte, meta []Param) error {
	sch, err := c.schema()
	if err != nil {
		return err
	}
	if sch.out == nil {
		return fmt.Errorf("controlplane: the program has no @controller_header(\"packet_out\")")
	}
	if st := c.State(); st != Primary {
		return fmt.Errorf("controlplane: packet-out while %s: %w", st, ErrPermissionDenied)
	}
	given := map[string][]byte{}
	for _, p := range meta {
		if _, dup := given[p.Name]; dup {
			return fmt.Errorf("controlplane: packet-out metadata %q given twice", p.Name)
		}
		given[p.Name] = p.Value
	}
	po := &p4v1.PacketOut{Payload: payload}
	for _, f := range sch.out.GetMetadata() {
		v, ok := given[f.GetName()]
		if !ok {
			return fmt.Errorf("controlplane: packet-out metadata %q missing", f.GetName())
		}
		cv, err := canonical(v, f.GetBitwidth(), "packet-out metadata "+f.GetName())
		if err != nil {
			return fmt.Errorf("controlplane: %w", err)
		}
		po.Metadata = append(po.Metadata, &p4v1.PacketMetadata{MetadataId: f.GetId(), Value: cv})
		delete(given, f.GetName())
	}
	for name := range given {
		return fmt.Errorf("controlplane: packet_out has no field %q", name)
	}
	if err := c.p4.SendPacketOut(ctx, po); err != nil {
		return fmt.Errorf("controlplane: packet-out: %w", err)
	}
	c.mu.Lock()
	c.stats.PacketOuts++
	c.mu.Unlock()
	return nil
}
