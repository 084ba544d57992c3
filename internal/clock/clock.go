// Package clock is netlock's source of time, split the way leases need it (docs/protocol.md,
// "Leases and clocks"):
//
//   - Mono is a monotonic clock. Every lease, timeout, grace period and rate of the lock server
//     and the client is measured on it, each side from its own send or receive instant. It never
//     goes backwards and is not moved when the wall clock is set (NTP steps, an operator's
//     `date -s`, a VM resumed from a snapshot).
//   - Wall is the wall clock, for what people read (logs, the estimate Grant.Deadline shows) and
//     nothing that decides who holds a lock.
//
// [System] reads the operating system's clocks; [Manual] is a clock for tests that moves only
// when told, and whose wall clock can be stepped on its own ([Manual.StepWall]) to show that a
// step changes nothing that matters.
package clock

import (
	"sync"
	"time"
)

// Clock is a time source. Implementations are safe for concurrent use.
type Clock interface {
	// Mono returns the monotonic clock in nanoseconds from an arbitrary origin: readings never
	// decrease, only their differences mean anything, and readings of two processes (or two
	// Clocks) cannot be compared.
	Mono() int64
	// Wall returns the wall-clock time.
	Wall() time.Time
	// NewTimer returns a running timer that fires once d has passed on the monotonic clock.
	NewTimer(d time.Duration) Timer
}

// Timer is a stoppable, resettable one-shot timer of a [Clock]. Reset must rearm a stopped or
// fired timer, and after Stop or Reset no value of the earlier arming is received (the semantics
// of time.Timer since Go 1.23).
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped it.
	Stop() bool
	// Reset rearms the timer to fire after d; it reports whether it had been active.
	Reset(d time.Duration) bool
}

// System is the operating system's clocks: Mono is Go's monotonic clock (CLOCK_MONOTONIC through
// time.Since), offset so that its first reading is the wall clock's Unix nanoseconds at process
// start (readable in captures; it does not follow the wall clock afterwards).
var System Clock = system{}

var (
	start     = time.Now()
	startUnix = start.UnixNano()
)

type system struct{}

func (system) Mono() int64                    { return startUnix + int64(time.Since(start)) }
func (system) Wall() time.Time                { return time.Now() }
func (system) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time        { return t.t.C }
func (t sysTimer) Stop() bool                 { return t.t.Stop() }
func (t sysTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

// Manual is a Clock for tests: it moves only when told. Advance moves both clocks and fires the
// timers that are due; StepWall moves the wall clock alone, as a wall-clock step does, and fires
// nothing. The zero value is not usable: make one with NewManual.
type Manual struct {
	mu     sync.Mutex
	mono   int64
	wall   time.Time
	timers []*manualTimer
}

// NewManual returns a manual clock whose wall clock reads wall and whose monotonic clock reads
// wall's Unix nanoseconds (as System's first reading does).
func NewManual(wall time.Time) *Manual { return &Manual{mono: wall.UnixNano(), wall: wall} }

// Mono returns the monotonic reading.
func (c *Manual) Mono() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

// Wall returns the wall-clock reading.
func (c *Manual) Wall() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

// Advance lets d pass: both clocks move by d and the timers that are due fire. d must not be
// negative.
func (c *Manual) Advance(d time.Duration) {
	if d < 0 {
		panic("clock: Manual.Advance with a negative duration")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mono += int64(d)
	c.wall = c.wall.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at <= c.mono {
			t.fire(c.wall)
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
}

// StepWall sets the wall clock d forward (or back, d < 0) without time passing: the monotonic
// clock and the timers are untouched.
func (c *Manual) StepWall(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
}

// Pending returns how many timers are running.
func (c *Manual) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// NewTimer returns a timer that fires when the monotonic clock has advanced by d.
func (c *Manual) NewTimer(d time.Duration) Timer {
	t := &manualTimer{c: c, ch: make(chan time.Time, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.armLocked(d)
	return t
}

type manualTimer struct {
	c    *Manual
	at   int64
	ch   chan time.Time
	done bool // fired or stopped; guarded by c.mu
}

// armLocked starts t to fire after d. Precondition: c.mu is held and t is not in c.timers.
func (t *manualTimer) armLocked(d time.Duration) {
	t.at, t.done = t.c.mono+int64(d), false
	if d <= 0 {
		t.fire(t.c.wall)
		return
	}
	t.c.timers = append(t.c.timers, t)
}

func (t *manualTimer) fire(now time.Time) {
	t.done = true
	t.ch <- now
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.stopLocked()
}

func (t *manualTimer) stopLocked() bool {
	if t.done {
		return false
	}
	t.done = true
	for i, x := range t.c.timers {
		if x == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			break
		}
	}
	return true
}

// Reset rearms t: no value of an earlier arming is received afterwards.
func (t *manualTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	active := t.stopLocked()
	select {
	case <-t.ch:
	default:
	}
	t.armLocked(d)
	return active
}
