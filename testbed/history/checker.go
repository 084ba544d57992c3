package history

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// Checker checks a history while it is recorded: [Checker.Observe] takes the events one at a
// time, in recording order; [Checker.Finish] ends the history and returns every violation.
// [Check] is a Checker that observes a whole history, so the batch check and an online one (a
// virtual-time model checking a run too long to record) share one implementation of the rules
// in the package documentation.
//
// # Memory
//
// A Checker keeps every holder interval until it is told it may forget: [Checker.Retire](before)
// promises that every event stamped before before has been observed and that no grant observed
// later is stamped before before. The intervals that ended by then are checked against
// everything they can still conflict with and forgotten; per lock, the Checker keeps only the
// largest tokens of the forgotten intervals (for the fencing order of later grants) and the
// acquisitions in flight. So a model that calls Retire as its clock advances checks a run of any
// length in memory bounded by its locks and its requests in flight.
//
// What forgetting gives up, and only when Retire is called: token reuse is checked among the
// intervals live at the same time (a token reused by a grant after an exclusive holder that has
// been forgotten is a fencing violation, so only the reuse of a forgotten shared holder's token by
// a later shared holder goes unseen); FIFO ([Options.AcceptOrder]) is checked at Finish over the
// intervals not forgotten; an interval whose lease deadline has passed is taken to end at its
// deadline (a renewal observed after the deadline does not extend it). Without Retire, Finish
// reports exactly what the rules say.
//
// A Checker is not safe for concurrent use.
type Checker struct {
	opts    Options
	keep    bool // keep every interval (Intervals)
	forget  bool // Retire was called: idle acquisitions are dropped
	acqs    map[txnKey]*acq
	locks   map[uint32]*lockHist
	active  map[uint32]*lockHist // locks with live intervals
	all     []*ivl               // every interval in observation order (keep only)
	vs      []Violation
	dropped int
	seq     int
}

// acq is one acquisition of a lock by a transaction.
type acq struct {
	pending  bool
	priority uint8
	iv       *ivl // the interval not closed by a release or a loss (nil: none)
	deadline time.Time
}

// ivl is a holder interval. Until a release or a loss closes it, its end is its acquisition's
// lease deadline (none: open).
type ivl struct {
	Interval
	seq     int
	closed  bool
	fenced  bool // its fencing order has been checked
	ret     bool // retiring in this call of retireLock
	retired bool
	a       *acq
}

// lockHist is what the Checker keeps of one lock.
type lockHist struct {
	lock uint32
	live []*ivl // not retired, in observation order
	// The retired non-empty intervals with the largest tokens, overall and among exclusive ones.
	maxAll, maxX *ivl
	// byToken and byTokenPrev map tokens to the latest interval with that token among those
	// retired by the last two calls of retireLock (token reuse).
	byToken, byTokenPrev map[uint64]*ivl
	// first is the first grant of each transaction, for FIFO (with Options.AcceptOrder only).
	first map[uint64]*ivl
}

// NewChecker returns a Checker for opts.
func NewChecker(opts Options) *Checker {
	return &Checker{opts: opts, acqs: map[txnKey]*acq{}, locks: map[uint32]*lockHist{},
		active: map[uint32]*lockHist{}}
}

// Observe takes the next event of the history (in recording order: every acquisition's events in
// the order they happened).
func (c *Checker) Observe(e Event) {
	k := txnKey{e.Lock, e.Txn}
	a := c.acqs[k]
	if a == nil {
		a = &acq{}
		c.acqs[k] = a
	}
	switch e.Kind {
	case AcquireSent:
		a.pending, a.priority = true, e.Priority
	case Granted:
		if a.iv != nil {
			if a.iv.Token != e.Token {
				c.violate(Violation{"double-grant", e.Lock, []uint64{e.Txn},
					fmt.Sprintf("granted token %d while holding token %d", e.Token, a.iv.Token)})
			}
			break
		}
		a.pending = false
		a.deadline = e.Deadline
		iv := &ivl{Interval: Interval{Lock: e.Lock, Txn: e.Txn, Mode: e.Mode, Token: e.Token, Priority: a.priority,
			Start: e.At, Client: e.Client}, seq: c.seq, a: a}
		c.seq++
		a.iv = iv
		l := c.lock(e.Lock)
		l.live = append(l.live, iv)
		c.active[e.Lock] = l
		if c.keep {
			c.all = append(c.all, iv)
		}
		if c.opts.AcceptOrder != nil {
			if l.first == nil {
				l.first = map[uint64]*ivl{}
			}
			if f := l.first[e.Txn]; f == nil || iv.Start.Before(f.Start) {
				l.first[e.Txn] = iv
			}
		}
	case Renewed:
		if a.iv != nil && e.Deadline.After(a.deadline) {
			a.deadline = e.Deadline
		}
	case Released, Lost:
		if a.iv != nil {
			c.close(a, e.At)
		}
	case Rejected, Abandoned:
		if a.iv != nil {
			c.violate(Violation{"sequence", e.Lock, []uint64{e.Txn}, e.Kind.String() + " while holding"})
		}
		a.pending = false
		if e.Kind == Abandoned && c.opts.RequireOutcome && !c.opts.AllowAbandoned {
			c.violate(Violation{"lost", e.Lock, []uint64{e.Txn}, "acquire abandoned"})
		}
	}
	if c.forget && !a.pending && a.iv == nil {
		delete(c.acqs, k)
	}
}

func (c *Checker) lock(id uint32) *lockHist {
	l := c.locks[id]
	if l == nil {
		l = &lockHist{lock: id}
		c.locks[id] = l
	}
	return l
}

// close ends a's interval at t (a release or a loss), within its lease deadline and not before
// its start.
func (c *Checker) close(a *acq, t time.Time) {
	iv := a.iv
	a.iv = nil
	if iv.retired {
		return // it ended at its deadline
	}
	if !a.deadline.IsZero() && a.deadline.Before(t) {
		t = a.deadline
	}
	if t.Before(iv.Start) {
		t = iv.Start
	}
	iv.End, iv.closed = t, true
}

func (c *Checker) violate(v Violation) {
	if c.opts.MaxViolations > 0 && len(c.vs) >= c.opts.MaxViolations {
		c.dropped++
		return
	}
	c.vs = append(c.vs, v)
}

// end returns iv's end as known now: the release or loss that closed it, else its lease
// deadline; ok is false for an interval without either (open).
func (iv *ivl) end() (t time.Time, ok bool) {
	if iv.closed {
		return iv.End, true
	}
	if iv.a.iv == iv && !iv.a.deadline.IsZero() {
		if iv.a.deadline.Before(iv.Start) {
			return iv.Start, true
		}
		return iv.a.deadline, true
	}
	return time.Time{}, false
}

// isEmpty reports whether iv is known to hold no instant (observed after its deadline).
func (iv *ivl) isEmpty() bool {
	t, ok := iv.end()
	return ok && !t.After(iv.Start)
}

// endsBy reports whether iv is known to end at or before t.
func (iv *ivl) endsBy(t time.Time) bool {
	e, ok := iv.end()
	return ok && !e.After(t)
}

// Retire checks and forgets the intervals that ended by before. The caller promises that every
// event stamped before before has been observed, and that no grant stamped before before will be
// (a virtual-time model calls Retire(now) as its clock advances). See the type's documentation
// for what forgetting gives up.
func (c *Checker) Retire(before time.Time) {
	c.forget = true
	ids := make([]uint32, 0, len(c.active))
	for id := range c.active {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		l := c.active[id]
		c.retireLock(l, before, false)
		if len(l.live) == 0 {
			delete(c.active, id)
		}
	}
}

// Violations returns the violations found so far, in the order they were found (a violation is
// found when the intervals involved have ended: Retire or Finish).
func (c *Checker) Violations() []Violation { return slices.Clone(c.vs) }

// Dropped returns how many violations were found beyond Options.MaxViolations and not kept.
func (c *Checker) Dropped() int { return c.dropped }

// Finish ends the history: intervals still held end at their lease deadlines (or never, without
// one), every rule is checked, and the violations are returned sorted by rule and lock.
func (c *Checker) Finish() []Violation {
	c.finishAcqs()
	ids := make([]uint32, 0, len(c.active))
	for id := range c.active {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c.retireLock(c.active[id], time.Time{}, true)
		delete(c.active, id)
	}
	if c.opts.AcceptOrder != nil {
		locks := make([]uint32, 0, len(c.opts.AcceptOrder))
		for l := range c.opts.AcceptOrder {
			locks = append(locks, l)
		}
		slices.Sort(locks)
		for _, lock := range locks {
			var first map[uint64]*ivl
			if l := c.locks[lock]; l != nil {
				first = l.first
			}
			c.checkFIFO(lock, c.opts.AcceptOrder[lock], first)
		}
	}
	vs := slices.Clone(c.vs)
	slices.SortStableFunc(vs, func(a, b Violation) int {
		if x := cmp.Compare(a.Rule, b.Rule); x != 0 {
			return x
		}
		return cmp.Compare(a.Lock, b.Lock)
	})
	return vs
}

// finishAcqs ends the history's acquisitions: an interval not closed by a release or a loss ends
// at its lease deadline (none: it stays open); an acquire without an outcome is lost under
// RequireOutcome.
func (c *Checker) finishAcqs() {
	keys := make([]txnKey, 0, len(c.acqs))
	for k := range c.acqs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b txnKey) int {
		if x := cmp.Compare(a.lock, b.lock); x != 0 {
			return x
		}
		return cmp.Compare(a.txn, b.txn)
	})
	for _, k := range keys {
		a := c.acqs[k]
		if a.iv != nil && !a.deadline.IsZero() {
			c.close(a, a.deadline)
		}
		if a.pending && c.opts.RequireOutcome {
			c.violate(Violation{"lost", k.lock, []uint64{k.txn}, "acquire sent, never granted nor rejected"})
		}
	}
}

// byStart orders intervals by start, then by observation.
func byStart(a, b *ivl) int {
	if x := a.Start.Compare(b.Start); x != 0 {
		return x
	}
	return cmp.Compare(a.seq, b.seq)
}

// retireLock checks l's live intervals that can be decided and forgets those that ended by before
// (every one when finish). Its cost is O(n log n) in the live intervals (plus the conflicting
// pairs found).
func (c *Checker) retireLock(l *lockHist, before time.Time, finish bool) {
	slices.SortFunc(l.live, byStart)
	var ret []*ivl
	for _, iv := range l.live {
		iv.ret = finish || iv.endsBy(before)
		if iv.ret {
			ret = append(ret, iv)
		}
	}
	// Fencing: every non-empty interval that ended by iv's start, where either is exclusive, has
	// a smaller token (two shared grants may reach their clients in either order). Decided once
	// every event before iv's start is known. The intervals that ended, by end, alongside the
	// ones to check, by start, with the largest tokens so far (from those forgotten on).
	var ended []*ivl
	for _, o := range l.live {
		if _, ok := o.end(); ok && !o.isEmpty() {
			ended = append(ended, o)
		}
	}
	slices.SortStableFunc(ended, func(a, b *ivl) int {
		ae, _ := a.end()
		be, _ := b.end()
		return ae.Compare(be)
	})
	mAll, mX := l.maxAll, l.maxX
	j := 0
	for _, iv := range l.live {
		if iv.fenced || (!finish && !iv.Start.Before(before)) {
			continue
		}
		iv.fenced = true
		for ; j < len(ended); j++ {
			if e, _ := ended[j].end(); e.After(iv.Start) {
				break
			}
			mAll = maxToken(mAll, ended[j])
			if ended[j].Mode == wire.Exclusive {
				mX = maxToken(mX, ended[j])
			}
		}
		if iv.isEmpty() {
			continue
		}
		m := mX
		if iv.Mode == wire.Exclusive {
			m = mAll
		}
		if m != nil && m.Token >= iv.Token {
			c.violate(Violation{"fencing", l.lock, []uint64{m.Txn, iv.Txn}, fmt.Sprintf(
				"token %d granted after the %s holder with token %d ended", iv.Token, m.Mode, m.Token)})
		}
	}
	if len(ret) == 0 {
		return
	}
	// Exclusion: no two non-empty intervals overlap where either is exclusive. A sweep by start
	// keeps the intervals not ended by each start; a pair is checked when the first of the two
	// retires (a later interval starts after it ended).
	var active []*ivl
	for _, iv := range l.live {
		if iv.isEmpty() {
			continue
		}
		kept := active[:0]
		for _, a := range active {
			if !a.endsBy(iv.Start) {
				kept = append(kept, a)
			}
		}
		active = kept
		for _, a := range active {
			if !(a.ret || iv.ret) || (a.Mode != wire.Exclusive && iv.Mode != wire.Exclusive) {
				continue
			}
			ae, _ := a.end()
			be, _ := iv.end()
			c.violate(Violation{"exclusion", l.lock, []uint64{a.Txn, iv.Txn}, fmt.Sprintf(
				"%s holder (token %d, %s) and %s holder (token %d, %s) at once: [%s, %s) and [%s, %s)",
				a.Mode, a.Token, a.Client, iv.Mode, iv.Token, iv.Client, stamp(a.Start), stamp(ae),
				stamp(iv.Start), stamp(be))})
		}
		active = append(active, iv)
	}
	// Token reuse: no token granted to two transactions of the lock (empty intervals included),
	// in start order.
	if l.byToken == nil {
		l.byToken = map[uint64]*ivl{}
	}
	for _, r := range ret {
		o := l.byToken[r.Token]
		if o == nil {
			o = l.byTokenPrev[r.Token]
		}
		if o != nil && o.Txn != r.Txn {
			c.violate(Violation{"token-reuse", l.lock, []uint64{o.Txn, r.Txn}, fmt.Sprintf("token %d granted twice", r.Token)})
		}
		l.byToken[r.Token] = r
	}
	if !finish {
		l.byTokenPrev, l.byToken = l.byToken, nil
	}
	// Forget the retired intervals, keeping the largest tokens.
	for _, r := range ret {
		r.retired = true
		if !r.closed {
			if e, ok := r.end(); ok {
				r.End = e
			}
		}
		if r.isEmptyFinal() {
			continue
		}
		l.maxAll = maxToken(l.maxAll, r)
		if r.Mode == wire.Exclusive {
			l.maxX = maxToken(l.maxX, r)
		}
	}
	l.live = slices.DeleteFunc(l.live, func(iv *ivl) bool { return iv.retired })
}

// isEmptyFinal is isEmpty for a retired interval (its end no longer follows its acquisition).
func (iv *ivl) isEmptyFinal() bool { return !iv.End.IsZero() && !iv.End.After(iv.Start) }

// maxToken returns the one of m and o with the larger token (m on a tie: it ended first).
func maxToken(m, o *ivl) *ivl {
	if m == nil || o.Token > m.Token {
		return o
	}
	return m
}

// checkFIFO checks that, among granted requests of equal priority, acceptance order is token
// order (first: the first grant of each transaction).
func (c *Checker) checkFIFO(lock uint32, order []uint64, first map[uint64]*ivl) {
	maxByPrio := make(map[uint8]*ivl)
	seen := make(map[uint64]bool)
	for _, txn := range order {
		if seen[txn] {
			continue
		}
		seen[txn] = true
		iv := first[txn]
		if iv == nil {
			continue // withdrawn, rejected, or never reported
		}
		if m := maxByPrio[iv.Priority]; m != nil && m.Token > iv.Token {
			c.violate(Violation{"fifo", lock, []uint64{m.Txn, iv.Txn}, fmt.Sprintf(
				"txn %#x accepted first but granted token %d after txn %#x's token %d", m.Txn, m.Token, iv.Txn,
				iv.Token)})
		}
		if m := maxByPrio[iv.Priority]; m == nil || iv.Token > m.Token {
			maxByPrio[iv.Priority] = iv
		}
	}
}

// Intervals derives the holder intervals of a history, and the violations found on the way
// (double grants, events out of sequence, lost acquisitions under opts.RequireOutcome). Events are
// taken in the order they were recorded (by a Recorder; events that did not pass through one, in
// the order given), so every acquisition's events must be recorded in the order they happened.
func Intervals(events []Event, opts Options) ([]Interval, []Violation) {
	c := NewChecker(opts)
	c.keep = true
	for _, e := range recordingOrder(events) {
		c.Observe(e)
	}
	c.finishAcqs()
	ivs := make([]Interval, len(c.all))
	for i, iv := range c.all {
		ivs[i] = iv.Interval
	}
	return ivs, slices.Clone(c.vs)
}

// Check derives the holder intervals of events and checks them; it returns every violation found,
// sorted by rule and lock. It is a Checker that observes every event, then finishes.
func Check(events []Event, opts Options) []Violation {
	c := NewChecker(opts)
	for _, e := range recordingOrder(events) {
		c.Observe(e)
	}
	return c.Finish()
}

// recordingOrder returns events in the order they were recorded (a Recorder's sequence; events
// that did not pass through one keep their order). The events of one acquisition are taken in
// recording order, which is their causal order (a release can carry an earlier time than its
// grant: the lease deadline, if the lease ran out before the holder looked). The times only bound
// the intervals.
func recordingOrder(events []Event) []Event {
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b Event) int { return cmp.Compare(a.seq, b.seq) })
	return evs
}
