package p4rtclient

import (
	"errors"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

func toCPU(prefix string, reason uint64) Route {
	r := route(prefix, 0)
	r.Action, r.Params = "MyIngress.to_cpu", []Param{{"reason", Uint(reason)}}
	return r
}

func nextIn(t *testing.T, s *Subscription) *PacketIn {
	t.Helper()
	select {
	case p, ok := <-s.C:
		if !ok {
			t.Fatal("subscription closed")
		}
		return p
	case <-time.After(wait):
		t.Fatal("no packet-in")
	}
	return nil
}

// TestPacketInDemux: packets routed to the CPU with reasons 7 and 9 reach the subscription
// whose filter takes their reason, with their metadata by name; a reason no one takes is
// counted as unclaimed; a subscription that does not read drops and counts.
func TestPacketInDemux(t *testing.T) {
	s := startSwitch(t)
	c := primary(t, s.addr, 1)
	ctx := ctxWait(t)
	reason := func(r uint64) func(*PacketIn) bool {
		return func(p *PacketIn) bool { v, ok := p.Uint("reason"); return ok && v == r }
	}
	seven := c.Subscribe("seven", reason(7), 16)
	nine := c.Subscribe("nine", reason(9), 1)
	defer seven.Close()
	if err := c.AddRoutes(ctx, routes, toCPU("10.7.0.0/16", 7), toCPU("10.9.0.0/16", 9), toCPU("10.11.0.0/16", 11)); err != nil {
		t.Fatal(err)
	}
	s.dev.Inject(2, ipFrame(t, "10.7.1.1", layers.IPProtocolUDP, "to seven"))
	s.dev.Inject(3, ipFrame(t, "10.9.1.1", layers.IPProtocolUDP, "to nine"))
	p := nextIn(t, seven)
	if port, _ := p.Uint("ingress_port"); port != 2 {
		t.Fatalf("packet-in metadata %v: want ingress_port 2", p.Meta)
	}
	if _, _, payload := decode(t, p.Payload); payload != "to seven" {
		t.Fatalf("payload %q", payload)
	}
	if port, _ := nextIn(t, nine).Uint("ingress_port"); port != 3 {
		t.Fatal("reason 9 with the wrong ingress port")
	}
	// nine has room for one: of two more, one is dropped. 11 goes nowhere.
	s.dev.Inject(1, ipFrame(t, "10.9.1.1", layers.IPProtocolUDP, "a"))
	s.dev.Inject(1, ipFrame(t, "10.9.1.1", layers.IPProtocolUDP, "b"))
	s.dev.Inject(1, ipFrame(t, "10.11.1.1", layers.IPProtocolUDP, "c"))
	s.dev.Inject(1, ipFrame(t, "10.7.1.1", layers.IPProtocolUDP, "last")) // in order after the others
	if _, _, payload := decode(t, nextIn(t, seven).Payload); payload != "last" {
		t.Fatalf("payload %q", payload)
	}
	st := c.Stats()
	if st.PacketIns != 6 || st.PacketInsDropped != 1 || st.PacketInsUnclaimed != 1 || nine.Dropped() != 1 {
		t.Fatalf("stats %+v, nine dropped %d: want 6 packet-ins, 1 dropped, 1 unclaimed", st, nine.Dropped())
	}
	nine.Close()
	nine.Close() // idempotent
	if _, ok := <-nine.C; !ok {
		t.Fatal("the buffered packet-in was lost on close")
	}
	if _, ok := <-nine.C; ok {
		t.Fatal("closed subscription still open")
	}
}

// TestPacketOut sends packet-outs to one port and to a multicast group; bad metadata is refused
// before sending.
func TestPacketOut(t *testing.T) {
	s := startSwitch(t)
	c := primary(t, s.addr, 5)
	ctx := ctxWait(t)
	if err := c.WriteMulticastGroup(ctx, Insert, MulticastGroup{ID: 3, Replicas: []Replica{{Port: 1}, {Port: 3}}}); err != nil {
		t.Fatal(err)
	}
	frame := ipFrame(t, "10.0.0.9", layers.IPProtocolUDP, "from the controller")
	if err := c.SendPacketOut(ctx, frame, []Param{{"egress_port", Uint(2)}, {"mcast_group", Uint(0)}, {"pad", Uint(0)}}); err != nil {
		t.Fatal(err)
	}
	if _, ttl, p := decode(t, s.hosts[2].next(t)); p != "from the controller" || ttl != 64 {
		t.Fatalf("packet-out on port 2: %q ttl %d", p, ttl)
	}
	if err := c.SendPacketOut(ctx, frame, []Param{{"egress_port", Uint(0)}, {"mcast_group", Uint(3)}, {"pad", Uint(0)}}); err != nil {
		t.Fatal(err)
	}
	for _, port := range []int{1, 3} {
		if _, _, p := decode(t, s.hosts[port].next(t)); p != "from the controller" {
			t.Fatalf("multicast packet-out on port %d: %q", port, p)
		}
	}
	for _, tc := range []struct {
		name string
		meta []Param
	}{
		{"missing field", []Param{{"egress_port", Uint(2)}}},
		{"unknown field", []Param{{"egress_port", Uint(2)}, {"mcast_group", Uint(0)}, {"pad", Uint(0)}, {"color", Uint(1)}}},
		{"too wide", []Param{{"egress_port", Uint(512)}, {"mcast_group", Uint(0)}, {"pad", Uint(0)}}},
		{"twice", []Param{{"egress_port", Uint(2)}, {"egress_port", Uint(2)}, {"mcast_group", Uint(0)}, {"pad", Uint(0)}}},
	} {
		if err := c.SendPacketOut(ctx, frame, tc.meta); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if st := c.Stats(); st.PacketOuts != 2 {
		t.Fatalf("stats %+v, want 2 packet-outs", st)
	}
	// A backup may not send.
	b := dial(t, s.addr, 2)
	waitState(t, b, Backup)
	b.UseP4Info(testProgram(t).P4Info)
	if err := b.SendPacketOut(ctx, frame, []Param{{"egress_port", Uint(2)}, {"mcast_group", Uint(0)}, {"pad", Uint(0)}}); !errors.Is(err, ErrPermissionDenied) {
		t.Fatalf("packet-out from a backup: %v", err)
	}
}
