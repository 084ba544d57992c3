// Package alloc is netlock's switch memory allocator: which locks get queue slots in the switch,
// how many, and where in the pooled queue (NetLock, SIGCOMM'20, section 4.3 and Algorithm 3).
// It is pure: no I/O, no clock, no randomness beyond a seed; the control plane feeds it the
// measured demands each period and applies the plans it returns.
//
// # The objective
//
// Lock i has request rate r_i and contention c_i, the most requests for it that are ever
// outstanding at once. A switch pool has S slots; s_i of them go to lock i. In the worst case
// the c_i requests arrive together; s_i of them queue in the switch and the rest overflow to the
// lock server, so the switch is guaranteed to serve the fraction s_i/c_i of the lock's requests.
// The paper's problem (1)-(3), which this package solves, is
//
//	maximize  sum_i r_i * s_i / c_i   (the served request rate under this fractional model)
//	s.t.      sum_i s_i <= S,  0 <= s_i <= c_i,  s_i integer.
//
// [Value] computes it. [Knapsack] is Algorithm 3: sort by r_i/c_i, decreasing, and give each lock
// s_i = min(remaining, c_i). It is optimal for the integral problem and for its continuous
// relaxation alike: the constraints are one row of ones and bounds (a totally unimodular
// system with integral S and c_i), so the LP optimum is attained at an integral point, and the
// greedy walks to it (the paper's Theorem 1 is the exchange argument). With priority levels the
// items are (lock, level) pairs sharing the pool. [Allocate] is the same greedy under the data
// plane's [Rules] (levels, region bounds), and [Allocator] runs it period after period together
// with the layout of the pool.
//
// # How the optimality is checked (knapsack_test.go)
//
//   - Brute force: 5000 random instances (seeds 1..5000; up to 7 locks, c_i in 1..4, integer
//     rates 0..20 with many ties, S in 0..sum c_i+1): Algorithm 3's value equals the best of all
//     integral allocations, compared exactly (values scaled by lcm(c_i)).
//   - Exact LP: 3000 larger instances (seeds 1..3000; up to 40 locks, c_i up to 50, integer
//     rates over four decades): Algorithm 3's value equals the optimum of the continuous LP,
//     computed in exact rationals from the LP dual, min over lambda >= 0 of
//     lambda*S + sum c_i*max(0, r_i/c_i - lambda) (strong duality; the minimum is at lambda = 0
//     or some r_i/c_i), which does not use any ordering. The dual oracle itself is checked
//     against the brute force on 2000 small instances.
//   - Negative controls: taking locks by rate, by ascending r/c, by contention, dropping the
//     partial last lock, and the random order must each fail both checks, and do.
//
// Run: go test ./alloc -run 'Optimal|NegativeControls|LPOracle' -v; one seed:
// -alloc.seed=S -alloc.n=1; more instances: -alloc.n=N.
//
// # Where the greedy is not optimal
//
// Integral variants break it. If a lock may only be in the switch with all of its c_i slots (a
// 0/1 knapsack: a data plane without overflow, or a policy against partial queues), ordering by
// r/c can be arbitrarily bad: with S = 10, lock A (r=2, c=1) and lock B (r=19, c=10), the greedy
// takes A and cannot fit B (value 2) while B alone serves 19 (TestWholeLocksNotGreedy). netlock
// does not need that variant: its data plane overflows a full switch queue to the lock server's
// q2 and pushes requests back when it drains, so a partial allocation serves exactly the
// fraction the model says. A cap on a region's size (netlock.p4: 32767 slots) is just another
// bound of the LP and keeps the greedy optimal (TestAllocateMaxRegionOptimal, brute force on
// 1000 instances).
//
// One integral constraint does come from netlock.p4: a lock in the switch has a region of at
// least one slot at each of the two priority levels, even a level without demand, so entering
// the switch has a fixed cost (Rules.MinRegion). Then no greedy is optimal: with 4 slots, a
// lock with one level of demand (r=10, c=1) has the best ratio but pays two slots for 10, while
// two locks with demand at both levels (r=9, c=1 each) serve 18 each (testdata/dataplane).
// What we do: [Allocate] hands out entry bundles (a lock's entry slots with its most valuable
// further slots, as long as they raise the bundle's value per slot: the usual greedy for a
// knapsack with setup costs) in value order with the remaining slots. Against the brute-force
// optimum on 3000 small instances (TestAllocateMinRegion, seeds 1..3000: up to 5 locks, two
// levels, c in 1..3, S in 0..14) it is optimal in 2841 (94.7%), at worst 0.684 of the optimum;
// charging the entry to a lock's first slot instead (the plain greedy) is optimal in 2778
// (92.6%), at worst 0.429. At the switch's scale the entry costs one slot per switch lock at its
// level without demand; Plan.Best reports the optimum without that charge, an upper bound, so
// the controller can see the gap.
//
// Contiguity is the other integral constraint (a lock's slots at a level are one region of the
// pool); the layout below keeps it without changing the allocation. The model itself is a
// worst case: with less synchronized clients a lock is served better than s_i/c_i, which the
// allocation does not try to exploit.
//
// # Hysteresis
//
// Measured rates are noisy; re-running Algorithm 3 every period would move locks in and out of
// the switch whenever two ratios cross. [Config].Hysteresis h values the slots a lock already
// holds at (1+h) * r_i/c_i. Then:
//
//   - the allocation is optimal for values within a factor 1+h of the true ones, so it serves
//     at least OPT/(1+h) (TestHysteresisBound, 3000 instances, h in {0.05, 0.25, 1, 3}; an
//     over-boosting variant is the negative control);
//   - with unchanged inputs the next period returns the same allocation
//     (TestHysteresisFixedPoint);
//   - if every rate stays within a factor f of a steady value with f*f <= 1+h, the allocation of
//     the first period never changes (TestNoiseDoesNotChangeAllocation: 100 runs of 20 periods
//     with f = 1.09, h = 0.19: no change; the same runs without hysteresis changed in 1431
//     periods);
//   - two locks whose rates swap between 100(1+e) and 100(1-e) flap every period exactly when
//     (1+e)/(1-e) > 1+h (TestOscillatingPair).
//
// The rule for h: the relative change of r/c between periods that is noise rather than a trend;
// with rates counted over a period (n requests, relative deviation about 1/sqrt(n)), h =
// 3/sqrt(n) for the smallest n among the locks at the margin of the allocation.
//
// # Layout of the pool (PlanPool)
//
// netlock.p4 pools its queue slots in one array shared by both priority levels; every switch
// lock has one contiguous region of it per level ([Region] is keyed by lock and level). Between
// periods a region whose length is unchanged (a stayer) keeps its place; one that shrinks keeps
// its start; one that grows keeps its start if the slots after it are free; new regions and
// displaced growers go to the lowest gap that fits, longest first (first fit decreasing). When
// first fit cannot place them, compaction moves as few stayers as it can find (compactor in
// compact.go): first it places every region that is not a stayer again (free: they are
// reprogrammed anyway), then it tries windows of consecutive stayers, cheapest first.
//
// Finding the fewest moves over all layouts is NP-hard (deciding whether zero moves suffice is
// bin packing of the new regions into the gaps), so the guarantee is relative: no single window
// of the pool, packed or relocating, takes fewer stayers out of place than the plan (brute force
// over every window, TestCompactionWindowMinimal: 20000 random pools of 6..24 slots with regions
// at two levels, seeds 1..20000, 5611 needing compaction; negative controls: packing without
// relocation and the leftmost window). Against the true minimum by exhaustive search
// (TestCompactionAgainstGlobalOptimum), the plan moved the fewest regions of any layout in 5468
// of those 5611 pools (97.5%); the other 143 took 153 extra moves in all, at most 3 in one pool.
// The window search has a work budget proportional to the pool; a pool fragmented beyond it gets
// the best plan found so far and PoolPlan.Exhausted.
//
// A plan's changes (Delete, Resize, Move, Insert) are applied as one batch: the locks that
// change are paused and drained, all regions rewritten, then resumed (PoolPlan).
//
// # The strawman
//
// [Random] (and [AllocateRandom] under Rules) is the random allocation of the paper's Figure
// 13: the order of the locks is a keyed hash of (seed, lock) instead of r/c, each lock again
// getting min(remaining, c_i).
//
// # Cost
//
// go test ./alloc -run '^$' -bench . -benchtime 10x: 100k locks (Zipf-like rates, c_i in 1..8,
// a tenth with demand at both levels) and 50k slots; docs/controlplane.md has the figures.
package alloc
