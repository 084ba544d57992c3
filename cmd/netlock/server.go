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
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/netlock-go/netlock/lockserver"
)

func init() { addCommand(newServerCmd()) }

func newServerCmd() *cobra.Command {
	v := lockserver.NewViper()
	var cfgFile string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a lock server (UDP 8888): owns server locks, buffers switch overflow",
		Long: `Run a netlock lock server.

Configuration comes from, in increasing precedence: defaults, a config file (--config, YAML, TOML
or JSON), environment variables (NETLOCK_ prefix, e.g. NETLOCK_LEASE_DEFAULT=2s), and flags.
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
address (e.g. 0.0.0.0:8889) to let other hosts in: the emulated NIC has no access control.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfgFile != "" {
				v.SetConfigFile(cfgFile)
				if err := v.ReadInConfig(); err != nil {
					return fmt.Errorf("read config: %w", err)
				}
			}
			cfg, err := lockserver.ConfigFromViper(v)
			if err != nil {
				return err
			}
			log, err := newLogger(v.GetString(lockserver.KeyLogLevel))
			if err != nil {
				return err
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
			if addr := v.GetString(lockserver.KeyMetricsListen); addr != "" {
				if err := serveMetrics(ctx, addr, reg, log); err != nil {
					return err
				}
			}
			return srv.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfgFile, "config", "", "config file (YAML, TOML or JSON)")
	f.String("listen", "0.0.0.0:8888", "UDP address to serve")
	f.Int("shards", 0, "lock partitions (0: one per CPU)")
	f.Int("sockets", 0, "SO_REUSEPORT sockets (0: one per shard)")
	f.Int("batch", 64, "datagrams per recvmmsg/sendmmsg")
	f.Duration("lease", 10*time.Second, "default lease")
	f.Duration("max-lease", 60*time.Second, "longest lease a client may ask for")
	f.Duration("takeover-grace", 0, "grant nothing for this long after start (failover: >= longest lease)")
	f.Int("priorities", 8, "priority levels")
	f.Int("max-waiters", 0, "waiters per lock before queue-full rejects (0: unbounded)")
	f.String("metrics-listen", "", "serve Prometheus metrics on this TCP address (e.g. :9102)")
	f.String("log-level", "info", "debug, info, warn or error")
	f.Bool("rdma", false, "keep locks below --rdma-locks as an ALock table on an emulated RDMA NIC")
	f.Int("rdma-locks", 1024, "number of RDMA-backed locks (ids 0..N-1) with --rdma")
	f.String("rdma-listen", "127.0.0.1:0", "TCP address of the emulated RDMA NIC (remote clients' verbs)")
	f.String("rack-key-file", "", "file holding the rack key (16 hex digits) that control messages carry")
	f.StringSlice("switch", nil, "switch address(es) allowed to send overflow and queue-empty (IP, prefix or IP:port)")
	f.StringSlice("controller", nil, "controller/operator address(es) allowed to send admin (IP, prefix or IP:port)")
	f.StringSlice("rdma-node", nil, "remote RDMA client address(es) allowed to join (IP, prefix or IP:port)")
	f.String("state-file", lockserver.DefaultStateFile, "file persisting the fencing-token epoch")
	f.Uint64("takeover-epoch", 0, "epoch of the server whose locks this one takes over (tokens start above it)")
	for flag, key := range map[string]string{"listen": lockserver.KeyListen, "shards": lockserver.KeyShards,
		"sockets": lockserver.KeySockets, "batch": lockserver.KeyBatch, "lease": lockserver.KeyLease,
		"max-lease": lockserver.KeyMaxLease, "takeover-grace": lockserver.KeyTakeover,
		"priorities": lockserver.KeyPriorities, "max-waiters": lockserver.KeyMaxWaiters,
		"metrics-listen": lockserver.KeyMetricsListen, "log-level": lockserver.KeyLogLevel,
		"rdma": lockserver.KeyRDMA, "rdma-locks": lockserver.KeyRDMALocks, "rdma-listen": lockserver.KeyRDMAListen,
		"rack-key-file": lockserver.KeyRackKeyFile, "switch": lockserver.KeySwitches,
		"controller": lockserver.KeyControllers, "rdma-node": lockserver.KeyRDMANodes,
		"state-file": lockserver.KeyStateFile, "takeover-epoch": lockserver.KeyTakeoverEpoch} {
		bindFlag(v, key, f.Lookup(flag))
	}
	return cmd
}

// bindFlag binds a flag to a viper key (a flag that was set overrides file and environment).
func bindFlag(v *viper.Viper, key string, fl *pflag.Flag) {
	if err := v.BindPFlag(key, fl); err != nil {
		panic(err)
	}
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

func serveMetrics(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics listen: %w", err)
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
	return nil
}
