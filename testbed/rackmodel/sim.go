package rackmodel

// The discrete-event kernel: a virtual clock in nanoseconds and a queue of events ordered by
// (time, scheduling order), so a run is a deterministic function of its inputs.

type event struct {
	t   int64
	seq uint64
	fn  func()
}

type sim struct {
	now int64
	seq uint64
	q   []event // binary min-heap by (t, seq)
	n   uint64  // events run
}

func (s *sim) less(i, j int) bool {
	if s.q[i].t != s.q[j].t {
		return s.q[i].t < s.q[j].t
	}
	return s.q[i].seq < s.q[j].seq
}

// at schedules fn at time t (not before now).
func (s *sim) at(t int64, fn func()) {
	if t < s.now {
		t = s.now
	}
	s.seq++
	s.q = append(s.q, event{t: t, seq: s.seq, fn: fn})
	i := len(s.q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s.q[i], s.q[p] = s.q[p], s.q[i]
		i = p
	}
}

func (s *sim) pop() event {
	e := s.q[0]
	last := len(s.q) - 1
	s.q[0] = s.q[last]
	s.q[last] = event{}
	s.q = s.q[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s.q) && s.less(l, m) {
			m = l
		}
		if r < len(s.q) && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s.q[i], s.q[m] = s.q[m], s.q[i]
		i = m
	}
	return e
}

// runUntil runs the events due at or before t, then sets the clock to t. It stops early, with
// false, when stop reports true after an event.
func (s *sim) runUntil(t int64, stop func() bool) bool {
	for len(s.q) > 0 && s.q[0].t <= t {
		e := s.pop()
		s.now = e.t
		s.n++
		e.fn()
		if stop != nil && stop() {
			return false
		}
	}
	if t > s.now {
		s.now = t
	}
	return true
}
