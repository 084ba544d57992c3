package lockserver

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/netlock-go/netlock/lockcore"
)

// Configuration keys, as written in a config file (YAML, TOML or JSON), as environment variables
// (NETLOCK_ prefix, dots become underscores: NETLOCK_LEASE_DEFAULT) and as command-line flags.
const (
	KeyListen        = "listen"
	KeyShards        = "shards"
	KeySockets       = "sockets"
	KeyBatch         = "batch"
	KeySweep         = "sweep_interval"
	KeyTakeover      = "takeover_grace"
	KeyLease         = "lease.default"
	KeyMaxLease      = "lease.max"
	KeyPriorities    = "priorities"
	KeyMaxWaiters    = "max_waiters"
	KeyDefaultOut    = "quota.default.max_outstanding"
	KeyDefaultRate   = "quota.default.max_rate"
	KeyQuotas        = "quotas"
	KeyMetricsListen = "metrics_listen"
	KeyLogLevel      = "log_level"
	// KeyRDMA enables the ALock table (RDMAConfig) of KeyRDMALocks locks, its emulated NIC
	// serving remote clients on KeyRDMAListen (TCP).
	KeyRDMA       = "rdma.enabled"
	KeyRDMALocks  = "rdma.locks"
	KeyRDMAListen = "rdma.listen"
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
)

// DefaultStateFile is the state file of netlock server when none is configured (in the working
// directory, as etcd keeps its data directory).
const DefaultStateFile = "netlock-server.state"

// NewViper returns a viper instance with netlock's defaults and environment binding.
func NewViper() *viper.Viper {
	v := viper.New()
	v.SetEnvPrefix("NETLOCK")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	v.SetDefault(KeyListen, "0.0.0.0:8888")
	v.SetDefault(KeyShards, 0)
	v.SetDefault(KeySockets, 0)
	v.SetDefault(KeyBatch, 64)
	v.SetDefault(KeySweep, "1ms")
	v.SetDefault(KeyTakeover, "0s")
	v.SetDefault(KeyLease, "10s")
	v.SetDefault(KeyMaxLease, "60s")
	v.SetDefault(KeyPriorities, 8)
	v.SetDefault(KeyMaxWaiters, 0)
	v.SetDefault(KeyDefaultOut, 0)
	v.SetDefault(KeyDefaultRate, 0)
	v.SetDefault(KeyMetricsListen, "")
	v.SetDefault(KeyLogLevel, "info")
	v.SetDefault(KeyRDMA, false)
	v.SetDefault(KeyRDMALocks, 1024)
	v.SetDefault(KeyRDMAListen, "127.0.0.1:0")
	v.SetDefault(KeyRackKey, "")
	v.SetDefault(KeyRackKeyFile, "")
	v.SetDefault(KeySwitches, []string{})
	v.SetDefault(KeyControllers, []string{})
	v.SetDefault(KeyRDMANodes, []string{})
	v.SetDefault(KeyStateFile, DefaultStateFile)
	v.SetDefault(KeyTakeoverEpoch, 0)
	return v
}

// ConfigFromViper builds a Config from v (file, env and flags already merged) and validates it,
// without binding any socket. Quotas are a map from tenant id to {max_outstanding, max_rate}.
func ConfigFromViper(v *viper.Viper) (Config, error) {
	var c Config
	var err error
	c.Listen = v.GetString(KeyListen)
	ints := []struct {
		key string
		dst *int
	}{{KeyShards, &c.Shards}, {KeySockets, &c.Sockets}, {KeyBatch, &c.Batch},
		{KeyPriorities, &c.Core.Priorities}, {KeyMaxWaiters, &c.Core.MaxWaiters},
		{KeyDefaultOut, &c.Core.DefaultQuota.MaxOutstanding}, {KeyDefaultRate, &c.Core.DefaultQuota.MaxRate}}
	for _, f := range ints {
		if *f.dst, err = getInt(v, f.key); err != nil {
			return Config{}, err
		}
	}
	durs := []struct {
		key string
		dst *time.Duration
	}{{KeySweep, &c.SweepInterval}, {KeyTakeover, &c.TakeoverGrace}, {KeyLease, &c.Core.DefaultLease},
		{KeyMaxLease, &c.Core.MaxLease}}
	for _, f := range durs {
		if *f.dst, err = getDuration(v, f.key); err != nil {
			return Config{}, err
		}
	}
	if c.Core.Quotas, err = getQuotas(v.Get(KeyQuotas)); err != nil {
		return Config{}, err
	}
	if c.Core.Priorities == 0 {
		return Config{}, fmt.Errorf("%s: must be at least 1", KeyPriorities)
	}
	if c.RackKey, err = getRackKey(v); err != nil {
		return Config{}, err
	}
	lists := []struct {
		key string
		dst *[]string
	}{{KeySwitches, &c.Peers.Switches}, {KeyControllers, &c.Peers.Controllers}, {KeyRDMANodes, &c.Peers.RDMANodes}}
	for _, f := range lists {
		if *f.dst, err = getStrings(v, f.key); err != nil {
			return Config{}, err
		}
	}
	c.StateFile = v.GetString(KeyStateFile)
	te, err := getInt(v, KeyTakeoverEpoch)
	if err != nil {
		return Config{}, err
	}
	if te < 0 {
		return Config{}, fmt.Errorf("%s: %d is negative", KeyTakeoverEpoch, te)
	}
	c.TakeoverEpoch = uint64(te)
	if v.GetBool(KeyRDMA) {
		if c.RDMA.Locks, err = getInt(v, KeyRDMALocks); err != nil {
			return Config{}, err
		}
		if c.RDMA.Locks < 1 {
			return Config{}, fmt.Errorf("%s: must be at least 1 with %s", KeyRDMALocks, KeyRDMA)
		}
		c.RDMA.Listen = v.GetString(KeyRDMAListen)
	}
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	if _, err := lockcore.New(c.Core); err != nil {
		return Config{}, err
	}
	return c, nil
}

// ParseConfig reads a config file's bytes in the given format ("yaml", "toml", "json") over the
// defaults, without environment or flags.
func ParseConfig(data []byte, format string) (Config, error) {
	v := viper.New()
	def := NewViper()
	for _, k := range def.AllKeys() {
		v.SetDefault(k, def.Get(k))
	}
	v.SetConfigType(format)
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return ConfigFromViper(v)
}

func getInt(v *viper.Viper, key string) (int, error) {
	switch x := v.Get(key).(type) {
	case int:
		return x, nil
	case int64:
		if x < math.MinInt32 || x > math.MaxInt32 {
			return 0, fmt.Errorf("%s: %d out of range", key, x)
		}
		return int(x), nil
	case uint64:
		if x > math.MaxInt32 {
			return 0, fmt.Errorf("%s: %d out of range", key, x)
		}
		return int(x), nil
	case float64:
		if x != math.Trunc(x) || x < math.MinInt32 || x > math.MaxInt32 {
			return 0, fmt.Errorf("%s: %v is not an integer", key, x)
		}
		return int(x), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not an integer", key, x)
		}
		return n, nil
	case nil:
		return 0, nil
	default:
		return 0, fmt.Errorf("%s: %v is not an integer", key, x)
	}
}

func getDuration(v *viper.Viper, key string) (time.Duration, error) {
	switch x := v.Get(key).(type) {
	case time.Duration:
		return x, nil
	case string:
		d, err := time.ParseDuration(strings.TrimSpace(x))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", key, err)
		}
		if d < 0 {
			return 0, fmt.Errorf("%s: %v is negative", key, d)
		}
		return d, nil
	case nil:
		return 0, nil
	default:
		return 0, fmt.Errorf("%s: %v is not a duration (write e.g. \"250ms\")", key, x)
	}
}

func getQuotas(raw any) (map[uint16]lockcore.Quota, error) {
	if raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a map from tenant id to {max_outstanding, max_rate}", KeyQuotas)
	}
	qs := make(map[uint16]lockcore.Quota, len(m))
	for k, val := range m {
		t, err := strconv.ParseUint(k, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("%s: tenant %q is not a 16-bit number", KeyQuotas, k)
		}
		sub, ok := val.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s.%s: want {max_outstanding, max_rate}", KeyQuotas, k)
		}
		sv := viper.New()
		for sk, sval := range sub {
			switch sk {
			case "max_outstanding", "max_rate":
				sv.Set(sk, sval)
			default:
				return nil, fmt.Errorf("%s.%s: unknown key %q", KeyQuotas, k, sk)
			}
		}
		var q lockcore.Quota
		if q.MaxOutstanding, err = getInt(sv, "max_outstanding"); err != nil {
			return nil, fmt.Errorf("%s.%s.%w", KeyQuotas, k, err)
		}
		if q.MaxRate, err = getInt(sv, "max_rate"); err != nil {
			return nil, fmt.Errorf("%s.%s.%w", KeyQuotas, k, err)
		}
		qs[uint16(t)] = q
	}
	return qs, nil
}

// getRackKey reads the rack key from KeyRackKey or the file named by KeyRackKeyFile.
func getRackKey(v *viper.Viper) (RackKey, error) {
	raw := v.Get(KeyRackKey)
	text, ok := raw.(string)
	if raw != nil && !ok {
		return 0, fmt.Errorf("%s: write the key as a quoted string of 16 hexadecimal digits", KeyRackKey)
	}
	file := v.GetString(KeyRackKeyFile)
	switch {
	case text != "" && file != "":
		return 0, fmt.Errorf("%s and %s: set one of them, not both", KeyRackKey, KeyRackKeyFile)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", KeyRackKeyFile, err)
		}
		k, err := ParseRackKey(string(b))
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", KeyRackKeyFile, file, err)
		}
		return k, nil
	case text != "":
		k, err := ParseRackKey(text)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", KeyRackKey, err)
		}
		return k, nil
	}
	return 0, nil
}

// getStrings reads a list of strings: a YAML/TOML/JSON list, or one comma-separated string (the
// environment's form).
func getStrings(v *viper.Viper, key string) ([]string, error) {
	switch x := v.Get(key).(type) {
	case nil:
		return nil, nil
	case string:
		var out []string
		for _, f := range strings.Split(x, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out, nil
	case []string:
		return x, nil
	case []any:
		out := make([]string, 0, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%d]: %v is not a string", key, i, e)
			}
			out = append(out, s)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%s: want a list of addresses", key)
	}
}
