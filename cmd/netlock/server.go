package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/internal/config"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/lockserver/serverconfig"
)

func init() { addCommand(newServerCmd()) }

func newServerCmd() *cobra.Command {
	schema := serverconfig.ConfigSchema()
	var cfgFile string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a lock server (UDP 8888): owns server locks, buffers switch overflow",
		Long: `Run a netlock lock server.

Configuration comes from, in increasing precedence: defaults, a config file (--config, YAML, TOML
or JSON), environment variables (NETLOCK_ prefix, e.g. NETLOCK_LEASE_DEFAULT=2s), and flags. The
file is read strictly: an unknown key, a value of the wrong type or a nonsensical value (a zero
lease, a max lease below the default, ...) stops the server with a message naming the key and
the file.
Quotas are set in the file:

  quotas:
    7: {max_outstanding: 100, max_rate: 50000}

Control messages (overflow and queue-empty from the switch, admin from the controller) are
accepted only from the configured peers (--switch, --controller, --rdma-node; an IP, a prefix or
an IP:port each) and with the rack key (--rack-key-file, NETLOCK_RACK_KEY or rack_key in the
file: 16 hex digits); without a key every control message is dropped (docs/protocol.md).

The fencing-token epoch is persisted in --state-file and bumped before the first grant of every
start, so tokens grow across restarts whatever the clock says; a server that takes over another's
locks is started with --takeover-epoch (the other's epoch, e.g. from its admin ping reply) and
--takeover-grace.

SIGINT or SIGTERM shuts down gracefully: packets already read are answered, waiting requests
are rejected with status shutdown.

With --rdma, lock ids below --rdma-locks are kept as ALocks in the registered memory of an
emulated RDMA node (docs/architecture.md, "RDMA tier"): UDP clients get them through the server,
which takes them in ALock's local cohort on their behalf (shared requests are served
exclusively), and remote clients (client/rdmaclient) take them in the remote cohort over the
emulated NIC, which serves verbs on --rdma-listen (TCP). Set --rdma-listen to a reachable
address (e.g. 0.0.0.0:8889) to let other hosts in: the emulated NIC has no access control.
With --rdma-mode rw they are RMA-RW reader-writer locks instead (shared requests are shared on
every path; --rdma-counters, --rdma-tl-machine, --rdma-tl-node and --rdma-tr tune them). An RDMA
option without --rdma (or an rw parameter without --rdma-mode rw) is an error, not ignored.

A NETLOCK_ environment variable that is not a key's (NETLOCK_LEASE_DEFUALT, NETLOCK_SHARDZ) stops
the server, naming it; every other netlock command reads no NETLOCK_ variable but refuses one that
no command knows.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := schema.Load(cfgFile, cmd.Flags())
			if err != nil {
				return err
			}
			if err := checkRDMAKeys(v); err != nil {
				return err
			}
			cfg, err := serverconfig.ConfigFromValues(v)
			if err != nil {
				return err
			}
			log, err := newLogger(v.String(serverconfig.KeyLogLevel))
			if err != nil {
				return err
			}
			for _, w := range v.Warnings() {
				log.Warn("configuration: " + w)
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
			cfg.Logger, cfg.Registerer = log, reg
			srv, err := lockserver.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if addr := v.String(serverconfig.KeyMetricsListen); addr != "" {
				if err := serveMetrics(ctx, addr, reg, log); err != nil {
					return err
				}
			}
			return srv.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfgFile, "config", "", "config file (YAML, TOML or JSON)")
	schema.AddFlags(f)
	return cmd
}

// rdmaKeys are the keys that only mean something with rdma.enabled (--rdma); rwKeys those that
// only mean something with rdma.mode rw.
var (
	rdmaKeys = []string{serverconfig.KeyRDMALocks, serverconfig.KeyRDMAListen, serverconfig.KeyRDMAMode,
		serverconfig.KeyRDMACounters, serverconfig.KeyRDMATLMachine, serverconfig.KeyRDMATLNode, serverconfig.KeyRDMATR,
		serverconfig.KeyRDMANodes}
	rwKeys = []string{serverconfig.KeyRDMACounters, serverconfig.KeyRDMATLMachine, serverconfig.KeyRDMATLNode,
		serverconfig.KeyRDMATR}
)

// checkRDMAKeys refuses an RDMA option set (by flag, environment or file) where it would be
// ignored: any of them without --rdma, the RMA-RW parameters without --rdma-mode rw.
func checkRDMAKeys(v *config.Values) error {
	if !v.Bool(serverconfig.KeyRDMA) {
		for _, k := range rdmaKeys {
			if v.Source(k) != "default" {
				return v.Errorf(k, "has no effect without %s (--rdma): enable RDMA or remove it", serverconfig.KeyRDMA)
			}
		}
		return nil
	}
	if v.String(serverconfig.KeyRDMAMode) != lockserver.RDMAModeRW {
		for _, k := range rwKeys {
			if v.Source(k) != "default" {
				return v.Errorf(k, "is a parameter of %s rw (--rdma-mode rw), not of %s %s", serverconfig.KeyRDMAMode,
					serverconfig.KeyRDMAMode, v.String(serverconfig.KeyRDMAMode))
			}
		}
	}
	return nil
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

func serveMetrics(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) error {
	_, err := listenMetrics(ctx, addr, reg, log)
	return err
}

// listenMetrics serves reg on addr's /metrics until ctx ends and returns the address it listens
// on.
func listenMetrics(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	log.Info("metrics", "addr", ln.Addr().String())
	return ln.Addr(), nil
}
