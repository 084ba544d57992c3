package udpbatch

import (
	"context"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// ListenReusePort binds n UDP sockets to addr with SO_REUSEPORT, so that the kernel spreads
// datagrams over them by flow. With port 0 the first socket picks the port and the others join it.
// network is "udp", "udp4" or "udp6". Each socket asks for buffers of bufBytes (the kernel caps
// them at net.core.rmem_max and wmem_max); 0 keeps the defaults.
func ListenReusePort(network, addr string, n, bufBytes int) ([]*net.UDPConn, error) {
	if n < 1 {
		return nil, fmt.Errorf("udpbatch: %d sockets", n)
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	var conns []*net.UDPConn
	for i := 0; i < n; i++ {
		pc, err := lc.ListenPacket(context.Background(), network, addr)
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, fmt.Errorf("udpbatch: listen %s: %w", addr, err)
		}
		c := pc.(*net.UDPConn)
		if bufBytes > 0 {
			_ = c.SetReadBuffer(bufBytes)
			_ = c.SetWriteBuffer(bufBytes)
		}
		conns = append(conns, c)
		if i == 0 {
			addr = c.LocalAddr().String() // the others bind the port the first one got
		}
	}
	return conns, nil
}
