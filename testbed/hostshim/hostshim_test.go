package hostshim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds a test that would otherwise hang; nothing asserts timing.
const wait = 20 * time.Second

func TestPlan(t *testing.T) {
	p := DefaultPlan
	for _, tt := range []struct {
		got  netip.Addr
		want string
	}{
		{p.Switch(), "10.0.0.1"}, {p.Controller(), "10.0.0.2"}, {p.Server(1), "10.0.1.1"}, {p.Server(254), "10.0.1.254"},
		{p.Client(1), "10.0.2.1"}, {p.Client(254), "10.0.2.254"}, {p.Client(255), "10.0.3.1"},
		{p.Client(MaxClients), "10.0.255.254"},
		{Plan{Net: netip.MustParsePrefix("172.16.0.0/16")}.Server(3), "172.16.1.3"},
		{Plan{}.Client(2), "10.0.2.2"},
	} {
		if tt.got.String() != tt.want {
			t.Errorf("got %v, want %s", tt.got, tt.want)
		}
	}
	if m := MACFor(netip.MustParseAddr("10.0.1.2")); m != (MAC{2, 0, 10, 0, 1, 2}) {
		t.Errorf("MACFor = %x", m)
	}
	if err := (Plan{Net: netip.MustParsePrefix("10.0.0.0/24")}).Validate(); err == nil {
		t.Error("a /24 plan validated")
	}
	for _, f := range []func(){func() { p.Server(0) }, func() { p.Server(255) }, func() { p.Client(0) },
		func() { p.Client(MaxClients + 1) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic for an address outside the plan")
				}
			}()
			f()
		}()
	}
}

// pair returns two hosts whose links are the two ends of one cable, each the other's gateway.
func pair(t *testing.T, a, b netip.Addr, la, lb port.Port) (*Host, *Host) {
	t.Helper()
	ha, err := New(Config{Addr: a, Gateway: MACFor(b), Link: la})
	if err != nil {
		t.Fatal(err)
	}
	hb, err := New(Config{Addr: b, Gateway: MACFor(a), Link: lb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ha.Close()
		hb.Close()
	})
	return ha, hb
}

func memPair(t *testing.T) (*Host, *Host) {
	la, lb := port.NewPair("a", "b")
	return pair(t, DefaultPlan.Client(1), DefaultPlan.Server(1), la, lb)
}

func udpPair(t *testing.T) (*Host, *Host) {
	la, err := port.ListenUDP(port.UDPSpec{Local: netip.MustParseAddrPort("127.0.0.1:0")})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := port.ListenUDP(port.UDPSpec{Local: netip.MustParseAddrPort("127.0.0.1:0"), Remote: la.LocalAddr()})
	if err != nil {
		t.Fatal(err)
	}
	la.SetRemote(lb.LocalAddr())
	return pair(t, DefaultPlan.Client(1), DefaultPlan.Server(1), la, lb)
}

func readOne(t *testing.T, c *Conn) (string, netip.AddrPort) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 64)
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n]), from
}

func TestExchange(t *testing.T) {
	for name, mk := range map[string]func(*testing.T) (*Host, *Host){"mem": memPair, "udp-tunnel": udpPair} {
		t.Run(name, func(t *testing.T) {
			a, b := mk(t)
			srv, err := b.ListenUDP(wire.Port)
			if err != nil {
				t.Fatal(err)
			}
			cli, err := a.ListenUDP(0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cli.WriteTo([]byte("ping"), net.UDPAddrFromAddrPort(srv.AddrPort())); err != nil {
				t.Fatal(err)
			}
			msg, from := readOne(t, srv)
			if msg != "ping" || from != cli.AddrPort() {
				t.Fatalf("server got %q from %v, want ping from %v", msg, from, cli.AddrPort())
			}
			if _, err := srv.WriteTo([]byte("pong"), net.UDPAddrFromAddrPort(from)); err != nil {
				t.Fatal(err)
			}
			if msg, from := readOne(t, cli); msg != "pong" || from != srv.AddrPort() {
				t.Fatalf("client got %q from %v", msg, from)
			}
			if s := a.Stats(); s.FramesOut != 1 || s.FramesIn != 1 || s.Delivered != 1 {
				t.Errorf("client host stats %+v", s)
			}
		})
	}
}

// TestFrames checks the frames a host sends: its MAC and address, the gateway's MAC, a valid
// IPv4 and UDP checksum.
func TestFrames(t *testing.T) {
	la, lb := port.NewPair("a", "b")
	h, err := New(Config{Addr: DefaultPlan.Client(7), Gateway: MACFor(DefaultPlan.Switch()), Link: la})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	defer lb.Close()
	c, _ := h.ListenUDP(4000)
	dst := netip.AddrPortFrom(DefaultPlan.Server(2), 8888)
	if _, err := c.WriteToUDPAddrPort([]byte("netlock"), dst); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, port.MaxFrame)
	n, err := lb.Recv(buf)
	if err != nil {
		t.Fatal(err)
	}
	var f udpframe.Frame
	if err := udpframe.Parse(buf[:n], &f); err != nil {
		t.Fatal(err)
	}
	if f.SrcMAC != MACFor(h.Addr()) || f.DstMAC != MACFor(DefaultPlan.Switch()) || f.Src != c.AddrPort() ||
		f.Dst != dst || f.TTL != 64 || string(f.Payload) != "netlock" {
		t.Fatalf("frame %+v", f)
	}
}

func TestDrops(t *testing.T) {
	la, lb := port.NewPair("a", "b")
	h, err := New(Config{Addr: DefaultPlan.Server(1), Gateway: MACFor(DefaultPlan.Switch()), Link: la, Queue: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	defer lb.Close()
	c, _ := h.ListenUDP(wire.Port)
	send := func(dst netip.AddrPort, dstMAC MAC) {
		f := udpframe.Append(nil, udpframe.Endpoint{MAC: MACFor(DefaultPlan.Switch()), Addr: netip.MustParseAddrPort("10.0.2.1:5000")},
			udpframe.Endpoint{MAC: dstMAC, Addr: dst}, []byte("x"))
		if err := lb.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	me := netip.AddrPortFrom(h.Addr(), wire.Port)
	send(netip.AddrPortFrom(DefaultPlan.Server(2), wire.Port), MACFor(DefaultPlan.Server(2))) // another host
	send(me, MACFor(DefaultPlan.Server(2)))                                                   // another MAC
	send(netip.AddrPortFrom(h.Addr(), 9), h.MAC())                                            // no socket
	lb.Send([]byte("not a frame at all, just bytes"))
	for i := 0; i < 3; i++ { // the queue holds 2
		send(me, h.MAC())
	}
	send(me, MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) // broadcast MAC: for us, but the queue is full
	want := Stats{FramesIn: 8, Delivered: 2, NotMine: 2, NoSocket: 1, Malformed: 1, QueueFull: 2}
	deadline := time.Now().Add(wait)
	for h.Stats() != want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if s := h.Stats(); s != want {
		t.Fatalf("stats %+v, want %+v", s, want)
	}
	readOne(t, c)
	readOne(t, c)
}

func TestDeadlineAndClose(t *testing.T) {
	a, _ := memPair(t)
	c, _ := a.ListenUDP(0)
	c.SetReadDeadline(time.Now().Add(-time.Second))
	if _, _, err := c.ReadFrom(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	// A read blocked without a deadline returns when a deadline in the past is set.
	errc := make(chan error, 1)
	c.SetReadDeadline(time.Time{})
	go func() {
		_, _, err := c.ReadFrom(make([]byte, 8))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the read block (not a timing assertion)
	c.SetReadDeadline(time.Now().Add(-time.Second))
	if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("blocked read after SetReadDeadline: %v", err)
	}
	// A blocked read returns on Close; the port is free again.
	c.SetReadDeadline(time.Time{})
	go func() {
		_, _, err := c.ReadFrom(make([]byte, 8))
		errc <- err
	}()
	c.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after Close: %v", err)
	}
	if _, err := c.WriteTo([]byte("x"), c.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after Close: %v", err)
	}
	p := c.AddrPort().Port()
	if _, err := a.ListenUDP(p); err != nil {
		t.Fatalf("port not freed: %v", err)
	}
	if _, err := a.ListenUDP(p); !errors.Is(err, ErrPortInUse) {
		t.Fatalf("second bind: %v", err)
	}
	a.Close()
	if _, err := a.ListenUDP(0); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("listen on a closed host: %v", err)
	}
}

func TestWriteErrors(t *testing.T) {
	a, _ := memPair(t)
	c, _ := a.ListenUDP(0)
	if _, err := c.WriteToUDPAddrPort([]byte("x"), netip.MustParseAddrPort("[fd00::1]:80")); err == nil {
		t.Error("an IPv6 destination was accepted")
	}
	if _, err := c.WriteTo(make([]byte, MaxDatagram+1), c.LocalAddr()); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized datagram: %v", err)
	}
	if _, err := New(Config{Addr: netip.MustParseAddr("fd00::1"), Link: port.NewMem("x", 1)}); err == nil {
		t.Error("an IPv6 host was created")
	}
	if _, err := New(Config{Addr: DefaultPlan.Client(1)}); err == nil {
		t.Error("a host without a link was created")
	}
}

// TestReuse: sockets sharing a port each get the datagrams of some sources, a source always
// the same socket.
func TestReuse(t *testing.T) {
	la, lb := port.NewPair("a", "b")
	srvHost, err := New(Config{Addr: DefaultPlan.Server(1), Gateway: MACFor(DefaultPlan.Switch()), Link: la, Queue: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer srvHost.Close()
	defer lb.Close()
	var socks []*Conn
	for i := 0; i < 3; i++ {
		c, err := srvHost.ListenUDP(wire.Port, ListenOptions{Reuse: true})
		if err != nil {
			t.Fatal(err)
		}
		socks = append(socks, c)
	}
	if _, err := srvHost.ListenUDP(wire.Port); !errors.Is(err, ErrPortInUse) {
		t.Fatalf("a non-reuse bind of a reuse port: %v", err)
	}
	const sources, each = 30, 3
	for s := 1; s <= sources; s++ {
		for k := 0; k < each; k++ {
			f := udpframe.Append(nil, udpframe.Endpoint{MAC: MACFor(DefaultPlan.Switch()), Addr: netip.AddrPortFrom(DefaultPlan.Client(s), 7000)},
				udpframe.Endpoint{MAC: srvHost.MAC(), Addr: netip.AddrPortFrom(srvHost.Addr(), wire.Port)}, []byte{byte(s)})
			lb.Send(f)
		}
	}
	got := map[netip.AddrPort]int{} // source -> socket
	total := 0
	for i, c := range socks {
		for {
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			_, from, err := c.ReadFromUDPAddrPort(make([]byte, 8))
			if err != nil {
				break
			}
			total++
			if j, ok := got[from]; ok && j != i {
				t.Fatalf("source %v went to sockets %d and %d", from, j, i)
			}
			got[from] = i
		}
	}
	if total != sources*each {
		t.Fatalf("%d datagrams delivered, want %d", total, sources*each)
	}
	used := map[int]bool{}
	for _, i := range got {
		used[i] = true
	}
	if len(used) < 2 {
		t.Errorf("all %d sources went to one socket", sources)
	}
}

// TestClientAndServer runs the real client library and lock server on two hosts of one cable:
// the lock server on 10.0.1.1:8888 and a client that addresses it there.
func TestClientAndServer(t *testing.T) {
	a, b := memPair(t)
	srv, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: 2, Sockets: 2,
		WrapConn: b.WrapConn(wire.Port)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	c, err := client.New(client.Config{Servers: []string{netip.AddrPortFrom(b.Addr(), wire.Port).String()},
		WrapConn: a.WrapConn(0), RetryInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr(); got != a.Addr() {
		t.Fatalf("client socket on %v, want the host's %v", got, a.Addr())
	}
	actx, acancel := context.WithTimeout(context.Background(), wait)
	defer acancel()
	for i := 0; i < 20; i++ {
		g, err := c.Acquire(actx, uint32(i%3), wire.Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Release(actx); err != nil {
			t.Fatal(err)
		}
	}
	if s := b.Stats(); s.Delivered < 40 || s.Malformed+s.NotMine+s.NoSocket+s.QueueFull != 0 {
		t.Errorf("server host stats %+v", s)
	}
}

func TestAllocs(t *testing.T) {
	a, b := memPair(t)
	src, _ := a.ListenUDP(0)
	dst, _ := b.ListenUDP(wire.Port)
	msg := make([]byte, wire.Len)
	buf := make([]byte, 2048)
	to := dst.AddrPort()
	dst.SetReadDeadline(time.Time{})
	round := func() {
		if _, err := src.WriteToUDPAddrPort(msg, to); err != nil {
			panic(err)
		}
		if _, _, err := dst.ReadFromUDPAddrPort(buf); err != nil {
			panic(err)
		}
	}
	round()
	if n := testing.AllocsPerRun(200, round); n > 0 {
		t.Errorf("%v allocations per datagram, want 0", n)
	}
}

func ExampleHost() {
	la, lb := port.NewPair("client", "server")
	plan := DefaultPlan
	// Two hosts on one cable, each the other's gateway (with a switch in between, both would
	// name the switch's MAC: MACFor(plan.Switch())).
	cli, _ := New(Config{Addr: plan.Client(1), Gateway: MACFor(plan.Server(1)), Link: la})
	srv, _ := New(Config{Addr: plan.Server(1), Gateway: MACFor(plan.Client(1)), Link: lb})
	defer cli.Close()
	defer srv.Close()
	s, _ := srv.ListenUDP(8888)
	c, _ := cli.ListenUDP(0)
	c.WriteTo([]byte("hello"), s.LocalAddr())
	buf := make([]byte, 16)
	n, from, _ := s.ReadFrom(buf)
	fmt.Println(string(buf[:n]), "from", from.(*net.UDPAddr).IP)
	// Output: hello from 10.0.2.1
}
