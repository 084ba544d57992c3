package alloc

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Strategy chooses which locks get switch slots.
type Strategy uint8

const (
	// StrategyKnapsack is Algorithm 3 (Allocate), with the Config's hysteresis.
	StrategyKnapsack Strategy = iota
	// StrategyRandom is the random allocation of the paper's Figure 13 (AllocateRandom), seeded
	// by Config.Seed; hysteresis does not apply (its order does not change between periods).
	StrategyRandom
)

func (s Strategy) String() string {
	switch s {
	case StrategyKnapsack:
		return "knapsack"
	case StrategyRandom:
		return "random"
	}
	return fmt.Sprintf("Strategy(%d)", uint8(s))
}

// Config configures an Allocator.
type Config struct {
	// Slots is the size of the switch's pooled queue (netlock.p4: dataplane.Sizing.Slots()).
	// The regions of every lock at every priority level share it.
	Slots int
	// Rules are the data plane's constraints: the number of priority levels and the bounds of
	// a region (netlock.p4: Rules{Levels: 2, MinRegion: 1, MaxRegion: 32767}). Levels 0 means 1.
	Rules Rules
	// Hysteresis is h >= 0: slots a lock already holds count (1+h) times their value, so a lock
	// loses them only to locks whose r/c is more than 1+h times its own (see Knapsack). The
	// price is at most a factor 1/(1+h) of the optimum. Rule: set h to the relative change of
	// r/c between periods that is noise rather than a trend; with rates counted over a period
	// (n requests, Poisson-like, relative deviation 1/sqrt(n)), h = 3/sqrt(n) for the smallest
	// n among the locks at the margin. Multiplicative noise within a factor f of a steady rate
	// never changes the allocation when f*f <= 1+h (package doc). 0 disables it.
	Hysteresis float64
	// Strategy is StrategyKnapsack (the zero value) or StrategyRandom.
	Strategy Strategy
	// Seed seeds StrategyRandom.
	Seed uint64
}

func (c *Config) validate() error {
	if c.Slots < 0 {
		return fmt.Errorf("alloc: Config.Slots = %d: %w", c.Slots, ErrInvalid)
	}
	if c.Rules.Levels == 0 {
		c.Rules.Levels = 1
	}
	if err := c.Rules.check(); err != nil {
		return fmt.Errorf("alloc: Config.Rules: %w", err)
	}
	if math.IsNaN(c.Hysteresis) || math.IsInf(c.Hysteresis, 0) || c.Hysteresis < 0 {
		return fmt.Errorf("alloc: Config.Hysteresis = %v: want a finite h >= 0: %w", c.Hysteresis, ErrInvalid)
	}
	if c.Strategy > StrategyRandom {
		return fmt.Errorf("alloc: Config.Strategy = %v: %w", c.Strategy, ErrInvalid)
	}
	return nil
}

// Demand is one lock's measured demand at one priority level for the coming period.
type Demand struct {
	Lock uint32
	// Level is the priority level, 0 <= Level < Config.Rules.Levels.
	Level int
	// Rate is r_i, Contention c_i (see Item).
	Rate       float64
	Contention int
}

// Plan is the outcome of one period: the allocation, the layout of the pool and the changes.
type Plan struct {
	PoolPlan
	// Shares is the new allocation by (lock, level), including the MinRegion regions of levels
	// without demand.
	Shares []Share
	// Value is the objective of the new allocation, sum of r*s/c over the demands. Best is the
	// objective of Algorithm 3 on the same demands without hysteresis and without MinRegion
	// (the optimum of the problem without the entry charge, so an upper bound). With
	// StrategyKnapsack and MinRegion 0, Value >= Best/(1+h).
	Value, Best float64
	// Locks is the number of locks in the switch; Used the slots allocated.
	Locks, Used int
}

// Allocator is the control plane's memory allocator: each period it turns the locks' measured
// demands into an allocation (Algorithm 3 with hysteresis under the data plane's Rules, or
// the random strawman) and a layout of the pooled queue, remembering the layout between
// periods. It is a pure state machine: no I/O, no clock, no randomness beyond Config.Seed; not
// safe for concurrent use.
type Allocator struct {
	cfg    Config
	layout []Region // sorted by Start
}

// New returns an Allocator with an empty pool.
func New(cfg Config) (*Allocator, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Allocator{cfg: cfg}, nil
}

// Layout returns a copy of the current layout, sorted by Start.
func (a *Allocator) Layout() []Region { return slices.Clone(a.layout) }

// Restore replaces the current layout, for a controller that takes over a switch already
// programmed. It checks it with CheckLayout and the Rules' levels; on error the Allocator is
// unchanged.
func (a *Allocator) Restore(layout []Region) error {
	if err := CheckLayout(a.cfg.Slots, layout); err != nil {
		return fmt.Errorf("alloc: restore: %w", err)
	}
	for _, r := range layout {
		if r.Level < 0 || r.Level >= a.cfg.Rules.Levels {
			return fmt.Errorf("alloc: restore: region %v: level out of range: %w", r.key(), ErrInvalid)
		}
	}
	next := slices.Clone(layout)
	slices.SortFunc(next, func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
	a.layout = next
	return nil
}

// Step runs one period: demands holds every (lock, level) that should be considered (a lock in
// the switch without any demand leaves it). On error (a bad demand) the Allocator is unchanged.
func (a *Allocator) Step(demands []Demand) (*Plan, error) {
	r := a.cfg.Rules
	items := make([]Item, len(demands))
	held := make(map[key]int, len(a.layout))
	for _, reg := range a.layout {
		held[reg.key()] = reg.Len
	}
	for i, d := range demands {
		if d.Level < 0 || d.Level >= r.Levels {
			return nil, fmt.Errorf("alloc: lock %d: level %d: want 0..%d: %w", d.Lock, d.Level, r.Levels-1, ErrInvalid)
		}
		items[i] = Item{Lock: d.Lock, Level: d.Level, Rate: d.Rate, Contention: d.Contention, Held: held[key{d.Lock, d.Level}]}
	}
	if err := CheckItems(items); err != nil {
		return nil, err
	}
	var shares []Share
	switch a.cfg.Strategy {
	case StrategyRandom:
		shares = AllocateRandom(items, a.cfg.Slots, a.cfg.Seed, r)
	default:
		shares = Allocate(items, a.cfg.Slots, a.cfg.Hysteresis, r)
	}
	want := make([]Want, len(shares))
	plan := &Plan{Shares: shares}
	locks := map[uint32]bool{}
	for i, s := range shares {
		want[i] = Want{Lock: s.Lock, Level: s.Level, Len: s.Slots}
		plan.Used += s.Slots
		locks[s.Lock] = true
	}
	plan.Locks = len(locks)
	pp, err := PlanPool(a.cfg.Slots, a.layout, want)
	if err != nil {
		return nil, fmt.Errorf("alloc: %w", err)
	}
	plan.PoolPlan = pp
	plan.Value = shareValue(items, shares)
	plan.Best = shareValue(items, Allocate(items, a.cfg.Slots, 0, Rules{Levels: r.Levels, MaxRegion: r.MaxRegion}))
	a.layout = pp.Regions
	return plan, nil
}

// shareValue is the objective of shares for items.
func shareValue(items []Item, shares []Share) float64 {
	got := make(map[key]int, len(shares))
	for _, s := range shares {
		got[key{s.Lock, s.Level}] = s.Slots
	}
	s := make([]int, len(items))
	for i, it := range items {
		s[i] = got[key{it.Lock, it.Level}]
	}
	return Value(items, s)
}
