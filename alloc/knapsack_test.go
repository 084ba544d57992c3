package alloc

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// The randomized optimality tests run -alloc.n instances with seeds -alloc.seed, -alloc.seed+1,
// ...; a failure names its seed, and -alloc.seed=S -alloc.n=1 re-runs that one instance.
var (
	flagSeed = flag.Uint64("alloc.seed", 1, "first seed of the randomized alloc tests")
	flagN    = flag.Int("alloc.n", 0, "instances per randomized alloc test (0: each test's default)")
)

func instances(def int) int {
	switch {
	case *flagN > 0:
		return *flagN
	case testing.Short():
		return def / 10
	case raceEnabled:
		return def / 10
	}
	return def
}

// strategy is an allocation rule under test: slots per item for a pool of the given size.
type strategy func(items []Item, slots int) []int

func knapsack0(items []Item, slots int) []int { return Knapsack(items, slots, 0) }

// smallInstance draws n <= 7 locks with c in 1..4 and integer rates in 0..20 (some zero, many
// ties), and a pool of 0..sum(c)+1 slots: small enough to enumerate every allocation.
func smallInstance(seed uint64) ([]Item, int) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	n := 1 + r.IntN(7)
	items := make([]Item, n)
	sum := 0
	for i := range items {
		items[i] = Item{Lock: uint32(r.IntN(1000)*8 + i), Rate: float64(r.IntN(21)), Contention: 1 + r.IntN(4)}
		sum += items[i].Contention
	}
	return items, r.IntN(sum + 2)
}

// lcmC is the least common multiple of the contentions: value*lcmC is an integer for integer
// rates, so the brute force compares allocations exactly.
func lcmC(items []Item) int64 {
	gcd := func(a, b int64) int64 {
		for b != 0 {
			a, b = b, a%b
		}
		return a
	}
	l := int64(1)
	for _, it := range items {
		l = l / gcd(l, int64(it.Contention)) * int64(it.Contention)
	}
	return l
}

// scaled is lcmC * Value(items, s), exact for integer rates.
func scaled(items []Item, s []int, l int64) int64 {
	var v int64
	for i, it := range items {
		v += int64(it.Rate) * int64(min(s[i], it.Contention)) * (l / int64(it.Contention))
	}
	return v
}

// bruteForce enumerates every integral allocation 0 <= s_i <= c_i with sum <= slots and returns
// the best scaled value.
func bruteForce(items []Item, slots int) int64 {
	l := lcmC(items)
	s := make([]int, len(items))
	var best int64
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == len(items) {
			best = max(best, scaled(items, s, l))
			return
		}
		for k := 0; k <= min(left, items[i].Contention); k++ {
			s[i] = k
			rec(i+1, left-k)
		}
		s[i] = 0
	}
	rec(0, slots)
	return best
}

// feasible checks the constraints (2) and (3) of the paper's problem.
func feasible(items []Item, s []int, slots int) error {
	if len(s) != len(items) {
		return fmt.Errorf("%d allocations for %d items", len(s), len(items))
	}
	sum := 0
	for i, it := range items {
		if s[i] < 0 || s[i] > it.Contention {
			return fmt.Errorf("lock %d: s=%d outside 0..c=%d", it.Lock, s[i], it.Contention)
		}
		sum += s[i]
	}
	if sum > slots {
		return fmt.Errorf("sum s = %d > S = %d", sum, slots)
	}
	return nil
}

// checkBruteForce runs strat on n small instances and returns the first one where it is not
// optimal (or infeasible), or "" if none.
func checkBruteForce(strat strategy, first uint64, n int) string {
	for k := range n {
		seed := first + uint64(k)
		items, slots := smallInstance(seed)
		s := strat(items, slots)
		if err := feasible(items, s, slots); err != nil {
			return fmt.Sprintf("seed %d: %v (items %+v, S=%d)", seed, err, items, slots)
		}
		l := lcmC(items)
		if got, want := scaled(items, s, l), bruteForce(items, slots); got != want {
			return fmt.Sprintf("seed %d: value %d/%d, optimum %d/%d (items %+v, S=%d, s=%v)", seed, got, l, want, l, items, slots, s)
		}
	}
	return ""
}

// TestKnapsackOptimalBruteForce proves Algorithm 3 optimal for the integral problem on every
// small instance: its value equals the best over all allocations, compared exactly.
func TestKnapsackOptimalBruteForce(t *testing.T) {
	n := instances(5000)
	if msg := checkBruteForce(knapsack0, *flagSeed, n); msg != "" {
		t.Fatalf("%s\nre-run: go test ./alloc -run TestKnapsackOptimalBruteForce -alloc.seed=SEED -alloc.n=1", msg)
	}
	t.Logf("Algorithm 3 equals the brute-force optimum on %d instances (seeds %d..%d)", n, *flagSeed, *flagSeed+uint64(n)-1)
}

// wrongOrders are negative controls: allocation rules that look plausible but do not sort by
// r/c. The checks that prove Algorithm 3 optimal must catch every one of them.
var wrongOrders = map[string]strategy{
	"by rate": func(items []Item, slots int) []int {
		return greedyBy(items, slots, func(a, b Item) int { return cmp.Compare(b.Rate, a.Rate) })
	},
	"by r/c ascending": func(items []Item, slots int) []int {
		return greedyBy(items, slots, func(a, b Item) int { return cmp.Compare(a.Rate*float64(b.Contention), b.Rate*float64(a.Contention)) })
	},
	"by contention": func(items []Item, slots int) []int {
		return greedyBy(items, slots, func(a, b Item) int { return cmp.Compare(a.Contention, b.Contention) })
	},
	"r/c but whole locks only": func(items []Item, slots int) []int {
		s := knapsack0(items, slots)
		for i, it := range items {
			if s[i] < it.Contention {
				s[i] = 0
			}
		}
		return s
	},
	"random": func(items []Item, slots int) []int { return Random(items, slots, 7) },
}

// greedyBy gives min(remaining, c) in the order of less (rate-0 items skipped).
func greedyBy(items []Item, slots int, less func(a, b Item) int) []int {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return less(items[a], items[b]) })
	s := make([]int, len(items))
	for _, i := range idx {
		if items[i].Rate > 0 {
			s[i] = min(slots, items[i].Contention)
			slots -= s[i]
		}
	}
	return s
}

// TestNegativeControlsBruteForce: each wrong order must be caught by the brute-force check.
func TestNegativeControlsBruteForce(t *testing.T) {
	for name, strat := range wrongOrders {
		msg := checkBruteForce(strat, *flagSeed, max(instances(5000), 500))
		if msg == "" {
			t.Errorf("%s: the brute-force check did not catch a non-optimal order", name)
			continue
		}
		t.Logf("%s: caught: %s", name, msg)
	}
}

// lpOptimum is the exact optimum of the continuous relaxation of the paper's problem (s real,
// 0 <= s_i <= c_i, sum s_i <= S), computed from the LP's dual, not from any ordering: with
// v_i = r_i/c_i, the dual of max sum v_i s_i is min over lambda >= 0 of
// D(lambda) = lambda*S + sum c_i * max(0, v_i - lambda) (lambda prices a slot, the max terms
// price the bounds s_i <= c_i). By strong duality min D = the LP optimum, and D is convex and
// piecewise linear with breakpoints at the v_i, so its minimum is at lambda = 0 or some v_i.
// Exact rationals: no tolerance.
func lpOptimum(items []Item, slots int) *big.Rat {
	v := make([]*big.Rat, len(items))
	cands := []*big.Rat{new(big.Rat)}
	for i, it := range items {
		v[i] = new(big.Rat).SetFrac64(int64(it.Rate), int64(it.Contention))
		cands = append(cands, v[i])
	}
	var best *big.Rat
	for _, lam := range cands {
		d := new(big.Rat).Mul(lam, big.NewRat(int64(slots), 1))
		for i, it := range items {
			if v[i].Cmp(lam) > 0 {
				x := new(big.Rat).Sub(v[i], lam)
				d.Add(d, x.Mul(x, big.NewRat(int64(it.Contention), 1)))
			}
		}
		if best == nil || d.Cmp(best) < 0 {
			best = d
		}
	}
	return best
}

// exactValue is Value(items, s) in rationals (integer rates).
func exactValue(items []Item, s []int) *big.Rat {
	v := new(big.Rat)
	for i, it := range items {
		v.Add(v, big.NewRat(int64(it.Rate)*int64(min(s[i], it.Contention)), int64(it.Contention)))
	}
	return v
}

// lpInstance draws 1..40 locks with c in 1..50 and integer rates spanning four decades (ties
// are rare, unlike smallInstance), and a pool of 0..sum(c)+9 slots.
func lpInstance(seed uint64) ([]Item, int) {
	r := rand.New(rand.NewPCG(seed, 0x1b))
	n := 1 + r.IntN(40)
	items := make([]Item, n)
	sum := 0
	for i := range items {
		items[i] = Item{Lock: uint32(i), Rate: math.Round(math.Pow(10, 4*r.Float64())), Contention: 1 + r.IntN(50)}
		sum += items[i].Contention
	}
	return items, r.IntN(sum + 10)
}

func checkLP(strat strategy, first uint64, n int) string {
	for k := range n {
		seed := first + uint64(k)
		items, slots := lpInstance(seed)
		s := strat(items, slots)
		if err := feasible(items, s, slots); err != nil {
			return fmt.Sprintf("seed %d: %v", seed, err)
		}
		if got, opt := exactValue(items, s), lpOptimum(items, slots); got.Cmp(opt) != 0 {
			return fmt.Sprintf("seed %d: value %s, LP optimum %s (S=%d, %d locks)", seed, got.FloatString(6), opt.FloatString(6), slots, len(items))
		}
	}
	return ""
}

// TestKnapsackOptimalLP: Algorithm 3's integral allocation reaches the optimum of the
// continuous LP exactly, on larger instances than brute force can enumerate. (So the integral
// and the fractional problem have the same optimum: the constraints are one row of ones plus
// bounds, a totally unimodular system, and S and c_i are integers.)
func TestKnapsackOptimalLP(t *testing.T) {
	n := instances(3000)
	if msg := checkLP(knapsack0, *flagSeed, n); msg != "" {
		t.Fatalf("%s\nre-run: go test ./alloc -run TestKnapsackOptimalLP -alloc.seed=SEED -alloc.n=1", msg)
	}
	t.Logf("Algorithm 3 equals the LP optimum on %d instances (seeds %d..%d)", n, *flagSeed, *flagSeed+uint64(n)-1)
}

// TestLPOracle checks the dual computation itself on instances the brute force can enumerate:
// the integral optimum equals the LP optimum.
func TestLPOracle(t *testing.T) {
	for k := range instances(2000) {
		seed := *flagSeed + uint64(k)
		items, slots := smallInstance(seed)
		l := lcmC(items)
		bf := big.NewRat(bruteForce(items, slots), l)
		if opt := lpOptimum(items, slots); opt.Cmp(bf) != 0 {
			t.Fatalf("seed %d: LP optimum %s, brute force %s", seed, opt, bf)
		}
	}
}

func TestNegativeControlsLP(t *testing.T) {
	for name, strat := range wrongOrders {
		msg := checkLP(strat, *flagSeed, max(instances(3000), 300))
		if msg == "" {
			t.Errorf("%s: the LP check did not catch a non-optimal order", name)
			continue
		}
		t.Logf("%s: caught: %s", name, msg)
	}
}

// TestKnapsackPaperExample is the paper's Figure 7: two clients at 100 req/s contend for lock
// 1, one client at 10 req/s uses lock 2, the switch has 2 slots. Algorithm 3 gives both slots
// to lock 1 and serves 200 req/s in the switch; one slot each would serve 110.
func TestKnapsackPaperExample(t *testing.T) {
	items := []Item{{Lock: 1, Rate: 200, Contention: 2}, {Lock: 2, Rate: 10, Contention: 1}}
	s := Knapsack(items, 2, 0)
	if !slices.Equal(s, []int{2, 0}) || Value(items, s) != 200 {
		t.Fatalf("got %v (value %v), want [2 0] (value 200)", s, Value(items, s))
	}
	if v := Value(items, []int{1, 1}); v != 110 {
		t.Fatalf("naive allocation value %v, want 110", v)
	}
}

func TestKnapsackTable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []Item
		slots int
		h     float64
		want  []int
	}{
		{"empty", nil, 10, 0, []int{}},
		{"no slots", []Item{{Lock: 1, Rate: 5, Contention: 3}}, 0, 0, []int{0}},
		{"room for all", []Item{{Lock: 1, Rate: 5, Contention: 3}, {Lock: 2, Rate: 1, Contention: 2}}, 10, 0, []int{3, 2}},
		{"rate zero gets nothing", []Item{{Lock: 1, Rate: 0, Contention: 3}, {Lock: 2, Rate: 1, Contention: 2}}, 10, 0, []int{0, 2}},
		{"last one partial", []Item{{Lock: 1, Rate: 9, Contention: 3}, {Lock: 2, Rate: 4, Contention: 2}, {Lock: 3, Rate: 1, Contention: 5}}, 4, 0, []int{3, 1, 0}},
		{"ratio not rate", []Item{{Lock: 1, Rate: 100, Contention: 100}, {Lock: 2, Rate: 10, Contention: 1}}, 5, 0, []int{4, 1}},
		{"tie by lock id", []Item{{Lock: 9, Rate: 2, Contention: 2}, {Lock: 4, Rate: 1, Contention: 1}}, 1, 0, []int{0, 1}},
		{"tie to the incumbent", []Item{{Lock: 9, Rate: 2, Contention: 2, Held: 1}, {Lock: 4, Rate: 1, Contention: 1}}, 1, 0, []int{1, 0}},
		{"incumbent keeps within h", []Item{{Lock: 1, Rate: 10, Contention: 1, Held: 1}, {Lock: 2, Rate: 11, Contention: 1}}, 1, 0.2, []int{1, 0}},
		{"incumbent loses beyond h", []Item{{Lock: 1, Rate: 10, Contention: 1, Held: 1}, {Lock: 2, Rate: 13, Contention: 1}}, 1, 0.2, []int{0, 1}},
		{"only held slots are boosted", []Item{{Lock: 1, Rate: 10, Contention: 4, Held: 1}, {Lock: 2, Rate: 11, Contention: 4}}, 4, 0.2, []int{1, 3}},
		{"held beyond c counts as c", []Item{{Lock: 1, Rate: 10, Contention: 2, Held: 9}, {Lock: 2, Rate: 11, Contention: 4}}, 4, 0.2, []int{2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckItems(tc.items); err != nil {
				t.Fatal(err)
			}
			if got := Knapsack(tc.items, tc.slots, tc.h); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckItems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []Item
	}{
		{"negative rate", []Item{{Lock: 1, Rate: -1, Contention: 1}}},
		{"NaN rate", []Item{{Lock: 1, Rate: math.NaN(), Contention: 1}}},
		{"infinite rate", []Item{{Lock: 1, Rate: math.Inf(1), Contention: 1}}},
		{"zero contention", []Item{{Lock: 1, Rate: 1, Contention: 0}}},
		{"negative held", []Item{{Lock: 1, Rate: 1, Contention: 1, Held: -1}}},
		{"duplicate lock", []Item{{Lock: 1, Rate: 1, Contention: 1}, {Lock: 1, Rate: 2, Contention: 1}}},
	} {
		if err := CheckItems(tc.items); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestWholeLocksNotGreedy documents where the greedy is not optimal: if a lock may only be in
// the switch with all of its c_i slots (a 0/1 knapsack, e.g. a data plane without overflow to
// the servers), taking locks by r/c can be arbitrarily bad. Here it takes lock 1 (ratio 2) and
// then cannot fit lock 2 (ratio 1.9, 10 slots); the best whole allocation serves 19 > 2.
// netlock's data plane overflows to q2, so the fractional model (and Algorithm 3) applies.
func TestWholeLocksNotGreedy(t *testing.T) {
	items := []Item{{Lock: 1, Rate: 2, Contention: 1}, {Lock: 2, Rate: 19, Contention: 10}}
	const S = 10
	greedyWhole := make([]int, len(items))
	left := S
	for _, i := range []int{0, 1} { // r/c order: 2 > 1.9
		if items[i].Contention <= left {
			greedyWhole[i] = items[i].Contention
			left -= items[i].Contention
		}
	}
	best := 0.0
	for mask := range 4 { // every whole allocation
		s, used := make([]int, 2), 0
		for i := range items {
			if mask&(1<<i) != 0 {
				s[i] = items[i].Contention
				used += s[i]
			}
		}
		if used <= S {
			best = max(best, Value(items, s))
		}
	}
	if g := Value(items, greedyWhole); g != 2 || best != 19 {
		t.Fatalf("whole-lock greedy %v, best whole %v; want 2 and 19", g, best)
	}
	// The fractional allocation is optimal and beats both.
	if v := Value(items, Knapsack(items, S, 0)); v != 2+19*0.9 {
		t.Fatalf("fractional optimum %v, want %v", v, 2+19*0.9)
	}
}

// TestRandomIsSeededAndStable: Random's order depends on the seed only, not on the input order
// or on the other locks present.
func TestRandomIsSeededAndStable(t *testing.T) {
	items := make([]Item, 50)
	for i := range items {
		items[i] = Item{Lock: uint32(i * 3), Rate: 1, Contention: 2}
	}
	a := Random(items, 30, 42)
	rev := slices.Clone(items)
	slices.Reverse(rev)
	b := Random(rev, 30, 42)
	slices.Reverse(b)
	if !slices.Equal(a, b) {
		t.Fatal("Random depends on the order of its input")
	}
	if slices.Equal(a, Random(items, 30, 43)) {
		t.Fatal("two seeds gave the same random allocation")
	}
	if sum := func(s []int) (n int) {
		for _, v := range s {
			n += v
		}
		return
	}(a); sum != 30 {
		t.Fatalf("random used %d of 30 slots", sum)
	}
}
