package alloc

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// dataplaneRules are netlock.p4's: two levels, regions of 1..32767 slots.
var dataplaneRules = Rules{Levels: 2, MinRegion: 1, MaxRegion: 32767}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{Slots: 10}, true},
		{"data plane rules and hysteresis", Config{Slots: 10, Rules: dataplaneRules, Hysteresis: 0.3}, true},
		{"random", Config{Slots: 10, Strategy: StrategyRandom, Seed: 9}, true},
		{"empty pool", Config{}, true},
		{"negative pool", Config{Slots: -1}, false},
		{"too many levels", Config{Slots: 10, Rules: Rules{Levels: 256}}, false},
		{"negative min region", Config{Slots: 10, Rules: Rules{Levels: 1, MinRegion: -1}}, false},
		{"min above max", Config{Slots: 10, Rules: Rules{Levels: 1, MinRegion: 3, MaxRegion: 2}}, false},
		{"negative hysteresis", Config{Slots: 10, Hysteresis: -0.1}, false},
		{"NaN hysteresis", Config{Slots: 10, Hysteresis: math.NaN()}, false},
		{"unknown strategy", Config{Slots: 10, Strategy: 7}, false},
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

// randomDemands draws demands over levels, some locks at several levels.
func randomDemands(r *rand.Rand, levels int) []Demand {
	seen := map[key]bool{}
	var ds []Demand
	for n := r.IntN(60); n > 0; n-- {
		d := Demand{Lock: uint32(r.IntN(40)), Level: r.IntN(levels), Rate: float64(r.IntN(1000)), Contention: 1 + r.IntN(6)}
		if k := (key{d.Lock, d.Level}); !seen[k] {
			seen[k] = true
			ds = append(ds, d)
		}
	}
	return ds
}

// checkRules checks an allocation against the rules and the pool: within the pool, each region
// within bounds, and with MinRegion every switch lock at every level.
func checkRules(shares []Share, slots int, r Rules) error {
	used := 0
	levels := map[uint32]int{}
	for _, s := range shares {
		used += s.Slots
		if s.Slots < max(1, r.MinRegion) || (r.MaxRegion > 0 && s.Slots > r.MaxRegion) || s.Level < 0 || s.Level >= r.Levels {
			return errorf("share %+v outside the rules %+v", s, r)
		}
		levels[s.Lock]++
	}
	if used > slots {
		return errorf("%d slots used of %d", used, slots)
	}
	if r.MinRegion > 0 {
		for l, n := range levels {
			if n != r.Levels {
				return errorf("lock %d has %d regions, want one per level (%d)", l, n, r.Levels)
			}
		}
	}
	return nil
}

// TestStepRandom runs many periods of random demands and checks every plan: the layout passes
// checkPlan against the previous one, the allocation is Allocate's (or AllocateRandom's) for the
// incumbents' slots and follows the rules, Value is its objective and, without MinRegion,
// Value >= Best/(1+h).
func TestStepRandom(t *testing.T) {
	for k := range instances(300) {
		seed := *flagSeed + uint64(k)
		r := rand.New(rand.NewPCG(seed, 0x57))
		rules := Rules{Levels: 1 + r.IntN(3), MinRegion: r.IntN(2), MaxRegion: []int{0, 3}[r.IntN(2)]}
		cfg := Config{Slots: r.IntN(60), Rules: rules, Hysteresis: []float64{0, 0.1, 1}[r.IntN(3)], Strategy: Strategy(r.IntN(2)), Seed: seed}
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for period := range 12 {
			before := a.Layout()
			ds := randomDemands(r, rules.Levels)
			p, err := a.Step(ds)
			if err != nil {
				t.Fatalf("seed %d period %d: %v", seed, period, err)
			}
			held := map[key]int{}
			for _, reg := range before {
				held[reg.key()] = reg.Len
			}
			items := make([]Item, len(ds))
			for i, d := range ds {
				items[i] = Item{Lock: d.Lock, Level: d.Level, Rate: d.Rate, Contention: d.Contention, Held: held[key{d.Lock, d.Level}]}
			}
			want := Allocate(items, cfg.Slots, cfg.Hysteresis, rules)
			if cfg.Strategy == StrategyRandom {
				want = AllocateRandom(items, cfg.Slots, cfg.Seed, rules)
			}
			if !slices.Equal(p.Shares, want) {
				t.Fatalf("seed %d period %d: shares %v, want %v", seed, period, p.Shares, want)
			}
			if err := checkRules(p.Shares, cfg.Slots, rules); err != nil {
				t.Fatalf("seed %d period %d: %v", seed, period, err)
			}
			var ws []Want
			for _, s := range p.Shares {
				ws = append(ws, Want{Lock: s.Lock, Level: s.Level, Len: s.Slots})
			}
			if err := checkPlan(cfg.Slots, before, ws, p.PoolPlan); err != nil {
				t.Fatalf("seed %d period %d: %v", seed, period, err)
			}
			if v := shareValue(items, p.Shares); p.Value != v {
				t.Fatalf("seed %d period %d: value %v, recomputed %v", seed, period, p.Value, v)
			}
			if cfg.Strategy == StrategyKnapsack && rules.MinRegion == 0 && p.Value*(1+cfg.Hysteresis) < p.Best*(1-1e-12) {
				t.Fatalf("seed %d period %d: value %v < best %v / (1+%v)", seed, period, p.Value, p.Best, cfg.Hysteresis)
			}
			if got := a.Layout(); !slices.Equal(got, p.Regions) {
				t.Fatalf("seed %d period %d: Layout() differs from the plan", seed, period)
			}
		}
	}
}

// TestStepErrorKeepsState: a bad demand leaves the Allocator as it was.
func TestStepErrorKeepsState(t *testing.T) {
	a, err := New(Config{Slots: 8, Rules: dataplaneRules})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Step([]Demand{{Lock: 1, Rate: 5, Contention: 2}, {Lock: 2, Level: 1, Rate: 5, Contention: 2}}); err != nil {
		t.Fatal(err)
	}
	before := a.Layout()
	if len(before) != 4 {
		t.Fatalf("layout %v: want two regions per lock", before)
	}
	for _, bad := range [][]Demand{
		{{Lock: 3, Rate: 5, Contention: 2}, {Lock: 2, Level: 1, Rate: math.Inf(1), Contention: 2}},
		{{Lock: 3, Rate: 5, Contention: 2}, {Lock: 3, Rate: 6, Contention: 2}},
		{{Lock: 3, Level: 2, Rate: 5, Contention: 2}},
		{{Lock: 3, Level: -1, Rate: 5, Contention: 2}},
	} {
		if _, err := a.Step(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%v: error %v, want ErrInvalid", bad, err)
		}
		if !slices.Equal(a.Layout(), before) {
			t.Fatalf("%v: layout changed after an error", bad)
		}
	}
	l := a.Layout()
	l[0].Start = 99
	if a.Layout()[0].Start == 99 {
		t.Fatal("Layout aliases the Allocator's state")
	}
	if err := a.Restore([]Region{{Lock: 1, Level: 2, Start: 0, Len: 1}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("restore of a level beyond the rules: %v", err)
	}
}

// FuzzStep drives an Allocator with demands decoded from the fuzzer's bytes (5 bytes each: lock,
// level, rate, contention, period break) and checks every plan's invariants.
func FuzzStep(f *testing.F) {
	f.Add([]byte{1, 0, 200, 2, 0, 2, 0, 10, 1, 1, 1, 0, 200, 2, 0})
	f.Add([]byte{3, 1, 5, 9, 0, 3, 1, 5, 9, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := New(Config{Slots: 17, Rules: Rules{Levels: 2, MinRegion: 1, MaxRegion: 5}, Hysteresis: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		var ds []Demand
		run := func() {
			before := a.Layout()
			p, err := a.Step(ds)
			ds = ds[:0]
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("error %v does not wrap ErrInvalid", err)
				}
				if !slices.Equal(a.Layout(), before) {
					t.Fatal("layout changed after an error")
				}
				return
			}
			if err := checkRules(p.Shares, 17, a.cfg.Rules); err != nil {
				t.Fatal(err)
			}
			var ws []Want
			for _, s := range p.Shares {
				ws = append(ws, Want{Lock: s.Lock, Level: s.Level, Len: s.Slots})
			}
			if err := checkPlan(17, before, ws, p.PoolPlan); err != nil {
				t.Fatal(err)
			}
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

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
