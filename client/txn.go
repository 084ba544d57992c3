package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/netlock-go/netlock/wire"
)

// LockSpec names a lock and the mode to take it in.
type LockSpec struct {
	Lock uint32
	Mode wire.Mode
}

// Txn takes a set of locks with strict two-phase locking under one transaction id. Add locks with
// Lock, take them all with Acquire, give them all back with Release. A Txn is not safe for
// concurrent use, except that Release may be called while Acquire runs.
type Txn struct {
	c    *Client
	id   uint64
	opts reqOptions
	want map[uint32]wire.Mode

	mu     sync.Mutex
	grants []*Grant // guarded by mu; in ascending lock order
}

// Begin starts a transaction with a fresh transaction id. The options apply to all its locks.
func (c *Client) Begin(opts ...Option) *Txn {
	return &Txn{c: c, id: c.newTxnID(), opts: c.options(opts), want: make(map[uint32]wire.Mode)}
}

// ID returns the transaction id shared by all the locks of t.
func (t *Txn) ID() uint64 { return t.id }

// Lock adds lock in mode to the set Acquire takes. A lock asked for in both modes is taken
// exclusive.
func (t *Txn) Lock(lock uint32, mode wire.Mode) {
	if m, ok := t.want[lock]; !ok || m == wire.Shared {
		t.want[lock] = mode
	}
}

// Acquire takes every lock added with Lock and not yet held, one at a time in ascending lock id
// order (a global order: transactions that all use Txn cannot deadlock among themselves). On any
// error it releases every lock of t and returns the error; this includes a lease lost while a
// later lock was awaited (an error matching [ErrLeaseLost]).
func (t *Txn) Acquire(ctx context.Context) error {
	held := make(map[uint32]bool)
	t.mu.Lock()
	for _, g := range t.grants {
		held[g.Lock()] = true
	}
	t.mu.Unlock()
	var locks []LockSpec
	for l, m := range t.want {
		if !held[l] {
			locks = append(locks, LockSpec{Lock: l, Mode: m})
		}
	}
	for _, ls := range OrderLocks(locks) {
		l := ls.Lock
		if len(held) > 0 && l < maxKey(held) {
			return fmt.Errorf("client: txn %#x: lock %d is below a held lock: acquiring it would break the lock order", t.id, l)
		}
		g, err := t.c.acquire(ctx, l, ls.Mode, t.id, false, t.opts)
		if err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.c.cfg.RequestTimeout)
			defer cancel()
			if rerr := t.Release(rctx); rerr != nil {
				t.c.log.Warn("netlock client: release after failed acquire", "txn", t.id, "err", rerr)
			}
			return fmt.Errorf("client: txn %#x: lock %d: %w", t.id, l, err)
		}
		t.mu.Lock()
		t.grants = append(t.grants, g)
		t.mu.Unlock()
		held[l] = true
	}
	// A lock taken early may have lost its lease while a later one was awaited.
	for _, g := range t.Grants() {
		if lerr := g.LostErr(); lerr != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.c.cfg.RequestTimeout)
			defer cancel()
			_ = t.Release(rctx)
			return fmt.Errorf("client: txn %#x: lock %d lost while the others were acquired: %w", t.id, g.Lock(), lerr)
		}
	}
	return nil
}

// OrderLocks puts a transaction's locks in the order Txn takes them: ascending lock id (a global
// order: transactions that all take their locks in it cannot deadlock among themselves), a lock
// named twice once, exclusive if either asked for it exclusive. It sorts locks in place and
// returns the shortened slice. The rack model's transactions (testbed/rackmodel) use it too.
func OrderLocks(locks []LockSpec) []LockSpec {
	slices.SortStableFunc(locks, func(a, b LockSpec) int { return cmp.Compare(a.Lock, b.Lock) })
	out := locks[:0]
	for _, l := range locks {
		if n := len(out); n > 0 && out[n-1].Lock == l.Lock {
			if l.Mode == wire.Exclusive {
				out[n-1].Mode = wire.Exclusive
			}
			continue
		}
		out = append(out, l)
	}
	return out
}

func maxKey(m map[uint32]bool) uint32 {
	var k uint32
	for l := range m {
		k = max(k, l)
	}
	return k
}

// Grants returns the grants held by t, in ascending lock order.
func (t *Txn) Grants() []*Grant {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.grants)
}

// Release releases every lock t holds, the last taken first, and forgets them. It returns the
// errors of the individual releases joined.
func (t *Txn) Release(ctx context.Context) error {
	t.mu.Lock()
	gs := t.grants
	t.grants = nil
	t.mu.Unlock()
	var errs []error
	for i := len(gs) - 1; i >= 0; i-- {
		if err := gs[i].Release(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RunTxn takes locks as one transaction (see [Txn.Acquire]), runs fn, and releases them (also
// when fn panics; the panic then continues). The
// context passed to fn is canceled, with a cause matching [ErrLeaseLost], when the lease of any of
// the locks is lost. RunTxn returns fn's error; if fn succeeded but a lease was lost meanwhile or
// a release failed, it returns that error instead.
func (c *Client) RunTxn(ctx context.Context, locks []LockSpec, fn func(ctx context.Context) error,
	opts ...Option) error {
	t := c.Begin(opts...)
	for _, l := range locks {
		t.Lock(l.Lock, l.Mode)
	}
	if err := t.Acquire(ctx); err != nil {
		return err
	}
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	for _, g := range t.Grants() {
		g.whenLost(func() {
			cancel(fmt.Errorf("client: lock %d: %w", g.Lock(), ErrLeaseLost))
		})
	}
	ferr := runReleasingOnPanic(fctx, t, fn)
	var lostErr error
	for _, g := range t.Grants() {
		if err := g.LostErr(); err != nil {
			lostErr = err
			break
		}
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.RequestTimeout)
	defer rcancel()
	rerr := t.Release(rctx)
	switch {
	case ferr != nil:
		return ferr
	case lostErr != nil:
		return lostErr
	}
	return rerr
}

// runReleasingOnPanic runs fn; if fn panics, it releases t's locks before the panic goes on.
func runReleasingOnPanic(ctx context.Context, t *Txn, fn func(ctx context.Context) error) error {
	defer func() {
		if r := recover(); r != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.c.cfg.RequestTimeout)
			defer cancel()
			_ = t.Release(rctx)
			panic(r)
		}
	}()
	return fn(ctx)
}
