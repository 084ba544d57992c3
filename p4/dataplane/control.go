package dataplane

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/internal/udpframe"
)

// This file holds the control interface of p4/netlock.p4 as Go values: what the control
// plane writes into each table. Every type renders its match key and action data as
// big-endian byte strings of the P4 widths (the P4Runtime encoding, also what the engine's
// runtime API takes). docs/dataplane.md ("Control interface") is the reference.

// MAC is an Ethernet address.
type MAC = udpframe.MAC

// Rack is the switch's rack configuration: the default action of TableRack. Until it is set
// the switch treats every lock request as ordinary traffic and refuses every control message.
type Rack struct {
	// Key is the rack key: overflow and queue-empty packets carry it, push-backs and admin
	// packets must carry it.
	Key uint64
	// SwitchIP is the switch's own address: the source of overflow and queue-empty, so the
	// servers send push-backs to SwitchIP:8888.
	SwitchIP netip.Addr
	// SwitchMAC is the source MAC of packets to servers.
	SwitchMAC MAC
	// DefaultLease is the lease of a grant whose request asked for none; MaxLease caps the
	// lease a request may ask for. Both must fit the 32-bit microsecond field.
	DefaultLease time.Duration
	MaxLease     time.Duration
}

func micros32(d time.Duration) ([]byte, error) {
	us := d / time.Microsecond
	if us < 1 || us > 1<<32-1 {
		return nil, fmt.Errorf("lease %v: must be in [1µs, %v]", d, time.Duration(1<<32-1)*time.Microsecond)
	}
	return be(uint64(us), 4), nil
}

// Action returns the action and its data.
func (r Rack) Action() (string, [][]byte, error) {
	if !r.SwitchIP.Is4() {
		return "", nil, fmt.Errorf("dataplane: rack: switch address %v is not IPv4", r.SwitchIP)
	}
	def, err := micros32(r.DefaultLease)
	if err != nil {
		return "", nil, fmt.Errorf("dataplane: rack: default %w", err)
	}
	max, err := micros32(r.MaxLease)
	if err != nil {
		return "", nil, fmt.Errorf("dataplane: rack: max %w", err)
	}
	if r.MaxLease < r.DefaultLease {
		return "", nil, errors.New("dataplane: rack: max lease below default lease")
	}
	ip := r.SwitchIP.As4()
	return ActionSetRack, [][]byte{be(r.Key, 8), ip[:], r.SwitchMAC[:], def, max}, nil
}

// Server is one lock server: where the switch sends overflow and queue-empty for the locks
// that name it, and the source address of the switch's answers about those locks.
type Server struct {
	// Addr is the server's UDP address (IPv4).
	Addr netip.AddrPort
	// Port is the switch port the server is on; MAC its Ethernet address.
	Port int
	MAC  MAC
}

// Match returns the key of server number id in TableServers.
func ServerMatch(id uint16) []byte { return be(uint64(id), 2) }

// Action returns the action and its data.
func (s Server) Action() (string, [][]byte, error) {
	if !s.Addr.Addr().Unmap().Is4() {
		return "", nil, fmt.Errorf("dataplane: server %v is not IPv4", s.Addr)
	}
	if s.Port < 0 || s.Port > 510 {
		return "", nil, fmt.Errorf("dataplane: server port %d out of range", s.Port)
	}
	ip := s.Addr.Addr().Unmap().As4()
	return ActionSetServer, [][]byte{ip[:], be(uint64(s.Addr.Port()), 2), be(uint64(s.Port), 2), s.MAC[:]}, nil
}

// MaxRegion bounds a region's size: queue positions are 15-bit offsets with a lap bit.
const MaxRegion = 1<<15 - 1

// Region is a lock's slice of the slot pool at one priority level: slots Left..Left+Size-1.
type Region struct {
	Left uint32
	Size uint16
}

// LockEntry is one entry of TableLock: a lock that lives in the switch.
type LockEntry struct {
	// Lock is the lock id (the match key).
	Lock uint32
	// Index selects the lock's state in the per-lock registers (below Sizing.Locks). Two
	// locks in the table must not share an index.
	Index uint32
	// Regions are the lock's queue regions, one per priority level, disjoint from every other
	// region in the table. Each must have at least one slot.
	Regions [Levels]Region
	// Server is the number of the lock's server in TableServers.
	Server uint16
	// Paused sends new acquires to the server's q2 (not counted as buffered, no queue-empty)
	// while the switch queue drains: the first step of moving the lock out of the switch.
	Paused bool
}

// Match returns the key of the entry.
func (e LockEntry) Match() []byte { return be(uint64(e.Lock), 4) }

// Action returns the action and its data.
func (e LockEntry) Action() (string, [][]byte) {
	name := ActionLockHit
	if e.Paused {
		name = ActionLockPause
	}
	return name, [][]byte{be(uint64(e.Index), 4), be(uint64(e.Regions[0].Left), 4), be(uint64(e.Regions[0].Size), 2),
		be(uint64(e.Regions[1].Left), 4), be(uint64(e.Regions[1].Size), 2), be(uint64(e.Server), 2)}
}

// Validate checks e against the program's sizes.
func (e LockEntry) Validate(s Sizing) error {
	s = s.WithDefaults()
	if int(e.Index) >= s.Locks {
		return fmt.Errorf("dataplane: lock %d: index %d beyond %d locks", e.Lock, e.Index, s.Locks)
	}
	for i, r := range e.Regions {
		if r.Size == 0 || r.Size > MaxRegion {
			return fmt.Errorf("dataplane: lock %d: level %d region of %d slots: must be in 1..%d", e.Lock, i, r.Size, MaxRegion)
		}
		if uint64(r.Left)+uint64(r.Size) > uint64(s.Slots()) {
			return fmt.Errorf("dataplane: lock %d: level %d region [%d, %d) beyond %d slots", e.Lock, i, r.Left,
				uint64(r.Left)+uint64(r.Size), s.Slots())
		}
	}
	a, b := e.Regions[0], e.Regions[1]
	if a.Left < b.Left+uint32(b.Size) && b.Left < a.Left+uint32(a.Size) {
		return fmt.Errorf("dataplane: lock %d: the regions of its levels overlap", e.Lock)
	}
	return nil
}

// NextHop is an IPv4 route's action: rewrite the MACs and send out of Port.
type NextHop struct {
	SrcMAC, DstMAC MAC
	Port           int
}

// RouteMatch returns the lpm key and prefix length of a route.
func RouteMatch(p netip.Prefix) ([]byte, int, error) {
	if !p.Addr().Is4() {
		return nil, 0, fmt.Errorf("dataplane: route %v is not IPv4", p)
	}
	a := p.Masked().Addr().As4()
	return a[:], p.Bits(), nil
}

// Action returns the action and its data.
func (h NextHop) Action() (string, [][]byte) {
	return ActionRoute, [][]byte{h.SrcMAC[:], h.DstMAC[:], be(uint64(h.Port), 2)}
}

// TenantMatch returns the key of a tenant in TableTenant.
func TenantMatch(tenant uint16) []byte { return be(uint64(tenant), 2) }

// TenantAction returns the action of a tenant limited by meter cell index.
func TenantAction(index int) (string, [][]byte) {
	return ActionTenantLimit, [][]byte{be(uint64(index), 4)}
}

// be renders v big-endian in n bytes.
func be(v uint64, n int) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return append([]byte(nil), b[8-n:]...)
}
