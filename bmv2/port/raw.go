package port

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// RawPort is an AF_PACKET raw socket bound to one network interface: frames
// sent on it leave through the interface, frames arriving on the interface are
// received. Frames the socket itself sends are not received back
// (PACKET_IGNORE_OUTGOING, Linux 4.20 or later).
type RawPort struct {
	iface string
	f     *os.File // non-blocking socket driven by the runtime poller
}

var _ Port = (*RawPort)(nil)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// OpenRaw opens an AF_PACKET socket on the named interface. It needs
// CAP_NET_RAW in the interface's network namespace; the interface is put in
// promiscuous mode for the lifetime of the socket.
func OpenRaw(iface string) (*RawPort, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("port: raw %s: %w", iface, err)
	}
	// Protocol 0: the socket receives nothing until bind names the protocol and the interface
	// (packet(7)). Opened with ETH_P_ALL, it would queue every interface's frames until the
	// bind, and a port would start with frames of other interfaces (simpleswitch's port 19
	// got two UDP datagrams of lo from another process's test, 2026-11-28).
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("port: raw %s: socket: %w", iface, err)
	}
	fail := func(what string, err error) (*RawPort, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("port: raw %s: %s: %w", iface, what, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		return fail("bind", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
		return fail("PACKET_IGNORE_OUTGOING", err)
	}
	mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		return fail("promiscuous mode", err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	f := os.NewFile(uintptr(fd), "raw:"+iface)
	return &RawPort{iface: iface, f: f}, nil
}

// Name implements Port.
func (p *RawPort) Name() string { return "raw:" + p.iface }

// Send implements Port.
func (p *RawPort) Send(frame []byte) error {
	if len(frame) > MaxFrame {
		return ErrTooLarge
	}
	_, err := p.f.Write(frame)
	if errors.Is(err, os.ErrClosed) {
		return ErrClosed
	}
	if errors.Is(err, unix.ENETDOWN) || errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.ENXIO) {
		return nil // the link is down or the queue is full: the frame is lost
	}
	return err
}

// Recv implements Port.
func (p *RawPort) Recv(buf []byte) (int, error) {
	for {
		n, err := p.f.Read(buf)
		if err == nil {
			return n, nil
		}
		if errors.Is(err, os.ErrClosed) {
			return 0, ErrClosed
		}
		if errors.Is(err, unix.ENETDOWN) {
			continue
		}
		return 0, fmt.Errorf("port: raw %s: %w", p.iface, err)
	}
}

// SetReadDeadline makes Recv fail with an error wrapping os.ErrDeadlineExceeded once t passes
// (the zero time: no deadline).
func (p *RawPort) SetReadDeadline(t time.Time) error { return p.f.SetReadDeadline(t) }

// Close implements Port.
func (p *RawPort) Close() error {
	err := p.f.Close()
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}
