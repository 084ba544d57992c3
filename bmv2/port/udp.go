package port

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
)

// UDPSpec configures one UDP-tunnel port: switch port Num bound to Local,
// sending to Remote. A zero Remote means the port learns its peer from the
// first datagram it receives (and drops frames sent before that).
type UDPSpec struct {
	Num    uint32
	Local  netip.AddrPort
	Remote netip.AddrPort
}

// ParseUDPSpec parses "N@LOCAL" or "N@LOCAL,REMOTE", e.g.
// "1@127.0.0.1:9001,127.0.0.1:9101" (switch port 1 listens on 9001 and sends
// to 9101).
func ParseUDPSpec(s string) (UDPSpec, error) {
	num, rest, ok := strings.Cut(s, "@")
	if !ok {
		return UDPSpec{}, fmt.Errorf("port: udp spec %q: want N@LOCAL[,REMOTE]", s)
	}
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil {
		return UDPSpec{}, fmt.Errorf("port: udp spec %q: port number: %w", s, err)
	}
	local, remote, _ := strings.Cut(rest, ",")
	var sp UDPSpec
	sp.Num = uint32(n)
	if sp.Local, err = netip.ParseAddrPort(local); err != nil {
		return UDPSpec{}, fmt.Errorf("port: udp spec %q: local address: %w", s, err)
	}
	if remote != "" {
		if sp.Remote, err = netip.ParseAddrPort(remote); err != nil {
			return UDPSpec{}, fmt.Errorf("port: udp spec %q: remote address: %w", s, err)
		}
	}
	return sp, nil
}

// String formats the spec as ParseUDPSpec reads it.
func (s UDPSpec) String() string {
	out := fmt.Sprintf("%d@%s", s.Num, s.Local)
	if s.Remote.IsValid() {
		out += "," + s.Remote.String()
	}
	return out
}

// ParseIfaceSpec parses simple_switch's "-i N@IFACE" argument.
func ParseIfaceSpec(s string) (num uint32, iface string, err error) {
	n, name, ok := strings.Cut(s, "@")
	if !ok || name == "" {
		return 0, "", fmt.Errorf("port: interface spec %q: want N@IFACE", s)
	}
	v, err := strconv.ParseUint(n, 10, 32)
	if err != nil {
		return 0, "", fmt.Errorf("port: interface spec %q: port number: %w", s, err)
	}
	return uint32(v), name, nil
}

// UDPPort is a UDP-tunnel port: each datagram carries one Ethernet frame.
type UDPPort struct {
	conn   *net.UDPConn
	remote atomic.Pointer[netip.AddrPort]
	learn  bool
}

var _ Port = (*UDPPort)(nil)

// ListenUDP opens the UDP-tunnel port sp describes.
func ListenUDP(sp UDPSpec) (*UDPPort, error) {
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(sp.Local))
	if err != nil {
		return nil, fmt.Errorf("port: udp %s: %w", sp, err)
	}
	_ = conn.SetReadBuffer(4 << 20)
	_ = conn.SetWriteBuffer(4 << 20)
	p := &UDPPort{conn: conn, learn: !sp.Remote.IsValid()}
	if sp.Remote.IsValid() {
		r := sp.Remote
		p.remote.Store(&r)
	}
	return p, nil
}

// LocalAddr is the address the port receives on (useful with port 0).
func (p *UDPPort) LocalAddr() netip.AddrPort {
	return p.conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

// SetRemote sets the peer address.
func (p *UDPPort) SetRemote(a netip.AddrPort) { p.remote.Store(&a) }

// Name implements Port.
func (p *UDPPort) Name() string { return "udp:" + p.conn.LocalAddr().String() }

// Send implements Port.
func (p *UDPPort) Send(frame []byte) error {
	if len(frame) > MaxFrame {
		return ErrTooLarge
	}
	r := p.remote.Load()
	if r == nil {
		return nil // peer not learned yet: the frame is lost, as on an unplugged port
	}
	_, err := p.conn.WriteToUDPAddrPort(frame, *r)
	if errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	if err != nil {
		// ICMP unreachable from a peer that is not up yet surfaces as an error on
		// the next write; a wire would just lose the frame.
		return nil
	}
	return nil
}

// Recv implements Port.
func (p *UDPPort) Recv(buf []byte) (int, error) {
	for {
		n, from, err := p.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return 0, ErrClosed
			}
			continue // e.g. ECONNREFUSED reported for an earlier send
		}
		if p.learn {
			if r := p.remote.Load(); r == nil || *r != from {
				f := from
				p.remote.Store(&f)
			}
		}
		return n, nil
	}
}

// Close implements Port.
func (p *UDPPort) Close() error {
	err := p.conn.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
