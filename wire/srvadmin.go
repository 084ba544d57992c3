package wire

import (
	"encoding/binary"
	"errors"
)

// Lock-server admin sub-operations of the control plane (docs/protocol.md, "Admin
// sub-operations"): how the controller moves a lock between a server and the switch, reads a server's
// hottest locks, hands a failed server's locks to a standby and fences an older controller. Each
// request is an OpAdmin control message (rack key, from a configured controller) whose Timestamp
// carries the controller's term; a server refuses (reject not-owner) a request whose term is below
// the largest it has seen. Every answer is OpAdmin with FlagReply, echoing Status, Lock and Txn.
const (
	// AdminYield makes Lock switch-resident at the server: acquires that reach the server directly
	// are dropped (the client retransmits them, through the switch once the lock is there),
	// overflows are buffered in q2, queue-empty pushes back. The server keeps serving the holders
	// and waiters it has (releases, renewals, lease expiry). Idempotent. The reply is a lock
	// status (see AdminAdopt).
	AdminYield Status = 7
	// AdminAdopt makes Lock server-owned again: the server first raises the token floor of the
	// lock's shard above Token (as AdminTokenFloor), then moves the requests buffered in q2 into
	// the lock's queue in their order and grants what can be granted; later overflows of the lock
	// are taken as acquires. Idempotent. The reply is a lock status: Token the shard's last token
	// (the next grant is larger), LeaseMicros the holders and waiters of the lock at the server,
	// Slots its buffered requests (at most 65535), Priority 1 if the lock is switch-resident at the
	// server, 0 if not.
	AdminAdopt Status = 8
	// AdminStats reports the server's hottest locks since the previous AdminStats and resets the
	// counts. Request: Slots the most locks wanted (1..MaxLockStats). Reply: Slots the number of
	// records, Token the interval they cover (ns, the server's clock), and after the rack key
	// trailer Slots records of LockStatLen bytes ([AppendLockStat], [ParseLockStats]).
	AdminStats Status = 9
	// AdminTakeover tells a standby server (started to take over a failed server's address) to
	// start serving: every token it grants afterwards is above the epoch Token (the failed
	// server's fencing-token epoch), and it grants nothing for LeaseMicros (µs, the takeover
	// grace: at least the longest lease the failed server may have granted). Until it is sent, a
	// standby queues requests and grants nothing. Reply: Token the server's epoch now. Idempotent.
	AdminTakeover Status = 10
	// AdminResidents lists the locks that are switch-resident at the server, in ascending order,
	// from Lock on. Request: Slots the most ids wanted (1..MaxResidents). Reply: Slots the number
	// of ids, after the rack key trailer Slots ids of 4 bytes each; fewer than asked means the
	// list is complete.
	AdminResidents Status = 11
)

// ReservedLockBase is the first of the lock ids reserved for the control plane (the switch's
// staging entries, docs/controlplane.md). Clients must not use them; servers drop client requests
// for them, answer an overflow of one with a push-back without a request, and answer a
// queue-empty of one the same way (the barrier the controller uses to know that every push-back
// a server sent before it has reached the switch).
const ReservedLockBase uint32 = 0xFFFFFF00

// IsReservedLock reports whether lock is reserved for the control plane.
func IsReservedLock(lock uint32) bool { return lock >= ReservedLockBase }

// LockStat is one record of an AdminStats reply: what a server saw of one lock during the
// interval.
type LockStat struct {
	Lock uint32
	// Requests counts the acquires, releases and lease-probes of the lock the server processed;
	// Overflows the overflows of it the switch forwarded (a switch-resident lock).
	Requests, Overflows uint32
	// Depth is the largest number of the lock's requests outstanding at once at the server
	// (holders, waiters and buffered); Declared the largest contention a client declared for it
	// (the Slots field of its acquires).
	Depth, Declared uint16
}

// LockStatLen is the encoded size of a LockStat.
const LockStatLen = 16

// MaxLockStats bounds the records of one AdminStats reply; MaxResidents the ids of one
// AdminResidents reply.
const (
	MaxLockStats = 64
	MaxResidents = 256
)

// AppendLockStat appends the encoding of s to b.
func AppendLockStat(b []byte, s LockStat) []byte {
	var x [LockStatLen]byte
	binary.BigEndian.PutUint32(x[0:], s.Lock)
	binary.BigEndian.PutUint32(x[4:], s.Requests)
	binary.BigEndian.PutUint32(x[8:], s.Overflows)
	binary.BigEndian.PutUint16(x[12:], s.Depth)
	binary.BigEndian.PutUint16(x[14:], s.Declared)
	return append(b, x[:]...)
}

// ErrBody is returned for an admin body that does not hold what its header announces.
var ErrBody = errors.New("wire: admin body too short")

// ParseLockStats decodes the n records of an AdminStats reply body (what follows the rack key
// trailer), appending them to dst.
func ParseLockStats(dst []LockStat, body []byte, n int) ([]LockStat, error) {
	if n < 0 || n > MaxLockStats || len(body) < n*LockStatLen {
		return dst, ErrBody
	}
	for i := range n {
		x := body[i*LockStatLen:]
		dst = append(dst, LockStat{Lock: binary.BigEndian.Uint32(x), Requests: binary.BigEndian.Uint32(x[4:]),
			Overflows: binary.BigEndian.Uint32(x[8:]), Depth: binary.BigEndian.Uint16(x[12:]),
			Declared: binary.BigEndian.Uint16(x[14:])})
	}
	return dst, nil
}

// ParseLockIDs decodes the n lock ids of an AdminResidents reply body, appending them to dst.
func ParseLockIDs(dst []uint32, body []byte, n int) ([]uint32, error) {
	if n < 0 || n > MaxResidents || len(body) < 4*n {
		return dst, ErrBody
	}
	for i := range n {
		dst = append(dst, binary.BigEndian.Uint32(body[4*i:]))
	}
	return dst, nil
}
