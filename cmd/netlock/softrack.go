package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/softfig"
)

func init() { addCommand(newSoftRackCmd()) }

func newSoftRackCmd() *cobra.Command {
	var (
		cfg    softfig.Config
		slots  int
		period time.Duration
		// fig15's timeline (diagnosis): zero leaves a failure out.
		restartAt, killAt, end, bin time.Duration
		pingPeriod                  time.Duration
		deadAfter                   int
		logLevel, img, pipeline     string
	)
	cmd := &cobra.Command{
		Use:   "softrack fig13|fig14|fig10|micro|fig15",
		Short: "A figure of the NetLock paper on the software rack, in wall-clock time (ratios within one run)",
		Long: `Runs a figure of the NetLock paper (SIGCOMM'20, section 6) on the software rack (testbed/softrack):
p4/netlock.p4 on the software switch, the controller over P4Runtime, lock servers and lock clients,
all in this process, in wall-clock time. The racks compared run side by side and take turns under
the same load (testbed/softfig), so a ratio is measured within one run on the same machine.

  fig13  knapsack vs random allocation of --slots switch slots, and every lock on the servers (TPC-C)
  fig14  servers only, knapsack over --slots, knapsack over the whole pool; think time 0 and 2ms
  fig10  netlock (knapsack over the whole pool) vs every lock on the servers, TPC-C high and low
  micro  netlock (knapsack over the whole pool) vs every lock on the servers, shared and exclusive locks
         without contention (the paper's Figure 8 workloads, as ratios)
  fig15  one rack through a switch restart and a server death (standbys), throughput over time,
         the clients' history checked

Prints Markdown.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			ctx := cmd.Context()
			pl, err := engine.ParsePipeline(pipeline)
			if err != nil {
				return fmt.Errorf("--pipeline: %w", err)
			}
			cfg.Pipeline, cfg.Generated = pl, netlockPipeline
			cc := func(s alloc.Strategy, n int) ctlcore.Config {
				return ctlcore.Config{Strategy: s, Slots: n, Seed: cfg.Seed, AllocPeriod: period}
			}
			start := time.Now()
			fmt.Fprintf(w, "Command: `netlock %s`, %s.\n\n", strings.Join(os.Args[1:], " "), start.UTC().Format(time.RFC1123))
			switch args[0] {
			case "fig13":
				res, err := softfig.Alternate(ctx, cfg, []softfig.Variant{
					{Name: "knapsack", Controller: cc(alloc.StrategyKnapsack, slots)},
					{Name: "random", Controller: cc(alloc.StrategyRandom, slots)},
					{Name: "servers only", Controller: cc(alloc.StrategyKnapsack, slots), NoSwitch: true}})
				if err != nil {
					return err
				}
				writeSoft(w, cfg, res)
				fmt.Fprintf(w, "\nknapsack / random: **%.2fx** transactions/s; knapsack / servers only: %.2fx (paper, Figure 13: 2.95x knapsack / random).\n",
					res[0].TPS/res[1].TPS, res[0].TPS/res[2].TPS)
			case "fig14":
				for _, think := range []time.Duration{0, 2 * time.Millisecond} {
					c := cfg
					c.Think = think
					res, err := softfig.Alternate(ctx, c, []softfig.Variant{
						{Name: "servers only", Controller: cc(alloc.StrategyKnapsack, 0), NoSwitch: true},
						{Name: fmt.Sprintf("knapsack, %d slots", slots), Controller: cc(alloc.StrategyKnapsack, slots)},
						{Name: "knapsack, whole pool", Controller: cc(alloc.StrategyKnapsack, 0)}})
					if err != nil {
						return err
					}
					fmt.Fprintf(w, "Think time %v:\n\n", think)
					writeSoft(w, c, res)
					fmt.Fprintf(w, "\n%d slots / servers only: **%.2fx**; whole pool / servers only: **%.2fx** (transactions/s).\n\n",
						slots, res[1].TPS/res[0].TPS, res[2].TPS/res[0].TPS)
				}
			case "fig10":
				for _, ph := range []string{testbed.PhaseTPCCHigh, testbed.PhaseTPCCLow} {
					c := cfg
					c.Phase = ph
					res, err := softfig.Alternate(ctx, c, []softfig.Variant{
						{Name: "netlock", Controller: cc(alloc.StrategyKnapsack, 0)},
						{Name: "servers only", Controller: cc(alloc.StrategyKnapsack, 0), NoSwitch: true}})
					if err != nil {
						return err
					}
					fmt.Fprintf(w, "%s:\n\n", ph)
					writeSoft(w, c, res)
					fmt.Fprintf(w, "\nnetlock / servers only: **%.2fx** transactions/s (paper, Figure 10, NetLock / DSLR: 18.4x high, 14.9x low contention).\n\n",
						res[0].TPS/res[1].TPS)
				}
			case "micro":
				for _, ph := range []string{testbed.PhaseShared, testbed.PhaseExclusive} {
					c := cfg
					c.Phase = ph
					res, err := softfig.Alternate(ctx, c, []softfig.Variant{
						{Name: "netlock, the whole pool", Controller: cc(alloc.StrategyKnapsack, 0)},
						{Name: "servers only", Controller: cc(alloc.StrategyKnapsack, 0), NoSwitch: true}})
					if err != nil {
						return err
					}
					fmt.Fprintf(w, "%s:\n\n", ph)
					writeSoft(w, c, res)
					fmt.Fprintf(w, "\nswitch / servers only: **%.2fx** locks/s, p50 %v against %v.\n\n",
						res[0].LPS/res[1].LPS, res[0].Txn.P50, res[1].Txn.P50)
				}
			case "fig15":
				if logLevel == "" && cfg.SlowAcquire > 0 {
					logLevel = "warn"
				}
				if logLevel != "" {
					var lv slog.Level
					if err := lv.UnmarshalText([]byte(logLevel)); err != nil {
						return fmt.Errorf("--log: %w", err)
					}
					cfg.Log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: lv}))
				}
				tl := softfig.Timeline{Label: "switch restart, then a server death", Bin: bin,
					RestartAt: restartAt, KillAt: killAt, End: end,
					Controller: ctlcore.Config{AllocPeriod: period, SweepPeriod: 50 * time.Millisecond,
						PingPeriod: pingPeriod, DeadAfter: deadAfter}}
				if err := softfig.RunTimeline(ctx, cfg, &tl); err != nil {
					return err
				}
				lease := cfg.Lease
				if lease == 0 {
					lease = time.Second // softfig's default
				}
				fmt.Fprintf(w, "Leases %v (max %v), the servers' controller lease %v, pings every %v, dead after %d missed, "+
					"bins of %v; %d client hosts x %d workers, %s.\n\n", lease, 2*lease, cfg.ServerLease, pingPeriod,
					deadAfter, bin, cfg.Clients, cfg.Workers, cfg.Phase)
				writeRecovery(w, &tl)
				fmt.Fprintf(w, "| t (s) | committed txns in the bin | grants by the servers |\n|---:|---:|---:|\n")
				for _, s := range tl.Samples {
					fmt.Fprintf(w, "| %.2f | %d | %d |\n", s.At.Seconds(), s.Txns, s.ServerGrants)
				}
				fmt.Fprintln(w)
				for _, e := range tl.Events {
					fmt.Fprintf(w, "- %.2f s: %s\n", e.At.Seconds(), e.What)
				}
				fmt.Fprintf(w, "\nhistory.Check over %d recorded events: %d violations %s\n", tl.Checked, tl.Violations, tl.FirstViolation)
				if img != "" {
					if err := tl.SavePNG(img); err != nil {
						return err
					}
					fmt.Fprintf(w, "\nPlot: %s\n", img)
				}
			default:
				return fmt.Errorf("unknown figure %q (want fig13, fig14, fig10, micro or fig15)", args[0])
			}
			fmt.Fprintf(w, "\nTook %v.\n", time.Since(start).Round(time.Second))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Clients, "clients", 2, "client hosts")
	fl.IntVar(&cfg.Workers, "workers", 4, "closed-loop workers per client host")
	fl.StringVar(&cfg.Phase, "phase", testbed.PhaseTPCCLow, "workload (fig13, fig14, fig15)")
	fl.DurationVar(&cfg.Warmup, "warmup", 3*time.Second, "load per rack before the measurement (in turns)")
	fl.DurationVar(&cfg.Window, "window", time.Second, "one measured window")
	fl.IntVar(&cfg.Rounds, "rounds", 3, "measured windows per rack")
	fl.Uint64Var(&cfg.Seed, "seed", 1, "workload seed")
	fl.IntVar(&slots, "slots", 64, "switch slots of the small allocations (fig13, fig14)")
	fl.DurationVar(&period, "alloc-period", 300*time.Millisecond, "the controller's allocation period")
	fl.DurationVar(&restartAt, "restart-at", 2*time.Second, "fig15: when the switch restarts (0: never)")
	fl.DurationVar(&killAt, "kill-at", 6*time.Second, "fig15: when server 2 dies (0: never)")
	fl.DurationVar(&end, "end", 10*time.Second, "fig15: length of the timeline")
	fl.StringVar(&logLevel, "log", "", "fig15: the rack's log level on stderr (debug, info, warn; empty: none)")
	fl.DurationVar(&cfg.SlowAcquire, "slow-acquire", 0, "fig15: take a transaction's locks one at a time and log each acquisition slower than this (0: off)")
	fl.DurationVar(&cfg.ServerLease, "server-lease", 500*time.Millisecond, "fig15: the lock servers' controller lease (0: not fenced)")
	fl.DurationVar(&pingPeriod, "ping-period", 50*time.Millisecond, "fig15: the controller's ping period")
	fl.IntVar(&deadAfter, "dead-after", ctlcore.DefaultDeadAfter, "fig15: pings missed in a row before a server is suspected")
	fl.DurationVar(&bin, "bin", 100*time.Millisecond, "fig15: the throughput's sampling bin")
	fl.StringVar(&img, "img", "", "fig15: also plot the timeline into this PNG file")
	fl.StringVar(&pipeline, "pipeline", "auto", "what runs p4/netlock.p4 in the switches: auto (its generated Go pipeline, which this binary links), interp or gen")
	return cmd
}

func writeSoft(w io.Writer, cfg softfig.Config, res []softfig.Result) {
	if len(res) > 0 {
		fmt.Fprintf(w, "Switch pipeline: %s.\n\n", res[0].Pipeline)
	}
	fmt.Fprintln(w, "| rack | txns/s | locks/s | servers' grants / locks | locks in the switch | failed txns | retransmitted / sent | txn p50 / p99 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range res {
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.2f | %d | %d | %d / %d | %v / %v |\n", r.Variant, r.TPS, r.LPS, r.ServerShare(),
			r.SwitchLocks, r.Errors, r.Retransmits, r.Sent, r.Txn.P50, r.Txn.P99)
	}
	fmt.Fprintf(w, "\n%d client hosts x %d workers, %s, think %v; each rack %v of warm-up then %d windows of %v, "+
		"in turns.\n", cfg.Clients, cfg.Workers, cfg.Phase, cfg.Think, cfg.Warmup, cfg.Rounds, cfg.Window)
}

// writeRecovery prints the recovery from each failure of tl: detection, the first grant of the
// standby, and when the throughput is back at 90% of what it was in the 1.5 s before.
func writeRecovery(w io.Writer, tl *softfig.Timeline) {
	const window, frac = 1500 * time.Millisecond, 0.9
	fmt.Fprintf(w, "| failure | at (s) | | after the failure |\n|---|---:|---|---:|\n")
	since := func(at time.Duration, what string) string {
		if t, ok := tl.EventAt(what, at); ok {
			return fmt.Sprintf("%.2f s", (t - at).Seconds())
		}
		return "not within the run"
	}
	back := func(at time.Duration) string {
		before, d, ok := tl.Recovery(at, window, frac)
		if !ok {
			return fmt.Sprintf("not within the run (before: %.0f txns/s)", before)
		}
		return fmt.Sprintf("%.2f s (before: %.0f txns/s)", d.Seconds(), before)
	}
	if tl.RestartAt > 0 {
		if at, ok := tl.EventAt(softfig.EventRestart, 0); ok {
			fmt.Fprintf(w, "| switch restart | %.2f | re-programmed | %s |\n", at.Seconds(), since(at, softfig.EventReprogrammed))
			fmt.Fprintf(w, "| | | locks handed back to their servers | %s |\n", since(at, softfig.EventRecovered))
			fmt.Fprintf(w, "| | | throughput at 90%% of before (3 bins) | %s |\n", back(at))
		}
	}
	if tl.KillAt > 0 {
		if at, ok := tl.EventAt(softfig.EventKill, 0); ok {
			fmt.Fprintf(w, "| server 2 killed | %.2f | suspected (detection) | %s |\n", at.Seconds(), since(at, softfig.EventSuspected))
			fmt.Fprintf(w, "| | | standby took over | %s |\n", since(at, softfig.EventTookOver))
			fmt.Fprintf(w, "| | | standby's first grant | %s |\n", since(at, softfig.EventStandbyGrants))
			fmt.Fprintf(w, "| | | throughput at 90%% of before (3 bins) | %s |\n", back(at))
		}
	}
	fmt.Fprintf(w, "\nThe controller's events are seen at the end of the bin (%v) in which its counters changed.\n\n", tl.Bin)
}
