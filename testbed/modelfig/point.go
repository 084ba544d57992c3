// Package modelfig regenerates the NetLock paper's figures (SIGCOMM'20, section 6: Figures 10,
// 13, 14 and 15) on netlock: each figure is a list of points, each point one rack run, on the
// rack model in virtual time (testbed/rackmodel) at the paper's scale. Results are ratios against a
// reference measured in the same sweep, written as JSON, Markdown and PNG plots (gonum/plot).
package modelfig

import (
	"context"
	"fmt"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/internal/latency"
	"github.com/netlock-go/netlock/testbed/rackmodel"
)

// Spec is one run of the rack model: a warm-up with every lock on the servers in which the
// control plane measures each lock's demand (r_i, c_i), the allocation of Slots switch slots by
// Strategy, a settling period, then the measured window.
type Spec struct {
	Params   rackmodel.Params `json:"-"`
	Phase    string           `json:"phase"`
	Seed     uint64           `json:"seed"`
	Strategy alloc.Strategy   `json:"-"`
	Slots    int              `json:"slots"`
	// BothLevels: rackmodel.AllocSpec.BothLevels.
	BothLevels bool          `json:"both_levels"`
	Warmup     time.Duration `json:"warmup_ns"`
	Settle     time.Duration `json:"settle_ns"`
	Window     time.Duration `json:"window_ns"`
	// Label names the point in tables and plots (a curve); Variant the rack it runs on when a
	// figure has several.
	Label   string `json:"label"`
	Variant string `json:"variant,omitempty"`
}

func (s *Spec) defaults() {
	if s.Warmup == 0 {
		s.Warmup = 20 * time.Millisecond
	}
	if s.Settle == 0 {
		s.Settle = 2 * time.Millisecond
	}
	if s.Window == 0 {
		s.Window = 10 * time.Millisecond
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
}

// Result is one run's outcome. Rates are per second of virtual time over the window.
type Result struct {
	Spec
	StrategyName string               `json:"strategy"`
	ThinkTime    time.Duration        `json:"think_time_ns"`
	ThinkEach    bool                 `json:"think_after_every_grant"`
	ServerCores  int                  `json:"server_cores"`
	Workers      int                  `json:"workers_per_client"`
	Alloc        rackmodel.Allocation `json:"allocation"`
	Counters     rackmodel.Counters   `json:"counters"` // the window's
	// RPS is lock requests granted per second (the paper's MRPS, as observed by clients),
	// SwitchRPS and ServerRPS the grants made by the switch and by the servers; TPS committed
	// transactions per second.
	RPS, SwitchRPS, ServerRPS, TPS float64
	Acquire, Txn                   latency.Latency
	// Violations of exclusion and fencing over the whole run (the online checker): must be 0.
	Violations int `json:"violations"`
	// Wall is the real time the run took; Events the events simulated.
	Wall time.Duration `json:"wall_ns"`
}

// Txns returns the transactions committed in the window.
func (r Result) Txns() uint64 { return r.Counters.Txns }

// Run runs one point.
func Run(ctx context.Context, s Spec) (Result, error) {
	s.defaults()
	t0 := time.Now()
	res := Result{Spec: s, StrategyName: s.Strategy.String()}
	r, err := rackmodel.New(rackmodel.Config{Params: s.Params, Phase: s.Phase, Seed: s.Seed})
	if err != nil {
		return res, err
	}
	p := r.Params()
	res.ThinkTime, res.ThinkEach, res.ServerCores, res.Workers = p.ThinkTime, p.ThinkEachLock, p.ServerCores, p.Workers
	step := func(d time.Duration) error {
		// Run in slices so that a canceled context stops a long run.
		for end := r.Now() + d; r.Now() < end; {
			if err := ctx.Err(); err != nil {
				return err
			}
			r.Run(min(time.Millisecond, end-r.Now()))
		}
		return nil
	}
	r.MeasureDemand()
	r.Start()
	if err := step(s.Warmup); err != nil {
		return res, err
	}
	if err := r.Quiesce(time.Second); err != nil {
		return res, err
	}
	if res.Alloc, err = r.Allocate(rackmodel.AllocSpec{Strategy: s.Strategy, Slots: s.Slots, Seed: s.Seed,
		BothLevels: s.BothLevels}); err != nil {
		return res, err
	}
	r.Start()
	if err := step(s.Settle); err != nil {
		return res, err
	}
	c0 := r.Counters()
	r.ResetLatency()
	if err := step(s.Window); err != nil {
		return res, err
	}
	c := r.Counters().Sub(c0)
	secs := s.Window.Seconds()
	res.Counters = c
	res.RPS, res.TPS = float64(c.Granted)/secs, float64(c.Txns)/secs
	res.SwitchRPS, res.ServerRPS = float64(c.SwitchGrants)/secs, float64(c.ServerGrants)/secs
	res.Acquire, res.Txn = r.Latency()
	res.Violations = len(r.Violations())
	res.Wall = time.Since(t0)
	if res.Violations > 0 {
		return res, fmt.Errorf("experiment: %s: %d violations of exclusion or fencing, first %v", s.Label, res.Violations,
			r.Violations()[0])
	}
	return res, nil
}
