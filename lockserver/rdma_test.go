package lockserver

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/client/rdmaclient"
	"github.com/netlock-go/netlock/internal/rdmaproto"
	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/wire"
)

// startRDMA runs a server with an ALock table of locks entries; stop shuts it down and checks
// Run's result.
func startRDMA(t *testing.T, locks int, mod func(*Config)) (s *Server, stop func()) {
	t.Helper()
	cfg := trusted(Config{Listen: "127.0.0.1:0", Shards: 2, Sockets: 1, RDMA: RDMAConfig{Locks: locks}})
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

// remoteALock configures the ALock of the remote clients dialRemote makes.
var remoteALock alock.Config

func dialRemote(t *testing.T, s *Server) *rdmaclient.Client {
	t.Helper()
	rc, err := rdmaclient.Dial(context.Background(), rdmaclient.Config{Server: s.Addr().String(), ALock: remoteALock,
		RackKey: uint64(testKey)})
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

// locker is what the co-located path (LocalLocks) and the remote path (rdmaclient.Client) both
// offer.
type locker interface {
	Lock(ctx context.Context, lock uint32) error
	Unlock(lock uint32) error
	RLock(ctx context.Context, lock uint32) error
	RUnlock(lock uint32) error
}

// lockVia acquires lock through l, shared or exclusive, and returns the matching release.
func lockVia(ctx context.Context, l locker, lock uint32, shared bool) (release func() error, err error) {
	if shared {
		if err := l.RLock(ctx, lock); err != nil {
			return nil, err
		}
		return func() error { return l.RUnlock(lock) }, nil
	}
	if err := l.Lock(ctx, lock); err != nil {
		return nil, err
	}
	return func() error { return l.Unlock(lock) }, nil
}

// acquireUDP acquires lock in mode through the UDP client c: with Acquire, or if try, with
// TryAcquire repeated (a millisecond apart) until it is granted or fails other than with
// client.ErrWouldBlock.
func acquireUDP(ctx context.Context, c *client.Client, lock uint32, mode wire.Mode, try bool) (*client.Grant, error) {
	if !try {
		return c.Acquire(ctx, lock, mode)
	}
	for {
		g, err := c.TryAcquire(ctx, lock, mode)
		if !errors.Is(err, client.ErrWouldBlock) {
			return g, err
		}
		time.Sleep(time.Millisecond)
	}
}

// errStall is the cause with which watchProgress ends a run that stopped making progress.
var errStall = errors.New("stalled: no critical section on any path")

// stallAfter is how long a three-way run may go without a critical section on any path before it
// is ended as stalled. It bounds the absence of progress, not the run, whose length grows with
// the machine's load: TestRDMAThreeWay took 3.4 s on a lightly loaded machine and 17 to 45 s
// under -race on 2 cores loaded with CPU hogs, a C++ build and other test binaries, every path
// progressing steadily all along; a fixed budget for the whole run (60 s before) failed such
// runs, slow but live. The test binary's -timeout bounds the run.
const stallAfter = 30 * time.Second

// watchProgress returns a context that ends with errStall (wrapped, with state()'s description
// of the run) as its cause once progress() has not changed for after, and the function that ends
// the watch and the context.
func watchProgress(after time.Duration, progress func() int64, state func() string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(after / 20)
		defer tick.Stop()
		last, since := progress(), time.Now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if p := progress(); p != last {
				last, since = p, time.Now()
			} else if time.Since(since) >= after {
				cancel(fmt.Errorf("%w for %v: %s", errStall, after, state()))
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(done)
			cancel(nil)
		})
	}
}

// threeWay runs co-located goroutines (LocalLocks), UDP clients (client package, through the
// server's proxies) and remote RDMA clients (rdmaclient over emu's TCP transport) on one lock
// at once, each holding it for hold (0: a few yields; otherwise a random duration up to hold).
// It stops after iters critical sections per worker, when stopEarly says so, or when no path
// entered a critical section for stall (watchProgress: the stall, with the state of the lock,
// is then the first error). It returns the detector and the run's errors.
func threeWay(t *testing.T, s *Server, iters int, hold, stall time.Duration, seed int64,
	stopEarly func(*detector) bool) (*detector, []error) {
	t.Helper()
	const lock = 1
	d := &detector{}
	ctx, cancel := watchProgress(stall, func() int64 {
		return d.enters[viaLocal].Load() + d.enters[viaUDP].Load() + d.enters[viaRemote].Load()
	}, func() string {
		info, _ := s.core.Inspect(lock)
		rs, _ := s.RDMAStats()
		return fmt.Sprintf("critical sections: local %d, udp %d, remote %d; rdma tier %+v; lock %d in the core: "+
			"holders %+v, waiters %+v", d.enters[viaLocal].Load(), d.enters[viaUDP].Load(), d.enters[viaRemote].Load(),
			rs, lock, info.Holders, info.Waiters)
	})
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
		worker(viaLocal, id, func(ctx context.Context) (func() error, error) { return lockVia(ctx, ll, lock, false) })
	}
	for id := 0; id < 2; id++ {
		c := newUDPClient(t, s)
		mode := wire.Mode(id) // one client asks shared: served exclusively on an RDMA lock
		try := id == 1
		n := 0
		worker(viaUDP, id, func(ctx context.Context) (func() error, error) {
			n++
			// Every fourth acquisition of this client is a try, repeated until granted: it meets
			// the would-block check against the ALock's other cohorts.
			g, err := acquireUDP(ctx, c, lock, mode, try && n%4 == 0)
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
		worker(viaRemote, id, func(ctx context.Context) (func() error, error) { return lockVia(ctx, rc, lock, false) })
	}
	wg.Wait()
	close(errc)
	var errs []error
	if err := context.Cause(ctx); errors.Is(err, errStall) {
		errs = append(errs, err)
	}
	for err := range errc {
		errs = append(errs, err)
	}
	return d, errs
}

// TestRDMAThreeWay is the integration test of issue 6 part 6: co-located goroutines, UDP
// clients and remote RDMA clients on one lock at once never overlap.
func TestRDMAThreeWay(t *testing.T) {
	seed := rdmatest.Seed(t)
	// Probes count ALock's handoffs: a critical section entered by a pass within a cohort, and
	// Peterson rounds between the cohorts' leaders.
	var remotePass, localPass, peterson atomic.Int64
	probe := func(ev alock.Event) {
		switch {
		case ev.Kind == alock.EvEnter && ev.Passed && ev.Cohort == alock.Remote:
			remotePass.Add(1)
		case ev.Kind == alock.EvEnter && ev.Passed:
			localPass.Add(1)
		case ev.Kind == alock.EvVictim:
			peterson.Add(1)
		}
	}
	remoteALock = alock.Config{Probe: probe}
	defer func() { remoteALock = alock.Config{} }()
	s, stop := startRDMA(t, 4, func(c *Config) { c.RDMA.ALock.Probe = probe })
	iters := 100
	if testing.Short() {
		iters = 20
	}
	d, errs := threeWay(t, s, iters, 0, stallAfter, seed, nil)
	stop()
	for _, err := range errs {
		t.Error(err)
	}
	t.Logf("critical sections: local %d, udp %d, remote %d; violations %d",
		d.enters[viaLocal].Load(), d.enters[viaUDP].Load(), d.enters[viaRemote].Load(), d.violations.Load())
	rs, _ := s.RDMAStats()
	t.Logf("rdma tier: %+v; cohort handoffs: %d remote->remote, %d local->local (passed), %d Peterson rounds",
		rs, remotePass.Load(), localPass.Load(), peterson.Load())
	if v := d.violations.Load(); v != 0 {
		t.Fatalf("%d mutual-exclusion violations", v)
	}
	if rs.ProxyGrants < uint64(d.enters[viaUDP].Load()) || rs.Peers != 2 || rs.Proxies != 0 {
		t.Errorf("rdma stats %+v: want >= %d proxy grants, 2 peers, no proxy left", rs, d.enters[viaUDP].Load())
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
	seed := rdmatest.Seed(t)
	noALock := new(atomic.Bool)
	noALock.Store(true)
	s, stop := startRDMA(t, 4, func(c *Config) { c.TestingKnobs.UnsafeNoALock = noALock })
	d, errs := threeWay(t, s, 200, 2*time.Millisecond, stallAfter, seed,
		func(d *detector) bool { return d.violations.Load() > 0 })
	stop()
	for _, err := range errs {
		t.Error(err)
	}
	if d.violations.Load() == 0 {
		t.Fatal("no violation without the ALock on the UDP path: the detector sees nothing")
	}
}

// TestRDMAThreeWayStallDetected is the negative control of the stall watch: with the lock held
// throughout by a co-located caller that never unlocks (as a remote client that died holding it
// would hold it), no path makes progress, and the run must end with errStall, not hang or pass.
func TestRDMAThreeWayStallDetected(t *testing.T) {
	seed := rdmatest.Seed(t)
	s, stop := startRDMA(t, 4, nil)
	ll := s.LocalLocks()
	if err := ll.Lock(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	d, errs := threeWay(t, s, 5, 0, 200*time.Millisecond, seed, nil)
	if err := ll.Unlock(1); err != nil {
		t.Fatal(err)
	}
	stop()
	if len(errs) == 0 || !errors.Is(errs[0], errStall) {
		t.Fatalf("errors %v: want the stall first", errs)
	}
	t.Log(errs[0])
	if n := d.enters[viaLocal].Load() + d.enters[viaUDP].Load() + d.enters[viaRemote].Load(); n != 0 {
		t.Fatalf("%d critical sections while the lock was held throughout", n)
	}
}

// TestRDMAGrantWaitsForALock: a UDP grant whose ALock is held elsewhere is not sent, and its
// lease is kept alive meanwhile (the request holds nothing yet); once sent, the lease runs. A
// grant that ends before its ALock is taken (here: an admin reset) is never sent: the proxy
// gives the ALock back and serves the next grant.
func TestRDMAGrantWaitsForALock(t *testing.T) {
	s, _ := startRDMA(t, 4, nil)
	ll := s.LocalLocks()
	bg := context.Background()
	if err := ll.Lock(bg, 0); err != nil {
		t.Fatal(err)
	}
	p := newPeer(t, s.Addr())
	p.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 0, Txn: 1, Timestamp: 5, LeaseMicros: 20000})
	p.expectNothing(100 * time.Millisecond) // five leases: no grant, and no lease-expired either
	// A try acquire is refused while the lock is taken (here by the core: txn 1 holds it there).
	p.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Flags: wire.FlagTry, Lock: 0, Txn: 3, Timestamp: 4})
	if f := p.expect(wire.OpReject, 3); f.Status != wire.StatusWouldBlock || f.Timestamp != 4 {
		t.Fatalf("try acquire: %s, want reject would-block echoing the timestamp", f.String())
	}
	if err := ll.Unlock(0); err != nil {
		t.Fatal(err)
	}
	if g := p.expect(wire.OpGrant, 1); g.Timestamp != 5 {
		t.Fatalf("grant %s does not echo the request", g.String())
	}
	// Nobody renews it now: the 20ms lease runs out and the ALock is given back.
	if f := p.expect(wire.OpReject, 1); f.Status != wire.StatusLeaseExpired {
		t.Fatalf("got %s, want reject lease-expired", f.String())
	}
	if err := ll.Lock(bg, 0); err != nil {
		t.Fatal(err)
	}
	// A try acquire is refused at once while a co-located caller holds the ALock.
	p.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Flags: wire.FlagTry, Lock: 0, Txn: 6})
	if f := p.expect(wire.OpReject, 6); f.Status != wire.StatusWouldBlock {
		t.Fatalf("try acquire: %s, want reject would-block", f.String())
	}
	p.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 0, Txn: 2})
	p.expectNothing(20 * time.Millisecond)
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminResetLock, Lock: 0, Txn: 99})
	p.expect(wire.OpAdmin, 99)
	if err := ll.Unlock(0); err != nil {
		t.Fatal(err)
	}
	p.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 0, Txn: 5})
	g := p.expect(wire.OpGrant, 5) // not txn 2: its grant died in the proxy
	if rs, _ := s.RDMAStats(); rs.ProxyDropped != 1 || rs.TryRefused != 1 {
		t.Fatalf("rdma stats %+v: want 1 dropped grant, 1 try refused by the tier", rs)
	}
	// The UDP holder now excludes co-located callers.
	ctx, cancel := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	if err := ll.Lock(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("local Lock while a UDP client holds the lock: %v, want deadline exceeded", err)
	}
	p.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Flags: wire.FlagRetry, Lock: 0, Txn: 5})
	if g2 := p.expect(wire.OpGrant, 5); g2.Token != g.Token {
		t.Fatalf("repeated grant token %d, want %d", g2.Token, g.Token)
	}
	p.send(wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: 0, Txn: 5, Token: g.Token})
	p.expect(wire.OpRelease, 5)
	if err := ll.Lock(bg, 0); err != nil { // after the abandoned helper's lock and unlock
		t.Fatal(err)
	}
	if err := ll.Unlock(0); err != nil {
		t.Fatal(err)
	}
	if err := ll.Unlock(0); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("second Unlock: %v, want ErrNotHeld", err)
	}
	if err := ll.Lock(bg, 4); !errors.Is(err, ErrNotRDMALock) {
		t.Fatalf("Lock(4) of 4: %v, want ErrNotRDMALock", err)
	}
}

// TestRDMATryGrantWaitsForALock: a UDP try acquire that the core grants while the ALock is free
// may still wait for it, because a co-located caller can take the ALock between the tier's
// would-block check and the proxy's acquisition (BeforeProxyLock makes that happen here). The
// grant is held back meanwhile and the server answers the try's retransmissions with nothing;
// the client must not take that for an unreachable server: the server refuses the liveness
// probes that go with them, so the try keeps waiting (here for twice MaxAttempts
// retransmissions) and is granted once the co-located caller unlocks. Without the probes it
// fails as unreachable after MaxAttempts copies whatever the intervals; with them, only if the
// server left every probe of MaxAttempts copies in a row unanswered (half a second here).
func TestRDMATryGrantWaitsForALock(t *testing.T) {
	const lock, maxAttempts = 2, 10
	reached, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s, _ := startRDMA(t, 4, func(c *Config) {
		c.TestingKnobs.BeforeProxyLock = func(l uint32) {
			if l == lock {
				once.Do(func() {
					close(reached)
					<-proceed
				})
			}
		}
	})
	letProxyGo := sync.OnceFunc(func() { close(proceed) })
	t.Cleanup(letProxyGo) // before the server stops (cleanups run last first)
	c, err := client.New(client.Config{Servers: []string{s.Addr().String()}, Local: "127.0.0.1:0",
		RetryInterval: 10 * time.Millisecond, MaxRetryInterval: 50 * time.Millisecond, MaxAttempts: maxAttempts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	bg := context.Background()
	type result struct {
		g   *client.Grant
		err error
	}
	res := make(chan result, 1)
	go func() {
		g, err := c.TryAcquire(bg, lock, wire.Exclusive)
		res <- result{g, err}
	}()
	select {
	case <-reached: // the core granted the try; its proxy is about to take the ALock
	case r := <-res:
		t.Fatalf("try acquire of a free lock ended before its proxy took the ALock: %v", r.err)
	}
	ll := s.LocalLocks()
	if err := ll.Lock(bg, lock); err != nil {
		t.Fatal(err)
	}
	letProxyGo() // the proxy now waits for the co-located holder, the grant with it
	for c.Stats().Retransmits < 2*maxAttempts {
		select {
		case r := <-res:
			t.Fatalf("try acquire ended while its grant waited for the ALock (%d retransmissions): %v",
				c.Stats().Retransmits, r.err)
		case <-time.After(time.Millisecond):
		}
	}
	if err := ll.Unlock(lock); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		t.Fatalf("try acquire after the co-located caller unlocked: %v", r.err)
	}
	if err := r.g.Release(bg); err != nil {
		t.Fatal(err)
	}
	if rs, _ := s.RDMAStats(); rs.ProxyGrants != 1 || rs.TryRefused != 0 {
		t.Fatalf("rdma stats %+v: want the one grant sent by the proxy, no try refused", rs)
	}
}

// TestRDMAModesAndReset: shared acquires of RDMA locks are served exclusively, other locks
// keep both modes; an admin reset of an RDMA lock, which drops its holders in the core, gives
// the ALock back.
func TestRDMAModesAndReset(t *testing.T) {
	s, _ := startRDMA(t, 4, nil)
	a, b := newPeer(t, s.Addr()), newPeer(t, s.Addr())
	a.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared, Lock: 3, Txn: 1})
	if g := a.expect(wire.OpGrant, 1); g.Mode != wire.Exclusive {
		t.Fatalf("shared acquire of an RDMA lock granted %s, want exclusive", g.String())
	}
	b.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared, Lock: 3, Txn: 2})
	b.expectNothing(30 * time.Millisecond)
	a.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared, Lock: 9, Txn: 3})
	b.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared, Lock: 9, Txn: 4})
	if g := a.expect(wire.OpGrant, 3); g.Mode != wire.Shared {
		t.Fatalf("lock 9 (not RDMA) granted %s, want shared", g.String())
	}
	if g := b.expect(wire.OpGrant, 4); g.Mode != wire.Shared {
		t.Fatalf("lock 9 (not RDMA) granted %s, want shared", g.String())
	}
	// Reset lock 3: the holder (txn 1) is forgotten, the waiter (txn 2) rejected not-owner, and
	// the ALock is free for a co-located caller.
	a.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminResetLock, Lock: 3, Txn: 77})
	if f := b.expect(wire.OpReject, 2); f.Status != wire.StatusNotOwner {
		t.Fatalf("got %s, want reject not-owner", f.String())
	}
	a.expect(wire.OpAdmin, 77)
	ll := s.LocalLocks()
	if err := ll.Lock(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	if err := ll.Unlock(3); err != nil {
		t.Fatal(err)
	}
}

// TestRDMAAdmin checks the join and peer-lookup admin operations, and that a server without an
// RDMA table refuses them.
func TestRDMAAdmin(t *testing.T) {
	s, _ := startRDMA(t, 8, nil)
	p := newPeer(t, s.Addr())
	nic := netip.MustParseAddrPort("127.0.0.1:4242")
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: rdmaproto.AdminJoin, Txn: 1, Client: nic})
	f := p.expect(wire.OpAdmin, 1)
	j := rdmaproto.DecodeJoin(&f)
	srvNIC, _ := s.RDMAAddr()
	if j.Node != 1 || j.Locks != 8 || j.Base != s.rdma.tbl.Base() || j.NIC != srvNIC {
		t.Fatalf("join answer %+v, want node 1, 8 locks, base %v, nic %v", j, s.rdma.tbl.Base(), srvNIC)
	}
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: rdmaproto.AdminJoin, Txn: 2, Client: nic})
	if f := p.expect(wire.OpAdmin, 2); f.Tenant != 1 {
		t.Fatalf("second join of the same NIC got node %d, want 1", f.Tenant)
	}
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: rdmaproto.AdminPeer, Txn: 3, Tenant: 1})
	if f := p.expect(wire.OpAdmin, 3); f.Client != nic {
		t.Fatalf("peer 1 is %v, want %v", f.Client, nic)
	}
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: rdmaproto.AdminPeer, Txn: 4, Tenant: 9})
	if f := p.expect(wire.OpReject, 4); f.Status != wire.StatusBadRequest {
		t.Fatalf("unknown peer: %s, want reject bad-request", f.String())
	}

	plain, stop := startServer(t, trusted(Config{}))
	defer stop()
	if plain.LocalLocks() != nil {
		t.Fatal("LocalLocks of a server without RDMA tier is not nil")
	}
	_, err := rdmaclient.Dial(context.Background(), rdmaclient.Config{Server: plain.Addr().String(),
		RackKey: uint64(testKey)})
	if !errors.Is(err, rdmaclient.ErrRejected) {
		t.Fatalf("join of a server without RDMA table: %v, want ErrRejected", err)
	}
}

// TestRDMAShutdownWithStuckHolder: a remote client holds a lock and never gives it back (ALock
// has no lease). Shutdown must still return without leaking goroutines: the UDP grant waiting
// for the ALock is answered reject shutdown, a blocked co-located Lock returns ErrClosed.
func TestRDMAShutdownWithStuckHolder(t *testing.T) {
	for _, mode := range []string{RDMAModeALock, RDMAModeRW} {
		t.Run(mode, func(t *testing.T) { shutdownWithStuckHolder(t, mode) })
	}
}

func shutdownWithStuckHolder(t *testing.T, mode string) {
	s, stop := startRDMA(t, 4, func(c *Config) { c.RDMA.Mode = mode })
	rc := dialRemote(t, s)
	bg := context.Background()
	if err := rc.Lock(bg, 2); err != nil {
		t.Fatal(err)
	}
	// A UDP client holds lock 3: its proxy holds the lock and waits for the release.
	q := newPeer(t, s.Addr())
	q.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 3, Txn: 8})
	q.expect(wire.OpGrant, 8)
	p := newPeer(t, s.Addr())
	p.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared, Lock: 2, Txn: 7})
	p.expectNothing(30 * time.Millisecond)
	local := make(chan error, 1)
	go func() { local <- s.LocalLocks().Lock(bg, 2) }()
	ctxLocal := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		ctxLocal <- s.LocalLocks().Lock(ctx, 2)
	}()
	stop()
	if f := p.expect(wire.OpReject, 7); f.Status != wire.StatusShutdown {
		t.Fatalf("got %s, want reject shutdown", f.String())
	}
	// The holder keeps its grant (and lease), as any holder, and is told it will not be renewed.
	if f := q.expect(wire.OpReject, 8); f.Status != wire.StatusShutdown || f.Token == 0 {
		t.Fatalf("holder got %s, want reject shutdown with its token", f.String())
	}
	if rs, _ := s.RDMAStats(); rs.Proxies != 0 {
		t.Fatalf("%d proxies still running after Run returned", rs.Proxies)
	}
	for _, c := range []chan error{local, ctxLocal} {
		if err := <-c; !errors.Is(err, ErrClosed) {
			t.Fatalf("blocked local Lock: %v, want ErrClosed", err)
		}
	}
	if err := rc.Unlock(2); err == nil {
		t.Fatal("remote Unlock after the server closed succeeded")
	}
	if err := rc.Lock(bg, 1); err == nil {
		t.Fatal("remote Lock after the server closed succeeded")
	}
}
