package lockserver

import (
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/lockcore"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, format, text string
		check              func(t *testing.T, c Config)
		err                string
	}{
		{name: "empty", format: "yaml", text: "", check: func(t *testing.T, c Config) {
			if c.Listen != "0.0.0.0:8888" || c.Core.DefaultLease != 10*time.Second || c.Core.Priorities != 8 {
				t.Fatalf("defaults not applied: %+v", c)
			}
		}},
		{name: "full yaml", format: "yaml", text: `
listen: 127.0.0.1:9000
shards: 3
batch: 32
sweep_interval: 5ms
takeover_grace: 2s
lease: {default: 250ms, max: 1s}
priorities: 4
max_waiters: 100
quota: {default: {max_outstanding: 50}}
quotas:
  7: {max_outstanding: 2, max_rate: 1000}
`, check: func(t *testing.T, c Config) {
			want := lockcore.Quota{MaxOutstanding: 2, MaxRate: 1000}
			if c.Listen != "127.0.0.1:9000" || c.Shards != 3 || c.Batch != 32 || c.SweepInterval != 5*time.Millisecond ||
				c.TakeoverGrace != 2*time.Second || c.Core.DefaultLease != 250*time.Millisecond ||
				c.Core.MaxLease != time.Second || c.Core.Priorities != 4 || c.Core.MaxWaiters != 100 ||
				c.Core.DefaultQuota.MaxOutstanding != 50 || c.Core.Quotas[7] != want {
				t.Fatalf("parsed %+v", c)
			}
		}},
		{name: "toml", format: "toml", text: "shards = 2\n[lease]\ndefault = \"1s\"\n", check: func(t *testing.T, c Config) {
			if c.Shards != 2 || c.Core.DefaultLease != time.Second {
				t.Fatalf("parsed %+v", c)
			}
		}},
		{name: "rdma", format: "yaml", text: "rdma: {enabled: true, locks: 16, listen: 127.0.0.1:9999}",
			check: func(t *testing.T, c Config) {
				if c.RDMA.Locks != 16 || c.RDMA.Listen != "127.0.0.1:9999" || c.RDMA.MaxPeers != 1024 {
					t.Fatalf("parsed %+v", c.RDMA)
				}
			}},
		{name: "rdma off", format: "yaml", text: "rdma: {locks: 16}", check: func(t *testing.T, c Config) {
			if c.RDMA.Locks != 0 {
				t.Fatalf("rdma tier configured without rdma.enabled: %+v", c.RDMA)
			}
		}},
		{name: "rdma no locks", format: "yaml", text: "rdma: {enabled: true, locks: 0}", err: "rdma.locks"},
		{name: "rdma too many", format: "yaml", text: "rdma: {enabled: true, locks: 2000000}", err: "rdma locks"},
		{name: "bad duration", format: "yaml", text: "lease: {default: soon}", err: "lease.default"},
		{name: "bad int", format: "yaml", text: "shards: many", err: "shards"},
		{name: "lease order", format: "yaml", text: "lease: {default: 2m, max: 1m}", err: "max lease"},
		{name: "bad tenant", format: "yaml", text: "quotas: {x: {max_rate: 1}}", err: "tenant"},
		{name: "unknown quota key", format: "yaml", text: "quotas: {1: {rate: 1}}", err: "unknown key"},
		{name: "negative quota", format: "yaml", text: "quotas: {1: {max_rate: -1}}", err: "negative"},
		{name: "syntax", format: "yaml", text: "listen: [", err: "config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.text), tc.format)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.err)
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

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("NETLOCK_SHARDS", "5")
	t.Setenv("NETLOCK_LEASE_DEFAULT", "3s")
	c, err := ConfigFromViper(NewViper())
	if err != nil {
		t.Fatal(err)
	}
	if c.Shards != 5 || c.Core.DefaultLease != 3*time.Second {
		t.Fatalf("env not applied: shards %d lease %v", c.Shards, c.Core.DefaultLease)
	}
}

// FuzzParseConfig: any file content yields a valid Config or an error, never a panic.
func FuzzParseConfig(f *testing.F) {
	f.Add("listen: 127.0.0.1:1\nshards: 2\n", "yaml")
	f.Add("quotas: {3: {max_outstanding: 1, max_rate: 2}}", "yaml")
	f.Add("shards = 1e9", "toml")
	f.Add(`{"lease": {"default": "1h"}}`, "json")
	f.Add("batch: -3", "yaml")
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
		if err := c.validate(); err != nil {
			t.Fatalf("ParseConfig returned an invalid config: %v", err)
		}
		if _, err := lockcore.New(c.Core); err != nil {
			t.Fatalf("ParseConfig returned an invalid core config: %v", err)
		}
	})
}
