package citron

import (
	"context"
	"fmt"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// release undoes exactly what hs hold (Alg. 3, all verbs in one batch): a leaf's bits with a
// masked CAS (or its shared counts with a masked FAA), an internal node's Occ and ticket with one
// masked FAA (Occ -1, TCnt +1; shared: SOcc -1), the children the shortcut locked, and every
// notification (DCnt +1). Then it follows notifications a concurrent scale-up carried to new
// ancestors (see chase).
func (c *Client) release(hs []*held) (err error) {
	defer catch(&err)
	c.mustRelease(hs)
	return nil
}

func (c *Client) mustRelease(hs []*held) {
	type mark struct {
		h    *held
		idx  int
		root bool // the occupancy word of a root (else the top notification)
	}
	var wrs []verbs.WorkRequest
	var marks []mark
	for _, h := range hs {
		switch {
		case h.leaf && h.bits != 0 && h.mode == Exclusive:
			if c.cfg.UnsafeUnmaskedLeafRelease {
				wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpWrite, Remote: h.slot, Value: h.readOld})
			} else {
				wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpMaskedCAS, Remote: h.slot, Compare: h.bits, CompareMask: h.bits, Value: 0, SwapMask: h.bits})
			}
		case h.leaf && h.bits != 0:
			sub, _ := groupOperand(h.bits, -1)
			wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: h.slot.Add(8), Value: sub, Boundary: groupBound})
		case !h.leaf && h.mode == Exclusive && (h.occ || h.ticket):
			var v uint64
			if h.occ {
				v |= fOcc.Add(-1)
			}
			if h.ticket {
				v |= fTCnt.Add(1)
			}
			if h.occ && h.root {
				marks = append(marks, mark{h, len(wrs), true})
			}
			wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: h.slot, Value: v, Boundary: eBoundary})
		case !h.leaf && h.occ:
			if h.root {
				marks = append(marks, mark{h, len(wrs), true})
			}
			wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: h.slot.Add(8), Value: fSOcc.Add(-1), Boundary: sBoundary})
		}
		for _, k := range h.kids {
			wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpWrite, Remote: k, Value: 0})
		}
		for i, nt := range h.notified {
			if i == len(h.notified)-1 {
				marks = append(marks, mark{h, len(wrs), false})
			}
			wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: nt.word, Value: fDCnt.Add(1), Boundary: boundaryOf(h.mode)})
		}
	}
	if len(wrs) == 0 {
		return
	}
	res, err := verbs.Exec(c.ep, wrs)
	if err != nil {
		panic(verbsError{err})
	}
	for _, m := range marks {
		m1 := fMark.Get(res[m.idx])
		if m.root {
			// The scale-up to generation gen+1 converted our occupancy of its old root into
			// notifications of the new ancestors at distances 1, 1+m, ... if it visited the root
			// after we occupied it.
			_, before := markAfter(m.h.occMark, m.h.gen)
			if _, after := markAfter(m1, m.h.gen); after && !before {
				c.chase(m.h.n, m.h.gen, m.h.gen+1, 1, m.h.mode)
			}
			continue
		}
		top := m.h.notified[len(m.h.notified)-1]
		if m1 != top.mark {
			// Visited after our notification: the last visit carried it up (earlier visits of a
			// node still in the top levels had no new ancestors to carry it to).
			c.chase(top.n, m.h.gen, markGen(m1, m.h.gen), c.cfg.M, m.h.mode)
		}
	}
}

// chase releases a unit that the scale-up to generation v copied from node x (a node of
// generation g's tree) to x's ancestors in tree v at distances first, first+m, ...: DCnt +1 on
// each; the topmost of them may itself have been visited by a later scale-up, which carried the
// unit further (it was placed before any later scale-up began, so any mark means a later visit).
func (c *Client) chase(x node, g, v, first int, mode Mode) {
	lv, err := c.layoutOf(v)
	if err != nil {
		panic(verbsError{err})
	}
	xv := node{x.d + lv.Height() - c.all.gens[g].Height, x.p}
	targets := continuation(xv, first, c.cfg.M)
	if len(targets) == 0 {
		return
	}
	wrs := make([]verbs.WorkRequest, len(targets))
	for i, t := range targets {
		wrs[i] = verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: wordOf(lv.slot(t), mode), Value: fDCnt.Add(1), Boundary: boundaryOf(mode)}
	}
	res, err := verbs.Exec(c.ep, wrs)
	if err != nil {
		panic(verbsError{err})
	}
	if m := fMark.Get(res[len(res)-1]); m != 0 {
		c.chase(targets[len(targets)-1], v, markGen(m, v), c.cfg.M, mode)
	}
}

// waitFor waits, holding nothing, for what blocked a multi-node request.
func (c *Client) waitFor(ctx context.Context, w waitCond) (err error) {
	defer catch(&err)
	switch w.kind {
	case waitTicket:
		if c.awaitServed(ctx, w.slot, w.ticket) == servedOK {
			c.passTurn(w.slot)
		}
		return nil
	case waitClear:
		mode := Shared
		if w.exclusive {
			mode = Exclusive
		}
		for {
			ws, err := c.readSlots([]verbs.Ptr{w.slot}, true)
			if err != nil {
				return err
			}
			if !blocking(mode, ws[0]) {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			c.pause()
		}
	case waitLeafBits:
		for {
			v, err := verbs.SpinRead(c.ep, w.slot)
			if err != nil {
				return err
			}
			if v&w.bits == 0 {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			c.pause()
		}
	}
	return fmt.Errorf("citron: unknown wait %d", w.kind)
}
