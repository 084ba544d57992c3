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
// # Online
//
// [Check] is a [Checker] that observes a whole history and finishes it. A model that cannot keep
// its whole history (a virtual-time rack running millions of acquisitions) feeds a Checker as it
// records and calls [Checker.Retire] as its clock advances, so that the intervals that ended are
// checked and forgotten; see Checker for what forgetting gives up.
//
// It cannot see: how long the server thinks a lock is held (only the client-side interval, which
// is shorter), grants the client never reported (a client library gives stray grants back), or
// whether a holder actually stopped using a resource at its deadline.
package history

import (
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
	// MaxViolations, if positive, keeps only the first MaxViolations violations found (a broken
	// run of a model can break a rule millions of times); Checker.Dropped counts the others.
	MaxViolations int
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

type txnKey struct {
	lock uint32
	txn  uint64
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
