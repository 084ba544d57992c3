package rdmaclient_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/client/rdmaclient"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rackKey is the tests' rack key; the servers accept RDMA admin from loopback with it.
const rackKey = 0x7264_6d61_6b65_7921

func startServer(t *testing.T, locks int) *lockserver.Server { return startServerMode(t, locks, "") }

func startServerMode(t *testing.T, locks int, mode string) *lockserver.Server {
	t.Helper()
	s, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: 1, RDMA: lockserver.RDMAConfig{Locks: locks, Mode: mode},
		RackKey: rackKey, Peers: lockserver.Peers{RDMANodes: []string{"127.0.0.1"}}})
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
	cfg.RackKey = rackKey
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

// Against an RW-mode server (RMA-RW table): readers of two nodes and of the server's node share
// a lock, a writer waits for all of them, and an ALock server's client takes RLock exclusively.
func TestSharedLocks(t *testing.T) {
	s := startServerMode(t, 2, lockserver.RDMAModeRW)
	a, b := dial(t, s, rdmaclient.Config{}), dial(t, s, rdmaclient.Config{})
	if !a.Shared() {
		t.Fatal("client of an RW server sees no shared mode")
	}
	bg := context.Background()
	for _, c := range []*rdmaclient.Client{a, b, a} { // a twice: two handles of one node
		if err := c.RLock(bg, 1); err != nil {
			t.Fatal(err)
		}
	}
	ll := s.LocalLocks()
	if err := ll.RLock(bg, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	if err := b.Lock(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("writer beside readers: %v, want deadline exceeded", err)
	}
	for _, c := range []*rdmaclient.Client{a, b, a} {
		if err := c.RUnlock(1); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.RUnlock(1); !errors.Is(err, rdmaclient.ErrNotHeld) {
		t.Fatalf("third RUnlock of a: %v, want ErrNotHeld", err)
	}
	if err := ll.RUnlock(1); err != nil {
		t.Fatal(err)
	}
	// The abandoned writer finishes and gives the lock back; then a writer excludes readers.
	if err := a.Lock(bg, 1); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel2()
	if err := b.RLock(ctx2, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("reader beside a writer: %v, want deadline exceeded", err)
	}
	if err := a.Unlock(1); err != nil {
		t.Fatal(err)
	}

	al := startServer(t, 1)
	c := dial(t, al, rdmaclient.Config{})
	if c.Shared() {
		t.Fatal("client of an ALock server sees a shared mode")
	}
	if err := c.RLock(bg, 0); err != nil {
		t.Fatal(err)
	}
	ctx3, cancel3 := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel3()
	if err := al.LocalLocks().RLock(ctx3, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ALock RLock beside another: %v, want deadline exceeded (exclusive)", err)
	}
	if err := c.RUnlock(0); err != nil {
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

// TestDialNeedsRackKey: without the key Dial fails at once; with a wrong key the server drops
// the join unanswered and Dial times out.
func TestDialNeedsRackKey(t *testing.T) {
	s := startServer(t, 2)
	if _, err := rdmaclient.Dial(context.Background(), rdmaclient.Config{Server: s.Addr().String()}); !errors.Is(err, rdmaclient.ErrNoRackKey) {
		t.Fatalf("Dial without a key: %v, want ErrNoRackKey", err)
	}
	_, err := rdmaclient.Dial(context.Background(), rdmaclient.Config{Server: s.Addr().String(), RackKey: rackKey ^ 1,
		Timeout: 100 * time.Millisecond, Retry: 20 * time.Millisecond})
	if !errors.Is(err, rdmaclient.ErrTimeout) {
		t.Fatalf("Dial with a wrong key: %v, want ErrTimeout", err)
	}
	if n := s.ControlRefused()["bad-key"]; n == 0 {
		t.Fatalf("no bad-key refusal counted: %v", s.ControlRefused())
	}
}

// TestAnswerWithoutKeyIgnored: an admin answer without the rack key (a forger who guessed
// nothing but the nonce) is not taken for the server's.
func TestAnswerWithoutKeyIgnored(t *testing.T) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 256)
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			h, err := wire.Parse(buf[:n])
			if err != nil {
				continue
			}
			var f wire.Fields
			h.Decode(&f)
			f.Flags |= wire.FlagReply
			f.Tenant, f.Lock, f.Token = 1, 4, 64
			_, _ = pc.WriteToUDPAddrPort(wire.Append(nil, &f), from) // no trailer
		}
	}()
	_, err = rdmaclient.Dial(context.Background(), rdmaclient.Config{Server: pc.LocalAddr().String(), RackKey: rackKey,
		Timeout: 100 * time.Millisecond, Retry: 20 * time.Millisecond})
	if !errors.Is(err, rdmaclient.ErrTimeout) {
		t.Fatalf("Dial answered without the key: %v, want ErrTimeout", err)
	}
	pc.Close()
	<-done
}
