package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/internal/faultnet"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

var seedFlag = flag.Uint64("e2e.seed", 0, "seed of the fault injection and the workload (0: from the clock)")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// observed is a net.PacketConn that shows every datagram the server reads to an AcceptLog, so
// the history checker learns the order in which the server accepted acquires.
type observed struct {
	net.PacketConn
	log   *history.AcceptLog
	name  string
	trace *trace
}

func (o observed) ReadFrom(p []byte) (int, net.Addr, error) {
	n, a, err := o.PacketConn.ReadFrom(p)
	if err == nil {
		o.log.Observe(p[:n])
		o.trace.add(o.name, "read", p[:n])
	}
	return n, a, err
}

func (o observed) WriteTo(p []byte, a net.Addr) (int, error) {
	o.log.ObserveSent(p)
	o.trace.add(o.name, "write", p)
	return o.PacketConn.WriteTo(p, a)
}

// tracer records the datagrams a client sends and receives (after faults), for failure reports.
type tracer struct {
	net.PacketConn
	name string
	t    *trace
}

type trace struct {
	mu   sync.Mutex
	recs []traceRec
}

type traceRec struct {
	at  time.Time
	who string
	dir string
	f   wire.Fields
}

func (t *trace) add(who, dir string, b []byte) {
	h, err := wire.Parse(b)
	if err != nil {
		return
	}
	r := traceRec{at: time.Now(), who: who, dir: dir}
	h.Decode(&r.f)
	t.mu.Lock()
	t.recs = append(t.recs, r)
	t.mu.Unlock()
}

// dump returns the trace of one (lock, txn).
func (t *trace) dump(lock uint32, txn uint64) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, r := range t.recs {
		if r.f.Lock == lock && r.f.Txn == txn {
			fmt.Fprintf(&b, "  %s %s %s %v\n", r.at.Format("05.000000"), r.who, r.dir, &r.f)
		}
	}
	return b.String()
}

func (c tracer) WriteTo(p []byte, a net.Addr) (int, error) {
	c.t.add(c.name, "send", p)
	return c.PacketConn.WriteTo(p, a)
}

func (c tracer) ReadFrom(p []byte) (int, net.Addr, error) {
	n, a, err := c.PacketConn.ReadFrom(p)
	if err == nil {
		c.t.add(c.name, "recv", p[:n])
	}
	return n, a, err
}

// rig is a set of lock servers on loopback behind faultnet.
type rig struct {
	addrs  []string
	logs   []*history.AcceptLog
	conns  []*faultnet.Conn
	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errs   chan error
	trace  *trace // the servers' side of the traffic, after faults
}

func startRig(t *testing.T, n int, seed uint64, faults faultnet.Faults, core lockcore.Config) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &rig{cancel: cancel, errs: make(chan error, n), trace: &trace{}}
	for i := range n {
		log := &history.AcceptLog{}
		cfg := lockserver.Config{
			Listen: "127.0.0.1:0",
			Shards: 2,
			// One socket, so that one reader sees every request of a lock in processing order.
			Sockets: 1,
			Core:    core,
			WrapConn: func(c net.PacketConn) net.PacketConn {
				fc := faultnet.Wrap(c, faultnet.Config{Seed: seed + uint64(i)*1000, Send: faults, Recv: faults})
				r.mu.Lock()
				r.conns = append(r.conns, fc)
				r.mu.Unlock()
				return observed{fc, log, fmt.Sprintf("srv%d", i), r.trace}
			},
		}
		srv, err := lockserver.New(cfg)
		if err != nil {
			cancel()
			r.wait(t)
			t.Fatal(err)
		}
		r.addrs = append(r.addrs, srv.Addr().String())
		r.logs = append(r.logs, log)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if err := srv.Run(ctx); err != nil {
				r.errs <- err
			}
		}()
	}
	return r
}

func (r *rig) wait(t *testing.T) {
	r.cancel()
	r.wg.Wait()
	close(r.errs)
	for err := range r.errs {
		t.Errorf("server: %v", err)
	}
}

func (r *rig) acceptOrder() map[uint32][]uint64 {
	out := make(map[uint32][]uint64)
	for _, l := range r.logs {
		for lock, txns := range l.Order() {
			out[lock] = append(out[lock], txns...)
		}
	}
	return out
}

func (r *rig) stats() faultnet.Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s faultnet.Stats
	for _, c := range r.conns {
		s = s.Add(c.Stats())
	}
	return s
}

// worker records one client's operations into the history.
type worker struct {
	name      string
	c         *client.Client
	rec       *history.Recorder
	trace     *trace
	notHolder *atomic.Int64 // releases refused with not-holder, see releaseErr
	leaseLost *atomic.Int64 // acquires failed with a lost lease, see acquireErr
	priority  uint8
	// allowShutdown accepts acquires refused because their server shut down.
	allowShutdown bool
	// base is the first lock id the worker takes: its locks are base .. base+locks-1.
	base uint32
	// releaseTimeouts, if set, counts releases that got no answer, and accepts them (see
	// releaseErr); if nil, such a release is an error.
	releaseTimeouts *atomic.Int64
}

// endOf returns when a holder's protection ends if it stops now: now, or the lease deadline if
// that passed already (the lease lapsed while the holder was not looking).
func endOf(g *client.Grant) time.Time {
	now := time.Now()
	if dl := g.Deadline(); !dl.IsZero() && dl.Before(now) {
		return dl
	}
	return now
}

// releaseErr filters the errors of a release that this test accepts. ErrLeaseLost: the history
// holds the lease deadline as the end of the holder's interval. ErrNotHolder on the first copy of a
// release: the network duplicated the release and lost the answer to the first copy, so the
// server's refusal of the duplicate is all the client sees (the server does not answer a repeated
// release idempotently); the history checker, not this error, decides whether exclusion held.
func (w *worker) releaseErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, client.ErrLeaseLost):
		return nil
	case errors.Is(err, client.ErrNotHolder):
		w.notHolder.Add(1)
		return nil
	case errors.Is(err, client.ErrTimeout) && w.releaseTimeouts != nil:
		// The history ends the holder's interval before the release was sent, so exclusion is
		// still checked; the server frees the lock at the end of its lease.
		w.releaseTimeouts.Add(1)
		return nil
	}
	return err
}

// outageAttempts is the clients' Config.MaxAttempts in these tests. Their servers stop, fail over
// and restart on purpose, and an acquire must wait that out (the checker reports an abandoned
// acquire as lost) instead of failing as unreachable after the default 16 silent copies, 0.7 s at
// the tests' 50 ms retransmission interval: a failover on a loaded machine took longer (TestSoak,
// 249 acquires lost). 1000 copies is 50 s or more at 50-200 ms: longer than any outage here, and
// bounded still (client's own tests cover the bound).
const outageAttempts = 1000

// acquireErr filters the errors of an acquire that this test accepts: a lease lost before the
// acquire returned (the lock waited in the queue, or an earlier lock of a transaction lapsed while
// a later one was awaited; this happens when renewals are lost). Anything else, a timeout above
// all, means a request was lost.
func (w *worker) acquireErr(err error) error {
	switch {
	case errors.Is(err, client.ErrLeaseLost):
		w.leaseLost.Add(1)
		return nil
	case w.allowShutdown && errors.Is(err, client.ErrShutdown):
		return nil
	}
	return err
}

func (w *worker) sent(lock uint32, txn uint64, mode wire.Mode) {
	w.rec.Record(history.Event{Kind: history.AcquireSent, Lock: lock, Txn: txn, Mode: mode, Priority: w.priority,
		Client: w.name})
}

func (w *worker) granted(g *client.Grant) {
	w.rec.Record(history.Event{Kind: history.Granted, Lock: g.Lock(), Txn: g.Txn(), Mode: g.Mode(), Token: g.Token(),
		Client: w.name})
}

func (w *worker) released(g *client.Grant) {
	w.rec.Record(history.Event{Kind: history.Released, Lock: g.Lock(), Txn: g.Txn(), At: endOf(g), Client: w.name})
}

func (w *worker) failed(lock uint32, txn uint64, err error) {
	k := history.Rejected
	switch {
	case errors.Is(err, client.ErrLeaseLost):
		// Granted, but the lease ran out before the client could use it: a definite outcome.
	case errors.Is(err, client.ErrTimeout) || errors.Is(err, client.ErrClosed):
		k = history.Abandoned
	}
	w.rec.Record(history.Event{Kind: k, Lock: lock, Txn: txn, Client: w.name})
}

// single takes one lock of base .. base+locks-1, holds it briefly and releases it.
func (w *worker) single(ctx context.Context, rng *rand.Rand, locks int) error {
	lock := w.base + uint32(rng.IntN(locks))
	mode := wire.Mode(rng.IntN(2))
	// The txn id is known only once the grant exists, so acquire through a one-lock Txn, whose
	// id is known up front.
	txn := w.c.Begin(client.WithPriority(w.priority))
	txn.Lock(lock, mode)
	w.sent(lock, txn.ID(), mode)
	started := time.Now()
	if err := txn.Acquire(ctx); err != nil {
		if diagLostHook != nil && errors.Is(err, client.ErrTimeout) {
			diagLostHook(lock, txn.ID(), started)
		}
		w.failed(lock, txn.ID(), err)
		return w.acquireErr(err)
	}
	g := txn.Grants()[0]
	w.granted(g)
	time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
	w.released(g)
	if err := w.releaseErr(txn.Release(ctx)); err != nil {
		return fmt.Errorf("release lock %d: %w\n%s", lock, err, w.trace.dump(lock, txn.ID()))
	}
	return nil
}

// multi takes two or three locks as one 2PL transaction.
func (w *worker) multi(ctx context.Context, rng *rand.Rand, locks int) error {
	txn := w.c.Begin(client.WithPriority(w.priority))
	want := map[uint32]wire.Mode{}
	for range 2 + rng.IntN(2) {
		l, m := w.base+uint32(rng.IntN(locks)), wire.Mode(rng.IntN(2))
		txn.Lock(l, m)
		if m == wire.Exclusive || want[l] == wire.Shared {
			want[l] = max(want[l], m)
		}
	}
	for l, m := range want {
		w.sent(l, txn.ID(), m)
	}
	started := time.Now()
	if err := txn.Acquire(ctx); err != nil {
		for l := range want {
			if diagLostHook != nil && errors.Is(err, client.ErrTimeout) {
				diagLostHook(l, txn.ID(), started)
			}
			w.failed(l, txn.ID(), err)
		}
		return w.acquireErr(err)
	}
	gs := txn.Grants()
	for _, g := range gs {
		w.granted(g)
	}
	time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
	for _, g := range gs {
		w.released(g)
	}
	if err := w.releaseErr(txn.Release(ctx)); err != nil {
		var traces string
		for l := range want {
			traces += w.trace.dump(l, txn.ID())
		}
		return fmt.Errorf("release txn: %w\n%s", err, traces)
	}
	return nil
}

// crash takes one exclusive lock and closes its client without releasing it: the lock is freed
// when its lease runs out on the server.
func (w *worker) crash(ctx context.Context, rng *rand.Rand, locks int) error {
	lock := w.base + uint32(rng.IntN(locks))
	txn := w.c.Begin()
	txn.Lock(lock, wire.Exclusive)
	w.sent(lock, txn.ID(), wire.Exclusive)
	if err := txn.Acquire(ctx); err != nil {
		w.failed(lock, txn.ID(), err)
		if err := w.acquireErr(err); err != nil {
			return err
		}
		return w.c.Close()
	}
	g := txn.Grants()[0]
	w.rec.Record(history.Event{Kind: history.Granted, Lock: lock, Txn: txn.ID(), Mode: wire.Exclusive, Token: g.Token(),
		Deadline: g.Deadline(), Client: w.name})
	// The crashed holder is protected until its deadline at most.
	w.rec.Record(history.Event{Kind: history.Lost, Lock: lock, Txn: txn.ID(), At: g.Deadline(), Client: w.name})
	return w.c.Close()
}

// TestEndToEnd runs clients against two lock servers over loopback UDP with loss, duplication,
// reordering and delay injected on every socket in both directions, plus clients that crash while
// holding a lock. Every acquire must end in a grant (nothing lost: no request may time out), and
// the recorded history must show no two conflicting holders at once, fencing tokens in order and
// FIFO grants per priority level (against the acceptance order logged on the servers' sockets).
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -e2e.seed=%d)", seed, seed)
	t.Run("mild", func(t *testing.T) {
		runEndToEnd(t, seed, faultnet.Faults{Loss: 0.05, Dup: 0.05, Reorder: 0.05, HoldMax: 2 * time.Millisecond,
			DelayProb: 0.05, Delay: 3 * time.Millisecond}, 1)
	})
	t.Run("harsh", func(t *testing.T) {
		runEndToEnd(t, seed+1, faultnet.Faults{Loss: 0.2, Dup: 0.1, Reorder: 0.1, HoldMax: 3 * time.Millisecond,
			DelayProb: 0.1, Delay: 5 * time.Millisecond}, 2)
	})
}

func runEndToEnd(t *testing.T, seed uint64, faults faultnet.Faults, priorities int) {
	r := startRig(t, 2, seed, faults, lockcore.Config{DefaultLease: 10 * time.Second})
	defer r.wait(t)

	const (
		locks      = 6
		clients    = 4
		perClient  = 2 // goroutines per client
		opsPerGor  = 25
		crashers   = 3
		crashLease = 100 * time.Millisecond
	)
	rec := &history.Recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	faulty := faultnet.Hook(faultnet.Config{Seed: seed + 7, Send: faults, Recv: faults})
	tr := &trace{}
	var notHolder, leaseLost atomic.Int64
	var nconn atomic.Int32
	hook := func(c net.PacketConn) net.PacketConn {
		return tracer{faulty(c), fmt.Sprintf("conn%d", nconn.Add(1)), tr}
	}
	var cstats []func() client.Stats
	var wg sync.WaitGroup
	errc := make(chan error, clients*perClient+crashers)
	for ci := range clients {
		c, err := client.New(client.Config{
			Servers: r.addrs, Local: "127.0.0.1:0", Lease: 200 * time.Millisecond, KeepAlive: true,
			RetryInterval: 5 * time.Millisecond, MaxRetryInterval: 50 * time.Millisecond, MaxAttempts: outageAttempts, WrapConn: hook,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cstats = append(cstats, c.Stats)
		for gi := range perClient {
			w := &worker{name: fmt.Sprintf("c%d/%d", ci, gi), c: c, rec: rec, trace: tr, notHolder: &notHolder,
				leaseLost: &leaseLost, priority: uint8((ci + gi) % priorities)}
			rng := rand.New(rand.NewPCG(seed, uint64(ci*100+gi)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range opsPerGor {
					var err error
					if rng.IntN(3) == 0 {
						err = w.multi(ctx, rng, locks)
					} else {
						err = w.single(ctx, rng, locks)
					}
					if err != nil {
						errc <- fmt.Errorf("%s: %w", w.name, err)
						return
					}
				}
			}()
		}
	}
	for ci := range crashers {
		c, err := client.New(client.Config{
			Servers: r.addrs, Local: "127.0.0.1:0", Lease: crashLease,
			RetryInterval: 5 * time.Millisecond, MaxRetryInterval: 50 * time.Millisecond, MaxAttempts: outageAttempts, WrapConn: hook,
		})
		if err != nil {
			t.Fatal(err)
		}
		w := &worker{name: fmt.Sprintf("crash%d", ci), c: c, rec: rec, trace: tr, notHolder: &notHolder,
			leaseLost: &leaseLost}
		rng := rand.New(rand.NewPCG(seed, uint64(1000+ci)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
			if err := w.crash(ctx, rng, locks); err != nil {
				errc <- fmt.Errorf("%s: %w", w.name, err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}

	events := rec.Events()
	vs := history.Check(events, history.Options{AcceptOrder: r.acceptOrder(), RequireOutcome: true})
	for i, v := range vs {
		t.Error(v)
		if i < 3 {
			for _, txn := range v.Txns {
				t.Logf("client side of lock %d txn %#x:\n%s", v.Lock, txn, tr.dump(v.Lock, txn))
				t.Logf("server side of lock %d txn %#x:\n%s", v.Lock, txn, r.trace.dump(v.Lock, txn))
			}
		}
	}
	var grants int
	for _, e := range events {
		if e.Kind == history.Granted {
			grants++
		}
	}
	var cs client.Stats
	for _, f := range cstats {
		s := f()
		cs.Sent += s.Sent
		cs.Retransmits += s.Retransmits
		cs.StrayGrants += s.StrayGrants
		cs.DupGrants += s.DupGrants
		cs.LeaseLost += s.LeaseLost
		cs.Renewals += s.Renewals
	}
	fs := r.stats()
	t.Logf("%d events, %d grants checked; client: sent %d, retransmits %d, stray grants %d, dup grants %d, "+
		"leases lost %d, renewals %d, releases refused not-holder %d, acquires ended by a lost lease %d; "+
		"server faults: %+v", len(events), grants, cs.Sent, cs.Retransmits, cs.StrayGrants, cs.DupGrants,
		cs.LeaseLost, cs.Renewals, notHolder.Load(), leaseLost.Load(), fs)
	if want := clients*perClient*opsPerGor + crashers - int(leaseLost.Load()); grants < want {
		t.Errorf("%d grants, want at least %d", grants, want)
	}
	if fs.RecvLost == 0 || fs.SendDup == 0 {
		t.Errorf("faults not injected: %+v", fs)
	}
}

// TestSplitBrainDetected is the negative control of TestEndToEnd: two clients that disagree on
// which server owns a lock both get it, and the history checker must say so.
func TestSplitBrainDetected(t *testing.T) {
	r := startRig(t, 2, 1, faultnet.Faults{}, lockcore.Config{})
	defer r.wait(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rec := &history.Recorder{}
	var ws []*worker
	var notHolder atomic.Int64
	for i := range 2 {
		c, err := client.New(client.Config{Route: func(uint32) string { return r.addrs[i] }, Local: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ws = append(ws, &worker{name: fmt.Sprintf("c%d", i), c: c, rec: rec, trace: &trace{}, notHolder: &notHolder})
	}
	var gs []*client.Grant
	for _, w := range ws {
		txn := w.c.Begin()
		txn.Lock(1, wire.Exclusive)
		w.sent(1, txn.ID(), wire.Exclusive)
		if err := txn.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		g := txn.Grants()[0]
		w.granted(g)
		gs = append(gs, g)
	}
	for i, g := range gs {
		ws[i].released(g)
		if err := g.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	vs := history.Check(rec.Events(), history.Options{RequireOutcome: true})
	if len(vs) == 0 || vs[0].Rule != "exclusion" {
		t.Fatalf("violations %v, want exclusion", vs)
	}
	t.Logf("caught: %v", vs[0])
}
