package client

import (
	"fmt"
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

// NetChainRule is what a NetChain client does when the switch rejects one of its transaction's
// acquires (NetChainPolicy.Rule).
type NetChainRule uint8

const (
	// NetChainHoldAndBackoff keeps the locks the transaction holds and sends the rejected acquire
	// again after NetChainBackoff's wait, as often as it takes; a transaction is never rolled
	// back (the slots are taken in one global order, so the retries cannot deadlock). Our choice
	// where neither paper says; the zero value.
	NetChainHoldAndBackoff NetChainRule = iota
	// NetChainRollback is the rule of NetLock's own client code, the one its authors ran NetChain
	// with (netx-repo/NetLock at b4f44ef, dpdk_code/client_code/client.c; console.py's netchain()
	// and netchain_ms() run that client against switch_code/netchain for Figures 10 and 11):
	//
	//   - Resend at once. np_client_rx_loop answers a REJECT_LOCK_ACQUIRE by building the same
	//     ACQUIRE_LOCK (lock, mode, transaction id) and enqueue_pkt'ing it: no wait, no count; it
	//     leaves with the RX core's next burst (send_pkt_burst every drain_tsc, 10 µs, or when the
	//     burst is full). It is sent again on every reject, before and after a rollback.
	//   - A timeout per transaction, not per lock. np_client_tx_write_loop keeps one timer per
	//     (client, transaction), txn_refresh_time, set when the transaction's first acquire is
	//     sent; once all its acquires are sent it checks, polling, whether
	//     now > txn_refresh_time + expire_time[0], expire_time[0] = max(timeout_slot,
	//     2 x think_time) µs (timeout_slot: 400 by default, option -O; console.py's NetChain runs
	//     pass -O 1000; its NetLock runs 2000 for Figure 10 and none, the default, for Figure 11).
	//   - A rollback releases every lock granted so far and nothing else: the grants recorded in
	//     the transaction's txn_queue not yet released (txn_s to txn_r). Nothing cancels the
	//     acquires still out: they keep being resent on every reject, and every 10 µs
	//     (expire_time[1]) the loop releases the grants that came in since. The transaction is
	//     over only when every one of its locks has been granted, and released.
	//   - Then it waits and runs the same transaction again: idx rewinds to the transaction's
	//     first acquire (same locks, same transaction id) after usleep(r * timeout_slot / 400 *
	//     30) µs, r = rand() % 10, in C's integer arithmetic: 0, 30, ..., 270 µs with the default
	//     400, and 0, 60, 150, 210, 300, 360, 450, 510, 600, 660 µs with 1000.
	//   - The rerun's timer is not restarted: txn_refresh_time is set only when txn_begin_time is
	//     0, which it is not on a rerun, so it keeps the value the rollback last gave it (the last
	//     10 µs check before the last late grant). The wait before the rerun eats into the rerun's
	//     timeout (with 400 µs and a 270 µs wait, the rerun has about 130 µs).
	//
	// The timeout is sized for a client that asks for every lock of a transaction at once:
	// client.c sends a transaction's acquires back to back in one burst (acquire_enqueue_pkt
	// flushes the TX queue when locks_each_txn are queued), in its trace's order, and then waits
	// for every grant. NetChainPolicy.Burst does that; without it the client takes one lock at a
	// time in ascending order, as the rack model's NetLock clients do, and a transaction whose
	// locks take longer than the timeout to take one by one is rolled back on every run.
	//
	// Ambiguous or left out here: the 10 µs granularity of the checks is not modelled (the
	// rollback happens at the deadline, a late grant is released when it arrives); expire_idx, which
	// switches between the 400 and the 10 µs timeouts, is one variable per TX core shared by the
	// core's clients (console.py's NetChain runs give each TX core one client, so it does not
	// matter there); the usleeps block the whole TX core; a rolled-back attempt's grants are not
	// counted in throughput (here transactions per second count commits only, but grants per
	// second count every grant); a rerun keeps its transaction id there and takes a new one here.
	// Not part of the rule but of its runs: console.py's NetChain runs emulate 2 transaction
	// streams per client machine (client_num 2), its NetLock runs 4.
	NetChainRollback
)

// DefaultNetChainTimeoutSlot is client.c's timeout_slot by default (its option -O).
const DefaultNetChainTimeoutSlot = 400 * time.Microsecond

// NetChainPolicy is a NetChain client's whole rule for rejects: Rule, with its parameters. The
// zero value is NetChainHoldAndBackoff with DefaultNetChainBackoff. Its methods are pure: the
// caller keeps the transaction's state and asks what to do. NetChainRollback with Burst is
// client.c, which is also NetLock's client: on a netlock rack (nothing rejected would-block)
// only Deadline, RerunWait and Burst apply.
type NetChainPolicy struct {
	Rule NetChainRule
	// Backoff is NetChainHoldAndBackoff's wait (zero: DefaultNetChainBackoff).
	Backoff NetChainBackoff
	// TimeoutSlot is NetChainRollback's timeout_slot (zero: DefaultNetChainTimeoutSlot); it sets
	// the timeout and scales the wait before a rerun.
	TimeoutSlot time.Duration
	// Burst sends every acquire of a run of a transaction at once, in the transaction's order,
	// as client.c does, instead of one at a time, each after the grant of the one before. A
	// burst's acquires can hold-and-wait in any order, so Burst needs NetChainRollback's
	// deadline to break deadlocks; with NetChainHoldAndBackoff it can deadlock.
	Burst bool
}

// NetChainRollbackPolicy is client.c's rule for rejects with its timeout_slot (option -O; 0:
// the default), a lock at a time.
func NetChainRollbackPolicy(slot time.Duration) NetChainPolicy {
	return NetChainPolicy{Rule: NetChainRollback, TimeoutSlot: slot}
}

// NetChainClientC is client.c as written: its rule for rejects with its timeout_slot (0: the
// default), every acquire of a run sent in one burst.
func NetChainClientC(slot time.Duration) NetChainPolicy {
	p := NetChainRollbackPolicy(slot)
	p.Burst = true
	return p
}

func (p NetChainPolicy) slot() time.Duration {
	if p.TimeoutSlot <= 0 {
		return DefaultNetChainTimeoutSlot
	}
	return p.TimeoutSlot
}

// String names the policy: "backoff 5µs-320µs", "rollback 400µs" or "rollback 400µs, burst".
func (p NetChainPolicy) String() string {
	var s string
	if p.Rule == NetChainRollback {
		s = fmt.Sprintf("rollback %v", p.slot())
	} else {
		b := p.Backoff
		if b.Base <= 0 {
			b = DefaultNetChainBackoff
		}
		s = fmt.Sprintf("backoff %v-%v", b.Base, max(b.Max, b.Base))
	}
	if p.Burst {
		s += ", burst"
	}
	return s
}

// Resend is the wait before a rejected acquire is sent again, after the rejects-th reject in a
// row (from 1) of that acquire; jitter as NetChainBackoff.Delay's. NetChainRollback: 0, at once.
func (p NetChainPolicy) Resend(rejects int, jitter func(n int64) int64) time.Duration {
	if p.Rule == NetChainRollback {
		return 0
	}
	return p.Backoff.Delay(rejects, jitter)
}

// Deadline is when a run of a transaction that has not been granted every lock is rolled back,
// ok false if never (NetChainHoldAndBackoff). start is when the run's first acquire was sent;
// a rerun's timer runs from rolledBack, when the rollback before it ended (client.c does not
// restart it); hold is the transaction's hold time (client.c's think_time): the timeout is
// max(TimeoutSlot, 2 x hold). Times are on the caller's clock.
func (p NetChainPolicy) Deadline(start, rolledBack time.Duration, rerun bool, hold time.Duration) (at time.Duration, ok bool) {
	if p.Rule != NetChainRollback {
		return 0, false
	}
	from := start
	if rerun {
		from = rolledBack
	}
	return from + max(p.slot(), 2*hold), true
}

// RerunWait is the wait after a rollback ended before the transaction runs again; draw returns
// a uniform number in [0, n] (client.c's rand() % 10 is draw(9); nil: 0). It is r x slot / 400
// x 30 µs in integer µs, slot in whole µs: 0 to 270 µs with the default slot.
// NetChainHoldAndBackoff never rolls back: 0.
func (p NetChainPolicy) RerunWait(draw func(n int64) int64) time.Duration {
	if p.Rule != NetChainRollback || draw == nil {
		return 0
	}
	r := draw(9)
	return time.Duration(r*int64(p.slot()/time.Microsecond)/400*30) * time.Microsecond
}
