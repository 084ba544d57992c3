// Package modelfig regenerates the NetLock paper's figures (SIGCOMM'20, section 6: Figures 8 to
// 11 and 13 to 15) on netlock: each figure is a list of points, each point one rack run, on the
// rack model in virtual time (testbed/rackmodel) at the paper's scale (Figures 10 and 11 also run
// the paper's baselines: NetChain on the rack model, rackmodel.NetChain, and the RDMA ones, rdma/dlm
// on rdma/sim, through testbed/tpcc/tpccbench). Results are
// ratios against a reference measured in the same sweep, written as JSON, Markdown and PNG plots
// (gonum/plot).
package modelfig

import (
	"context"
	"fmt"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/internal/latency"
	"github.com/netlock-go/netlock/testbed/rackmodel"
)

// Spec is one run of the rack model: a warm-up that starts with every lock on the servers, in
// which the controller (controlplane/ctlcore) runs an allocation period of Slots switch slots by
// Strategy after every AllocPeriod of the clients' work (each on the quiesced rack: the servers'
// statistics since the last period, Algorithm 3 or the random strawman, the moves; Warmup /
// AllocPeriod periods), a settling period, then the measured window.
type Spec struct {
	Params   rackmodel.Params `json:"-"`
	Phase    string           `json:"phase"`
	Seed     uint64           `json:"seed"`
	Strategy alloc.Strategy   `json:"-"`
	Slots    int              `json:"slots"`
	Warmup   time.Duration    `json:"warmup_ns"`
	// AllocPeriod is the time between the controller's allocation periods in the warm-up (the
	// first comes AllocPeriod after the start).
	AllocPeriod time.Duration `json:"alloc_period_ns"`
	Settle      time.Duration `json:"settle_ns"`
	Window      time.Duration `json:"window_ns"`
	// Label names the point in tables and plots (a curve); Variant the rack it runs on when a
	// figure has several.
	Label   string `json:"label"`
	Variant string `json:"variant,omitempty"`
	// NetChain, if set, runs the rack as the paper's NetChain baseline (rackmodel.Config.NetChain):
	// the warm-up has no allocation periods, Strategy and Slots are unused.
	NetChain *rackmodel.NetChain `json:"netchain,omitempty"`
	// ClientC, if set, makes a netlock rack's clients run NetLock's own client code's rule
	// (rackmodel.Config.ClientC).
	ClientC *client.NetChainPolicy `json:"client_c,omitempty"`
}

func (s *Spec) defaults() {
	if s.Warmup == 0 {
		s.Warmup = 20 * time.Millisecond
	}
	if s.AllocPeriod == 0 {
		s.AllocPeriod = time.Millisecond
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
	StrategyName string        `json:"strategy"`
	ThinkTime    time.Duration `json:"think_time_ns"`
	ThinkEach    bool          `json:"think_after_every_grant"`
	ServerCores  int           `json:"server_cores"`
	Workers      int           `json:"workers_per_client"`
	Clients      int           `json:"clients"`
	Servers      int           `json:"servers"`
	// Contention is the contention the controller assumed for a lock not seen deeper
	// (rackmodel.Params.Contention).
	Contention int `json:"default_contention"`
	// Alloc is the last allocation period of the warm-up; Periods the periods that ran.
	Alloc    rackmodel.Allocation `json:"allocation"`
	Periods  int                  `json:"periods"`
	Counters rackmodel.Counters   `json:"counters"` // the window's
	// RPS is lock requests granted per second (the paper's MRPS, as observed by clients),
	// SwitchRPS and ServerRPS the grants made by the switch and by the servers; TPS committed
	// transactions per second.
	RPS, SwitchRPS, ServerRPS, TPS float64
	Acquire, Txn                   latency.Latency
	// Violations of exclusion and fencing over the whole run (the online checker): must be 0.
	Violations int `json:"violations"`
	// Stalled is the client workers that committed no transaction in the window (a NetChain
	// client whose transactions are rolled back on every run).
	Stalled int `json:"stalled_workers"`
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
	r, err := rackmodel.New(rackmodel.Config{Params: s.Params, Phase: s.Phase, Seed: s.Seed,
		Alloc: rackmodel.AllocSpec{Strategy: s.Strategy, Slots: s.Slots, Seed: s.Seed}, NetChain: s.NetChain, ClientC: s.ClientC})
	if err != nil {
		return res, err
	}
	p := r.Params()
	res.ThinkTime, res.ThinkEach, res.ServerCores, res.Workers = p.ThinkTime, p.ThinkEachLock, p.ServerCores, p.Workers
	res.Clients, res.Servers, res.Contention = p.Clients, p.Servers, p.Contention
	r.Start()
	if s.NetChain != nil {
		// No controller, nothing to allocate: the warm-up is the clients' work alone.
		if err := step(ctx, r, s.Warmup); err != nil {
			return res, err
		}
	} else if res.Alloc, res.Periods, err = allocating(ctx, r, s.Warmup, s.AllocPeriod); err != nil {
		return res, err
	}
	if err := step(ctx, r, s.Settle); err != nil {
		return res, err
	}
	c0 := r.Counters()
	w0 := make([]rackmodel.WorkerCounters, p.Clients*p.Workers)
	for i := range w0 {
		w0[i] = r.WorkerCounters(i)
	}
	r.ResetLatency()
	if err := step(ctx, r, s.Window); err != nil {
		return res, err
	}
	c := r.Counters().Sub(c0)
	for i := range w0 {
		if r.WorkerCounters(i).Sub(w0[i]).Txns == 0 {
			res.Stalled++
		}
	}
	secs := s.Window.Seconds()
	res.Counters = c
	res.RPS, res.TPS = float64(c.Granted)/secs, float64(c.Txns)/secs
	res.SwitchRPS, res.ServerRPS = float64(c.SwitchGrants)/secs, float64(c.ServerGrants)/secs
	res.Acquire, res.Txn = r.Latency()
	// Every grant ends (the online checker checks an interval once it has ended).
	if err := r.Quiesce(time.Second); err != nil {
		return res, err
	}
	res.Violations = len(r.Violations())
	res.Wall = time.Since(t0)
	if res.Violations > 0 {
		return res, fmt.Errorf("experiment: %s: %d violations of exclusion or fencing, first %v", s.Label, res.Violations,
			r.Violations()[0])
	}
	return res, nil
}

// step runs r for d of virtual time, in slices so that a canceled context stops a long run.
func step(ctx context.Context, r *rackmodel.Rack, d time.Duration) error {
	for end := r.Now() + d; r.Now() < end; {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.Run(min(time.Millisecond, end-r.Now()))
	}
	return nil
}

// allocating runs d / period allocation periods of the controller, each after period of the
// clients' work, on the quiesced rack; it returns the last period's allocation and the number of
// periods.
func allocating(ctx context.Context, r *rackmodel.Rack, d, period time.Duration) (rackmodel.Allocation, int, error) {
	var a rackmodel.Allocation
	n := int(d / period)
	r.Note("allocation periods: %d, one after every %v of the clients' work, each on the quiesced rack", n, period)
	for range n {
		if err := step(ctx, r, period); err != nil {
			return a, 0, err
		}
		if err := r.Quiesce(time.Second); err != nil {
			return a, 0, err
		}
		var err error
		if a, err = r.Allocate(time.Second); err != nil {
			return a, 0, err
		}
		r.Start()
	}
	return a, n, nil
}
