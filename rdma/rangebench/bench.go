// Package rangebench compares CITRON (rdma/citron) with the range-lock managers of the CITRON
// paper's evaluation (FAST '23, section 4) on the virtual-time emulated fabric (rdma/sim): static
// segmentation (one DSLR-style bakery mutex per fixed-size segment, locked in ascending order;
// exact, over- and under-sized segments) and a server-CPU range lock manager reached with
// two-sided messages (the paper's type-I baselines behind eRPC). Node 0 is the lock server, the
// client threads run on ClientNodes machines; every thread repeatedly locks a range of L units
// whose start is Zipfian on [0, N-L] and unlocks it (empty critical section, closed loop).
// Throughput and latency are virtual, deterministic for a seed.
package rangebench

import (
	"context"
	"fmt"
	"math/rand"
	"time"

	"github.com/netlock-go/netlock/rdma/bench"
	"github.com/netlock-go/netlock/rdma/citron"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Scheme names.
const (
	CITRON  = "citron"
	SSExact = "ss-exact" // segments of L units
	SSOver  = "ss-over"  // 8L
	SSUnder = "ss-under" // L/8
	Server  = "server"   // server-CPU range lock manager, two-sided messages
)

// Schemes lists the scheme names.
var Schemes = []string{CITRON, SSExact, SSOver, SSUnder, Server}

// Cost is the cost model of these experiments: the CITRON paper's testbed class (ConnectX-6,
// RTT about 2 us, "215 Mops/s" message rate) rather than rdma/sim's ConnectX-3 default: 5 ns of
// NIC pipeline per verb, 32 atomic units of 250 ns (4 M atomics/s on one word, whose atomics all
// use the unit it hashes to, and 128 M/s over many words), 15 ns to poll a completion, and a QP
// cache of 2000 ends. These are modelling choices, not measurements.
func Cost() sim.Cost {
	c := sim.DefaultCost()
	c.NICOp = 5
	c.NICAtomic = 250
	c.NICMaskedAtomic = 250
	c.AtomicWindow = 200
	c.AtomicUnits = 32
	c.PollCQ = 15
	c.QPLimit = 2000
	return c
}

// CostWithSameWord is Cost with the NIC's same-word atomic time set to ns (sim.Cost's
// SameWordAtomic): one word's atomics start at least ns apart, at most 1e9/ns per second, and
// take whichever of the 32 units is free first, while an atomic still holds its unit for 250 ns
// (its latency and the NIC's aggregate atomic rate do not change). The read-to-write window of
// an atomic is 200 ns as in Cost, or 4/5 of ns if that is shorter (the write-back must land
// before the next atomic on the word reads); an atomic takes effect at the window's end, so
// below 250 ns the request a queue pair posts after an atomic may be applied sooner too. ns
// must pass CheckSameWord.
func CostWithSameWord(ns int64) sim.Cost {
	c := Cost()
	c.SameWordAtomic = ns
	c.AtomicWindow = min(c.AtomicWindow, ns*4/5)
	return c
}

// CheckSameWord reports whether ns is a usable same-word atomic time for Config.SameWordNS: 0
// (the default model) or at least 2 ns (the atomic window, 4/5 of it, must be positive).
func CheckSameWord(ns int64) error {
	if ns < 0 || ns == 1 {
		return fmt.Errorf("rangebench: same-word atomic time %d ns: want 0 (the default model) or at least 2", ns)
	}
	return nil
}

// ServerModel is the server-CPU lock manager's cost: each request costs RPC ns of a server
// thread (receive, decode, reply: eRPC-class), and its range-table operation holds the table's
// write lock for TableOp ns plus PerLevel ns per level of a balanced tree over the locks held
// (log2 of their number), plus PerWaiter ns per waiter an unlock examines for a grant. The table
// is a tree under one writer lock, like the maple tree's and Lustre's interval tree's; the
// paper's type-I managers are "bottlenecked by CPUs under high contention". Threads is the
// number of server threads (the paper: 18).
type ServerModel struct {
	Threads                           int
	RPC, TableOp, PerLevel, PerWaiter int64
}

// DefaultServerModel returns 18 threads, 200 ns per RPC, 150 ns + 25 ns per tree level per table
// operation and 10 ns per waiter examined.
func DefaultServerModel() ServerModel {
	return ServerModel{Threads: 18, RPC: 200, TableOp: 150, PerLevel: 25, PerWaiter: 10}
}

// Config is one measured point.
type Config struct {
	Scheme string
	// N is the address space (units); L the range length; Alpha the Zipf skew of starts;
	// Hotspot leaves the Zipf ranks unscrambled (the hottest starts at the lowest addresses).
	N, L    uint64
	Alpha   float64
	Hotspot bool
	// Threads is the total number of client threads, spread over ClientNodes machines.
	Threads, ClientNodes int
	// CITRON options: K nodes per range (default 2), M (default 4), TWait (default 15us),
	// SlowPath disables the fast path.
	K, M          int
	TWait         time.Duration
	EscalateAfter time.Duration
	SlowPath      bool
	Server        ServerModel
	// Warmup and Duration are virtual ns (defaults 50 us and 500 us).
	Warmup, Duration int64
	Cost             sim.Cost
	// SameWordNS, if set, runs the point on CostWithSameWord(SameWordNS) (Cost must then be
	// unset): the NIC's same-word atomic time. Zero: Cost, whose same-word atomics are
	// serialized by the atomic unit their word hashes to (250 ns apart).
	SameWordNS int64
	Seed       int64
}

func (c *Config) validate() error {
	if c.N == 0 {
		c.N = 1 << 20
	}
	if c.ClientNodes == 0 {
		c.ClientNodes = 3
	}
	if c.K == 0 {
		c.K = 2
	}
	if c.M == 0 {
		c.M = 4
	}
	if c.TWait == 0 {
		c.TWait = 15 * time.Microsecond
	}
	if c.Server.Threads == 0 {
		c.Server = DefaultServerModel()
	}
	if c.Warmup == 0 {
		c.Warmup = 50_000
	}
	if c.Duration == 0 {
		c.Duration = 500_000
	}
	if err := CheckSameWord(c.SameWordNS); err != nil {
		return err
	}
	switch {
	case c.SameWordNS > 0 && c.Cost != (sim.Cost{}):
		return fmt.Errorf("rangebench: same-word atomic time %d ns with an explicit cost model", c.SameWordNS)
	case c.Cost == (sim.Cost{}) && c.SameWordNS > 0:
		c.Cost = CostWithSameWord(c.SameWordNS)
	case c.Cost == (sim.Cost{}):
		c.Cost = Cost()
	}
	switch {
	case c.L == 0 || c.L > c.N:
		return fmt.Errorf("rangebench: L=%d in N=%d", c.L, c.N)
	case c.Threads < 1 || c.ClientNodes < 1:
		return fmt.Errorf("rangebench: %d threads on %d nodes", c.Threads, c.ClientNodes)
	case c.Alpha < 0 || c.Alpha >= 1:
		return fmt.Errorf("rangebench: Zipf skew %v outside [0,1)", c.Alpha)
	}
	return nil
}

// Result is one measured point.
type Result struct {
	Scheme  string  `json:"scheme"`
	L       uint64  `json:"l"`
	Alpha   float64 `json:"alpha"`
	Threads int     `json:"threads"`
	K       int     `json:"k"`
	Fast    bool    `json:"fast_path"`
	// Ops is the number of lock+unlock pairs completed in the window; Throughput is Ops per
	// second (locks granted and released).
	Ops        int64   `json:"ops"`
	Throughput float64 `json:"throughput"`
	// P50 and P99 are the acquisition latency (LockRange) of the operations counted, virtual ns;
	// Mean is Threads/Throughput (the closed loop's average operation time).
	P50, P99, Mean float64
	// VerbsPerOp counts one-sided verbs (and two-sided messages) per lock+unlock; AbortsPerOp
	// CITRON's undone attempts per granted lock.
	VerbsPerOp, MessagesPerOp, AbortsPerOp float64
	// SameWordNS is the same-word atomic time of a point run with Config.SameWordNS (0: the
	// default model, same-word atomics serialized by their hashed unit, 250 ns apart).
	SameWordNS int64       `json:"same_word_ns,omitempty"`
	Hist       *bench.Hist `json:"-"`
}

// locker is one thread's handle on a scheme.
type locker interface {
	lock(ep verbs.Endpoint, lo, hi uint64) (func() error, error)
	aborts() uint64
}

// Run measures one point.
func Run(cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	region := uint64(64 << 20)
	if cfg.Scheme == SSUnder || cfg.Scheme == SSExact {
		region = max(region, (ssSegments(cfg)+1)*8+4096)
	}
	s, err := sim.New(sim.Config{Nodes: 1 + cfg.ClientNodes, RegionSize: (region + 63) &^ 63, Cost: cfg.Cost, Seed: cfg.Seed})
	if err != nil {
		return Result{}, err
	}
	newLocker, err := setup(s, cfg)
	if err != nil {
		return Result{}, err
	}
	end := cfg.Warmup + cfg.Duration
	type tstat struct {
		ops           int64
		hist          bench.Hist
		base, last    verbs.StatsSnapshot
		baseTaken     bool
		abort0, abort uint64
	}
	stats := make([]*tstat, cfg.Threads)
	for i := 0; i < cfg.Threads; i++ {
		ts := &tstat{}
		stats[i] = ts
		id := i
		s.Go(1+i%cfg.ClientNodes, func(ep verbs.Endpoint) error {
			lk, err := newLocker(ep, id)
			if err != nil {
				return err
			}
			rng := rand.New(rand.NewSource(cfg.Seed*1_000_003 + int64(id)))
			z := NewZipf(rng, cfg.N-cfg.L+1, cfg.Alpha, !cfg.Hotspot)
			for {
				lo := z.Next()
				t0 := ep.Now()
				unlock, err := lk.lock(ep, lo, lo+cfg.L)
				if err != nil {
					return err
				}
				t1 := ep.Now()
				if err := unlock(); err != nil {
					return err
				}
				// Count the operations that complete inside the window (whenever they started),
				// so that waits longer than the window still count.
				if t2 := ep.Now(); t2 >= cfg.Warmup && t2 <= end {
					if !ts.baseTaken {
						ts.base, ts.abort0, ts.baseTaken = ep.Stats().Snapshot(), lk.aborts(), true
					}
					ts.ops++
					ts.hist.Record(t1 - t0)
					ts.last, ts.abort = ep.Stats().Snapshot(), lk.aborts()
				}
			}
		})
	}
	if err := s.Run(end); err != nil {
		return Result{}, fmt.Errorf("rangebench %s L=%d: %w", cfg.Scheme, cfg.L, err)
	}
	res := Result{Scheme: cfg.Scheme, L: cfg.L, Alpha: cfg.Alpha, Threads: cfg.Threads, K: cfg.K, Fast: !cfg.SlowPath,
		SameWordNS: cfg.SameWordNS, Hist: &bench.Hist{}}
	var d verbs.StatsSnapshot
	var aborts uint64
	var sum float64
	for _, ts := range stats {
		res.Ops += ts.ops
		res.Hist.Merge(&ts.hist)
		if ts.ops > 0 {
			x := ts.last.Sub(ts.base)
			d.Reads += x.Reads
			d.Writes += x.Writes
			d.CASes += x.CASes
			d.FAAs += x.FAAs
			d.MaskedCASes += x.MaskedCASes
			d.MaskedFAAs += x.MaskedFAAs
			d.Sends += x.Sends
			aborts += ts.abort - ts.abort0
		}
	}
	res.Throughput = float64(res.Ops) / (float64(cfg.Duration) / 1e9)
	if res.Ops > 0 {
		res.VerbsPerOp = float64(d.Remote()) / float64(res.Ops)
		res.MessagesPerOp = float64(d.Sends) / float64(res.Ops)
		res.AbortsPerOp = float64(aborts) / float64(res.Ops)
		res.P50, res.P99 = res.Hist.Quantile(0.5), res.Hist.Quantile(0.99)
		_ = sum
		res.Mean = float64(cfg.Threads) / res.Throughput * 1e9
	}
	return res, nil
}

// setup installs the scheme on the server node and returns its per-thread constructor.
func setup(s *sim.Sim, cfg Config) (func(ep verbs.Endpoint, id int) (locker, error), error) {
	switch cfg.Scheme {
	case CITRON:
		srv, err := citron.NewServer(s.Endpoint(0), citron.Config{Space: cfg.N, M: cfg.M, TWait: cfg.TWait, EscalateAfter: cfg.EscalateAfter})
		if err != nil {
			return nil, err
		}
		return func(ep verbs.Endpoint, id int) (locker, error) {
			c, err := citron.NewClient(ep, srv, citron.ClientOptions{K: cfg.K, SlowPath: cfg.SlowPath, Seed: cfg.Seed*7919 + int64(id) + 1})
			if err != nil {
				return nil, err
			}
			return citronLocker{c}, nil
		}, nil
	case SSExact, SSOver, SSUnder:
		n := ssSegments(cfg)
		base, err := s.Endpoint(0).Alloc(n * 8)
		if err != nil {
			return nil, fmt.Errorf("rangebench: %d segments: %w", n, err)
		}
		seg8 := ssSeg8(cfg)
		return func(verbs.Endpoint, int) (locker, error) { return &ssLocker{base: base, seg8: seg8}, nil }, nil
	case Server:
		q := s.NewRPC(0)
		rs := &rangeServer{m: cfg.Server}
		q.Serve(cfg.Server.Threads, rs.handle)
		return func(verbs.Endpoint, int) (locker, error) { return &serverLocker{q: q}, nil }, nil
	}
	return nil, fmt.Errorf("rangebench: unknown scheme %q (want one of %v)", cfg.Scheme, Schemes)
}

type citronLocker struct{ c *citron.Client }

func (l citronLocker) lock(_ verbs.Endpoint, lo, hi uint64) (func() error, error) {
	h, err := l.c.LockRange(context.Background(), lo, hi, citron.Exclusive)
	if err != nil {
		return nil, err
	}
	return h.Unlock, nil
}

func (l citronLocker) aborts() uint64 { return l.c.Stats().Aborts.Load() }
