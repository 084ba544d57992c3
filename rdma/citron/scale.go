package citron

import (
	"context"
	"fmt"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Scale-up (the paper's section 3.9 and Alg. 4), with one change that makes it checkable.
//
// The tree of generation g+1 has the tree of generation g as its leftmost subtree; nothing is
// moved. Requests in flight in the old tree must become visible to checkers at the new nodes
// above the old root. Every request at depth >= 1 has exactly one notified node in the top M
// levels (the top of its chain), and a request at the root has none (it only occupies the root).
// The scaler, holding the spillover lock exclusively, visits every internal node v of the old
// tree's top M levels, root first: one masked CAS per word atomically fetches the node and sets
// its mark to g+1, and the outstanding notifications it fetched (DCnt, DMax) are added to v's
// ancestors in the new tree at distances M, 2M, ... (the chain continues with gaps of M, ending in
// the new top levels). For the old root it also adds its occupancy (Occ, SOcc) as notifications
// to the new ancestors at distances 1, 1+M, ... . Then it publishes the new generation (the
// directory and the generation word), clears the maximizer and releases the spillover lock.
//
// The paper marks visited nodes with a one-bit Exp flag and adds v.Occ at distances M, 2M, ... .
// We found two problems: a checker at the new parent of the old root (distance 1) would not
// see a holder of the old root (its window holds no node of the M, 2M chain), and with scale-up
// factors below 4^M old top nodes stay in the top levels, so a one-bit Exp set by an earlier
// scale-up cannot tell a request whether the current scale-up has counted it. Hence a 5-bit mark
// holding the generation of the last visit: a request compares the mark its notification (or
// occupancy) FAA returned with its own generation; a visit from a newer generation before the
// update means the scaler missed it, so it aborts and refreshes (the paper's abort); otherwise
// the scaler counted it, and at release the mark returned by its DCnt+1 (or Occ-1) tells whether
// a visit happened in between, and so which new ancestors it must release too (chase in
// release.go; the paper's Alg. 3 lines 10-12). Only the last visit of a node can carry units to
// new nodes (a node still in the top M levels after a scale-up has no ancestors at distance M
// above the old root), so the walk is unambiguous. Marks are generation numbers modulo 31; a
// request must not live through more than 16 scale-ups.

// ScaleUp scales the tree up if the maximizer shows a request beyond N (Alg. 4) and reports
// whether it did. Any client may call it; the paper's clients poll the maximizer every 10 ms.
func (c *Client) ScaleUp(ctx context.Context) (scaled bool, err error) {
	defer catch(&err)
	m, err := verbs.Read(c.ep, c.ctl.Add(ctlMaximizer))
	if err != nil || m == 0 {
		return false, err
	}
	if err := c.acquireSpill(ctx, Exclusive); err != nil {
		return false, err
	}
	defer func() {
		if rerr := c.releaseSpill(Exclusive); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if err := c.refresh(); err != nil {
		return false, err
	}
	if m, err = verbs.Read(c.ep, c.ctl.Add(ctlMaximizer)); err != nil || m == 0 {
		return false, err // someone else scaled meanwhile
	}
	old := c.lay
	target := min(m, c.cfg.Space)
	if target <= old.Capacity() {
		return false, verbs.Write(c.ep, c.ctl.Add(ctlMaximizer), 0)
	}
	h := max(heightFor(target), old.Height()+1)
	if h > maxHeight {
		return false, fmt.Errorf("citron: scale-up to height %d: %w", h, ErrOutOfSpace)
	}
	lay, err := c.dir.Grow(c.ep, h)
	if err != nil {
		return false, err
	}
	g := old.Gen() + 1
	j := lay.Height() - old.Height()
	code := fMark.Put(markCode(g))
	for d := 0; d < min(c.cfg.M, old.Height()); d++ {
		n := levelNodes(d)
		visits := make([]verbs.WorkRequest, 0, 2*n)
		for p := uint64(0); p < n; p++ {
			s := old.slot(node{d, p})
			visits = append(visits,
				verbs.WorkRequest{Op: verbs.OpMaskedCAS, Remote: s, Value: code, SwapMask: fMark.Mask()},
				verbs.WorkRequest{Op: verbs.OpMaskedCAS, Remote: s.Add(8), Value: code, SwapMask: fMark.Mask()})
		}
		got, err := verbs.Exec(c.ep, visits)
		if err != nil {
			return false, err
		}
		var props []verbs.WorkRequest
		add := func(t node, e bool, v uint64) {
			if v == 0 {
				return
			}
			s := lay.slot(t)
			if e {
				props = append(props, verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: s, Value: v, Boundary: eBoundary})
			} else {
				props = append(props, verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: s.Add(8), Value: v, Boundary: sBoundary})
			}
		}
		for p := uint64(0); p < n; p++ {
			e, s := got[2*p], got[2*p+1]
			v := node{d + j, p}
			for _, t := range continuation(v, c.cfg.M, c.cfg.M) {
				add(t, true, fDCnt.Add(int64(fDCnt.Get(e)))|fDMax.Add(int64(fDMax.Get(e))))
				add(t, false, fDCnt.Add(int64(fDCnt.Get(s)))|fDMax.Add(int64(fDMax.Get(s))))
			}
			if d == 0 {
				for _, t := range continuation(v, 1, c.cfg.M) {
					add(t, true, fDMax.Add(int64(fOcc.Get(e))))
					add(t, false, fDMax.Add(int64(fSOcc.Get(s))))
				}
			}
		}
		if len(props) > 0 {
			if _, err := verbs.Exec(c.ep, props); err != nil {
				return false, err
			}
		}
	}
	if err := c.dir.Publish(c.ep, g); err != nil {
		return false, err
	}
	if err := verbs.Write(c.ep, c.ctl.Add(ctlGen), uint64(g)); err != nil {
		return false, err
	}
	if err := verbs.Write(c.ep, c.ctl.Add(ctlMaximizer), 0); err != nil {
		return false, err
	}
	if err := c.refresh(); err != nil {
		return false, err
	}
	c.stats.ScaleUps.Add(1)
	c.probe(EvScaleUp, "generation %d: height %d -> %d (N %d)", g, old.Height(), lay.Height(), lay.Capacity())
	return true, nil
}
