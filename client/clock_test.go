package client

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// manualClock is a Clock that moves only when told to.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	c    *manualClock
	at   time.Time
	ch   chan time.Time
	done bool
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.done = true
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// pending returns how many timers wait.
func (c *manualClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Advance moves the clock by d and fires the timers that are due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.done = true
			t.ch <- c.now
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

// Reset rearms t: no value of an earlier arming is received afterwards (time.Timer's semantics).
func (t *manualTimer) Reset(d time.Duration) bool {
	active := t.Stop()
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	select {
	case <-t.ch:
	default:
	}
	t.at, t.done = t.c.now.Add(d), false
	if d <= 0 {
		t.done = true
		t.ch <- t.c.now
		return active
	}
	t.c.timers = append(t.c.timers, t)
	return active
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
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

// TestDeadlineOnInjectedClock: the deadline is the send time plus the lease on the injected
// clock, and Lost closes exactly when that clock passes it.
func TestDeadlineOnInjectedClock(t *testing.T) {
	s := newFakeServer(t, time.Hour)
	clk := &manualClock{now: time.Unix(1_000_000, 0)}
	c := newClient(t, Config{Servers: []string{s.addr()}, Clock: clk, Lease: time.Second})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 1, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(1_000_000, 0).Add(time.Second); !g.Deadline().Equal(want) {
		t.Fatalf("deadline %v, want %v", g.Deadline(), want)
	}
	// The lease loop waits on a timer of the manual clock.
	eventually(t, "lease timer", func() bool { return clk.pending() == 1 })
	clk.Advance(999 * time.Millisecond)
	select {
	case <-g.Lost():
		t.Fatal("lost before the deadline")
	case <-time.After(20 * time.Millisecond):
	}
	clk.Advance(time.Millisecond)
	select {
	case <-g.Lost():
	case <-time.After(testTimeout):
		t.Fatal("Lost not closed at the deadline")
	}
	if err := g.Release(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Release after the deadline = %v, want ErrLeaseLost", err)
	}
}
