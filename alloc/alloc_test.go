package alloc

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"one level", Config{Slots: []int{10}}, true},
		{"levels and hysteresis", Config{Slots: []int{10, 0, 5}, Hysteresis: 0.3}, true},
		{"random", Config{Slots: []int{10}, Strategy: StrategyRandom, Seed: 9}, true},
		{"no levels", Config{}, false},
		{"negative pool", Config{Slots: []int{10, -1}}, false},
		{"negative hysteresis", Config{Slots: []int{10}, Hysteresis: -0.1}, false},
		{"NaN hysteresis", Config{Slots: []int{10}, Hysteresis: math.NaN()}, false},
		{"unknown strategy", Config{Slots: []int{10}, Strategy: 7}, false},
	} {
		_, err := New(tc.cfg)
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v does not wrap ErrInvalid", tc.name, err)
		}
	}
}

// TestNewCopiesSlots: the Allocator does not alias the caller's slice.
func TestNewCopiesSlots(t *testing.T) {
	slots := []int{4}
	a, err := New(Config{Slots: slots})
	if err != nil {
		t.Fatal(err)
	}
	slots[0] = 100
	p, err := a.Step([]Demand{{Lock: 1, Rate: 1, Contention: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Slots != 4 {
		t.Fatalf("used %d slots of a 4-slot pool", p.Slots)
	}
}

// randomDemands draws demands over levels with ids shared between levels.
func randomDemands(r *rand.Rand, levels int) []Demand {
	seen := map[[2]uint32]bool{}
	var ds []Demand
	for n := r.IntN(60); n > 0; n-- {
		d := Demand{Lock: uint32(r.IntN(40)), Level: r.IntN(levels), Rate: float64(r.IntN(1000)), Contention: 1 + r.IntN(6)}
		if k := [2]uint32{d.Lock, uint32(d.Level)}; !seen[k] {
			seen[k] = true
			ds = append(ds, d)
		}
	}
	return ds
}

// TestStepRandom runs many periods of random demands and checks every plan: each level's plan
// passes checkPlan against the previous layout, the allocation is Knapsack's (or Random's) for
// the incumbents' slots, Value is its objective and >= Best/(1+h).
func TestStepRandom(t *testing.T) {
	for k := range instances(300) {
		seed := *flagSeed + uint64(k)
		r := rand.New(rand.NewPCG(seed, 0x57))
		levels := 1 + r.IntN(3)
		cfg := Config{Hysteresis: []float64{0, 0.1, 1}[r.IntN(3)], Strategy: Strategy(r.IntN(2)), Seed: seed}
		for range levels {
			cfg.Slots = append(cfg.Slots, r.IntN(40))
		}
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for period := range 12 {
			before := a.Layout()
			ds := randomDemands(r, levels)
			p, err := a.Step(ds)
			if err != nil {
				t.Fatalf("seed %d period %d: %v", seed, period, err)
			}
			value, best := 0.0, 0.0
			for l := range levels {
				var items []Item
				held := map[uint32]int{}
				for _, reg := range before[l] {
					held[reg.Lock] = reg.Len
				}
				for _, d := range ds {
					if d.Level == l {
						items = append(items, Item{Lock: d.Lock, Rate: d.Rate, Contention: d.Contention, Held: held[d.Lock]})
					}
				}
				var s []int
				if cfg.Strategy == StrategyRandom {
					s = Random(items, cfg.Slots[l], cfg.Seed^mix(uint64(l)))
				} else {
					s = Knapsack(items, cfg.Slots[l], cfg.Hysteresis)
				}
				var want []Want
				for i, n := range s {
					if n > 0 {
						want = append(want, Want{Lock: items[i].Lock, Len: n})
					}
				}
				if err := checkPlan(cfg.Slots[l], before[l], want, p.Levels[l]); err != nil {
					t.Fatalf("seed %d period %d level %d: %v", seed, period, l, err)
				}
				value += Value(items, s)
				best += Value(items, Knapsack(items, cfg.Slots[l], 0))
			}
			if p.Value != value || p.Best != best {
				t.Fatalf("seed %d period %d: value %v best %v, recomputed %v %v", seed, period, p.Value, p.Best, value, best)
			}
			if cfg.Strategy == StrategyKnapsack && p.Value*(1+cfg.Hysteresis) < p.Best*(1-1e-12) {
				t.Fatalf("seed %d period %d: value %v < best %v / (1+%v)", seed, period, p.Value, p.Best, cfg.Hysteresis)
			}
			if got := a.Layout(); !slices.EqualFunc(got, planLayouts(p), slices.Equal) {
				t.Fatalf("seed %d period %d: Layout() differs from the plan", seed, period)
			}
		}
	}
}

func planLayouts(p *Plan) [][]Region {
	out := make([][]Region, len(p.Levels))
	for i, l := range p.Levels {
		out[i] = l.Regions
	}
	return out
}

// TestStepErrorKeepsState: a bad demand in the last level leaves the Allocator as it was.
func TestStepErrorKeepsState(t *testing.T) {
	a, err := New(Config{Slots: []int{4, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Step([]Demand{{Lock: 1, Rate: 5, Contention: 2}, {Lock: 2, Level: 1, Rate: 5, Contention: 2}}); err != nil {
		t.Fatal(err)
	}
	before := a.Layout()
	for _, bad := range [][]Demand{
		{{Lock: 3, Rate: 5, Contention: 2}, {Lock: 2, Level: 1, Rate: math.Inf(1), Contention: 2}},
		{{Lock: 3, Rate: 5, Contention: 2}, {Lock: 3, Rate: 6, Contention: 2}},
		{{Lock: 3, Level: -1, Rate: 5, Contention: 2}},
	} {
		if _, err := a.Step(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%v: error %v, want ErrInvalid", bad, err)
		}
		if !slices.EqualFunc(a.Layout(), before, slices.Equal) {
			t.Fatalf("%v: layout changed after an error", bad)
		}
	}
	// Layout returns copies.
	l := a.Layout()
	l[0][0].Start = 99
	if a.Layout()[0][0].Start == 99 {
		t.Fatal("Layout aliases the Allocator's state")
	}
}

// FuzzStep drives an Allocator with demands decoded from the fuzzer's bytes (5 bytes each: lock,
// level, rate, contention, period break) and checks every plan's invariants.
func FuzzStep(f *testing.F) {
	f.Add([]byte{1, 0, 200, 2, 0, 2, 0, 10, 1, 1, 1, 0, 200, 2, 0})
	f.Add([]byte{3, 1, 5, 9, 0, 3, 1, 5, 9, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := New(Config{Slots: []int{13, 5}, Hysteresis: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		var ds []Demand
		run := func() {
			before := a.Layout()
			p, err := a.Step(ds)
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("error %v does not wrap ErrInvalid", err)
				}
				if !slices.EqualFunc(a.Layout(), before, slices.Equal) {
					t.Fatal("layout changed after an error")
				}
				ds = ds[:0]
				return
			}
			for l, pp := range p.Levels {
				want := []Want{}
				for _, r := range pp.Regions {
					want = append(want, Want{Lock: r.Lock, Len: r.Len})
				}
				if err := checkPlan(a.cfg.Slots[l], before[l], want, pp); err != nil {
					t.Fatalf("level %d: %v", l, err)
				}
			}
			ds = ds[:0]
		}
		for len(data) >= 5 {
			ds = append(ds, Demand{Lock: uint32(data[0] % 16), Level: int(data[1] % 3), Rate: float64(data[2]), Contention: int(data[3] % 8)})
			if data[4]&1 == 1 {
				run()
			}
			data = data[5:]
		}
		run()
	})
}
