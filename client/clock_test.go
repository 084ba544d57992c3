package client

import (
	"errors"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/clock"
	"github.com/netlock-go/netlock/wire"
)

// TestDeadlineOnInjectedClock: the lease ends at the send time plus the holder's share of the
// lease (wire.HolderLease) on the injected monotonic clock, and Lost closes exactly when that
// clock passes it. Steps of the wall clock, back and forth, move nothing but the estimate
// Deadline shows (the lease runs on the monotonic clock: issue 18, "wall-clock leases").
func TestDeadlineOnInjectedClock(t *testing.T) {
	for _, step := range []time.Duration{0, -30 * time.Second, time.Hour} {
		t.Run(step.String(), func(t *testing.T) { testDeadlineOnInjectedClock(t, step) })
	}
}

func testDeadlineOnInjectedClock(t *testing.T, step time.Duration) {
	s := newFakeServer(t, time.Hour)
	start := time.Unix(1_000_000, 0)
	clk := clock.NewManual(start)
	c := newClient(t, Config{Servers: []string{s.addr()}, Clock: clk, Lease: time.Second})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, 1, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	hold := wire.HolderLease(time.Second) // 999ms
	if want := start.Add(hold); !g.Deadline().Equal(want) {
		t.Fatalf("deadline %v, want %v", g.Deadline(), want)
	}
	// The lease loop waits on a timer of the manual clock.
	eventually(t, "lease timer", func() bool { return clk.Pending() == 1 })
	clk.StepWall(step)
	if want := start.Add(hold + step); !g.Deadline().Equal(want) {
		t.Fatalf("after a wall step of %v the estimate is %v, want %v", step, g.Deadline(), want)
	}
	if r, _ := g.Remaining(); r != hold {
		t.Fatalf("a wall step of %v changed the remaining lease to %v, want %v", step, r, hold)
	}
	clk.Advance(hold - time.Millisecond)
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
