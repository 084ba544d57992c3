package des

import (
	"iter"
	"runtime/debug"
)

// Proc is a process: straight-line Go code that blocks in virtual time. It runs as a coroutine
// (iter.Pull) of the simulation: an event resumes it (WakeAt), it runs until it calls Yield,
// and control returns to the event loop; nothing else runs meanwhile. A process that blocks
// must first arrange to be woken (WakeAt, or a model's own bookkeeping that later calls WakeAt),
// or it stays suspended until killed.
//
// A started process that has neither returned nor been killed holds a goroutine: a model kills
// its remaining processes (Kill) when it is done with the simulation. Kill unwinds a suspended
// process by panicking inside it at its Yield (deferred calls run); a process must not recover
// that panic and go on. A panic raised by a process is recovered, recorded (Sim.Panic) and stops
// RunUntil; the model decides what to do with it. runtime.Goexit inside a process (t.FailNow)
// exits the goroutine that resumed it, as iter.Pull does.
type Proc struct {
	s      *Sim
	next   func() (struct{}, bool)
	stop   func()
	yield  func(struct{}) bool
	resume func()
	// started is set when the body first runs; done once it has returned or been killed.
	started, done bool
}

// ProcPanic is a panic raised inside a process.
type ProcPanic struct {
	Proc  *Proc
	Value any
	Stack []byte
}

// killSignal is the panic value that unwinds a killed process.
type killSignal struct{}

// Spawn creates a process running body and schedules its start at Now.
func (s *Sim) Spawn(body func(p *Proc)) *Proc {
	p := &Proc{s: s}
	p.resume = p.run
	p.next, p.stop = iter.Pull(func(yield func(struct{}) bool) {
		p.yield = yield
		p.started = true
		defer func() {
			r := recover()
			p.done = true
			if r == nil {
				return
			}
			if _, ok := r.(killSignal); ok {
				return
			}
			if s.panic == nil {
				s.panic = &ProcPanic{Proc: p, Value: r, Stack: debug.Stack()}
			}
		}()
		body(p)
	})
	p.WakeAt(s.now)
	return p
}

// Panic is the first panic raised by a process of s, nil if none.
func (s *Sim) Panic() *ProcPanic { return s.panic }

// Running is the process currently running, nil when an event (or nothing) runs.
func (s *Sim) Running() *Proc { return s.running }

// run resumes the process until it yields or returns; it is the process's wake-up event.
func (p *Proc) run() {
	if p.done {
		return
	}
	if p.s.running != nil {
		panic("des: process resumed from a process")
	}
	p.s.running = p
	p.next()
	p.s.running = nil
}

// Sim is the process's simulation.
func (p *Proc) Sim() *Sim { return p.s }

// Done reports whether the process has returned or been killed.
func (p *Proc) Done() bool { return p.done }

// Started reports whether the process's body has begun to run.
func (p *Proc) Started() bool { return p.started }

// WakeAt schedules the process to resume at time t (at Now if earlier).
func (p *Proc) WakeAt(t int64) Event { return p.s.At(t, p.resume) }

// Yield suspends the process until an event resumes it. Called only by the process itself.
func (p *Proc) Yield() {
	if p.s.running != p {
		panic("des: Yield called outside its process")
	}
	if !p.yield(struct{}{}) {
		panic(killSignal{})
	}
}

// SleepUntil suspends the process until time t (it resumes at Now if t is earlier, after the
// events already due).
func (p *Proc) SleepUntil(t int64) {
	p.WakeAt(t)
	p.Yield()
}

// Sleep suspends the process for d ns.
func (p *Proc) Sleep(d int64) { p.SleepUntil(p.s.now + max(d, 0)) }

// Kill ends the process: a suspended one is unwound (its Yield panics, deferred calls run), one
// that never started never runs. Pending wake-ups of a dead process do nothing. Not callable
// from a process.
func (p *Proc) Kill() {
	if p.done {
		return
	}
	if p.s.running != nil {
		panic("des: Kill called from a process")
	}
	p.s.running = p
	p.stop()
	p.s.running = nil
	p.done = true
}
