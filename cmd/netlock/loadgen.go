package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/testbed"
)

func init() { addCommand(newLoadgenCmd()) }

func newLoadgenCmd() *cobra.Command {
	var cfg testbed.NodeConfig
	var phases, out string
	cmd := &cobra.Command{
		Use:   "loadgen --servers A,B --node N --nodes M",
		Short: "One client node of a rack: the demo's workloads against lock servers (and a switch) elsewhere",
		Long: "Runs the demo's phases (microbenchmarks, TPC-C-like; not the crash phase) as one client node with --workers\n" +
			"closed-loop transaction workers, against lock servers on other hosts (the Mininet rack runs one per client\n" +
			"host). Lock l goes to server l % len(servers) + 1; answers from --switch are accepted too. Prints a JSON\n" +
			"report per phase (--out FILE writes it there); --record adds every acquisition's history events, so that\n" +
			"the histories of several nodes can be checked together (testbed/mininet).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if phases != "" {
				cfg.Phases = strings.Split(phases, ",")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			errw := cmd.ErrOrStderr()
			cfg.PhaseDone = func(i, n int, p testbed.NodePhase) {
				first := ""
				if p.FirstError != "" {
					first = " (the first: " + p.FirstError + ")"
				}
				fmt.Fprintf(errw, "node %d phase %d/%d %s done: %d txns, %.0f txn/s, %d rejects, %d errors%s\n", cfg.Node,
					i, n, p.Name, p.Txns, p.TxnRate, p.Rejects, p.Errors, first)
			}
			rep, err := testbed.RunNode(ctx, cfg)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("loadgen: %w", err)
				}
				defer f.Close()
				if err := json.NewEncoder(f).Encode(rep); err != nil {
					return fmt.Errorf("loadgen: %s: %w", out, err)
				}
				for _, p := range rep.Phases {
					fmt.Fprintf(w, "node %d %-14s %8d txns %9.0f txn/s  p50 %v p99 %v  %d rejects %d errors\n", rep.Node,
						p.Name, p.Txns, p.TxnRate, p.Latency.P50, p.Latency.P99, p.Rejects, p.Errors)
				}
				return f.Close()
			}
			return writeJSON(w, rep)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&cfg.Servers, "servers", nil, "lock servers (IP:port), server 1 first")
	f.StringVar(&cfg.Switch, "switch", "", "the switch's address: answers from it are accepted")
	f.IntVar(&cfg.Node, "node", 1, "this node's number (1..nodes)")
	f.IntVar(&cfg.Nodes, "nodes", 1, "client nodes in the rack (TPC-C warehouses: 1 per node high, 10 low)")
	f.IntVar(&cfg.Workers, "workers", 4, "closed-loop workers")
	f.DurationVar(&cfg.Duration, "duration", 2*time.Second, "length of each phase")
	f.StringVar(&phases, "phases", "", "comma-separated phases (default: the demo's but crash)")
	f.DurationVar(&cfg.Lease, "lease", 2*time.Second, "lease to ask for")
	f.DurationVar(&cfg.ThinkTime, "think-time", 0, "time a transaction holds its locks")
	f.Uint64Var(&cfg.Seed, "seed", 1, "workload seed")
	f.StringVar(&cfg.Local, "local", "0.0.0.0:0", "UDP address to bind")
	f.BoolVar(&cfg.Record, "record", false, "include every acquisition's history events in the report")
	f.StringVar(&out, "out", "", "write the JSON report to this file and a summary to stdout")
	return cmd
}
