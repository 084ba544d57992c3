// Package history records what lock clients observe and checks the record for violations of
// mutual exclusion, fencing-token order, FIFO order and liveness ("nothing lost").
//
// # What a history is
//
// A history is a set of [Event]s, each stamped with a time on one clock shared by all recorders
// (tests run clients in one process, so time.Now is that clock). The events of one acquisition of
// a lock by a transaction are: [AcquireSent] (before the first acquire is sent), then [Granted]
// (after the client observed the grant) or [Rejected] (a definite refusal) or [Abandoned] (the
// client gave up, e.g. its context ended); after Granted, optionally [Renewed] (a lease renewal,
// carrying the new deadline), then [Released] (stamped BEFORE the release is sent) or [Lost] (the
// lease was lost; stamped with the grant's lease deadline).
//
// # What "at once" means
//
// The checker can only see client-side observations, so it gives every grant a holder interval
// [start, end): start is when the grant was observed, end is the earliest of the release (stamped
// before it is sent), the loss of the lease, and the last known lease deadline
// ([client.Grant.Deadline]). In a correct system these intervals never overlap for conflicting
// modes: the server grants the next exclusive holder only after the previous holder's release
// arrived (so after it was sent, so after its interval ended), or after the previous holder's lease
// expired on the server, which is no earlier than the client-side deadline (the client counts the
// lease from the moment it sent its request, the server from a later moment). Intervals are half
// open, so a release and a grant stamped with the same instant do not conflict.
//
// A grant observed only after its last known deadline (the network held it longer than the lease)
// gives an empty interval: the holder was never protected, so the interval conflicts with nothing
// and orders nothing for the fencing check (the server may well have granted the lock onward
// meanwhile, with a larger token). Such grants still count for token reuse and FIFO.
//
// # What Check verifies
//
//   - exclusion: no two intervals of one lock overlap where either is exclusive;
//   - no double grants: one acquisition is granted once (a repeated grant must repeat the token),
//     and no token is granted to two transactions of one lock;
//   - fencing: for two grants of one lock whose intervals are ordered (one ends before the other
//     starts) and of which at least one is exclusive, the later has the larger token (two shared
//     grants may reach their clients in either order);
//   - FIFO, only when the server-side acceptance order is given ([Options.AcceptOrder], e.g. from an
//     [AcceptLog] on the server's socket): among granted requests of equal priority, the one
//     accepted first has the smaller token (a request must be left out of the order if the server
//     forgot it and accepted it again, see AcceptLog). Tokens are drawn in grant order on the server, so this
//     checks that grants follow acceptance order. Client-side send order is NOT acceptance order
//     (loss, retransmission and reordering change it), so without AcceptOrder FIFO is not checked;
//   - nothing lost ([Options.RequireOutcome]): every AcquireSent ends in Granted or Rejected (and,
//     unless [Options.AllowAbandoned], not Abandoned).
//
// It cannot see: how long the server thinks a lock is held (only the client-side interval, which
// is shorter), grants the client never reported (a client library gives stray grants back), or
// whether a holder actually stopped using a resource at its deadline.
package history

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// Kind is the kind of an event.
type Kind uint8

// Event kinds. See the package documentation for when each is recorded.
const (
	AcquireSent Kind = iota + 1
	Granted
	Renewed
	Released
	Lost
	Rejected
	Abandoned
)

var kindNames = [...]string{"?", "acquire-sent", "granted", "renewed", "released", "lost", "rejected", "abandoned"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Event is one client-side observation.
type Event struct {
	Kind Kind
	Lock uint32
	Txn  uint64
	// Mode is the requested (AcquireSent) or granted (Granted) mode.
	Mode wire.Mode
	// Priority of the request (AcquireSent); used by the FIFO check.
	Priority uint8
	// Token is the fencing token (Granted).
	Token uint64
	// Deadline is the lease deadline (Granted, Renewed); zero if unknown.
	Deadline time.Time
	// At is when the event happened; Record sets it to time.Now() if it is zero.
	At time.Time
	// Client names the recording client, for messages.
	Client string

	seq int // order of recording, breaks ties in At
}

func (e Event) String() string {
	s := fmt.Sprintf("%s lock=%d txn=%#x", e.Kind, e.Lock, e.Txn)
	if e.Kind == Granted || e.Kind == AcquireSent {
		s += " mode=" + e.Mode.String()
	}
	if e.Token != 0 {
		s += fmt.Sprintf(" token=%d", e.Token)
	}
	if e.Client != "" {
		s += " client=" + e.Client
	}
	return s
}

// Recorder collects events. It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Event // guarded by mu
}

// Record appends e, stamping it with time.Now() if e.At is zero.
func (r *Recorder) Record(e Event) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	r.mu.Lock()
	e.seq = len(r.events)
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, in recording order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Len returns the number of events recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// Options select the optional checks.
type Options struct {
	// AcceptOrder, if set, gives per lock the transactions in the order the server accepted their
	// acquires; it enables the FIFO check.
	AcceptOrder map[uint32][]uint64
	// RequireOutcome reports every acquisition that was sent but neither granted nor rejected.
	RequireOutcome bool
	// AllowAbandoned accepts Abandoned as an outcome under RequireOutcome.
	AllowAbandoned bool
}

// Violation is one broken property.
type Violation struct {
	// Rule is "exclusion", "double-grant", "token-reuse", "fencing", "fifo", "lost" or "sequence".
	Rule   string
	Lock   uint32
	Txns   []uint64
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: lock %d txns %#x: %s", v.Rule, v.Lock, v.Txns, v.Detail)
}

// Interval is a holder interval derived from a history: [Start, End), End zero if still held
// with no known deadline.
type Interval struct {
	Lock       uint32
	Txn        uint64
	Mode       wire.Mode
	Token      uint64
	Priority   uint8
	Start, End time.Time
	// Client is the recording client of the grant.
	Client string
}

func (iv *Interval) open() bool { return iv.End.IsZero() }

// empty reports whether iv holds no instant: it ended when it started (a grant observed after
// its deadline). See the package documentation.
func (iv *Interval) empty() bool { return !iv.open() && !iv.End.After(iv.Start) }

// endsBy reports whether iv ends at or before t.
func (iv *Interval) endsBy(t time.Time) bool { return !iv.open() && !iv.End.After(t) }

func (iv *Interval) overlaps(o *Interval) bool {
	return !iv.endsBy(o.Start) && !o.endsBy(iv.Start)
}

type txnKey struct {
	lock uint32
	txn  uint64
}

// Intervals derives the holder intervals of a history, and the violations found on the way
// (double grants, events out of sequence, lost acquisitions under opts.RequireOutcome). Events are
// taken in the order they were recorded (by a Recorder; events that did not pass through one, in
// the order given), so every acquisition's events must be recorded in the order they happened.
func Intervals(events []Event, opts Options) ([]Interval, []Violation) {
	// The events of one acquisition are taken in recording order, which is their causal order
	// (a release can carry an earlier time than its grant: the lease deadline, if the lease ran
	// out before the holder looked). The times only bound the intervals.
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b Event) int { return cmp.Compare(a.seq, b.seq) })
	type state struct {
		pending  bool
		priority uint8
		open     int // index into ivs of the open grant, or -1
		deadline time.Time
		last     Event
	}
	var ivs []Interval
	var vs []Violation
	states := make(map[txnKey]*state)
	closeIv := func(st *state, end time.Time) {
		iv := &ivs[st.open]
		if !st.deadline.IsZero() && st.deadline.Before(end) {
			end = st.deadline
		}
		if end.Before(iv.Start) {
			end = iv.Start
		}
		iv.End = end
		st.open = -1
	}
	for _, e := range evs {
		k := txnKey{e.Lock, e.Txn}
		st := states[k]
		if st == nil {
			st = &state{open: -1}
			states[k] = st
		}
		switch e.Kind {
		case AcquireSent:
			st.pending, st.priority = true, e.Priority
		case Granted:
			if st.open >= 0 {
				if ivs[st.open].Token != e.Token {
					vs = append(vs, Violation{"double-grant", e.Lock, []uint64{e.Txn},
						fmt.Sprintf("granted token %d while holding token %d", e.Token, ivs[st.open].Token)})
				}
				continue
			}
			st.pending = false
			st.deadline = e.Deadline
			ivs = append(ivs, Interval{Lock: e.Lock, Txn: e.Txn, Mode: e.Mode, Token: e.Token,
				Priority: st.priority, Start: e.At, Client: e.Client})
			st.open = len(ivs) - 1
		case Renewed:
			if st.open >= 0 && e.Deadline.After(st.deadline) {
				st.deadline = e.Deadline
			}
		case Released, Lost:
			if st.open >= 0 {
				closeIv(st, e.At)
			}
		case Rejected, Abandoned:
			if st.open >= 0 {
				vs = append(vs, Violation{"sequence", e.Lock, []uint64{e.Txn}, e.Kind.String() + " while holding"})
			}
			st.pending = false
			if e.Kind == Abandoned && opts.RequireOutcome && !opts.AllowAbandoned {
				vs = append(vs, Violation{"lost", e.Lock, []uint64{e.Txn}, "acquire abandoned"})
			}
		}
		st.last = e
	}
	for k, st := range states {
		if st.open >= 0 && !st.deadline.IsZero() {
			closeIv(st, st.deadline)
		}
		if st.pending && opts.RequireOutcome {
			vs = append(vs, Violation{"lost", k.lock, []uint64{k.txn}, "acquire sent, never granted nor rejected"})
		}
	}
	return ivs, vs
}

// Check derives the holder intervals of events and checks them; it returns every violation found,
// sorted by rule and lock.
func Check(events []Event, opts Options) []Violation {
	ivs, vs := Intervals(events, opts)
	byLock := make(map[uint32][]*Interval)
	for i := range ivs {
		byLock[ivs[i].Lock] = append(byLock[ivs[i].Lock], &ivs[i])
	}
	for lock, l := range byLock {
		vs = append(vs, checkLock(lock, l)...)
	}
	for lock, order := range opts.AcceptOrder {
		vs = append(vs, checkFIFO(lock, order, byLock[lock])...)
	}
	slices.SortStableFunc(vs, func(a, b Violation) int {
		if c := cmp.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return cmp.Compare(a.Lock, b.Lock)
	})
	return vs
}

// checkLock checks exclusion, token uniqueness and fencing for the intervals of one lock. Empty
// intervals take part only in the token-uniqueness check.
func checkLock(lock uint32, all []*Interval) []Violation {
	var vs []Violation
	slices.SortFunc(all, func(a, b *Interval) int { return a.Start.Compare(b.Start) })
	ivs := slices.DeleteFunc(slices.Clone(all), (*Interval).empty)
	// Exclusion: sweep by start time keeping the intervals still open at each start.
	var active []*Interval
	for _, iv := range ivs {
		kept := active[:0]
		for _, a := range active {
			if !a.endsBy(iv.Start) {
				kept = append(kept, a)
			}
		}
		active = kept
		for _, a := range active {
			if a.overlaps(iv) && (a.Mode == wire.Exclusive || iv.Mode == wire.Exclusive) {
				vs = append(vs, Violation{"exclusion", lock, []uint64{a.Txn, iv.Txn}, fmt.Sprintf(
					"%s holder (token %d, %s) and %s holder (token %d, %s) at once: [%s, %s) and [%s, %s)",
					a.Mode, a.Token, a.Client, iv.Mode, iv.Token, iv.Client, stamp(a.Start), stamp(a.End),
					stamp(iv.Start), stamp(iv.End))})
			}
		}
		active = append(active, iv)
	}
	// Token reuse.
	byToken := make(map[uint64]*Interval)
	for _, iv := range all {
		if o := byToken[iv.Token]; o != nil && o.Txn != iv.Txn {
			vs = append(vs, Violation{"token-reuse", lock, []uint64{o.Txn, iv.Txn},
				fmt.Sprintf("token %d granted twice", iv.Token)})
		}
		byToken[iv.Token] = iv
	}
	// Fencing: every interval that ended by iv's start, where either is exclusive, has a smaller
	// token. (Two shared grants may reach their clients in either order, so the order of their
	// observed intervals says nothing about their tokens.) Walk the intervals by end time alongside,
	// keeping the largest token among those that have ended, overall and among exclusive ones.
	ended := slices.Clone(ivs)
	ended = slices.DeleteFunc(ended, func(iv *Interval) bool { return iv.open() })
	slices.SortFunc(ended, func(a, b *Interval) int { return a.End.Compare(b.End) })
	var maxAll, maxX *Interval
	j := 0
	for _, iv := range ivs {
		for j < len(ended) && ended[j].End.Before(iv.Start) || j < len(ended) && ended[j].End.Equal(iv.Start) &&
			ended[j] != iv {
			e := ended[j]
			if maxAll == nil || e.Token > maxAll.Token {
				maxAll = e
			}
			if e.Mode == wire.Exclusive && (maxX == nil || e.Token > maxX.Token) {
				maxX = e
			}
			j++
		}
		m := maxX
		if iv.Mode == wire.Exclusive {
			m = maxAll
		}
		if m != nil && m.Token >= iv.Token {
			vs = append(vs, Violation{"fencing", lock, []uint64{m.Txn, iv.Txn}, fmt.Sprintf(
				"token %d granted after the %s holder with token %d ended", iv.Token, m.Mode, m.Token)})
		}
	}
	return vs
}

// checkFIFO checks that, among granted requests of equal priority, acceptance order is token order.
func checkFIFO(lock uint32, order []uint64, ivs []*Interval) []Violation {
	first := make(map[uint64]*Interval) // the first grant of each txn on this lock
	for _, iv := range ivs {
		if f := first[iv.Txn]; f == nil || iv.Start.Before(f.Start) {
			first[iv.Txn] = iv
		}
	}
	var vs []Violation
	maxByPrio := make(map[uint8]*Interval)
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
			vs = append(vs, Violation{"fifo", lock, []uint64{m.Txn, iv.Txn}, fmt.Sprintf(
				"txn %#x accepted first but granted token %d after txn %#x's token %d", m.Txn, m.Token, iv.Txn,
				iv.Token)})
		}
		if m := maxByPrio[iv.Priority]; m == nil || iv.Token > m.Token {
			maxByPrio[iv.Priority] = iv
		}
	}
	return vs
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "∞"
	}
	return t.Format("15:04:05.000000")
}

// AcceptLog records the order in which a server accepted acquires: the first acquire of each
// (lock, txn) it read, in reading order. Feed it every datagram the server reads with Observe and
// every datagram it sends with ObserveSent (e.g. from a net.PacketConn wrapper on the server's
// socket, inside any fault injection). It is safe for concurrent use.
//
// The order is the server's acceptance order if the server processes the requests of one lock in
// the order it reads them (one socket, one reader). A request can be accepted twice: when its
// grant is lost and its lease runs out before a retransmission fetches it again, the server
// forgets it, and the next retransmission is a new request at the back of the queue. The log sees
// that as grants of one (lock, txn) with different tokens, and leaves such requests out of Order.
type AcceptLog struct {
	mu     sync.Mutex
	seen   map[txnKey]bool     // guarded by mu
	order  map[uint32][]uint64 // guarded by mu
	tokens map[txnKey]uint64   // guarded by mu: the first token granted
	again  map[txnKey]bool     // guarded by mu: granted with two tokens
}

func (l *AcceptLog) init() {
	if l.seen == nil {
		l.seen, l.order = make(map[txnKey]bool), make(map[uint32][]uint64)
		l.tokens, l.again = make(map[txnKey]uint64), make(map[txnKey]bool)
	}
}

// Observe records b, a datagram the server read, if it is an acquire not seen before.
func (l *AcceptLog) Observe(b []byte) {
	h, err := wire.Parse(b)
	if err != nil || h.Op() != wire.OpAcquire {
		return
	}
	k := txnKey{h.Lock(), h.Txn()}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	if l.seen[k] {
		return
	}
	l.seen[k] = true
	l.order[k.lock] = append(l.order[k.lock], k.txn)
}

// ObserveSent records b, a datagram the server sent, if it is a grant.
func (l *AcceptLog) ObserveSent(b []byte) {
	h, err := wire.Parse(b)
	if err != nil || h.Op() != wire.OpGrant {
		return
	}
	k := txnKey{h.Lock(), h.Txn()}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init()
	if t, ok := l.tokens[k]; !ok {
		l.tokens[k] = h.Token()
	} else if t != h.Token() {
		l.again[k] = true
	}
}

// Order returns the acceptance order per lock, for [Options.AcceptOrder], without the requests
// that were granted twice with different tokens.
func (l *AcceptLog) Order() map[uint32][]uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[uint32][]uint64, len(l.order))
	for lock, txns := range l.order {
		for _, txn := range txns {
			if !l.again[txnKey{lock, txn}] {
				out[lock] = append(out[lock], txn)
			}
		}
	}
	return out
}
