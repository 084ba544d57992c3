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
	// StrategyKnapsack is Algorithm 3 (Knapsack), with the Config's hysteresis.
	StrategyKnapsack Strategy = iota
	// StrategyRandom is the random allocation of the paper's Figure 13 (Random), seeded by
	// Config.Seed; hysteresis does not apply (its order does not change between periods).
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
	// Slots is the size of each priority level's pool of queue slots in the switch; the number
	// of levels is len(Slots) (>= 1). The data plane keeps one pooled queue per priority level,
	// so each level is allocated and laid out on its own: a lock with requests at two levels
	// has one demand and one region per level.
	Slots []int
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
	if len(c.Slots) == 0 {
		return fmt.Errorf("alloc: Config.Slots is empty: want one pool size per priority level: %w", ErrInvalid)
	}
	for p, s := range c.Slots {
		if s < 0 {
			return fmt.Errorf("alloc: Config.Slots[%d] = %d: %w", p, s, ErrInvalid)
		}
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
	// Level is the priority level, 0 <= Level < len(Config.Slots).
	Level int
	// Rate is r_i, Contention c_i (see Item).
	Rate       float64
	Contention int
}

// Plan is the outcome of one period: the allocation, each level's layout and the changes.
type Plan struct {
	// Levels holds one PoolPlan per priority level.
	Levels []PoolPlan
	// Value is the objective of the new allocation (sum over levels of sum r*s/c);
	// Best is the objective of Algorithm 3 without hysteresis on the same demands (the
	// optimum). Value >= Best/(1+h) with StrategyKnapsack.
	Value, Best float64
	// Switch is the number of (lock, level) demands that got slots; Slots the slots used.
	Switch, Slots int
}

// Moves is the total number of compaction moves of the plan.
func (p *Plan) Moves() int {
	n := 0
	for _, l := range p.Levels {
		n += l.Moves
	}
	return n
}

// Allocator is the control plane's memory allocator: each period it turns the locks' measured
// demands into per-level allocations (Algorithm 3 with hysteresis, or the random strawman) and
// region layouts of the pooled queues, remembering the layout between periods. It is a pure
// state machine: no I/O, no clock, no randomness beyond Config.Seed; not safe for concurrent use.
type Allocator struct {
	cfg    Config
	layout [][]Region // per level, sorted by Start
}

// New returns an Allocator with empty pools.
func New(cfg Config) (*Allocator, error) {
	cfg.Slots = slices.Clone(cfg.Slots)
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Allocator{cfg: cfg, layout: make([][]Region, len(cfg.Slots))}, nil
}

// Layout returns a copy of the current layout of each level.
func (a *Allocator) Layout() [][]Region {
	out := make([][]Region, len(a.layout))
	for p, l := range a.layout {
		out[p] = slices.Clone(l)
	}
	return out
}

// Restore replaces the current layout (one slice of regions per level), for a controller that
// takes over a switch already programmed. It checks each level with CheckLayout; on error the
// Allocator is unchanged.
func (a *Allocator) Restore(layout [][]Region) error {
	if len(layout) != len(a.cfg.Slots) {
		return fmt.Errorf("alloc: restore: %d levels, the Allocator has %d: %w", len(layout), len(a.cfg.Slots), ErrInvalid)
	}
	next := make([][]Region, len(layout))
	for p, l := range layout {
		if err := CheckLayout(a.cfg.Slots[p], l); err != nil {
			return fmt.Errorf("restore level %d: %w", p, err)
		}
		next[p] = slices.Clone(l)
		slices.SortFunc(next[p], func(a, b Region) int { return cmp.Compare(a.Start, b.Start) })
	}
	a.layout = next
	return nil
}

// Step runs one period: demands holds every lock that should be considered (a lock in the
// switch without a demand leaves it). On error (a bad demand) the Allocator is unchanged.
func (a *Allocator) Step(demands []Demand) (*Plan, error) {
	levels := len(a.cfg.Slots)
	items := make([][]Item, levels)
	for _, d := range demands {
		if d.Level < 0 || d.Level >= levels {
			return nil, fmt.Errorf("alloc: lock %d: level %d: want 0..%d: %w", d.Lock, d.Level, levels-1, ErrInvalid)
		}
		items[d.Level] = append(items[d.Level], Item{Lock: d.Lock, Rate: d.Rate, Contention: d.Contention})
	}
	plan := &Plan{Levels: make([]PoolPlan, levels)}
	next := make([][]Region, levels)
	for p := range levels {
		its := items[p]
		if err := CheckItems(its); err != nil {
			return nil, fmt.Errorf("level %d: %w", p, err)
		}
		held := make(map[uint32]int, len(a.layout[p]))
		for _, r := range a.layout[p] {
			held[r.Lock] = r.Len
		}
		for i := range its {
			its[i].Held = held[its[i].Lock]
		}
		var slots []int
		switch a.cfg.Strategy {
		case StrategyRandom:
			slots = Random(its, a.cfg.Slots[p], a.cfg.Seed^mix(uint64(p)))
		default:
			slots = Knapsack(its, a.cfg.Slots[p], a.cfg.Hysteresis)
		}
		want := make([]Want, 0, len(its))
		for i, s := range slots {
			if s > 0 {
				want = append(want, Want{Lock: its[i].Lock, Len: s})
				plan.Switch++
				plan.Slots += s
			}
		}
		pp, err := PlanPool(a.cfg.Slots[p], a.layout[p], want)
		if err != nil {
			return nil, fmt.Errorf("alloc: level %d: %w", p, err)
		}
		plan.Levels[p] = pp
		next[p] = pp.Regions
		plan.Value += Value(its, slots)
		plan.Best += Value(its, Knapsack(its, a.cfg.Slots[p], 0))
	}
	a.layout = next
	return plan, nil
}
