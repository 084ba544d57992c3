package client

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// blackHole is a server that never answers: a bound UDP socket that reads every datagram and
// drops it, keeping the requests it read.
type blackHole struct {
	conn net.PacketConn
	mu   sync.Mutex
	reqs []wire.Fields // guarded by mu
	wg   sync.WaitGroup
}

func newBlackHole(t *testing.T) *blackHole {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackHole{conn: conn}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		buf := make([]byte, 2048)
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			if h, err := wire.Parse(buf[:n]); err == nil {
				var f wire.Fields
				h.Decode(&f)
				b.mu.Lock()
				b.reqs = append(b.reqs, f)
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		b.wg.Wait()
	})
	return b
}

func (b *blackHole) addr() string { return b.conn.LocalAddr().String() }

// count returns how many requests of op arrived with token 0 and with another token.
func (b *blackHole) count(op wire.Op) (token0, other int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.reqs {
		if f.Op != op {
			continue
		}
		if f.Token == 0 {
			token0++
		} else {
			other++
		}
	}
	return token0, other
}

// TestAcquireUnreachable: an Acquire without a deadline against a server that never answers
// fails after MaxAttempts copies with an *UnreachableError naming the server and the attempts;
// the copies after the first MaxAttempts/2 unanswered ones went with a liveness probe.
func TestAcquireUnreachable(t *testing.T) {
	b := newBlackHole(t)
	c := newClient(t, Config{Servers: []string{b.addr()}, RetryInterval: time.Millisecond,
		MaxRetryInterval: 4 * time.Millisecond, MaxAttempts: 5})
	done := make(chan error, 1)
	go func() {
		_, err := c.Acquire(context.Background(), 7, wire.Exclusive)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(testTimeout):
		t.Fatal("Acquire against a server that never answers did not return")
	}
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("Acquire = %v, want an *UnreachableError", err)
	}
	if ue.Server != b.addr() || ue.Attempts != 5 || ue.Op != wire.OpAcquire || ue.Lock != 7 || ue.Elapsed <= 0 {
		t.Errorf("UnreachableError = %+v, want server %s, 5 attempts, acquire of lock 7", *ue, b.addr())
	}
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrTimeout) {
		t.Errorf("%v does not match ErrUnreachable and ErrTimeout", err)
	}
	if msg := err.Error(); !strings.Contains(msg, b.addr()) || !strings.Contains(msg, "5 attempts") {
		t.Errorf("error %q names neither the server nor the attempts", msg)
	}
	eventually(t, "the requests at the server", func() bool {
		acq, _ := b.count(wire.OpAcquire)
		probes, _ := b.count(wire.OpLeaseProbe)
		return acq == 5 && probes == 3
	})
	if acq, other := b.count(wire.OpAcquire); acq != 5 || other != 0 {
		t.Errorf("%d acquires sent, want 5", acq+other)
	}
}

// TestUnreachableRelease: a release whose server went away also fails with an
// *UnreachableError after MaxAttempts copies, before its RequestTimeout.
func TestUnreachableRelease(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}, RetryInterval: time.Millisecond,
		MaxRetryInterval: 4 * time.Millisecond, MaxAttempts: 3, RequestTimeout: time.Minute})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 3, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	s.set(func(s *fakeServer) { s.dropIn = func(*wire.Fields) bool { return true } })
	err = g.Release(ctx)
	var ue *UnreachableError
	if !errors.As(err, &ue) || ue.Op != wire.OpRelease || ue.Attempts != 3 || ue.Server != s.addr() {
		t.Fatalf("Release = %v, want an *UnreachableError of the release after 3 attempts", err)
	}
}

// TestAcquireDeadlineNamesServer: when the context ends first, the error wraps the context's
// and names the server, the attempts and whether the server answered.
func TestAcquireDeadlineNamesServer(t *testing.T) {
	b := newBlackHole(t)
	c := newClient(t, Config{Servers: []string{b.addr()}, MaxAttempts: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Acquire(ctx, 7, wire.Exclusive)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnreachable) {
		t.Fatalf("Acquire = %v, want ErrTimeout and DeadlineExceeded, not ErrUnreachable", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, b.addr()) || !strings.Contains(msg, "attempts") ||
		!strings.Contains(msg, "no answer from the server") {
		t.Errorf("error %q does not name the server, the attempts and the silence", msg)
	}
}

// TestQueuedAcquireIsNotUnreachable: an acquire waiting in a live server's queue gets no answer
// for many times MaxAttempts retransmissions, but the server refuses its liveness probes, so it
// keeps waiting and is granted when the holder releases; the refusals are nobody's answers
// (Stats.Unknown stays 0). Negative control: a server that drops the probes (and so says
// nothing at all about the waiting request) is reported unreachable.
func TestQueuedAcquireIsNotUnreachable(t *testing.T) {
	for _, dropProbes := range []bool{false, true} {
		name := "probes answered"
		if dropProbes {
			name = "probes dropped"
		}
		t.Run(name, func(t *testing.T) {
			s := newFakeServer(t, 10*time.Second)
			if dropProbes {
				s.set(func(s *fakeServer) {
					s.dropIn = func(f *wire.Fields) bool { return f.Op == wire.OpLeaseProbe && f.Token == 0 }
				})
			}
			holder := newClient(t, Config{Servers: []string{s.addr()}})
			c := newClient(t, Config{Servers: []string{s.addr()}, RetryInterval: time.Millisecond,
				MaxRetryInterval: 2 * time.Millisecond, MaxAttempts: 3})
			ctx := testCtx(t)
			h, err := holder.Acquire(ctx, 5, wire.Exclusive)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			go func() {
				g, err := c.Acquire(ctx, 5, wire.Exclusive)
				if err == nil {
					err = g.Release(ctx)
				}
				got <- err
			}()
			if dropProbes {
				if err := <-got; !errors.Is(err, ErrUnreachable) {
					t.Fatalf("Acquire with the probes dropped = %v, want ErrUnreachable", err)
				}
				return
			}
			// Far longer than 3 attempts of at most 2 ms.
			time.Sleep(200 * time.Millisecond)
			select {
			case err := <-got:
				t.Fatalf("the waiting Acquire returned %v while the lock was held", err)
			default:
			}
			if err := h.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatalf("the waiting Acquire: %v", err)
			}
			if st := c.Stats(); st.Unknown != 0 || st.Rejects != 0 {
				t.Errorf("stats %+v: the probes' refusals were taken for answers", st)
			}
		})
	}
}

// TestMaxAttemptsDefault: the zero Config bounds the attempts at DefaultMaxAttempts.
func TestMaxAttemptsDefault(t *testing.T) {
	cfg := Config{Servers: []string{"127.0.0.1:1"}}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxAttempts != DefaultMaxAttempts || DefaultMaxAttempts != 16 {
		t.Errorf("MaxAttempts = %d, DefaultMaxAttempts = %d, want 16", cfg.MaxAttempts, DefaultMaxAttempts)
	}
}
