package modelfig

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/rackmodel"
	"github.com/netlock-go/netlock/testbed/tpcc"
	"github.com/netlock-go/netlock/testbed/tpcc/tpccbench"
)

// Options are what every figure shares.
type Options struct {
	// Params is the rack (zero fields: rackmodel.PaperParams).
	Params rackmodel.Params
	// Seed seeds the workload.
	Seed uint64
	// Quick runs a smaller sweep with shorter windows (for tests and a first look).
	Quick bool
	// Warmup, AllocPeriod, Settle and Window override the durations of every point when set.
	Warmup, AllocPeriod, Settle, Window time.Duration
}

func (o *Options) fill() { o.Params = o.Params.WithDefaults() }

func (o Options) spec(s Spec) Spec {
	if s.Seed == 0 {
		s.Seed = o.Seed
	}
	if o.Quick {
		s.Warmup, s.Settle, s.Window = 4*time.Millisecond, time.Millisecond, 2*time.Millisecond
	}
	if o.Warmup > 0 {
		s.Warmup = o.Warmup
	}
	if o.AllocPeriod > 0 {
		s.AllocPeriod = o.AllocPeriod
	}
	if o.Settle > 0 {
		s.Settle = o.Settle
	}
	if o.Window > 0 {
		s.Window = o.Window
	}
	return s
}

// Figure is a sweep: its points and, once run, their results.
type Figure struct {
	Name    string   `json:"name"`
	Title   string   `json:"title"`
	Specs   []Spec   `json:"-"`
	Results []Result `json:"results"`
	// Params is the rack every point starts from (a point may change one parameter: its label
	// says which).
	Params rackmodel.Params `json:"params"`
	// Timelines are the runs of a figure over time (Figure 15), instead of Specs and Results.
	Timelines []Timeline `json:"timelines,omitempty"`
	// Policies are the runs of Figure 12 (fig12.go), instead of Specs and Results.
	Policies []PolicyRun `json:"policies,omitempty"`
	// Baseline, if set, runs the paper's RDMA baselines (rdma/dlm's TPC-C driver) after the
	// points; Baselines are its results (Figures 10 and 11).
	Baseline  *tpccbench.Options `json:"baseline_options,omitempty"`
	Baselines []tpccbench.Point  `json:"baselines,omitempty"`
}

// Fig13Slots is the switch memory of Figure 13: the paper reports "significant improvement with
// 5 x 10^3 memory slots" (section 6.4).
const Fig13Slots = 5000

// Fig13Variant is one rack of Figure 13.
type Fig13Variant struct {
	Name        string
	ServerCores int
	Workers     int
}

// Fig13Variants are the racks of Figure 13: the paper's (8-core servers, 8 workers per client),
// servers that saturate (1 core), and a heavier load (64 workers per client).
var Fig13Variants = []Fig13Variant{
	{"paper rack", 8, 8},
	{"1-core servers", 1, 8},
	{"64 workers/client", 8, 64},
}

// Fig13 is the paper's Figure 13 (knapsack vs random allocation, TPC-C with ten warehouses per
// client, ten clients, two servers) at Fig13Slots slots, with every lock on the servers as the
// reference, for each of Fig13Variants.
func Fig13(o Options) *Figure {
	o.fill()
	f := &Figure{Name: "fig13", Title: "Figure 13: knapsack vs random allocation (TPC-C, 10 warehouses per client)",
		Params: o.Params}
	vs := Fig13Variants
	if o.Quick {
		vs = vs[:2]
	}
	slots := min(Fig13Slots, poolSlots(o.Params))
	for _, v := range vs {
		p := o.Params
		p.ServerCores, p.Workers = v.ServerCores, v.Workers
		for _, a := range []struct {
			s     alloc.Strategy
			slots int
			name  string
		}{{alloc.StrategyKnapsack, slots, "knapsack"}, {alloc.StrategyRandom, slots, "random"},
			{alloc.StrategyKnapsack, 0, "servers only"}} {
			f.Specs = append(f.Specs, o.spec(Spec{Params: p, Phase: testbed.PhaseTPCCLow, Strategy: a.s, Slots: a.slots,
				Variant: v.Name, Label: a.name + ", " + v.Name}))
		}
	}
	return f
}

// Fig14Slots are the switch memory sizes of Figure 14.
var Fig14Slots = []int{0, 250, 500, 1000, 2000, 3000, 5000, 10000, 20000, 30000}

// Think is a think time: once per transaction, or after every grant (rackmodel.Params.ThinkEachLock).
type Think struct {
	Time time.Duration
	Each bool
}

func (t Think) String() string {
	if t.Each && t.Time > 0 {
		return fmt.Sprintf("think %v after every grant", t.Time)
	}
	return fmt.Sprintf("think %v", t.Time)
}

// Fig14Think are its think times: the paper's panel (a) ranges from 0 to 100µs; 100µs after every
// grant is the reading its numbers fit (rackmodel.Params.ThinkEachLock).
var Fig14Think = []Think{{0, false}, {10 * time.Microsecond, false}, {100 * time.Microsecond, false},
	{100 * time.Microsecond, true}}

// Fig14 is the paper's Figure 14: throughput against switch slots, for each think time, with the
// knapsack and the random allocation (TPC-C, ten warehouses per client).
func Fig14(o Options) *Figure {
	o.fill()
	f := &Figure{Name: "fig14", Title: "Figure 14: throughput against switch memory, by think time and allocation",
		Params: o.Params}
	slots, thinks := Fig14Slots, Fig14Think
	if o.Quick {
		slots, thinks = []int{0, 1000, 10000}, []Think{{0, false}, {100 * time.Microsecond, true}}
	}
	slots = slices.DeleteFunc(slices.Clone(slots), func(n int) bool { return n > poolSlots(o.Params) })
	for _, th := range thinks {
		p := o.Params
		p.ThinkTime, p.ThinkEachLock = th.Time, th.Each
		for _, s := range []alloc.Strategy{alloc.StrategyKnapsack, alloc.StrategyRandom} {
			for _, n := range slots {
				f.Specs = append(f.Specs, o.spec(Spec{Params: p, Phase: testbed.PhaseTPCCLow, Strategy: s, Slots: n,
					Variant: th.String(), Label: fmt.Sprintf("%s, %s", s, th)}))
			}
		}
	}
	return f
}

// Fig10 is the paper's Figure 10 (ten clients, two lock servers): the TPC-C rack with the hot
// locks in the switch (knapsack over the whole pool but the controller's staging slots) against
// the same rack with every lock on the servers and against the paper's baselines, NetChain (the
// same rack with p4/netchain/netchain.p4 as the switch and no servers, rackmodel.NetChain, a rack
// per client rule for rejects, Fig10NetChains), DSLR and DrTM (rdma/dlm on rdma/sim,
// FigBaselines), at high contention (one warehouse per client) and low (ten); and NetLock with
// NetLock's own client code, client.c (Fig10NetlockClientCs), to set against NetChain with it.
func Fig10(o Options) *Figure {
	o.fill()
	return tpccVersus(o, "fig10", "Figure 10: NetLock vs NetChain, DSLR and DrTM (TPC-C, ten clients, two lock servers)", o.Params)
}

// Fig11 is the paper's Figure 11: Figure 10 on six client machines and six lock servers.
func Fig11(o Options) *Figure {
	o.fill()
	p := o.Params
	p.Clients, p.Servers = 6, 6
	return tpccVersus(o, "fig11", "Figure 11: NetLock vs NetChain, DSLR and DrTM (TPC-C, six clients, six lock servers)", p)
}

func tpccVersus(o Options, name, title string, p rackmodel.Params) *Figure {
	f := &Figure{Name: name, Title: title, Params: p}
	pool := poolSlots(p)
	for _, ph := range []string{testbed.PhaseTPCCHigh, testbed.PhaseTPCCLow} {
		f.Specs = append(f.Specs,
			o.spec(Spec{Params: p, Phase: ph, Strategy: alloc.StrategyKnapsack, Slots: pool, Label: ph + ", " + Fig10Netlock}),
			o.spec(Spec{Params: p, Phase: ph, Strategy: alloc.StrategyKnapsack, Slots: 0, Label: ph + ", " + Fig10Servers}))
		for _, v := range Fig10NetlockClientCs {
			f.Specs = append(f.Specs, o.spec(Spec{Params: p, Phase: ph, Strategy: alloc.StrategyKnapsack, Slots: pool,
				ClientC: &v.Policy, Label: ph + ", " + v.Label}))
		}
		for _, nc := range Fig10NetChains {
			f.Specs = append(f.Specs, o.spec(Spec{Params: p, Phase: ph, NetChain: &rackmodel.NetChain{Policy: nc.Policy},
				Label: ph + ", " + nc.Label}))
		}
	}
	f.Baseline = FigBaselines(o, name, p)
	return f
}

// FigBaselines are the options of rdma/dlm's TPC-C driver (tpccbench.Run) that run DSLR and
// DrTM on the rack model's workload and shape: p's client machines and lock servers, p.Workers
// threads per client machine, one and ten warehouses per client machine (testbed's tpcc-high and
// tpcc-low), the same TPC-C profile (the specification's) and run seed, locks taken in ascending
// order (the rack's clients order them: client.OrderLocks), Stock-Level's reads dropped (the
// rack's clients take none), p.ThinkTime held after the last grant, on dlm.ConnectX3's fabric.
// Each point runs 2 ms then measures 20 ms of virtual time (Quick: 0.2 and 1 ms).
func FigBaselines(o Options, name string, p rackmodel.Params) *tpccbench.Options {
	b := &tpccbench.Options{Algs: []string{"dslr", "drtm"},
		Figures: []tpccbench.Figure{{Name: name, Machines: p.Clients, Servers: p.Servers}},
		Profile: tpcc.Spec, Orders: []tpcc.Order{tpcc.Ordered}, PerNode: []int{1, 10},
		Per: []string{tpccbench.PerClient}, Threads: []int{p.Workers}, Hold: int64(p.ThinkTime),
		Seed: int64(max(o.Seed, 1)), NoReads: true}
	if o.Quick {
		b.Warmup, b.Duration = 200_000, 1_000_000
	}
	return b
}

// poolSlots is the switch memory the controller may allocate: the pool less its two staging
// slots per server (ctlcore).
func poolSlots(p rackmodel.Params) int { return p.Sizing.Slots() - 2*p.Servers }

// The racks of Figure 10.
const (
	Fig10Netlock  = "netlock"
	Fig10Servers  = "servers only"
	Fig10NetChain = "netchain"
	// Fig10NetChainRollback is NetChain with NetLock's own client code's rule for rejects
	// (client.NetChainRollback) at its default timeout_slot (400 µs), a lock at a time as the
	// rack's NetLock clients; Fig10NetChainClientC and Fig10NetChainClientC1ms are that client as
	// written (every acquire of a run in one burst, client.NetChainClientC) at 400 µs and at the
	// 1000 µs its authors' console.py passes to the NetChain runs of Figures 10 and 11.
	Fig10NetChainRollback   = "netchain rollback"
	Fig10NetChainClientC    = "netchain client.c"
	Fig10NetChainClientC1ms = "netchain client.c 1ms"
	// Fig10NetlockClientC and Fig10NetlockClientC2ms are NetLock's rack with client.c's clients
	// (Fig10NetlockClientCs).
	Fig10NetlockClientC    = "netlock client.c"
	Fig10NetlockClientC2ms = "netlock client.c 2ms"
)

// Fig10NetlockClientCs are Figures 10 and 11's NetLock racks whose clients run NetLock's own
// client code (client.NetChainClientC: every acquire of a run in one burst, rolled back at the
// deadline), at its default timeout_slot (400 µs) and at the 2000 µs console.py passes to its
// Figure 10 NetLock run (its Figure 11 run passes none).
var Fig10NetlockClientCs = []struct {
	Label  string
	Policy client.NetChainPolicy
}{
	{Fig10NetlockClientC, client.NetChainClientC(client.DefaultNetChainTimeoutSlot)},
	{Fig10NetlockClientC2ms, client.NetChainClientC(2 * time.Millisecond)},
}

// Fig10NetChains are Figures 10 and 11's NetChain racks, one per client policy for rejects: our
// hold-and-backoff rule (Fig10NetChain) and the paper code's rollback rule, a lock at a time and
// in bursts, at two timeouts.
var Fig10NetChains = []struct {
	Label  string
	Policy client.NetChainPolicy
}{
	{Fig10NetChain, client.NetChainPolicy{}},
	{Fig10NetChainRollback, client.NetChainRollbackPolicy(client.DefaultNetChainTimeoutSlot)},
	{Fig10NetChainClientC, client.NetChainClientC(client.DefaultNetChainTimeoutSlot)},
	{Fig10NetChainClientC1ms, client.NetChainClientC(time.Millisecond)},
}

// Run runs every point of f in order, calling progress after each.
func (f *Figure) Run(ctx context.Context, progress func(done, total int, r Result)) error {
	if len(f.Timelines) > 0 {
		return f.runTimelines(ctx, progress)
	}
	if len(f.Policies) > 0 {
		return f.runPolicies(ctx, progress)
	}
	f.Results = f.Results[:0]
	for i, s := range f.Specs {
		r, err := Run(ctx, s)
		if err != nil {
			return fmt.Errorf("%s: point %d (%s): %w", f.Name, i, s.Label, err)
		}
		f.Results = append(f.Results, r)
		if progress != nil {
			progress(i+1, len(f.Specs), r)
		}
	}
	if f.Baseline == nil {
		return nil
	}
	ps, err := tpccbench.Run(ctx, *f.Baseline, nil)
	if err != nil {
		return fmt.Errorf("%s: baselines: %w", f.Name, err)
	}
	f.Baselines = ps
	return nil
}

// find returns the result with a label and slots (any, if slots < 0).
func (f *Figure) find(label string, slots int) *Result {
	for i := range f.Results {
		if r := &f.Results[i]; r.Label == label && (slots < 0 || r.Slots == slots) {
			return r
		}
	}
	return nil
}
