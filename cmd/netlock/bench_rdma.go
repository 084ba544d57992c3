package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	rdmabench "github.com/netlock-go/netlock/rdma/bench"
)

func init() { benchCmd.AddCommand(newBenchRDMACmd()) }

func newBenchRDMACmd() *cobra.Command {
	var (
		sf                   sweepFlags
		algs                 []string
		nodes, lockSizes     []int
		threads              []int
		localities           []float64
		warmupUS, durationUS float64
		seed                 int64
		localB, remoteB      int64
		cdfNodes, cdfThreads int
	)
	cmd := &cobra.Command{
		Use:   "rdma",
		Short: "ALock vs RDMA MCS (CAS-first and classic) vs RDMA spinlock on the emulated RDMA lock table (virtual time)",
		Long: `Runs the ALock paper's distributed lock-table benchmark (SPAA '24, section 6) on the
virtual-time emulated RDMA fabric (rdma/sim): locks partitioned equally over the nodes, each thread
locks and unlocks a lock of its own node with probability --locality, otherwise a lock of another
node; empty critical sections. Times are virtual (the sim cost model), so results are deterministic
for a seed and do not depend on the load of this machine. Writes results.json, results.txt,
summary.md and PNG plots (throughput per node count, latency CDF) into --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sw := rdmabench.PaperSweep()
			if sf.quick {
				sw = rdmabench.QuickSweep()
			}
			f := cmd.Flags()
			if f.Changed("algs") {
				sw.Algs = algs
			}
			if f.Changed("nodes") {
				sw.Nodes = nodes
			}
			if f.Changed("locks") {
				sw.Locks = lockSizes
			}
			if f.Changed("threads") {
				sw.Threads = threads
			}
			if f.Changed("locality") {
				sw.Localities = nil
				for _, l := range localities {
					sw.Localities = append(sw.Localities, l/100)
				}
			}
			if f.Changed("warmup-us") || sw.Warmup == 0 {
				sw.Warmup = int64(warmupUS * 1000)
			}
			if f.Changed("duration-us") || sw.Duration == 0 {
				sw.Duration = int64(durationUS * 1000)
			}
			if f.Changed("seed") {
				sw.Seed = seed
			}
			sw.LocalBudget, sw.RemoteBudget = localB, remoteB
			w := cmd.OutOrStdout()
			start := time.Now()
			total := len(sw.Points())
			fmt.Fprintf(w, "rdma lock table: %d points (algs %v, nodes %v, locks %v, locality %v, threads/node %v, %.0fus virtual each, seed %d)\n",
				total, sw.Algs, sw.Nodes, sw.Locks, sw.Localities, sw.Threads, float64(sw.Duration)/1000, sw.Seed)
			rs, err := rdmabench.RunSweep(cmd.Context(), sw, sweepProgress[rdmabench.Result](os.Stderr, start, 25))
			if err != nil {
				return err
			}
			files, err := rdmabench.WriteFiles(rs, sf.out)
			if err != nil {
				return err
			}
			if !sf.noPlots {
				pngs, err := rdmabench.PlotThroughput(rs, sf.out)
				if err != nil {
					return err
				}
				files = append(files, pngs...)
				// The paper's Fig. 6 is 10 nodes x 8 threads; fall back to the sweep's middle node
				// count and largest thread count when those were not measured.
				cn, ct := cdfNodes, cdfThreads
				if !slices.Contains(sw.Nodes, cn) {
					cn = sw.Nodes[len(sw.Nodes)/2]
				}
				if !slices.Contains(sw.Threads, ct) {
					ct = sw.Threads[len(sw.Threads)-1]
				}
				cdf, err := rdmabench.PlotLatencyCDF(rs, cn, ct, sf.out)
				if err != nil {
					return err
				}
				files = append(files, cdf)
			}
			fmt.Fprintln(w)
			if err := rdmabench.WriteSummary(w, rdmabench.Summarize(rs)); err != nil {
				return err
			}
			printWrote(w, len(rs), start, "", files)
			return nil
		},
	}
	f := cmd.Flags()
	sf.add(f, "out/bench-rdma", "output directory for results and plots", "CI-size sweep (5 nodes, 20/1000 locks, 85/100% locality, 2/8 threads)")
	f.StringSliceVar(&algs, "algs", nil, "algorithms (alock, mcs, mcs-classic, spinlock)")
	f.IntSliceVar(&nodes, "nodes", nil, "node counts (paper: 5,10,20)")
	f.IntSliceVar(&lockSizes, "locks", nil, "lock table sizes (paper: 20,100,1000)")
	f.IntSliceVar(&threads, "threads", nil, "threads per node (paper: 1..12)")
	f.Float64SliceVar(&localities, "locality", nil, "percent of ops on own-node locks (paper: 85,90,95,100)")
	f.Float64Var(&warmupUS, "warmup-us", 20, "virtual warmup per point, microseconds")
	f.Float64Var(&durationUS, "duration-us", 200, "virtual measured time per point, microseconds")
	f.Int64Var(&seed, "seed", 1, "seed for lock choice and jitter")
	f.Int64Var(&localB, "local-budget", 0, "ALock local budget (default 5)")
	f.Int64Var(&remoteB, "remote-budget", 0, "ALock remote budget (default 20)")
	f.IntVar(&cdfNodes, "cdf-nodes", 10, "node count of the latency CDF plot (if not swept: middle of --nodes)")
	f.IntVar(&cdfThreads, "cdf-threads", 8, "threads per node of the latency CDF plot (if not swept: largest of --threads)")
	return cmd
}
