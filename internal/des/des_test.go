package des_test

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/internal/des"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestOrder is the kernel's contract, case by case: events run by time, ties in scheduling
// order, past times clamp to now, cancelled events never run.
func TestOrder(t *testing.T) {
	type op struct {
		at     int64
		name   string
		cancel bool // cancel it right after scheduling everything
	}
	tests := []struct {
		name  string
		start int64
		ops   []op
		until int64
		want  string
		now   int64
	}{
		{"by time", 0, []op{{30, "c", false}, {10, "a", false}, {20, "b", false}}, 100, "a@10 b@20 c@30", 30},
		{"ties in scheduling order", 0, []op{{5, "x", false}, {5, "y", false}, {1, "w", false}, {5, "z", false}}, 100, "w@1 x@5 y@5 z@5", 5},
		{"past clamps to now", 50, []op{{10, "late", false}, {50, "now", false}, {60, "next", false}}, 100, "late@50 now@50 next@60", 60},
		{"until is inclusive", 0, []op{{10, "a", false}, {11, "b", false}}, 10, "a@10", 10},
		{"cancelled never run", 0, []op{{1, "a", false}, {2, "b", true}, {3, "c", false}}, 100, "a@1 c@3", 3},
		{"cancel the head", 0, []op{{1, "a", true}, {2, "b", false}}, 100, "b@2", 2},
		{"nothing due", 7, []op{{20, "a", false}}, 10, "", 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := des.New(tc.start)
			var got []string
			var hs []des.Event
			for _, o := range tc.ops {
				hs = append(hs, s.At(o.at, func() { got = append(got, fmt.Sprintf("%s@%d", o.name, s.Now())) }))
			}
			for i, o := range tc.ops {
				if o.cancel && !s.Cancel(hs[i]) {
					t.Fatalf("cancel %s: not pending", o.name)
				}
			}
			if !s.RunUntil(tc.until, nil) {
				t.Fatal("RunUntil stopped early")
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Fatalf("ran %q, want %q", g, tc.want)
			}
			if s.Now() != tc.now {
				t.Fatalf("now %d, want %d", s.Now(), tc.now)
			}
		})
	}
}

func TestCancelAndPending(t *testing.T) {
	s := des.New(0)
	ran := 0
	a := s.At(10, func() { ran++ })
	b := s.At(20, func() { ran++ })
	if !s.Pending(a) || !s.Pending(b) || s.Pending(des.Event{}) {
		t.Fatal("pending wrong before running")
	}
	if s.Cancel(des.Event{}) {
		t.Fatal("cancelled the zero event")
	}
	s.RunUntil(10, nil)
	if s.Pending(a) || s.Cancel(a) {
		t.Fatal("an event that ran is still pending or cancellable")
	}
	if !s.Cancel(b) || s.Cancel(b) || s.Pending(b) {
		t.Fatal("cancel is not exactly once")
	}
	// The cancelled event's storage is reused: its stale handle must not name the new event.
	c := s.At(30, func() { ran++ })
	if s.Pending(b) || s.Cancel(b) || !s.Pending(c) {
		t.Fatal("a stale handle reached a recycled event")
	}
	s.RunUntil(100, nil)
	if ran != 2 || s.Fired() != 2 || s.Len() != 0 {
		t.Fatalf("ran %d, fired %d, left %d", ran, s.Fired(), s.Len())
	}
}

func TestRunUntilStopAndAdvance(t *testing.T) {
	s := des.New(0)
	n := 0
	for i := range 10 {
		s.At(int64(i), func() { n++ })
	}
	if s.RunUntil(100, func() bool { return n == 4 }) {
		t.Fatal("RunUntil did not report the stop")
	}
	if n != 4 || s.Now() != 3 {
		t.Fatalf("ran %d up to %d, want 4 up to 3", n, s.Now())
	}
	if next, ok := s.Next(); !ok || next != 4 {
		t.Fatalf("next %d %v", next, ok)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("AdvanceTo past a pending event did not panic")
			}
		}()
		s.AdvanceTo(5)
	}()
	s.RunUntil(9, nil)
	s.AdvanceTo(1000)
	s.AdvanceTo(10) // backwards: no effect
	if s.Now() != 1000 {
		t.Fatalf("now %d after AdvanceTo(1000)", s.Now())
	}
	s.After(-5, func() { n++ }) // negative delay: due now
	if s.Step(999) {
		t.Fatal("Step ran an event due after its limit")
	}
	if !s.Step(1000) || n != 11 {
		t.Fatalf("Step: n %d", n)
	}
}

// An event may schedule and cancel others, including at its own time.
func TestEventsScheduleEvents(t *testing.T) {
	s := des.New(0)
	var got []string
	var victim des.Event
	s.At(1, func() {
		got = append(got, "a")
		s.At(1, func() { got = append(got, "a2") }) // same time: after everything already due
		s.Cancel(victim)
	})
	s.At(1, func() { got = append(got, "b") })
	victim = s.At(1, func() { got = append(got, "victim") })
	s.RunUntil(10, nil)
	if g := strings.Join(got, " "); g != "a b a2" {
		t.Fatalf("ran %q", g)
	}
}

func seedOf(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("DES_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("DES_SEED: %v", err)
		}
	}
	t.Logf("seed %d (rerun with DES_SEED=%d)", seed, seed)
	return seed
}

// oracle is the simplest correct event queue: a slice scanned for the minimum (time, seq).
type oracle struct {
	now int64
	seq uint64
	evs []oevent
}

type oevent struct {
	t   int64
	seq uint64
	id  int
}

func (o *oracle) at(t int64, id int) {
	o.seq++
	o.evs = append(o.evs, oevent{max(t, o.now), o.seq, id})
}

func (o *oracle) cancel(id int) bool {
	for i, e := range o.evs {
		if e.id == id {
			o.evs = slices.Delete(o.evs, i, i+1)
			return true
		}
	}
	return false
}

func (o *oracle) step(limit int64) (int, bool) {
	best := -1
	for i, e := range o.evs {
		if best < 0 || e.t < o.evs[best].t || e.t == o.evs[best].t && e.seq < o.evs[best].seq {
			best = i
		}
	}
	if best < 0 || o.evs[best].t > limit {
		return 0, false
	}
	e := o.evs[best]
	o.evs = slices.Delete(o.evs, best, best+1)
	o.now = e.t
	return e.id, true
}

// TestAgainstOracle drives the kernel and the oracle with the same random program (events that
// schedule and cancel more events, runs to random limits, clock advances) and compares the
// order and times of every event run.
func TestAgainstOracle(t *testing.T) {
	seed := seedOf(t)
	for round := range 200 {
		r := rand.New(rand.NewPCG(seed, uint64(round)))
		s := des.New(0)
		o := &oracle{}
		handles := map[int]des.Event{}
		var trace []string
		nextID := 0
		// schedule puts the same event into both; its body, when run by the kernel, makes
		// random further calls whose effect the oracle replays from the recorded script.
		var schedule func(t int64)
		type action struct {
			kind int // 0 schedule, 1 cancel
			t    int64
			id   int
		}
		scripts := map[int][]action{}
		schedule = func(at int64) {
			id := nextID
			nextID++
			var acts []action
			for range r.IntN(3) {
				if r.IntN(3) == 0 && nextID > 0 {
					acts = append(acts, action{kind: 1, id: r.IntN(nextID + 2)})
				} else {
					acts = append(acts, action{kind: 0, t: at + int64(r.IntN(5)) - 1})
				}
			}
			scripts[id] = acts
			o.at(at, id)
			handles[id] = s.At(at, func() {
				trace = append(trace, fmt.Sprintf("%d@%d", id, s.Now()))
				for _, a := range scripts[id] {
					if a.kind == 0 {
						schedule(a.t)
						continue
					}
					got := false
					if h, ok := handles[a.id]; ok {
						got = s.Cancel(h)
					}
					if want := o.cancel(a.id); got != want {
						t.Fatalf("seed %d round %d: cancel %d: kernel %v, oracle %v", seed, round, a.id, got, want)
					}
				}
			})
		}
		for range 1 + r.IntN(50) {
			schedule(int64(r.IntN(40)))
		}
		limit := int64(0)
		for s.Len() > 0 || len(o.evs) > 0 {
			limit += int64(r.IntN(10))
			for {
				// Lockstep: the oracle names the next event, the kernel runs its next one (whose
				// body applies the same schedules and cancels to both), and they must agree.
				id, due := o.step(limit)
				n := len(trace)
				var ran bool
				if r.IntN(2) == 0 {
					ran = s.Step(limit)
				} else {
					stopped := !s.RunUntil(limit, func() bool { return true })
					ran = len(trace) > n
					if ran != stopped {
						t.Fatalf("seed %d round %d: RunUntil reported stop %v after running %v", seed, round, stopped, ran)
					}
				}
				if ran != due {
					t.Fatalf("seed %d round %d: by %d the kernel ran an event: %v, the oracle: %v", seed, round, limit, ran, due)
				}
				if !due {
					break
				}
				if want := fmt.Sprintf("%d@%d", id, o.now); trace[n] != want {
					t.Fatalf("seed %d round %d: kernel ran %s, oracle %s", seed, round, trace[n], want)
				}
			}
			if s.Len() != len(o.evs) {
				t.Fatalf("seed %d round %d: kernel holds %d events, oracle %d", seed, round, s.Len(), len(o.evs))
			}
			if r.IntN(4) == 0 {
				if next, ok := s.Next(); !ok || next > limit+3 {
					s.AdvanceTo(limit + 3)
					o.now = max(o.now, limit+3)
					limit += 3
				}
			}
		}
	}
}

// The same program, a mutant oracle that breaks ties by the newest scheduled event, must be
// told apart: the comparison above can fail.
func TestOracleCatchesTieOrder(t *testing.T) {
	s := des.New(0)
	var got []int
	for i := range 3 {
		s.At(5, func() { got = append(got, i) })
	}
	s.RunUntil(5, nil)
	lifo := []int{2, 1, 0}
	if slices.Equal(got, lifo) {
		t.Fatal("kernel runs ties newest first")
	}
	if !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("tie order %v", got)
	}
}

// Benchmarks: a hold model (each event schedules one more at a random later time) with n
// events pending, against the container/heap queue of boxed events the kernels used before.

func BenchmarkHold(b *testing.B) {
	for _, n := range []int{16, 1024, 65536} {
		b.Run(fmt.Sprintf("des/pending=%d", n), func(b *testing.B) {
			s := des.New(0)
			r := rand.New(rand.NewPCG(1, 2))
			var fn func()
			fn = func() { s.At(s.Now()+1+r.Int64N(1000), fn) }
			for range n {
				s.At(r.Int64N(1000), fn)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.Step(1 << 62)
			}
		})
		b.Run(fmt.Sprintf("containerheap/pending=%d", n), func(b *testing.B) {
			h := &boxedHeap{}
			r := rand.New(rand.NewPCG(1, 2))
			var now int64
			var seq uint64
			var fn func()
			push := func(t int64) {
				seq++
				heap.Push(h, boxed{t: t, seq: seq, fn: fn})
			}
			fn = func() { push(now + 1 + r.Int64N(1000)) }
			for range n {
				push(r.Int64N(1000))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				e := heap.Pop(h).(boxed)
				now = e.t
				e.fn()
			}
		})
	}
}

func BenchmarkCancel(b *testing.B) {
	s := des.New(0)
	r := rand.New(rand.NewPCG(3, 4))
	hs := make([]des.Event, 1024)
	for i := range hs {
		hs[i] = s.At(r.Int64N(1e6), func() {})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := i % len(hs)
		s.Cancel(hs[k])
		hs[k] = s.At(r.Int64N(1e6), func() {})
	}
}

type boxed struct {
	t   int64
	seq uint64
	fn  func()
}

type boxedHeap []boxed

func (h boxedHeap) Len() int { return len(h) }
func (h boxedHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h boxedHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *boxedHeap) Push(x any)   { *h = append(*h, x.(boxed)) }
func (h *boxedHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
