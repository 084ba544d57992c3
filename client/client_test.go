package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTimeout bounds every wait in these tests; it is generous for a loaded machine under -race.
const testTimeout = 20 * time.Second

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.Local == "" {
		cfg.Local = "127.0.0.1:0"
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = 10 * time.Millisecond
	}
	if cfg.MaxRetryInterval == 0 {
		cfg.MaxRetryInterval = 50 * time.Millisecond
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or testTimeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"no servers", Config{}, false},
		{"servers", Config{Servers: []string{"127.0.0.1:8888"}}, true},
		{"route", Config{Route: func(uint32) string { return "127.0.0.1:8888" }}, true},
		{"negative lease", Config{Servers: []string{"x:1"}, Lease: -1}, false},
		{"huge lease", Config{Servers: []string{"x:1"}, Lease: 1 << 62}, false},
		{"negative retry", Config{Servers: []string{"x:1"}, RetryInterval: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.validate()
			if (err == nil) != tt.ok {
				t.Fatalf("validate() = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && (tt.cfg.RetryInterval == 0 || tt.cfg.Clock == nil || tt.cfg.Logger == nil) {
				t.Error("defaults not filled in")
			}
		})
	}
	if _, err := New(Config{Servers: []string{"not an address"}}); err == nil {
		t.Error("New accepted an unresolvable server")
	}
}

func TestAcquireRelease(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}, ClientID: 7})
	ctx := testCtx(t)
	g1, err := c.Acquire(ctx, 5, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if g1.Lock() != 5 || g1.Mode() != wire.Exclusive || g1.Txn()>>32 != 7 || g1.Token() == 0 {
		t.Fatalf("grant lock=%d mode=%v txn=%#x token=%d", g1.Lock(), g1.Mode(), g1.Txn(), g1.Token())
	}
	if d := time.Until(g1.Deadline()); d <= 0 || d > 10*time.Second {
		t.Errorf("deadline in %v, want within the 10s lease", d)
	}
	if err := g1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g1.Release(ctx); err != nil {
		t.Errorf("second Release = %v, want the first result (nil)", err)
	}
	g2, err := c.Acquire(ctx, 5, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if g2.Token() <= g1.Token() || g2.Txn() == g1.Txn() {
		t.Errorf("second grant token %d txn %#x after token %d txn %#x", g2.Token(), g2.Txn(), g1.Token(), g1.Txn())
	}
	if err := g2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if txns, _ := s.queue(5); len(txns) != 0 {
		t.Errorf("server queue %v after releases", txns)
	}
	for _, r := range s.requests() {
		if r.Op == wire.OpAcquire && r.Flags&wire.FlagRetry != 0 {
			t.Logf("note: retransmission %v on a lossless link", &r)
		}
	}
}

func TestSharedAndExclusive(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	s1, err := c.Acquire(ctx, 2, wire.Shared)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.Acquire(ctx, 2, wire.Shared)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryAcquire(ctx, 2, wire.Exclusive); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("TryAcquire exclusive over shared holders = %v, want ErrWouldBlock", err)
	}
	var re *RejectError
	if _, err := c.TryAcquire(ctx, 2, wire.Exclusive); !errors.As(err, &re) || re.Status != wire.StatusWouldBlock ||
		!errors.Is(err, &RejectError{Status: wire.StatusWouldBlock}) {
		t.Fatalf("error %v is not a would-block *RejectError", err)
	}
	got := make(chan *Grant, 1)
	go func() {
		g, err := c.Acquire(ctx, 2, wire.Exclusive)
		if err != nil {
			t.Error(err)
		}
		got <- g
	}()
	eventually(t, "exclusive request queued", func() bool { txns, _ := s.queue(2); return len(txns) == 3 })
	if err := s1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
		t.Fatal("exclusive granted while a shared holder remains")
	case <-time.After(20 * time.Millisecond):
	}
	if err := s2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	x := <-got
	if x == nil {
		t.FailNow()
	}
	if err := x.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseRetransmitted drops the answer to the first release: the retransmission finds nothing
// and is refused with not-holder, which counts as success.
func TestReleaseRetransmitted(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	var dropped atomic.Bool
	s.set(func(s *fakeServer) {
		s.dropOut = func(f *wire.Fields) bool {
			return f.Op == wire.OpRelease && dropped.CompareAndSwap(false, true)
		}
	})
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 3, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Release(ctx); err != nil {
		t.Fatalf("Release = %v, want success through a not-holder answer to the retransmission", err)
	}
	if !dropped.Load() {
		t.Fatal("the release answer was not dropped")
	}
	var rels int
	for _, r := range s.requests() {
		if r.Op == wire.OpRelease {
			rels++
		}
	}
	if rels < 2 {
		t.Errorf("%d releases sent, want a retransmission", rels)
	}
}

// TestReleaseNotHolder: the first release refused with not-holder is an error.
func TestReleaseNotHolder(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 4, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.forget(); err != nil { // the server forgets the holder
		t.Fatal(err)
	}
	if err := g.Release(ctx); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("Release = %v, want ErrNotHolder", err)
	}
}

func TestRejects(t *testing.T) {
	for _, tt := range []struct {
		status wire.Status
		want   error
	}{
		{wire.StatusQuota, ErrQuota},
		{wire.StatusShutdown, ErrShutdown},
		{wire.StatusQueueFull, ErrQueueFull},
		{wire.StatusOverloaded, ErrOverloaded},
		{wire.StatusWaitExpired, ErrWaitExpired},
	} {
		t.Run(tt.status.String(), func(t *testing.T) {
			s := newFakeServer(t, 10*time.Second)
			s.set(func(s *fakeServer) { s.reject = tt.status })
			c := newClient(t, Config{Servers: []string{s.addr()}})
			_, err := c.Acquire(testCtx(t), 1, wire.Shared)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Acquire = %v, want %v", err, tt.want)
			}
			// Negative control: the error matches no other status's sentinel.
			for _, other := range []error{ErrQuota, ErrShutdown, ErrQueueFull, ErrOverloaded, ErrWaitExpired, ErrNotHolder, ErrLeaseLost, ErrWouldBlock} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("Acquire = %v matches %v too", err, other)
				}
			}
		})
	}
}

// TestAcquireTimeoutWithdraws: an acquire whose context ends while it waits is withdrawn from
// the queue, and the lock then goes to the next waiter.
func TestAcquireTimeoutWithdraws(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	holder, err := c.Acquire(ctx, 9, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	_, err = c.Acquire(short, 9, wire.Exclusive)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire = %v, want ErrTimeout and DeadlineExceeded", err)
	}
	eventually(t, "withdrawal", func() bool { txns, _ := s.queue(9); return len(txns) == 1 })
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	g, err := c.Acquire(ctx, 9, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWithdrawRacesGrant: the grant answers an acquire that has just been given up; the client
// releases it, so the lock does not stay held until its lease ends.
func TestWithdrawRacesGrant(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	var holdGrants atomic.Bool
	holdGrants.Store(true)
	s.set(func(s *fakeServer) {
		s.dropOut = func(f *wire.Fields) bool { return f.Op == wire.OpGrant && holdGrants.Load() }
	})
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	// The server grants, but the grant is lost: the client gives up and withdraws with token 0,
	// which the server refuses (the txn holds). The lock is then held by nobody on the client side.
	if _, err := c.Acquire(short, 11, wire.Exclusive); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Acquire = %v, want ErrTimeout", err)
	}
	holdGrants.Store(false)
	// The server holds the lock for a txn the client gave up on.
	eventually(t, "the orphaned holder", func() bool { _, holders := s.queue(11); return holders == 1 })
	// Deliver the grant again now (as a retransmitting server or a late duplicate would): the
	// client must release it.
	token := s.regrant(11)
	if token == 0 {
		t.Fatal("no grant to send again")
	}
	eventually(t, "raced grant released", func() bool { txns, _ := s.queue(11); return len(txns) == 0 })
	released := false
	for _, q := range s.requests() {
		released = released || (q.Op == wire.OpRelease && q.Token == token)
	}
	if !released {
		t.Error("no release with the raced grant's token")
	}
}

func TestLeaseExpires(t *testing.T) {
	s := newFakeServer(t, 50*time.Millisecond)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 6, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.Lost():
	case <-time.After(testTimeout):
		t.Fatal("Lost not closed after the lease")
	}
	if !errors.Is(g.LostErr(), ErrLeaseLost) {
		t.Errorf("LostErr = %v", g.LostErr())
	}
	if time.Now().Before(g.Deadline()) {
		t.Errorf("lost before the deadline %v", g.Deadline())
	}
	// A waiter proceeds once the server expires the lease.
	g2, err := c.Acquire(ctx, 6, wire.Exclusive, WithLease(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Release(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Release of a lost grant = %v, want ErrLeaseLost", err)
	}
	if err := g2.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestKeepAlive(t *testing.T) {
	s := newFakeServer(t, time.Second)
	// Renewals every third of a second leave room for scheduling stalls on a loaded machine.
	c := newClient(t, Config{Servers: []string{s.addr()}, KeepAlive: true, Lease: time.Second})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 8, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	first := g.Deadline()
	eventually(t, "three renewals", func() bool { return c.Stats().Renewals >= 3 })
	select {
	case <-g.Lost():
		t.Fatalf("lease lost despite KeepAlive: %v", g.LostErr())
	default:
	}
	if !g.Deadline().After(first) {
		t.Errorf("deadline %v not extended past %v", g.Deadline(), first)
	}
	if err := g.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRenewRefused: a renewal refused with not-holder loses the lease.
func TestRenewRefused(t *testing.T) {
	s := newFakeServer(t, time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}, KeepAlive: true, Lease: 90 * time.Millisecond})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 8, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.forget(); err != nil { // the server forgets the holder
		t.Fatal(err)
	}
	select {
	case <-g.Lost():
	case <-time.After(testTimeout):
		t.Fatal("Lost not closed")
	}
	if !errors.Is(g.LostErr(), ErrNotHolder) && !errors.Is(g.LostErr(), ErrLeaseLost) {
		t.Errorf("LostErr = %v", g.LostErr())
	}
}

func TestTxn(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	txn := c.Begin()
	txn.Lock(30, wire.Shared)
	txn.Lock(10, wire.Shared)
	txn.Lock(20, wire.Exclusive)
	txn.Lock(10, wire.Exclusive) // upgrade: taken exclusive
	txn.Lock(30, wire.Shared)
	if err := txn.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	gs := txn.Grants()
	want := []LockSpec{{10, wire.Exclusive}, {20, wire.Exclusive}, {30, wire.Shared}}
	if len(gs) != len(want) {
		t.Fatalf("%d grants, want %d", len(gs), len(want))
	}
	for i, g := range gs {
		if g.Lock() != want[i].Lock || g.Mode() != want[i].Mode || g.Txn() != txn.ID() {
			t.Errorf("grant %d: lock %d mode %v txn %#x, want %v txn %#x", i, g.Lock(), g.Mode(), g.Txn(), want[i], txn.ID())
		}
	}
	var order []uint32
	for _, r := range s.requests() {
		if r.Op == wire.OpAcquire && r.Flags&wire.FlagRetry == 0 {
			order = append(order, r.Lock)
		}
	}
	if len(order) != 3 || order[0] != 10 || order[1] != 20 || order[2] != 30 {
		t.Errorf("acquire order %v, want ascending", order)
	}
	if err := txn.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, l := range []uint32{10, 20, 30} {
		if txns, _ := s.queue(l); len(txns) != 0 {
			t.Errorf("lock %d still queued %v", l, txns)
		}
	}
}

// TestTxnFailureReleasesAll: a txn whose last lock is refused gives back the locks it took.
func TestTxnFailureReleasesAll(t *testing.T) {
	ok := newFakeServer(t, 10*time.Second)
	bad := newFakeServer(t, 10*time.Second)
	bad.set(func(s *fakeServer) { s.reject = wire.StatusQuota })
	c := newClient(t, Config{Servers: []string{ok.addr(), bad.addr()}}) // even locks ok, odd refused
	ctx := testCtx(t)
	err := c.RunTxn(ctx, []LockSpec{{2, wire.Exclusive}, {4, wire.Shared}, {5, wire.Exclusive}},
		func(context.Context) error { t.Error("fn ran without its locks"); return nil })
	if !errors.Is(err, ErrQuota) {
		t.Fatalf("RunTxn = %v, want ErrQuota", err)
	}
	for _, l := range []uint32{2, 4} {
		if txns, _ := ok.queue(l); len(txns) != 0 {
			t.Errorf("lock %d still held by %v", l, txns)
		}
	}
}

// TestTxnNoDeadlock runs transactions over overlapping lock sets named in opposite orders.
func TestTxnNoDeadlock(t *testing.T) {
	s1 := newFakeServer(t, 10*time.Second)
	s2 := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s1.addr(), s2.addr()}})
	ctx := testCtx(t)
	var inside [4]atomic.Int32
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			locks := []LockSpec{{1, wire.Exclusive}, {2, wire.Exclusive}, {3, wire.Exclusive}}
			if i%2 == 1 {
				locks = []LockSpec{{3, wire.Exclusive}, {2, wire.Exclusive}, {1, wire.Exclusive}}
			}
			for range 5 {
				err := c.RunTxn(ctx, locks, func(context.Context) error {
					for _, l := range locks {
						if inside[l.Lock].Add(1) != 1 {
							t.Errorf("lock %d: two holders", l.Lock)
						}
					}
					for _, l := range locks {
						inside[l.Lock].Add(-1)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestRunTxnLeaseLostCancels(t *testing.T) {
	s := newFakeServer(t, 40*time.Millisecond)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	err := c.RunTxn(ctx, []LockSpec{{1, wire.Exclusive}}, func(ctx context.Context) error {
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), ErrLeaseLost) {
			t.Errorf("cause %v", context.Cause(ctx))
		}
		return nil
	})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("RunTxn = %v, want ErrLeaseLost", err)
	}
}

func TestMalformedAndUnknown(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	peer, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	bad := make([]byte, wire.Len)
	bad[0] = 99 // version
	for _, b := range [][]byte{{1, 2, 3}, bad} {
		if _, err := peer.WriteTo(b, c.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	unknown := wire.Append(nil, &wire.Fields{Op: wire.OpRelease, Flags: wire.FlagReply, Lock: 1, Txn: 42})
	if _, err := s.conn.WriteTo(unknown, c.LocalAddr()); err != nil { // from the server: unknown
		t.Fatal(err)
	}
	if _, err := peer.WriteTo(unknown, c.LocalAddr()); err != nil { // from elsewhere: foreign
		t.Fatal(err)
	}
	eventually(t, "counters", func() bool {
		st := c.Stats()
		return st.Malformed == 2 && st.Unknown == 1 && st.Foreign == 1
	})
	// The client still works.
	g, err := c.Acquire(testCtx(t), 1, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Release(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestClose(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 1, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(ctx, 1, wire.Exclusive)
		errc <- err
	}()
	eventually(t, "waiter queued", func() bool { txns, _ := s.queue(1); return len(txns) == 2 })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("pending Acquire = %v, want ErrClosed", err)
	}
	if _, err := c.Acquire(ctx, 2, wire.Shared); !errors.Is(err, ErrClosed) {
		t.Errorf("Acquire after Close = %v, want ErrClosed", err)
	}
	if err := g.Release(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Release after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestRoute(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	var calls atomic.Int32
	c := newClient(t, Config{Route: func(uint32) string { calls.Add(1); return s.addr() }})
	ctx := testCtx(t)
	for l := range uint32(3) {
		g, err := c.Acquire(ctx, l, wire.Shared)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if calls.Load() < 3 {
		t.Errorf("Route called %d times", calls.Load())
	}
}

// TestStrayGrant: a grant nobody waits for (a late duplicate of a released grant) is given back.
func TestStrayGrant(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 12, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Release(ctx); err != nil {
		t.Fatal(err)
	}
	s.sendAll([]lockcore.Effect{{To: c.LocalAddr().(*net.UDPAddr).AddrPort(), Msg: wire.Fields{Op: wire.OpGrant,
		Mode: wire.Exclusive, Lock: 12, Txn: g.Txn(), Token: g.Token()}}})
	eventually(t, "stray grant given back", func() bool {
		n := 0
		for _, q := range s.requests() {
			if q.Op == wire.OpRelease && q.Token == g.Token() {
				n++
			}
		}
		return n == 2 && c.Stats().StrayGrants == 1
	})
}

func TestRenew(t *testing.T) {
	s := newFakeServer(t, time.Hour)
	c := newClient(t, Config{Servers: []string{s.addr()}, Lease: 10 * time.Second})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 13, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	before := g.Deadline()
	time.Sleep(2 * time.Millisecond)
	if err := g.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if !g.Deadline().After(before) {
		t.Errorf("deadline %v not after %v", g.Deadline(), before)
	}
	if err := s.forget(); err != nil { // the server forgets the holder
		t.Fatal(err)
	}
	if err := g.Renew(ctx); !errors.Is(err, ErrLeaseLost) || !errors.Is(err, ErrNotHolder) {
		t.Fatalf("Renew of a forgotten grant = %v, want ErrLeaseLost and ErrNotHolder", err)
	}
	select {
	case <-g.Lost():
	default:
		t.Error("Lost not closed after a refused renewal")
	}
	if err := g.Release(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Release = %v, want ErrLeaseLost", err)
	}
}

func TestRunTxnPanicReleases(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic of fn", r)
			}
		}()
		_ = c.RunTxn(ctx, []LockSpec{{1, wire.Exclusive}, {2, wire.Shared}}, func(context.Context) error { panic("boom") })
	}()
	for _, l := range []uint32{1, 2} {
		if txns, _ := s.queue(l); len(txns) != 0 {
			t.Errorf("lock %d still held by %v after a panic", l, txns)
		}
	}
}

// TestForgedAnswersIgnored: answers from an address the client did not ask are dropped and
// counted: a forged grant does not complete an acquire, a forged lease-expired reject does not
// lose a held lease, a forged stray grant does not make the client send a release to the forger.
// Answers from a configured switch are accepted.
func TestForgedAnswersIgnored(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	forger, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Close()
	sw, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	c := newClient(t, Config{Servers: []string{s.addr()}, Switches: []string{sw.LocalAddr().String()}})
	ctx := testCtx(t)
	holder, err := c.Acquire(ctx, 1, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Grant, 1)
	go func() {
		g, err := c.Acquire(ctx, 1, wire.Exclusive)
		if err != nil {
			t.Error(err)
		}
		got <- g
	}()
	eventually(t, "waiter queued", func() bool { txns, _ := s.queue(1); return len(txns) == 2 })
	txns, _ := s.queue(1)
	forge := func(f wire.Fields) {
		t.Helper()
		if _, err := forger.WriteTo(wire.Append(nil, &f), c.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	forge(wire.Fields{Op: wire.OpGrant, Mode: wire.Exclusive, Lock: 1, Txn: txns[1], Token: 1 << 60, LeaseMicros: 1e6})
	forge(wire.Fields{Op: wire.OpReject, Status: wire.StatusLeaseExpired, Lock: 1, Txn: holder.Txn(), Token: holder.Token()})
	forge(wire.Fields{Op: wire.OpGrant, Mode: wire.Exclusive, Lock: 77, Txn: 5, Token: 9})
	eventually(t, "three foreign answers", func() bool { return c.Stats().Foreign == 3 })
	select {
	case g := <-got:
		t.Fatalf("acquire completed by a forged grant (token %d)", g.Token())
	case <-holder.Lost():
		t.Fatal("lease lost through a forged reject")
	case <-time.After(30 * time.Millisecond):
	}
	_ = forger.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, _, err := forger.ReadFrom(make([]byte, 64)); err == nil {
		t.Fatal("the client answered the forger")
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	g := <-got
	if g == nil || g.Token() == 1<<60 {
		t.Fatalf("waiter granted %v", g)
	}
	// A switch may answer: its lease-expired reject of a held lock is taken.
	f := wire.Fields{Op: wire.OpReject, Status: wire.StatusLeaseExpired, Lock: 1, Txn: g.Txn(), Token: g.Token()}
	if _, err := sw.WriteTo(wire.Append(nil, &f), c.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.Lost():
	case <-time.After(testTimeout):
		t.Fatal("a switch's reject was not taken")
	}
}

// TestReservedLockRefused: lock ids reserved for the control plane never leave the client, and a
// declared contention travels in the acquire's slots field.
func TestReservedLockRefused(t *testing.T) {
	srv := newFakeServer(t, time.Second)
	c := newClient(t, Config{Servers: []string{srv.addr()}})
	if _, err := c.Acquire(testCtx(t), wire.ReservedLockBase, wire.Exclusive); !errors.Is(err, ErrReservedLock) {
		t.Fatalf("reserved lock: %v", err)
	}
	if n := len(srv.requests()); n != 0 {
		t.Fatalf("%d requests sent for a reserved lock", n)
	}
	g, err := c.Acquire(testCtx(t), 3, wire.Exclusive, WithContention(6))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release(testCtx(t))
	if r := srv.requests(); len(r) == 0 || r[0].Slots != 6 {
		t.Fatalf("acquire sent %v, want slots=6", r)
	}
}
