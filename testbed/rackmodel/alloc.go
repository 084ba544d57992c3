package rackmodel

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// demandMeter measures each lock's demand at the lock servers, as NetLock's control plane
// learns it from the servers' reports (section 4.3): r_i, the lock's acquires per second, and
// c_i, the most requests of it queued at once (holders, waiters and buffered requests after
// each acquire: a probe of the queue depth).
type demandMeter struct {
	start int64
	locks map[uint32]*lockDemand
}

type lockDemand struct {
	n uint64
	c int
}

func (m *demandMeter) observe(c *lockcore.Core, lock uint32) {
	d := m.locks[lock]
	if d == nil {
		d = &lockDemand{}
		m.locks[lock] = d
	}
	d.n++
	if info, ok := c.Inspect(lock); ok {
		d.c = max(d.c, len(info.Holders)+len(info.Waiters)+len(info.Buffered))
	}
}

// MeasureDemand starts measuring the locks' demand at the servers (replacing an earlier
// measurement). Locks in the switch are not seen.
func (r *Rack) MeasureDemand() {
	r.measure = &demandMeter{start: r.sim.now, locks: map[uint32]*lockDemand{}}
}

// Demands returns the demand measured since MeasureDemand: per lock its rate (acquires per
// second of virtual time) and contention, at priority level 0 (the workloads use one level).
func (r *Rack) Demands() []alloc.Demand {
	m := r.measure
	if m == nil || r.sim.now <= m.start {
		return nil
	}
	secs := float64(r.sim.now-m.start) / 1e9
	out := make([]alloc.Demand, 0, len(m.locks))
	for l, d := range m.locks {
		out = append(out, alloc.Demand{Lock: l, Rate: float64(d.n) / secs, Contention: max(1, d.c)})
	}
	slices.SortFunc(out, func(a, b alloc.Demand) int { return cmp.Compare(a.Lock, b.Lock) })
	return out
}

// Allocation is what Allocate put in the switch.
type Allocation struct {
	Strategy alloc.Strategy
	// Slots is the switch memory the allocator could use; Used what it allocated.
	Slots, Used int
	// Locks is the number of locks moved into the switch; Demands the locks measured.
	Locks, Demands int
	// Value is the allocation's objective (sum r_i s_i / c_i, requests per second the switch is
	// guaranteed to serve under the paper's worst case), Total the measured rate of all locks
	// (with BothLevels, of the level-0 allocation in half the memory).
	Value, Total float64
	// BothLevels is AllocSpec.BothLevels.
	BothLevels bool
}

// ErrNotQuiet is returned by Allocate when workers are in a transaction.
var ErrNotQuiet = errors.New("rackmodel: allocate needs a quiesced rack")

var errRecovering = errors.New("rackmodel: allocate during a switch restart's recovery")

// AllocSpec says how to allocate the switch's memory.
type AllocSpec struct {
	// Strategy is Algorithm 3 (alloc.StrategyKnapsack) or the random strawman.
	Strategy alloc.Strategy
	// Slots is the switch memory the allocator may use (at most the pool).
	Slots int
	// Seed seeds the random strategy.
	Seed uint64
	// BothLevels makes every switch lock's level-1 region as large as its level-0 one: the
	// allocator places level 0 in half of Slots and the other half mirrors it. The workloads use
	// one priority, and by default a switch lock's level-1 region is alloc's minimum (1 slot);
	// but netlock.p4's queue-empty announces min(size0, size1) free slots (docs/dataplane.md),
	// so then every push-back cycle of an overflowing lock admits one request. BothLevels trades
	// half the memory for full push-backs.
	BothLevels bool
}

// Allocate runs the allocator (alloc, Algorithm 3 or the random strawman) on the measured demand
// and moves the chosen locks into the switch, as docs/dataplane.md "Moving a lock" does it for a
// lock without requests: reset of the lock's index, token base above every token its server
// granted, lock_table entry. The rack must be quiesced (Quiesce), so that no request of a moving
// lock is in flight; measuring stops.
func (r *Rack) Allocate(spec AllocSpec) (Allocation, error) {
	strategy, slots, seed := spec.Strategy, spec.Slots, spec.Seed
	if r.idleWorkers() != r.p.Clients*r.p.Workers {
		return Allocation{}, ErrNotQuiet
	}
	pool := r.p.Sizing.Slots()
	if slots < 0 || slots > pool {
		return Allocation{}, fmt.Errorf("rackmodel: %d slots: the pool has %d", slots, pool)
	}
	if r.ctl.recovering {
		return Allocation{}, errRecovering
	}
	if err := r.clearSwitch(); err != nil {
		return Allocation{}, err
	}
	demands := r.Demands()
	r.measure = nil
	a := Allocation{Strategy: strategy, Slots: slots, Demands: len(demands), BothLevels: spec.BothLevels}
	for _, d := range demands {
		a.Total += d.Rate
	}
	if slots == 0 || len(demands) == 0 {
		return a, nil
	}
	levels, half := dataplane.Levels, slots
	if spec.BothLevels {
		// One level allocated in half the memory; the other half mirrors it.
		levels, half = 1, slots/2
	}
	al, err := alloc.New(alloc.Config{Slots: half, Rules: alloc.Rules{Levels: levels, MinRegion: 1,
		MaxRegion: r.p.MaxRegion}, Strategy: strategy, Seed: seed})
	if err != nil {
		return a, err
	}
	plan, err := al.Step(demands)
	if err != nil {
		return a, err
	}
	a.Value, a.Used = plan.Value, plan.Used
	entries := map[uint32]*dataplane.LockEntry{}
	var order []uint32
	for _, reg := range plan.Regions {
		e := entries[reg.Lock]
		if e == nil {
			e = &dataplane.LockEntry{Lock: reg.Lock, Server: uint16(r.homeOf(reg.Lock))}
			entries[reg.Lock] = e
			order = append(order, reg.Lock)
		}
		e.Regions[reg.Level] = dataplane.Region{Left: uint32(reg.Start), Size: uint16(reg.Len)}
		if spec.BothLevels {
			e.Regions[1] = dataplane.Region{Left: uint32(half + reg.Start), Size: uint16(reg.Len)}
			a.Used += reg.Len
		}
	}
	if len(order) > r.p.Sizing.Locks {
		return a, fmt.Errorf("rackmodel: %d switch locks: the program has state for %d", len(order), r.p.Sizing.Locks)
	}
	slices.Sort(order)
	for i, l := range order {
		e := entries[l]
		e.Index = uint32(i)
		if err := r.moveIn(e); err != nil {
			return a, err
		}
	}
	a.Locks = len(order)
	r.event("allocation (%s): %d locks in the switch", strategy, a.Locks)
	return a, nil
}

// moveIn puts one lock without requests into the switch: the entry goes in paused (so that the
// admin packets find the lock's index), then a reset of its state, the token base, and the entry
// goes live.
func (r *Rack) moveIn(e *dataplane.LockEntry) error {
	paused := *e
	paused.Paused = true
	if err := r.sw.dp.SetLock(paused); err != nil {
		return fmt.Errorf("rackmodel: move lock %d in: %w", e.Lock, err)
	}
	if err := r.sw.adminOK(dataplane.AdminRequest{Op: wire.AdminSwitchReset, ID: 1, Lock: e.Lock}); err != nil {
		return fmt.Errorf("rackmodel: move lock %d in: %w", e.Lock, err)
	}
	if !r.cfg.Fault.NoTokenBase {
		id := r.idents[e.Server]
		base := id.cores[r.coreOf(e.Lock)].LastToken()
		if err := r.sw.adminOK(dataplane.AdminRequest{Op: wire.AdminSwitchTokenBase, ID: 2, Lock: e.Lock, Value: base}); err != nil {
			return fmt.Errorf("rackmodel: move lock %d in: %w", e.Lock, err)
		}
	}
	// The lock's server drops acquires that reach it directly from now on (the clients'
	// retransmissions go through the switch), buffers its overflows in q2 and knows the lock is
	// in the switch (wire.AdminYield): after a switch restart, the controller finds the locks to
	// recover there.
	r.adminServer(r.idents[e.Server], wire.Fields{Status: wire.AdminYield, Lock: e.Lock})
	if err := r.sw.dp.SetLock(*e); err != nil {
		return err
	}
	r.installed[e.Lock] = *e
	return nil
}

// clearSwitch moves every lock of the switch back to its server, on a quiesced rack: each
// lock's switch queue is empty, its server adopts it above the switch's tokens, its entry goes.
func (r *Rack) clearSwitch() error {
	bits := r.p.Sizing.SlotBits()
	for _, l := range r.installedLocks() {
		e := r.installed[l]
		head, err := r.sw.admin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, ID: 9, Lock: l})
		if err != nil {
			return fmt.Errorf("rackmodel: move lock %d out: %w", l, err)
		}
		if head.Holders > 0 || head.Waiting != [dataplane.Levels]uint16{} {
			return fmt.Errorf("rackmodel: move lock %d out: %d holders, %v waiting on a quiesced rack", l, head.Holders,
				head.Waiting)
		}
		r.adopt(r.idents[e.Server], l, ((head.Value>>bits)+1)<<bits)
		if err := r.sw.dp.DeleteLock(l); err != nil {
			return fmt.Errorf("rackmodel: move lock %d out: %w", l, err)
		}
		delete(r.installed, l)
	}
	return nil
}
