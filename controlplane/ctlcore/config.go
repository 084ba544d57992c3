package ctlcore

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// Server is one lock server of the rack: number Num in dataplane.TableServers, its UDP address
// (clients address it; the Core's ServerAdmin effects go there), the switch port it is on and its
// MAC.
type Server struct {
	Num  uint16
	Addr netip.AddrPort
	Port int
	MAC  dataplane.MAC
}

// Standby is a standby server for server Num: a host with Num's address on another switch port,
// unrouted until it takes over (docs/controlplane.md, "Lock server death").
type Standby struct {
	Num  uint16
	Port int
	MAC  dataplane.MAC
}

// Host is a route of the rack: packets to Prefix leave by Port with destination MAC MAC (clients,
// the controller's own address, other hosts).
type Host struct {
	Prefix netip.Prefix
	Port   int
	MAC    dataplane.MAC
}

// Config configures a Core.
type Config struct {
	// Sizing is the program's sizes (p4/netlock.p4's defaults when zero).
	Sizing dataplane.Sizing
	// Rack is the switch's rack configuration: the rack key (every admin packet and every
	// server admin request carries it), the switch's address and MAC, the leases. Required.
	Rack dataplane.Rack
	// Cookie is the value the Core writes into the switch's cookie register after programming
	// it; a switch whose register reads otherwise (0 after a restart) is programmed again. 0: a
	// value derived from the time of the first bring-up.
	Cookie uint64
	// Servers are the lock servers, numbered 1..255 (at least one); Standbys their standbys.
	Servers  []Server
	Standbys []Standby
	// Hosts are the other routes (clients, the controller's address).
	Hosts []Host
	// Tenants are the per-tenant quotas the switch enforces.
	Tenants []Tenant

	// Slots is the part of the switch's slot pool the allocator may use (0: all of it, less the
	// staging slots). MaxRegion caps a lock's region per priority level (default 64: a region is
	// walked one slot per pass on netlock switch, docs/dataplane.md "Passes per operation").
	Slots, MaxRegion int
	// Strategy, Hysteresis and Seed configure alloc.Allocator.
	Strategy   alloc.Strategy
	Hysteresis float64
	Seed       uint64
	// AllocPeriod is how often the allocation runs (statistics, Algorithm 3, migrations).
	// Default 1s. 0 after validation is impossible; set Manual to run it only on Reallocate.
	AllocPeriod time.Duration
	Manual      bool
	// StatsLocks is how many of its hottest locks each server reports per period (1..64,
	// default 64).
	StatsLocks int
	// DefaultContention is c_i of a lock nobody declared and whose queue was never seen deeper
	// than 1 (default 1); Contention are the operator's declarations (lock -> c_i).
	DefaultContention int
	Contention        map[uint32]int
	// SizeEveryLevel sizes every priority level of a switch lock as its level 0 (c_i slots each,
	// up to Levels times the memory): the operator's setting for a rack whose clients use both
	// of the switch's priority levels. The servers' statistics do not tell the levels apart, so
	// without it level 0 gets c_i slots and the other level alloc's minimum region of one; a
	// request at that level then finds one slot, and a queue-empty announces one free slot at that
	// level, so a lock overflowing at that level takes back one of its buffered requests per
	// queue-empty.
	SizeEveryLevel bool
	// MinRate is the smallest request rate (requests per second) for which a lock is considered
	// for the switch at all (default 0: every reported lock).
	MinRate float64
	// Smoothing is the weight of a period's measured rate in r_i, an exponentially weighted
	// moving average over periods (default 0.5; 1: the last period alone).
	Smoothing float64

	// SweepPeriod is how often the switch locks' queues are probed (lease sweep, queue depths,
	// the cookie). Default 100ms.
	SweepPeriod time.Duration
	// PingPeriod is how often every server is pinged; a ping unanswered for a PingPeriod (while
	// the switch answers) is missed, and a server that misses DeadAfter pings in a row is
	// suspected, no longer pinged, and declared dead ServerLease + LeaseMargin after the last
	// ping sent to it (deadWait). DeadAfter is at most 64 (the unanswered pings remembered).
	// Defaults 200ms, 5.
	PingPeriod time.Duration
	DeadAfter  int
	// ServerLease is the controller lease the servers enforce (lockserver's controller_lease):
	// a server the controller stops pinging grants nothing after it. 0: the servers are not
	// fenced, and a server that only looked dead (a partition, a pause) may keep granting beside
	// its standby; the Core then still takes over, after LeaseMargin.
	ServerLease time.Duration
	// LeaseMargin covers message delays and clock-rate differences in every wait on a lease.
	// Default 50ms.
	LeaseMargin time.Duration
	// MaxGrantRate bounds the grants per second the switch can make (all locks together): after
	// a switch restart the servers' token floors are raised that much above the switch's last
	// observed token counter for every second since the observation (docs/controlplane.md,
	// "Switch restart"). Default 1e9.
	MaxGrantRate float64
	// PollInterval paces the Core's polls while it waits (a drain, a barrier). Default 5ms.
	PollInterval time.Duration
	// MoveTimeout bounds how long a lock moving into the switch waits for its server's queue to
	// drain before the move is abandoned (the lock stays on its server). Default 2 * max lease.
	MoveTimeout time.Duration

	// Log receives the Core's decisions. Nil discards them.
	Log *slog.Logger

	// TestingKnobs change the Core's behaviour for tests only; the zero value is the Core.
	TestingKnobs TestingKnobs
}

// TestingKnobs is the Core's test-only behaviour, in one place (CockroachDB's habit): a
// production configuration leaves it zero, and nothing outside tests and their rigs (the
// simulated and the software racks' negative controls) may set it.
type TestingKnobs struct {
	// Mutation breaks one rule on purpose: the negative controls run the Core with each and
	// expect their checker to see violations.
	Mutation Mutation
}

// Mutation names a deliberately broken variant of the Core (TestingKnobs.Mutation).
type Mutation uint8

// Mutations.
const (
	NoMutation Mutation = iota
	// MutationSkipDrain: a lock moving out is handed to its server without waiting for its switch
	// queue to drain.
	MutationSkipDrain
	// MutationSkipBarrier: a lock moving out does not wait for its server's push-backs to arrive.
	MutationSkipBarrier
	// MutationSkipTokenBase: a lock moving in keeps its index's grant counter (no token base).
	MutationSkipTokenBase
	// MutationSkipFloor: a lock moving out is adopted without a token floor.
	MutationSkipFloor
	// MutationSkipYieldDrain: a lock moves in while its server still has holders and waiters.
	MutationSkipYieldDrain
	// MutationSkipRecoveryWait: after a switch restart, its locks go back to their servers at
	// once, without waiting out the leases.
	MutationSkipRecoveryWait
	// MutationGraceFromAnswer: a standby's takeover grace is counted from the last ping the
	// dead server answered instead of the last one sent to it (takeoverGrace).
	MutationGraceFromAnswer
)

// Defaults.
const (
	DefaultMaxRegion   = 64
	DefaultAllocPeriod = time.Second
	DefaultSweepPeriod = 100 * time.Millisecond
	DefaultPingPeriod  = 200 * time.Millisecond
	DefaultDeadAfter   = 5
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("ctlcore: bad configuration")

func (c *Config) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("ctlcore: %s: %w", fmt.Sprintf(format, args...), ErrConfig)
	}
	if err := c.Sizing.Validate(); err != nil {
		return bad("%v", err)
	}
	if _, _, err := c.Rack.Action(); err != nil {
		return bad("%v", err)
	}
	if c.Rack.Key == 0 {
		return bad("no rack key")
	}
	if len(c.Servers) == 0 {
		return bad("no servers")
	}
	nums := map[uint16]bool{}
	ports := map[int]string{}
	port := func(p int, what string) error {
		if p < 0 || p > 510 || p == c.Sizing.CPUPort || (c.Sizing.CPUPort == 0 && p == dataplane.DefaultSizing.CPUPort) {
			return bad("%s: switch port %d out of range or the CPU port", what, p)
		}
		if o, ok := ports[p]; ok {
			return bad("%s and %s on one switch port %d", o, what, p)
		}
		ports[p] = what
		return nil
	}
	for _, s := range c.Servers {
		if s.Num == 0 || nums[s.Num] {
			return bad("server number %d: must be unique and in 1..255", s.Num)
		}
		if s.Num > 255 {
			return bad("server number %d: must be in 1..255", s.Num)
		}
		nums[s.Num] = true
		if _, _, err := (dataplane.Server{Addr: s.Addr, Port: s.Port, MAC: s.MAC}).Action(); err != nil {
			return bad("server %d: %v", s.Num, err)
		}
		if err := port(s.Port, fmt.Sprintf("server %d", s.Num)); err != nil {
			return err
		}
	}
	for i, s := range c.Standbys {
		if !nums[s.Num] {
			return bad("standby %d for server %d: no such server", i, s.Num)
		}
		if err := port(s.Port, fmt.Sprintf("standby %d of server %d", i, s.Num)); err != nil {
			return err
		}
	}
	for _, h := range c.Hosts {
		if !h.Prefix.Addr().Is4() || h.Prefix.Bits() == 0 {
			return bad("route %v: want an IPv4 prefix longer than /0", h.Prefix)
		}
		if h.Port < 0 || h.Port > 510 {
			return bad("route %v: port %d out of range", h.Prefix, h.Port)
		}
	}
	for _, t := range c.Tenants {
		if t.Meter < 0 || t.Meter >= c.sizing().TenantMeters || t.Rate <= 0 {
			return bad("tenant %d: meter %d (0..%d) and a positive rate needed", t.ID, t.Meter, c.sizing().TenantMeters-1)
		}
	}
	maxServer := 0
	for _, s := range c.Servers {
		maxServer = max(maxServer, int(s.Num))
	}
	sz := c.sizing()
	reservedSlots, reservedIdx := 2*maxServer, maxServer
	if c.Slots == 0 {
		c.Slots = sz.Slots() - reservedSlots
	}
	if c.Slots < 0 || c.Slots > sz.Slots()-reservedSlots {
		return bad("slots %d: the pool has %d beside the %d staging slots", c.Slots, sz.Slots()-reservedSlots, reservedSlots)
	}
	if sz.Locks <= reservedIdx {
		return bad("%d lock indices cannot hold %d staging entries and any lock", sz.Locks, reservedIdx)
	}
	if c.MaxRegion == 0 {
		c.MaxRegion = DefaultMaxRegion
	}
	if c.MaxRegion < 1 || c.MaxRegion > dataplane.MaxRegion {
		return bad("max region %d: must be in 1..%d", c.MaxRegion, dataplane.MaxRegion)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.AllocPeriod, DefaultAllocPeriod)
	def(&c.SweepPeriod, DefaultSweepPeriod)
	def(&c.PingPeriod, DefaultPingPeriod)
	def(&c.LeaseMargin, 50*time.Millisecond)
	def(&c.PollInterval, 5*time.Millisecond)
	def(&c.MoveTimeout, 2*c.Rack.MaxLease)
	if c.DeadAfter == 0 {
		c.DeadAfter = DefaultDeadAfter
	}
	if c.StatsLocks == 0 {
		c.StatsLocks = wire.MaxLockStats
	}
	if c.DefaultContention == 0 {
		c.DefaultContention = 1
	}
	if c.MaxGrantRate == 0 {
		c.MaxGrantRate = 1e9
	}
	if c.Smoothing == 0 {
		c.Smoothing = 0.5
	}
	switch {
	case c.AllocPeriod < 0 || c.SweepPeriod < 0 || c.PingPeriod < 0 || c.LeaseMargin < 0 || c.PollInterval < 0 ||
		c.MoveTimeout < 0 || c.ServerLease < 0:
		return bad("negative period")
	case c.DeadAfter < 1:
		return bad("dead after %d pings: must be at least 1", c.DeadAfter)
	case c.DeadAfter > maxPending:
		return bad("dead after %d pings: at most %d unanswered pings are remembered", c.DeadAfter, maxPending)
	case c.StatsLocks < 1 || c.StatsLocks > wire.MaxLockStats:
		return bad("stats locks %d: must be in 1..%d", c.StatsLocks, wire.MaxLockStats)
	case c.DefaultContention < 1:
		return bad("default contention %d: must be at least 1", c.DefaultContention)
	case c.Hysteresis < 0 || c.MinRate < 0 || c.MaxGrantRate <= 0:
		return bad("hysteresis, min rate and max grant rate must not be negative")
	case c.Smoothing < 0 || c.Smoothing > 1:
		return bad("smoothing %v: must be in (0, 1]", c.Smoothing)
	}
	for l, n := range c.Contention {
		if n < 1 {
			return bad("contention of lock %d: %d: must be at least 1", l, n)
		}
		if wire.IsReservedLock(l) {
			return bad("lock %d is reserved for the control plane", l)
		}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

func (c *Config) sizing() dataplane.Sizing {
	s := c.Sizing
	d := dataplane.DefaultSizing
	if s.Locks == 0 {
		s.Locks = d.Locks
	}
	if s.PartBits == 0 {
		s.PartBits = d.PartBits
	}
	if s.TenantMeters == 0 {
		s.TenantMeters = d.TenantMeters
	}
	if s.CPUPort == 0 {
		s.CPUPort = d.CPUPort
	}
	return s
}
