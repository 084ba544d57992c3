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
// shared when no exclusive request holds the lock and fewer than Config.MaxHolders shared ones do.
// Invariant after every call: the first waiter of a lock, if any, is not grantable. A new request
// is therefore granted at once exactly when it would become the first waiter and is compatible;
// otherwise it waits, and inserting it never unblocks anyone else. Releases, withdrawals, lease
// and wait-lease expiries re-examine the head, which grants a run of shared waiters together after
// an exclusive holder leaves (NetLock's exclusive -> shared case).
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
// server makes them epoch-major (TokenBase = wire.EpochBase(epoch), the epoch persisted and bumped on every
// start; docs/protocol.md, "Fencing tokens").
//
// Leases start at the grant. Expired holders are removed by [Core.Expire], which grants onward and
// tells the old holder. The locks with holders sit in a deadline heap keyed by their earliest
// holder deadline, so a sweep costs O((expired locks + 1) log n) whatever the number n of held
// locks (BenchmarkExpire1MHeld), and [Core.NextDeadline] says when the next sweep has work.
//
// Waiting requests have a wait lease (Config.WaitLease, 5 s by default): every copy of a waiter's
// acquire (its client retransmits while it waits) renews it, and Expire removes a waiter whose
// wait lease ran out, tells it (reject, wait-expired) and grants onward, so that a dead client's
// queued requests do not each take a full lease when their turn comes. Wait deadlines are in
// NextDeadline; waiters are removed before leases end in the same Expire.
//
// Requests that ended (released, withdrawn, expired, wait-expired, dropped by a reset or Drain) are
// remembered per Core for Config.ReplayWindow (1 min), at most Config.ReplayCapacity of them
// (65536; the oldest go first): replay.go. An acquire of a remembered (lock, txn), with or without
// the retry flag, is not accepted again: ignored if the request was released or withdrawn, else
// answered with the status it ended with; a release repeating a remembered request's token is
// answered as it was (acknowledged, or that status). So a late retransmission or a replayed
// acquire is never queued and granted twice; a copy older than the window (or pushed out by
// ReplayCapacity later ends) is a new request: without authenticated clients the Core cannot tell.
//
// A lock without requests keeps its state for Config.IdleRetention (1 s by default) after its
// last request; then the state is freed. Idle states are freed by Expire on their own timer:
// NextDeadline includes the oldest idle state's due time, so they go even when no lease ever runs
// (overflow-only traffic). The lock table shrinks when it empties, and at most 1024 freed states
// are kept for reuse. A freed state's AdminStats counts that [Core.TopLocks] has not read yet
// are kept, a small record per lock, until the next TopLocks reports them (unread.go): every
// request the Core counts reaches one AdminStats answer, whatever idle retention did to its
// lock's state, unless the store's bound dropped it (counted).
//
// # Bounds
//
// Whatever its clients send, a Core keeps at most Config.MaxLocks locks with requests and
// Config.MaxRequests requests (held, waiting and buffered) in all, beyond which it rejects
// acquires and overflows with status overloaded; per lock at most MaxHolders shared holders (the
// rest wait), MaxWaiters waiters and MaxBuffered buffered requests (beyond them: queue-full);
// the unread AdminStats counts of at most Config.MaxUnreadStats freed locks (beyond it the least
// busy are dropped, counted in Stats.UnreadDropped). The defaults bound a Core to about 80 MB
// (DefaultMaxLocks). Its hash tables are keyed by Config.HashSeed, so that ids chosen to collide
// cannot be computed, and a lock with more than a few holders and waiters gets a membership index
// (members.go), so that the duplicate check of an acquire, and finding a release's or
// retransmission's request, cost O(1) however long the queue.
//
// The overflow role (q2) of NetLock section 4.3: for switch-resident locks the switch forwards
// acquires it cannot queue as OpOverflow; the Core buffers them per lock in (priority, arrival)
// order and never grants them. An OpQueueEmpty announcing n free switch slots is answered with at
// most n OpPushBack effects addressed to the switch. The buffer of one lock holds at most
// Config.MaxBuffered requests (4096 by default; beyond it: reject queue-full to the original
// client), and a buffered request counts against its tenant's quota (outstanding and rate) until it
// is pushed back or dropped (admin reset, Drain). Buffered requests have no wait lease and are not
// remembered when they leave (the switch owns them). An overflow the Core does not buffer (a
// duplicate, or refused) is answered to the switch with an OpPushBack without a request (txn 0):
// the switch counts the overflows it sent as buffered until each comes back, either way.
//
// # Quotas
//
// A tenant's quota (outstanding requests and acquires per second; quotaState in limiter.go) is
// enforced by a TenantLimiter: by default one of the Core's own, built from Config.Quotas; the
// lock server gives all its shards one NewSharedLimiter (Config.Limiter), so that a quota holds
// at the server, not at each shard. Nothing authenticates the tenant id a request carries.
//
// # Admin and shutdown
//
// Admin requests (which the lock server authenticates before they reach the Core) are ping, lease
// sweep (an Expire), reset of a lock (holders forgotten, waiting and buffered requests rejected
// not-owner, quotas given back) and token floor; others are rejected bad-request. [Core.Drain]
// rejects every waiting and buffered request with status shutdown. The randomized reference model
// (model_test.go) covers all of them, with quota, bound, wait-lease and replay-memory logic of
// its own, and two shards sharing one limiter; Config.TestingKnobs holds the deliberate bugs it
// must catch.
package lockcore
