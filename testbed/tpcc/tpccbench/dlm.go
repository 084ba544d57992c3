// Package tpccbench runs the TPC-C experiments of NetLock's evaluation that do not need the
// rack: Figures 10 and 11's RDMA baselines (DSLR and DrTM of rdma/dlm, in virtual time on
// rdma/sim, fed by testbed/tpcc through dlm.Source) and the switch-share analysis of the
// Figure 13 audit (docs/evaluation-tpcc.md).
package tpccbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/netlock-go/netlock/rdma/dlm"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/testbed/tpcc"
)

// Figure is one of the paper's two rack shapes.
type Figure struct {
	Name              string
	Machines, Servers int
}

// Figures 10 (ten client machines, two lock servers) and 11 (six and six).
var (
	Fig10 = Figure{"fig10", 10, 2}
	Fig11 = Figure{"fig11", 6, 6}
)

// Warehouse counts: per client machine (testbed's tpcc-high and tpcc-low, which the rack model
// runs: one or ten per client node), per lock server (DSLR's definition: warehouses live on the
// lock managers) or in all (NetLock's replayed traces: lock ids drop DSLR's lock-manager node,
// so the rack had one or ten warehouses in all).
const (
	PerClient = "client"
	PerServer = "server"
	PerTotal  = "total"
)

// Paper is the paper's DSLR and DrTM lock-request throughput in Figure 10(a), MRPS, read from the
// bar chart of the NetLock repository (figures/10a.jpg) and consistent with the text's ratios
// (NetLock 8.5 and 1.35 MRPS over DSLR 14.9x and 18.4x, over DrTM 28.6x and 33.5x): keyed by alg
// and contention ("low", "high"). Figure 11 has no published absolute numbers.
var Paper = map[string]map[string]float64{
	"dslr":         {"low": 0.57, "high": 0.073},
	"dslr-backoff": {"low": 0.57, "high": 0.073},
	"drtm":         {"low": 0.30, "high": 0.040},
}

// PaperRatio is NetLock's throughput over each baseline in the text (Figure 10; Figure 11's
// "up to" ratios under "fig11-max").
var PaperRatio = map[string]map[string]float64{
	"dslr": {"low": 14.9, "high": 18.4, "fig11-max": 17.5},
	"drtm": {"low": 28.6, "high": 33.5, "fig11-max": 33.1},
}

// Options configure the Figures 10 and 11 sweep. Zero fields take the defaults in parentheses.
type Options struct {
	// Algs (dslr, drtm; also dslr-backoff: DSLR with its authors' read backoff), Figures
	// (fig10, fig11).
	Algs    []string
	Figures []Figure
	// Profile of the workload (tpcc.Spec) and the lock orders to run (ordered, client).
	Profile tpcc.Profile
	Orders  []tpcc.Order
	// PerNode is the warehouses per node for high and low contention (1, 10) and Per what a node
	// is (PerClient, PerTotal).
	PerNode []int
	Per     []string
	// Threads per client machine (1, 2, 4, 8; NetLock's TPC-C clients ran 4 sending cores).
	Threads []int
	// Warmup (2 ms) and Duration (20 ms) of virtual time per point; Hold (0) is the time a
	// transaction holds its locks, ns; Seed (1).
	Warmup, Duration, Hold int64
	Seed                   int64
	// Slots is lock words per server (1<<20).
	Slots int
	// Cost (dlm.ConnectX3()) and AtomicUnits (the cost's).
	Cost        *sim.Cost
	AtomicUnits int
	// NoReads drops Stock-Level's read-committed reads (WithoutReads): the rack model's clients
	// take a transaction's Locks only, so the side-by-side figures run the baselines without them.
	NoReads bool
}

func (o *Options) fill() {
	if len(o.Algs) == 0 {
		o.Algs = []string{"dslr", "drtm"}
	}
	if len(o.Figures) == 0 {
		o.Figures = []Figure{Fig10, Fig11}
	}
	if len(o.Orders) == 0 {
		o.Orders = []tpcc.Order{tpcc.Ordered, tpcc.ClientOrder}
	}
	if len(o.PerNode) == 0 {
		o.PerNode = []int{1, 10}
	}
	if len(o.Per) == 0 {
		o.Per = []string{PerClient, PerTotal}
	}
	if len(o.Threads) == 0 {
		o.Threads = []int{1, 2, 4, 8}
	}
	if o.Warmup == 0 {
		o.Warmup = 2_000_000
	}
	if o.Duration == 0 {
		o.Duration = 20_000_000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Slots == 0 {
		o.Slots = 1 << 20
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

func algorithm(name string) (dlm.Algorithm, error) {
	switch name {
	case "dslr":
		return dlm.DSLR{}, nil
	case "dslr-backoff":
		return dlm.DSLR{ReadBackoff: true}, nil
	case "drtm":
		return dlm.DrTM{}, nil
	}
	return nil, fmt.Errorf("tpccbench: unknown algorithm %q (want dslr, dslr-backoff or drtm)", name)
}

// FigureByName returns fig10 or fig11.
func FigureByName(s string) (Figure, error) {
	for _, f := range []Figure{Fig10, Fig11} {
		if f.Name == s {
			return f, nil
		}
	}
	return Figure{}, fmt.Errorf("tpccbench: unknown figure %q (want fig10 or fig11)", s)
}

// Point is one measured configuration.
type Point struct {
	Figure     string `json:"figure"`
	Alg        string `json:"alg"`
	Profile    string `json:"profile"`
	Order      string `json:"order"`
	Contention string `json:"contention"` // "high" (PerNode[0]) or "low"
	PerNode    int    `json:"warehouses_per_node"`
	Per        string `json:"per"`
	Warehouses int    `json:"warehouses"`
	Machines   int    `json:"machines"`
	Servers    int    `json:"servers"`
	Threads    int    `json:"threads_per_machine"`
	// TPS is committed transactions per virtual second (a Delivery is ten), MRPS granted lock
	// requests (Stock-Level's reads included) in millions.
	TPS  float64 `json:"tps"`
	MRPS float64 `json:"mrps"`
	// P50, P99, Mean: a transaction's latency from its first attempt to the end of its release,
	// retries and backoffs included, ns.
	P50  int64 `json:"p50_ns"`
	P99  int64 `json:"p99_ns"`
	Mean int64 `json:"mean_ns"`
	// AbortsPerTxn: aborted attempts per committed transaction (DrTM conflicts, DSLR resets).
	AbortsPerTxn float64 `json:"aborts_per_txn"`
	// Resets are DSLR's lease resets (deadlock or presumed dead holder) and Overtaken the waiters
	// a reset passed over.
	Resets    uint64            `json:"resets"`
	Overtaken uint64            `json:"overtaken"`
	Kinds     map[string]uint64 `json:"kinds"`
	// NoReads: Stock-Level's reads were dropped (Options.NoReads).
	NoReads bool `json:"no_reads,omitempty"`
}

type job struct {
	fig     Figure
	alg     string
	order   tpcc.Order
	perNode int
	per     string
	threads int
	high    bool
}

// Warehouses is the total warehouse count of a figure's rack for perNode warehouses per node of
// the given kind.
func Warehouses(f Figure, perNode int, per string) (int, error) {
	switch per {
	case PerClient:
		return perNode * f.Machines, nil
	case PerServer:
		return perNode * f.Servers, nil
	case PerTotal:
		return perNode, nil
	}
	return 0, fmt.Errorf("tpccbench: warehouses per %q (want client, server or total)", per)
}

// Run runs the sweep; progress, if set, is called after every point.
func Run(ctx context.Context, o Options, progress func(done, total int, p Point)) ([]Point, error) {
	o.fill()
	var jobs []job
	for _, f := range o.Figures {
		for _, per := range o.Per {
			for i, pn := range o.PerNode {
				if _, err := Warehouses(f, pn, per); err != nil {
					return nil, err
				}
				for _, a := range o.Algs {
					if _, err := algorithm(a); err != nil {
						return nil, err
					}
					for _, ord := range o.Orders {
						for _, th := range o.Threads {
							jobs = append(jobs, job{f, a, ord, pn, per, th, i == 0})
						}
					}
				}
			}
		}
	}
	var out []Point
	for i, j := range jobs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		p, err := runPoint(o, j)
		if err != nil {
			return out, fmt.Errorf("%s %s %v %d/%s %d threads: %w", j.fig.Name, j.alg, j.order, j.perNode, j.per, j.threads, err)
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
	w, err := Warehouses(j.fig, j.perNode, j.per)
	if err != nil {
		return Point{}, err
	}
	wl, err := tpcc.New(tpcc.Config{Warehouses: w, Profile: o.Profile, Order: j.order, Seed: uint64(o.Seed)})
	if err != nil {
		return Point{}, err
	}
	src := Source(wl, j.threads, o.Hold)
	if o.NoReads {
		src = WithoutReads(src)
	}
	res, err := dlm.RunSim(dlm.Config{Alg: alg, Servers: j.fig.Servers, Machines: j.fig.Machines, Threads: j.threads,
		Slots: o.Slots, Source: src, ServerOf: ServerOf(o.Profile, j.fig.Servers),
		Warmup: o.Warmup, Duration: o.Duration, Seed: o.Seed}, *o.Cost, 0)
	if err != nil {
		return Point{}, err
	}
	p := Point{Figure: j.fig.Name, Alg: j.alg, Profile: o.Profile.String(), Order: j.order.String(), PerNode: j.perNode,
		Per: j.per, Warehouses: w, Machines: j.fig.Machines, Servers: j.fig.Servers, Threads: j.threads,
		TPS: res.TxnRate, MRPS: res.LockRate / 1e6, P50: int64(res.Total.P50), P99: int64(res.Total.P99),
		Mean: int64(res.Total.Mean), Resets: res.Stats.Resets, Overtaken: res.Stats.Overtaken, Kinds: res.Kinds,
		Contention: "low", NoReads: o.NoReads}
	if j.high {
		p.Contention = "high"
	}
	if res.Txns > 0 {
		p.AbortsPerTxn = float64(res.Aborts) / float64(res.Txns)
	}
	return p, nil
}

// WriteText writes the points as one aligned table.
func WriteText(w io.Writer, ps []Point) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\talg\torder\tcontention\twarehouses\tmachines x thr\tservers\tkTPS\tMRPS\tpaper MRPS\tp50 us\tp99 us\tmean us\taborts/txn\tresets\t")
	for _, p := range ps {
		paper := ""
		if v, ok := Paper[p.Alg][p.Contention]; ok && p.Figure == Fig10.Name {
			paper = fmt.Sprintf("%.3f", v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d (%d/%s)\t%dx%d\t%d\t%.1f\t%.3f\t%s\t%.0f\t%.0f\t%.0f\t%.2f\t%d\t\n", p.Figure, p.Alg, p.Order,
			p.Contention, p.Warehouses, p.PerNode, p.Per, p.Machines, p.Threads, p.Servers, p.TPS/1e3, p.MRPS, paper,
			float64(p.P50)/1e3, float64(p.P99)/1e3, float64(p.Mean)/1e3, p.AbortsPerTxn, p.Resets)
	}
	return tw.Flush()
}

// Write writes results.json, results.txt and (unless noPlot) tpcc-fig10.png and tpcc-fig11.png
// into dir and returns the files' paths.
func Write(dir string, ps []Point, noPlot bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
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
	if noPlot {
		return files, nil
	}
	for _, fig := range []Figure{Fig10, Fig11} {
		has := false
		for _, p := range ps {
			has = has || p.Figure == fig.Name
		}
		if !has {
			continue
		}
		pf := filepath.Join(dir, "tpcc-"+fig.Name+".png")
		if err := Plot(ps, fig, pf); err != nil {
			return files, err
		}
		files = append(files, pf)
	}
	return files, nil
}
