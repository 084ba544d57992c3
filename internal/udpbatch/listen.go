package udpbatch

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrAddrInUse is matched by the error of ListenShared when another socket is bound to the
// address (or to the port on an overlapping address): another server serves it.
var ErrAddrInUse = errors.New("address already in use")

// ListenShared binds ONE UDP socket to addr, exclusively (neither SO_REUSEPORT nor SO_REUSEADDR),
// and returns n connections to it: the socket and n-1 duplicates of its descriptor, so that n
// goroutines can read batches from it at once (the kernel hands each datagram to one reader).
//
// Why not n SO_REUSEPORT sockets: any process of the same user may join a SO_REUSEPORT group
// bound to the port (and attach its own steering program to it), take a share of the datagrams
// and answer them: a second lock server started on the same address would grant the same locks
// as the first, and any local process could forge grants. An exclusively bound socket cannot be
// joined: a second bind of the address fails, with an error matching ErrAddrInUse.
//
// network is "udp", "udp4" or "udp6"; port 0 picks a free port. The socket asks for buffers of
// bufBytes (the kernel caps them at net.core.rmem_max and wmem_max); 0 keeps the defaults.
// Closing one connection leaves the others open; close them all.
func ListenShared(network, addr string, n, bufBytes int) ([]*net.UDPConn, error) {
	if n < 1 {
		return nil, fmt.Errorf("udpbatch: %d readers", n)
	}
	la, err := net.ResolveUDPAddr(network, addr)
	if err != nil {
		return nil, fmt.Errorf("udpbatch: listen %s: %w", addr, err)
	}
	first, err := net.ListenUDP(network, la)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("udpbatch: listen %s: another process serves this address (another server?): %w",
				addr, ErrAddrInUse)
		}
		return nil, fmt.Errorf("udpbatch: listen %s: %w", addr, err)
	}
	if bufBytes > 0 {
		_ = first.SetReadBuffer(bufBytes)
		_ = first.SetWriteBuffer(bufBytes)
	}
	conns := []*net.UDPConn{first}
	fail := func(err error) ([]*net.UDPConn, error) {
		for _, c := range conns {
			c.Close()
		}
		return nil, fmt.Errorf("udpbatch: listen %s: %w", addr, err)
	}
	raw, err := first.SyscallConn()
	if err != nil {
		return fail(err)
	}
	for len(conns) < n {
		var fd int
		var derr error
		if err := raw.Control(func(s uintptr) { fd, derr = unix.Dup(int(s)) }); err != nil {
			return fail(err)
		}
		if derr != nil {
			return fail(fmt.Errorf("dup: %w", derr))
		}
		f := os.NewFile(uintptr(fd), "udp")
		pc, err := net.FilePacketConn(f) // dups fd again and sets it non-blocking
		f.Close()
		if err != nil {
			return fail(err)
		}
		conns = append(conns, pc.(*net.UDPConn))
	}
	return conns, nil
}
