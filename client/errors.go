package client

import (
	"errors"
	"fmt"

	"github.com/netlock-go/netlock/wire"
)

// Errors returned by the client. Server refusals are [*RejectError] values that match the sentinel
// of their status with [errors.Is].
var (
	// ErrTimeout is returned when a request was not answered (or a lock not granted) before its
	// context ended or its timeout ran out. It is joined with the context's error when there is one.
	ErrTimeout = errors.New("client: timeout")
	// ErrQuota is matched by a rejection with status quota: the tenant is over its quota.
	ErrQuota = errors.New("client: tenant over quota")
	// ErrWouldBlock is matched by a rejection of a TryAcquire whose lock was not free.
	ErrWouldBlock = errors.New("client: lock not available without waiting")
	// ErrNotHolder is matched by a rejection with status not-holder: the release or renewal named a
	// grant that the server does not know (any more).
	ErrNotHolder = errors.New("client: not the holder")
	// ErrLeaseLost is returned by Release and RunTxn when the lease of a grant was lost before the
	// lock was released, and matched by a rejection with status lease-expired.
	ErrLeaseLost = errors.New("client: lease lost")
	// ErrShutdown is matched by a rejection with status shutdown: the server is shutting down.
	ErrShutdown = errors.New("client: server shutting down")
	// ErrClosed is returned by requests made on, or interrupted by, a closed Client.
	ErrClosed = errors.New("client: closed")
	// ErrReservedLock is returned for a lock id reserved for the control plane
	// (wire.IsReservedLock: 0xFFFFFF00 and up).
	ErrReservedLock = errors.New("client: lock id reserved for the control plane")
)

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
// not-holder: [ErrNotHolder], lease-expired: [ErrLeaseLost], shutdown: [ErrShutdown]), and any
// *RejectError target with the same status.
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
	}
	return false
}
