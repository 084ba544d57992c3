package testbed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/internal/latency"
	"github.com/netlock-go/netlock/testbed/history"
)

// NodeConfig configures one client node of a rack whose servers and switch run elsewhere (other
// processes, other hosts: the Mininet rack, `netlock loadgen`).
type NodeConfig struct {
	// Servers are the lock servers' addresses, server 1 first (lock l goes to l % len + 1).
	Servers []string
	// Switch is the switch's address, from which answers are accepted too ("" for none).
	Switch string
	// Node is this node's number (1..Nodes) and Nodes the rack's client nodes: TPC-C's warehouses
	// and the exclusive phase's private locks depend on them.
	Node, Nodes int
	// Workers per node (4), Duration of each phase (2s), Phases (DefaultPhases but the crash
	// phase, which needs a crashing node, and the quota phase, whose quotas the servers and the
	// controller would need), Lease (2s), ThinkTime, Seed (1).
	Workers   int
	Duration  time.Duration
	Phases    []string
	Lease     time.Duration
	ThinkTime time.Duration
	Seed      uint64
	// Local is the UDP address to bind ("0.0.0.0:0").
	Local string
	// Record keeps every acquisition's events (NodePhase.Events) for a history check across
	// nodes (their clocks must be one: the hosts of one machine).
	Record bool
	// PhaseDone, if set, is called after each phase with its number (from 1), the number of
	// phases and its result: progress for a person.
	PhaseDone func(i, n int, p NodePhase)
}

func (c *NodeConfig) validate() error {
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.Duration == 0 {
		c.Duration = 2 * time.Second
	}
	if len(c.Phases) == 0 {
		for _, p := range DefaultPhases {
			if p != PhaseCrash && p != PhaseQuota {
				c.Phases = append(c.Phases, p)
			}
		}
	}
	if c.Lease == 0 {
		c.Lease = 2 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Local == "" {
		c.Local = "0.0.0.0:0"
	}
	switch {
	case len(c.Servers) == 0:
		return errors.New("no servers")
	case c.Nodes < 1 || c.Nodes*10 > MaxWarehouses || c.Node < 1 || c.Node > c.Nodes:
		return fmt.Errorf("node %d of %d: want 1 <= node <= nodes <= %d", c.Node, c.Nodes, MaxWarehouses/10)
	case c.Workers < 1 || c.Workers > 256:
		return fmt.Errorf("workers %d: must be in 1..256", c.Workers)
	case c.Duration < 0 || c.Lease < 0 || c.ThinkTime < 0:
		return errors.New("duration, lease and think time must not be negative")
	}
	for _, p := range c.Phases {
		if p == PhaseCrash {
			return errors.New("the crash phase needs a crashing node: not available on one node")
		}
		if _, err := parsePhase(p, c.Nodes); err != nil {
			return err
		}
	}
	return nil
}

// NodePhase is one phase's outcome on one node.
type NodePhase struct {
	Name      string          `json:"name"`
	Duration  time.Duration   `json:"duration_ns"`
	Txns      uint64          `json:"txns"`
	LockOps   uint64          `json:"lock_acquires"`
	TxnRate   float64         `json:"txns_per_sec"`
	Latency   latency.Latency `json:"txn_latency"`
	Rejects   uint64          `json:"rejects"`
	Errors    uint64          `json:"errors"`
	LeaseLost uint64          `json:"lease_lost"`
	// FirstError is the first error Errors counted ("" when none).
	FirstError string `json:"first_error,omitempty"`
	Retransm   int64  `json:"retransmits"`
	// Events are the phase's history events (NodeConfig.Record).
	Events []history.Event `json:"events,omitempty"`
}

// NodeReport is a node's outcome.
type NodeReport struct {
	Node   int         `json:"node"`
	Phases []NodePhase `json:"phases"`
}

// RunNode runs the phases on one client node against servers elsewhere.
func RunNode(ctx context.Context, cfg NodeConfig) (NodeReport, error) {
	if err := cfg.validate(); err != nil {
		return NodeReport{}, fmt.Errorf("loadgen: %w", err)
	}
	cc := client.Config{Servers: cfg.Servers, Local: cfg.Local, Lease: cfg.Lease, ClientID: uint32(cfg.Node),
		RequestTimeout: clientRequestTimeout}
	if cfg.Switch != "" {
		cc.Switches = []string{cfg.Switch}
	}
	c, err := client.New(cc)
	if err != nil {
		return NodeReport{}, fmt.Errorf("loadgen: %w", err)
	}
	defer c.Close()
	rep := NodeReport{Node: cfg.Node}
	for i, name := range cfg.Phases {
		spec, _ := parsePhase(name, cfg.Nodes)
		var rec history.Recorder
		var from atomic.Int64
		from.Store(math.MinInt64) // every transaction counts
		var live phaseCounters
		before := c.Stats().Retransmits
		pctx, cancel := context.WithTimeout(ctx, cfg.Duration)
		stats := make([]*workerStats, cfg.Workers)
		var wg sync.WaitGroup
		start := time.Now()
		wls := make([]*Workload, cfg.Workers)
		for w := range cfg.Workers {
			wl, err := newWorkload(spec, (cfg.Node-1)*cfg.Workers+w, cfg.Seed<<32^uint64(i)<<24^uint64(cfg.Node-1)<<12^uint64(w))
			if err != nil {
				cancel()
				return NodeReport{}, fmt.Errorf("loadgen: phase %s: %w", name, err)
			}
			wls[w] = wl
		}
		for w := range cfg.Workers {
			stats[w] = &workerStats{class: spec.classOf((cfg.Node-1)*cfg.Workers+w, cfg.Nodes*cfg.Workers)}
			wk := &worker{c: c, rec: &rec, name: fmt.Sprintf("n%d.w%d", cfg.Node, w), think: cfg.ThinkTime, from: &from,
				ws: stats[w], live: &live, opts: spec.classOpts(stats[w].class)}
			wl := wls[w]
			wg.Add(1)
			go func() {
				defer wg.Done()
				wk.run(pctx, wl)
			}()
		}
		wg.Wait()
		cancel()
		p := NodePhase{Name: name, Duration: time.Since(start), Retransm: c.Stats().Retransmits - before}
		var hist latency.Histogram
		for _, ws := range stats {
			hist.Merge(&ws.hist)
			p.Txns += ws.txns
			p.LockOps += ws.locks
			p.Rejects += ws.rejects
			p.Errors += ws.errs
			if ws.firstErr != nil && p.FirstError == "" {
				p.FirstError = ws.firstErr.Error()
			}
			p.LeaseLost += ws.lost
		}
		p.Latency = hist.Summary()
		p.TxnRate = float64(p.Txns) / p.Duration.Seconds()
		if cfg.Record {
			p.Events = rec.Events()
		}
		rep.Phases = append(rep.Phases, p)
		if cfg.PhaseDone != nil {
			cfg.PhaseDone(i+1, len(cfg.Phases), p)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return rep, nil
}
