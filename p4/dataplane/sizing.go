package dataplane

import (
	"fmt"
	"strconv"
)

// Parts is the number of register arrays per slot field p4/netlock.p4's pool is split over
// (NetLock's shared queue pooled from several arrays, figure 5): slot s is in part
// s >> PartBits. p4/tna/netlock.p4 keeps each field in one array of all Parts << PartBits
// slots (docs/dataplane.md, "SRAM for the slot pool").
const Parts = 4

// Sizing holds the program's compile-time sizes: the -D macros of p4/netlock.p4. The zero
// value of a field selects the program's default.
type Sizing struct {
	// Locks is the number of per-lock state entries (NETLOCK_LOCKS, default 16384): lock
	// indices in TableLock are below it.
	Locks int
	// PartBits is log2 of the slots of one pool part (NETLOCK_PART_BITS, default 15: 4 x 32768
	// slots). Region bounds and slot numbers are below Parts << PartBits.
	PartBits int
	// TenantMeters is the number of tenant meter cells (NETLOCK_TENANT_METERS, default 1024).
	TenantMeters int
	// Ended is the number of cells of the table of ended requests (NETLOCK_ENDED, default
	// 65536), which tells late copies of retransmitted acquires from new requests.
	Ended int
	// CPUPort is the controller's port (CPU_PORT, default 255).
	CPUPort int
}

// DefaultSizing is the program as written.
var DefaultSizing = Sizing{Locks: 16384, PartBits: 15, TenantMeters: 1024, Ended: 65536, CPUPort: 255}

// TofinoSizing is the sizing p4/tna/netlock.p4 compiles with for a Tofino (bf-p4c refuses the
// program with another NETLOCK_PART_BITS; our engine takes any): DefaultSizing with 4 x 16384 pool
// slots, so that SLOT_BITS is 16 and the token's and the slot arithmetic's 32-bit fields split
// where PHV containers do (docs/dataplane.md, "The real compiler").
var TofinoSizing = Sizing{Locks: 16384, PartBits: 14, TenantMeters: 1024, Ended: 65536, CPUPort: 255}

// WithDefaults returns s with its zero fields set from DefaultSizing.
func (s Sizing) WithDefaults() Sizing {
	if s.Locks == 0 {
		s.Locks = DefaultSizing.Locks
	}
	if s.PartBits == 0 {
		s.PartBits = DefaultSizing.PartBits
	}
	if s.TenantMeters == 0 {
		s.TenantMeters = DefaultSizing.TenantMeters
	}
	if s.CPUPort == 0 {
		s.CPUPort = DefaultSizing.CPUPort
	}
	if s.Ended == 0 {
		s.Ended = DefaultSizing.Ended
	}
	return s
}

// Validate checks the sizes the program accepts.
func (s Sizing) Validate() error {
	s = s.WithDefaults()
	switch {
	case s.Locks < 1 || s.Locks > 1<<24:
		return fmt.Errorf("dataplane: sizing: %d locks: must be in 1..%d", s.Locks, 1<<24)
	case s.PartBits < 1 || s.PartBits > 16:
		return fmt.Errorf("dataplane: sizing: part bits %d: must be in 1..16", s.PartBits)
	case s.TenantMeters < 1 || s.TenantMeters > 1<<20:
		return fmt.Errorf("dataplane: sizing: %d tenant meters: must be in 1..%d", s.TenantMeters, 1<<20)
	case s.CPUPort < 1 || s.CPUPort > 510:
		return fmt.Errorf("dataplane: sizing: CPU port %d: must be in 1..510", s.CPUPort)
	case s.Ended < 1 || s.Ended > 1<<24:
		return fmt.Errorf("dataplane: sizing: %d ended cells: must be in 1..%d", s.Ended, 1<<24)
	}
	return nil
}

// Defines returns the preprocessor macros that select s (front.Options.Defines, or -D).
func (s Sizing) Defines() map[string]string {
	s = s.WithDefaults()
	return map[string]string{
		"NETLOCK_LOCKS":         strconv.Itoa(s.Locks),
		"NETLOCK_PART_BITS":     strconv.Itoa(s.PartBits),
		"NETLOCK_TENANT_METERS": strconv.Itoa(s.TenantMeters),
		"NETLOCK_ENDED":         strconv.Itoa(s.Ended),
		"CPU_PORT":              strconv.Itoa(s.CPUPort),
	}
}

// Slots is the size of the slot pool.
func (s Sizing) Slots() int { return Parts << s.WithDefaults().PartBits }

// SlotBits is the number of low token bits that hold the slot number.
func (s Sizing) SlotBits() uint { return uint(s.WithDefaults().PartBits) + 2 }

// Token is the fencing token of the grant numbered seq in slot: (seq << SlotBits) | slot.
// Tokens of one lock grow with seq, and seq grows with every grant of the lock.
func (s Sizing) Token(seq uint64, slot uint32) uint64 {
	return seq<<s.SlotBits() | uint64(slot)
}

// SplitToken returns the grant number and the slot of a token.
func (s Sizing) SplitToken(token uint64) (seq uint64, slot uint32) {
	b := s.SlotBits()
	return token >> b, uint32(token & (1<<b - 1))
}
