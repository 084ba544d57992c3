package citron

import (
	"fmt"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Negative controls: each breaks one mechanism the safety argument needs; the checker must
// catch it (a violation in at least one of a few seeds), and the same workloads with the
// mechanism intact must stay clean (checked by TestRandomWorkloadsSim and below).
func TestNegativeControls(t *testing.T) {
	mixed := workload{clients: 10, ops: 60, maxLen: 1024, hot: 2048, space: 4096, k: 2}
	hotLeaf := workload{clients: 8, ops: 80, maxLen: 8, hot: 64, space: 4096, k: 2}
	tests := []struct {
		name   string
		w      workload
		broken func(*Config)
		jitter int64
		cost   sim.Cost
	}{
		{"skip-ancestor-wait", mixed, func(c *Config) { c.UnsafeSkipAncestorWait = true }, 0, sim.Cost{}},
		{"unmasked-leaf-release", hotLeaf, func(c *Config) { c.UnsafeUnmaskedLeafRelease = true }, 0, sim.Cost{}},
		{"skip-descendant-check", mixed, func(c *Config) { c.UnsafeSkipDescendantCheck = true }, 0, sim.Cost{}},
		// Late notifications: 2% of the verbs take 40us longer (TWait 15us). Without the abort
		// rule a checker reads its descendants before a notification lands.
		{"no-abort", mixed, func(c *Config) { c.UnsafeNoAbort = true }, 0, sim.Cost{SlowVerbProb: 0.02, SlowVerbDelay: 40000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, broken := range []bool{true, false} {
				found, grants := 0, 0
				var first string
				for seed := int64(1); seed <= 6 && (found == 0 || !broken); seed++ {
					w := tc.w
					w.seed = seed
					w.csPause = func(ep verbs.Endpoint) { verbs.Spend(ep, 5000) }
					cfg := Config{Space: 4096, M: 2}
					if broken {
						tc.broken(&cfg)
					}
					res := runSim(t, w, simSetup{cfg: cfg, data: true, cost: tc.cost, jitter: tc.jitter})
					grants += res.o.grants
					if res.o.violations > 0 || res.bad > 0 {
						found++
						if first == "" {
							first = fmt.Sprintf("seed %d: %d violations, %d bad units: %s", seed, res.o.violations, res.bad, res.o.first)
						}
					}
					if !broken && res.finished != w.clients {
						t.Fatalf("intact, seed %d: %d of %d clients finished", seed, res.finished, w.clients)
					}
				}
				switch {
				case broken && found == 0:
					t.Fatalf("the broken variant was not caught in %d grants", grants)
				case !broken && found > 0:
					t.Fatalf("the intact protocol failed: %s", first)
				case broken:
					t.Logf("caught: %s", first)
				}
			}
		})
	}
	_ = time.Second
}
