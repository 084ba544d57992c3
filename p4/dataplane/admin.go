package dataplane

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/wire"
)

// Admin packets: the control plane's access to the switch's lock state (docs/dataplane.md,
// "Admin packets"). A request is a PacketOut whose packet_out header has kind PacketOutAdmin,
// followed by an Ethernet/IPv4/UDP frame to port 8888 holding a netlock header (op admin,
// status the sub-operation), the rack key and the 52-byte admin body. The switch answers on
// the CPU port with a PacketIn (reason PacketInAdminReply) holding the same frame, the reply
// flag set and the body filled in.

// AdminBodyLen is the size of the admin body after the rack key.
const AdminBodyLen = 52

// AdminFrameLen is the size of an admin frame (after the packet_out or packet_in header).
const AdminFrameLen = udpframe.HeaderLen + wire.ControlLen + AdminBodyLen

// Sizes of the controller headers as the engine's CPU port carries them (P4Runtime carries
// their fields as metadata instead).
const (
	PacketOutLen = 3 // kind:8, egress_port:9, pad:7
	PacketInLen  = 2 // ingress_port:9, reason:7
)

// Offsets in the admin body (after the rack key) of the fields of AdminRequest and AdminReply.
const (
	AdminBodyResult   = 0
	AdminBodyLevel    = 1
	AdminBodyOffset   = 2
	AdminBodyValue    = 4
	AdminBodyNow      = 12
	AdminBodyHolders  = 16
	AdminBodyXHeld    = 18
	AdminBodyState    = 19
	AdminBodyXWait0   = 20
	AdminBodyXWait    = 22
	AdminBodyWait0    = 24
	AdminBodyWait1    = 26
	AdminBodyUsed0    = 28
	AdminBodyUsed1    = 30
	AdminBodyBuffered = 32
	AdminBodyDone     = 34
	AdminBodyHead     = 36
	AdminBodyTail     = 38
	AdminBodyGNext    = 40
	AdminBodySize     = 42
	AdminBodySlot     = 44
	AdminBodyGrantTS  = 48
)

// AdminRequest is one admin request.
type AdminRequest struct {
	// Op is the sub-operation (wire.AdminSwitch*).
	Op wire.Status
	// ID is echoed in the reply, to match it (carried in the header's slots field).
	ID uint16
	// Lock names the lock (every sub-operation but the cookie ones).
	Lock uint32
	// Level and Offset select the slot a probe reads: Offset slots after the head of Level.
	Level  uint8
	Offset uint16
	// Value: the token floor (AdminSwitchTokenBase), the cookie (AdminSwitchSetCookie), the
	// buffered count (AdminSwitchSetBuffered).
	Value uint64
	// Txn and Token name the grant AdminSwitchForceRelease ends.
	Txn, Token uint64
}

// Frame appends the request's frame (what follows the packet_out header) to b. Its addresses
// are 0.0.0.0:8888 and its UDP checksum is zero: the switch reads only the netlock part.
func (r *AdminRequest) Frame(b []byte, key uint64) []byte {
	var payload [wire.ControlLen + AdminBodyLen]byte
	h := wire.Header(payload[:])
	h.Encode(&wire.Fields{Op: wire.OpAdmin, Status: r.Op, Lock: r.Lock, Txn: r.Txn, Token: r.Token, Slots: r.ID})
	wire.SetRackKey(payload[:], key)
	body := payload[wire.ControlLen:]
	body[AdminBodyLevel] = r.Level
	binary.BigEndian.PutUint16(body[AdminBodyOffset:], r.Offset)
	binary.BigEndian.PutUint64(body[AdminBodyValue:], r.Value)
	zero := udpframe.Endpoint{Addr: netip.AddrPortFrom(netip.IPv4Unspecified(), wire.Port)}
	return udpframe.AppendNoChecksum(b, zero, zero, payload[:])
}

// PacketOut appends the request as the engine's CPU port takes it: the packet_out header, then
// the frame.
func (r *AdminRequest) PacketOut(b []byte, key uint64) []byte {
	b = append(b, PacketOutAdmin, 0, 0)
	return r.Frame(b, key)
}

// RawPacketOut appends a packet_out header that sends frame out of port, then frame.
func RawPacketOut(b []byte, port int, frame []byte) []byte {
	b = append(b, PacketOutRaw, byte(port>>1), byte(port<<7))
	return append(b, frame...)
}

// AdminReply is the switch's answer to an admin request.
type AdminReply struct {
	Op     wire.Status
	ID     uint16
	Result uint8 // Admin* (AdminOK, ...)
	Lock   uint32
	// Value: the cookie (get and set), the token floor now in force, as a token (token base,
	// reset, probe: the grant counter shifted by the slot bits).
	Value uint64
	// Now is the switch's clock (microseconds, low 32 bits), for lease arithmetic with
	// GrantTime.
	Now uint32

	// Probe: the lock's counters.
	Holders        uint16
	ExclusiveHeld  bool
	ExclusiveWait0 uint16 // exclusive waiters at level 0
	ExclusiveWait  uint16 // at all levels
	Waiting        [Levels]uint16
	Used           [Levels]uint16 // occupied slots per level
	Buffered       uint16         // requests buffered at the server (q2), as the switch counts them
	Done           uint16         // released or withdrawn slots not yet passed by a head
	// Probe: the probed level's queue (positions: offset in [14:0], lap bit 15) and size.
	Head, Tail, GNext uint16
	Size              uint16
	// Probe: the probed slot. Live is false for a free, released or withdrawn slot; a live
	// slot holds a request, granted when Token is not 0.
	Slot      uint32
	Live      bool
	Withdrawn bool
	Txn       uint64
	Token     uint64
	Mode      wire.Mode
	Priority  uint8
	Tenant    uint16
	Timestamp uint64 // the request's
	Lease     uint32 // microseconds
	Client    netip.AddrPort
	Forwarded bool   // pushed back by the server
	GrantTime uint32 // the switch's clock at the grant or the last renewal (microseconds)
}

// Errors of ParseAdminReply.
var (
	ErrNotAdmin   = errors.New("dataplane: not an admin reply")
	ErrAdminShort = errors.New("dataplane: admin reply too short")
)

// ParseAdminReply reads an admin reply frame (what follows the packet_in header).
func ParseAdminReply(frame []byte) (AdminReply, error) {
	var f udpframe.Frame
	if err := udpframe.Parse(frame, &f); err != nil {
		return AdminReply{}, fmt.Errorf("dataplane: admin reply: %w", err)
	}
	if len(f.Payload) < wire.ControlLen+AdminBodyLen {
		return AdminReply{}, ErrAdminShort
	}
	h, err := wire.Parse(f.Payload)
	if err != nil {
		return AdminReply{}, fmt.Errorf("dataplane: admin reply: %w", err)
	}
	if h.Op() != wire.OpAdmin || !h.Has(wire.FlagReply) || !h.Status().IsSwitchAdmin() {
		return AdminReply{}, ErrNotAdmin
	}
	body := f.Payload[wire.ControlLen : wire.ControlLen+AdminBodyLen]
	u16 := func(o int) uint16 { return binary.BigEndian.Uint16(body[o:]) }
	r := AdminReply{
		Op: h.Status(), ID: h.Slots(), Result: body[AdminBodyResult], Lock: h.Lock(),
		Value: binary.BigEndian.Uint64(body[AdminBodyValue:]), Now: binary.BigEndian.Uint32(body[AdminBodyNow:]),
		Holders: u16(AdminBodyHolders), ExclusiveHeld: body[AdminBodyXHeld] != 0, ExclusiveWait0: u16(AdminBodyXWait0),
		ExclusiveWait: u16(AdminBodyXWait), Waiting: [Levels]uint16{u16(AdminBodyWait0), u16(AdminBodyWait1)},
		Used: [Levels]uint16{u16(AdminBodyUsed0), u16(AdminBodyUsed1)}, Buffered: u16(AdminBodyBuffered), Done: u16(AdminBodyDone),
		Head: u16(AdminBodyHead), Tail: u16(AdminBodyTail), GNext: u16(AdminBodyGNext), Size: u16(AdminBodySize),
		Slot: binary.BigEndian.Uint32(body[AdminBodySlot:]), GrantTime: binary.BigEndian.Uint32(body[AdminBodyGrantTS:]),
	}
	if r.Op == wire.AdminSwitchProbe {
		r.Live = body[AdminBodyState] == 1
		r.Withdrawn = body[AdminBodyState] == 2
		r.Txn, r.Token, r.Mode, r.Priority, r.Tenant = h.Txn(), h.Token(), h.Mode(), h.Priority(), h.Tenant()
		r.Timestamp, r.Lease = h.Timestamp(), h.LeaseMicros()
		r.Client = h.ClientAddr()
		r.Forwarded = h.Has(wire.FlagForwarded)
	}
	return r, nil
}

// ParsePacketIn splits a packet-in as the engine's CPU port delivers it into its header
// fields and the frame.
func ParsePacketIn(b []byte) (ingressPort int, reason uint8, frame []byte, err error) {
	if len(b) < PacketInLen {
		return 0, 0, nil, ErrAdminShort
	}
	v := binary.BigEndian.Uint16(b)
	return int(v >> 7), uint8(v & 0x7f), b[PacketInLen:], nil
}

// The lease sweep's rules (docs/controlplane.md, "Lease sweeps"), one place for every control
// plane of the switch (controlplane/ctlcore, and the soak's switch in testbed/e2e): which slots a
// sweep probes after a lock's head probe, which probed grant is force-released, and when a lock's
// queue-empty is owed again.

// LeaseExpired reports whether the probed slot r is a live grant whose lease ran out on the
// switch's clock: (Now - GrantTime) mod 2^32 > Lease µs. The sweep force-releases it.
func (r AdminReply) LeaseExpired() bool {
	return r.Live && r.Token != 0 && r.Now-r.GrantTime > r.Lease
}

// SlotProbes returns the probes of lock's occupied slots other than the first of level 0, which
// the head probe head (level 0, offset 0) already returned: every offset below head.Used of each
// level, in level then offset order.
func SlotProbes(lock uint32, head AdminReply) []AdminRequest {
	var ps []AdminRequest
	for lv := range Levels {
		for off := range int(head.Used[lv]) {
			if lv == 0 && off == 0 {
				continue
			}
			ps = append(ps, AdminRequest{Op: wire.AdminSwitchProbe, Lock: lock, Level: uint8(lv), Offset: uint16(off)})
		}
	}
	return ps
}

// QueueEmptyOwed reports whether the head probe head shows a switch queue with no holder and no
// occupied slot while requests are counted as buffered at the server: the switch sent queue-empty
// when its queue drained, and the server pushes requests back in answer, so this state lasting
// from one sweep to the next (no queue-empty or push-back can still be on its way after a whole
// sweep period) means a queue-empty or a push-back was lost. The control plane then sets the
// count again (AdminSwitchSetBuffered with Value = head.Buffered), which makes the switch send
// queue-empty at once.
func (r AdminReply) QueueEmptyOwed() bool {
	return r.Holders == 0 && r.Used == [Levels]uint16{} && r.Buffered > 0
}
