package citron

import (
	"context"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// The spillover lock covers [N, Space) as one reader-writer bakery (DSLR, which the paper uses
// for it): a shared request takes a shared ticket and waits until the exclusive requests ahead
// of it are done; an exclusive request takes an exclusive ticket and waits until the exclusive
// and the shared requests ahead of it are done. Ranges that reach beyond N take it before their
// tree part (so it is first in the global lock order) and then OR their end into the maximizer.
// Lease recovery as for the tree's bakeries: counters that do not move for Δ leases, Δ being the
// number of requests ahead, are advanced to our ticket with one masked CAS.

func (c *Client) spillWord() verbs.Ptr { return c.ctl.Add(ctlSpill) }

func (c *Client) acquireSpill(ctx context.Context, mode Mode) (err error) {
	defer catch(&err)
	for {
		add := fXMax.Add(1)
		if mode == Shared {
			add = fSMax.Add(1)
		}
		old, err := verbs.MaskedFAA(c.ep, c.spillWord(), add, spillBound)
		if err != nil {
			return err
		}
		if c.awaitSpill(ctx, mode, fXMax.Get(old), fSMax.Get(old)) {
			return nil
		}
	}
}

// awaitSpill waits for a spillover ticket; false means a recovery skipped it.
func (c *Client) awaitSpill(_ context.Context, mode Mode, xt, st uint64) bool {
	const mod = 1 << 16
	mask := fXCnt.Mask()
	want := fXCnt.Put(xt)
	if mode == Exclusive {
		mask |= fSCnt.Mask()
		want |= fSCnt.Put(st)
	}
	var seen uint64
	var since int64
	first := true
	for {
		w, err := verbs.SpinRead(c.ep, c.spillWord())
		if err != nil {
			panic(verbsError{err})
		}
		if w&mask == want {
			return true
		}
		xc, sc := fXCnt.Get(w), fSCnt.Get(w)
		if d := (xc - xt) % mod; d != 0 && d < mod/2 {
			return false
		}
		if mode == Exclusive {
			if d := (sc - st) % mod; d != 0 && d < mod/2 {
				return false
			}
		}
		now := c.now()
		if first || w&mask != seen {
			seen, since, first = w&mask, now, false
		} else {
			ahead := (xt - xc) % mod
			if mode == Exclusive {
				ahead += (st - sc) % mod
			}
			if now-since >= lease(&c.cfg, int64(ahead)) {
				if _, ok, err := verbs.MaskedCAS(c.ep, c.spillWord(), seen, mask, want, mask); err != nil {
					panic(verbsError{err})
				} else if ok {
					c.stats.Recoveries.Add(1)
					c.probe(EvRecover, "spillover lock: counters advanced after %d leases", ahead)
					return true
				}
				first = true
			}
		}
		c.pause()
	}
}

func (c *Client) releaseSpill(mode Mode) (err error) {
	defer catch(&err)
	add := fXCnt.Add(1)
	if mode == Shared {
		add = fSCnt.Add(1)
	}
	_, err = verbs.MaskedFAA(c.ep, c.spillWord(), add, spillBound)
	return err
}

// orMaximizer ORs end into the maximizer with a masked CAS whose compare mask is zero (bitwise-OR
// semantics): the maximizer is then below twice the largest end requested.
func (c *Client) orMaximizer(end uint64) (err error) {
	defer catch(&err)
	_, _, err = verbs.MaskedCAS(c.ep, c.ctl.Add(ctlMaximizer), 0, 0, end, end)
	return err
}
