package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/controlplane/controller"
)

func init() { addCommand(newControllerCmd()) }

func newControllerCmd() *cobra.Command {
	schema := controller.ConfigSchema()
	var cfgFile string
	cmd := &cobra.Command{
		Use:   "controller --config rack.yaml",
		Short: "Run the rack's controller: programs the switch, moves hot locks into it, sweeps leases, handles failures",
		Long: `Run netlock's controller (docs/controlplane.md).

It connects to the switch over P4Runtime (switch.addr, switch.device_id), pushes the program
(the embedded program of --embedded, p4/netlock.p4 by default, with the sizing keys, or --program) when the switch has none, programs
the rack key, routes, servers, clone sessions and tenant meters, and then runs: every
alloc.period it measures the locks' request rates (switch counters, the servers' reports) and
contention, runs the knapsack allocation and moves locks into and out of the switch; every
sweep_period it probes the switch's queues and force-releases expired holders; it pings the
servers and fails a dead one over to its standby; it detects a restarted switch by its cookie and
recovers its locks after the leases.

A backup controller is the same command started a second time with the same configuration: the
switch's P4Runtime election makes one primary (by default the one started first: election ids
come from the start time, or set switch.election_id), and the other takes over when the primary's
stream ends.

Configuration comes from, in increasing precedence: defaults, the config file (--config, YAML,
TOML or JSON; testbed/rack.yaml is an example), environment variables (NETLOCK_ prefix, e.g.
NETLOCK_ALLOC_PERIOD=500ms) and flags. The file is read strictly: an unknown key, a value of the
wrong type or a nonsensical value stops the controller with a message naming the key and the file.

Metrics: --metrics-listen (metrics_listen) serves Prometheus metrics on /metrics, as netlock
server's does; the former name --metrics-addr (metrics_addr) still works and warns. Logs: slog
text on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := schema.Load(cfgFile, cmd.Flags())
			if err != nil {
				return err
			}
			fc, err := controller.ConfigFromValues(v)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runController(ctx, fc, controllerIO{})
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfgFile, "config", "", "config file (YAML, TOML or JSON)")
	schema.AddFlags(f)
	return cmd
}

// controllerIO are runController's edges that tests replace: the admin socket (nil: a UDP
// socket on the configured admin.listen) and a callback told the controller and the metrics
// address once they run.
type controllerIO struct {
	conn  net.PacketConn
	ready func(ctl *controller.Controller, metrics net.Addr)
}

// runController runs a controller from a loaded configuration until ctx ends. The admin socket
// is closed when it ends.
func runController(ctx context.Context, fc controller.FileConfig, io controllerIO) error {
	conn := io.conn
	log, err := newLogger(fc.LogLevel)
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		return err
	}
	if conn == nil {
		if conn, err = net.ListenPacket("udp4", fc.AdminListen); err != nil {
			return fmt.Errorf("controller: admin socket: %w", err)
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg := fc.Config
	cfg.AdminConn, cfg.Log, cfg.Registerer = conn, log, reg
	ctl, err := controller.New(cfg)
	if err != nil {
		conn.Close()
		return err
	}
	var metrics net.Addr
	for _, w := range fc.Warnings {
		log.Warn("configuration: " + w)
	}
	if fc.MetricsListen != "" {
		if metrics, err = listenMetrics(ctx, fc.MetricsListen, reg, log); err != nil {
			conn.Close()
			return err
		}
	}
	log.Info("controller starting", "switch", cfg.Switch.Addr, "device", cfg.Switch.DeviceID,
		"election", cfg.Switch.ElectionID.String(), "admin", conn.LocalAddr().String(), "servers", len(cfg.Core.Servers))
	if io.ready != nil {
		io.ready(ctl, metrics)
	}
	return ctl.Run(ctx)
}
