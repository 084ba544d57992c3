package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/rdma/dlm/dlmbench"
)

func init() { benchCmd.AddCommand(newBenchDLMCmd()) }

func newBenchDLMCmd() *cobra.Command {
	var (
		sf                   sweepFlags
		o                    dlmbench.Options
		warmupUS, durationUS float64
	)
	cmd := &cobra.Command{
		Use:   "dlm",
		Short: "NetLock's RDMA baselines DSLR and DrTM: shared, uncontended and contended exclusive locks (virtual time)",
		Long: `Runs the microbenchmark of NetLock's lock-server comparison (SIGCOMM '20, Figures 8 and 9)
against its RDMA baselines, DSLR (SIGMOD '18) and DrTM (SOSP '15), implemented in rdma/dlm, on the
virtual-time emulated RDMA fabric (rdma/sim) with the ConnectX-3 cost model (dlm.ConnectX3):
client machines x threads run single-lock transactions with empty critical sections against one
lock server: (a) shared locks over 1000 locks, (b) exclusive locks, each thread its own, (c)
exclusive locks over one set of locks of swept size. Throughput is granted lock requests per
virtual second; latency is the acquisition time, retries included. Writes results.json,
results.txt and micro.png into --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Warmup, o.Duration = int64(warmupUS*1000), int64(durationUS*1000)
			if sf.quick {
				o.Threads, o.Locks, o.Machines = []int{1, 4}, []int{1, 100}, 4
				o.Duration = min(o.Duration, 300_000)
			}
			w := cmd.OutOrStdout()
			start := time.Now()
			fmt.Fprintf(w, "dlm microbenchmark (%s): algs %v, %.0fus virtual per point, seed %d\n",
				time.Now().UTC().Format(time.RFC3339), o.Algs, float64(o.Duration)/1000, o.Seed)
			ps, err := dlmbench.Run(cmd.Context(), o, sweepProgress[dlmbench.Point](os.Stderr, start, 10))
			if err != nil {
				return err
			}
			files, err := dlmbench.Write(sf.out, ps, sf.noPlots)
			if err != nil {
				return err
			}
			if err := dlmbench.WriteText(w, ps); err != nil {
				return err
			}
			printWrote(w, len(ps), start, "", files)
			return nil
		},
	}
	f := cmd.Flags()
	sf.add(f, "out/bench-dlm", "output directory for results and the plot", "CI size (4 machines, 1/4 threads, 1/100 locks, 300us)")
	f.StringSliceVar(&o.Algs, "algs", nil, "algorithms (dslr, dslr-backoff, drtm; default all)")
	f.IntVar(&o.Machines, "machines", 0, "client machines (default 10)")
	f.IntVar(&o.Servers, "servers", 0, "lock servers (default 1)")
	f.IntSliceVar(&o.Threads, "threads", nil, "threads per machine of the shared and uncontended sweeps (default 1,2,4,8)")
	f.IntVar(&o.ConThreads, "con-threads", 0, "threads per machine of the contention sweep (default 8)")
	f.IntSliceVar(&o.Locks, "locks", nil, "lock-set sizes of the contention sweep (default 1,10,100,1000,10000)")
	f.Float64Var(&warmupUS, "warmup-us", 100, "virtual warm-up per point, microseconds")
	f.Float64Var(&durationUS, "duration-us", 1000, "virtual measured time per point, microseconds")
	f.Int64Var(&o.Seed, "seed", 1, "seed")
	f.IntVar(&o.AtomicUnits, "atomic-units", 0, "atomic units per NIC (default: the ConnectX-3 model's 1)")
	return cmd
}
