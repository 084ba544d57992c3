// Package bench is the ALock paper's distributed lock-table benchmark (SPAA '24 section 6) on
// the virtual-time emulated fabric of rdma/sim: locks partitioned equally across nodes, every
// thread repeatedly picks a lock (on its own node with probability Locality, otherwise a
// uniformly chosen lock of another node), locks and unlocks it with an empty critical section.
// Throughput and latency are measured in virtual time under the sim cost model, so results are
// deterministic for a seed and independent of the (shared, noisy) host.
package bench

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand"
	"sort"

	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/locks"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Algorithm names accepted by NewAlgorithm.
var AlgorithmNames = []string{"alock", "mcs", "mcs-classic", "spinlock"}

// NewAlgorithm returns the named algorithm; ALock uses the given budgets (0: paper defaults).
func NewAlgorithm(name string, localBudget, remoteBudget int64) (locks.Algorithm, error) {
	switch name {
	case "alock":
		return alock.New(alock.Config{LocalBudget: localBudget, RemoteBudget: remoteBudget})
	case "mcs":
		return locks.MCS{}, nil // CAS-first release, as ALock's remote cohort
	case "mcs-classic":
		return locks.MCS{NextFirst: true}, nil // successor first, then CAS
	case "spinlock":
		return locks.Spin{}, nil
	}
	return nil, fmt.Errorf("bench: unknown algorithm %q (want one of %v)", name, AlgorithmNames)
}

// Config is one benchmark point.
type Config struct {
	// Alg is the algorithm name (see AlgorithmNames).
	Alg string
	// Nodes, Locks and ThreadsPerNode shape the cluster and the table. Locks >= Nodes.
	Nodes, Locks, ThreadsPerNode int
	// Locality is the fraction of operations on a lock of the thread's own node, in [0,1].
	Locality float64
	// LocalBudget and RemoteBudget configure ALock (0: 5 and 20).
	LocalBudget, RemoteBudget int64
	// Warmup and Duration are virtual nanoseconds (defaults 20us and 200us).
	Warmup, Duration int64
	// Cost is the cost model (zero fields: sim defaults).
	Cost sim.Cost
	// Seed seeds lock choice and jitter.
	Seed int64
}

func (c *Config) validate() error {
	if c.Nodes < 1 || c.ThreadsPerNode < 1 || c.Locks < c.Nodes {
		return fmt.Errorf("bench: %d nodes, %d threads/node, %d locks (need locks >= nodes >= 1)", c.Nodes, c.ThreadsPerNode, c.Locks)
	}
	if c.Locality < 0 || c.Locality > 1 {
		return fmt.Errorf("bench: locality %v outside [0,1]", c.Locality)
	}
	if c.Warmup == 0 {
		c.Warmup = 20_000
	}
	if c.Duration == 0 {
		c.Duration = 200_000
	}
	if c.Warmup < 0 || c.Duration <= 0 {
		return fmt.Errorf("bench: warmup %d and duration %d", c.Warmup, c.Duration)
	}
	return nil
}

// Result is one measured point.
type Result struct {
	Alg            string  `json:"alg"`
	Nodes          int     `json:"nodes"`
	Locks          int     `json:"locks"`
	ThreadsPerNode int     `json:"threads_per_node"`
	Locality       float64 `json:"locality"`
	// Ops is the number of lock+unlock pairs completed in the measured window.
	Ops int64 `json:"ops"`
	// Throughput is Ops per virtual second.
	Throughput float64 `json:"throughput"`
	// LocalFraction is the measured fraction of ops on a lock of the thread's node.
	LocalFraction float64 `json:"local_fraction"`
	// Latency percentiles of one lock+unlock, virtual ns.
	P50, P90, P99, P999 float64
	// Verbs and loopback verbs per op, and remote spin iterations per op.
	VerbsPerOp, LoopbackPerOp, RemoteSpinsPerOp float64
	// Hist is the latency histogram (for CDF plots).
	Hist *Hist `json:"-"`
}

// Run measures one point.
func Run(cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	alg, err := NewAlgorithm(cfg.Alg, cfg.LocalBudget, cfg.RemoteBudget)
	if err != nil {
		return Result{}, err
	}
	perNode := (cfg.Locks + cfg.Nodes - 1) / cfg.Nodes
	size := uint64(perNode*locks.LockSize+cfg.ThreadsPerNode*3*64+4096+63) &^ 63
	s, err := sim.New(sim.Config{Nodes: cfg.Nodes, RegionSize: max(size, 1<<16), Cost: cfg.Cost, Seed: cfg.Seed})
	if err != nil {
		return Result{}, err
	}
	// Lock j lives on node j % Nodes (equal partition).
	lockPtr := make([]verbs.Ptr, cfg.Locks)
	byNode := make([][]int, cfg.Nodes)
	for j := range lockPtr {
		p, err := s.Endpoint(j % cfg.Nodes).Alloc(locks.LockSize)
		if err != nil {
			return Result{}, err
		}
		lockPtr[j] = p
		byNode[j%cfg.Nodes] = append(byNode[j%cfg.Nodes], j)
	}
	end := cfg.Warmup + cfg.Duration
	type tstat struct {
		ops, local     int64
		hist           Hist
		base, finalSts verbs.StatsSnapshot
		st             *verbs.Stats
		baseTaken      bool
	}
	threads := make([]*tstat, 0, cfg.Nodes*cfg.ThreadsPerNode)
	for n := 0; n < cfg.Nodes; n++ {
		for k := 0; k < cfg.ThreadsPerNode; k++ {
			ts := &tstat{}
			threads = append(threads, ts)
			node := n
			rng := rand.New(rand.NewSource(cfg.Seed*7919 + int64(len(threads))))
			s.Go(node, func(ep verbs.Endpoint) error {
				lk, err := alg.NewLocker(ep)
				if err != nil {
					return err
				}
				ts.st = ep.Stats()
				own := byNode[node]
				for {
					var j int
					if cfg.Nodes == 1 || rng.Float64() < cfg.Locality {
						j = own[rng.Intn(len(own))]
					} else {
						for j = rng.Intn(cfg.Locks); j%cfg.Nodes == node; j = rng.Intn(cfg.Locks) {
						}
					}
					t0 := ep.Now()
					if t0 >= cfg.Warmup && !ts.baseTaken {
						ts.base, ts.baseTaken = ts.st.Snapshot(), true
					}
					if err := lk.Lock(lockPtr[j]); err != nil {
						return err
					}
					if err := lk.Unlock(lockPtr[j]); err != nil {
						return err
					}
					t1 := ep.Now()
					if t0 >= cfg.Warmup && t1 <= end {
						ts.ops++
						if j%cfg.Nodes == node {
							ts.local++
						}
						ts.hist.Record(t1 - t0)
						ts.finalSts = ts.st.Snapshot()
					}
				}
			})
		}
	}
	if err := s.Run(end); err != nil {
		return Result{}, fmt.Errorf("bench %s: %w", cfg.Alg, err)
	}
	res := Result{Alg: cfg.Alg, Nodes: cfg.Nodes, Locks: cfg.Locks, ThreadsPerNode: cfg.ThreadsPerNode, Locality: cfg.Locality, Hist: &Hist{}}
	var local int64
	var d verbs.StatsSnapshot
	for _, ts := range threads {
		res.Ops += ts.ops
		local += ts.local
		res.Hist.Merge(&ts.hist)
		if ts.ops > 0 {
			x := ts.finalSts.Sub(ts.base)
			d.Reads += x.Reads
			d.Writes += x.Writes
			d.CASes += x.CASes
			d.FAAs += x.FAAs
			d.Loopback += x.Loopback
			d.RemoteSpins += x.RemoteSpins
		}
	}
	res.Throughput = float64(res.Ops) / (float64(cfg.Duration) / 1e9)
	if res.Ops > 0 {
		res.LocalFraction = float64(local) / float64(res.Ops)
		res.VerbsPerOp = float64(d.Remote()) / float64(res.Ops)
		res.LoopbackPerOp = float64(d.Loopback) / float64(res.Ops)
		res.RemoteSpinsPerOp = float64(d.RemoteSpins) / float64(res.Ops)
	}
	res.P50, res.P90, res.P99, res.P999 = res.Hist.Quantile(0.5), res.Hist.Quantile(0.9), res.Hist.Quantile(0.99), res.Hist.Quantile(0.999)
	return res, nil
}

// Hist is a log-linear latency histogram (16 sub-buckets per power of two, <= 6% error).
type Hist struct {
	counts [64 * 16]int64
	n      int64
}

func bucket(v int64) int {
	if v < 16 {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - 5 // v >> e in [16, 32)
	return (e+1)*16 + int(uint64(v)>>e) - 16
}

func lower(b int) float64 {
	if b < 16 {
		return float64(b)
	}
	e := b/16 - 1
	return float64(uint64(b%16+16) << e)
}

// Record adds one sample (ns).
func (h *Hist) Record(v int64) { h.counts[bucket(v)]++; h.n++ }

// Merge adds o's samples.
func (h *Hist) Merge(o *Hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// Count is the number of samples.
func (h *Hist) Count() int64 { return h.n }

// Quantile returns the q-quantile (lower bound of its bucket), NaN if empty.
func (h *Hist) Quantile(q float64) float64 {
	if h.n == 0 {
		return math.NaN()
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	var acc int64
	for i, c := range h.counts {
		acc += c
		if acc >= rank && c > 0 {
			return lower(i)
		}
	}
	return lower(len(h.counts) - 1)
}

// CDF returns (latency, cumulative fraction) points for non-empty buckets.
func (h *Hist) CDF() (xs, ys []float64) {
	var acc int64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		acc += c
		xs = append(xs, lower(i))
		ys = append(ys, float64(acc)/float64(h.n))
	}
	return
}

// Sweep is a grid of points.
type Sweep struct {
	Algs       []string
	Nodes      []int
	Locks      []int
	Localities []float64
	Threads    []int
	// Warmup, Duration, Cost, Seed and budgets as in Config.
	Warmup, Duration          int64
	Cost                      sim.Cost
	Seed                      int64
	LocalBudget, RemoteBudget int64
}

// QuickSweep is a CI-size grid.
func QuickSweep() Sweep {
	return Sweep{Algs: AlgorithmNames, Nodes: []int{5}, Locks: []int{20, 1000}, Localities: []float64{0.85, 1},
		Threads: []int{2, 8}, Warmup: 10_000, Duration: 60_000, Seed: 1}
}

// PaperSweep is the paper's grid (Fig. 5): 5/10/20 nodes, 20/100/1000 locks, 85-100% locality,
// 1-12 threads per node.
func PaperSweep() Sweep {
	return Sweep{Algs: AlgorithmNames, Nodes: []int{5, 10, 20}, Locks: []int{20, 100, 1000},
		Localities: []float64{0.85, 0.90, 0.95, 1}, Threads: []int{1, 2, 4, 8, 12}, Seed: 1}
}

// Points enumerates the sweep's configurations.
func (s Sweep) Points() []Config {
	var out []Config
	for _, n := range s.Nodes {
		for _, l := range s.Locks {
			for _, loc := range s.Localities {
				for _, th := range s.Threads {
					for _, a := range s.Algs {
						out = append(out, Config{Alg: a, Nodes: n, Locks: l, ThreadsPerNode: th, Locality: loc,
							Warmup: s.Warmup, Duration: s.Duration, Cost: s.Cost, Seed: s.Seed,
							LocalBudget: s.LocalBudget, RemoteBudget: s.RemoteBudget})
					}
				}
			}
		}
	}
	return out
}

// Key identifies a point without its algorithm.
type Key struct {
	Nodes, Locks, Threads int
	Locality              float64
}

// KeyOf returns r's key.
func KeyOf(r Result) Key { return Key{r.Nodes, r.Locks, r.ThreadsPerNode, r.Locality} }

// Ratios returns, per key, ALock's throughput divided by each competitor's.
func Ratios(rs []Result) map[Key]map[string]float64 {
	by := map[Key]map[string]float64{}
	for _, r := range rs {
		k := KeyOf(r)
		if by[k] == nil {
			by[k] = map[string]float64{}
		}
		by[k][r.Alg] = r.Throughput
	}
	out := map[Key]map[string]float64{}
	for k, m := range by {
		a, ok := m["alock"]
		if !ok {
			continue
		}
		out[k] = map[string]float64{}
		for alg, v := range m {
			if alg != "alock" && v > 0 {
				out[k][alg] = a / v
			}
		}
	}
	return out
}

// SortedKeys returns the keys of m in (nodes, locks, locality, threads) order.
func SortedKeys[V any](m map[Key]V) []Key {
	ks := make([]Key, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.Nodes != b.Nodes {
			return a.Nodes < b.Nodes
		}
		if a.Locks != b.Locks {
			return a.Locks < b.Locks
		}
		if a.Locality != b.Locality {
			return a.Locality < b.Locality
		}
		return a.Threads < b.Threads
	})
	return ks
}
