package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/netlock-go/netlock/wire"
)

// EchoConfig configures an [EchoServer].
type EchoConfig struct {
	// Listen is the UDP address to bind, e.g. "127.0.0.1:0" (port 0: a free port, shared by all
	// sockets).
	Listen string
	// Sockets is the number of SO_REUSEPORT sockets, each served by one goroutine. 0 means
	// runtime.GOMAXPROCS(0), the lock server's shard count.
	Sockets int
	// Batch is the most datagrams read (recvmmsg) or written (sendmmsg) per system call. 0 means 64.
	Batch int
}

// EchoServer is the reference point of the lock-server benchmark: the least work a UDP server
// that speaks netlock can do per request, with the I/O structure of the lock server (one
// goroutine per SO_REUSEPORT socket, batches of up to 64 datagrams read with recvmmsg and
// answered with sendmmsg through golang.org/x/net/ipv4).
//
// Per datagram it does exactly this, and nothing else:
//   - wire.Parse the datagram; a malformed one is counted and dropped (not answered);
//   - turn the header into its answer in place: an acquire becomes a grant (the lease and token are
//     left as the request had them), any other op gets FlagReply set (a release becomes the
//     release acknowledgement);
//   - send the 48-byte header back to the sender's address, from the same buffer, in the next
//     sendmmsg batch.
//
// Its sockets are set up as the lock server's (SO_REUSEPORT, 4 MiB buffers requested). It keeps
// no lock state, so every acquire is "granted": the load generator, whose per-worker locks are
// never contended, cannot tell it from a lock server. What the lock server does beyond this per
// datagram (the lock core's step under its shard's mutex, encoding the answer into a separate
// buffer, building the destination address) is what the server/echo ratio measures.
type EchoServer struct {
	conns []*net.UDPConn
	addr  netip.AddrPort
	batch int

	received  atomic.Uint64
	sent      atomic.Uint64
	malformed atomic.Uint64

	closeOnce sync.Once
}

// EchoStats are an [EchoServer]'s counters.
type EchoStats struct {
	Received, Sent, Malformed uint64
}

// listenReusePort binds n UDP sockets to one address with SO_REUSEPORT. With port 0 the first
// socket picks the port and the others join it.
func listenReusePort(addr string, n int) ([]*net.UDPConn, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	var conns []*net.UDPConn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	for i := 0; i < n; i++ {
		pc, err := lc.ListenPacket(context.Background(), "udp4", addr)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("bench: listen %s: %w", addr, err)
		}
		c := pc.(*net.UDPConn)
		// The lock server's socket buffers (the kernel caps them at net.core.[rw]mem_max).
		_ = c.SetReadBuffer(4 << 20)
		_ = c.SetWriteBuffer(4 << 20)
		conns = append(conns, c)
		if i == 0 {
			addr = c.LocalAddr().String() // the others bind the port the first one got
		}
	}
	return conns, nil
}

// NewEcho binds the echo server's sockets. Call Run to serve.
func NewEcho(cfg EchoConfig) (*EchoServer, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Sockets <= 0 {
		cfg.Sockets = runtime.GOMAXPROCS(0)
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	conns, err := listenReusePort(cfg.Listen, cfg.Sockets)
	if err != nil {
		return nil, err
	}
	return &EchoServer{conns: conns, addr: conns[0].LocalAddr().(*net.UDPAddr).AddrPort(),
		batch: cfg.Batch}, nil
}

// Addr returns the address the server listens on.
func (s *EchoServer) Addr() netip.AddrPort { return s.addr }

// Stats returns the server's counters.
func (s *EchoServer) Stats() EchoStats {
	return EchoStats{Received: s.received.Load(), Sent: s.sent.Load(), Malformed: s.malformed.Load()}
}

// Run serves until ctx is done, then closes the sockets and returns nil, or returns the first
// socket error. Run may be called once.
func (s *EchoServer) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errc := make(chan error, len(s.conns))
	for _, c := range s.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.serve(c); err != nil {
				errc <- err
			}
		}()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.close()
	wg.Wait()
	return err
}

func (s *EchoServer) close() {
	s.closeOnce.Do(func() {
		for _, c := range s.conns {
			c.Close()
		}
	})
}

// serve is the loop of one socket: read a batch, answer it, repeat.
func (s *EchoServer) serve(c *net.UDPConn) error {
	pc := ipv4.NewPacketConn(c)
	rmsgs := make([]ipv4.Message, s.batch)
	wmsgs := make([]ipv4.Message, s.batch)
	for i := range rmsgs {
		rmsgs[i].Buffers = [][]byte{make([]byte, 2048)}
		wmsgs[i].Buffers = make([][]byte, 1)
	}
	for {
		n, err := pc.ReadBatch(rmsgs, 0)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("bench: echo read: %w", err)
		}
		s.received.Add(uint64(n))
		out := 0
		for i := 0; i < n; i++ {
			m := &rmsgs[i]
			h, err := wire.Parse(m.Buffers[0][:m.N])
			if err != nil {
				s.malformed.Add(1)
				continue
			}
			if h.Op() == wire.OpAcquire {
				h.SetOp(wire.OpGrant)
			} else {
				h.SetFlags(h.Flags() | wire.FlagReply)
			}
			w := &wmsgs[out]
			w.Buffers[0] = h
			w.Addr = m.Addr
			out++
		}
		for done := 0; done < out; {
			k, err := pc.WriteBatch(wmsgs[done:out], 0)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return nil
				}
				// sendmmsg fails only on the first datagram of the batch (e.g. the client's
				// socket is gone): drop that one datagram, as a lock server would.
				done++
				continue
			}
			s.sent.Add(uint64(k))
			done += k
		}
	}
}
