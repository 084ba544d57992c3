// Package des is netlock's discrete-event kernel: a virtual clock in nanoseconds and a queue of
// events ordered by (time, scheduling order), so that a simulation is a deterministic function of
// its inputs. The virtual-time models (rdma/sim and testbed/rackmodel) sit on it.
//
// The kernel is pure: it runs one event at a time on the caller's goroutine and starts no
// goroutines. An event is a func(); At schedules one and returns a handle that Cancel takes back.
// Events due at the same time run in the order they were scheduled (the sequence number breaks
// ties), so a model that schedules deterministically runs deterministically.
//
// Processes ([Proc]) are an optional layer for models whose actors are straight-line code that
// blocks in virtual time (rdma/sim's threads call verbs and wait for completions): a process is
// a coroutine (iter.Pull) that the kernel resumes from an event and that hands control back when
// it blocks. Only one event or process runs at a time, so a model needs no locks.
//
// Invariants:
//   - Now never decreases; an event runs with Now equal to its time;
//   - an event scheduled before Now is due at Now (after the events already due at Now);
//   - among events due at the same time, the one scheduled first runs first;
//   - a cancelled event never runs; Cancel of an event that ran or was cancelled is a no-op.
//
// A Sim is not safe for concurrent use.
package des

import "fmt"

// event is one scheduled callback. idx is its position in the heap, -1 once it has left it (run
// or cancelled); seq is its scheduling order and, for a recycled event, tells a stale handle
// from the current one.
type event struct {
	t   int64
	seq uint64
	fn  func()
	idx int
}

// Event is a handle to a scheduled event, for Cancel and Pending. The zero Event is no event.
type Event struct {
	e   *event
	seq uint64
}

// Sim is a discrete-event simulation: a virtual clock and an event queue (a binary min-heap by
// (time, sequence)). The zero Sim is ready to use, at time 0.
type Sim struct {
	now   int64
	seq   uint64
	q     []*event
	free  []*event
	fired uint64

	running *Proc // the process being resumed, nil between events
	panic   *ProcPanic
}

// New returns a simulation whose clock starts at start (ns).
func New(start int64) *Sim { return &Sim{now: start} }

// Now is the virtual time in ns.
func (s *Sim) Now() int64 { return s.now }

// Len is the number of pending events.
func (s *Sim) Len() int { return len(s.q) }

// Fired is the number of events run so far.
func (s *Sim) Fired() uint64 { return s.fired }

// Next is the time of the earliest pending event; ok is false when none is pending.
func (s *Sim) Next() (t int64, ok bool) {
	if len(s.q) == 0 {
		return 0, false
	}
	return s.q[0].t, true
}

// At schedules fn at virtual time t (at Now if t is earlier) and returns its handle.
func (s *Sim) At(t int64, fn func()) Event {
	if fn == nil {
		panic("des: nil event function")
	}
	if t < s.now {
		t = s.now
	}
	s.seq++
	var e *event
	if n := len(s.free); n > 0 {
		e = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		e = &event{}
	}
	e.t, e.seq, e.fn = t, s.seq, fn
	e.idx = len(s.q)
	s.q = append(s.q, e)
	s.up(e.idx)
	return Event{e: e, seq: e.seq}
}

// After schedules fn d ns from now (d < 0 counts as 0).
func (s *Sim) After(d int64, fn func()) Event { return s.At(s.now+max(d, 0), fn) }

// Pending reports whether ev is scheduled and has neither run nor been cancelled.
func (s *Sim) Pending(ev Event) bool {
	return ev.e != nil && ev.e.seq == ev.seq && ev.e.idx >= 0
}

// Cancel removes ev from the queue; it reports whether ev was pending.
func (s *Sim) Cancel(ev Event) bool {
	if !s.Pending(ev) {
		return false
	}
	e := ev.e
	i := e.idx
	last := len(s.q) - 1
	if i != last {
		s.swap(i, last)
	}
	s.q[last] = nil
	s.q = s.q[:last]
	if i != last {
		if !s.down(i) {
			s.up(i)
		}
	}
	s.release(e)
	return true
}

// release takes e out of service and keeps it for reuse.
func (s *Sim) release(e *event) {
	e.idx, e.fn = -1, nil
	s.free = append(s.free, e)
}

// Step runs the earliest pending event if it is due at or before limit and reports whether it
// ran one. The clock moves to the event's time first.
func (s *Sim) Step(limit int64) bool {
	if len(s.q) == 0 || s.q[0].t > limit {
		return false
	}
	e := s.pop()
	s.now = e.t
	fn := e.fn
	s.release(e)
	s.fired++
	fn()
	return true
}

// RunUntil runs the events due at or before until, in order. It returns early, with false, after
// an event for which stop (if not nil) reports true, or after a process panicked (see Panic);
// otherwise it returns true once no event is due at or before until. It leaves the clock at the
// last event's time; AdvanceTo moves it further.
func (s *Sim) RunUntil(until int64, stop func() bool) bool {
	if s.running != nil {
		panic("des: RunUntil called from a process")
	}
	for s.panic == nil && s.Step(until) {
		if stop != nil && stop() {
			return false
		}
	}
	return s.panic == nil
}

// AdvanceTo moves the clock forward to t (no earlier than Now). It panics if an event is due
// before t: those must run first.
func (s *Sim) AdvanceTo(t int64) {
	if t <= s.now {
		return
	}
	if len(s.q) > 0 && s.q[0].t < t {
		panic(fmt.Sprintf("des: advance to %d past an event due at %d", t, s.q[0].t))
	}
	s.now = t
}

func (s *Sim) less(i, j int) bool {
	a, b := s.q[i], s.q[j]
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

func (s *Sim) swap(i, j int) {
	s.q[i], s.q[j] = s.q[j], s.q[i]
	s.q[i].idx = i
	s.q[j].idx = j
}

func (s *Sim) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s.swap(i, p)
		i = p
	}
}

// down sifts element i down and reports whether it moved.
func (s *Sim) down(i int) bool {
	i0, n := i, len(s.q)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			break
		}
		s.swap(i, m)
		i = m
	}
	return i > i0
}

func (s *Sim) pop() *event {
	e := s.q[0]
	last := len(s.q) - 1
	if last > 0 {
		s.swap(0, last)
	}
	s.q[last] = nil
	s.q = s.q[:last]
	if last > 0 {
		s.down(0)
	}
	return e
}
