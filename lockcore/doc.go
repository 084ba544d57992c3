// Package lockcore is netlock's lock semantics: one pure, single-threaded state machine shared by the
// lock server, the oracle the P4 program is tested against, and the tests.
//
// A [Core] takes requests ([Core.Step]) and the passage of time ([Core.Expire]) and returns effects:
// the packets its caller must send ([Effect]). It does no I/O, starts no goroutines and reads no
// clock; time is an int64 count of nanoseconds supplied by the caller. A Core is not safe for
// concurrent use; the lock server gives each shard its own Core.
//
// # Rules (NetLock Algorithm 2; docs/protocol.md, Semantics)
//
// Per lock there are holders (all shared, or one exclusive) and waiters, ordered by priority (0 is
// highest) and, within a priority, by arrival. A waiter is granted when every waiter before it has
// been granted and its mode is compatible with the holders: exclusive when there are no holders,
// shared when no exclusive request holds the lock. Invariant after every call: the first waiter of a
// lock, if any, is not grantable. A new request is therefore granted at once exactly when it would
// become the first waiter and is compatible; otherwise it waits, and inserting it never unblocks
// anyone else. Releases, withdrawals and lease expiries re-examine the head, which grants a run of
// shared waiters together after an exclusive holder leaves (NetLock's exclusive -> shared case).
//
// Strict priorities follow NetLock section 4.4: a shared request is granted at once if no exclusive
// request holds the lock or waits at the same or a higher priority; a low priority can starve under a
// steady stream of higher-priority requests, as in the paper.
//
// Releases are checked: a holder must name its txn and fencing token; a waiting txn may withdraw with
// token 0. NetLock's switch dequeues the queue head without checking (sound for its trusted clients
// because shared releases commute); the server refuses releases from non-holders.
//
// Fencing tokens are drawn from one counter per Core, starting at Config.TokenBase: every grant's
// token is larger than every earlier grant's token of the same Core, hence of the same lock.
// [Core.RaiseTokenFloor] (and the admin sub-operation wire.AdminTokenFloor, answered with the floor
// in force in Token) moves the counter up, never down. The Core reads no clock for tokens: the lock
// server makes them epoch-major (TokenBase = epoch<<40, the epoch persisted and bumped on every
// start; docs/protocol.md, "Fencing tokens").
//
// Leases start at the grant. Expired holders are removed by [Core.Expire], which grants onward and
// tells the old holder. The locks with holders sit in a deadline heap keyed by their earliest
// holder deadline, so a sweep costs O((expired locks + 1) log n) whatever the number n of held
// locks (BenchmarkExpire1MHeld), and [Core.NextDeadline] says when the next sweep has work.
//
// Each lock remembers the last request that ended (released, withdrawn or expired: txn and token).
// A retransmitted acquire of it is ignored, or answered lease-expired if its lease ran out; a
// retransmitted release of it is acknowledged again (or answered lease-expired). This is best
// effort: one slot per lock, so of several shared holders ending together only the last is
// remembered, and a lock without requests keeps its state for Config.IdleRetention (1s by
// default) after its last request; then the state is freed and a very late retransmission is a new
// request. Idle states are freed by Expire on their own timer: NextDeadline includes the oldest
// idle state's due time, so they go even when no lease ever runs (overflow-only traffic). The
// lock table shrinks when it empties, and at most 1024 freed states are kept for reuse.
//
// The overflow role (q2) of NetLock section 4.3: for switch-resident locks the switch forwards
// acquires it cannot queue as OpOverflow; the Core buffers them per lock in (priority, arrival)
// order and never grants them. An OpQueueEmpty announcing n free switch slots is answered with at
// most n OpPushBack effects addressed to the switch. The buffer of one lock holds at most
// Config.MaxBuffered requests (4096 by default; beyond it: reject queue-full to the original
// client), and a buffered request counts against its tenant's quota (outstanding and rate) until it
// is pushed back or dropped (admin reset, Drain). An overflow the Core does not buffer (a
// duplicate, or refused) is answered to the switch with an OpPushBack without a request (txn 0):
// the switch counts the overflows it sent as buffered until each comes back, either way.
//
// # Admin and shutdown
//
// Admin requests (which the lock server authenticates before they reach the Core) are ping, lease
// sweep (an Expire), reset of a lock (holders forgotten, waiting and buffered requests rejected
// not-owner, quotas given back) and token floor; others are rejected bad-request. [Core.Drain]
// rejects every waiting and buffered request with status shutdown. The randomized reference model
// (model_test.go) covers all of them, with quota logic of its own.
package lockcore
