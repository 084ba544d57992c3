package modelfig

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/rackmodel"
)

// Timeline is Figure 15's run: the rack's throughput over time through a switch restart and a
// lock server failure, on the rack model with the controller's failure handling (ctlcore).
//
// The run: a warm-up from every lock on the servers with the controller's allocation period of
// Slots switch slots (knapsack) every AllocPeriod on the quiesced rack, Steady of normal running;
// the switch restarts and is down for Down; the controller programs it again and waits out the
// leases before the switch's locks are granted again, by their servers; a retry interval for the
// clients to catch up, Steady with every lock on the servers, then Realloc in which the controller
// allocates again every AllocPeriod; Steady later server 2's machine fails, the controller
// suspects it, declares it dead and fails its address over to its standby (on server 1's
// machine), which waits out the leases; Tail after the failure the run ends. Throughput is
// counted in bins of Bin.
type Timeline struct {
	Phase  string        `json:"phase"`
	Seed   uint64        `json:"seed"`
	Slots  int           `json:"slots"`
	Bin    time.Duration `json:"bin_ns"`
	Warmup time.Duration `json:"warmup_ns"`
	Steady time.Duration `json:"steady_ns"`
	Down   time.Duration `json:"down_ns"`
	// AllocPeriod is the time between the controller's allocation periods in the warm-up and in
	// Realloc, the time after the recovery in which it allocates again; Tail how long the run
	// goes on after the server failure.
	AllocPeriod time.Duration `json:"alloc_period_ns"`
	Realloc     time.Duration `json:"realloc_ns"`
	Tail        time.Duration `json:"tail_ns"`
	// Knobs break the failure handling (a negative control); Label names the run.
	Knobs rackmodel.TestingKnobs `json:"-"`
	Label string                 `json:"label"`

	// Results.
	Samples    []rackmodel.Sample `json:"samples"`
	Events     []rackmodel.Event  `json:"events"`
	Phases     []PhaseStat        `json:"phases"`
	Counters   rackmodel.Counters `json:"counters"`
	Controller ctlcore.Stats      `json:"controller"`
	Violations int                `json:"violations"`
	// FirstViolation describes the first violation found, if any.
	FirstViolation string        `json:"first_violation,omitempty"`
	Wall           time.Duration `json:"wall_ns"`
}

// PhaseStat is the throughput of one phase of a Timeline (the bins wholly inside it).
type PhaseStat struct {
	Name          string        `json:"name"`
	From          time.Duration `json:"from_ns"`
	To            time.Duration `json:"to_ns"`
	Bins          int           `json:"bins"`
	RPS           float64       `json:"rps"`
	SwitchRPS     float64       `json:"switch_rps"`
	ServerRPS     float64       `json:"server_rps"`
	TPS           float64       `json:"tps"`
	SwitchOfTotal float64       `json:"switch_share"`
}

// Fig15Slots is the switch memory of Figure 15 (Figure 13's).
const Fig15Slots = Fig13Slots

func (o Options) timeline(label string, knobs rackmodel.TestingKnobs) Timeline {
	tl := Timeline{Phase: testbed.PhaseTPCCLow, Seed: o.Seed, Slots: min(Fig15Slots, poolSlots(o.Params)),
		Bin: 500 * time.Microsecond, Warmup: 20 * time.Millisecond, AllocPeriod: time.Millisecond,
		Steady: 10 * time.Millisecond, Down: 3 * time.Millisecond, Realloc: 10 * time.Millisecond,
		Tail: 40 * time.Millisecond, Knobs: knobs, Label: label}
	if o.Quick {
		tl.Warmup, tl.Steady, tl.Down, tl.Realloc, tl.Tail = 4*time.Millisecond, 3*time.Millisecond, 2*time.Millisecond,
			3*time.Millisecond, 40*time.Millisecond
	}
	if o.Warmup > 0 {
		tl.Warmup = o.Warmup
	}
	if o.AllocPeriod > 0 {
		tl.AllocPeriod = o.AllocPeriod
	}
	if tl.Seed == 0 {
		tl.Seed = 1
	}
	return tl
}

// The runs of Figure 15.
const (
	Fig15Main        = "with the waits"
	Fig15NoRecovery  = "negative control: no recovery wait after the switch restart"
	Fig15NoLeaseWait = "negative control: no lease wait at the server that takes over"
)

// Fig15 is the paper's Figure 15 on the rack model: throughput over time through a switch
// restart and a lock server failure (TPC-C, ten warehouses per client, knapsack over
// Fig15Slots; every server has a standby), checked for exclusion and fencing, with the same
// timeline run twice more without the waits (negative controls: they must show violations).
func Fig15(o Options) *Figure {
	o.fill()
	o.Params.Standbys = true
	return &Figure{Name: "fig15", Title: "Figure 15: throughput through a switch restart and a lock server failure",
		Params: o.Params, Timelines: []Timeline{
			o.timeline(Fig15Main, rackmodel.TestingKnobs{}),
			o.timeline(Fig15NoRecovery, rackmodel.TestingKnobs{Mutation: ctlcore.MutationSkipRecoveryWait}),
			o.timeline(Fig15NoLeaseWait, rackmodel.TestingKnobs{NoTakeoverGrace: true}),
		}}
}

// RunTimeline runs one Timeline on a rack with params p and fills in its results.
func RunTimeline(ctx context.Context, p rackmodel.Params, tl *Timeline) error {
	t0 := time.Now()
	r, err := rackmodel.New(rackmodel.Config{Params: p, Phase: tl.Phase, Seed: tl.Seed, TestingKnobs: tl.Knobs,
		Alloc: rackmodel.AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: tl.Slots, Seed: tl.Seed}})
	if err != nil {
		return err
	}
	r.Start()
	if _, _, err := allocating(ctx, r, tl.Warmup, tl.AllocPeriod); err != nil {
		return err
	}
	start := r.Now()
	r.StartSeries(tl.Bin)
	if err := step(ctx, r, tl.Steady); err != nil {
		return err
	}
	r.RestartSwitch(tl.Down)
	// Until the recovery is over (the switch's locks adopted by their servers).
	if err := step(ctx, r, tl.Down+r.Params().SweepPeriod); err != nil {
		return err
	}
	for r.Recovering() {
		if err := step(ctx, r, r.Params().SweepPeriod); err != nil {
			return err
		}
	}
	// The clients that waited through the restart catch up within a retransmission interval.
	retry := r.Params().RetryTimeout
	if err := step(ctx, r, retry); err != nil {
		return err
	}
	r.Note("one retry interval after the recovery")
	if err := step(ctx, r, tl.Steady); err != nil {
		return err
	}
	if _, _, err := allocating(ctx, r, tl.Realloc, tl.AllocPeriod); err != nil {
		return err
	}
	r.Note("steady after the reallocations")
	if err := step(ctx, r, tl.Steady); err != nil {
		return err
	}
	failed := r.Now()
	if err := r.FailServer(1); err != nil {
		return err
	}
	// Until the standby grants, then a retransmission interval for the clients to catch up.
	tail := failed + tl.Tail
	for !tl.after(r.Events(), "takeover grace over", failed) && r.Now() < tail {
		if err := step(ctx, r, r.Params().SweepPeriod); err != nil {
			return err
		}
	}
	if err := step(ctx, r, min(retry, tail-r.Now())); err != nil {
		return err
	}
	r.Note("one retry interval after the takeover grace")
	if err := step(ctx, r, tail-r.Now()); err != nil {
		return err
	}
	end := r.Now()
	tl.Samples = r.Series()
	tl.Events = r.Events()
	tl.Counters = r.Counters()
	tl.Controller = r.Controller(0).Stats()
	if err := r.Quiesce(time.Second); err != nil {
		return err
	}
	v := r.Violations()
	tl.Violations = len(v)
	if len(v) > 0 {
		tl.FirstViolation = v[0].String()
	}
	tl.Phases = tl.phases(start, end)
	tl.Wall = time.Since(t0)
	return nil
}

// after reports whether one of evs after from starts with prefix.
func (tl *Timeline) after(evs []rackmodel.Event, prefix string, from time.Duration) bool {
	for _, e := range evs {
		if e.At >= from && strings.HasPrefix(e.What, prefix) {
			return true
		}
	}
	return false
}

// eventAt returns the time of the first event whose text starts with prefix, after from.
func (tl *Timeline) eventAt(prefix string, from time.Duration) (time.Duration, bool) {
	for _, e := range tl.Events {
		if e.At >= from && strings.HasPrefix(e.What, prefix) {
			return e.At, true
		}
	}
	return 0, false
}

// phases cuts the run at its events.
func (tl *Timeline) phases(start, end time.Duration) []PhaseStat {
	type cut struct {
		name   string
		prefix string
	}
	cuts := []cut{
		{"before the restart", ""},
		{"switch down", "switch down"},
		{"switch back, no pipeline", "switch back"},
		{"re-programmed; the switch's locks wait out the leases", "switch programmed"},
		{"recovered; the clients catch up (a retry interval)", "switch restart recovered"},
		{"every lock on the servers", "one retry interval after the recovery"},
		{"the controller's allocation periods (each on the quiesced rack)", "allocation periods:"},
		{"after the reallocation", "steady after the reallocations"},
		{"server 2 down, not yet detected", "server 2 down"},
		{"failed over to its standby on server 1's machine, waiting out the leases", "failing over to the standby"},
		{"the standby grants; the clients catch up (a retry interval)", "takeover grace over"},
		{"after the failover", "one retry interval after the takeover grace"},
	}
	var at []time.Duration
	var names []string
	from := start
	for _, c := range cuts {
		t := start
		if c.prefix != "" {
			var ok bool
			if t, ok = tl.eventAt(c.prefix, from); !ok {
				continue
			}
		}
		at, names, from = append(at, t), append(names, c.name), t
	}
	at = append(at, end)
	var out []PhaseStat
	for i := range names {
		ps := PhaseStat{Name: names[i], From: at[i], To: at[i+1]}
		var g, sw, tx uint64
		for _, s := range tl.Samples {
			if s.At >= ps.From && s.At+tl.Bin <= ps.To {
				ps.Bins++
				g += s.SwitchGrants + s.ServerGrants
				sw += s.SwitchGrants
				tx += s.Txns
			}
		}
		if ps.Bins > 0 {
			secs := (time.Duration(ps.Bins) * tl.Bin).Seconds()
			ps.RPS, ps.SwitchRPS, ps.TPS = float64(g)/secs, float64(sw)/secs, float64(tx)/secs
			ps.ServerRPS = ps.RPS - ps.SwitchRPS
			if g > 0 {
				ps.SwitchOfTotal = float64(sw) / float64(g)
			}
		}
		out = append(out, ps)
	}
	return out
}

func (f *Figure) runTimelines(ctx context.Context, progress func(done, total int, r Result)) error {
	for i := range f.Timelines {
		tl := &f.Timelines[i]
		if err := RunTimeline(ctx, f.Params, tl); err != nil {
			return fmt.Errorf("%s: %s: %w", f.Name, tl.Label, err)
		}
		if progress != nil {
			progress(i+1, len(f.Timelines), Result{Spec: Spec{Label: tl.Label}, Violations: tl.Violations,
				Wall: tl.Wall})
		}
	}
	return nil
}

// fig15 writes the main timeline's phases with their throughput against the steady state
// before the restart, its events, and the negative controls' violations.
func (f *Figure) fig15(w io.Writer) {
	if len(f.Timelines) == 0 {
		return
	}
	tl := f.Timelines[0]
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e6) }
	var ref float64
	if len(tl.Phases) > 0 {
		ref = tl.Phases[0].RPS
	}
	fmt.Fprintf(w, "Run %q: %d ms of virtual time after the first allocation, in bins of %v; times in ms since the "+
		"rack started.\n\n", tl.Label, len(tl.Samples)*int(tl.Bin)/1e6, tl.Bin)
	fmt.Fprintln(w, "| phase | from - to (ms) | MRPS (switch + servers) | kTPS | throughput / before the restart |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|")
	for _, p := range tl.Phases {
		if p.Bins == 0 {
			fmt.Fprintf(w, "| %s | %s - %s | (shorter than a bin) | | |\n", p.Name, ms(p.From), ms(p.To))
			continue
		}
		fmt.Fprintf(w, "| %s | %s - %s | %s (%s + %s) | %.0f | **%s** |\n", p.Name, ms(p.From), ms(p.To), mrps(p.RPS),
			mrps(p.SwitchRPS), mrps(p.ServerRPS), p.TPS/1e3, ratio(p.RPS, ref))
	}
	fmt.Fprintln(w, "\nEvents (the rack model's log):")
	fmt.Fprintln(w)
	for _, e := range tl.Events {
		fmt.Fprintf(w, "- %s ms: %s\n", ms(e.At), e.What)
	}
	c := tl.Counters
	fmt.Fprintf(w, "\nChecked online for exclusion and fencing over the whole run (history.Checker): "+
		"**%d violations**. Frames dropped by the switch while down or unprogrammed: %d; by the dead server: %d; "+
		"retransmissions: %d; switch holders force-released by the lease sweep: %d; locks moved out of the switch "+
		"(allocations and the failover): %d; leases lost by clients: %d.\n\n", tl.Violations, c.SwitchDropped,
		c.ServerDropped, c.Retransmits, tl.Controller.ForceReleases, tl.Controller.MovesOut, c.LeasesLost)
	if len(f.Timelines) > 1 {
		fmt.Fprintln(w, "| run | violations of exclusion or fencing | first |")
		fmt.Fprintln(w, "|---|---:|---|")
		for _, t := range f.Timelines {
			fmt.Fprintf(w, "| %s | %d | %s |\n", t.Label, t.Violations, strings.ReplaceAll(t.FirstViolation, "|", "/"))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Workload %s, seed %d, knapsack over %d slots; warm-up %v with an allocation period every %v, "+
		"%v steady, switch down %v, allocation periods for %v after the recovery, %v steady, %v after the server "+
		"failure (virtual time).\n", tl.Phase, tl.Seed, tl.Slots, tl.Warmup, tl.AllocPeriod, tl.Steady, tl.Down,
		tl.Realloc, tl.Steady, tl.Tail)
}

// fig15Marks are the events drawn on Figure 15's plot.
var fig15Marks = []struct{ prefix, label string }{
	{"switch down", "switch down"},
	{"switch programmed", "re-programmed"},
	{"switch restart recovered", "switch's locks to servers"},
	{"allocation periods:", "reallocation"},
	{"server 2 down", "server 2 down"},
	{"failing over to the standby", "failover to the standby"},
	{"takeover grace over", "takeover grace over"},
}

// plot15: throughput over time of the main timeline, total and the switch's part, with the
// events as vertical lines.
func (f *Figure) plot15() ([][]*plot.Plot, error) {
	tl := f.Timelines[0]
	if len(tl.Samples) == 0 {
		return nil, fmt.Errorf("experiment: %s: no samples", tl.Label)
	}
	p := plot.New()
	p.Title.Text = "throughput through a switch restart and a lock server failure (" + tl.Label + ")"
	p.X.Label.Text = "virtual time (ms)"
	p.Y.Label.Text = "MRPS granted (made by switch or servers)"
	var total, sw, srv plotter.XYs
	top := 0.0
	secs := tl.Bin.Seconds()
	samples := tl.Samples
	if len(samples) > 1 {
		samples = samples[:len(samples)-1] // the last bin is cut short by the end of the run
	}
	for _, s := range samples {
		x := float64(s.At) / 1e6
		t := float64(s.SwitchGrants+s.ServerGrants) / secs / 1e6
		total = append(total, plotter.XY{X: x, Y: t})
		sw = append(sw, plotter.XY{X: x, Y: float64(s.SwitchGrants) / secs / 1e6})
		srv = append(srv, plotter.XY{X: x, Y: float64(s.ServerGrants) / secs / 1e6})
		top = max(top, t)
	}
	for i, xys := range []plotter.XYs{total, sw, srv} {
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color = palette[i]
		if i > 0 {
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		}
		p.Add(l)
		p.Legend.Add([]string{"total", "by the switch", "by the servers"}[i], l)
	}
	for i, m := range fig15Marks {
		at, ok := tl.eventAt(m.prefix, tl.Samples[0].At+1)
		if !ok {
			continue
		}
		x := float64(at) / 1e6
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top * 1.05}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: uint8(40 + 25*i)}
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		l.Width = vg.Points(1.2)
		p.Add(l)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: top * (1.08 + 0.07*float64(i%4))}},
			Labels: []string{m.label}})
		if err != nil {
			return nil, err
		}
		p.Add(lb)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Y.Min, p.Y.Max = 0, top*1.45
	return [][]*plot.Plot{{p}}, nil
}
