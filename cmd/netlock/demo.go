package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/testbed"
)

func init() { addCommand(newDemoCmd()) }

func newDemoCmd() *cobra.Command {
	var cfg testbed.Config
	var phases string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the rack on one machine: lock servers and client workers on loopback, micro + TPC-C workloads",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if phases != "" {
				cfg.Phases = strings.Split(phases, ",")
			}
			if !asJSON {
				cfg.Progress = os.Stderr
				if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
					cfg.ProgressLive = true
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := testbed.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(os.Stdout, rep)
			}
			rep.WriteTable(os.Stdout)
			for _, p := range rep.Phases {
				var total uint64
				for _, g := range p.Grants {
					total += g
				}
				if total == 0 {
					return fmt.Errorf("phase %s granted nothing", p.Name)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.Duration, "duration", 2*time.Second, "length of each phase")
	f.IntVar(&cfg.Clients, "clients", 4, "client nodes (TPC-C: 1 warehouse per node = high contention, 10 = low)")
	f.IntVar(&cfg.Workers, "workers", 4, "closed-loop workers per client node")
	f.IntVar(&cfg.Servers, "servers", 2, "lock servers")
	f.StringVar(&phases, "phases", "", "comma-separated phases (default: "+strings.Join(testbed.DefaultPhases, ",")+")")
	f.DurationVar(&cfg.Lease, "lease", 2*time.Second, "lease clients ask for")
	f.DurationVar(&cfg.ThinkTime, "think-time", 0, "time a transaction holds its locks before releasing them (NetLock's think time)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "workload seed")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
