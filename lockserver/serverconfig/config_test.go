package serverconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/rdma/rma"

	"github.com/netlock-go/netlock/lockcore"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, format, text string
		check              func(t *testing.T, c lockserver.Config)
		err                string
	}{
		{name: "empty", format: "yaml", text: "", check: func(t *testing.T, c lockserver.Config) {
			if c.Listen != "0.0.0.0:8888" || c.Core.DefaultLease != 10*time.Second || c.Core.Priorities != 8 ||
				c.StateFile != DefaultStateFile("0.0.0.0:8888") || c.Core.MaxBuffered != 4096 || c.Core.IdleRetention != time.Second ||
				c.AcceptBatch {
				t.Fatalf("defaults not applied: %+v", c)
			}
		}},
		{name: "full yaml", format: "yaml", text: `
listen: 127.0.0.1:9000
shards: 3
batch: 32
accept_batch: true
sweep_interval: 5ms
takeover_grace: 2s
takeover_epoch: 7
lease: {default: 250ms, max: 1s}
priorities: 4
max_waiters: 100
max_buffered: 10
idle_retention: 3s
quota: {default: {max_outstanding: 50}}
quotas:
  7: {max_outstanding: 2, max_rate: 1000}
rack_key: "6e65746c6f636b21"
peers:
  switches: [10.0.0.1]
  controllers: ["10.0.1.0/24", "127.0.0.1:9559"]
state_file: /tmp/x.state
`, check: func(t *testing.T, c lockserver.Config) {
			want := lockcore.Quota{MaxOutstanding: 2, MaxRate: 1000}
			if c.Listen != "127.0.0.1:9000" || c.Shards != 3 || c.Batch != 32 || c.SweepInterval != 5*time.Millisecond ||
				c.TakeoverGrace != 2*time.Second || c.Core.DefaultLease != 250*time.Millisecond ||
				c.Core.MaxLease != time.Second || c.Core.Priorities != 4 || c.Core.MaxWaiters != 100 ||
				c.Core.DefaultQuota.MaxOutstanding != 50 || c.Core.Quotas[7] != want || c.TakeoverEpoch != 7 ||
				c.Core.MaxBuffered != 10 || c.Core.IdleRetention != 3*time.Second || c.RackKey != 0x6e65746c6f636b21 ||
				len(c.Peers.Switches) != 1 || len(c.Peers.Controllers) != 2 || c.StateFile != "/tmp/x.state" ||
				!c.AcceptBatch {
				t.Fatalf("parsed %+v", c)
			}
		}},
		{name: "toml", format: "toml", text: "shards = 2\n[lease]\ndefault = \"1s\"\n", check: func(t *testing.T, c lockserver.Config) {
			if c.Shards != 2 || c.Core.DefaultLease != time.Second {
				t.Fatalf("parsed %+v", c)
			}
		}},
		{name: "json", format: "json", text: `{"shards": 2, "quotas": {"3": {"max_rate": 9}}}`, check: func(t *testing.T, c lockserver.Config) {
			if c.Shards != 2 || c.Core.Quotas[3].MaxRate != 9 {
				t.Fatalf("parsed %+v", c)
			}
		}},
		{name: "rdma", format: "yaml", text: "rdma: {enabled: true, locks: 16, listen: 127.0.0.1:9999}",
			check: func(t *testing.T, c lockserver.Config) {
				if c.RDMA.Locks != 16 || c.RDMA.Listen != "127.0.0.1:9999" || c.RDMA.MaxPeers != 1024 {
					t.Fatalf("parsed %+v", c.RDMA)
				}
			}},
		{name: "rdma off", format: "yaml", text: "rdma: {locks: 16}", check: func(t *testing.T, c lockserver.Config) {
			if c.RDMA.Locks != 0 {
				t.Fatalf("rdma tier configured without rdma.enabled: %+v", c.RDMA)
			}
		}},
		// Unknown keys.
		{name: "typo", format: "yaml", text: "lese: 10s", err: "unknown key lese (did you mean lease?)"},
		{name: "typo in section", format: "yaml", text: "lease: {defualt: 1s}", err: "unknown key lease.defualt (did you mean lease.default?)"},
		{name: "unknown far", format: "yaml", text: "colour: blue", err: "unknown key colour"},
		{name: "unknown quota key", format: "yaml", text: "quotas: {1: {rate: 1}}", err: "key quotas.1: unknown key rate"},
		// Wrong types.
		{name: "scalar for a section", format: "yaml", text: `lease: "abc"`, err: "key lease: want a section with lease.default, lease.max"},
		{name: "bad duration", format: "yaml", text: "lease: {default: abc}", err: `key lease.default: "abc" is not a duration`},
		{name: "number for a duration", format: "yaml", text: "sweep_interval: 5", err: "key sweep_interval: 5 is not a duration"},
		{name: "bad int", format: "yaml", text: "shards: many", err: `key shards: "many" is not an integer`},
		{name: "fraction", format: "json", text: `{"shards": 1.5}`, err: "key shards: 1.5 is not an integer"},
		{name: "bool", format: "yaml", text: "rdma: {enabled: yes please}", err: "key rdma.enabled"},
		{name: "string list", format: "yaml", text: "peers: {switches: 10.0.0.1}", err: "key peers.switches"},
		{name: "unquoted key", format: "yaml", text: "rack_key: 1234567812345678", err: "key rack_key: 1234567812345678 is not a string"},
		{name: "quota type", format: "yaml", text: "quotas: {1: {max_rate: lots}}", err: "key quotas.1.max_rate: lots is not an integer"},
		// Nonsensical values.
		{name: "zero lease", format: "yaml", text: "lease: {default: 0s}", err: "key lease.default: 0s: a lease must be at least 1µs"},
		{name: "negative lease", format: "yaml", text: "lease: {max: -1s}", err: "key lease.max"},
		{name: "lease order", format: "yaml", text: "lease: {default: 2m, max: 1m}", err: "key lease.max: 1m0s is below lease.default 2m0s"},
		{name: "zero sweep", format: "yaml", text: "sweep_interval: 0s", err: "key sweep_interval: 0s: must be positive"},
		{name: "negative grace", format: "yaml", text: "takeover_grace: -1s", err: "key takeover_grace"},
		{name: "priorities", format: "yaml", text: "priorities: 0", err: "key priorities: 0: must be in 1..16"},
		{name: "batch", format: "yaml", text: "batch: -3", err: "key batch"},
		{name: "rdma no locks", format: "yaml", text: "rdma: {enabled: true, locks: 0}", err: "key rdma.locks"},
		{name: "rdma too many", format: "yaml", text: "rdma: {enabled: true, locks: 2000000}", err: "key rdma.locks"},
		{name: "bad tenant", format: "yaml", text: "quotas: {x: {max_rate: 1}}", err: "tenant"},
		{name: "negative quota", format: "yaml", text: "quotas: {1: {max_rate: -1}}", err: "negative"},
		{name: "log level", format: "yaml", text: "log_level: loud", err: "key log_level"},
		{name: "bad peer", format: "yaml", text: "peers: {controllers: [nowhere]}", err: "key peers.controllers"},
		{name: "bad rack key", format: "yaml", text: `rack_key: "12"`, err: "key rack_key"},
		{name: "both keys", format: "yaml", text: "rack_key: \"6e65746c6f636b21\"\nrack_key_file: /k", err: "not both"},
		{name: "huge epoch", format: "yaml", text: "takeover_epoch: 99999999999", err: "key takeover_epoch"},
		{name: "syntax", format: "yaml", text: "listen: [", err: "config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.text), tc.format)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// TestLoadConfigNamesFileAndEnv: errors name the file or the environment variable; the
// environment overrides the file and still works.
func TestLoadConfigNamesFileAndEnv(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(f, []byte("shards: 3\nlese: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ConfigSchema().Load(f, nil); err == nil || !strings.Contains(err.Error(), "config file "+f+": unknown key lese") {
		t.Fatalf("error %v does not name the file and the key", err)
	}
	if err := os.WriteFile(f, []byte("shards: 3\nlease: {default: 2s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NETLOCK_SHARDS", "5")
	t.Setenv("NETLOCK_LEASE_MAX", "3s")
	v, err := ConfigSchema().Load(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ConfigFromValues(v)
	if err != nil {
		t.Fatal(err)
	}
	if c.Shards != 5 || c.Core.DefaultLease != 2*time.Second || c.Core.MaxLease != 3*time.Second {
		t.Fatalf("shards %d lease %v max %v", c.Shards, c.Core.DefaultLease, c.Core.MaxLease)
	}
	t.Setenv("NETLOCK_LEASE_MAX", "1s")
	v, err = ConfigSchema().Load(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConfigFromValues(v); err == nil || !strings.Contains(err.Error(), "environment NETLOCK_LEASE_MAX: key lease.max") {
		t.Fatalf("error %v does not name the environment variable", err)
	}
	t.Setenv("NETLOCK_SHARDS", "many")
	if _, err := ConfigSchema().Load(f, nil); err == nil || !strings.Contains(err.Error(), "environment NETLOCK_SHARDS: key shards") {
		t.Fatalf("error %v", err)
	}
}

// FuzzParseConfig: any file content yields a valid lockserver.Config or an error, never a panic.
func FuzzParseConfig(f *testing.F) {
	f.Add("listen: 127.0.0.1:1\nshards: 2\n", "yaml")
	f.Add("quotas: {3: {max_outstanding: 1, max_rate: 2}}", "yaml")
	f.Add("shards = 1e9", "toml")
	f.Add(`{"lease": {"default": "1h"}}`, "json")
	f.Add("batch: -3", "yaml")
	f.Add("lease: abc", "yaml")
	f.Fuzz(func(t *testing.T, text, format string) {
		switch format {
		case "yaml", "toml", "json":
		default:
			format = "yaml"
		}
		c, err := ParseConfig([]byte(text), format)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseConfig returned an invalid config: %v", err)
		}
		if _, err := lockcore.New(c.Core); err != nil {
			t.Fatalf("ParseConfig returned an invalid core config: %v", err)
		}
	})
}

func TestRDMARWConfig(t *testing.T) {
	c, err := ParseConfig([]byte("rdma: {enabled: true, locks: 16, mode: rw, counters: 4, tl_machine: 5, tl_node: 6, tr: 7}"), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.RDMA.Mode != lockserver.RDMAModeRW || c.RDMA.RW != (rma.TableParams{Counters: 4, TL: [2]int{5, 6}, TR: 7}) {
		t.Fatalf("parsed %+v", c.RDMA)
	}
	c, err = ParseConfig([]byte("rdma: {enabled: true, locks: 16}"), "yaml")
	if err != nil || c.RDMA.Mode != lockserver.RDMAModeALock {
		t.Fatalf("default mode: %+v, %v", c.RDMA, err)
	}
	for text, key := range map[string]string{
		"rdma: {enabled: true, mode: rwx}":     "rdma.mode",
		"rdma: {enabled: true, counters: 65}":  "rdma.counters",
		"rdma: {enabled: true, tr: 0}":         "rdma.tr",
		"rdma: {enabled: true, tl_node: true}": "rdma.tl_node",
		"rdma: {enabled: true, tl_rack: 3}":    "rdma.tl_rack",
	} {
		if _, err := ParseConfig([]byte(text), "yaml"); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v, want an error naming %s", text, err, key)
		}
	}
}

// TestBadRackKeyNotEchoed: a misspelt key in a file is reported without its text.
func TestBadRackKeyNotEchoed(t *testing.T) {
	if _, err := ParseConfig([]byte(`rack_key: "6e65746c6f636bZZ"`), "yaml"); err == nil ||
		strings.Contains(err.Error(), "6e65746c6f636b") {
		t.Fatalf("bad key error %v", err)
	}
}
