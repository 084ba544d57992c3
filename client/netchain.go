package client

import (
	"time"

	"github.com/netlock-go/netlock/wire"
)

// The client's rules for NetChain used as a lock service (p4/netchain, the baseline of NetLock's
// Figures 10 and 11): the rack model's NetChain clients (testbed/rackmodel, Config.NetChain) run
// them, one rule in one place.

// NetChainLocks maps a transaction's locks onto NetChain's slots (lock l to slot
// NetChainSlot(l, slots)), makes every one exclusive (NetChain has no shared locks: NetLock,
// section 6.1, "requests for shared locks are treated as exclusive locks") and puts them in
// OrderLocks' order, so that two locks of one transaction on one slot are taken once and
// transactions that all take their slots in this order cannot deadlock among themselves while
// they retry. It works in place and returns the shortened slice.
func NetChainLocks(locks []LockSpec, slots int) []LockSpec {
	for i := range locks {
		locks[i] = LockSpec{Lock: NetChainSlot(locks[i].Lock, slots), Mode: wire.Exclusive}
	}
	return OrderLocks(locks)
}

// NetChainSlot is the slot of lock among slots: a hash of the id (SplitMix64's finalizer) modulo
// slots. NetChain keeps one slot per lock and no more locks than its switch memory holds; NetLock
// "adapt[s] the lock granularity based on the switch memory size and the number of locks, so that
// NetChain can handle all the requests in the switch" (section 6.1). Here a slot is a stripe of
// locks: netlock's lock ids are sparse (TPC-C's are table<<28 | warehouse<<21 | row), so a range
// of ids per slot would put whole tables on a few slots; a hash spreads them, and two locks on
// one slot conflict (a false conflict the real NetChain baseline also has when several objects
// share a lock).
func NetChainSlot(lock uint32, slots int) uint32 {
	if slots <= 0 {
		return lock
	}
	x := uint64(lock)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return uint32(x % uint64(slots))
}

// NetChainBackoff is how long a NetChain client waits before it sends a rejected acquire again
// (NetChain "handles concurrent requests with client-side retry"; neither NetLock's paper nor
// NetChain's says how long a client waits, so this is our choice): exponential, Base after the
// first reject, doubling with every further reject of the same acquire up to Max, with equal
// jitter (a uniform draw in [d/2, d]) so that clients rejected together do not retry together.
type NetChainBackoff struct {
	Base, Max time.Duration
}

// DefaultNetChainBackoff starts at 5 µs (under one round trip through the switch, 6.9 µs in the
// rack model) and stops doubling at 320 µs (after seven rejects in a row).
var DefaultNetChainBackoff = NetChainBackoff{Base: 5 * time.Microsecond, Max: 320 * time.Microsecond}

// Delay returns the wait after the rejects-th reject in a row (from 1) of one acquire; jitter
// returns a uniform number in [0, n] (nil: none, the wait is d).
func (b NetChainBackoff) Delay(rejects int, jitter func(n int64) int64) time.Duration {
	if b.Base <= 0 {
		b = DefaultNetChainBackoff
	}
	if b.Max < b.Base {
		b.Max = b.Base
	}
	d := b.Base
	for i := 1; i < rejects && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if jitter == nil {
		return d
	}
	half := d / 2
	return d - half + time.Duration(jitter(int64(half)))
}
