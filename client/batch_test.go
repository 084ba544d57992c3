package client_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/wire"
)

// startServerCfg runs a real lock server on loopback with cfg (Listen and Sockets filled in,
// Shards 2 unless set) until the test or benchmark ends.
func startServerCfg(tb testing.TB, cfg lockserver.Config) *lockserver.Server {
	tb.Helper()
	cfg.Listen, cfg.Sockets = "127.0.0.1:0", 1
	if cfg.Shards == 0 {
		cfg.Shards = 2
	}
	srv, err := lockserver.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("server Run: %v", err)
		}
	})
	return srv
}

// exclusion checks critical sections as they happen: at most one holder of a lock at a time,
// and every holder's fencing token larger than the previous holder's.
type exclusion struct {
	mu     sync.Mutex
	holder map[uint32]uint64 // lock -> txn inside
	last   map[uint32]uint64 // lock -> latest token seen
}

func newExclusion() *exclusion {
	return &exclusion{holder: map[uint32]uint64{}, last: map[uint32]uint64{}}
}

func (x *exclusion) enter(lock uint32, txn, token uint64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if h, ok := x.holder[lock]; ok {
		return fmt.Errorf("lock %d: txn %d entered while txn %d holds it", lock, txn, h)
	}
	if token <= x.last[lock] {
		return fmt.Errorf("lock %d: token %d after %d", lock, token, x.last[lock])
	}
	x.holder[lock], x.last[lock] = txn, token
	return nil
}

func (x *exclusion) exit(lock uint32) {
	x.mu.Lock()
	delete(x.holder, lock)
	x.mu.Unlock()
}

// TestExclusionChecker is the checker's negative control: two holders at once and a token
// that does not grow are reported.
func TestExclusionChecker(t *testing.T) {
	x := newExclusion()
	if err := x.enter(1, 1, 5); err != nil {
		t.Fatal(err)
	}
	if err := x.enter(1, 2, 6); err == nil {
		t.Fatal("two holders at once not reported")
	}
	x.exit(1)
	if err := x.enter(1, 3, 5); err == nil {
		t.Fatal("a token that did not grow not reported")
	}
	if err := x.enter(1, 3, 7); err != nil {
		t.Fatal(err)
	}
}

// TestBatchedClientsExclusion: batching clients (Config.Batch) against a real lock server that
// accepts batches, many goroutines contending for a few locks: every critical section is
// exclusive with growing tokens, every pair completes, and the server dropped no batch. Run it
// with -race.
func TestBatchedClientsExclusion(t *testing.T) {
	srv := startServerCfg(t, lockserver.Config{AcceptBatch: true})
	const clients, perClient, locks = 3, 8, 4
	pairs := 25
	if testing.Short() || raceEnabled {
		pairs = 10
	}
	var cs []*client.Client
	for range clients {
		cs = append(cs, newTestClient(t, client.Config{Servers: []string{srv.Addr().String()}, Batch: 8}))
	}
	ctx := itCtx(t)
	x := newExclusion()
	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient)
	for i := range clients * perClient {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cs[i%clients]
			for n := range pairs {
				lock := uint32(1 + (i+n)%locks)
				g, err := c.Acquire(ctx, lock, wire.Exclusive)
				if err != nil {
					errs <- err
					return
				}
				if err := x.enter(lock, g.Txn(), g.Token()); err != nil {
					errs <- err
				}
				time.Sleep(50 * time.Microsecond)
				x.exit(lock)
				if err := g.Release(ctx); err != nil {
					errs <- fmt.Errorf("release of lock %d: %w", lock, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var sent, datagrams int64
	for _, c := range cs {
		st := c.Stats()
		sent, datagrams = sent+st.Sent, datagrams+st.Datagrams
	}
	t.Logf("%d requests in %d datagrams; server malformed %v", sent, datagrams, srv.Malformed())
	if m := srv.Malformed(); m["batch"] != 0 || m["batch-off"] != 0 {
		t.Errorf("the server dropped batches: %v", m)
	}
	if st := srv.Stats(); st.Requests[wire.OpAcquire] < uint64(clients*perClient*pairs) {
		t.Errorf("the server saw %d acquires, want at least %d", st.Requests[wire.OpAcquire], clients*perClient*pairs)
	}
}

// TestBatchingClientServerWithoutBatches: batching is opt-in on both sides. A server that does
// not accept batches (the default) drops a batching client's first copies whole and counts them
// (batch-off); its retransmissions go single and are served, so the client still gets its locks,
// late.
func TestBatchingClientServerWithoutBatches(t *testing.T) {
	srv := startServerCfg(t, lockserver.Config{Core: lockcore.Config{}})
	c := newTestClient(t, client.Config{Servers: []string{srv.Addr().String()}, Batch: 8})
	ctx := itCtx(t)
	g, err := c.Acquire(ctx, 3, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Release(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if m := srv.Malformed(); m["batch-off"] < 2 {
		t.Errorf("malformed %v: want the acquire's and the release's first copies dropped as batch-off", m)
	}
	if st := c.Stats(); st.Retransmits < 2 {
		t.Errorf("%d retransmissions, want at least 2 (the acquire's and the release's)", st.Retransmits)
	}
}
