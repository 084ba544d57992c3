package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/rdma/rma/rmabench"
)

func init() { benchCmd.AddCommand(newBenchRMAOpenCmd()) }

func newBenchRMAOpenCmd() *cobra.Command {
	var (
		sf        sweepFlags
		procs     []int
		loads     []float64
		seed      int64
		minWrites int
		parallel  int
	)
	cmd := &cobra.Command{
		Use:   "rma-open",
		Short: "RMA-RW's Fig. 4d (HPDC '16) with an open-loop latency benchmark (virtual time)",
		Long: `Fig. 4d of "High-Performance Distributed RMA Locks" compares the latency of the splits of
T_W = 1000 between the machine and node levels (T_L,2-T_L,1 = 10-100, 25-40, 50-20; F_W = 25%).
A closed loop without think time makes latency the inverse of throughput, so this runs an open
loop: for each P it measures the three splits' closed-loop throughput (Fig. 4c), then runs each
split with Poisson arrivals (per process) at --loads times the slowest split's throughput, the
same offered load for all three, and reports the latency of one acquire+release from its arrival
(queueing behind the process's previous request included). Arrivals depend on the seed and the
rank only; "served" is the share of the window's arrivals completed in it (a point that served
fewer than half is marked saturated). Writes open.json, open.md and fig4d-open.png into --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sf.quick && !cmd.Flags().Changed("procs") {
				procs = []int{32, 64}
			}
			if sf.quick && !cmd.Flags().Changed("min-writes") {
				minWrites = 40
			}
			w := cmd.OutOrStdout()
			start := time.Now()
			fmt.Fprintf(w, "netlock bench rma-open: P %v, loads %v, seed %d (%s)\n", procs, loads, seed, time.Now().UTC().Format(time.RFC3339))
			ps, closed, err := rmabench.OpenLoop4d(cmd.Context(), procs, loads, seed, minWrites, parallel,
				sweepProgress[rmabench.Result](os.Stderr, start, 6))
			if err != nil {
				return err
			}
			if err := os.MkdirAll(sf.out, 0o755); err != nil {
				return err
			}
			var files []string
			jf := filepath.Join(sf.out, "open.json")
			b, err := json.MarshalIndent(struct {
				Open   []rmabench.OpenPoint `json:"open"`
				Closed rmabench.Results     `json:"closed"`
			}{ps, closed}, "", "  ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(jf, b, 0o644); err != nil {
				return err
			}
			files = append(files, jf)
			mf := filepath.Join(sf.out, "open.md")
			fh, err := os.Create(mf)
			if err != nil {
				return err
			}
			if err := rmabench.WriteOpen(fh, ps); err != nil {
				fh.Close()
				return err
			}
			if err := fh.Close(); err != nil {
				return err
			}
			files = append(files, mf)
			if !sf.noPlots {
				png, err := rmabench.PlotOpen(ps, sf.out)
				if err != nil {
					return err
				}
				files = append(files, png)
			}
			if err := rmabench.WriteOpen(w, ps); err != nil {
				return err
			}
			printWrote(w, len(ps)+len(closed), start, fmt.Sprintf("seed %d", seed), files)
			return nil
		},
	}
	f := cmd.Flags()
	sf.add(f, "out/bench-rma-open", "output directory", "CI size (P 32, 64)")
	f.IntSliceVar(&procs, "procs", []int{16, 64, 256, 1024}, "process counts (Fig. 4's)")
	f.Float64SliceVar(&loads, "loads", []float64{0.5, 0.8}, "offered loads, fractions of the slowest split's closed-loop throughput")
	f.Int64Var(&seed, "seed", 1, "seed")
	f.IntVar(&minWrites, "min-writes", rmabench.DefaultMinWrites, "minimum writes in a point's window")
	f.IntVar(&parallel, "parallel", 2, "points simulated at once")
	return cmd
}
