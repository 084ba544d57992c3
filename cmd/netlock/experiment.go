package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/testbed/modelfig"
	"github.com/netlock-go/netlock/testbed/rackmodel"
)

func init() {
	addCommand(newExperimentCmd())
	benchCmd.AddCommand(newBenchRackCmd())
}

// rackFlags are the rack model's parameters as flags (rackmodel.Params; 0 keeps the paper's value).
func rackFlags(f *pflag.FlagSet, p *rackmodel.Params) {
	f.IntVar(&p.Clients, "clients", 0, "client machines (0: 10, the paper's)")
	f.IntVar(&p.Workers, "workers", 0, "worker threads per client machine (0: 8)")
	f.IntVar(&p.Servers, "servers", 0, "lock servers (0: 2)")
	f.IntVar(&p.ServerCores, "server-cores", 0, "cores per lock server (0: 8)")
	f.DurationVar(&p.ServerCPU, "server-cpu", 0, "server core time per request (0: 444ns, 18 MRPS per 8-core server)")
	f.DurationVar(&p.HostLatency, "host-latency", 0, "host stack and NIC latency each way (0: 3µs)")
	f.DurationVar(&p.ThinkTime, "think-time", 0, "time a transaction holds its locks")
}

func newExperimentCmd() *cobra.Command {
	var (
		o       modelfig.Options
		out     string
		img     string
		asJSON  bool
		from    string
		figures = map[string]func(modelfig.Options) *modelfig.Figure{
			"fig13": modelfig.Fig13, "fig14": modelfig.Fig14, "fig10": modelfig.Fig10, "fig11": modelfig.Fig11,
			"fig15": modelfig.Fig15, "fig8": modelfig.Fig8, "fig9": modelfig.Fig9, "fig12": modelfig.Fig12,
		}
	)
	cmd := &cobra.Command{
		Use:   "experiment fig8|fig9|fig13|fig14|fig10|fig11|fig12|fig15|all",
		Short: "Regenerate a figure of the NetLock paper on the rack model (virtual time, the paper's scale)",
		Long: `Regenerates a figure of the NetLock paper (SIGCOMM'20, section 6) on the rack model
(testbed/rackmodel): netlock's own code makes every decision (p4/netlock.p4 on the engine as the
switch, lockserver/srvcore as the lock servers, client/clientcore as the clients, controlplane/ctlcore
as the controller, whose allocation periods run in the warm-up) and only time is modelled, at the
paper's scale (10 clients, 2 lock servers, a Tofino-class switch; --clients etc. change it). Every
point is a deterministic run for its seed, checked for exclusion and fencing.

  fig8   the lock switch (every lock in it) on shared locks and on exclusive locks without
         contention against 1-12 client machines, and on contended exclusive locks against their
         number (1-5000): throughput and acquire latency; 128 request streams per client machine
         (about the paper's 18 MRPS per client at the switch's round trip)
  fig9   the lock switch against one lock server with 1, 2, 4 and 8 cores (every lock on it), on
         shared locks, exclusive locks without contention and 5000 contended locks, 10 client
         machines of 128 request streams
  fig13  knapsack vs random allocation on TPC-C (10 warehouses per client), with every lock on the
         servers as the reference, for the paper's rack, 1-core servers and 64 workers per client
  fig14  throughput against switch slots, by think time, knapsack vs random
  fig10  TPC-C, ten clients and two lock servers: the hot locks in the switch against every lock on
         the servers and against the paper's baselines: NetChain (the same rack with
         p4/netchain/netchain.p4 as the switch, no servers: one slot per lock, exclusive only),
         one row per client rule for rejects (retried with backoff holding the locks; NetLock's
         own client code's rollback after 400 us, a lock at a time; that client as written, every
         acquire in one burst, after 400 us and 1 ms; NetLock with that client too, after 400 us
         and 2 ms), and DSLR and DrTM (rdma/dlm's TPC-C driver on
         rdma/sim with the ConnectX-3 cost model, the same workload, shape and threads), high and
         low contention, with the switch share s and the caps it sets on NetLock's gain
  fig11  the same with six clients and six lock servers
  fig12  policies: two tenants of five client machines, one joining later, without and with
         priorities (the switch's two levels); tenants of 3 and 7 client machines without and with
         per-tenant quotas (the switch's meters, installed by the controller) at half the capacity
  fig15  throughput over time through a switch restart and a lock server failure, with the
         controller's failure handling, checked for exclusion and fencing; the same timeline
         without the waits as negative controls

Figures 8 and 9 set their own client machines and request streams (--clients and --workers apply
with --quick only). Prints the results as Markdown with the parameters; writes FIG.json into --out
and FIG.png into --img.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			names := []string{args[0]}
			if args[0] == "all" {
				names = []string{"fig8", "fig9", "fig13", "fig14", "fig10", "fig11", "fig12", "fig15"}
			}
			w := cmd.OutOrStdout()
			for _, name := range names {
				mk, ok := figures[name]
				if !ok {
					return fmt.Errorf("unknown figure %q (want fig8, fig9, fig13, fig14, fig10, fig11, fig12, fig15 or all)", name)
				}
				f := mk(o)
				if from != "" {
					// Report and plot results of an earlier run.
					b, err := os.ReadFile(from)
					if err != nil {
						return err
					}
					var saved modelfig.Figure
					if err := json.Unmarshal(b, &saved); err != nil {
						return fmt.Errorf("%s: %w", from, err)
					}
					if saved.Name != f.Name {
						return fmt.Errorf("%s holds %s, not %s", from, saved.Name, f.Name)
					}
					if err := writeFigure(w, &saved, out, img, asJSON); err != nil {
						return err
					}
					continue
				}
				start := time.Now()
				fmt.Fprintf(os.Stderr, "%s: %d points, %d timelines\n", f.Name, len(f.Specs), len(f.Timelines))
				err := f.Run(cmd.Context(), func(done, total int, r modelfig.Result) {
					if len(f.Timelines) > 0 || len(f.Policies) > 0 {
						fmt.Fprintf(os.Stderr, "  %d/%d %s: %d violations [%v]\n", done, total, r.Label, r.Violations,
							time.Since(start).Round(time.Second))
						return
					}
					fmt.Fprintf(os.Stderr, "  %d/%d %-32s slots %5d: %6.2f MRPS (switch %5.2f) %7.0f TPS  [%v]\n", done, total,
						r.Label, r.Slots, r.RPS/1e6, r.SwitchRPS/1e6, r.TPS, time.Since(start).Round(time.Second))
				})
				if err != nil {
					return err
				}
				if len(f.Baselines) > 0 {
					fmt.Fprintf(os.Stderr, "  baselines: %d points [%v]\n", len(f.Baselines), time.Since(start).Round(time.Second))
				}
				if err := writeFigure(w, f, out, img, asJSON); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	rackFlags(fl, &o.Params)
	fl.Uint64Var(&o.Seed, "seed", 1, "workload seed")
	fl.BoolVar(&o.Quick, "quick", false, "a small sweep with short windows (a first look; not for figures)")
	fl.DurationVar(&o.Warmup, "warmup", 0, "warm-up of every point, virtual time (0: 20ms)")
	fl.DurationVar(&o.AllocPeriod, "alloc-period", 0, "time between the controller's allocation periods in the warm-up, virtual time (0: 1ms)")
	fl.DurationVar(&o.Window, "window", 0, "measured window of every point, virtual time (0: 10ms)")
	fl.StringVar(&out, "out", "out/experiment", "directory for FIG.json")
	fl.StringVar(&img, "img", "out/experiment", "directory for FIG.png")
	fl.BoolVar(&asJSON, "json", false, "print the results as JSON instead of Markdown")
	fl.StringVar(&from, "from", "", "report and plot the results in this FIG.json instead of running the figure")
	return cmd
}

func writeFigure(w io.Writer, f *modelfig.Figure, out, img string, asJSON bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, f.Name+".json"), b, 0o644); err != nil {
		return err
	}
	png, err := f.Plot(img)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, f)
	}
	fmt.Fprintf(w, "Command: `netlock %s`, %s.\n\n", strings.Join(os.Args[1:], " "), time.Now().UTC().Format(time.RFC1123))
	f.WriteMarkdown(w)
	fmt.Fprintf(w, "\n![%s](%s)\n\nRack model parameters:\n\n", f.Name, png)
	modelfig.WriteParams(w, f.Params)
	fmt.Fprintln(w)
	return nil
}

func newBenchRackCmd() *cobra.Command {
	var (
		s        modelfig.Spec
		strategy string
	)
	cmd := &cobra.Command{
		Use:   "rack",
		Short: "One rack-model run with locks in the switch, and the same rack with every lock on the servers (virtual time)",
		Long: `Runs the rack model (testbed/rackmodel; virtual time, deterministic for a seed) twice with the same
workload: once with the controller (controlplane/ctlcore) allocating --slots switch slots by
--strategy in the warm-up (an allocation period every --alloc-period), once with every lock on the
servers; prints both and their ratio.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch strategy {
			case "knapsack":
				s.Strategy = alloc.StrategyKnapsack
			case "random":
				s.Strategy = alloc.StrategyRandom
			default:
				return fmt.Errorf("--strategy %q: want knapsack or random", strategy)
			}
			ref := s
			ref.Slots, ref.Label = 0, "servers only"
			s.Label = fmt.Sprintf("%s, %d slots", strategy, s.Slots)
			w := cmd.OutOrStdout()
			var rs []modelfig.Result
			for _, sp := range []modelfig.Spec{s, ref} {
				r, err := modelfig.Run(cmd.Context(), sp)
				if err != nil {
					return err
				}
				rs = append(rs, r)
				fmt.Fprintf(w, "%-24s %7.3f MRPS granted (switch %.3f, servers %.3f), %8.0f TPS, acquire p50 %v p99 %v, txn p50 %v p99 %v  [%v wall]\n",
					r.Label, r.RPS/1e6, r.SwitchRPS/1e6, r.ServerRPS/1e6, r.TPS, r.Acquire.P50, r.Acquire.P99, r.Txn.P50,
					r.Txn.P99, r.Wall.Round(time.Millisecond))
			}
			fmt.Fprintf(w, "ratio: %.2fx requests/s, %.2fx transactions/s (%s, virtual time; %d allocation periods put %d of the %d locks the servers reported in the switch)\n",
				rs[0].RPS/rs[1].RPS, rs[0].TPS/rs[1].TPS, s.Phase, rs[0].Periods, rs[0].Alloc.Locks, rs[0].Alloc.Reported)
			return nil
		},
	}
	fl := cmd.Flags()
	rackFlags(fl, &s.Params)
	fl.StringVar(&s.Phase, "phase", "tpcc-low", "workload (tpcc-low, tpcc-high, contended/N, shared, exclusive)")
	fl.IntVar(&s.Slots, "slots", modelfig.Fig13Slots, "switch slots to allocate")
	fl.StringVar(&strategy, "strategy", "knapsack", "allocation: knapsack or random")
	fl.Uint64Var(&s.Seed, "seed", 1, "workload seed")
	fl.DurationVar(&s.Warmup, "warmup", 20*time.Millisecond, "warm-up (the controller allocates), virtual time")
	fl.DurationVar(&s.AllocPeriod, "alloc-period", time.Millisecond, "time between the controller's allocation periods in the warm-up, virtual time")
	fl.DurationVar(&s.Window, "window", 10*time.Millisecond, "measured window, virtual time")
	return cmd
}
