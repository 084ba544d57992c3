package lockserver

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/client/rdmaclient"
	"github.com/netlock-go/netlock/wire"
)

// startRDMA runs a server with an ALock table of locks entries; stop shuts it down and checks
// Run's result.
func startRDMA(t *testing.T, locks int, mod func(*Config)) (s *Server, stop func()) {
	t.Helper()
	cfg := Config{Listen: "127.0.0.1:0", Shards: 2, Sockets: 1, RDMA: RDMAConfig{Locks: locks}}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return s, stop
}

func dialRemote(t *testing.T, s *Server) *rdmaclient.Client {
	t.Helper()
	rc, err := rdmaclient.Dial(context.Background(), rdmaclient.Config{Server: s.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

func newUDPClient(t *testing.T, s *Server) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Servers: []string{s.Addr().String()}, Local: "127.0.0.1:0",
		RetryInterval: 20 * time.Millisecond, MaxRetryInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// detector is the mutual-exclusion check of the three-way test: every holder, whatever path
// it took the lock by, increments in on entry and decrements it on exit; an entry that finds
// someone inside is a violation. Atomics only: the UDP path's happens-before goes through the
// network, which the race detector cannot see.
type detector struct {
	in         atomic.Int32
	violations atomic.Int64
	enters     [3]atomic.Int64 // local, udp, remote
}

const (
	viaLocal = iota
	viaUDP
	viaRemote
)

func (d *detector) cs(via int, hold time.Duration) {
	if d.in.Add(1) != 1 {
		d.violations.Add(1)
	}
	d.enters[via].Add(1)
	if hold > 0 {
		time.Sleep(hold)
	} else {
		for i := 0; i < 3; i++ {
			runtime.Gosched()
		}
	}
	d.in.Add(-1)
}

func testSeed(t *testing.T) int64 {
	seed := time.Now().UnixNano()
	if v := os.Getenv("RDMA_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (rerun with RDMA_SEED=%d)", seed, seed)
	return seed
}

// threeWay runs co-located goroutines (LocalLocks), UDP clients (client package, through the
// server's proxies) and remote RDMA clients (rdmaclient over emu's TCP transport) on one lock
// at once, each holding it for hold (0: a few yields; otherwise a random duration up to hold).
// It stops after iters critical sections per worker, or when stopEarly says so.
func threeWay(t *testing.T, s *Server, iters int, hold time.Duration, seed int64, stopEarly func(*detector) bool) *detector {
	t.Helper()
	const lock = 1
	d := &detector{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errc := make(chan error, 16)
	var wg sync.WaitGroup
	worker := func(via int, id int, acquire func(ctx context.Context) (release func() error, err error)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(via*100+id)))
			for k := 0; k < iters; k++ {
				if stopEarly != nil && stopEarly(d) {
					return
				}
				release, err := acquire(ctx)
				if err != nil {
					errc <- fmt.Errorf("via %d worker %d iteration %d: acquire: %w", via, id, k, err)
					return
				}
				h := time.Duration(0)
				if hold > 0 {
					h = time.Duration(rng.Int63n(int64(hold))) + 1
				}
				d.cs(via, h)
				if err := release(); err != nil {
					errc <- fmt.Errorf("via %d worker %d iteration %d: release: %w", via, id, k, err)
					return
				}
			}
		}()
	}
	ll := s.LocalLocks()
	for id := 0; id < 2; id++ {
		worker(viaLocal, id, func(ctx context.Context) (func() error, error) {
			if err := ll.Lock(ctx, lock); err != nil {
				return nil, err
			}
			return func() error { return ll.Unlock(lock) }, nil
		})
	}
	for id := 0; id < 2; id++ {
		c := newUDPClient(t, s)
		mode := wire.Mode(id) // one client asks shared: served exclusively on an RDMA lock
		worker(viaUDP, id, func(ctx context.Context) (func() error, error) {
			g, err := c.Acquire(ctx, lock, mode)
			if err != nil {
				return nil, err
			}
			if g.Mode() != wire.Exclusive {
				return nil, fmt.Errorf("granted %v on an RDMA lock, want exclusive", g.Mode())
			}
			return func() error { return g.Release(ctx) }, nil
		})
	}
	for id := 0; id < 2; id++ {
		rc := dialRemote(t, s)
		worker(viaRemote, id, func(ctx context.Context) (func() error, error) {
			if err := rc.Lock(ctx, lock); err != nil {
				return nil, err
			}
			return func() error { return rc.Unlock(lock) }, nil
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	return d
}

// TestRDMAThreeWay is the integration test of issue 6 part 6: co-located goroutines, UDP
// clients and remote RDMA clients on one lock at once never overlap.
func TestRDMAThreeWay(t *testing.T) {
	seed := testSeed(t)
	s, stop := startRDMA(t, 4, nil)
	iters := 60
	if testing.Short() {
		iters = 20
	}
	d := threeWay(t, s, iters, 0, seed, nil)
	stop()
	t.Logf("critical sections: local %d, udp %d, remote %d; violations %d",
		d.enters[viaLocal].Load(), d.enters[viaUDP].Load(), d.enters[viaRemote].Load(), d.violations.Load())
	if v := d.violations.Load(); v != 0 {
		t.Fatalf("%d mutual-exclusion violations", v)
	}
	for via, want := range []int64{int64(2 * iters), int64(2 * iters), int64(2 * iters)} {
		if got := d.enters[via].Load(); got != want {
			t.Errorf("path %d: %d critical sections, want %d", via, got, want)
		}
	}
}

// TestRDMAThreeWayDetects is the negative control: with proxies that send UDP grants without
// taking the ALock, the same workload must show overlaps (so the detector can see them).
func TestRDMAThreeWayDetects(t *testing.T) {
	seed := testSeed(t)
	s, stop := startRDMA(t, 4, nil)
	s.rdma.unsafeNoALock = true
	d := threeWay(t, s, 200, 2*time.Millisecond, seed, func(d *detector) bool { return d.violations.Load() > 0 })
	stop()
	if d.violations.Load() == 0 {
		t.Fatal("no violation without the ALock on the UDP path: the detector sees nothing")
	}
}
