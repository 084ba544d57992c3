package history

import (
	"container/heap"
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

var seedFlag = flag.Uint64("history.seed", 0, "seed of TestRandomized (0: from the clock)")

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

const (
	X = wire.Exclusive
	S = wire.Shared
)

func sent(txn uint64, mode wire.Mode, at int) Event {
	return Event{Kind: AcquireSent, Lock: 1, Txn: txn, Mode: mode, At: ms(at)}
}

func granted(txn uint64, mode wire.Mode, token uint64, at, deadline int) Event {
	e := Event{Kind: Granted, Lock: 1, Txn: txn, Mode: mode, Token: token, At: ms(at)}
	if deadline > 0 {
		e.Deadline = ms(deadline)
	}
	return e
}

func ev(k Kind, txn uint64, at int) Event { return Event{Kind: k, Lock: 1, Txn: txn, At: ms(at)} }

func renewed(txn uint64, at, deadline int) Event {
	return Event{Kind: Renewed, Lock: 1, Txn: txn, At: ms(at), Deadline: ms(deadline)}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		events []Event
		opts   Options
		want   []string // rules of the expected violations, sorted
	}{
		{"sequential exclusive", []Event{
			sent(1, X, 0), sent(2, X, 1), granted(1, X, 10, 2, 0), ev(Released, 1, 5), granted(2, X, 11, 6, 0),
			ev(Released, 2, 9)}, Options{RequireOutcome: true}, nil},
		{"touching intervals", []Event{
			granted(1, X, 10, 0, 0), ev(Released, 1, 5), granted(2, X, 11, 5, 0), ev(Released, 2, 9)}, Options{}, nil},
		{"concurrent shared", []Event{
			granted(1, S, 10, 0, 0), granted(2, S, 11, 1, 0), ev(Released, 1, 5), ev(Released, 2, 6),
			granted(3, X, 12, 7, 0)}, Options{}, nil},
		{"shared grants observed out of token order", []Event{
			granted(2, S, 11, 0, 0), ev(Released, 2, 1), granted(1, S, 10, 2, 0), ev(Released, 1, 3)}, Options{}, nil},
		{"lease expiry frees the lock", []Event{
			granted(1, X, 10, 0, 10), granted(2, X, 11, 12, 0)}, Options{}, nil},
		{"lost at the deadline", []Event{
			granted(1, X, 10, 0, 100), ev(Lost, 1, 10), granted(2, X, 11, 12, 0)}, Options{}, nil},
		{"renewal then release", []Event{
			granted(1, X, 10, 0, 10), renewed(1, 5, 20), ev(Released, 1, 15), granted(2, X, 11, 16, 0)}, Options{}, nil},
		{"fifo in order", []Event{
			granted(1, X, 10, 0, 0), ev(Released, 1, 5), granted(2, X, 11, 6, 0), ev(Released, 2, 9)},
			Options{AcceptOrder: map[uint32][]uint64{1: {1, 3, 2}}}, nil},
		{"rejected and abandoned are outcomes", []Event{
			sent(1, X, 0), ev(Rejected, 1, 1), sent(2, X, 2), ev(Abandoned, 2, 3)},
			Options{RequireOutcome: true, AllowAbandoned: true}, nil},
		{"lease ran out before the grant was looked at", []Event{
			granted(1, X, 10, 5, 0), ev(Released, 1, 3), granted(2, X, 11, 6, 0), ev(Released, 2, 9)}, Options{}, nil},
		{"grant observed after its lease, inside another holder's interval", []Event{
			granted(1, X, 10, 0, 0), granted(2, S, 9, 5, 0), ev(Released, 2, 3), ev(Released, 1, 10)}, Options{}, nil},
		{"grant observed after its lease, after a later holder ended", []Event{
			granted(1, S, 11, 0, 0), ev(Released, 1, 5), granted(2, X, 10, 6, 4), ev(Released, 2, 4)}, Options{}, nil},
		{"duplicate grant with the same token", []Event{
			granted(1, X, 10, 0, 0), granted(1, X, 10, 1, 0), ev(Released, 1, 2)}, Options{}, nil},

		{"exclusive overlap", []Event{
			granted(1, X, 10, 0, 0), granted(2, X, 11, 5, 0), ev(Released, 1, 10), ev(Released, 2, 12)},
			Options{}, []string{"exclusion"}},
		{"shared inside exclusive", []Event{
			granted(1, X, 10, 0, 0), granted(2, S, 11, 5, 0), ev(Released, 2, 6), ev(Released, 1, 10)},
			Options{}, []string{"exclusion"}},
		{"grant before the old lease deadline", []Event{
			granted(1, X, 10, 0, 10), granted(2, X, 11, 8, 0)}, Options{}, []string{"exclusion"}},
		{"grant before the renewed deadline", []Event{
			granted(1, X, 10, 0, 10), renewed(1, 5, 20), granted(2, X, 11, 15, 0)}, Options{}, []string{"exclusion"}},
		{"holder never released", []Event{
			granted(1, X, 10, 0, 0), granted(2, X, 11, 100, 0)}, Options{}, []string{"exclusion"}},
		{"fencing token goes backwards", []Event{
			granted(1, X, 10, 0, 0), ev(Released, 1, 5), granted(2, X, 9, 6, 0), ev(Released, 2, 7)},
			Options{}, []string{"fencing"}},
		{"fencing after shared", []Event{
			granted(1, S, 10, 0, 0), ev(Released, 1, 5), granted(2, X, 9, 6, 0), ev(Released, 2, 7)},
			Options{}, []string{"fencing"}},
		{"grant observed before its lease ran out, inside another holder's interval", []Event{
			granted(1, X, 10, 0, 0), granted(2, S, 9, 5, 0), ev(Released, 2, 6), ev(Released, 1, 10)},
			Options{}, []string{"exclusion"}},
		{"token reused by a grant observed after its lease", []Event{
			granted(1, X, 10, 0, 0), ev(Released, 1, 5), granted(2, X, 10, 6, 0), ev(Released, 2, 4)},
			Options{}, []string{"token-reuse"}},
		{"token reused", []Event{
			granted(1, S, 10, 0, 0), granted(2, S, 10, 1, 0), ev(Released, 1, 5), ev(Released, 2, 5)},
			Options{}, []string{"token-reuse"}},
		{"granted twice", []Event{
			granted(1, X, 10, 0, 0), granted(1, X, 12, 1, 0), ev(Released, 1, 5)}, Options{}, []string{"double-grant"}},
		{"fifo broken", []Event{
			granted(2, X, 10, 0, 0), ev(Released, 2, 5), granted(1, X, 11, 6, 0), ev(Released, 1, 9)},
			Options{AcceptOrder: map[uint32][]uint64{1: {1, 2}}}, []string{"fifo"}},
		{"acquire lost", []Event{sent(1, X, 0), sent(2, X, 0), granted(2, X, 10, 1, 0)},
			Options{RequireOutcome: true}, []string{"lost"}},
		{"abandoned not allowed", []Event{sent(1, X, 0), ev(Abandoned, 1, 5)},
			Options{RequireOutcome: true}, []string{"lost"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Recorder
			for _, e := range tt.events {
				r.Record(e)
			}
			vs := Check(r.Events(), tt.opts)
			var got []string
			for _, v := range vs {
				got = append(got, v.Rule)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations %v, want rules %v", vs, tt.want)
			}
		})
	}
}

func TestRecorderConcurrent(t *testing.T) {
	var r Recorder
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				r.Record(Event{Kind: AcquireSent, Lock: uint32(i), Txn: uint64(j + 1)})
			}
		}()
	}
	wg.Wait()
	if r.Len() != 800 {
		t.Fatalf("%d events", r.Len())
	}
	for _, e := range r.Events() {
		if e.At.IsZero() {
			t.Fatal("event not stamped")
		}
	}
}

func TestAcceptLog(t *testing.T) {
	var l AcceptLog
	pkt := func(op wire.Op, lock uint32, txn uint64) []byte {
		return wire.Append(nil, &wire.Fields{Op: op, Lock: lock, Txn: txn})
	}
	for _, b := range [][]byte{pkt(wire.OpAcquire, 1, 5), pkt(wire.OpAcquire, 1, 3), pkt(wire.OpAcquire, 1, 5),
		pkt(wire.OpRelease, 1, 9), pkt(wire.OpAcquire, 2, 1), {1, 2, 3}} {
		l.Observe(b)
	}
	got := l.Order()
	if !slices.Equal(got[1], []uint64{5, 3}) || !slices.Equal(got[2], []uint64{1}) || len(got) != 2 {
		t.Errorf("order %v", got)
	}
	// Txn 5 is granted twice with different tokens (its first grant expired unseen): it is left
	// out; a repeated grant with the same token is not a second acceptance.
	grant := func(lock uint32, txn, token uint64) []byte {
		return wire.Append(nil, &wire.Fields{Op: wire.OpGrant, Lock: lock, Txn: txn, Token: token})
	}
	for _, b := range [][]byte{grant(1, 5, 10), grant(1, 3, 11), grant(1, 3, 11), grant(1, 5, 12)} {
		l.ObserveSent(b)
	}
	if got := l.Order(); !slices.Equal(got[1], []uint64{3}) {
		t.Errorf("order after a second grant %v, want [3]", got[1])
	}
}

// sim is a discrete-event simulation of clients, a network with random delays and a correct lock
// server (one priority level), which produces a history that must check clean.
type sim struct {
	rng    *rand.Rand
	now    time.Time
	q      simQueue
	seq    int
	events []Event
	order  map[uint32][]uint64
	token  uint64
	locks  map[uint32]*simLock
	lease  time.Duration
}

type simReq struct {
	lock    uint32
	txn     uint64
	mode    wire.Mode
	sentAt  time.Time
	token   uint64
	crash   bool // the client never releases
	granted bool
}

type simLock struct {
	holders []*simReq
	waiters []*simReq
}

type simEvent struct {
	at  time.Time
	seq int
	fn  func()
}

type simQueue []simEvent

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(simEvent)) }
func (q *simQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func (s *sim) after(d time.Duration, fn func()) {
	s.seq++
	heap.Push(&s.q, simEvent{s.now.Add(d), s.seq, fn})
}

func (s *sim) delay() time.Duration { return time.Duration(1+s.rng.IntN(2000)) * time.Microsecond }

func (s *sim) record(e Event) {
	e.At = s.now
	s.events = append(s.events, e)
}

func (s *sim) request(r *simReq) {
	r.sentAt = s.now
	s.record(Event{Kind: AcquireSent, Lock: r.lock, Txn: r.txn, Mode: r.mode})
	s.after(s.delay(), func() {
		s.order[r.lock] = append(s.order[r.lock], r.txn)
		l := s.locks[r.lock]
		l.waiters = append(l.waiters, r)
		s.advance(r.lock)
	})
}

func (s *sim) advance(lock uint32) {
	l := s.locks[lock]
	for len(l.waiters) > 0 {
		w := l.waiters[0]
		ok := len(l.holders) == 0
		if w.mode == wire.Shared {
			ok = true
			for _, h := range l.holders {
				ok = ok && h.mode == wire.Shared
			}
		}
		if !ok {
			return
		}
		l.waiters = l.waiters[1:]
		l.holders = append(l.holders, w)
		s.token++
		w.token = s.token
		s.grant(w)
	}
}

func (s *sim) grant(r *simReq) {
	lock := r.lock
	// Server-side expiry at grant time + lease.
	s.after(s.lease, func() {
		if s.remove(r) {
			s.advance(lock)
		}
	})
	s.after(s.delay(), func() {
		deadline := r.sentAt.Add(s.lease)
		if s.now.After(deadline) {
			return // the grant arrived after its deadline: the client does not use it
		}
		r.granted = true
		s.record(Event{Kind: Granted, Lock: lock, Txn: r.txn, Mode: r.mode, Token: r.token, Deadline: deadline})
		if r.crash {
			return
		}
		hold := time.Duration(s.rng.IntN(3000)) * time.Microsecond
		s.after(hold, func() {
			if s.now.After(deadline) {
				s.events = append(s.events, Event{Kind: Lost, Lock: lock, Txn: r.txn, At: deadline})
			}
			s.record(Event{Kind: Released, Lock: lock, Txn: r.txn})
			s.after(s.delay(), func() {
				if s.remove(r) {
					s.advance(lock)
				}
			})
		})
	})
}

func (s *sim) remove(r *simReq) bool {
	l := s.locks[r.lock]
	for i, h := range l.holders {
		if h == r {
			l.holders = slices.Delete(l.holders, i, i+1)
			return true
		}
	}
	return false
}

func runSim(seed uint64, nreq int) *sim {
	s := &sim{rng: rand.New(rand.NewPCG(seed, 1)), now: t0, order: make(map[uint32][]uint64),
		locks: make(map[uint32]*simLock), lease: 5 * time.Millisecond}
	for l := range uint32(3) {
		s.locks[l] = &simLock{}
	}
	for i := range nreq {
		r := &simReq{lock: uint32(s.rng.IntN(3)), txn: uint64(i + 1), mode: wire.Mode(s.rng.IntN(2)),
			crash: s.rng.IntN(10) == 0}
		s.after(time.Duration(s.rng.IntN(nreq*500))*time.Microsecond, func() { s.request(r) })
	}
	for s.q.Len() > 0 {
		e := heap.Pop(&s.q).(simEvent)
		if e.at.After(s.now) {
			s.now = e.at
		}
		e.fn()
	}
	return s
}

// TestRandomized checks simulated correct histories (must be clean) and the same histories with
// one injected fault (must be caught).
func TestRandomized(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -history.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	caught := map[string]int{}
	defer func() {
		t.Logf("faults caught: %v", caught)
		if caught["exclusion"]+caught["fencing"]+caught["fifo"] < 10 {
			t.Errorf("only %v faults injected in 30 rounds: the simulation is too tame", caught)
		}
	}()
	for round := range 30 {
		s := runSim(rng.Uint64(), 60)
		opts := Options{AcceptOrder: s.order}
		if vs := Check(s.events, opts); len(vs) != 0 {
			t.Fatalf("round %d: clean history has violations: %v", round, vs)
		}
		if vs := online(s.events); len(vs) != 0 {
			t.Fatalf("round %d: clean history has violations online: %v", round, vs)
		}
		ivs, _ := Intervals(s.events, opts)
		// A grant released at the instant it was observed has an empty interval, which by
		// design conflicts with nothing and orders nothing (a fault moved onto it is not one):
		// the faults go between grants whose intervals are not empty.
		var xs []int // exclusive grants followed by a later grant of the same lock
		for i, iv := range ivs {
			if iv.Mode != wire.Exclusive || !iv.End.After(iv.Start) {
				continue
			}
			for _, o := range ivs {
				if o.Lock == iv.Lock && o.Start.After(iv.End) && o.End.After(o.Start) {
					xs = append(xs, i)
					break
				}
			}
		}
		if len(xs) == 0 {
			continue
		}
		victim := ivs[xs[rng.IntN(len(xs))]]
		var next Interval // the first grant of the lock after the victim
		for _, o := range ivs {
			if o.Lock == victim.Lock && o.Start.After(victim.End) && o.End.After(o.Start) && (next.Start.IsZero() || o.Start.Before(next.Start)) {
				next = o
			}
		}
		mutated := slices.Clone(s.events)
		var rule string
		switch rng.IntN(3) {
		case 0: // the victim keeps the lock past the next grant
			rule = "exclusion"
			for i := range mutated {
				e := &mutated[i]
				if e.Lock == victim.Lock && e.Txn == victim.Txn {
					switch e.Kind {
					case Granted:
						e.Deadline = time.Time{}
					case Released, Lost:
						e.At = next.Start.Add(time.Nanosecond)
					}
				}
			}
		case 1: // the next grant gets a smaller token
			rule = "fencing"
			for i := range mutated {
				e := &mutated[i]
				if e.Kind == Granted && e.Lock == next.Lock && e.Txn == next.Txn {
					e.Token = victim.Token - 1
				}
			}
		case 2: // the server accepted the next request before the victim
			rule = "fifo"
			order := slices.Clone(s.order[victim.Lock])
			order = slices.DeleteFunc(order, func(x uint64) bool { return x == next.Txn })
			i := slices.Index(order, victim.Txn)
			order = slices.Insert(order, i, next.Txn)
			opts.AcceptOrder = map[uint32][]uint64{victim.Lock: order}
		}
		vs := Check(mutated, opts)
		found := false
		for _, v := range vs {
			found = found || v.Rule == rule
		}
		// The online checker (Retire as the clock advances) finds the same exclusion and fencing
		// violations (FIFO needs the intervals it forgot; a reuse of a forgotten holder's token is
		// a fencing violation).
		if a, b := rulesOf(vs, "fifo", "token-reuse"), rulesOf(online(mutated), "fifo", "token-reuse"); !slices.Equal(a, b) {
			t.Fatalf("round %d: %s fault: Check found %v, the online checker %v", round, rule, a, b)
		}
		if found {
			caught[rule]++
		} else {
			var b strings.Builder
			for _, e := range mutated {
				if e.Lock == victim.Lock {
					b.WriteString(e.At.Format("05.000000") + " " + e.String() + "\n")
				}
			}
			t.Fatalf("round %d: %s fault on txn %#x/%#x not caught; violations %v\n%s", round, rule, victim.Txn,
				next.Txn, vs, b.String())
		}
	}
}

// online checks events as a virtual-time model does, retiring what ended as its clock advances:
// the clock is the latest time of an acquire sent or a grant observed (the simulation stamps them
// when they happen; a loss is stamped with its earlier deadline, and a mutation moves releases
// later, so those do not move the clock).
func online(events []Event) []Violation {
	c := NewChecker(Options{})
	var now time.Time
	for _, e := range recordingOrder(events) {
		if (e.Kind == AcquireSent || e.Kind == Granted) && e.At.After(now) {
			now = e.At
			c.Retire(now)
		}
		c.Observe(e)
	}
	return c.Finish()
}

// rulesOf returns the distinct rules of vs, sorted, leaving out skip.
func rulesOf(vs []Violation, skip ...string) []string {
	var rules []string
	for _, v := range vs {
		if !slices.Contains(skip, v.Rule) && !slices.Contains(rules, v.Rule) {
			rules = append(rules, v.Rule)
		}
	}
	slices.Sort(rules)
	return rules
}

// TestCheckerOnline: the online checker agrees with Check on TestCheck's histories when every
// event is observed in time order, and forgets what has ended: a long history of one lock leaves
// nothing behind but the lock's largest tokens.
func TestCheckerOnline(t *testing.T) {
	// A long history: 100 000 sequential exclusive holders of 50 locks, one of which is granted
	// with a smaller token once.
	c := NewChecker(Options{RequireOutcome: true})
	token := uint64(1)
	for i := range 100_000 {
		at := ms(i)
		lock, txn := uint32(i%50), uint64(i+1)
		c.Retire(at)
		c.Observe(Event{Kind: AcquireSent, Lock: lock, Txn: txn, Mode: X, At: at})
		tk := token
		if i == 77_777 {
			tk = 5
		}
		c.Observe(Event{Kind: Granted, Lock: lock, Txn: txn, Mode: X, Token: tk, At: at,
			Deadline: at.Add(10 * time.Millisecond)})
		c.Observe(Event{Kind: Released, Lock: lock, Txn: txn, At: at.Add(500 * time.Microsecond)})
		token++
	}
	c.Retire(ms(100_001))
	if len(c.acqs) != 0 || len(c.active) != 0 {
		t.Errorf("after the history: %d acquisitions and %d locks with intervals kept", len(c.acqs), len(c.active))
	}
	vs := c.Finish()
	if len(vs) != 1 || vs[0].Rule != "fencing" || vs[0].Lock != 77_777%50 {
		t.Errorf("violations %v, want the one fencing violation", vs)
	}
	// The batch check of a long history of one lock (100 000 holders): linear in the holders up to
	// a sort (the first version of the Checker was cubic on it: the controller's tests' histories
	// took minutes).
	var evs []Event
	for i := range 100_000 {
		at := ms(i)
		evs = append(evs, Event{Kind: Granted, Lock: 1, Txn: uint64(i + 1), Mode: X, Token: uint64(i + 1), At: at,
			Deadline: at.Add(10 * time.Millisecond)}, Event{Kind: Released, Lock: 1, Txn: uint64(i + 1),
			At: at.Add(500 * time.Microsecond)})
	}
	evs[2*50_000].Token = 3
	if vs := Check(evs, Options{}); len(vs) != 2 || vs[0].Rule != "fencing" || vs[1].Rule != "token-reuse" {
		t.Errorf("one lock: violations %v, want a fencing violation and the reuse of token 3", vs)
	}
	// A bounded list of violations.
	c = NewChecker(Options{MaxViolations: 2})
	for i := range 5 {
		c.Observe(granted(uint64(i+1), X, uint64(10+i), i, 0))
	}
	if vs := c.Finish(); len(vs) != 2 || c.Dropped() != 8 {
		t.Errorf("%d violations kept, %d dropped: want 2 and 8 (10 overlapping pairs)", len(vs), c.Dropped())
	}
}
