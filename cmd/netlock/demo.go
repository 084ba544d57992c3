package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/testbed"
)

func init() { addCommand(newDemoCmd()) }

func newDemoCmd() *cobra.Command {
	var cfg testbed.Config
	var phases, pipeline string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole rack on one machine: p4/netlock.p4 on the software switch, the controller, lock servers, clients",
		Long: "Runs the rack in one process without root: the software switch running p4/netlock.p4 (in-memory or\n" +
			"UDP-tunnel ports), the controller over P4Runtime gRPC placing hot locks in the switch, lock servers, and\n" +
			"client nodes running the microbenchmarks and the TPC-C-like workload through the switch. Prints a live\n" +
			"progress line and a table: per phase the share of grants by the switch and by the servers, throughput,\n" +
			"latency. Every phase's history is checked for mutual exclusion and token order; a violation, or a phase\n" +
			"that commits nothing, makes the command fail. --loopback runs the servers and clients without a switch.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			pl, err := engine.ParsePipeline(pipeline)
			if err != nil {
				return fmt.Errorf("--pipeline: %w", err)
			}
			cfg.Pipeline, cfg.Generated = pl, netlockPipeline
			if phases != "" {
				cfg.Phases = strings.Split(phases, ",")
			}
			out := cmd.OutOrStdout()
			if !asJSON {
				// The header first, then the progress lines (on stderr: live on a terminal, else
				// one line per phase), then the table.
				cfg.Started = func(rep testbed.Report) { rep.WriteHeader(out) }
				cfg.Progress = cmd.ErrOrStderr()
				if f, ok := cfg.Progress.(*os.File); ok {
					if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
						cfg.ProgressLive = true
					}
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := testbed.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(out, rep); err != nil {
					return err
				}
			} else {
				rep.WriteRows(out)
			}
			if n := rep.Violations(); n > 0 {
				return fmt.Errorf("%d history violations", n)
			}
			for _, p := range rep.Phases {
				if p.AllTxns == 0 {
					return fmt.Errorf("phase %s committed no transaction", p.Name)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.Duration, "duration", 0, fmt.Sprintf("measured length of each phase (default %v; --loopback 2s)", testbed.DefaultRackDuration))
	f.DurationVar(&cfg.Warmup, "warmup", 0, fmt.Sprintf("unmeasured run of each phase's workload before it, while the controller moves hot locks (default %v; --loopback none; negative: none)", testbed.DefaultRackWarmup))
	f.IntVar(&cfg.Clients, "clients", 4, "client nodes (TPC-C: 1 warehouse per node = high contention, 10 = low)")
	f.IntVar(&cfg.Workers, "workers", 4, "closed-loop workers per client node")
	f.IntVar(&cfg.Servers, "servers", 2, "lock servers")
	f.StringVar(&phases, "phases", "", "comma-separated phases (default: "+strings.Join(testbed.DefaultPhases, ",")+")")
	f.DurationVar(&cfg.Lease, "lease", 2*time.Second, "lease clients ask for (and the servers' and the switch's default)")
	f.DurationVar(&cfg.ThinkTime, "think-time", 0, "time a transaction holds its locks before releasing them (NetLock's think time)")
	f.DurationVar(&cfg.AllocPeriod, "alloc-period", testbed.DefaultAllocPeriod, "the controller's allocation period")
	f.Float64Var(&cfg.MinRate, "min-rate", testbed.DefaultMinRate, "requests per second below which the controller leaves a lock on its server (negative: none)")
	f.IntVar(&cfg.Slots, "slots", 0, "switch queue slots the controller may allocate (0: all)")
	f.IntVar(&cfg.TenantRate, "tenant-rate", testbed.DefaultTenantRate, "the quota phase's per-tenant quota, acquires per second (the switch's meters and the servers' quotas)")
	f.BoolVar(&cfg.UDPPorts, "udp-ports", false, "attach the rack's hosts to the switch through UDP tunnels on loopback instead of in-memory ports")
	f.StringVar(&pipeline, "pipeline", "auto", "what runs p4/netlock.p4 in the switch: auto or gen (its generated Go pipeline, which this binary links, "+
		"with any sizing; a binary built without it runs the interpreter, or fails with gen), or interp; the header line names it")
	f.BoolVar(&cfg.Loopback, "loopback", false, "no switch and no controller: lock servers and clients on loopback UDP (the demo before the rack)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "workload seed")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
