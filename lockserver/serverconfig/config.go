// Package serverconfig is the configuration of netlock server: its keys, their types,
// defaults, flags and checks (internal/config: a file, NETLOCK_ environment variables and
// flags), turned into a lockserver.Config. It lives apart so that package lockserver builds
// without the configuration machinery (viper).
package serverconfig

import (
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/lockserver/srvcore"
	"github.com/netlock-go/netlock/wire"

	"github.com/netlock-go/netlock/internal/config"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/rdma/rma"
)

// Configuration keys, as written in a config file (YAML, TOML or JSON), as environment variables
// (NETLOCK_ prefix, dots become underscores: NETLOCK_LEASE_DEFAULT) and, where noted in
// ConfigSchema, as command-line flags.
const (
	KeyListen  = "listen"
	KeyShards  = "shards"
	KeySockets = "sockets"
	KeyBatch   = "batch"
	// KeyAcceptBatch accepts batch datagrams (several client requests in one; docs/protocol.md
	// "Batches") from clients that reach the server directly.
	KeyAcceptBatch   = "accept_batch"
	KeySweep         = "sweep_interval"
	KeyTakeover      = "takeover_grace"
	KeyLease         = "lease.default"
	KeyMaxLease      = "lease.max"
	KeyPriorities    = "priorities"
	KeyMaxWaiters    = "max_waiters"
	KeyMaxBuffered   = "max_buffered"
	KeyIdleRetention = "idle_retention"
	// Bounds of the whole server (divided among its shards) and of each lock, the wait lease of
	// a queued request, and the memory of ended requests that filters replays.
	KeyMaxLocks       = "max_locks"
	KeyMaxRequests    = "max_requests"
	KeyMaxHolders     = "max_holders"
	KeyWaitLease      = "wait_lease"
	KeyReplayWindow   = "replay_window"
	KeyReplayCapacity = "replay_capacity"
	KeyDefaultOut     = "quota.default.max_outstanding"
	KeyDefaultRate    = "quota.default.max_rate"
	KeyQuotas         = "quotas"
	KeyMetricsListen  = "metrics_listen"
	KeyLogLevel       = "log_level"
	// KeyRDMA enables the ALock table (RDMAConfig) of KeyRDMALocks locks, its emulated NIC
	// serving remote clients on KeyRDMAListen (TCP).
	KeyRDMA       = "rdma.enabled"
	KeyRDMALocks  = "rdma.locks"
	KeyRDMAListen = "rdma.listen"
	// KeyRDMAMode selects the table's algorithm: "alock" (exclusive only) or "rw" (RMA-RW:
	// shared requests are shared); the rw table's parameters are KeyRDMACounters (reader
	// counters per lock), KeyRDMATLMachine and KeyRDMATLNode (T_L,1 and T_L,2) and KeyRDMATR (T_R).
	KeyRDMAMode      = "rdma.mode"
	KeyRDMACounters  = "rdma.counters"
	KeyRDMATLMachine = "rdma.tl_machine"
	KeyRDMATLNode    = "rdma.tl_node"
	KeyRDMATR        = "rdma.tr"
	// KeyRackKey is the rack key as 16 hexadecimal digits (a quoted string in YAML);
	// KeyRackKeyFile names a file holding it instead (keeps the secret out of the config file,
	// the environment and the process list). At most one of them may be set.
	KeyRackKey     = "rack_key"
	KeyRackKeyFile = "rack_key_file"
	// Peers allowed to send control messages (lists of IP, prefix or IP:port).
	KeySwitches    = "peers.switches"
	KeyControllers = "peers.controllers"
	KeyRDMANodes   = "peers.rdma_nodes"
	// KeyStateFile is where the fencing-token epoch is persisted; KeyTakeoverEpoch is the epoch
	// of the server whose locks this one takes over.
	KeyStateFile     = "state_file"
	KeyTakeoverEpoch = "takeover_epoch"
	// KeyInitState creates the state file of a new server (it must not exist yet); without it a
	// missing state file stops the server. KeySkipRestartGrace skips the restart grace (unsafe).
	KeyInitState        = "init_state"
	KeySkipRestartGrace = "unsafe_skip_restart_grace"
	// KeyStandby starts the server as a standby for a failed server's address (it grants nothing
	// until the controller's takeover); KeyControllerLease fences it to the controller's pings.
	KeyStandby         = "standby"
	KeyControllerLease = "controller_lease"
)

// DefaultStateFile returns the state file of netlock server when none is configured: in the
// state directory (/var/lib/netlock for root, else $XDG_STATE_HOME/netlock or
// ~/.local/state/netlock), named after the port it serves, so that servers of one machine on
// different ports keep apart.
func DefaultStateFile(listen string) string {
	dir := "/var/lib/netlock"
	if os.Geteuid() != 0 {
		if x := os.Getenv("XDG_STATE_HOME"); x != "" {
			dir = filepath.Join(x, "netlock")
		} else if h, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(h, ".local", "state", "netlock")
		} else {
			dir = filepath.Join(os.TempDir(), "netlock-state")
		}
	}
	port := "8888"
	if _, p, err := net.SplitHostPort(listen); err == nil && p != "" {
		port = p
	}
	return filepath.Join(dir, "server-"+port+".state")
}

var nonEmpty = func(v any) error {
	if v.(string) == "" {
		return fmt.Errorf("must not be empty")
	}
	return nil
}

// ConfigSchema returns the configuration schema of netlock server: every key, its type,
// default, flag and sanity check (internal/config loads it strictly).
func ConfigSchema() *config.Schema {
	return &config.Schema{EnvPrefix: "NETLOCK", Keys: []config.Key{
		{Name: KeyListen, Type: config.String, Default: "0.0.0.0:8888", Flag: "listen", Usage: "UDP address to serve", Check: nonEmpty},
		{Name: KeyShards, Type: config.Int, Default: 0, Flag: "shards", Usage: "lock partitions (0: one per CPU)", Check: config.Range(0, 1024)},
		{Name: KeySockets, Type: config.Int, Default: 0, Flag: "sockets", Usage: "reader goroutines on the server's socket (0: one; several may step one sender's datagrams out of order)", Check: config.Range(0, 256)},
		{Name: KeyBatch, Type: config.Int, Default: 64, Flag: "batch", Usage: "datagrams per recvmmsg/sendmmsg", Check: config.Range(1, 1024)},
		{Name: KeyAcceptBatch, Type: config.Bool, Default: false, Flag: "accept-batch", Usage: "accept batch datagrams (several requests each) from clients that reach the server directly; leave off behind a switch"},
		{Name: KeySweep, Type: config.Duration, Default: time.Millisecond, Flag: "sweep-interval", Usage: "how often leases and idle lock states are checked", Check: config.Positive},
		{Name: KeyTakeover, Type: config.Duration, Default: time.Duration(0), Flag: "takeover-grace", Usage: "grant nothing for this long after start (failover: >= longest lease)", Check: config.NonNegative},
		{Name: KeyLease, Type: config.Duration, Default: 10 * time.Second, Flag: "lease", Usage: "default lease", Check: atLeastMicro},
		{Name: KeyMaxLease, Type: config.Duration, Default: 60 * time.Second, Flag: "max-lease", Usage: "longest lease a client may ask for", Check: atLeastMicro},
		{Name: KeyPriorities, Type: config.Int, Default: 8, Flag: "priorities", Usage: "priority levels", Check: config.Range(1, lockcore.MaxPriorities)},
		{Name: KeyMaxWaiters, Type: config.Int, Default: lockcore.DefaultMaxWaiters, Flag: "max-waiters", Usage: "waiters per lock before queue-full rejects (-1: unbounded)", Check: config.Range(-1, 1<<24)},
		{Name: KeyMaxHolders, Type: config.Int, Default: lockcore.DefaultMaxHolders, Flag: "max-holders", Usage: "shared holders per lock; more shared requests wait (-1: unbounded)", Check: config.Range(-1, 1<<24)},
		{Name: KeyMaxLocks, Type: config.Int, Default: lockcore.DefaultMaxLocks, Flag: "max-locks", Usage: "locks with requests, the whole server; new locks past it are rejected overloaded (-1: unbounded)", Check: config.Range(-1, 1<<30)},
		{Name: KeyMaxRequests, Type: config.Int, Default: lockcore.DefaultMaxRequests, Flag: "max-requests", Usage: "requests held, waiting or buffered, the whole server; more are rejected overloaded (-1: unbounded)", Check: config.Range(-1, 1<<30)},
		{Name: KeyWaitLease, Type: config.Duration, Default: lockcore.DefaultWaitLease, Flag: "wait-lease", Usage: "a queued request not retransmitted for this long is dropped (reject wait-expired)", Check: config.Positive},
		{Name: KeyReplayWindow, Type: config.Duration, Default: lockcore.DefaultReplayWindow, Flag: "replay-window", Usage: "how long an ended request is remembered, so that a replay of its acquire is not queued again", Check: config.Positive},
		{Name: KeyReplayCapacity, Type: config.Int, Default: lockcore.DefaultReplayCapacity, Flag: "replay-capacity", Usage: "ended requests remembered per shard", Check: config.Range(1, 1<<24)},
		{Name: KeyMaxBuffered, Type: config.Int, Default: 4096, Flag: "max-buffered", Usage: "overflow (q2) requests buffered per switch lock before queue-full rejects", Check: config.Range(1, 1<<24)},
		{Name: KeyIdleRetention, Type: config.Duration, Default: time.Second, Flag: "idle-retention", Usage: "how long the state of a lock without requests is kept", Check: config.Positive},
		{Name: KeyDefaultOut, Type: config.Int, Default: 0, Usage: "default per-tenant bound on held+waiting+buffered requests (0: none)", Check: config.NonNegative},
		{Name: KeyDefaultRate, Type: config.Int, Default: 0, Usage: "default per-tenant bound on acquires per second (0: none)", Check: config.NonNegative},
		{Name: KeyQuotas, Type: config.Table, Usage: "per-tenant quotas: TENANT: {max_outstanding, max_rate}"},
		{Name: KeyMetricsListen, Type: config.String, Default: "", Flag: "metrics-listen", Usage: "serve Prometheus metrics on this TCP address (e.g. :9102)"},
		{Name: KeyLogLevel, Type: config.String, Default: "info", Flag: "log-level", Usage: "debug, info, warn or error", Check: config.OneOf("debug", "info", "warn", "error")},
		{Name: KeyRDMA, Type: config.Bool, Default: false, Flag: "rdma", Usage: "keep locks below --rdma-locks as an ALock table on an emulated RDMA NIC"},
		{Name: KeyRDMALocks, Type: config.Int, Default: 1024, Flag: "rdma-locks", Usage: "number of RDMA-backed locks (ids 0..N-1) with --rdma", Check: config.Range(1, 1<<20)},
		{Name: KeyRDMAListen, Type: config.String, Default: "127.0.0.1:0", Flag: "rdma-listen", Usage: "TCP address of the emulated RDMA NIC (remote clients' verbs)", Check: nonEmpty},
		{Name: KeyRDMAMode, Type: config.String, Default: lockserver.RDMAModeALock, Flag: "rdma-mode", Usage: "RDMA table: alock (exclusive only) or rw (RMA-RW reader-writer locks)", Check: config.OneOf(lockserver.RDMAModeALock, lockserver.RDMAModeRW)},
		{Name: KeyRDMACounters, Type: config.Int, Default: 1, Flag: "rdma-counters", Usage: "rw mode: reader counters per lock (T_DC)", Check: config.Range(1, 64)},
		{Name: KeyRDMATLMachine, Type: config.Int, Default: rma.DefaultTLRoot, Flag: "rdma-tl-machine", Usage: "rw mode: writer hand-overs between nodes before the readers' turn (T_L,1)", Check: config.Range(1, 65535)},
		{Name: KeyRDMATLNode, Type: config.Int, Default: rma.DefaultTLLeaf, Flag: "rdma-tl-node", Usage: "rw mode: consecutive writers of one node (T_L,2)", Check: config.Range(1, 65535)},
		{Name: KeyRDMATR, Type: config.Int, Default: rma.DefaultTR, Flag: "rdma-tr", Usage: "rw mode: reader arrivals per counter between resets (T_R)", Check: config.Range(1, 65535)},
		{Name: KeyRackKey, Type: config.String, Default: "", Usage: "rack key, 16 hex digits (prefer rack_key_file)"},
		{Name: KeyRackKeyFile, Type: config.String, Default: "", Flag: "rack-key-file", Usage: "file holding the rack key (16 hex digits) that control messages carry"},
		{Name: KeySwitches, Type: config.Strings, Default: []string(nil), Flag: "switch", Usage: "switch address(es) allowed to send overflow and queue-empty (IP, prefix or IP:port)"},
		{Name: KeyControllers, Type: config.Strings, Default: []string(nil), Flag: "controller", Usage: "controller/operator address(es) allowed to send admin (IP, prefix or IP:port)"},
		{Name: KeyRDMANodes, Type: config.Strings, Default: []string(nil), Flag: "rdma-node", Usage: "remote RDMA client address(es) allowed to join (IP, prefix or IP:port)"},
		{Name: KeyStateFile, Type: config.String, Default: "", Flag: "state-file", Usage: "file persisting the fencing-token epoch and the longest lease (\"\": server-PORT.state in /var/lib/netlock, or ~/.local/state/netlock for other users)"},
		{Name: KeyInitState, Type: config.Bool, Default: false, Flag: "init", Usage: "first start of a new server: create its state file (refused if it exists)"},
		{Name: KeySkipRestartGrace, Type: config.Bool, Default: false, Flag: "unsafe-skip-restart-grace", Usage: "UNSAFE: grant at once after a restart, though leases granted before it may still run"},
		{Name: KeyTakeoverEpoch, Type: config.Uint, Default: uint64(0), Flag: "takeover-epoch", Usage: "epoch of the server whose locks this one takes over (tokens start above it)"},
		{Name: KeyStandby, Type: config.Bool, Default: false, Flag: "standby", Usage: "start as a standby: grant nothing until the controller's takeover"},
		{Name: KeyControllerLease, Type: config.Duration, Default: time.Duration(0), Flag: "controller-lease", Usage: "grant only while the controller's last ping is younger than this (0: no fencing)", Check: config.NonNegative},
	}}
}

func atLeastMicro(v any) error {
	if d := v.(time.Duration); d < time.Microsecond {
		return fmt.Errorf("%v: a lease must be at least 1µs", d)
	}
	return nil
}

// ConfigFromValues builds a lockserver.Config from values loaded with ConfigSchema (file, environment and
// flags already merged) and checks what no single key can: the max lease against the default, the
// rack key's syntax and its two sources, the peers, the quotas. Errors name the key and where its
// value came from. No socket is bound.
func ConfigFromValues(v *config.Values) (lockserver.Config, error) {
	var c lockserver.Config
	c.Listen = v.String(KeyListen)
	c.Shards, c.Sockets, c.Batch = v.Int(KeyShards), v.Int(KeySockets), v.Int(KeyBatch)
	c.SweepInterval, c.TakeoverGrace = v.Duration(KeySweep), v.Duration(KeyTakeover)
	c.Core.DefaultLease, c.Core.MaxLease = v.Duration(KeyLease), v.Duration(KeyMaxLease)
	c.Core.Priorities, c.Core.MaxWaiters = v.Int(KeyPriorities), v.Int(KeyMaxWaiters)
	c.Core.MaxBuffered, c.Core.IdleRetention = v.Int(KeyMaxBuffered), v.Duration(KeyIdleRetention)
	c.Core.MaxHolders, c.Core.MaxLocks, c.Core.MaxRequests = v.Int(KeyMaxHolders), v.Int(KeyMaxLocks), v.Int(KeyMaxRequests)
	c.Core.WaitLease, c.Core.ReplayWindow = v.Duration(KeyWaitLease), v.Duration(KeyReplayWindow)
	c.Core.ReplayCapacity = v.Int(KeyReplayCapacity)
	c.Core.DefaultQuota = lockcore.Quota{MaxOutstanding: v.Int(KeyDefaultOut), MaxRate: v.Int(KeyDefaultRate)}
	if c.Core.MaxLease < c.Core.DefaultLease {
		return lockserver.Config{}, v.Errorf(KeyMaxLease, "%v is below %s %v", c.Core.MaxLease, KeyLease, c.Core.DefaultLease)
	}
	if c.Core.MaxLease/time.Microsecond > math.MaxUint32 {
		return lockserver.Config{}, v.Errorf(KeyMaxLease, "%v does not fit the protocol's 32-bit µs lease field", c.Core.MaxLease)
	}
	var err error
	if c.Core.Quotas, err = getQuotas(v); err != nil {
		return lockserver.Config{}, err
	}
	if v.Bool(KeyRDMA) {
		c.RDMA.Locks, c.RDMA.Listen = v.Int(KeyRDMALocks), v.String(KeyRDMAListen)
		c.RDMA.Mode = v.String(KeyRDMAMode)
		c.RDMA.RW = rma.TableParams{Counters: v.Int(KeyRDMACounters), TL: [2]int{v.Int(KeyRDMATLMachine), v.Int(KeyRDMATLNode)},
			TR: v.Int(KeyRDMATR)}
	}
	if c.RackKey, err = config.RackKey(v, KeyRackKey, KeyRackKeyFile); err != nil {
		return lockserver.Config{}, err
	}
	c.Peers = lockserver.Peers{Switches: v.Strings(KeySwitches), Controllers: v.Strings(KeyControllers),
		RDMANodes: v.Strings(KeyRDMANodes)}
	for key, list := range map[string][]string{KeySwitches: c.Peers.Switches, KeyControllers: c.Peers.Controllers,
		KeyRDMANodes: c.Peers.RDMANodes} {
		if err := srvcore.ParsePeers(key, list); err != nil {
			return lockserver.Config{}, v.Errorf(key, "%v", err)
		}
	}
	if c.StateFile = v.String(KeyStateFile); c.StateFile == "" {
		c.StateFile = DefaultStateFile(c.Listen)
	}
	c.InitState, c.UnsafeSkipRestartGrace = v.Bool(KeyInitState), v.Bool(KeySkipRestartGrace)
	c.Standby, c.ControllerLease = v.Bool(KeyStandby), v.Duration(KeyControllerLease)
	c.AcceptBatch = v.Bool(KeyAcceptBatch)
	if c.TakeoverEpoch = v.Uint(KeyTakeoverEpoch); c.TakeoverEpoch >= wire.MaxEpoch {
		return lockserver.Config{}, v.Errorf(KeyTakeoverEpoch, "%d: must be below %d", c.TakeoverEpoch, uint64(wire.MaxEpoch))
	}
	if err := c.Validate(); err != nil {
		return lockserver.Config{}, fmt.Errorf("config: %w", err)
	}
	if _, err := lockcore.New(c.Core); err != nil {
		return lockserver.Config{}, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// ParseConfig reads a config file's content in format ("yaml", "toml", "json") over the
// defaults, strictly, without environment or flags.
func ParseConfig(data []byte, format string) (lockserver.Config, error) {
	v, err := ConfigSchema().LoadBytes(data, format)
	if err != nil {
		return lockserver.Config{}, err
	}
	return ConfigFromValues(v)
}

// getQuotas reads the per-tenant quotas: a section from tenant id to {max_outstanding, max_rate}.
func getQuotas(v *config.Values) (map[uint16]lockcore.Quota, error) {
	m := v.Table(KeyQuotas)
	if m == nil {
		return nil, nil
	}
	qs := make(map[uint16]lockcore.Quota, len(m))
	for k, val := range m {
		t, err := strconv.ParseUint(k, 10, 16)
		if err != nil {
			return nil, v.Errorf(KeyQuotas, "tenant %q is not a 16-bit number", k)
		}
		sub, ok := val.(map[string]any)
		if !ok {
			return nil, v.Errorf(KeyQuotas+"."+k, "want a section {max_outstanding, max_rate}, got %v", val)
		}
		var q lockcore.Quota
		for sk, sval := range sub {
			var dst *int
			switch sk {
			case "max_outstanding":
				dst = &q.MaxOutstanding
			case "max_rate":
				dst = &q.MaxRate
			default:
				return nil, v.Errorf(KeyQuotas+"."+k, "unknown key %s (want max_outstanding, max_rate)", sk)
			}
			n, ok := wholeInt(sval)
			if !ok {
				return nil, v.Errorf(KeyQuotas+"."+k+"."+sk, "%v is not an integer", sval)
			}
			if n < 0 {
				return nil, v.Errorf(KeyQuotas+"."+k+"."+sk, "%d: must not be negative", n)
			}
			*dst = n
		}
		qs[uint16(t)] = q
	}
	return qs, nil
}

func wholeInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, x <= math.MaxInt32
	case int64:
		return int(x), x >= math.MinInt32 && x <= math.MaxInt32
	case float64:
		return int(x), x == math.Trunc(x) && x >= math.MinInt32 && x <= math.MaxInt32
	}
	return 0, false
}
