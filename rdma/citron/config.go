package citron

import (
	"errors"
	"fmt"
	"time"
)

// Mode is a lock mode.
type Mode uint8

// Lock modes. The paper's locks are all exclusive; shared mode is this implementation's.
const (
	Exclusive Mode = iota + 1
	Shared
)

func (m Mode) String() string {
	switch m {
	case Exclusive:
		return "exclusive"
	case Shared:
		return "shared"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Errors.
var (
	ErrEmptyRange    = errors.New("citron: empty range")
	ErrInvertedRange = errors.New("citron: inverted range (start > end)")
	ErrOutOfSpace    = errors.New("citron: range beyond the address space")
	ErrBadMode       = errors.New("citron: unknown lock mode")
	// ErrLeaseExpired is returned by Unlock when the lock was held longer than the lease: the
	// lock is then treated as a crashed client's and left for waiters to recover (releasing it
	// could undo a recovery that already happened).
	ErrLeaseExpired = errors.New("citron: lock held beyond its lease; left to lease recovery")
	// ErrReleased is returned by a second Unlock.
	ErrReleased = errors.New("citron: lock already released")
)

// Config is CITRON's global configuration (the cluster manager's; every client uses the same).
type Config struct {
	// Space is the address space [0, Space) ranges may lie in. Required.
	Space uint64
	// Capacity is the initial N: the lock tree covers [0, N) and the spillover lock [N, Space).
	// It is rounded up to 64*4^h with h >= 1. Default Space (no spillover).
	Capacity uint64
	// M is the meet-in-the-middle distance. Default 4.
	M int
	// TWait is how long a request at an internal node waits before checking its descendants.
	// Default 15us (3 round trips of 5us, the paper's).
	TWait time.Duration
	// Delta is the bound of the clients' clock drift. Default 1e-4.
	Delta float64
	// Lease is the longest a lock may be held (and the unit of failure detection). Default 10ms.
	Lease time.Duration
	// EscalateAfter is how long a request may keep failing at a leaf (or keep being blocked by
	// shared holders of an ancestor, or keep restarting a multi-node request) before it locks a
	// coarser node instead. The paper: "if Alice keeps getting masked-CAS failures for a certain
	// period"; it does not give the period. Default 8*TWait.
	EscalateAfter time.Duration
	// PollInterval is the pause between two polls of a remote word. Default 0.
	PollInterval time.Duration
	// MaxGenerations bounds the number of scale-ups. Default 16.
	MaxGenerations int

	// Negative controls (tests only): each breaks one mechanism the safety argument needs.
	//
	// UnsafeSkipAncestorWait skips step 2(b) (waiting for occupied ancestors).
	UnsafeSkipAncestorWait bool
	// UnsafeUnmaskedLeafRelease releases a leaf by writing back the bitmap as read when it was
	// locked, without our bits (a non-masked write instead of a masked CAS).
	UnsafeUnmaskedLeafRelease bool
	// UnsafeSkipDescendantCheck skips the wait and the descendant check of step 2(d).
	UnsafeSkipDescendantCheck bool
	// UnsafeNoAbort ignores Inequality (1) (a late notification does not abort).
	UnsafeNoAbort bool
	// UnsafeIgnoreMarks ignores scale-up marks when acquiring.
	UnsafeIgnoreMarks bool
	// UnsafeHoldAndWait lets a multi-node request wait while holding its earlier nodes (the
	// paper's sequential locking), which can deadlock.
	UnsafeHoldAndWait bool
}

func (c *Config) validate() error {
	if c.Space == 0 {
		return errors.New("citron: config: Space is required")
	}
	if c.Capacity == 0 || c.Capacity > c.Space {
		c.Capacity = c.Space
	}
	if c.M == 0 {
		c.M = 4
	}
	if c.TWait == 0 {
		c.TWait = 15 * time.Microsecond
	}
	if c.Delta == 0 {
		c.Delta = 1e-4
	}
	if c.Lease == 0 {
		c.Lease = 10 * time.Millisecond
	}
	if c.EscalateAfter == 0 {
		c.EscalateAfter = 8 * c.TWait
	}
	if c.MaxGenerations == 0 {
		c.MaxGenerations = 16
	}
	switch {
	case c.M < 1 || c.M > 8:
		return fmt.Errorf("citron: config: M %d outside [1, 8]", c.M)
	case c.TWait < 0 || c.Lease <= 0 || c.EscalateAfter < 0 || c.PollInterval < 0:
		return errors.New("citron: config: negative duration")
	case c.Delta < 0 || c.Delta >= 1:
		return fmt.Errorf("citron: config: Delta %v outside [0, 1)", c.Delta)
	case c.MaxGenerations < 1 || c.MaxGenerations > 64:
		return fmt.Errorf("citron: config: MaxGenerations %d outside [1, 64]", c.MaxGenerations)
	case heightFor(c.Capacity) > maxHeight:
		return fmt.Errorf("citron: config: capacity %d above the largest tree (%d)", c.Capacity, capacity(maxHeight))
	}
	return nil
}

// heightFor is the height of the smallest tree (height >= 1) covering n units.
func heightFor(n uint64) int {
	h := minHeight
	for h <= maxHeight && capacity(h) < n {
		h++
	}
	return h
}

// ClientOptions are per-client choices that do not affect other clients' safety.
type ClientOptions struct {
	// K is the maximum number of nodes a range is split into. Default 2.
	K int
	// SlowPath disables the fast path (batched phases and the children-are-leaves shortcut).
	SlowPath bool
	// Drift scales the client's clock (tests: |Drift| <= Config.Delta is within the bound).
	Drift float64
	// Probe, if set, is called on protocol events (tests and metrics).
	Probe func(Event)
	// Seed seeds the client's backoff randomness (0: a process-wide sequence).
	Seed int64

	// crashAt (tests) is asked at the named points of the protocol; true makes the client stop
	// there as if it crashed (panicking with crashed{}), leaving its state behind.
	crashAt func(point string) bool
}

// crashed is the panic value of a simulated client crash (tests).
type crashed struct{ point string }
