package client

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// slowAnswers delays every lease-probe answer by a fixed time: longer than the retransmission
// interval, so every answer arrives after the renewal has been retransmitted.
type slowAnswers struct {
	net.PacketConn
	delay time.Duration
	in    chan datagram
	once  sync.Once
	wg    sync.WaitGroup
}

type datagram struct {
	b    []byte
	from net.Addr
	err  error
}

func (s *slowAnswers) start() {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			buf := make([]byte, 2048)
			n, from, err := s.PacketConn.ReadFrom(buf)
			if err != nil {
				s.in <- datagram{err: err}
				return
			}
			d := datagram{b: buf[:n], from: from}
			if h, perr := wire.Parse(d.b); perr == nil && h.Op() == wire.OpLeaseProbe {
				s.wg.Add(1)
				time.AfterFunc(s.delay, func() { defer s.wg.Done(); s.in <- d })
				continue
			}
			s.in <- d
		}
	}()
}

func (s *slowAnswers) ReadFrom(p []byte) (int, net.Addr, error) {
	s.once.Do(s.start)
	d := <-s.in
	if d.err != nil {
		return 0, nil, d.err
	}
	return copy(p, d.b), d.from, nil
}

func (s *slowAnswers) Close() error {
	err := s.PacketConn.Close()
	go func() { // drain what the reader and the delayed answers still push
		for range s.in {
		}
	}()
	s.wg.Wait()
	close(s.in)
	return err
}

// TestKeepAliveThroughSlowAnswers: the lease keeper's renewals are retransmitted before their
// answers arrive; an answer to any copy of a renewal must renew the lease. (A keeper that gave
// each copy a new timestamp discarded every answer as stale and lost every lease.)
func TestKeepAliveThroughSlowAnswers(t *testing.T) {
	s := newFakeServer(t, time.Hour)
	c := newClient(t, Config{Servers: []string{s.addr()}, KeepAlive: true, Lease: 300 * time.Millisecond,
		RetryInterval: 2 * time.Millisecond, MaxRetryInterval: 4 * time.Millisecond,
		WrapConn: func(pc net.PacketConn) net.PacketConn {
			return &slowAnswers{PacketConn: pc, delay: 30 * time.Millisecond, in: make(chan datagram, 1024)}
		}})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 3, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "three renewals", func() bool { return c.Stats().Renewals >= 3 || g.LostErr() != nil })
	if err := g.LostErr(); err != nil {
		t.Fatalf("lease lost although every renewal was answered (late): %v", err)
	}
	if c.Stats().Retransmits == 0 {
		t.Fatal("no renewal was retransmitted: the test did not exercise late answers")
	}
	if err := g.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
