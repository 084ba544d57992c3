// Package client is netlock's client library for transaction engines: it takes and gives back
// locks held by netlock lock servers (and, later, the switch) over the UDP protocol of
// docs/protocol.md.
//
// A [Client] owns one UDP socket. Any number of goroutines may call [Client.Acquire],
// [Client.TryAcquire] and [Grant.Release] at once: every request is sent on the one socket and a
// single reader goroutine hands each answer to the request waiting for it, keyed by lock and
// transaction id. Locks are mapped to servers by a static partition, lock % len(Servers), unless
// [Config.Route] says otherwise. Route is consulted for every datagram, so a changed answer (a
// partition moved to another server after a failover) applies to requests already in flight.
//
// # Reliability
//
// Every request is retransmitted with exponential backoff until it is answered. This is safe
// because the server treats a repeated acquire from the same transaction as a duplicate (it
// re-sends the grant, or ignores the repeat while the request waits), and because a release that
// finds nothing is refused with not-holder, which the client counts as success when the release it
// retransmitted may already have been applied. When the context of an Acquire ends while the
// request waits in the server's queue, the client withdraws the request (a release with token 0)
// in the background; if the grant raced with the withdrawal, it releases the grant. A grant that
// reaches the client for a request nobody waits for is released at once.
//
// A request whose server sends nothing back to [Config.MaxAttempts] copies in a row (16 by
// default, about 5 s) fails with an [*UnreachableError] naming the server and the attempts, even
// when its context allows more. A waiting acquire is not answered until it is granted (a try
// acquire of an RDMA-backed lock may wait too, for the ALock), so once half of those copies went
// unanswered, an acquire's retransmissions go with a liveness probe (a lease-probe with token 0)
// that the server refuses at once: an acquire queued behind a long holder keeps waiting as long
// as the server answers the probes (docs/protocol.md, "Is the server there?"), at the cost of one
// probe and its answer per MaxAttempts/2 retransmissions. When the context ends first, the
// error wraps the context's and names the server and the attempts too.
//
// # Leases and fencing
//
// A [Grant] carries a fencing token, larger than every token granted before for that lock, and a
// lease. The lease runs on the client's monotonic clock from when the client sent the request (or
// the renewal), less a drift margin (wire.HolderLease); the server started the lease later than
// that, so the server never frees the lock before the client's lease ends ([Grant.Remaining];
// [Grant.Deadline] shows it as a wall-clock estimate). [Grant.Lost] is closed when the lease is
// lost: the server reported it expired or that it shuts down, a renewal was refused, or the lease
// ended without a renewal. With [Config.KeepAlive] the client renews every lease with a
// lease-probe each time a third of it has elapsed; without it, [Grant.Renew] renews on demand.
//
// # Structure
//
// The protocol is package clientcore's: a pure core (requests in flight with their
// retransmissions, the matching of answers, the leases) that takes the time as an argument. The
// Client is its shell: one socket with a reader goroutine, one timer goroutine that runs the core
// at its next deadline (every lease and every retransmission share it), and the callers, each
// waiting on a pooled channel for its operation. Holding a lock costs no goroutine and no timer.
// An acquire+release pair allocates one object, the Grant, which carries the core's record and
// both operations (BenchmarkAcquireRelease, TestAcquireReleaseAllocs). The rack model
// (testbed/rackmodel) drives the same core in virtual time.
//
// # Who is believed
//
// Answers are accepted only from the address a request was sent to (for a held lock: the server
// that granted it) or from a configured switch ([Config.Switches]); the rest are dropped and
// counted ([Stats].Foreign). Transaction ids come from a per-client random 64-bit id space
// (docs/protocol.md, "Transaction ids"). A grant that
// arrives with less than a third of its lease left on the client's reckoning (it waited long in
// the queue) is renewed before Acquire returns. A holder should stop using the resource guarded by a lock once
// Lost is closed, and should pass the token to that resource so that it can refuse stale writers.
//
// # Named locks
//
// Lock ids are 32-bit integers. [LockID] maps a name ("orders/42") to an id with a fixed hash
// (SHA-256's first four bytes), the same in every version and language. Two names that map to
// one id share one lock: safe, but they serialize each other (among n names some pair does with
// probability about 1 - exp(-n²/2^33): 1.2% for ten thousand names); LockID documents the rest.
//
// # Transactions
//
// A [Txn] is strict two-phase locking over several locks: [Txn.Acquire] takes them one at a time
// in ascending lock id order, a global order, so clients that use Txn never deadlock among
// themselves. If any lock cannot be taken, the ones already taken are released. [Client.RunTxn]
// wraps Begin, Acquire, a function and Release.
//
// # Errors
//
// Errors can be tested with [errors.Is] against [ErrTimeout], [ErrUnreachable], [ErrQuota],
// [ErrWouldBlock], [ErrNotHolder], [ErrLeaseLost], [ErrShutdown], [ErrClosed] and
// [ErrReservedLock]; a refusal by the server is a [*RejectError] carrying the protocol's status, a
// server that does not answer an [*UnreachableError].
package client
