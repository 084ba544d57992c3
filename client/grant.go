package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/netlock-go/netlock/client/clientcore"
	"github.com/netlock-go/netlock/wire"
)

// Option modifies one request.
type Option func(*reqOptions)

type reqOptions = clientcore.ReqOptions

// WithTenant overrides [Config.Tenant] for one request.
func WithTenant(t uint16) Option { return func(o *reqOptions) { o.Tenant = t } }

// WithPriority overrides [Config.Priority] for one request (0 is the highest).
func WithPriority(p uint8) Option { return func(o *reqOptions) { o.Priority = p } }

// WithLease overrides [Config.Lease] for one request; it is clamped to the protocol's range.
func WithLease(d time.Duration) Option { return func(o *reqOptions) { o.Lease = d } }

// WithContention declares that up to n requests for the lock may be outstanding at once (the
// contention c_i of NetLock's allocator): the acquire carries n in its slots field, the lock
// server reports the largest declaration per lock to the control plane (wire.AdminStats), which
// gives a switch lock at least that many queue slots when it can (docs/controlplane.md,
// "Statistics"). 0 declares nothing.
func WithContention(n uint16) Option { return func(o *reqOptions) { o.Contention = n } }

func (c *Client) options(opts []Option) reqOptions {
	o := reqOptions{Tenant: c.cfg.Tenant, Priority: c.cfg.Priority, Lease: c.cfg.Lease}
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

// Grant is a held lock. Its methods are safe for concurrent use.
//
// A Grant holds the core's record of its (lock, txn) and the acquire and release operations
// (the only object an acquire+release allocates). Its protocol state is guarded by the client's
// mutex; the fields below by Grant.mu.
type Grant struct {
	c   *Client
	e   clientcore.Entry
	acq clientcore.Op
	rel clientcore.Op

	mu      sync.Mutex
	lostErr error         // guarded by mu; why the lease was lost (a copy of e's)
	lostCh  chan struct{} // guarded by mu; made on the first Lost call, closed when lost
	onLost  []func()      // guarded by mu

	relMu   sync.Mutex
	relDone bool  // guarded by relMu
	relErr  error // guarded by relMu
}

// closedCh is returned by Lost for a lease lost before anyone asked.
var closedCh = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// Lock returns the lock id.
func (g *Grant) Lock() uint32 { return g.e.Lock }

// Mode returns the mode the lock is held in.
func (g *Grant) Mode() wire.Mode { return g.e.Mode }

// Txn returns the transaction id the lock is held by.
func (g *Grant) Txn() uint64 { return g.e.Txn }

// Token returns the fencing token of the grant: larger than every token granted before it for the
// same lock (by the same server, or by a server that took the lock over later).
func (g *Grant) Token() uint64 { return g.e.Token }

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
	g.c.mu.Lock()
	dl := g.e.Deadline()
	g.c.mu.Unlock()
	if dl == 0 {
		return 0, false
	}
	return durationUntil(dl, g.c.now()), true
}

func durationUntil(t, now int64) time.Duration { return time.Duration(t - now) }

const maxDuration = time.Duration(1<<63 - 1)

// Lost returns a channel that is closed when the lease is lost: the server reported that it
// expired or that it shuts down, a renewal was refused, or Deadline passed without a renewal. It
// is not closed by Release.
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

// reportLost publishes the core's verdict that the lease is lost: Lost closes, LostErr says why,
// the whenLost callbacks run. Called without the client's mutex.
func (g *Grant) reportLost() {
	g.c.mu.Lock()
	cause := g.e.LostErr()
	g.c.mu.Unlock()
	g.mu.Lock()
	if g.lostErr != nil || cause == nil {
		g.mu.Unlock()
		return
	}
	g.lostErr = cause
	if g.lostCh != nil {
		close(g.lostCh)
	}
	fns := g.onLost
	g.onLost = nil
	g.mu.Unlock()
	g.c.log.Debug("netlock client: lease lost", "lock", g.e.Lock, "txn", g.e.Txn, "cause", cause)
	for _, f := range fns {
		f()
	}
}

// wait waits for op (registered with the core, op.User a pooled waiter) to finish, or for ctx to
// end (the core cancels op, withdrawing an acquire) or the client to close. It returns op.Err.
func (c *Client) wait(ctx context.Context, op *clientcore.Op, w *waiter) error {
	defer c.putWaiter(w)
	for {
		select {
		case <-w.ch:
		case <-ctx.Done():
			c.mu.Lock()
			if !op.Done && !c.closed {
				c.out.Reset()
				c.core.Cancel(c.now(), op, context.Cause(ctx), &c.out)
				c.finishLocked()
			}
			c.unlock()
		case <-c.done:
		}
		c.mu.Lock()
		done, err := op.Done, op.Err
		closed := c.closed
		c.mu.Unlock()
		if done {
			return err
		}
		if closed {
			return ErrClosed
		}
	}
}

// Acquire takes lock in mode for a new transaction and waits until it is granted, the server
// refuses it (a [*RejectError]), the server sends nothing back to [Config.MaxAttempts] copies in a
// row (an [*UnreachableError]), ctx ends ([ErrTimeout] wrapping the context's error, with the
// server and the attempts) or the client is closed ([ErrClosed]). Lost requests and answers are
// retransmitted. When the wait ends while the request may be queued, the request is withdrawn
// from the server's queue in the background.
func (c *Client) Acquire(ctx context.Context, lock uint32, mode wire.Mode, opts ...Option) (*Grant, error) {
	return c.acquire(ctx, lock, mode, c.newTxnID(), false, c.options(opts))
}

// TryAcquire is Acquire that never waits in the server's queue: the lock is granted at once or
// the call fails with an error matching [ErrWouldBlock]. On a server with an RDMA table, the
// grant of an RDMA-backed lock may still wait for its ALock, which another cohort may take just
// after the server's would-block check; the call then waits for it, as Acquire does.
func (c *Client) TryAcquire(ctx context.Context, lock uint32, mode wire.Mode, opts ...Option) (*Grant, error) {
	return c.acquire(ctx, lock, mode, c.newTxnID(), true, c.options(opts))
}

func (c *Client) acquire(ctx context.Context, lock uint32, mode wire.Mode, txn uint64, try bool,
	o reqOptions) (*Grant, error) {
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w: acquire of lock %d: %w", ErrTimeout, lock, context.Cause(ctx))
	}
	g := &Grant{c: c}
	w := c.getWaiter()
	g.e.User, g.acq.User = g, w
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.putWaiter(w)
		return nil, ErrClosed
	}
	c.out.Reset()
	err := c.core.Acquire(c.now(), &g.e, &g.acq, lock, mode, txn, try, o, &c.out)
	c.finishLocked()
	c.unlock()
	if err != nil {
		c.putWaiter(w)
		return nil, err
	}
	if err := c.wait(ctx, &g.acq, w); err != nil {
		return nil, err
	}
	return g, nil
}

// Renew extends the lease now with a lease-probe (KeepAlive does this by itself) and waits for the
// answer until ctx ends or [Config.RequestTimeout] passes. A refusal loses the lease: Lost is
// closed and the error matches [ErrLeaseLost]. Renew after Release fails.
func (g *Grant) Renew(ctx context.Context) error {
	c := g.c
	c.mu.Lock()
	if g.e.Lease() == 0 {
		c.mu.Unlock()
		return nil
	}
	op := &clientcore.Op{}
	w := c.getWaiter()
	op.User = w
	c.out.Reset()
	c.core.Renew(c.now(), &g.e, op, &c.out)
	c.finishLocked()
	c.unlock()
	return c.wait(ctx, op, w)
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
	w := c.getWaiter()
	g.rel.User = w
	c.mu.Lock()
	c.out.Reset()
	started := c.core.Release(c.now(), &g.e, &g.rel, &c.out)
	c.finishLocked()
	c.unlock()
	if !started {
		c.putWaiter(w)
		return errors.New("client: release already in progress")
	}
	// A release has its own bound (Config.RequestTimeout, in the core) besides ctx.
	return c.wait(ctx, &g.rel, w)
}
