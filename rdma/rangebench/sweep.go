package rangebench

import (
	"context"
	"fmt"
	"sort"

	"github.com/netlock-go/netlock/rdma/citron"
)

// Sweep is a list of points measured in order.
type Sweep []Config

// RunSweep measures every point of s, calling progress (if set) after each.
func RunSweep(ctx context.Context, s Sweep, progress func(done, total int, r Result)) ([]Result, error) {
	out := make([]Result, 0, len(s))
	for i, p := range s {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r, err := Run(p)
		if err != nil {
			return out, err
		}
		out = append(out, r)
		if progress != nil {
			progress(i+1, len(s), r)
		}
	}
	return out, nil
}

// Options are the knobs shared by the sweeps.
type Options struct {
	N                uint64
	Warmup, Duration int64
	Seed             int64
	Threads          []int // thread counts of the microbenchmark
	Schemes          []string
	Hotspot          bool
	// SameWordNS, if set, is the NIC's same-word atomic time of every point (CostWithSameWord).
	SameWordNS int64
}

func (o Options) base() Config {
	return Config{N: o.N, Warmup: o.Warmup, Duration: o.Duration, Seed: o.Seed, Hotspot: o.Hotspot, SameWordNS: o.SameWordNS}
}

// MicroSweep is the paper's Fig. 6: every scheme, L in {1, 16, 256}, Zipf-0.9 starts, thread
// counts o.Threads.
func MicroSweep(o Options) Sweep {
	var s Sweep
	for _, L := range []uint64{1, 16, 256} {
		for _, th := range o.Threads {
			for _, sc := range o.Schemes {
				c := o.base()
				c.Scheme, c.L, c.Alpha, c.Threads = sc, L, 0.9, th
				s = append(s, c)
			}
		}
	}
	return s
}

// AtomicSweep is Fig. 6 with unscrambled Zipf (neighbouring hot ranges, which the paper's false
// conflicts of static segmentation imply) once for each same-word atomic time in sameWord (ns;
// 0 is the default model, Cost), in the order given.
func AtomicSweep(o Options, sameWord []int64) Sweep {
	var s Sweep
	for _, a := range sameWord {
		oa := o
		oa.Hotspot, oa.SameWordNS = true, a
		s = append(s, MicroSweep(oa)...)
	}
	return s
}

// FastPathSweep is the paper's Fig. 9: CITRON with and without the fast path, L in {16, 256},
// Zipf skew alphas, threads threads.
func FastPathSweep(o Options, threads int, alphas []float64) Sweep {
	var s Sweep
	for _, L := range []uint64{16, 256} {
		for _, a := range alphas {
			for _, slow := range []bool{false, true} {
				c := o.base()
				c.Scheme, c.L, c.Alpha, c.Threads, c.SlowPath = CITRON, L, a, threads, slow
				s = append(s, c)
			}
		}
	}
	return s
}

// KSweep measures CITRON's throughput for k in ks and the given lengths (Zipf 0.9).
func KSweep(o Options, threads int, ks []int, lengths []uint64) Sweep {
	var s Sweep
	for _, L := range lengths {
		for _, k := range ks {
			c := o.base()
			c.Scheme, c.L, c.Alpha, c.Threads, c.K = CITRON, L, 0.9, threads, k
			s = append(s, c)
		}
	}
	return s
}

// FalseConflictPoint is one point of Fig. 11.
type FalseConflictPoint struct {
	K      int     `json:"k"`
	L      uint64  `json:"l"`
	Trials int     `json:"trials"`
	False  int     `json:"false_conflicts"`
	True   int     `json:"true_conflicts"`
	Rate   float64 `json:"rate"` // false / (2*trials): per lock request, the paper's definition
}

// FalseConflictSweep computes Fig. 11 for a tree of capacity n.
func FalseConflictSweep(n uint64, ks []int, lengths []uint64, trials int, seed int64) ([]FalseConflictPoint, error) {
	var out []FalseConflictPoint
	for _, k := range ks {
		for _, L := range lengths {
			f, tr, err := citron.FalseConflicts(n, L, k, trials, seed)
			if err != nil {
				return nil, err
			}
			out = append(out, FalseConflictPoint{K: k, L: L, Trials: trials, False: f, True: tr, Rate: float64(f) / float64(2*trials)})
		}
	}
	return out, nil
}

// bySameWord splits results by their same-word atomic time: the default model (0) first if
// present, then from the slowest to the fastest.
func bySameWord(rs []Result) ([]int64, map[int64][]Result) {
	m := map[int64][]Result{}
	var keys []int64
	for _, r := range rs {
		if _, ok := m[r.SameWordNS]; !ok {
			keys = append(keys, r.SameWordNS)
		}
		m[r.SameWordNS] = append(m[r.SameWordNS], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i] == 0 || keys[j] == 0 {
			return keys[i] == 0 && keys[j] != 0
		}
		return keys[i] > keys[j]
	})
	return keys, m
}

// sameWordLabel names a same-word atomic time in tables.
func sameWordLabel(ns int64) string {
	if ns == 0 {
		return "default (hashed unit, 250 ns)"
	}
	return fmt.Sprintf("%d ns", ns)
}

// peak returns the highest throughput of scheme at length L (and its thread count).
func peak(rs []Result, scheme string, L uint64) (Result, bool) {
	var best Result
	ok := false
	for _, r := range rs {
		if r.Scheme == scheme && r.L == L && (!ok || r.Throughput > best.Throughput) {
			best, ok = r, true
		}
	}
	return best, ok
}

func find(rs []Result, pred func(Result) bool) []Result {
	var out []Result
	for _, r := range rs {
		if pred(r) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Threads < out[j].Threads })
	return out
}

func fmtRatio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x)
}
