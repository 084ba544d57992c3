package citron

import (
	"context"
	"fmt"
	"time"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// result is the outcome of one attempt at one node.
type result int

const (
	resAcquired result = iota
	resRetry           // undone; try the same node again (Inequality (1), skipped ticket)
	resStale           // undone; the tree was scaled up: refresh and restart the request
	resBlocked         // undone; the request holds nodes and would wait: release, wait, restart
	resEscalate        // undone; lock target instead
	resCanceled        // undone; ctx is done
)

type waitKind uint8

const (
	waitTicket   waitKind = iota + 1 // be served at a bakery, then pass the turn on
	waitClear                        // an ancestor's Occ (and SOcc for exclusive) to clear
	waitLeafBits                     // a leaf's bits to clear
)

// waitCond is what a blocked request waits for after releasing its nodes.
type waitCond struct {
	kind      waitKind
	what      string
	slot      verbs.Ptr
	ticket    uint64
	bits      uint64
	exclusive bool
}

// notice is one notification a request made: the node (in its layout's coordinates), the word
// it incremented and the mark that word had (scale-up detection).
type notice struct {
	n    node
	word verbs.Ptr
	mark uint64
}

// held is what a request holds (or has partially done) at one node; release undoes exactly it.
type held struct {
	n    node
	gen  int
	mode Mode
	leaf bool
	root bool
	slot verbs.Ptr

	ticket   bool   // a served ticket at this internal node (exclusive)
	occ      bool   // Occ set (exclusive) or SOcc incremented (shared)
	occMark  uint64 // the word's mark when Occ/SOcc was set
	bits     uint64 // exclusive leaf: our bits; shared leaf: the units whose groups we counted
	readOld  uint64 // negative control: the bitmap as read when locking
	kids     []verbs.Ptr
	notified []notice
}

// attempt runs step 2 at one node.
type attempt struct {
	c       *Client
	lay     *Layout
	n       node
	mode    Mode
	l, r    uint64
	holding bool

	h        held
	t1       int64
	pre      [][]uint64 // ancestors read in the same batch as the ticket (fast path)
	preT     int64
	casSince int64
	wait     waitCond
	target   node
	why      string
	upgrade  bool
}

func (a *attempt) held() *held { h := a.h; return &h }

func (c *Client) maybeCrash(point string) {
	if c.opt.crashAt != nil && c.opt.crashAt(point) {
		panic(crashed{point})
	}
}

// run executes phases (a) to (d).
func (a *attempt) run(ctx context.Context) result {
	a.h = held{n: a.n, gen: a.lay.Gen(), mode: a.mode, leaf: a.lay.isLeaf(a.n), root: a.n.d == 0, slot: a.lay.slot(a.n)}
	if !a.h.leaf && a.mode == Exclusive {
		if res, ok := a.takeTicket(ctx); !ok {
			return res
		}
	}
	for {
		if res, ok := a.waitAncestors(ctx); !ok {
			return res
		}
		if res, again := a.occupyAndNotify(ctx); !again {
			return res
		}
	}
}

// wordOf is the word of node slot s that mode uses (E word or S word).
func wordOf(s verbs.Ptr, mode Mode) verbs.Ptr {
	if mode == Shared {
		return s.Add(8)
	}
	return s
}

func boundaryOf(mode Mode) uint64 {
	if mode == Shared {
		return sBoundary
	}
	return eBoundary
}

// readSlots reads whole node slots (E and S word) in one batch.
func (c *Client) readSlots(ptrs []verbs.Ptr, spin bool) ([][]uint64, error) {
	wrs := make([]verbs.WorkRequest, len(ptrs))
	out := make([][]uint64, len(ptrs))
	for i, p := range ptrs {
		out[i] = make([]uint64, slotWords)
		wrs[i] = verbs.WorkRequest{Op: verbs.OpRead, Remote: p, Words: slotWords, Dest: out[i], Spin: spin}
	}
	if _, err := verbs.Exec(c.ep, wrs); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Client) pause() {
	if c.cfg.PollInterval > 0 {
		verbs.Spend(c.ep, int64(c.cfg.PollInterval))
	}
}

func (c *Client) sleepUntil(t int64) {
	if d := t - c.now(); d > 0 {
		if c.opt.Drift != 0 {
			d = int64(float64(d)/(1+c.opt.Drift)) + 1
		}
		verbs.Spend(c.ep, d)
	}
}

func lease(c *Config, k int64) int64 { return int64(c.Lease) * k }

// ancestorSlots returns the slots (and nodes) step 2(b) reads, root first.
func (a *attempt) ancestorSlots() ([]node, []verbs.Ptr) {
	var ns []node
	for d := 0; d < a.n.d; d++ {
		ns = append(ns, a.n.ancestor(d))
	}
	if a.mode == Shared && !a.h.leaf {
		ns = append(ns, a.n) // an exclusive holder of the node itself
	}
	ps := make([]verbs.Ptr, len(ns))
	for i, n := range ns {
		ps[i] = a.lay.slot(n)
	}
	return ns, ps
}

// takeTicket is phase (a): a bakery ticket at an internal node (exclusive). On the fast path the
// first read of phase (b) rides in the same batch.
func (a *attempt) takeTicket(ctx context.Context) (result, bool) {
	c := a.c
	wrs := []verbs.WorkRequest{{Op: verbs.OpMaskedFAA, Remote: a.h.slot, Value: fTMax.Add(1), Boundary: eBoundary}}
	if !c.opt.SlowPath {
		_, ps := a.ancestorSlots()
		a.pre = make([][]uint64, len(ps))
		for i, p := range ps {
			a.pre[i] = make([]uint64, slotWords)
			wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpRead, Remote: p, Words: slotWords, Dest: a.pre[i]})
		}
	}
	a.preT = c.now()
	res, err := verbs.Exec(c.ep, wrs)
	if err != nil {
		panic(verbsError{err})
	}
	ticket := fTMax.Get(res[0])
	if fTCnt.Get(res[0]) == ticket {
		a.h.ticket = true
		a.c.maybeCrash("ticket")
		return 0, true
	}
	a.pre = nil
	if a.holding {
		a.wait = waitCond{kind: waitTicket, what: "ticket at " + a.n.String(), slot: a.h.slot, ticket: ticket}
		return resBlocked, false
	}
	switch c.awaitServed(ctx, a.h.slot, ticket) {
	case servedOK:
		a.h.ticket = true
		a.c.maybeCrash("ticket")
		return 0, true
	default: // skipped: a waiter recovered past our ticket (we were too slow); take a new one
		c.stats.Aborts.Add(1)
		c.probe(EvAbort, "%v: ticket %d skipped by recovery", a.n, ticket)
		return resRetry, false
	}
}

type served int

const (
	servedOK served = iota
	servedSkipped
)

// awaitServed spins until the bakery at slot serves ticket. If TCnt and Occ stay unchanged for
// a lease (the paper's failure detection at Alg. 2 line 11), it waits (Δ-1) more leases, Δ being
// its distance to the counter, and then takes the turn itself with one masked CAS (TCnt :=
// ticket, Occ := 0) that fails if anything changed. Waiting ignores ctx: a ticket cannot be
// given back before it is served.
func (c *Client) awaitServed(_ context.Context, slot verbs.Ptr, ticket uint64) served {
	var seen uint64
	var since int64
	first := true
	for {
		w, err := verbs.SpinRead(c.ep, slot)
		if err != nil {
			panic(verbsError{err})
		}
		cnt := fTCnt.Get(w)
		if cnt == ticket {
			return servedOK
		}
		if d := (cnt - ticket) & (ticketModulo - 1); d < ticketModulo/2 {
			return servedSkipped
		}
		key := w & (fTCnt.Mask() | fOcc.Mask())
		now := c.now()
		if first || key != seen {
			seen, since, first = key, now, false
		} else {
			delta := int64((ticket - cnt) & (ticketModulo - 1))
			if now-since >= lease(&c.cfg, delta) {
				mask := fTCnt.Mask() | fOcc.Mask()
				if _, ok, err := verbs.MaskedCAS(c.ep, slot, seen, mask, fTCnt.Put(ticket), mask); err != nil {
					panic(verbsError{err})
				} else if ok {
					c.stats.Recoveries.Add(1)
					c.probe(EvRecover, "bakery %v: TCnt %d -> %d after %v", slot, cnt, ticket, time.Duration(now-since))
					return servedOK
				}
				first = true
			}
		}
		c.pause()
	}
}

// passTurn gives up a served ticket without having occupied the node (abort == release).
func (c *Client) passTurn(slot verbs.Ptr) {
	if _, err := verbs.MaskedFAA(c.ep, slot, fTCnt.Add(1), eBoundary); err != nil {
		panic(verbsError{err})
	}
}

// blocking reports whether a node's words block a request in mode.
func blocking(mode Mode, w []uint64) bool {
	if fOcc.Get(w[0]) != 0 {
		return true
	}
	return mode == Exclusive && fSOcc.Get(w[1]) != 0
}

// waitAncestors is phase (b): wait until no ancestor is occupied, re-reading all ancestors after
// every wait (one batch per iteration). It records t1, the post time of the last batch, which
// found every ancestor free: the paper's per-ancestor t1 bookkeeping is ambiguous, and one batch
// that covers every ancestor gives one t1 valid for all of them.
func (a *attempt) waitAncestors(ctx context.Context) (result, bool) {
	c := a.c
	ns, ps := a.ancestorSlots()
	for {
		var words [][]uint64
		var t int64
		if a.pre != nil {
			words, t, a.pre = a.pre, a.preT, nil
		} else {
			t = c.now()
			var err error
			if words, err = c.readSlots(ps, false); err != nil {
				panic(verbsError{err})
			}
		}
		if len(ns) > 0 && ns[0].d == 0 && !c.cfg.UnsafeIgnoreMarks {
			if _, after := markAfter(fMark.Get(words[0][0]), a.lay.Gen()); after {
				a.undo()
				return resStale, false
			}
		}
		lowest := -1
		for i := len(ns) - 1; i >= 0; i-- {
			if blocking(a.mode, words[i]) {
				lowest = i
				break
			}
		}
		if lowest < 0 || c.cfg.UnsafeSkipAncestorWait {
			a.t1 = t
			return 0, true
		}
		z := ns[lowest]
		if a.holding {
			a.undo()
			a.wait = waitCond{kind: waitClear, what: "occupied " + z.String(), slot: ps[lowest], exclusive: a.mode == Exclusive}
			return resBlocked, false
		}
		if res, ok := a.awaitClear(ctx, z, ps[lowest]); !ok {
			return res, false
		}
	}
}

// awaitClear spins until node z (slot p) no longer blocks the attempt. If z's Occ and TCnt stay
// unchanged for a lease (Alg. 2 line 18), or shared holders keep z occupied longer than
// EscalateAfter, the attempt escalates to z itself in exclusive mode: its bakery then detects a
// dead holder (line 11), and its Occ stops new shared holders.
func (a *attempt) awaitClear(ctx context.Context, z node, p verbs.Ptr) (result, bool) {
	c := a.c
	start := c.now()
	var seen uint64
	var since int64
	first := true
	for {
		ws, err := c.readSlots([]verbs.Ptr{p}, true)
		if err != nil {
			panic(verbsError{err})
		}
		w := ws[0]
		if !blocking(a.mode, w) {
			return 0, true
		}
		now := c.now()
		key := w[0] & (fOcc.Mask() | fTCnt.Mask())
		if first || key != seen {
			seen, since, first = key, now, false
		}
		occ := fOcc.Get(w[0]) != 0
		if occ && now-since >= lease(&c.cfg, 1) {
			a.undo()
			a.target, a.why, a.upgrade = z, "occupied ancestor unchanged for a lease", true
			return resEscalate, false
		}
		if !occ && time.Duration(now-start) > c.cfg.EscalateAfter {
			a.undo()
			a.target, a.why, a.upgrade = z, "ancestor kept occupied by shared holders", true
			return resEscalate, false
		}
		if ctx.Err() != nil {
			a.undo()
			return resCanceled, false
		}
		c.pause()
	}
}

// undo releases whatever the attempt did so far.
func (a *attempt) undo() {
	h := a.h
	a.c.mustRelease([]*held{&h})
	a.h.ticket, a.h.occ, a.h.bits, a.h.kids, a.h.notified = false, false, 0, nil, nil
}

// occupyAndNotify is phases (c) and (d). again reports that the attempt goes back to (b) (a
// leaf's bits were taken).
func (a *attempt) occupyAndNotify(ctx context.Context) (res result, again bool) {
	c, cfg := a.c, &a.c.cfg
	H := a.lay.Height()
	G := a.lay.Gen()
	fast := !c.opt.SlowPath
	var cwrs []verbs.WorkRequest
	var bits, gadd uint64
	shortcut := false
	switch {
	case a.h.leaf && a.mode == Exclusive:
		bits = leafMask(H, a.n, a.l, a.r)
		cwrs = append(cwrs,
			verbs.WorkRequest{Op: verbs.OpMaskedCAS, Remote: a.h.slot, Compare: 0, CompareMask: bits, Value: bits, SwapMask: bits},
			verbs.WorkRequest{Op: verbs.OpRead, Remote: a.h.slot.Add(8)}) // shared holders' counts, read after the CAS
	case a.h.leaf:
		bits = leafMask(H, a.n, a.l, a.r)
		gadd, _ = groupOperand(bits, 1)
		cwrs = append(cwrs,
			verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: a.h.slot.Add(8), Value: gadd, Boundary: groupBound},
			verbs.WorkRequest{Op: verbs.OpRead, Remote: a.h.slot}) // exclusive bits, read after counting
	case a.mode == Exclusive:
		// Occ, then the node's shared count (Dekker with shared requests at the same node,
		// which count themselves and then read Occ).
		cwrs = append(cwrs, verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: a.h.slot, Value: fOcc.Add(1), Boundary: eBoundary},
			verbs.WorkRequest{Op: verbs.OpRead, Remote: a.h.slot.Add(8)})
		if fast && a.n.d == H-1 && !cfg.UnsafeSkipDescendantCheck {
			if fr := a.lay.fragments(H, a.n.p*4, a.n.p*4+4); len(fr) == 1 {
				shortcut = true
				for i := uint64(0); i < 4; i++ {
					cwrs = append(cwrs, verbs.WorkRequest{Op: verbs.OpMaskedCAS, Remote: fr[0].ptr.Add(i * slotBytes),
						CompareMask: ^uint64(0), Value: ^uint64(0), SwapMask: ^uint64(0)})
				}
				cwrs = append(cwrs, verbs.WorkRequest{Op: verbs.OpRead, Remote: fr[0].ptr, Words: 4 * slotWords, Dest: make([]uint64, 4*slotWords)})
			}
		}
	default:
		cwrs = append(cwrs, verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: a.h.slot.Add(8), Value: fSOcc.Add(1), Boundary: sBoundary},
			verbs.WorkRequest{Op: verbs.OpRead, Remote: a.h.slot})
	}
	notify := notifySet(a.n, cfg.M)
	nwrs := make([]verbs.WorkRequest, len(notify))
	for i, x := range notify {
		nwrs[i] = verbs.WorkRequest{Op: verbs.OpMaskedFAA, Remote: wordOf(a.lay.slot(x), a.mode), Value: fDMax.Add(1), Boundary: boundaryOf(a.mode)}
	}
	var cres, nres []uint64
	var err error
	if fast {
		all, err := verbs.Exec(c.ep, append(cwrs, nwrs...))
		if err != nil {
			panic(verbsError{err})
		}
		cres, nres = all[:len(cwrs)], all[len(cwrs):]
	} else {
		if cres, err = verbs.Exec(c.ep, cwrs); err != nil {
			panic(verbsError{err})
		}
		if !(a.h.leaf && a.mode == Exclusive && cres[0]&bits != 0) && len(nwrs) > 0 {
			if nres, err = verbs.Exec(c.ep, nwrs); err != nil {
				panic(verbsError{err})
			}
		}
	}
	t2 := c.now()
	for i := range nres {
		a.h.notified = append(a.h.notified, notice{n: notify[i], word: nwrs[i].Remote, mark: fMark.Get(nres[i])})
	}
	// Phase (c) results.
	switch {
	case a.h.leaf && a.mode == Exclusive:
		if cres[0]&bits != 0 {
			return a.leafConflict(ctx, bits)
		}
		a.h.bits, a.h.readOld = bits, cres[0]
	case a.h.leaf:
		a.h.bits = bits
		if cres[1]&bits != 0 {
			return a.leafConflict(ctx, bits)
		}
	case a.mode == Exclusive:
		a.h.occ, a.h.occMark = true, fMark.Get(cres[0])
		if shortcut {
			fr := a.lay.fragments(H, a.n.p*4, a.n.p*4+4)[0]
			ok := true
			for i := 0; i < 4; i++ {
				if cres[2+i] == 0 {
					a.h.kids = append(a.h.kids, fr.ptr.Add(uint64(i)*slotBytes))
				} else {
					ok = false
				}
			}
			ok = ok && fSOcc.Get(cres[1]) == 0 // no shared holder of the node itself
			sw := cwrs[6].Dest
			for i := 0; i < 4; i++ {
				ok = ok && sw[2*i+1] == 0
			}
			shortcut = ok
			if !ok { // clear the children we set; the regular path follows
				wrs := make([]verbs.WorkRequest, len(a.h.kids))
				for i, k := range a.h.kids {
					wrs[i] = verbs.WorkRequest{Op: verbs.OpWrite, Remote: k, Value: 0}
				}
				if _, err := verbs.Exec(c.ep, wrs); err != nil {
					panic(verbsError{err})
				}
				a.h.kids = nil
			}
		}
	default:
		a.h.occ, a.h.occMark = true, fMark.Get(cres[0])
		if fOcc.Get(cres[1]) != 0 { // an exclusive request occupies the node: back off
			a.undo()
			if a.holding {
				a.wait = waitCond{kind: waitClear, what: "occupied " + a.n.String(), slot: a.h.slot}
				return resBlocked, false
			}
			if err := c.waitFor(ctx, waitCond{kind: waitClear, slot: a.h.slot}); err != nil {
				return resCanceled, false
			}
			return 0, true
		}
	}
	c.maybeCrash("notified")
	// A scale-up visited the top of our notification chain (or our root) before our update:
	// the scaler did not count us. Our layout is stale.
	if !cfg.UnsafeIgnoreMarks {
		_, topAfter := false, false
		if len(a.h.notified) > 0 {
			_, topAfter = markAfter(a.h.notified[len(a.h.notified)-1].mark, G)
		}
		_, rootAfter := markAfter(a.h.occMark, G)
		if topAfter || a.h.root && a.h.occ && rootAfter {
			a.undo()
			return resStale, false
		}
	}
	// Inequality (1): our notifications must land within (1-δ)·TWait of the reads that found
	// our ancestors free, or an ancestor's checker may have missed them.
	if !cfg.UnsafeNoAbort && float64(t2-a.t1) > (1-cfg.Delta)*float64(cfg.TWait) {
		a.undo()
		c.stats.Aborts.Add(1)
		c.probe(EvAbort, "%v: notified %v after the ancestor reads (T_wait %v)", a.n, time.Duration(t2-a.t1), cfg.TWait)
		return resRetry, false
	}
	if a.h.leaf && a.mode == Exclusive {
		if _, gmask := groupOperand(bits, 1); cres[1]&gmask != 0 {
			if res, ok := a.awaitGroups(ctx, gmask); !ok {
				return res, false
			}
		}
	}
	if shortcut {
		c.stats.Shortcuts.Add(1)
		c.probe(EvShortcut, "%v", a.n)
		return resAcquired, false
	}
	if !a.h.leaf && !cfg.UnsafeSkipDescendantCheck {
		c.sleepUntil(t2 + int64(cfg.TWait))
		if res, ok := a.checkDescendants(ctx); !ok {
			return res, false
		}
	}
	return resAcquired, false
}

// leafConflict handles a leaf whose bits are taken (exclusive: the masked CAS failed; shared:
// exclusive bits are set). The attempt undoes what it did; a request holding other nodes
// restarts; otherwise it goes back to (b), or, once it has kept failing for EscalateAfter, locks
// the leaf's parent instead (starvation avoidance; the parent's bakery is fair).
func (a *attempt) leafConflict(ctx context.Context, bits uint64) (result, bool) {
	c := a.c
	a.undo()
	c.stats.CASFails.Add(1)
	c.probe(EvCASFail, "%v bits %#x", a.n, bits)
	if a.holding {
		a.wait = waitCond{kind: waitLeafBits, what: "bits of leaf " + a.n.String(), slot: a.h.slot, bits: bits}
		return resBlocked, false
	}
	now := c.now()
	if a.casSince == 0 {
		a.casSince = now
	} else if time.Duration(now-a.casSince) > c.cfg.EscalateAfter {
		a.target, a.why = a.n.parent(), "leaf keeps failing"
		return resEscalate, false
	}
	if a.mode == Shared { // wait for the exclusive bits to clear before counting again
		if err := c.waitFor(ctx, waitCond{kind: waitLeafBits, slot: a.h.slot, bits: bits}); err != nil {
			return resCanceled, false
		}
	}
	if ctx.Err() != nil {
		return resCanceled, false
	}
	return 0, true
}

// awaitGroups waits, holding our exclusive bits, until the shared holders of the leaf's groups we
// need are gone: new shared requests see our bits and back off, so the counts only fall; if
// they stay unchanged for a lease the holders are dead and one masked CAS zeroes them.
func (a *attempt) awaitGroups(ctx context.Context, gmask uint64) (result, bool) {
	c := a.c
	p := a.h.slot.Add(8)
	var seen uint64
	var since int64
	first := true
	for {
		w, err := verbs.SpinRead(c.ep, p)
		if err != nil {
			panic(verbsError{err})
		}
		if w&gmask == 0 {
			return 0, true
		}
		now := c.now()
		if first || w&gmask != seen {
			seen, since, first = w&gmask, now, false
		} else if now-since >= lease(&c.cfg, 1) {
			if _, ok, err := verbs.MaskedCAS(c.ep, p, seen, gmask, 0, gmask); err != nil {
				panic(verbsError{err})
			} else if ok {
				c.stats.Recoveries.Add(1)
				c.probe(EvRecover, "leaf %v: shared counts %#x dropped after a lease", a.n, seen)
			}
			first = true
		}
		if ctx.Err() != nil {
			a.undo()
			return resCanceled, false
		}
		c.pause()
	}
}

// checkDescendants is the end of phase (d) at an internal node: read the node and its internal
// descendants within M levels (one READ per level and generation) until every notification
// counter pair is balanced, and (exclusive) no shared holder occupies the node itself. A pair
// whose released counter stays unchanged for H leases (H = the node's height) is repaired by
// releasing the notifications that were outstanding when the wait began (the paper sets
// DCnt := DMax, which would also swallow notifications of live newcomers); a shared count of the
// node unchanged for a lease after the wait is dropped (new shared holders back off once Occ
// is set, so the count only falls).
func (a *attempt) checkDescendants(ctx context.Context) (result, bool) {
	c, cfg := a.c, &a.c.cfg
	H := a.lay.Height()
	from, to := checkDepths(a.n, H, cfg.M)
	var wrs []verbs.WorkRequest
	for d := from; d <= to; d++ {
		w := uint64(1) << (2 * uint(d-a.n.d))
		for _, f := range a.lay.fragments(d, a.n.p*w, (a.n.p+1)*w) {
			for off := uint64(0); off < f.count; off += wordsLimit / slotWords {
				k := min(f.count-off, wordsLimit/slotWords)
				wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpRead, Remote: f.ptr.Add(off * slotBytes), Words: int(k * slotWords),
					Dest: make([]uint64, k*slotWords), Spin: true})
			}
		}
	}
	ws := watches{}
	height := int64(H - a.n.d)
	for {
		if _, err := verbs.Exec(c.ep, wrs); err != nil {
			panic(verbsError{err})
		}
		now := c.now()
		done := true
		for i := range wrs {
			for j := 0; j < len(wrs[i].Dest); j++ {
				w := wrs[i].Dest[j]
				word := wrs[i].Remote.Add(uint64(8 * j))
				isS := j%2 == 1
				if isS && a.mode == Shared {
					continue // shared requests do not conflict with shared notifications
				}
				if isS && i == 0 && j == 1 && a.mode == Exclusive {
					if n := fSOcc.Get(w); n != 0 {
						done = false
						c.tick(ws, word, fSOcc, n, 0, now, 1, sBoundary)
					} else {
						delete(ws, word|1) // (the SOcc watch of the node itself; see tick)
					}
				}
				cnt, mx := fDCnt.Get(w), fDMax.Get(w)
				if cnt == mx {
					delete(ws, word)
					continue
				}
				done = false
				c.tick(ws, word, fDCnt, cnt, mx, now, height, 0)
			}
		}
		if done {
			return 0, true
		}
		if ctx.Err() != nil {
			a.undo()
			return resCanceled, false
		}
		c.pause()
	}
}

// watch is a counter a waiter needs to change: its value, since when it has not changed, and
// the value to set it to if its holders are presumed dead.
type watch struct {
	val, target uint64
	since       int64
}

type watches map[verbs.Ptr]*watch

// tick observes field f of word at value v. A new or changed value (re)starts the watch with
// target (a DCnt watch keeps the DMax seen when it started: only notifications outstanding for
// the whole period are presumed dead). After k leases without change it sets the field to the
// target with a masked CAS that fails if the field moved.
func (c *Client) tick(ws watches, word verbs.Ptr, f verbs.Field, v, target uint64, now, k int64, _ uint64) {
	key := word
	if f == fSOcc {
		key = word | 1 // separate from the DCnt watch of the same word
	}
	w := ws[key]
	if w == nil || w.val != v {
		ws[key] = &watch{val: v, target: target, since: now}
		return
	}
	if now-w.since < lease(&c.cfg, k) {
		return
	}
	_, ok, err := verbs.MaskedCAS(c.ep, word, f.Put(v), f.Mask(), f.Put(w.target), f.Mask())
	if err != nil {
		panic(verbsError{err})
	}
	delete(ws, key)
	if ok {
		c.stats.Recoveries.Add(1)
		c.probe(EvRecover, "word %v: %d -> %d after %d leases", word, v, w.target, k)
	}
}

// verbsError carries a verbs failure out of the protocol; LockRange and Unlock return it. The
// request's partial state is then left to lease recovery, like a crashed client's.
type verbsError struct{ err error }

func catch(err *error) {
	if r := recover(); r != nil {
		ve, ok := r.(verbsError)
		if !ok {
			panic(r)
		}
		*err = fmt.Errorf("citron: %w", ve.err)
	}
}
