package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// Option modifies one request.
type Option func(*reqOptions)

type reqOptions struct {
	tenant     uint16
	priority   uint8
	lease      time.Duration
	contention uint16
}

// WithTenant overrides [Config.Tenant] for one request.
func WithTenant(t uint16) Option { return func(o *reqOptions) { o.tenant = t } }

// WithPriority overrides [Config.Priority] for one request (0 is the highest).
func WithPriority(p uint8) Option { return func(o *reqOptions) { o.priority = p } }

// WithLease overrides [Config.Lease] for one request; it is clamped to the protocol's range.
func WithLease(d time.Duration) Option { return func(o *reqOptions) { o.lease = d } }

// WithContention declares that up to n requests for the lock may be outstanding at once (the
// contention c_i of NetLock's allocator): the acquire carries n in its slots field, the lock
// server reports the largest declaration per lock to the control plane (wire.AdminStats), which
// gives a switch lock at least that many queue slots when it can (docs/controlplane.md,
// "Statistics"). 0 declares nothing.
func WithContention(n uint16) Option { return func(o *reqOptions) { o.contention = n } }

func (c *Client) options(opts []Option) reqOptions {
	o := reqOptions{tenant: c.cfg.Tenant, priority: c.cfg.Priority, lease: c.cfg.Lease}
	if len(opts) == 0 {
		return o // no options: o does not escape
	}
	return applyOptions(o, opts)
}

func applyOptions(o reqOptions, opts []Option) reqOptions {
	for _, f := range opts {
		f(&o)
	}
	return o
}

func leaseMicros(d time.Duration) uint32 {
	us := d / time.Microsecond
	switch {
	case us <= 0:
		return 0
	case us > 1<<32-1:
		return 1<<32 - 1
	}
	return uint32(us)
}

// Grant is a held lock. Its methods are safe for concurrent use.
//
// A Grant is also the client's record of its request while the acquire waits (the only object an
// acquire+release allocates): the reader goroutine finds it by (lock, txn) in the client's
// entries, and the lease keeper by its place in the keeper's deadline heap.
type Grant struct {
	c    *Client
	key  key
	opts reqOptions

	// Set when granted, before the Grant is returned; read-only afterwards.
	mode   wire.Mode
	token  uint64
	server netip.AddrPort // the address that granted it

	// Request state, guarded by c.mu.
	waiters [numKinds]*waiter // nil when nobody waits
	// ts holds the timestamp of each waiter's request (0: any). Servers echo the timestamp in
	// rejects, which tells a reject of a renewal from one of a release.
	ts [numKinds]uint64
	// peer is the address the requests of this (lock, txn) were last sent to: answers are
	// accepted from it (or from a switch) only.
	peer    netip.AddrPort
	held    bool   // granted and not yet released
	probing bool   // the lease keeper's renewal is in flight
	probeTS uint64 // its timestamp
	// The timestamps of the first and the last liveness probe of a waiting acquire (exchange):
	// every request of the (lock, txn) in between is a probe, timestamps being unique.
	aliveFirst, aliveLast uint64

	// heard counts the datagrams accepted from the server (or a switch) about this (lock, txn):
	// exchange tells an unreachable server from one that is silent because the request waits.
	heard atomic.Uint32

	// Lease keeper state, guarded by c.keep.mu.
	kidx  int           // index in the keeper's heap, -1 when not in it
	kdue  int64         // when the keeper must look at the grant next (ns, client clock)
	krto  time.Duration // the keeper's current retransmission interval of a renewal
	kprob bool          // the keeper sent a renewal that is not answered yet

	mu       sync.Mutex
	deadline int64 // guarded by mu; the lease's end on the client's monotonic clock (ns); 0: no lease
	lease    time.Duration
	lostErr  error         // guarded by mu; why the lease was lost
	lostCh   chan struct{} // guarded by mu; made on the first Lost call, closed when lost
	onLost   []func()      // guarded by mu
	stopCh   chan struct{} // guarded by mu; made by Renew, closed when Release starts
	released bool          // guarded by mu

	relMu   sync.Mutex
	relDone bool  // guarded by relMu
	relErr  error // guarded by relMu
}

// closedCh is returned by Lost for a lease lost before anyone asked.
var closedCh = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// Lock returns the lock id.
func (g *Grant) Lock() uint32 { return g.key.lock }

// Mode returns the mode the lock is held in.
func (g *Grant) Mode() wire.Mode { return g.mode }

// Txn returns the transaction id the lock is held by.
func (g *Grant) Txn() uint64 { return g.key.txn }

// Token returns the fencing token of the grant: larger than every token granted before it for the
// same lock (by the same server, or by a server that took the lock over later).
func (g *Grant) Token() uint64 { return g.token }

// Deadline returns the conservative end of the lease, as a wall-clock estimate for people: the
// lease itself runs on the client's monotonic clock from when the client sent the acquire (or
// the last successful renewal), shortened by the drift margin (wire.HolderLease), and the server
// does not free the lock before it (docs/protocol.md, "Leases and clocks"). A step of the wall
// clock moves this estimate, not the lease. The zero time means the grant carried no lease.
func (g *Grant) Deadline() time.Time {
	if r, ok := g.Remaining(); ok {
		return g.c.cfg.Clock.Wall().Add(r)
	}
	return time.Time{}
}

// Remaining returns how much of the lease is left on the client's monotonic clock (negative once
// it has passed), and false if the grant carried no lease.
func (g *Grant) Remaining() (time.Duration, bool) {
	g.mu.Lock()
	dl := g.deadline
	g.mu.Unlock()
	if dl == 0 {
		return 0, false
	}
	return time.Duration(dl - g.c.cfg.Clock.Mono()), true
}

// leaseEnd is the end of a lease granted for a request sent at ts (client monotonic ns).
func leaseEnd(ts int64, lease time.Duration) int64 { return ts + int64(wire.HolderLease(lease)) }

// Lost returns a channel that is closed when the lease is lost: the server reported that it
// expired, a renewal was refused, or Deadline passed without a renewal. It is not closed by
// Release.
func (g *Grant) Lost() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lostCh == nil {
		if g.lostErr != nil {
			return closedCh
		}
		g.lostCh = make(chan struct{})
	}
	return g.lostCh
}

// LostErr returns why the lease was lost, or nil.
func (g *Grant) LostErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lostErr
}

// whenLost arranges for f to run once the lease is lost (at once if it is lost already).
func (g *Grant) whenLost(f func()) {
	g.mu.Lock()
	if g.lostErr == nil {
		g.onLost = append(g.onLost, f)
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	f()
}

// markLostLocked records that the lease is lost and returns the callbacks to run after the
// caller drops c.mu (nil if it was lost already). Precondition: g.c.mu is held.
func (g *Grant) markLostLocked(cause error) func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lostErr != nil {
		return nil
	}
	g.lostErr = cause
	if g.lostCh != nil {
		close(g.lostCh)
	}
	g.probing = false
	g.c.keep.remove(g)
	g.c.stats.leaseLost.Add(1)
	g.c.log.Debug("netlock client: lease lost", "lock", g.key.lock, "txn", g.key.txn, "cause", cause)
	fns := g.onLost
	g.onLost = nil
	if len(fns) == 0 {
		return nil
	}
	return func() {
		for _, f := range fns {
			f()
		}
	}
}

func (g *Grant) markLost(cause error) {
	g.c.mu.Lock()
	fn := g.markLostLocked(cause)
	g.c.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// renewedLocked applies the answer f to the lease keeper's renewal. Precondition: c.mu is held.
func (g *Grant) renewedLocked(f *wire.Fields) {
	g.probing = false
	g.mu.Lock()
	if f.LeaseMicros != 0 {
		g.lease = time.Duration(f.LeaseMicros) * time.Microsecond
	}
	g.deadline = leaseEnd(int64(f.Timestamp), g.lease)
	next := g.nextEventLocked()
	g.mu.Unlock()
	g.c.stats.renewals.Add(1)
	g.c.keep.schedule(g, next, true)
}

// nextEventLocked is when the lease keeper must look at g next: the deadline, or with KeepAlive
// when a third of the lease has passed since the deadline's start. Precondition: g.mu is held.
func (g *Grant) nextEventLocked() int64 {
	if g.c.cfg.KeepAlive {
		return g.deadline - int64(2*g.lease/3)
	}
	return g.deadline
}

// stop returns the channel that Release closes (made on first use).
func (g *Grant) stop() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopCh == nil {
		g.stopCh = make(chan struct{})
		if g.released {
			close(g.stopCh)
		}
	}
	return g.stopCh
}

// Acquire takes lock in mode for a new transaction and waits until it is granted, the server
// refuses it (a [*RejectError]), the server sends nothing back to [Config.MaxAttempts] copies in a
// row (an [*UnreachableError]), ctx ends ([ErrTimeout] wrapping the context's error, with the
// server and the attempts) or the client is closed ([ErrClosed]). Lost requests and answers are
// retransmitted. When the wait ends while the request may be queued, the request is withdrawn
// from the server's queue in the background.
func (c *Client) Acquire(ctx context.Context, lock uint32, mode wire.Mode, opts ...Option) (*Grant, error) {
	return c.acquire(ctx, lock, mode, c.newTxnID(), 0, c.options(opts))
}

// TryAcquire is Acquire that never waits in the server's queue: the lock is granted at once or
// the call fails with an error matching [ErrWouldBlock].
func (c *Client) TryAcquire(ctx context.Context, lock uint32, mode wire.Mode, opts ...Option) (*Grant, error) {
	return c.acquire(ctx, lock, mode, c.newTxnID(), wire.FlagTry, c.options(opts))
}

func (c *Client) acquire(ctx context.Context, lock uint32, mode wire.Mode, txn uint64, flags wire.Flags,
	o reqOptions) (*Grant, error) {
	if !mode.Valid() {
		return nil, fmt.Errorf("client: invalid mode %d", mode)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w: acquire of lock %d: %w", ErrTimeout, lock, context.Cause(ctx))
	}
	if wire.IsReservedLock(lock) {
		return nil, fmt.Errorf("client: lock %d: %w", lock, ErrReservedLock)
	}
	if _, err := c.serverFor(lock); err != nil {
		return nil, err
	}
	g := &Grant{c: c, key: key{lock, txn}, opts: o, mode: mode, kidx: -1}
	ts := c.timestamp()
	w := c.getWaiter()
	if err := c.register(g, kindAcquire, ts, w); err != nil {
		c.putWaiter(w)
		return nil, err
	}
	req := wire.Fields{Op: wire.OpAcquire, Mode: mode, Flags: flags, Priority: o.priority, Tenant: o.tenant,
		Lock: lock, Txn: txn, Timestamp: uint64(ts), LeaseMicros: leaseMicros(o.lease), Slots: o.contention}
	var rejected wire.Status
	granted := false
	err := c.exchange(ctx, g, w, &req, nil, 0, func(m *wire.Fields, _ int) bool {
		switch m.Op {
		case wire.OpGrant:
			if m.Timestamp != 0 && m.Timestamp < uint64(ts) {
				return false // a stale grant of an earlier request of this txn
			}
			c.holdGrant(g, m, ts)
			granted = true
			return true
		case wire.OpReject:
			// A reject with a token is about a grant. The one this acquire takes is the notice
			// that its own grant's lease ran out before the client saw the grant (the grant was
			// lost; the switch's lease sweep force-released it and echoes the acquire's
			// timestamp): the switch ignores the acquire's retransmissions from then on, so the
			// notice is its last answer. Others (an earlier request of the txn) are ignored.
			if m.Token != 0 && (m.Status != wire.StatusLeaseExpired || m.Timestamp != uint64(ts)) {
				return false
			}
			if m.Status == wire.StatusNotHolder {
				// Never an answer to an acquire: the refusal of a liveness probe from a server
				// that does not echo timestamps.
				return false
			}
			rejected = m.Status
			return true
		}
		return false
	})
	switch {
	case errors.Is(err, ErrTimeout):
		acq := req // only this path hands the request to a goroutine
		if !c.goTracked(func() { c.withdraw(g, acq, w) }) {
			c.unregister(g, kindAcquire, w)
		}
		return nil, err
	case err != nil:
		c.unregister(g, kindAcquire, w)
		return nil, err
	case !granted:
		c.unregister(g, kindAcquire, w)
		return nil, &RejectError{Op: wire.OpAcquire, Lock: lock, Txn: txn, Status: rejected}
	}
	c.putWaiter(w) // holdGrant unregistered it
	c.stats.grants.Add(1)
	if err := g.startLease(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// holdGrant turns g from waiting into held.
func (c *Client) holdGrant(g *Grant, m *wire.Fields, ts int64) {
	g.mode, g.token = m.Mode, m.Token
	if m.LeaseMicros != 0 {
		g.lease = time.Duration(m.LeaseMicros) * time.Microsecond
		g.deadline = leaseEnd(ts, g.lease)
	}
	c.mu.Lock()
	g.server = g.peer
	g.held = true
	g.waiters[kindAcquire] = nil
	c.mu.Unlock()
}

// startLease renews a grant that arrives with less than a third of its lease left (it waited in
// the queue: the server started the lease when it granted, the client counts from its request)
// and hands the grant to the client's lease keeper, which closes Lost when the deadline passes
// and, with KeepAlive, renews the lease every third of it.
func (g *Grant) startLease(ctx context.Context) error {
	if g.lease == 0 {
		return nil
	}
	c := g.c
	if r, _ := g.Remaining(); r < g.lease/3 {
		// The server's lease runs from its grant, so it may well be valid still: ask.
		if err := g.renew(ctx, c.cfg.Clock.Mono()+int64(c.cfg.RequestTimeout)); err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.RequestTimeout)
			defer cancel()
			_ = g.Release(rctx)
			if errors.Is(err, ErrTimeout) && ctx.Err() != nil {
				return err // the caller gave up
			}
			return fmt.Errorf("client: lock %d: %w: renewal after a long wait failed: %w", g.key.lock, ErrLeaseLost, err)
		}
	}
	g.mu.Lock()
	next := g.nextEventLocked()
	g.mu.Unlock()
	c.keep.schedule(g, next, false)
	return nil
}

var errStopped = errors.New("client: grant released")

// Renew extends the lease now with a lease-probe (KeepAlive does this by itself) and waits for the
// answer until ctx ends or [Config.RequestTimeout] passes. A refusal loses the lease: Lost is
// closed and the error matches [ErrLeaseLost]. Renew after Release fails.
func (g *Grant) Renew(ctx context.Context) error {
	if g.lease == 0 {
		return nil
	}
	if err := g.LostErr(); err != nil {
		return err
	}
	err := g.renew(ctx, g.c.cfg.Clock.Mono()+int64(g.c.cfg.RequestTimeout))
	if err == nil {
		g.mu.Lock()
		next := g.nextEventLocked()
		g.mu.Unlock()
		g.c.keep.schedule(g, next, true)
	}
	var re *RejectError
	if errors.As(err, &re) {
		err = fmt.Errorf("%w: renewal refused: %w", ErrLeaseLost, err)
		g.markLost(err)
	}
	if errors.Is(err, errStopped) {
		err = fmt.Errorf("client: renew lock %d: released", g.key.lock)
	}
	return err
}

// renew sends a lease-probe and waits for the answer until ctx ends or the monotonic clock passes
// giveUp.
func (g *Grant) renew(ctx context.Context, giveUp int64) error {
	c := g.c
	ts := c.timestamp()
	w := c.getWaiter()
	if err := c.register(g, kindProbe, ts, w); err != nil {
		c.putWaiter(w)
		return err
	}
	defer c.unregister(g, kindProbe, w)
	req := wire.Fields{Op: wire.OpLeaseProbe, Mode: g.mode, Priority: g.opts.priority, Tenant: g.opts.tenant,
		Lock: g.key.lock, Txn: g.key.txn, Token: g.token, Timestamp: uint64(ts), LeaseMicros: leaseMicros(g.opts.lease)}
	var rej error
	err := c.exchange(ctx, g, w, &req, g.stop(), giveUp,
		func(m *wire.Fields, _ int) bool {
			if m.Token != g.token {
				return false
			}
			switch m.Op {
			case wire.OpLeaseProbe:
				if m.Timestamp != 0 && m.Timestamp != uint64(ts) {
					return false // the answer to an earlier renewal
				}
				g.mu.Lock()
				if m.LeaseMicros != 0 {
					g.lease = time.Duration(m.LeaseMicros) * time.Microsecond
				}
				g.deadline = leaseEnd(ts, g.lease)
				g.mu.Unlock()
				c.stats.renewals.Add(1)
				return true
			case wire.OpReject:
				rej = &RejectError{Op: wire.OpLeaseProbe, Lock: g.key.lock, Txn: g.key.txn, Status: m.Status}
				return true
			}
			return false
		})
	if err != nil {
		return err
	}
	return rej
}

// Release gives the lock back and waits for the server's acknowledgement, retransmitting the
// release until it comes, ctx ends or [Config.RequestTimeout] passes. A refusal with not-holder
// of a retransmitted release counts as success (the first copy was applied); of the first one it
// is an error matching [ErrNotHolder]. If the lease was lost before the release, the error
// matches [ErrLeaseLost]. Only the first call does anything; later calls return its result.
//
// A network that duplicates datagrams can make the first release look refused: the server
// applies the first copy and refuses the duplicate, and if the answer to the first copy is lost,
// only the refusal arrives. Release waits one retransmission interval for a late answer before it
// reports ErrNotHolder; a caller that sees ErrNotHolder knows the lock is not held by it any
// more, but not whether it was held until the release.
//
// Release does not close Lost, and Lost is no longer watched once Release has started.
func (g *Grant) Release(ctx context.Context) error {
	g.relMu.Lock()
	defer g.relMu.Unlock()
	if !g.relDone {
		g.relErr, g.relDone = g.release(ctx), true
	}
	return g.relErr
}

func (g *Grant) release(ctx context.Context) error {
	c := g.c
	g.mu.Lock()
	g.released = true
	if g.stopCh != nil {
		close(g.stopCh)
	}
	g.mu.Unlock()
	c.keep.remove(g)
	defer func() {
		c.mu.Lock()
		g.held, g.probing = false, false
		c.dropIfIdleLocked(g)
		c.mu.Unlock()
	}()
	if r, ok := g.Remaining(); ok && r <= 0 {
		g.markLost(fmt.Errorf("%w: the lease ended %v before the release", ErrLeaseLost, -r))
	}
	if lostErr := g.LostErr(); lostErr != nil && errors.As(lostErr, new(*RejectError)) {
		// The server freed the lock already and said so.
		return lostErr
	}
	ts := c.timestamp()
	w := c.getWaiter()
	if err := c.register(g, kindRelease, ts, w); err != nil {
		c.putWaiter(w)
		return err
	}
	defer c.unregister(g, kindRelease, w)
	req := wire.Fields{Op: wire.OpRelease, Mode: g.mode, Priority: g.opts.priority, Tenant: g.opts.tenant,
		Lock: g.key.lock, Txn: g.key.txn, Token: g.token, Timestamp: uint64(ts)}
	var result error
	err := c.exchange(ctx, g, w, &req, nil, c.cfg.Clock.Mono()+int64(c.cfg.RequestTimeout),
		func(m *wire.Fields, attempt int) bool {
			if m.Token != g.token {
				return false
			}
			switch m.Op {
			case wire.OpRelease:
				return true
			case wire.OpReject:
				if m.Status == wire.StatusNotHolder && attempt > 1 {
					return true
				}
				result = &RejectError{Op: wire.OpRelease, Lock: g.key.lock, Txn: g.key.txn, Status: m.Status}
				return true
			}
			return false
		})
	if err != nil {
		return err
	}
	if errors.Is(result, ErrNotHolder) {
		// The network may have duplicated the release: the reply to the first copy can follow
		// the refusal of the second. Give it a retransmission interval to arrive.
		w.t.Reset(c.cfg.RetryInterval)
	grace:
		for {
			select {
			case m := <-w.ch:
				if m.Op == wire.OpRelease && m.Token == g.token {
					result = nil
					break grace
				}
			case <-w.t.C():
				break grace
			case <-c.done:
				break grace
			}
		}
		w.t.Stop()
	}
	if lostErr := g.LostErr(); lostErr != nil {
		// Whatever the server answered, the lock was not protected until the release.
		return lostErr
	}
	return result
}

// withdraw takes back an acquire whose caller gave up: a release with token 0 removes a waiting
// request. If the grant races with it, the grant is released. It runs in the background and
// owns w, the acquire's waiter, which it returns to the pool.
func (c *Client) withdraw(g *Grant, acq wire.Fields, w *waiter) {
	c.mu.Lock()
	if g.waiters[kindAcquire] != w || c.closed {
		c.unregisterLocked(g, kindAcquire)
		c.mu.Unlock()
		c.putWaiter(w)
		return
	}
	g.waiters[kindRelease] = w // grants and release answers arrive on one waiter
	g.ts[kindRelease] = 0      // every round of the withdrawal has its own timestamp
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		g.waiters[kindRelease] = nil
		c.unregisterLocked(g, kindAcquire)
		c.mu.Unlock()
		c.putWaiter(w)
	}()
	giveUp := c.cfg.Clock.Mono() + int64(c.cfg.RequestTimeout)
	var token uint64
	for {
		req := wire.Fields{Op: wire.OpRelease, Mode: acq.Mode, Priority: acq.Priority, Tenant: acq.Tenant,
			Lock: g.key.lock, Txn: g.key.txn, Token: token, Timestamp: uint64(c.timestamp())}
		granted := false
		err := c.exchange(context.Background(), g, w, &req, nil, giveUp, func(m *wire.Fields, _ int) bool {
			switch m.Op {
			case wire.OpGrant:
				if token == 0 && (m.Timestamp == 0 || m.Timestamp >= acq.Timestamp) {
					token, granted = m.Token, true
					return true
				}
			case wire.OpRelease, wire.OpReject:
				return m.Token == token
			}
			return false
		})
		if err != nil || !granted {
			if err != nil && !errors.Is(err, ErrClosed) {
				c.log.Warn("netlock client: withdrawal not acknowledged", "lock", g.key.lock, "txn", g.key.txn, "err", err)
			}
			return
		}
		// The grant raced with the withdrawal: release it.
	}
}

// exchange sends req to the server of its lock and retransmits it, flagged retry, with
// exponential backoff (and some jitter) until handle accepts an answer from w (returns true). It
// fails with ErrTimeout when ctx ends or the monotonic clock passes giveUp (unless zero), with an
// *UnreachableError when Config.MaxAttempts copies in a row brought nothing from the server about
// g's (lock, txn), with errStopped when stop is closed, and with ErrClosed when the client closes.
// Once half of those copies went unanswered, each further copy of an acquire that may wait in a
// queue goes with a liveness probe (probe), whose refusal shows that the server is there. It waits on w's timer: no timer or goroutine is
// created per request.
func (c *Client) exchange(ctx context.Context, g *Grant, w *waiter, req *wire.Fields,
	stop <-chan struct{}, giveUp int64, handle func(m *wire.Fields, attempt int) bool) error {
	rto := c.cfg.RetryInterval
	var peer netip.AddrPort
	defer w.t.Stop()
	silent := 0        // copies sent to peer in a row after which nothing came from it
	answering := false // something came from peer after the last copy but one
	var silentSince int64
	// A waiting acquire that has been silent for half of MaxAttempts copies probes the server
	// with each further copy: an acquire waiting in the queue of a server that answers probes
	// once every MaxAttempts/2 retransmissions, the rest of its traffic as before.
	probeAfter := max(1, c.cfg.MaxAttempts/2)
	waits := req.Op == wire.OpAcquire && req.Flags&wire.FlagTry == 0 && c.cfg.MaxAttempts > 0
	for attempt := 1; ; attempt++ {
		left := time.Duration(math.MaxInt64)
		if giveUp != 0 {
			left = time.Duration(giveUp - c.cfg.Clock.Mono())
			if left <= 0 {
				return fmt.Errorf("%w: %s of lock %d at %s unanswered after %d attempts", ErrTimeout, req.Op, req.Lock,
					peer, attempt-1)
			}
		}
		if attempt > 1 {
			req.Flags |= wire.FlagRetry
		}
		// The route is looked up for every copy, so that a changed Route (a failover) takes
		// effect for requests in flight.
		to, err := c.serverFor(req.Lock)
		if err != nil {
			return err
		}
		if to != peer {
			c.setPeer(g, to)
			peer, silent, answering = to, 0, false
		}
		heard := g.heard.Load()
		if silent == 0 {
			silentSince = c.cfg.Clock.Mono()
		}
		if err := c.send(to, req); err != nil {
			return err
		}
		if waits && silent >= probeAfter {
			if err := c.probe(g, to, req); err != nil {
				return err
			}
		}
		// Up to 25% jitter keeps clients that lost packets together from retransmitting together.
		w.t.Reset(min(rto-time.Duration(rand.Int64N(int64(rto/4)+1)), left))
	wait:
		for {
			select {
			case w.m = <-w.ch: // w.m: the answer is handed to handle without escaping a local
				if handle(&w.m, attempt) {
					return nil
				}
			case <-w.t.C():
				break wait
			case <-ctx.Done():
				return c.ctxEnded(ctx, req, peer, attempt, answering || g.heard.Load() != heard)
			case <-stop:
				return errStopped
			case <-c.done:
				return ErrClosed
			}
		}
		if answering = g.heard.Load() != heard; answering {
			silent = 0
		} else if silent++; c.cfg.MaxAttempts > 0 && silent >= c.cfg.MaxAttempts {
			return &UnreachableError{Server: peer.String(), Op: req.Op, Lock: req.Lock, Attempts: silent,
				Elapsed: time.Duration(c.cfg.Clock.Mono() - silentSince)}
		}
		rto = min(2*rto, c.cfg.MaxRetryInterval)
	}
}

// ctxEnded is exchange's error when ctx ends: ErrTimeout wrapping the context's cause, with the
// server, the attempts and whether the server was heard from (a request that waits in its queue)
// since the copy before.
func (c *Client) ctxEnded(ctx context.Context, req *wire.Fields, peer netip.AddrPort, attempts int, heard bool) error {
	state := "no answer from the server"
	if heard {
		state = "the server answering"
	}
	return fmt.Errorf("%w: %s of lock %d at %s, %d attempts, %s: %w", ErrTimeout, req.Op, req.Lock, peer, attempts,
		state, context.Cause(ctx))
}

// probe sends the liveness probe of a waiting acquire req to its server: a lease-probe of req's
// lock and transaction with token 0, which no holder has, so that the server (or the switch)
// refuses it with not-holder and changes nothing; the refusal counts as hearing from the server
// (dispatch) and is not handed to any waiter.
func (c *Client) probe(g *Grant, to netip.AddrPort, req *wire.Fields) error {
	ts := uint64(c.timestamp())
	c.mu.Lock()
	if g.aliveFirst == 0 {
		g.aliveFirst = ts
	}
	g.aliveLast = ts
	c.mu.Unlock()
	p := wire.Fields{Op: wire.OpLeaseProbe, Mode: req.Mode, Priority: req.Priority, Tenant: req.Tenant,
		Lock: req.Lock, Txn: req.Txn, Timestamp: ts}
	return c.send(to, &p)
}

// goTracked runs f on a goroutine that Close waits for, unless the client is closed.
func (c *Client) goTracked(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}
