package alloc

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Benchmarks at the scale of a switch (100k locks, 50k slots). Each reports its time per
// operation and, as x-sort, the ratio to sorting 100k float64 with slices.Sort measured in the
// same run (the machine is shared: the ratio is the figure to compare).
//
//	go test ./alloc -run '^$' -bench . -benchtime 20x

const benchLocks, benchSlots = 100_000, 50_000

// benchDemands draws 100k locks with Zipf-like rates (rank^-0.99) and contention 1..8 at level
// 0; a tenth of them also have a level-1 demand (110k demands).
func benchDemands(seed uint64) []Demand {
	r := rand.New(rand.NewPCG(seed, 0xbe))
	ds := make([]Demand, benchLocks, benchLocks+benchLocks/10)
	for i := range benchLocks {
		ds[i] = Demand{Lock: uint32(i), Rate: 1e6 * math.Pow(float64(i+1), -0.99), Contention: 1 + r.IntN(8)}
		if i%10 == 0 { // a tenth of the locks also see high-priority requests
			ds = append(ds, Demand{Lock: uint32(i), Level: 1, Rate: 1e5 * math.Pow(float64(i+1), -0.99), Contention: 1 + r.IntN(4)})
		}
	}
	r.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	return ds
}

func benchItems(ds []Demand) []Item {
	items := make([]Item, len(ds))
	for i, d := range ds {
		items[i] = Item{Lock: d.Lock, Level: d.Level, Rate: d.Rate, Contention: d.Contention}
	}
	return items
}

// sortRef is the reference: the time to sort benchLocks float64 keys, per operation.
func sortRef(n int) time.Duration {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]float64, benchLocks)
	buf := make([]float64, benchLocks)
	for i := range keys {
		keys[i] = r.Float64()
	}
	start := time.Now()
	for range n {
		copy(buf, keys)
		slices.Sort(buf)
	}
	return time.Since(start) / time.Duration(n)
}

func report(b *testing.B, start time.Time) {
	b.StopTimer()
	per := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(per)/float64(sortRef(max(b.N, 3))), "x-sort")
}

func BenchmarkKnapsack100k(b *testing.B) {
	items := benchItems(benchDemands(1))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		Knapsack(items, benchSlots, 0.1)
	}
	report(b, start)
}

// BenchmarkAllocate100k is Algorithm 3 under netlock.p4's rules (two levels, regions of
// 1..32767 slots).
func BenchmarkAllocate100k(b *testing.B) {
	items := benchItems(benchDemands(1))
	rules := Rules{Levels: 2, MinRegion: 1, MaxRegion: 32767}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		Allocate(items, benchSlots, 0.1, rules)
	}
	report(b, start)
}

func BenchmarkRandom100k(b *testing.B) {
	items := benchItems(benchDemands(1))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		Random(items, benchSlots, 7)
	}
	report(b, start)
}

// BenchmarkStepFirst100k: the first period of a fresh Allocator (every lock is new).
func BenchmarkStepFirst100k(b *testing.B) {
	ds := benchDemands(1)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		b.StopTimer()
		a, err := New(Config{Slots: benchSlots, Rules: Rules{Levels: 2, MinRegion: 1, MaxRegion: 32767}, Hysteresis: 0.1})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := a.Step(ds); err != nil {
			b.Fatal(err)
		}
	}
	report(b, start)
}

// BenchmarkStepChurn100k: steady periods in which 1% of the locks change rate (some enter,
// some leave the switch, contentions change), as a controller sees them.
func BenchmarkStepChurn100k(b *testing.B) {
	ds := benchDemands(1)
	a, err := New(Config{Slots: benchSlots, Rules: Rules{Levels: 2, MinRegion: 1, MaxRegion: 32767}, Hysteresis: 0.1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.Step(ds); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	moves, changes := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		b.StopTimer()
		for range benchLocks / 100 {
			i := r.IntN(len(ds))
			ds[i].Rate *= math.Exp(3 * (r.Float64() - 0.5))
			ds[i].Contention = 1 + r.IntN(8)
		}
		b.StartTimer()
		p, err := a.Step(ds)
		if err != nil {
			b.Fatal(err)
		}
		moves += p.Moves
		changes += len(p.Changes)
	}
	report(b, start)
	b.ReportMetric(float64(changes)/float64(b.N), "changes/op")
	b.ReportMetric(float64(moves)/float64(b.N), "moves/op")
}
