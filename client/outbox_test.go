package client

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// blockingConn holds its first WriteTo until release is closed, then drops that datagram.
type blockingConn struct {
	net.PacketConn
	once    sync.Once
	blocked chan struct{} // closed when the first write waits
	release chan struct{}
}

func (b *blockingConn) WriteTo(p []byte, to net.Addr) (int, error) {
	first := false
	b.once.Do(func() { first = true })
	if first {
		close(b.blocked)
		<-b.release
		return len(p), nil
	}
	return b.PacketConn.WriteTo(p, to)
}

// TestSendQueuedWhileSendersBusy: a datagram queued while every sender is busy is sent by a busy
// sender once its batch is out, not left in the queue. Nothing else would send it: the held
// datagram is dropped, so no answer makes the reader flush, and the retransmission interval is
// far beyond the test. Control: while the sender is held, the second acquire sits in the queue.
func TestSendQueuedWhileSendersBusy(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	bc := &blockingConn{blocked: make(chan struct{}), release: make(chan struct{})}
	unblock := sync.OnceFunc(func() { close(bc.release) })
	defer unblock()
	c := newClient(t, Config{Servers: []string{s.addr()}, RetryInterval: time.Hour, MaxRetryInterval: time.Hour,
		WrapConn: func(pc net.PacketConn) net.PacketConn { bc.PacketConn = pc; return bc }})
	ctx := testCtx(t)
	ctxA, cancelA := context.WithCancel(ctx)
	defer cancelA()
	first, second := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := c.Acquire(ctxA, 1, wire.Exclusive) // its datagram is held, then dropped
		first <- err
	}()
	<-bc.blocked // the only sender is in WriteTo
	go func() {
		g, err := c.Acquire(ctx, 2, wire.Exclusive)
		if err == nil {
			err = g.Release(ctx)
		}
		second <- err
	}()
	eventually(t, "the second acquire queued behind the busy sender", func() bool {
		c.sendq.mu.Lock()
		defer c.sendq.mu.Unlock()
		return len(c.sendq.queue) == 1 && len(c.sendq.free) == 0
	})
	if n := len(s.requests()); n != 0 {
		t.Fatalf("server saw %d requests while the sender was held", n)
	}
	unblock()
	if err := <-second; err != nil {
		t.Fatalf("second acquire: %v (the queued datagram was not sent by the busy sender)", err)
	}
	if st := c.Stats(); st.Retransmits != 0 {
		t.Fatalf("%d retransmissions", st.Retransmits)
	}
	cancelA()
	if err := <-first; err == nil {
		t.Fatal("the acquire whose datagram was dropped was granted")
	}
}
