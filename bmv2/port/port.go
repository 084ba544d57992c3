// Package port provides the switch ports of netlock's software switch: a Port
// carries whole Ethernet frames, one per Send and one per Recv.
//
// Three implementations exist:
//
//   - [NewPair] and [Link]: in-memory ports for tests and the embedded demo;
//   - [ListenUDP]: a UDP tunnel, one Ethernet frame per datagram, so several
//     processes on loopback form a rack without root (configured with
//     [ParseUDPSpec], "N@LOCAL[,REMOTE]");
//   - [OpenRaw]: AF_PACKET raw sockets bound to a named interface (veths in
//     Mininet or a network namespace; needs CAP_NET_RAW).
//
// Two wrappers apply to any port: [WithFaults] (seeded loss, duplication,
// reordering and delay on the send side) and [WithCapture] (a pcap file per
// port, written with gopacket's pcapgo).
//
// Send and Recv never retain the caller's buffer, so a forwarding loop that
// reuses one buffer per port allocates nothing per frame on the in-memory, UDP
// and AF_PACKET ports.
package port

import (
	"errors"
)

// MaxFrame is the largest frame a port carries (a jumbo Ethernet frame without
// FCS). Recv buffers of this size never truncate.
const MaxFrame = 9216

// ErrClosed is returned by Send and Recv on a closed port.
var ErrClosed = errors.New("port: closed")

// ErrTooLarge is returned by Send when a frame exceeds MaxFrame.
var ErrTooLarge = errors.New("port: frame larger than MaxFrame")

// Port is one switch port carrying Ethernet frames.
//
// Send and Recv may be called concurrently with each other and with Close;
// several concurrent Sends are allowed, Recv is meant for one reader.
type Port interface {
	// Send transmits one frame. The port does not retain frame. A port whose
	// peer is gone or whose queue is full drops the frame silently, as a
	// wire does; Send returns an error only when the port itself is closed or
	// the frame cannot be sent at all.
	Send(frame []byte) error
	// Recv blocks until a frame arrives, copies it into buf and returns its
	// length (frames longer than buf are truncated to len(buf)). After Close
	// it returns ErrClosed.
	Recv(buf []byte) (int, error)
	// Close releases the port and unblocks Recv. Closing twice is harmless.
	Close() error
	// Name describes the port ("mem:a", "udp:127.0.0.1:9001", "raw:veth0").
	Name() string
}
