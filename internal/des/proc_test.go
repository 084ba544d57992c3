package des_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/internal/des"
)

// Processes interleave by virtual time, one at a time, with events in between.
func TestProcInterleave(t *testing.T) {
	s := des.New(0)
	var log []string
	logf := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }
	for _, name := range []string{"a", "b"} {
		step := int64(3)
		if name == "b" {
			step = 5
		}
		s.Spawn(func(p *des.Proc) {
			for range 3 {
				logf("%s@%d", name, s.Now())
				if s.Running() != p {
					t.Errorf("Running is not the process")
				}
				p.Sleep(step)
			}
		})
	}
	s.At(4, func() {
		logf("ev@%d", s.Now())
		if s.Running() != nil {
			t.Errorf("Running during an event")
		}
	})
	s.RunUntil(100, nil)
	want := "a@0 b@0 a@3 ev@4 b@5 a@6 b@10"
	if g := strings.Join(log, " "); g != want {
		t.Fatalf("ran %q, want %q", g, want)
	}
}

// A process parked without a wake-up stays suspended; another process or an event wakes it.
func TestProcParkAndWake(t *testing.T) {
	s := des.New(0)
	var sleeper *des.Proc
	woke := int64(-1)
	sleeper = s.Spawn(func(p *des.Proc) {
		p.Yield() // parked: nobody has scheduled a wake-up yet
		woke = s.Now()
	})
	s.Spawn(func(p *des.Proc) {
		p.Sleep(7)
		sleeper.WakeAt(s.Now() + 2)
	})
	s.RunUntil(100, nil)
	if woke != 9 || !sleeper.Done() {
		t.Fatalf("woke at %d, done %v", woke, sleeper.Done())
	}
}

// Kill unwinds a suspended process (its defers run), never starts an unstarted one, and leaves
// no goroutine behind (TestMain's leak check).
func TestProcKill(t *testing.T) {
	s := des.New(0)
	var unwound, ranLate bool
	mid := s.Spawn(func(p *des.Proc) {
		defer func() { unwound = true }()
		p.Sleep(10)
		t.Error("killed process resumed")
	})
	s.RunUntil(5, nil)
	late := s.Spawn(func(*des.Proc) { ranLate = true })
	if !mid.Started() || mid.Done() {
		t.Fatal("process not suspended mid-way")
	}
	mid.Kill()
	late.Kill()
	if !unwound || !mid.Done() || ranLate || late.Started() || !late.Done() {
		t.Fatalf("unwound %v done %v; late ran %v started %v done %v", unwound, mid.Done(), ranLate, late.Started(), late.Done())
	}
	// Their pending wake-ups do nothing now.
	s.RunUntil(100, nil)
	mid.Kill() // idempotent
}

// A panic inside a process is recorded and stops the run; the others can then be killed.
func TestProcPanic(t *testing.T) {
	s := des.New(0)
	boom := errors.New("boom")
	other := s.Spawn(func(p *des.Proc) { p.Sleep(1000) })
	bad := s.Spawn(func(p *des.Proc) {
		p.Sleep(3)
		panic(boom)
	})
	after := false
	s.At(4, func() { after = true })
	if s.RunUntil(100, nil) {
		t.Fatal("RunUntil did not stop at the panic")
	}
	pp := s.Panic()
	if pp == nil || pp.Value != boom || pp.Proc != bad || !strings.Contains(string(pp.Stack), "proc_test.go") {
		t.Fatalf("panic record %+v", pp)
	}
	if after || s.Now() != 3 {
		t.Fatalf("ran on after the panic (now %d)", s.Now())
	}
	if s.RunUntil(100, nil) {
		t.Fatal("RunUntil runs on after a recorded panic")
	}
	other.Kill()
}

// Misuse is refused loudly rather than corrupting the schedule.
func TestProcMisuse(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	s := des.New(0)
	p := s.Spawn(func(q *des.Proc) {
		mustPanic("RunUntil from a process", func() { s.RunUntil(10, nil) })
		mustPanic("Kill from a process", func() { q.Kill() })
		q.Sleep(1)
	})
	s.RunUntil(0, nil)
	mustPanic("Yield outside the process", func() { p.Yield() })
	mustPanic("nil event", func() { s.At(1, nil) })
	s.RunUntil(10, nil)
	if !p.Done() {
		t.Fatal("process did not finish")
	}
}

// BenchmarkProcSwitch is the cost of one process sleep and resume (two coroutine switches and an
// event).
func BenchmarkProcSwitch(b *testing.B) {
	s := des.New(0)
	p := s.Spawn(func(p *des.Proc) {
		for {
			p.Sleep(1)
		}
	})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Step(1 << 62)
	}
	b.StopTimer()
	p.Kill()
}

// BenchmarkChanSwitch is the same hand-off done with a goroutine and two channels, as rdma/sim's
// threads did before they became processes.
func BenchmarkChanSwitch(b *testing.B) {
	wake, yield := make(chan struct{}), make(chan struct{})
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-wake:
			case <-stop:
				return
			}
			yield <- struct{}{}
		}
	}()
	s := des.New(0)
	var fn func()
	fn = func() {
		wake <- struct{}{}
		<-yield
		s.At(s.Now()+1, fn)
	}
	s.At(0, fn)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Step(1 << 62)
	}
	b.StopTimer()
	close(stop)
}
