// Package rmabench reproduces the evaluation of "High-Performance Distributed RMA Locks"
// (HPDC '16, section 5) on the virtual-time emulated fabric of rdma/sim: P processes, 16 per
// node (one node below 16), hammer one lock; the paper's benchmarks are the empty critical
// section (ECSB), a single remote memory access inside it (SOB), a shared-counter increment
// plus 1-4 us of work inside it (WCSB), 1-4 us of work after each release (WARB); latency is
// the mean time of one acquire+release. Readers and writers are drawn per acquisition with
// the writer fraction F_W. Results are virtual (the sim cost model), deterministic for a seed.
//
// Every point also reports the protocol events of its window (Result.Counts: writes, writer
// phases, T_R hits and resets, T_L,i passes and hits), and CheckSweeps tells, per swept
// threshold and P, whether its values differ in the events it governs: a threshold that is
// never reached leaves its sweep flat, and the counts say so instead of the flat line passing
// for a reproduced result.
package rmabench

import (
	"fmt"
	"math"
	"math/rand"
	"slices"

	"github.com/netlock-go/netlock/rdma/bench"
	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Algorithms.
const (
	RMAMCS    = "rma-mcs"    // RMA-MCS, N = 2 (node, machine)
	DMCS      = "d-mcs"      // the topology-oblivious D-MCS (Listings 2-3)
	Spin      = "spin"       // foMPI-Spin: compare-and-swap spin lock
	RMARW     = "rma-rw"     // RMA-RW, N = 2
	CentralRW = "central-rw" // foMPI-RW-like central reader-writer lock
)

// Algorithms lists every algorithm name.
var Algorithms = []string{RMAMCS, DMCS, Spin, RMARW, CentralRW}

// Benchmarks of section 5.
const (
	ECSB = "ecsb" // empty critical section
	SOB  = "sob"  // one memory access (a read of a shared word on rank 0's node) in the section
	WCSB = "wcsb" // shared counter increment and 1-4 us of work in the section
	WARB = "warb" // 1-4 us of work after each release
)

// Benchmarks lists every benchmark name.
var Benchmarks = []string{ECSB, SOB, WCSB, WARB}

// DefaultPPN is the processes per node (the paper's one process per hardware thread of a
// 16-thread Cray XC30 node).
const DefaultPPN = 16

// Config is one measured point.
type Config struct {
	Alg   string
	Bench string
	// Procs is P; ProcsPerNode defaults to DefaultPPN (P below it: one node).
	Procs, ProcsPerNode int
	// WriteFrac is F_W for the reader-writer locks (0..1); exclusive locks take only writers.
	WriteFrac float64
	// TL, TDC, TR configure RMA-MCS and RMA-RW (nil/0: rdma/rma defaults, T_DC one counter per
	// node).
	TL      []int
	TDC, TR int
	// Warmup and Duration are virtual ns. With Duration 0 the window adapts: it starts at
	// 200 us + 1 us * P (warm-up half of it) and is quadrupled until the processes completed at
	// least two acquisitions each inside it on average, so that a closed loop of P processes on
	// one lock runs several rounds whether a hand-over costs a CPU access or a network trip,
	// and, for RMA-RW with 0 < F_W < 1, until at least MinWrites writer acquisitions
	// completed inside it (a rare writer must act often enough for its cost and the
	// thresholds it triggers to be measured), or the window reached MaxWindow.
	Warmup   int64
	Duration int64
	// An open loop's (Rate > 0) window starts at no less than 40 arrivals per process.
	//
	// MinWrites is the adaptive window's minimum of completed writes for RMA-RW points with
	// 0 < F_W < 1: 0 takes DefaultMinWrites, a negative value none.
	MinWrites int
	// Rate, if positive, makes the point an open loop: each process's requests arrive as a
	// Poisson process of Rate per virtual second, drawn from a stream of their own (the
	// arrivals depend on the seed and the rank only, never on completions). A process serves
	// its requests one at a time in arrival order, so a request that arrives while its
	// predecessor is still outstanding queues behind it; a request's latency runs from its
	// arrival to the end of its release and so includes that queueing as well as the wait
	// inside the lock. 0: closed loop, each process's next request when its previous one
	// ends (latency from the start of the acquire).
	Rate float64
	Cost sim.Cost
	Seed int64
}

// DefaultMinWrites is the adaptive window's default minimum of writes (RMA-RW points).
const DefaultMinWrites = 200

// MaxWindow is the longest adaptive window (virtual ns); a point that reaches it without its
// minimums says so (Result.Capped).
const MaxWindow = int64(1) << 33

func (c *Config) validate() error {
	if !slices.Contains(Algorithms, c.Alg) {
		return fmt.Errorf("rmabench: algorithm %q (want one of %v)", c.Alg, Algorithms)
	}
	if c.Bench == "" {
		c.Bench = ECSB
	}
	if !slices.Contains(Benchmarks, c.Bench) {
		return fmt.Errorf("rmabench: benchmark %q (want one of %v)", c.Bench, Benchmarks)
	}
	if c.ProcsPerNode == 0 {
		c.ProcsPerNode = DefaultPPN
	}
	if c.Procs < 1 || c.ProcsPerNode < 1 || c.Procs > 1<<14 {
		return fmt.Errorf("rmabench: %d processes, %d per node", c.Procs, c.ProcsPerNode)
	}
	if c.Procs < c.ProcsPerNode {
		c.ProcsPerNode = c.Procs
	}
	if c.Procs%c.ProcsPerNode != 0 {
		return fmt.Errorf("rmabench: %d processes are not whole nodes of %d", c.Procs, c.ProcsPerNode)
	}
	if c.WriteFrac < 0 || c.WriteFrac > 1 {
		return fmt.Errorf("rmabench: F_W %v outside [0,1]", c.WriteFrac)
	}
	if !c.rw() {
		c.WriteFrac = 1
	}
	if c.MinWrites == 0 {
		c.MinWrites = DefaultMinWrites
	}
	if c.Warmup < 0 || c.Duration < 0 || c.Rate < 0 {
		return fmt.Errorf("rmabench: warmup %d, duration %d", c.Warmup, c.Duration)
	}
	return nil
}

func (c *Config) rw() bool { return c.Alg == RMARW || c.Alg == CentralRW }

// Nodes is the number of nodes of the point.
func (c *Config) Nodes() int { return c.Procs / c.ProcsPerNode }

// Result is one measured point.
type Result struct {
	Alg          string  `json:"alg"`
	Bench        string  `json:"bench"`
	Procs        int     `json:"procs"`
	ProcsPerNode int     `json:"procs_per_node"`
	WriteFrac    float64 `json:"write_frac"`
	TL           []int   `json:"tl,omitempty"`
	TDC          int     `json:"tdc,omitempty"`
	TR           int     `json:"tr,omitempty"`
	// Rate is the open loop's arrival rate per process (Config.Rate), 0 for a closed loop.
	Rate float64 `json:"rate,omitempty"`
	// Ops is the number of acquire+release pairs completed in the window (Writes of them
	// exclusive); Samples is the number of them that also started in it (the latency samples;
	// an open loop's start is the arrival).
	Ops, Writes, Samples int64
	// Arrivals is an open loop's number of requests that arrived in the window, whether
	// served, queued or in progress at its end (the offered count: about Rate x P x window);
	// Arrivals - Samples is what the window left outstanding. 0 for a closed loop.
	Arrivals int64 `json:"arrivals,omitempty"`
	// Throughput is Ops per virtual second.
	Throughput float64 `json:"throughput"`
	// Mean, P50 and P99 are the latency of one acquire+release (virtual ns); WriteMean and
	// ReadMean split the mean by kind.
	Mean, P50, P99      float64
	WriteMean, ReadMean float64
	// VerbsPerOp is the number of verbs posted per acquire+release (loopback included).
	VerbsPerOp float64
	// Window is the measured virtual time (ns).
	Window int64 `json:"window_ns"`
	// Capped says the adaptive window stopped at MaxWindow before its minimums were met.
	Capped bool `json:"capped,omitempty"`
	// Saturated says an open loop served fewer than half the requests that arrived in its
	// window: the offered rate is above what the lock serves, the backlog grows with the
	// window, and the latency is the window's, not the load's. The adaptive window stops
	// growing for such a point.
	Saturated bool `json:"saturated,omitempty"`
	// Counters is the number of physical reader counters (RMA-RW).
	Counters int `json:"counters,omitempty"`
	// Counts are the protocol events inside the window, summed over the processes (RMA-MCS
	// and RMA-RW): writer phases, T_R hits and resets, T_L,i passes and hits.
	Counts rma.Counts `json:"counts"`
}

// EntriesPerEpoch is the mean number of reader entries per counter between two resets of it
// (a writer's reset resets every counter, a reader's one): T_R can only act when this
// approaches T_R. NaN without resets.
func (r Result) EntriesPerEpoch() float64 {
	epochs := float64(r.Counters)*float64(r.Counts.WriterResets) + float64(r.Counts.TRResets)
	if epochs == 0 {
		return math.NaN()
	}
	return float64(r.Counts.ReaderEntries) / epochs
}

// Label names the point's parameters for tables.
func (r Result) Label() string {
	s := r.Alg
	if r.TL != nil {
		s += fmt.Sprintf(" T_L=%v", r.TL)
	}
	if r.TDC != 0 {
		s += fmt.Sprintf(" T_DC=%d", r.TDC)
	}
	if r.TR != 0 {
		s += fmt.Sprintf(" T_R=%d", r.TR)
	}
	return s
}

// locker is a process's handle plus its kind of lock.
type factory func(rank int, ep verbs.Endpoint) (rma.Locker, error)

func build(c *Config, s *sim.Sim) (factory, *rma.Shape, error) {
	alloc := func(n int, size uint64) (verbs.Ptr, error) { return s.Endpoint(n).Alloc(size) }
	nodes := c.Nodes()
	switch c.Alg {
	case RMAMCS, RMARW:
		cfg := rma.Config{Nodes: nodes, ProcsPerNode: c.ProcsPerNode, Elements: []int{c.ProcsPerNode},
			TL: c.TL, Readers: c.Alg == RMARW}
		if cfg.Readers {
			cfg.TDC, cfg.TR = c.TDC, c.TR
		}
		l, err := rma.New(cfg, alloc)
		if err != nil {
			return nil, nil, err
		}
		sh := l.Shape()
		return func(r int, ep verbs.Endpoint) (rma.Locker, error) { return l.Handle(r, ep) }, sh, nil
	case DMCS:
		d, err := rma.NewDMCS(nodes, c.ProcsPerNode, alloc)
		return func(r int, ep verbs.Endpoint) (rma.Locker, error) { return d.Handle(r, ep) }, nil, err
	case Spin:
		sp, err := rma.NewSpin(nodes, c.ProcsPerNode, alloc)
		return func(r int, ep verbs.Endpoint) (rma.Locker, error) { return sp.Handle(r, ep) }, nil, err
	}
	cr, err := rma.NewCentralRW(nodes, c.ProcsPerNode, alloc)
	return func(r int, ep verbs.Endpoint) (rma.Locker, error) { return cr.Handle(r, ep) }, nil, err
}

// arrivals is one process's open-loop arrival stream: a Poisson process of rate per virtual
// second, drawn from its own generator so that the times depend on the seed and the rank
// alone. Invariant: last is the latest arrival drawn, and counted is the number of drawn
// arrivals in [from, to).
type arrivals struct {
	rng      *rand.Rand
	rate     float64
	from, to int64
	last     int64
	counted  int64
}

func newArrivals(seed int64, rank int, rate float64, from, to int64) *arrivals {
	// A stream apart from the process's other draws (seed*104729 + rank).
	return &arrivals{rng: rand.New(rand.NewSource(seed*104729 + int64(rank) + 1<<32)), rate: rate, from: from, to: to}
}

// next draws the next arrival time.
func (a *arrivals) next() int64 {
	a.last += int64(a.rng.ExpFloat64() * 1e9 / a.rate)
	if a.last >= a.from && a.last < a.to {
		a.counted++
	}
	return a.last
}

// offered is the number of arrivals in [from, to), drawing the ones its process had not
// reached when the run stopped.
func (a *arrivals) offered() int64 {
	for a.last < a.to {
		a.next()
	}
	return a.counted
}

// work spends n CPU accesses of virtual time (25 ns each under the default cost model).
func work(ep verbs.Endpoint, n int) {
	m := ep.Local()
	for i := 0; i < n; i++ {
		m.Load(0)
	}
}

// Run measures one point.
func Run(cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	if cfg.Duration > 0 {
		return run(cfg)
	}
	d := 200_000 + 1_000*int64(cfg.Procs)
	if cfg.Rate > 0 {
		d = max(d, int64(40e9/cfg.Rate)) // an open loop: 40 arrivals per process at least
	}
	for {
		c := cfg
		c.Duration, c.Warmup = d, d/2
		r, err := run(c)
		if err != nil || cfg.enough(r) || r.Saturated {
			return r, err
		}
		if d*4 > MaxWindow {
			r.Capped = true
			return r, nil
		}
		// Grow by 4, or at once to what the write rate measured so far asks for.
		next := d * 4
		if cfg.needWrites() && r.Writes > 0 {
			want := d * int64(cfg.MinWrites) / r.Writes * 5 / 4
			next = max(next, min(want, MaxWindow))
		}
		d = next
	}
}

// needWrites: the write minimum applies to RMA-RW. The central lock favours readers, and its
// writers wait for a moment without readers, which at F_W = 0.2% and P >= 32 takes longer
// than any window here; its writes are reported (Result.Writes) instead.
func (c *Config) needWrites() bool {
	return c.Alg == RMARW && c.WriteFrac > 0 && c.WriteFrac < 1 && c.MinWrites > 0
}

// enough reports whether r meets the adaptive window's minimums.
func (c *Config) enough(r Result) bool {
	if r.Samples < 2*int64(c.Procs) {
		return false
	}
	return !c.needWrites() || r.Writes >= int64(c.MinWrites)
}

func run(cfg Config) (Result, error) {
	nodes := cfg.Nodes()
	region := uint64(1<<16 + cfg.Procs*4*64)
	s, err := sim.New(sim.Config{Nodes: nodes, RegionSize: (region + 63) &^ 63, Cost: cfg.Cost, Seed: cfg.Seed})
	if err != nil {
		return Result{}, err
	}
	mk, sh, err := build(&cfg, s)
	if err != nil {
		return Result{}, err
	}
	shared, err := s.Endpoint(0).Alloc(64) // the data the critical sections touch
	if err != nil {
		return Result{}, err
	}
	// 1-4 us of work in CPU accesses of the cost model.
	lo, hi := int(1000/s.Cost().LocalOp), int(4000/s.Cost().LocalOp)
	end := cfg.Warmup + cfg.Duration
	type pstat struct {
		ops, writes int64
		samples, wn int64
		wsum, rsum  int64
		hist        bench.Hist
		base, last  verbs.StatsSnapshot
		st          *verbs.Stats
		based       bool
		cbase, cnow rma.Counts
		arr         *arrivals // open loop
	}
	stats := make([]*pstat, cfg.Procs)
	for r := 0; r < cfg.Procs; r++ {
		ps := &pstat{}
		stats[r] = ps
		rank := r
		rng := rand.New(rand.NewSource(cfg.Seed*104729 + int64(r)))
		if cfg.Rate > 0 {
			ps.arr = newArrivals(cfg.Seed, r, cfg.Rate, cfg.Warmup, end)
		}
		s.Go(r/cfg.ProcsPerNode, func(ep verbs.Endpoint) error {
			lk, err := mk(rank, ep)
			if err != nil {
				return err
			}
			ps.st = ep.Stats()
			counts := func() rma.Counts { return rma.Counts{} }
			if c, ok := lk.(interface{ Counts() rma.Counts }); ok {
				counts = c.Counts
			}
			m := ep.Local()
			for {
				write := cfg.WriteFrac >= 1 || rng.Float64() < cfg.WriteFrac
				t0 := ep.Now()
				if ps.arr != nil {
					// Idle until the next arrival; if it is past (a backlog), start at once
					// and time the request from its arrival.
					arrival := ps.arr.next()
					if arrival > t0 {
						verbs.Spend(ep, arrival-t0)
					}
					t0 = arrival
				}
				if t0 >= cfg.Warmup && !ps.based {
					// The window's events start here; a process that completes nothing
					// inside the window contributes none.
					ps.base, ps.based = ps.st.Snapshot(), true
					ps.last = ps.base
					ps.cbase = counts()
					ps.cnow = ps.cbase
				}
				if write {
					err = lk.Lock()
				} else {
					err = lk.RLock()
				}
				if err != nil {
					return err
				}
				switch cfg.Bench {
				case SOB, WCSB:
					var v uint64
					if shared.Node() == ep.Node() {
						v = m.Load(shared.Offset())
					} else if v, err = verbs.Read(ep, shared); err != nil {
						return err
					}
					if cfg.Bench == WCSB && write {
						if shared.Node() == ep.Node() {
							m.Store(shared.Offset(), v+1)
						} else if err := verbs.Write(ep, shared, v+1); err != nil {
							return err
						}
					}
					if cfg.Bench == WCSB {
						work(ep, lo+rng.Intn(hi-lo+1))
					}
				}
				if write {
					err = lk.Unlock()
				} else {
					err = lk.RUnlock()
				}
				if err != nil {
					return err
				}
				t1 := ep.Now()
				if t1 > cfg.Warmup && t1 <= end {
					ps.ops++
					if write {
						ps.writes++
					}
					if t0 >= cfg.Warmup {
						ps.samples++
						ps.hist.Record(t1 - t0)
						if write {
							ps.wn++
							ps.wsum += t1 - t0
						} else {
							ps.rsum += t1 - t0
						}
					}
					if ps.based {
						ps.last = ps.st.Snapshot()
						ps.cnow = counts()
					}
				}
				if cfg.Bench == WARB {
					work(ep, lo+rng.Intn(hi-lo+1))
				}
			}
		})
	}
	if err := s.Run(end); err != nil {
		return Result{}, fmt.Errorf("rmabench %s P=%d: %w", cfg.Alg, cfg.Procs, err)
	}
	res := Result{Alg: cfg.Alg, Bench: cfg.Bench, Procs: cfg.Procs, ProcsPerNode: cfg.ProcsPerNode, WriteFrac: cfg.WriteFrac,
		Window: cfg.Duration, Rate: cfg.Rate}
	if sh != nil {
		c := sh.Config()
		res.TL = c.TL
		if c.Readers {
			res.TDC, res.TR = c.TDC, c.TR
			res.Counters = sh.Counters()
		}
	}
	var hist bench.Hist
	var wsum, rsum, wn int64
	var verbsN uint64
	for _, ps := range stats {
		res.Ops += ps.ops
		res.Writes += ps.writes
		res.Samples += ps.samples
		wn += ps.wn
		wsum += ps.wsum
		rsum += ps.rsum
		hist.Merge(&ps.hist)
		if ps.arr != nil {
			res.Arrivals += ps.arr.offered()
		}
		if ps.based {
			verbsN += ps.last.Sub(ps.base).Remote()
			res.Counts.Add(ps.cnow.Sub(ps.cbase))
		}
	}
	res.Throughput = float64(res.Ops) / (float64(cfg.Duration) / 1e9)
	if sh != nil && res.TL == nil {
		res.TL = sh.Config().TL
	}
	if res.Samples > 0 {
		res.Mean = float64(wsum+rsum) / float64(res.Samples)
		res.P50, res.P99 = hist.Quantile(0.5), hist.Quantile(0.99)
	}
	res.Saturated = res.Arrivals > 0 && 2*res.Samples < res.Arrivals
	if res.Ops > 0 {
		res.VerbsPerOp = float64(verbsN) / float64(res.Ops)
	}
	if wn > 0 {
		res.WriteMean = float64(wsum) / float64(wn)
	}
	if rn := res.Samples - wn; rn > 0 {
		res.ReadMean = float64(rsum) / float64(rn)
	}
	return res, nil
}
