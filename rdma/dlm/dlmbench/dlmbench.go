// Package dlmbench is the microbenchmark of NetLock's RDMA baselines (rdma/dlm) in virtual time:
// the three workloads of NetLock's lock-server comparison (SIGCOMM '20, Figures 8 and 9) run
// against DSLR and DrTM on one lock server: shared locks, exclusive locks without contention
// (each thread its own locks), and exclusive locks with contention (every thread on one set of
// locks, its size swept). Client machines x threads run single-lock transactions back to back
// with empty critical sections; throughput counts granted lock requests, latency is the time to
// acquire (retries included).
package dlmbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"

	"github.com/netlock-go/netlock/rdma/dlm"
	"github.com/netlock-go/netlock/rdma/sim"
)

// Workloads.
const (
	Shared       = "shared"
	ExclusiveNC  = "exclusive-no-contention"
	ExclusiveCon = "exclusive-contention"
)

// Algorithms: the names Point.Alg takes.
var Algorithms = []string{"dslr", "dslr-backoff", "drtm"}

func algorithm(name string) (dlm.Algorithm, error) {
	switch name {
	case "dslr":
		return dlm.DSLR{}, nil
	case "dslr-backoff":
		return dlm.DSLR{ReadBackoff: true}, nil
	case "drtm":
		return dlm.DrTM{}, nil
	}
	return nil, fmt.Errorf("dlmbench: unknown algorithm %q", name)
}

// Options configure a sweep. Zero fields take the defaults in parentheses.
type Options struct {
	// Algs (all), Machines (10 client machines, as NetLock's Figure 9) and Servers (1).
	Algs              []string
	Machines, Servers int
	// Threads per machine for the shared and uncontended sweeps (1, 2, 4, 8).
	Threads []int
	// ConThreads per machine (8) and the lock-set sizes (1, 10, 100, 1000, 10000) of the
	// contention sweep.
	ConThreads int
	Locks      []int
	// Warmup (100 us) and Duration (1 ms) per point, virtual ns; Seed (1).
	Warmup, Duration int64
	Seed             int64
	// Cost is the cost model (dlm.ConnectX3()).
	Cost *sim.Cost
	// AtomicUnits, if set, overrides the cost model's atomic units per NIC (ConnectX3: 1).
	AtomicUnits int
}

func (o *Options) fill() {
	if len(o.Algs) == 0 {
		o.Algs = Algorithms
	}
	if o.Machines == 0 {
		o.Machines = 10
	}
	if o.Servers == 0 {
		o.Servers = 1
	}
	if len(o.Threads) == 0 {
		o.Threads = []int{1, 2, 4, 8}
	}
	if o.ConThreads == 0 {
		o.ConThreads = 8
	}
	if len(o.Locks) == 0 {
		o.Locks = []int{1, 10, 100, 1000, 10000}
	}
	if o.Warmup == 0 {
		o.Warmup = 100_000
	}
	if o.Duration == 0 {
		o.Duration = 1_000_000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Cost == nil {
		c := dlm.ConnectX3()
		o.Cost = &c
	}
	if o.AtomicUnits > 0 {
		c := *o.Cost
		c.AtomicUnits = o.AtomicUnits
		o.Cost = &c
	}
}

// Point is one measured configuration.
type Point struct {
	Workload string `json:"workload"`
	Alg      string `json:"alg"`
	Machines int    `json:"machines"`
	Threads  int    `json:"threads_per_machine"`
	Locks    int    `json:"locks"` // lock-set size (0: private locks)
	// MRPS is granted lock requests per virtual second, in millions.
	MRPS float64 `json:"mrps"`
	// P50, P99, Mean acquire latency, virtual ns.
	P50  int64 `json:"p50_ns"`
	P99  int64 `json:"p99_ns"`
	Mean int64 `json:"mean_ns"`
	// AbortsPerLock is aborted attempts per granted lock (DrTM conflicts, DSLR resets).
	AbortsPerLock float64 `json:"aborts_per_lock"`
	// AtomicsPerLock and ReadsPerLock are the verbs per granted lock (lock and unlock).
	AtomicsPerLock float64    `json:"atomics_per_lock"`
	ReadsPerLock   float64    `json:"reads_per_lock"`
	Result         dlm.Result `json:"result"`
}

type job struct {
	workload string
	alg      string
	threads  int
	locks    int
}

// Run runs the sweep; progress, if set, is called after every point.
func Run(ctx context.Context, o Options, progress func(done, total int, p Point)) ([]Point, error) {
	o.fill()
	var jobs []job
	for _, a := range o.Algs {
		if _, err := algorithm(a); err != nil {
			return nil, err
		}
		for _, th := range o.Threads {
			jobs = append(jobs, job{Shared, a, th, 1000}, job{ExclusiveNC, a, th, 0})
		}
		for _, l := range o.Locks {
			jobs = append(jobs, job{ExclusiveCon, a, o.ConThreads, l})
		}
	}
	var out []Point
	for i, j := range jobs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		p, err := runPoint(o, j)
		if err != nil {
			return out, fmt.Errorf("%s %s %d threads %d locks: %w", j.workload, j.alg, j.threads, j.locks, err)
		}
		out = append(out, p)
		if progress != nil {
			progress(i+1, len(jobs), p)
		}
	}
	return out, nil
}

func runPoint(o Options, j job) (Point, error) {
	alg, err := algorithm(j.alg)
	if err != nil {
		return Point{}, err
	}
	var src dlm.Source
	switch j.workload {
	case Shared:
		src = dlm.Uniform(uint32(j.locks), 1, 1, 0)
	case ExclusiveNC:
		src = dlm.Private(j.threads, 16, dlm.Exclusive, 0)
	case ExclusiveCon:
		src = dlm.Uniform(uint32(j.locks), 1, 0, 0)
	}
	slots := max(j.locks, o.Machines*j.threads*16)
	res, err := dlm.RunSim(dlm.Config{Alg: alg, Servers: o.Servers, Machines: o.Machines, Threads: j.threads,
		Slots: slots, Place: dlm.PlaceDense, Source: src, Warmup: o.Warmup, Duration: o.Duration, Seed: o.Seed},
		*o.Cost, 0)
	if err != nil {
		return Point{}, err
	}
	p := Point{Workload: j.workload, Alg: j.alg, Machines: o.Machines, Threads: j.threads, Locks: j.locks,
		MRPS: res.LockRate / 1e6, P50: int64(res.Acquire.P50), P99: int64(res.Acquire.P99), Mean: int64(res.Acquire.Mean),
		Result: res}
	if all := float64(res.Stats.Acquired); all > 0 {
		p.AbortsPerLock = float64(res.Aborts) / float64(max(res.Locks, 1))
		p.AtomicsPerLock = float64(res.Verbs.Atomics()) / all
		p.ReadsPerLock = float64(res.Verbs.Reads) / all
	}
	return p, nil
}

// WriteText writes the points as aligned tables, one per workload.
func WriteText(w io.Writer, ps []Point) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, wl := range []string{Shared, ExclusiveNC, ExclusiveCon} {
		fmt.Fprintf(tw, "%s\t\t\t\t\t\t\t\t\t\t\n", wl)
		fmt.Fprintln(tw, "alg\tmachines\tthr/machine\tlocks\tMRPS\tp50 us\tp99 us\tmean us\taborts/lock\tatomics/lock\treads/lock\t")
		for _, p := range ps {
			if p.Workload != wl {
				continue
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\t%.2f\t%.2f\t%.2f\t%.3f\t%.2f\t%.2f\t\n", p.Alg, p.Machines, p.Threads, p.Locks,
				p.MRPS, float64(p.P50)/1e3, float64(p.P99)/1e3, float64(p.Mean)/1e3, p.AbortsPerLock, p.AtomicsPerLock, p.ReadsPerLock)
		}
		fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t\t")
	}
	return tw.Flush()
}

// Write writes results.json, results.txt and (unless noPlot) micro.png into dir and returns the
// files' paths.
func Write(dir string, ps []Point, noPlot bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Workload < ps[j].Workload })
	var files []string
	jf := filepath.Join(dir, "results.json")
	b, err := json.MarshalIndent(ps, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(jf, b, 0o644); err != nil {
		return nil, err
	}
	files = append(files, jf)
	tf := filepath.Join(dir, "results.txt")
	f, err := os.Create(tf)
	if err != nil {
		return nil, err
	}
	if err := WriteText(f, ps); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	files = append(files, tf)
	if !noPlot {
		pf := filepath.Join(dir, "micro.png")
		if err := Plot(ps, pf); err != nil {
			return nil, err
		}
		files = append(files, pf)
	}
	return files, nil
}
