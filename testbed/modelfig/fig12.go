package modelfig

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math/rand/v2"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/testbed/rackmodel"
	"github.com/netlock-go/netlock/wire"
)

// PolicyRun is one run of Figure 12 (NetLock's policies, section 6.3): two classes of client
// machines (tenants, each with a priority) on Locks exclusive locks, every lock in the switch.
// The first class runs alone for Alone, then the second joins for Together; throughput is counted
// per class in bins of Bin. The priorities are the switch's two levels (p4/netlock.p4), the
// quotas its tenant meters, which the controller (ctlcore.Config.Tenants) installs at bring-up.
type PolicyRun struct {
	Panel string `json:"panel"` // "a" (priorities) or "b" (isolation)
	Label string `json:"label"`
	// Classes: the first runs from the start, the second joins after Alone.
	Classes [2]PolicyClass `json:"classes"`
	Locks   int            `json:"locks"`
	// QuotaShare, if set, meters each tenant at this share of the previous run's throughput with
	// both classes (the capacity of the locks: the paper's "half of the resources"); Quota is
	// that rate in acquires per second, Burst its meter's burst.
	QuotaShare float64 `json:"quota_share,omitempty"`
	Quota      float64 `json:"quota,omitempty"`
	Burst      uint64  `json:"burst,omitempty"`
	// LevelOneSlot runs without rackmodel.Params.SizeEveryLevel: level 1 of every lock has one
	// slot, so a queue-empty announces one free slot at level 1 (a control run that shows what
	// one level-1 slot costs a priority-1 class; not plotted).
	LevelOneSlot bool `json:"level1_one_slot,omitempty"`
	// Backoff is how long a worker refused for its quota waits before its next transaction.
	Backoff time.Duration `json:"backoff_ns"`
	Seed    uint64        `json:"seed"`
	// Warmup: both classes run while the controller allocates every AllocPeriod (every lock goes
	// into the switch); then the rack is quiesced and the measured run starts.
	Warmup      time.Duration `json:"warmup_ns"`
	AllocPeriod time.Duration `json:"alloc_period_ns"`
	Alone       time.Duration `json:"alone_ns"`
	Together    time.Duration `json:"together_ns"`
	Bin         time.Duration `json:"bin_ns"`

	// Results.
	Alloc      rackmodel.Allocation `json:"allocation"`
	Stats      [2]ClassStat         `json:"stats"`
	Counters   rackmodel.Counters   `json:"counters"`
	Violations int                  `json:"violations"`
	Wall       time.Duration        `json:"wall_ns"`
}

// PolicyClass is a tenant: Clients client machines (all their workers), its priority.
type PolicyClass struct {
	Name     string `json:"name"`
	Clients  int    `json:"clients"`
	Tenant   uint16 `json:"tenant"`
	Priority uint8  `json:"priority"`
}

// ClassStat is a class's share of a PolicyRun: committed transactions per second (one lock
// each, so also acquires granted per second) alone and with the other class (the bins wholly
// after the join's first bin), its mean transaction latency with the other class, its refusals,
// and its throughput per bin.
type ClassStat struct {
	Workers      int           `json:"workers"`
	AloneTPS     float64       `json:"alone_tps"`
	TogetherTPS  float64       `json:"together_tps"`
	MeanTxn      time.Duration `json:"together_mean_txn_ns"`
	QuotaRejects uint64        `json:"quota_rejects"`
	Series       []float64     `json:"series_tps"`
}

// The runs of Figure 12.
const (
	Fig12NoPriority = "(a) without priorities"
	Fig12Priority   = "(a) with priorities"
	Fig12NoQuota    = "(b) without quotas"
	Fig12Quota      = "(b) with quotas"
	Fig12OneSlot    = "(a) with priorities, level 1 of one slot (control)"
)

// Fig12Locks is the number of exclusive locks of Figure 12 (the paper does not give it; the
// wall-clock demo's priority phase uses 8, its tenant phases 16).
const Fig12Locks = 16

// Fig12 is the paper's Figure 12 on the rack model: (a) two tenants of five client machines
// each, the second joining later, without priorities and with the joining tenant at priority 0
// and the first at priority 1; (b) a tenant of three client machines, then one of seven joins,
// without quotas and with each tenant metered at half the locks' capacity (measured by the run
// without quotas); then (a) with priorities again with level 1 of one slot per lock (a control:
// what one level-1 slot per lock, the controller's default, costs the priority-1 class). Every lock is in the switch; every run is checked for exclusion and fencing.
func Fig12(o Options) *Figure {
	o.fill()
	p := o.Params
	// Both priority levels are used: the controller sizes level 1 of every lock as level 0 (without
	// it level 1 has one slot, and an overflowing lock takes back one request per queue-empty).
	p.SizeEveryLevel = true
	f := &Figure{Name: "fig12", Title: "Figure 12: policies, priorities and per-tenant quotas", Params: p}
	half := p.Clients / 2
	seven := p.Clients * 7 / 10
	base := PolicyRun{Locks: Fig12Locks, Seed: max(o.Seed, 1), Warmup: 4 * time.Millisecond,
		AllocPeriod: time.Millisecond, Alone: 10 * time.Millisecond, Together: 20 * time.Millisecond,
		Bin: 500 * time.Microsecond, Backoff: 50 * time.Microsecond, Burst: 64}
	if o.Quick {
		base.Warmup, base.Alone, base.Together, base.Bin = 2*time.Millisecond, 2*time.Millisecond, 4*time.Millisecond,
			250*time.Microsecond
	}
	if o.Warmup > 0 {
		base.Warmup = o.Warmup
	}
	if o.AllocPeriod > 0 {
		base.AllocPeriod = o.AllocPeriod
	}
	a := base
	a.Panel = "a"
	a.Classes = [2]PolicyClass{{Name: "tenant 2 (first)", Clients: p.Clients - half, Tenant: 2},
		{Name: "tenant 1 (joins)", Clients: half, Tenant: 1}}
	noPrio, prio := a, a
	noPrio.Label = Fig12NoPriority
	prio.Label = Fig12Priority
	prio.Classes[0].Name, prio.Classes[0].Priority = "tenant 2, low priority (first)", 1
	prio.Classes[1].Name = "tenant 1, high priority (joins)"
	b := base
	b.Panel = "b"
	b.Classes = [2]PolicyClass{{Name: "tenant 2, 3 clients (first)", Clients: p.Clients - seven, Tenant: 4},
		{Name: "tenant 1, 7 clients (joins)", Clients: seven, Tenant: 3}}
	noQuota, quota := b, b
	noQuota.Label = Fig12NoQuota
	quota.Label, quota.QuotaShare = Fig12Quota, 0.5
	oneSlot := prio
	oneSlot.Label, oneSlot.LevelOneSlot = Fig12OneSlot, true
	f.Policies = []PolicyRun{noPrio, prio, noQuota, quota, oneSlot}
	return f
}

// policySource draws one-lock exclusive transactions on one of n locks, at random, for a
// class's worker; the workers of the joining class start at *from.
type policySource struct {
	rng     *rand.Rand
	n       int
	prio    uint8
	tenant  uint16
	hold    time.Duration
	backoff time.Duration
	from    *time.Duration
}

// fig12Base is the first lock id of Figure 12.
const fig12Base = 8_000_000

func (s *policySource) Next(now time.Duration, t *rackmodel.Txn) {
	t.Locks = append(t.Locks[:0], client.LockSpec{Lock: fig12Base + uint32(s.rng.IntN(s.n)), Mode: wire.Exclusive})
	t.Priority, t.Tenant, t.Hold, t.Backoff, t.Pause = s.prio, s.tenant, s.hold, s.backoff, 0
	if s.from != nil && now < *s.from {
		t.Pause = *s.from - now
	}
}

// class returns the class of worker w (client machine by client machine).
func (pr *PolicyRun) class(w, workers int) int {
	if w/workers < pr.Classes[0].Clients {
		return 0
	}
	return 1
}

// RunPolicy runs one PolicyRun on a rack with params p and fills in its results.
func RunPolicy(ctx context.Context, p rackmodel.Params, pr *PolicyRun) error {
	t0 := time.Now()
	p = p.WithDefaults()
	if pr.LevelOneSlot {
		p.SizeEveryLevel = false
	}
	if n := pr.Classes[0].Clients + pr.Classes[1].Clients; n != p.Clients {
		return fmt.Errorf("experiment: %s: classes of %d client machines on a rack of %d", pr.Label, n, p.Clients)
	}
	var tenants []ctlcore.Tenant
	if pr.Quota > 0 {
		for i, c := range pr.Classes {
			tenants = append(tenants, ctlcore.Tenant{ID: c.Tenant, Meter: i + 1, Rate: pr.Quota, Burst: pr.Burst})
		}
	}
	var from time.Duration // the joining class's start; 0 in the warm-up
	cfg := rackmodel.Config{Params: p, Seed: pr.Seed, Tenants: tenants,
		Alloc: rackmodel.AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: poolSlots(p), Seed: pr.Seed},
		Source: func(w int) rackmodel.Source {
			c := pr.Classes[pr.class(w, p.Workers)]
			s := &policySource{rng: rand.New(rand.NewPCG(pr.Seed, uint64(w))), n: pr.Locks, prio: c.Priority,
				tenant: c.Tenant, hold: p.ThinkTime, backoff: pr.Backoff}
			if pr.class(w, p.Workers) == 1 {
				s.from = &from
			}
			return s
		}}
	r, err := rackmodel.New(cfg)
	if err != nil {
		return err
	}
	r.Start()
	if pr.Alloc, _, err = allocating(ctx, r, pr.Warmup, pr.AllocPeriod); err != nil {
		return err
	}
	if err := r.Quiesce(time.Second); err != nil {
		return err
	}
	if pr.Alloc.Locks != pr.Locks {
		return fmt.Errorf("experiment: %s: %d of the %d locks in the switch after the warm-up", pr.Label, pr.Alloc.Locks,
			pr.Locks)
	}
	workers := p.Clients * p.Workers
	sum := func() (s [2]rackmodel.WorkerCounters) {
		for w := range workers {
			k := pr.class(w, p.Workers)
			s[k] = s[k].Add(r.WorkerCounters(w))
		}
		return s
	}
	for k, c := range pr.Classes {
		pr.Stats[k] = ClassStat{Workers: c.Clients * p.Workers}
	}
	start := r.Now()
	from = start + pr.Alone
	c0 := r.Counters()
	r.Start()
	bins := int((pr.Alone + pr.Together) / pr.Bin)
	joinBin := int(pr.Alone / pr.Bin)
	var alone0, alone1, tog0, tog1 [2]rackmodel.WorkerCounters
	prev := sum()
	alone0 = prev
	for i := range bins {
		if err := step(ctx, r, pr.Bin); err != nil {
			return err
		}
		cur := sum()
		for k := range cur {
			d := cur[k].Sub(prev[k])
			pr.Stats[k].Series = append(pr.Stats[k].Series, float64(d.Txns)/pr.Bin.Seconds())
		}
		switch i + 1 {
		case joinBin:
			alone1 = cur
		case joinBin + 1:
			tog0 = cur
		}
		prev = cur
	}
	tog1 = prev
	pr.Counters = r.Counters().Sub(c0)
	for k := range pr.Stats {
		a, t := alone1[k].Sub(alone0[k]), tog1[k].Sub(tog0[k])
		st := &pr.Stats[k]
		st.AloneTPS = float64(a.Txns) / pr.Alone.Seconds()
		st.TogetherTPS = float64(t.Txns) / (pr.Together - pr.Bin).Seconds()
		if t.Txns > 0 {
			st.MeanTxn = t.TxnTime / time.Duration(t.Txns)
		}
		st.QuotaRejects = tog1[k].Sub(alone0[k]).QuotaRejects
	}
	if err := r.Quiesce(time.Second); err != nil {
		return err
	}
	v := r.Violations()
	pr.Violations = len(v)
	pr.Wall = time.Since(t0)
	if len(v) > 0 {
		return fmt.Errorf("experiment: %s: %d violations of exclusion or fencing, first %v", pr.Label, len(v), v[0])
	}
	return nil
}

// total returns the run's throughput with both classes.
func (pr *PolicyRun) total() float64 { return pr.Stats[0].TogetherTPS + pr.Stats[1].TogetherTPS }

func (f *Figure) runPolicies(ctx context.Context, progress func(done, total int, r Result)) error {
	for i := range f.Policies {
		pr := &f.Policies[i]
		if pr.QuotaShare > 0 {
			if i == 0 || f.Policies[i-1].total() == 0 {
				return fmt.Errorf("%s: %s: no run before it to measure the capacity", f.Name, pr.Label)
			}
			pr.Quota = pr.QuotaShare * f.Policies[i-1].total()
		}
		if err := RunPolicy(ctx, f.Params, pr); err != nil {
			return fmt.Errorf("%s: %s: %w", f.Name, pr.Label, err)
		}
		if progress != nil {
			progress(i+1, len(f.Policies), Result{Spec: Spec{Label: pr.Label}, TPS: pr.total(), Violations: pr.Violations,
				Wall: pr.Wall})
		}
	}
	return nil
}

// The paper's Figure 12, as its text states it (section 6.3; the figure's axes give no numbers
// the text repeats).
var fig12Paper = map[string]string{
	Fig12NoPriority: "both tenants similar",
	Fig12Priority:   "the high-priority tenant prioritized over the low-priority one",
	Fig12NoQuota:    "tenant 1 (7 clients) starves tenant 2 and gets the higher throughput",
	Fig12Quota:      "each tenant its own share (half): similar throughput",
	Fig12OneSlot:    "(not in the paper)",
}

// fig12 writes each run's classes alone and together, the ratio of the joining class to the
// first, and the paper's statement beside it.
func (f *Figure) fig12(w io.Writer) {
	fmt.Fprintln(w, "| run | class | workers | priority | alone (kTPS) | together (kTPS) | mean txn together | refused for quota | joining / first | the paper |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, pr := range f.Policies {
		for k, c := range pr.Classes {
			st := pr.Stats[k]
			alone := fmt.Sprintf("%.0f", st.AloneTPS/1e3)
			if k == 1 {
				alone = "-"
			}
			run, ratioCell, paper := "", "", ""
			if k == 0 {
				run = pr.Label
				if pr.Quota > 0 {
					run += fmt.Sprintf(" (%.0f k acquires/s each, burst %d)", pr.Quota/1e3, pr.Burst)
				}
				ratioCell, paper = "**"+ratio(pr.Stats[1].TogetherTPS, pr.Stats[0].TogetherTPS)+"**", fig12Paper[pr.Label]
			}
			fmt.Fprintf(w, "| %s | %s (tenant %d) | %d | %d | %s | %.0f | %.1f µs | %d | %s | %s |\n", run, c.Name, c.Tenant,
				st.Workers, c.Priority, alone, st.TogetherTPS/1e3, float64(st.MeanTxn)/1e3, st.QuotaRejects, ratioCell, paper)
		}
	}
	if len(f.Policies) == 0 {
		return
	}
	pr := f.Policies[0]
	fmt.Fprintf(w, "\nEach run: %d exclusive locks (one per transaction, drawn at random), every one in the switch "+
		"(knapsack in a warm-up of %v with both classes, an allocation period every %v); then the first class alone "+
		"for %v and both for %v, in bins of %v (together: the bins after the join's first); a worker refused for "+
		"its quota backs off %v; seed %d. Checked online for exclusion and fencing (history.Checker): ", pr.Locks,
		pr.Warmup, pr.AllocPeriod, pr.Alone, pr.Together, pr.Bin, pr.Backoff, pr.Seed)
	v := 0
	for _, p := range f.Policies {
		v += p.Violations
	}
	fmt.Fprintf(w, "**%d violations** over the %d runs.\n", v, len(f.Policies))
	for _, c := range f.Policies {
		if !c.LevelOneSlot {
			continue
		}
		for _, m := range f.Policies {
			if m.Label != Fig12Priority {
				continue
			}
			fmt.Fprintf(w, "\nThe push-back rule (a queue-empty announces each level's free slots): in %q every "+
				"lock has one slot at level 1. The priority-1 class commits %.0f k transactions/s alone and %.0f k with "+
				"the priority-0 class, against %.0f k and %.0f k with both levels sized by c_i; over the run %d "+
				"push-backs for %d queue-empties (sized: %d for %d) and %d retransmissions (a request "+
				"buffered longer than the retry timeout; sized: %d). Slower, not starved: every queue-empty brings back "+
				"at least one request, the oldest of the highest priority buffered.\n", c.Label,
				c.Stats[0].AloneTPS/1e3, c.Stats[0].TogetherTPS/1e3, m.Stats[0].AloneTPS/1e3, m.Stats[0].TogetherTPS/1e3,
				c.Counters.PushBacks, c.Counters.QueueEmpties, m.Counters.PushBacks, m.Counters.QueueEmpties,
				c.Counters.Retransmits, m.Counters.Retransmits)
		}
	}
}

// plot12: per run, each class's throughput over time, the join marked.
func (f *Figure) plot12() ([][]*plot.Plot, error) {
	var ps []*plot.Plot
	for _, pr := range f.Policies {
		if pr.LevelOneSlot {
			continue
		}
		p := plot.New()
		p.Title.Text = pr.Label
		p.X.Label.Text = "virtual time since the measured run started (ms)"
		p.Y.Label.Text = "kTPS (one lock each)"
		top := 0.0
		for k, c := range pr.Classes {
			var xys plotter.XYs
			for i, y := range pr.Stats[k].Series {
				xys = append(xys, plotter.XY{X: (float64(i) + 0.5) * float64(pr.Bin) / 1e6, Y: y / 1e3}) // the bin's middle
				top = max(top, y/1e3)
			}
			if len(xys) == 0 {
				return nil, fmt.Errorf("experiment: %s: no samples", pr.Label)
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.Color = palette[k]
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(c.Name, l)
		}
		x := float64(pr.Alone) / 1e6
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top * 1.05}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 100}
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(l)
		p.Legend.Top = true
		p.Y.Min, p.Y.Max = 0, top*1.4
		ps = append(ps, p)
	}
	return rows(ps, 2), nil
}
