package rdmaclient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/client/rdmaclient"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/rdma/alock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startServer(t *testing.T, locks int) *lockserver.Server {
	t.Helper()
	s, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: 1, RDMA: lockserver.RDMAConfig{Locks: locks}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return s
}

func dial(t *testing.T, s *lockserver.Server, cfg rdmaclient.Config) *rdmaclient.Client {
	t.Helper()
	cfg.Server = s.Addr().String()
	c, err := rdmaclient.Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestLockUnlockCancel(t *testing.T) {
	s := startServer(t, 2)
	a, b := dial(t, s, rdmaclient.Config{}), dial(t, s, rdmaclient.Config{})
	if a.NodeID() == b.NodeID() || a.Len() != 2 {
		t.Fatalf("nodes %d and %d, %d locks", a.NodeID(), b.NodeID(), a.Len())
	}
	bg := context.Background()
	// One client holds both locks at once (one handle each).
	if err := a.Lock(bg, 0); err != nil {
		t.Fatal(err)
	}
	if err := a.Lock(bg, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	if err := b.Lock(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held lock: %v, want deadline exceeded", err)
	}
	if err := s.LocalLocks().Lock(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("co-located Lock of a remotely held lock: %v, want deadline exceeded", err)
	}
	if err := a.Unlock(0); err != nil {
		t.Fatal(err)
	}
	if err := a.Unlock(1); err != nil {
		t.Fatal(err)
	}
	// The abandoned acquisitions finish and give the locks back.
	if err := b.Lock(bg, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(0); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(0); !errors.Is(err, rdmaclient.ErrNotHeld) {
		t.Fatalf("second Unlock: %v, want ErrNotHeld", err)
	}
	if err := b.Lock(bg, 2); !errors.Is(err, rdmaclient.ErrNotRDMALock) {
		t.Fatalf("Lock(2) of 2: %v, want ErrNotRDMALock", err)
	}
	if err := s.LocalLocks().Lock(bg, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.LocalLocks().Unlock(1); err != nil {
		t.Fatal(err)
	}
}

// TestCloseWhileWaiting: closing a client abandons its waiting acquisition (ErrClosed), and
// shows the limitation the package documents: its descriptor stays in the lock's queue, so the
// holder cannot hand the lock on and the lock is left blocked.
func TestCloseWhileWaiting(t *testing.T) {
	s := startServer(t, 1)
	a := dial(t, s, rdmaclient.Config{})
	linked := make(chan struct{}, 1)
	b := dial(t, s, rdmaclient.Config{ALock: alock.Config{Probe: func(ev alock.Event) {
		if ev.Kind == alock.EvLinked {
			linked <- struct{}{}
		}
	}}})
	bg := context.Background()
	if err := a.Lock(bg, 0); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() { res <- b.Lock(bg, 0) }()
	<-linked // b is queued behind a, spinning on its own node
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-res; !errors.Is(err, rdmaclient.ErrClosed) {
		t.Fatalf("waiting Lock of a closed client: %v, want ErrClosed", err)
	}
	if err := b.Lock(bg, 0); !errors.Is(err, rdmaclient.ErrClosed) {
		t.Fatalf("Lock after Close: %v, want ErrClosed", err)
	}
	err := a.Unlock(0)
	if err == nil || !strings.Contains(err.Error(), "left blocked") {
		t.Fatalf("handing the lock to a dead waiter: %v, want an error saying the lock is left blocked", err)
	}
}
