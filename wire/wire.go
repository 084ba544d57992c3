// Package wire defines netlock's request/grant header: a fixed 48-byte header in network byte order,
// carried in UDP datagrams to port 8888 (the lock port of the original NetLock).
//
// [Header] is a byte slice with allocation-free accessors, in the style of gVisor's header package:
// the accessors read and write the bytes in place and never copy. A Header is valid for reading only
// after [Header.Validate] (or [Parse]) succeeded; the setters assume a slice of at least [Len] bytes.
//
// The layout extends NetLock's 20-byte header (op codes acquire 0, release 1, push-back 2, grant 3,
// reject 4; modes shared 0, exclusive 1 are kept) with a version byte, flags, a status byte, priority,
// tenant, a 64-bit transaction id, a fencing token, the client's timestamp, a lease, the original
// client address for packets the switch forwards, and a slot count. docs/protocol.md is the spec.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Port is the UDP port lock traffic is addressed to (NetLock's LK_PORT).
const Port = 8888

// Version is the only header version this package reads and writes.
const Version = 1

// Len is the size of a header in bytes. A netlock datagram is one header (trailing bytes are
// ignored: they are reserved for a payload in one-RTT transactions, NetLock section 4.1), or, when
// its first header carries [FlagBatch], a batch of whole headers ([ParseBatch]).
const Len = 48

// Field offsets. Keep in sync with docs/protocol.md, wire/wireshark/netlock.lua and p4/netlock.p4.
const (
	offVersion    = 0
	offOp         = 1
	offMode       = 2
	offFlags      = 3
	offStatus     = 4
	offPriority   = 5
	offTenant     = 6
	offLock       = 8
	offTxn        = 12
	offToken      = 20
	offTimestamp  = 28
	offLease      = 36
	offClientIP   = 40
	offClientPort = 44
	offSlots      = 46
)

// Op is the operation a packet carries.
type Op uint8

// Operations. The first five keep NetLock's numbering.
const (
	// OpAcquire asks for a lock (client -> switch or server).
	OpAcquire Op = 0
	// OpRelease gives a lock back, or withdraws a waiting request. A server answers an accepted
	// release with OpRelease and FlagReply set.
	OpRelease Op = 1
	// OpPushBack carries a request buffered in a server's overflow queue (q2) back into the
	// switch queue (q1) of a switch-resident lock (server -> switch).
	OpPushBack Op = 2
	// OpGrant tells a client it holds a lock; it carries the fencing token and the lease.
	OpGrant Op = 3
	// OpReject refuses a request; Status says why.
	OpReject Op = 4
	// OpOverflow is an acquire that the switch could not queue, forwarded to the lock's server to be
	// buffered only, never granted there (switch -> server).
	OpOverflow Op = 5
	// OpQueueEmpty tells a server that the switch queue of a lock has drained and how many slots
	// it has free (switch -> server); the server answers with up to that many OpPushBack.
	OpQueueEmpty Op = 6
	// OpLeaseProbe asks whether a grant is still held and extends its lease (client -> server);
	// the answer is OpLeaseProbe with FlagReply and the new lease, or OpReject.
	OpLeaseProbe Op = 7
	// OpAdmin is a control-plane message; Status holds the admin sub-operation.
	OpAdmin Op = 8

	opCount = 9
)

var opNames = [opCount]string{"acquire", "release", "push-back", "grant", "reject", "overflow",
	"queue-empty", "lease-probe", "admin"}

// String returns the op's name as docs/protocol.md spells it.
func (o Op) String() string {
	if o < opCount {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Valid reports whether o is a known operation.
func (o Op) Valid() bool { return o < opCount }

// Mode is a lock mode.
type Mode uint8

// Lock modes, NetLock's numbering.
const (
	Shared    Mode = 0
	Exclusive Mode = 1
)

// String returns "S" or "X".
func (m Mode) String() string {
	switch m {
	case Shared:
		return "S"
	case Exclusive:
		return "X"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// Valid reports whether m is shared or exclusive.
func (m Mode) Valid() bool { return m <= Exclusive }

// Flags modify an op.
type Flags uint8

// Flag bits. Unknown bits are reserved: senders set them to zero and receivers ignore them.
const (
	// FlagReply marks an answer (release acknowledgement, lease-probe answer, admin answer).
	FlagReply Flags = 1 << 0
	// FlagRetry marks a retransmission by the client; servers treat it as any duplicate.
	FlagRetry Flags = 1 << 1
	// FlagTry asks for a grant now or a reject with StatusWouldBlock, never a wait in the queue.
	FlagTry Flags = 1 << 2
	// FlagForwarded says ClientIP/ClientPort hold the original requester (set by the switch when it
	// forwards a request, and kept in grants so that they can be routed back).
	FlagForwarded Flags = 1 << 3
	// FlagRenewed marks a grant that extends the lease of an existing grant.
	FlagRenewed Flags = 1 << 4
	// FlagBatch marks a batch datagram: it holds k >= 1 headers back to back, [Len] bytes each,
	// every one of them carrying the flag ([ParseBatch]; docs/protocol.md, "Batches"). Only
	// client requests (acquire, release, lease-probe) and their answers ride in batches, only
	// between a client and a lock server that both enabled batching; a switch never sends one.
	FlagBatch Flags = 1 << 5

	flagsKnown = FlagReply | FlagRetry | FlagTry | FlagForwarded | FlagRenewed | FlagBatch
)

// Status says why a request was rejected, or, on OpAdmin, which admin operation is meant.
type Status uint8

// Reject reasons.
const (
	StatusOK Status = 0
	// StatusQuota: the tenant is over its quota.
	StatusQuota Status = 1
	// StatusWouldBlock: a FlagTry request could not be granted at once.
	StatusWouldBlock Status = 2
	// StatusNotHolder: a release or probe named a txn/token that does not hold the lock.
	StatusNotHolder Status = 3
	// StatusLeaseExpired: the lease of the grant ran out and the lock went to the next waiter.
	StatusLeaseExpired Status = 4
	// StatusNotOwner: this server does not own the lock (wrong partition).
	StatusNotOwner Status = 5
	// StatusShutdown: the server is shutting down; the request was not queued or was dropped.
	StatusShutdown Status = 6
	// StatusQueueFull: the lock is at one of its own bounds: the waiters of one lock (shared
	// requests beyond the bound of a lock's shared holders wait, so they count here), or its
	// overflow buffer q2 (lockcore.Config.MaxWaiters, MaxHolders, MaxBuffered).
	StatusQueueFull Status = 7
	// StatusBadRequest: the request was well-formed but invalid (e.g. a zero txn id).
	StatusBadRequest Status = 8
	// StatusOverloaded: the server (one of its shards) is at a bound of its own, not the lock's:
	// the number of locks with requests or of requests held, waiting or buffered
	// (lockcore.Config.MaxLocks, MaxRequests). The request was not queued; the locks the server
	// has are served as usual.
	StatusOverloaded Status = 9
	// StatusWaitExpired: the request waited in the queue longer than the server's wait lease
	// without a retransmission (its client is taken for dead) and was removed from the queue.
	StatusWaitExpired Status = 10

	statusCount = 11
)

var statusNames = [statusCount]string{"ok", "quota", "would-block", "not-holder", "lease-expired",
	"not-owner", "shutdown", "queue-full", "bad-request", "overloaded", "wait-expired"}

// String returns the status name.
func (s Status) String() string {
	if s < statusCount {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// PingServing, in the Priority of a lock server's AdminPing answer, says the server was started
// as a standby and has taken over a failed server's address (wire.AdminTakeover): the address
// is served by it, and the failed server must never be routed to again. 0: any other server.
const PingServing uint8 = 1

// Admin sub-operations, carried in Status of an OpAdmin packet.
const (
	// AdminPing asks for an answer with FlagReply; Slots carries the shard count and, from a lock
	// server, Token its fencing-token epoch and Priority PingServing when the server is a standby
	// that took over a failed server's address (the controllers learn a failover from it).
	AdminPing Status = 1
	// AdminSweep asks the server to expire every lease that has run out now (a lease sweep).
	AdminSweep Status = 2
	// AdminResetLock drops all state of Lock (used by the control plane when it moves a lock).
	AdminResetLock Status = 3
	// AdminRDMAJoin registers a remote RDMA node with a server that keeps an ALock table
	// (netlock server --rdma). Request: Txn a nonce, Client the IPv4 address of the node's emulated
	// NIC (TCP). Reply (FlagReply): Tenant the node id assigned to it (the same id again for the
	// same NIC address), Token the table's base pointer (node id and offset), Lock the number of
	// ALocks, Client the server NIC's address (an unspecified IP means "the IP you reached the
	// server's UDP port at"). A server without a table rejects it with bad-request.
	AdminRDMAJoin Status = 4
	// AdminRDMAPeer looks up a joined node. Request: Txn a nonce, Tenant the node id. Reply: Client
	// that node's NIC address, Tenant the node id; an unknown id is rejected with bad-request.
	AdminRDMAPeer Status = 5
	// AdminTokenFloor raises a lock server's fencing-token floor: every token the server grants
	// afterwards is larger than Token. Slots 0 raises it for the shard of Lock, 1 for every lock of
	// the server. The reply carries in Token the floor now in force (the next token is larger).
	// The control plane sends it when a lock moves from the switch back to a server.
	AdminTokenFloor Status = 6
)

// Admin sub-operation numbers are allocated in ranges so that the parts of the system that define
// them never collide: 1-15 are lock-server admin operations (above, and those the hardening and
// control-plane work add), 16-31 are switch admin operations carried in PacketOut/PacketIn to and from
// p4/netlock.p4's CPU port (defined with the data plane), 32-255 are unallocated.
const (
	adminSwitchFirst Status = 16
	adminSwitchLast  Status = 31
)

// IsSwitchAdmin reports whether s is in the range of switch admin sub-operations.
func (s Status) IsSwitchAdmin() bool { return s >= adminSwitchFirst && s <= adminSwitchLast }

// Switch admin sub-operations: admin packets between the control plane and p4/netlock.p4,
// sent as PacketOut to the switch's CPU port and answered as PacketIn. They carry the rack key
// and, after it, the admin body of docs/dataplane.md ("Admin packets"); the dataplane package
// encodes them. The switch drops them when they arrive on any other port.
const (
	// AdminSwitchProbe reads a lock's counters and queue pointers and one slot of a level
	// (lease sweeps; c_i measurements).
	AdminSwitchProbe Status = 16
	// AdminSwitchReset forgets a lock's queue: holders, waiters and counts (the grant counter
	// keeps growing; grants made before the reset can no longer be released or renewed).
	AdminSwitchReset Status = 17
	// AdminSwitchForceRelease ends the grant named by Txn and Token (a lease expiry): the
	// holder is told (reject lease-expired) and the lock passes to the next waiters.
	AdminSwitchForceRelease Status = 18
	// AdminSwitchTokenBase raises a lock's grant counter so that every later token exceeds the
	// value given (a lock moving into the switch keeps its tokens growing).
	AdminSwitchTokenBase Status = 19
	// AdminSwitchGetCookie and AdminSwitchSetCookie read and write the pipeline cookie, a
	// register a restarted switch has lost.
	AdminSwitchGetCookie Status = 20
	AdminSwitchSetCookie Status = 21
	// AdminSwitchSetBuffered sets the switch's count of a lock's requests buffered at its
	// server (q2) after the control plane checked the server; when the switch queue is empty
	// and the count is not zero the switch sends queue-empty at once.
	AdminSwitchSetBuffered Status = 22
)

// AuthLen is the length of the authentication trailer that follows the header of every control
// message (see [Op.IsControl]): the 64-bit rack key in network byte order, at offset [Len].
const AuthLen = 8

// ControlLen is the length of a control message: the header and its authentication trailer.
const ControlLen = Len + AuthLen

// IsControl reports whether o is a control message, which changes lock state on behalf of the rack
// rather than of one client: push-back, overflow, queue-empty and admin (every sub-operation, in both
// directions). A control message must carry the rack key in its trailer ([SetRackKey]) and must come
// from a configured peer (the switch, the controller, a fellow server); receivers drop and count
// anything else. docs/protocol.md ("Who may send what") is the rule.
func (o Op) IsControl() bool {
	return o == OpPushBack || o == OpOverflow || o == OpQueueEmpty || o == OpAdmin
}

// RackKey returns the rack key of the control message b. ok is false when b is too short to hold
// the trailer. It does not check that b is a control message.
func RackKey(b []byte) (key uint64, ok bool) {
	if len(b) < ControlLen {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[Len:]), true
}

// SetRackKey writes key into the trailer of b, which must be at least [ControlLen] bytes long.
func SetRackKey(b []byte, key uint64) { binary.BigEndian.PutUint64(b[Len:ControlLen], key) }

// Decoding errors. Callers count them and drop the packet.
var (
	ErrShort   = errors.New("wire: packet shorter than header")
	ErrVersion = errors.New("wire: unsupported version")
	ErrOp      = errors.New("wire: unknown op")
	ErrMode    = errors.New("wire: unknown mode")
)

// Header is a netlock header over a byte slice. The zero-length Header is not usable; obtain one
// from [Parse] or by slicing a buffer of at least [Len] bytes.
type Header []byte

// Parse checks b and returns it as a Header. It never allocates.
func Parse(b []byte) (Header, error) {
	h := Header(b)
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return h[:Len], nil
}

// Validate reports whether h is long enough and carries a known version, op and mode.
func (h Header) Validate() error {
	switch {
	case len(h) < Len:
		return ErrShort
	case h[offVersion] != Version:
		return ErrVersion
	case !Op(h[offOp]).Valid():
		return ErrOp
	case !Mode(h[offMode]).Valid():
		return ErrMode
	}
	return nil
}

func (h Header) Version() uint8       { return h[offVersion] }
func (h Header) Op() Op               { return Op(h[offOp]) }
func (h Header) Mode() Mode           { return Mode(h[offMode]) }
func (h Header) Flags() Flags         { return Flags(h[offFlags]) }
func (h Header) Status() Status       { return Status(h[offStatus]) }
func (h Header) Priority() uint8      { return h[offPriority] }
func (h Header) Tenant() uint16       { return binary.BigEndian.Uint16(h[offTenant:]) }
func (h Header) Lock() uint32         { return binary.BigEndian.Uint32(h[offLock:]) }
func (h Header) Txn() uint64          { return binary.BigEndian.Uint64(h[offTxn:]) }
func (h Header) Token() uint64        { return binary.BigEndian.Uint64(h[offToken:]) }
func (h Header) Timestamp() uint64    { return binary.BigEndian.Uint64(h[offTimestamp:]) }
func (h Header) LeaseMicros() uint32  { return binary.BigEndian.Uint32(h[offLease:]) }
func (h Header) ClientPort() uint16   { return binary.BigEndian.Uint16(h[offClientPort:]) }
func (h Header) Slots() uint16        { return binary.BigEndian.Uint16(h[offSlots:]) }
func (h Header) Has(f Flags) bool     { return h.Flags()&f == f }
func (h Header) ClientIPRaw() [4]byte { return [4]byte(h[offClientIP : offClientIP+4]) }

// ClientAddr returns the original client address carried by forwarded packets.
func (h Header) ClientAddr() netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4(h.ClientIPRaw()), h.ClientPort())
}

func (h Header) SetVersion(v uint8)    { h[offVersion] = v }
func (h Header) SetOp(o Op)            { h[offOp] = uint8(o) }
func (h Header) SetMode(m Mode)        { h[offMode] = uint8(m) }
func (h Header) SetFlags(f Flags)      { h[offFlags] = uint8(f) }
func (h Header) SetStatus(s Status)    { h[offStatus] = uint8(s) }
func (h Header) SetPriority(p uint8)   { h[offPriority] = p }
func (h Header) SetTenant(t uint16)    { binary.BigEndian.PutUint16(h[offTenant:], t) }
func (h Header) SetLock(l uint32)      { binary.BigEndian.PutUint32(h[offLock:], l) }
func (h Header) SetTxn(t uint64)       { binary.BigEndian.PutUint64(h[offTxn:], t) }
func (h Header) SetToken(t uint64)     { binary.BigEndian.PutUint64(h[offToken:], t) }
func (h Header) SetTimestamp(t uint64) { binary.BigEndian.PutUint64(h[offTimestamp:], t) }
func (h Header) SetLeaseMicros(u uint32) {
	binary.BigEndian.PutUint32(h[offLease:], u)
}
func (h Header) SetClientPort(p uint16) { binary.BigEndian.PutUint16(h[offClientPort:], p) }
func (h Header) SetSlots(n uint16)      { binary.BigEndian.PutUint16(h[offSlots:], n) }

// SetClientAddr stores an IPv4 client address. IPv6 addresses are not representable: the field is
// NetLock's 32-bit client IP. An IPv4-mapped IPv6 address is unmapped; any other IPv6 address
// stores zero.
func (h Header) SetClientAddr(a netip.AddrPort) {
	ip := a.Addr().Unmap()
	var b [4]byte
	if ip.Is4() {
		b = ip.As4()
	}
	copy(h[offClientIP:offClientIP+4], b[:])
	h.SetClientPort(a.Port())
}

// Fields is the decoded form of a header, for code off the fast path (tests, tools, the oracle).
type Fields struct {
	Op        Op
	Mode      Mode
	Flags     Flags
	Status    Status
	Priority  uint8
	Tenant    uint16
	Lock      uint32
	Txn       uint64
	Token     uint64
	Timestamp uint64
	// LeaseMicros is the requested lease on an acquire (0: the server's default) and the granted
	// lease on a grant or probe answer.
	LeaseMicros uint32
	Client      netip.AddrPort
	Slots       uint16
}

// Encode writes f into h (which must be at least Len bytes) with the current version.
func (h Header) Encode(f *Fields) {
	_ = h[Len-1]
	h.SetVersion(Version)
	h.SetOp(f.Op)
	h.SetMode(f.Mode)
	h.SetFlags(f.Flags)
	h.SetStatus(f.Status)
	h.SetPriority(f.Priority)
	h.SetTenant(f.Tenant)
	h.SetLock(f.Lock)
	h.SetTxn(f.Txn)
	h.SetToken(f.Token)
	h.SetTimestamp(f.Timestamp)
	h.SetLeaseMicros(f.LeaseMicros)
	h.SetClientAddr(f.Client)
	h.SetSlots(f.Slots)
}

// Decode reads h into f. h must have been validated.
func (h Header) Decode(f *Fields) {
	*f = Fields{
		Op: h.Op(), Mode: h.Mode(), Flags: h.Flags(), Status: h.Status(), Priority: h.Priority(),
		Tenant: h.Tenant(), Lock: h.Lock(), Txn: h.Txn(), Token: h.Token(), Timestamp: h.Timestamp(),
		LeaseMicros: h.LeaseMicros(), Slots: h.Slots(),
	}
	if h.Has(FlagForwarded) || h.ClientPort() != 0 || h.ClientIPRaw() != [4]byte{} {
		f.Client = h.ClientAddr()
	}
}

// Append encodes f as a new header appended to b.
func Append(b []byte, f *Fields) []byte {
	n := len(b)
	b = append(b, make([]byte, Len)...)
	Header(b[n:]).Encode(f)
	return b
}

// String renders f in the form used by logs, scenario files and the gopacket layer.
func (f *Fields) String() string {
	s := fmt.Sprintf("%s lock=%d txn=%d mode=%s", f.Op, f.Lock, f.Txn, f.Mode)
	if f.Flags != 0 {
		s += fmt.Sprintf(" flags=%s", f.Flags)
	}
	if f.Status != 0 {
		if f.Op == OpAdmin {
			s += fmt.Sprintf(" admin=%d", uint8(f.Status))
		} else {
			s += fmt.Sprintf(" status=%s", f.Status)
		}
	}
	if f.Priority != 0 {
		s += fmt.Sprintf(" prio=%d", f.Priority)
	}
	if f.Tenant != 0 {
		s += fmt.Sprintf(" tenant=%d", f.Tenant)
	}
	if f.Token != 0 {
		s += fmt.Sprintf(" token=%d", f.Token)
	}
	if f.LeaseMicros != 0 {
		s += fmt.Sprintf(" lease=%dus", f.LeaseMicros)
	}
	if f.Client.IsValid() {
		s += fmt.Sprintf(" client=%s", f.Client)
	}
	if f.Slots != 0 {
		s += fmt.Sprintf(" slots=%d", f.Slots)
	}
	return s
}

// String lists the set flags, "|"-separated.
func (f Flags) String() string {
	names := [...]string{"reply", "retry", "try", "fwd", "renewed", "batch"}
	s := ""
	for i, n := range names {
		if f&(1<<i) != 0 {
			if s != "" {
				s += "|"
			}
			s += n
		}
	}
	if rest := f &^ flagsKnown; rest != 0 {
		if s != "" {
			s += "|"
		}
		s += fmt.Sprintf("0x%02x", uint8(rest))
	}
	return s
}
