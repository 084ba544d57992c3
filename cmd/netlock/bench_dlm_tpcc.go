package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/rdma/dlm"
	"github.com/netlock-go/netlock/testbed/tpcc"
	"github.com/netlock-go/netlock/testbed/tpcc/tpccbench"
)

func init() {
	benchCmd.AddCommand(newBenchDLMTPCCCmd())
	benchCmd.AddCommand(newBenchTPCCShareCmd())
}

func newBenchDLMTPCCCmd() *cobra.Command {
	var (
		sf                   sweepFlags
		o                    tpccbench.Options
		figs, orders         []string
		profile              string
		warmupMS, durationMS float64
		holdUS               float64
		oneWayNS             int64
	)
	cmd := &cobra.Command{
		Use:   "dlm-tpcc",
		Short: "NetLock's Figures 10 and 11 baselines: DSLR and DrTM under TPC-C (virtual time)",
		Long: `Runs NetLock's RDMA baselines (SIGCOMM '20, Figures 10 and 11), DSLR (SIGMOD '18) and DrTM
(SOSP '15) of rdma/dlm, on the virtual-time RDMA fabric (rdma/sim) with the ConnectX-3 cost model
(dlm.ConnectX3) under testbed/tpcc's TPC-C: Figure 10's ten client machines and two lock servers
and Figure 11's six and six, threads per client machine swept, high contention (one warehouse per
node) and low (ten), warehouses counted per client machine (testbed's tpcc-high and tpcc-low) and
in all (NetLock's replayed traces), locks taken in ascending order or in the transactions' own
order (the paper's clients; DSLR then breaks deadlocks with its lease reset, DrTM never waits).
Throughput is committed transactions and granted lock requests per virtual second; latency a
transaction's, retries included. Writes results.json, results.txt, tpcc-fig10.png and
tpcc-fig11.png into --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Profile, err = tpcc.ParseProfile(profile); err != nil {
				return err
			}
			o.Figures = nil
			for _, f := range figs {
				fig, err := tpccbench.FigureByName(f)
				if err != nil {
					return err
				}
				o.Figures = append(o.Figures, fig)
			}
			o.Orders = nil
			for _, s := range orders {
				ord, err := tpcc.ParseOrder(s)
				if err != nil {
					return err
				}
				o.Orders = append(o.Orders, ord)
			}
			for _, per := range o.Per {
				if _, err := tpccbench.Warehouses(tpccbench.Fig10, 1, per); err != nil {
					return err
				}
			}
			o.Warmup, o.Duration, o.Hold = int64(warmupMS*1e6), int64(durationMS*1e6), int64(holdUS*1e3)
			if oneWayNS < 0 {
				return fmt.Errorf("--one-way-ns %d: want 0 (the model's) or more", oneWayNS)
			}
			if oneWayNS > 0 {
				c := dlm.ConnectX3()
				c.OneWay = oneWayNS
				o.Cost = &c
			}
			if sf.quick {
				o.Figures, o.Threads, o.Per = []tpccbench.Figure{tpccbench.Fig10}, []int{2}, []string{tpccbench.PerTotal}
				o.Warmup, o.Duration = 200_000, 1_000_000
			}
			w := cmd.OutOrStdout()
			start := time.Now()
			fmt.Fprintf(w, "dlm TPC-C (%s): profile %s, %.0fms virtual per point after %.0fms, seed %d\n",
				time.Now().UTC().Format(time.RFC3339), o.Profile, float64(o.Duration)/1e6, float64(o.Warmup)/1e6, o.Seed)
			ps, err := tpccbench.Run(cmd.Context(), o, sweepProgress[tpccbench.Point](os.Stderr, start, 4))
			if err != nil {
				return err
			}
			files, err := tpccbench.Write(sf.out, ps, sf.noPlots)
			if err != nil {
				return err
			}
			if err := tpccbench.WriteText(w, ps); err != nil {
				return err
			}
			printWrote(w, len(ps), start, "", files)
			return nil
		},
	}
	f := cmd.Flags()
	sf.add(f, "out/bench-dlm-tpcc", "output directory for results and plots", "CI size (Figure 10, 2 threads, warehouses in all, 1ms)")
	f.StringSliceVar(&o.Algs, "algs", nil, "algorithms (dslr, drtm, dslr-backoff; default dslr,drtm)")
	f.StringSliceVar(&figs, "figures", []string{"fig10", "fig11"}, "rack shapes (fig10: 10 clients, 2 servers; fig11: 6 and 6)")
	f.StringVar(&profile, "profile", "spec", "TPC-C profile (spec, dslr-trace, dslr-nurand)")
	f.StringSliceVar(&orders, "orders", []string{"ordered", "client"}, "lock orders (ordered, client)")
	f.IntSliceVar(&o.PerNode, "per-node", nil, "warehouses per node, high then low contention (default 1,10)")
	f.StringSliceVar(&o.Per, "per", nil, "what a node is for the warehouse count (client, server, total; default client,total)")
	f.IntSliceVar(&o.Threads, "threads", nil, "threads per client machine (default 1,2,4,8)")
	f.Float64Var(&warmupMS, "warmup-ms", 2, "virtual warm-up per point, ms")
	f.Float64Var(&durationMS, "duration-ms", 20, "virtual measured time per point, ms")
	f.Float64Var(&holdUS, "hold-us", 0, "time a transaction holds its locks, us (NetLock's TPC-C: no think time)")
	f.Int64Var(&o.Seed, "seed", 1, "seed")
	f.IntVar(&o.AtomicUnits, "atomic-units", 0, "atomic units per NIC (default: the ConnectX-3 model's 1)")
	f.Int64Var(&oneWayNS, "one-way-ns", 0, "one-way network latency of a verb, ns (default: the ConnectX-3 model's 850)")
	f.BoolVar(&o.NoReads, "no-reads", false, "drop Stock-Level's read-committed reads (as the rack model's clients)")
	return cmd
}

func newBenchTPCCShareCmd() *cobra.Command {
	var (
		o        tpccbench.ShareOptions
		out      string
		profiles []string
	)
	cmd := &cobra.Command{
		Use:   "tpcc-share",
		Short: "The switch-share cap of TPC-C: knapsack and random allocations over TPC-C lock traces (Figure 13 audit)",
		Long: `Draws TPC-C lock traces (testbed/tpcc: the specification's profile, DSLR's generator as
NetLock's traces held it, and DSLR's with NURand draws), places their locks in a switch of each
size with the paper's knapsack (alloc.Knapsack: rate = requests, contention = terminals asking
for the lock) and with the random strawman, and measures the share s of requests the switch
grants on the trace the allocation was made from (NetLock replayed the traces it allocated from)
and on fresh transactions, with the caps it implies: 1/(1-s) when the lock servers are the
bottleneck, (1-s_random)/(1-s) against the strawman, and the latency-bound caps. NetLock's
recorded shares (its console.py) are printed beside ten-warehouse rows. Writes shares.json and
shares.txt into --out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Profiles = nil
			for _, s := range profiles {
				p, err := tpcc.ParseProfile(s)
				if err != nil {
					return err
				}
				o.Profiles = append(o.Profiles, p)
			}
			w := cmd.OutOrStdout()
			start := time.Now()
			fmt.Fprintf(w, "TPC-C switch share (%s): %d terminals, seed %d\n", time.Now().UTC().Format(time.RFC3339), max(o.Terminals, 40), max(o.Seed, 1))
			sizes, err := tpccbench.Sizes(o.Profiles, 10, 40, 2000, max(o.Seed, 1))
			if err != nil {
				return err
			}
			fmt.Fprintln(w, "\nLock sets (10 warehouses, 40 terminals x 2000 transactions):")
			if err := tpccbench.WriteSizes(w, sizes); err != nil {
				return err
			}
			fmt.Fprintln(w)
			ps, err := tpccbench.RunShares(cmd.Context(), o, sweepProgress[tpccbench.SharePoint](os.Stderr, start, 6))
			if err != nil {
				return err
			}
			ratio := o.Ratio
			if ratio == 0 {
				ratio = 0.5
			}
			files, err := tpccbench.WriteSharesFiles(out, ps, ratio)
			if err != nil {
				return err
			}
			if err := tpccbench.WriteShares(w, ps, ratio); err != nil {
				return err
			}
			printWrote(w, len(ps), start, "", files)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "out/bench-tpcc-share", "output directory")
	f.StringSliceVar(&profiles, "profiles", []string{"dslr-trace", "dslr-nurand", "spec"}, "TPC-C profiles")
	f.IntSliceVar(&o.Warehouses, "warehouses", nil, "total warehouses (default 10,100)")
	f.IntVar(&o.Terminals, "terminals", 0, "client threads (default 40: 10 machines x 4 sending cores)")
	f.IntSliceVar(&o.Txns, "txns", nil, "transactions per terminal in a trace (default 1500,5000)")
	f.IntSliceVar(&o.Slots, "slots", nil, "switch slots (default 2000,4000,10000,30000,100000,130000)")
	f.IntVar(&o.MaxLocks, "max-locks", 0, "switch lock limit (default 55000, NetLock's Tofino program; -1: none)")
	f.IntVar(&o.MaxContention, "max-contention", 0, "cap on a lock's contention c_i (default: none)")
	f.Float64Var(&o.Ratio, "ratio", 0, "switch grant latency over a server grant's, for the latency bound (default 0.5)")
	f.Uint64Var(&o.Seed, "seed", 0, "seed (default 1)")
	return cmd
}
