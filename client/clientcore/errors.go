package clientcore

import (
	"errors"
	"fmt"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// Errors of the protocol. Server refusals are [*RejectError] values that match the sentinel of
// their status with [errors.Is]. Package client re-exports them.
var (
	// ErrTimeout is returned when a request was not answered (or a lock not granted) before its
	// context ended or its timeout ran out, wrapped with the request, its server, the attempts
	// and the context's error when there is one. An [*UnreachableError] matches it too.
	ErrTimeout = errors.New("client: timeout")
	// ErrQuota is matched by a rejection with status quota: the tenant is over its quota.
	ErrQuota = errors.New("client: tenant over quota")
	// ErrWouldBlock is matched by a rejection of a try acquire whose lock was not free.
	ErrWouldBlock = errors.New("client: lock not available without waiting")
	// ErrNotHolder is matched by a rejection with status not-holder: the release or renewal named a
	// grant that the server does not know (any more).
	ErrNotHolder = errors.New("client: not the holder")
	// ErrLeaseLost is returned when the lease of a grant was lost before the lock was released,
	// and matched by a rejection with status lease-expired.
	ErrLeaseLost = errors.New("client: lease lost")
	// ErrShutdown is matched by a rejection with status shutdown: the server is shutting down.
	ErrShutdown = errors.New("client: server shutting down")
	// ErrQueueFull is matched by a rejection with status queue-full: the lock is at one of its
	// own bounds (its waiters or its shared holders); the request was not queued. Transient:
	// retry after a backoff.
	ErrQueueFull = errors.New("client: lock's queue full")
	// ErrOverloaded is matched by a rejection with status overloaded: the server is at a bound
	// of its own (locks or requests held); the request was not queued. Transient: retry after a
	// backoff, or use another server.
	ErrOverloaded = errors.New("client: server overloaded")
	// ErrWaitExpired is matched by a rejection with status wait-expired: the acquire waited
	// longer than the server's wait lease without a retransmission reaching it (the client was
	// taken for dead, for example after a long pause) and left the queue. Acquire again.
	ErrWaitExpired = errors.New("client: wait expired in the server's queue")
	// ErrClosed is returned by requests made on, or interrupted by, a closed client.
	ErrClosed = errors.New("client: closed")
	// ErrReservedLock is returned for a lock id reserved for the control plane
	// (wire.IsReservedLock: 0xFFFFFF00 and up).
	ErrReservedLock = errors.New("client: lock id reserved for the control plane")
	// ErrUnreachable is matched by an [*UnreachableError]: a server sent nothing back to
	// Config.MaxAttempts copies of a request in a row.
	ErrUnreachable = errors.New("client: server unreachable")
	// errStopped ends a renewal whose grant is being released.
	errStopped = errors.New("client: grant released")
)

// UnreachableError is returned when a request was sent Config.MaxAttempts times in a row to a
// server without a single datagram from it about the request's lock and transaction: no answer,
// and, for an acquire that may be waiting in the server's queue, no answer to the liveness probe
// sent with each retransmission (docs/protocol.md, "Is the server there?"). It matches
// [ErrUnreachable] and, as a request that timed out, [ErrTimeout].
type UnreachableError struct {
	// Server is the address the request was sent to ("host:port").
	Server string
	// Op is the request: acquire, release or lease-probe.
	Op   wire.Op
	Lock uint32
	// Attempts is the number of copies sent without a word from Server (Config.MaxAttempts),
	// and Elapsed the time from the first of them to the failure.
	Attempts int
	Elapsed  time.Duration
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("client: %s of lock %d: server %s unreachable: no answer to %d attempts in %v", e.Op, e.Lock,
		e.Server, e.Attempts, e.Elapsed.Round(time.Millisecond))
}

// Is matches [ErrUnreachable] and [ErrTimeout].
func (e *UnreachableError) Is(target error) bool {
	return target == ErrUnreachable || target == ErrTimeout
}

// RejectError is a refusal by a lock server (op reject).
type RejectError struct {
	// Op is the operation that was refused: acquire, release or lease-probe.
	Op     wire.Op
	Lock   uint32
	Txn    uint64
	Status wire.Status
}

func (e *RejectError) Error() string {
	return fmt.Sprintf("client: %s of lock %d (txn %#x) rejected: %s", e.Op, e.Lock, e.Txn, e.Status)
}

// Is matches the sentinel of e's status (quota: [ErrQuota], would-block: [ErrWouldBlock],
// not-holder: [ErrNotHolder], lease-expired: [ErrLeaseLost], shutdown: [ErrShutdown],
// queue-full: [ErrQueueFull], overloaded: [ErrOverloaded], wait-expired: [ErrWaitExpired]), and
// any *RejectError target with the same status.
func (e *RejectError) Is(target error) bool {
	if t, ok := target.(*RejectError); ok {
		return t.Status == e.Status
	}
	switch e.Status {
	case wire.StatusQuota:
		return target == ErrQuota
	case wire.StatusWouldBlock:
		return target == ErrWouldBlock
	case wire.StatusNotHolder:
		return target == ErrNotHolder
	case wire.StatusLeaseExpired:
		return target == ErrLeaseLost
	case wire.StatusShutdown:
		return target == ErrShutdown
	case wire.StatusQueueFull:
		return target == ErrQueueFull
	case wire.StatusOverloaded:
		return target == ErrOverloaded
	case wire.StatusWaitExpired:
		return target == ErrWaitExpired
	}
	return false
}
