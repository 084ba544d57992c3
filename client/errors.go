package client

import "github.com/netlock-go/netlock/client/clientcore"

// Errors returned by the client (the protocol's, package clientcore's). Server refusals are
// [*RejectError] values that match the sentinel of their status with [errors.Is].
var (
	// ErrTimeout is returned when a request was not answered (or a lock not granted) before its
	// context ended or its timeout ran out, wrapped with the request, its server, the attempts
	// and the context's error when there is one. An [*UnreachableError] matches it too.
	ErrTimeout = clientcore.ErrTimeout
	// ErrQuota is matched by a rejection with status quota: the tenant is over its quota.
	ErrQuota = clientcore.ErrQuota
	// ErrWouldBlock is matched by a rejection of a TryAcquire whose lock was not free.
	ErrWouldBlock = clientcore.ErrWouldBlock
	// ErrNotHolder is matched by a rejection with status not-holder: the release or renewal named a
	// grant that the server does not know (any more).
	ErrNotHolder = clientcore.ErrNotHolder
	// ErrLeaseLost is returned by Release and RunTxn when the lease of a grant was lost before the
	// lock was released, and matched by a rejection with status lease-expired.
	ErrLeaseLost = clientcore.ErrLeaseLost
	// ErrShutdown is matched by a rejection with status shutdown: the server is shutting down.
	ErrShutdown = clientcore.ErrShutdown
	// ErrQueueFull is matched by a rejection with status queue-full: the lock is at one of its
	// own bounds (its waiters or its shared holders); the request was not queued. Transient:
	// retry after a backoff.
	ErrQueueFull = clientcore.ErrQueueFull
	// ErrOverloaded is matched by a rejection with status overloaded: the server is at a bound
	// of its own (locks or requests held); the request was not queued. Transient: retry after a
	// backoff.
	ErrOverloaded = clientcore.ErrOverloaded
	// ErrWaitExpired is matched by a rejection with status wait-expired: the acquire waited
	// longer than the server's wait lease without a retransmission reaching it (the client was
	// taken for dead, for example after a long pause) and left the queue. Acquire again.
	ErrWaitExpired = clientcore.ErrWaitExpired
	// ErrClosed is returned by requests made on, or interrupted by, a closed Client.
	ErrClosed = clientcore.ErrClosed
	// ErrReservedLock is returned for a lock id reserved for the control plane
	// (wire.IsReservedLock: 0xFFFFFF00 and up).
	ErrReservedLock = clientcore.ErrReservedLock
	// ErrUnreachable is matched by an [*UnreachableError]: a server sent nothing back to
	// [Config.MaxAttempts] copies of a request in a row.
	ErrUnreachable = clientcore.ErrUnreachable
)

// UnreachableError is returned when a request was sent [Config.MaxAttempts] times in a row to a
// server without a single datagram from it about the request's lock and transaction
// (clientcore.UnreachableError). It matches [ErrUnreachable] and [ErrTimeout].
type UnreachableError = clientcore.UnreachableError

// RejectError is a refusal by a lock server (op reject; clientcore.RejectError).
type RejectError = clientcore.RejectError
