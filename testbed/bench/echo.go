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

	"github.com/netlock-go/netlock/internal/udpbatch"
	"github.com/netlock-go/netlock/wire"
)

// EchoConfig configures an [EchoServer].
type EchoConfig struct {
	// Listen is the UDP address to bind, e.g. "127.0.0.1:0" (port 0: a free port, shared by all
	// sockets).
	Listen string
	// Sockets is the number of reader goroutines on the one socket (udpbatch.ListenShared). 0 means
	// runtime.GOMAXPROCS(0), the lock server's shard count.
	Sockets int
	// Batch is the most datagrams read (recvmmsg) or written (sendmmsg) per system call. 0 means 64.
	Batch int
}

// EchoServer is the reference point of the lock-server benchmark: the least work a UDP server
// that speaks netlock can do per request, with the I/O structure of the lock server (one
// reader goroutine per descriptor of one socket, batches of up to 64 datagrams read with recvmmsg and
// answered with sendmmsg, through the lock server's allocation-free udpbatch package).
//
// Per datagram it does exactly this, and nothing else:
//   - wire.Parse the datagram; a malformed one is counted and dropped (not answered);
//   - copy the 48-byte header into the next slot of the sendmmsg batch (the lock server encodes its
//     answer into the same kind of slot) and turn it into its answer there: an acquire becomes a
//     grant (lease and token left as the request had them), any other op gets FlagReply set (a
//     release becomes the release acknowledgement);
//   - send it back to the sender's address with the rest of the batch, after the batch read.
//
// Its sockets are set up as the lock server's (one exclusively bound socket read by several goroutines, 4 MiB buffers requested). It keeps
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

// maxDatagram is the largest datagram read, as in the lock server (longer ones are truncated,
// and the header is all that is answered).
const maxDatagram = 2048

// EchoStats are an [EchoServer]'s counters.
type EchoStats struct {
	Received, Sent, Malformed uint64
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
	conns, err := udpbatch.ListenShared("udp4", cfg.Listen, cfg.Sockets, 4<<20) // the lock server's socket set-up
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
	r, err := udpbatch.NewReader(c, s.batch, maxDatagram)
	if err != nil {
		return err
	}
	w, err := udpbatch.NewWriter(c, s.batch, wire.Len)
	if err != nil {
		return err
	}
	for {
		n, err := r.Read()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("bench: echo read: %w", err)
		}
		s.received.Add(uint64(n))
		for i := 0; i < n; i++ {
			b, from := r.Packet(i)
			if _, err := wire.Parse(b); err != nil {
				s.malformed.Add(1)
				continue
			}
			out := wire.Header(w.Next())
			copy(out, b[:wire.Len])
			if out.Op() == wire.OpAcquire {
				out.SetOp(wire.OpGrant)
			} else {
				out.SetFlags(out.Flags() | wire.FlagReply)
			}
			w.Commit(wire.Len, from)
		}
		// A datagram the kernel refuses (the client's socket is gone) is dropped, as the lock
		// server drops it; the others are sent.
		k, _ := w.Flush()
		s.sent.Add(uint64(k))
	}
}
