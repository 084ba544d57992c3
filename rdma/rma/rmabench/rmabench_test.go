package rmabench

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConfigErrors(t *testing.T) {
	for i, c := range []Config{
		{Alg: "mcs", Procs: 4},
		{Alg: RMAMCS, Bench: "x", Procs: 4},
		{Alg: RMAMCS, Procs: 0},
		{Alg: RMAMCS, Procs: 24},
		{Alg: RMARW, Procs: 16, WriteFrac: 2},
		{Alg: RMARW, Procs: 16, Duration: -1},
	} {
		if _, err := Run(c); err == nil {
			t.Errorf("#%d %+v accepted", i, c)
		}
	}
}

// The virtual-time results are a function of the configuration and the seed.
func TestDeterministic(t *testing.T) {
	c := Config{Alg: RMARW, Procs: 32, WriteFrac: 0.1, Seed: 3, Duration: 100_000, Warmup: 20_000}
	a, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if a.Ops != b.Ops || a.Writes != b.Writes || a.Mean != b.Mean {
		t.Fatalf("two runs differ: %+v vs %+v", a, b)
	}
}

// The adaptive window completes several rounds even for a lock whose hand-overs all cross the
// network (D-MCS over 4 nodes).
func TestAdaptiveWindow(t *testing.T) {
	r, err := Run(Config{Alg: DMCS, Procs: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples < 2*64 {
		t.Fatalf("%d latency samples for 64 processes (window %d ns)", r.Samples, r.Window)
	}
	t.Logf("D-MCS P=64: %.2f Mops/s, window %d us, %d samples", r.Throughput/1e6, r.Window/1000, r.Samples)
}

// The quick figures run, and their shape is the paper's: RMA-MCS ahead of D-MCS and the spin
// lock across nodes, RMA-RW ahead of the central RW lock at F_W = 0.2%; files and plots are
// written.
func TestQuickFigures(t *testing.T) {
	// Smaller than QuickScale, so that it runs under the race detector on a shared machine:
	// one node (P=8) and two (P=32).
	sc := Scale{Procs: []int{8, 32}, RWProcs: []int{32}, FWProcs: []int{32}, MinWrites: 20, Seed: 1}
	figs := Figures(sc)
	rs, err := RunFigures(context.Background(), figs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(c Config) Result {
		r, ok := rs.Get(c)
		if !ok {
			t.Fatalf("no result for %+v", c)
		}
		return r
	}
	m, d, s := get(Config{Alg: RMAMCS, Bench: ECSB, Procs: 32, Seed: 1}), get(Config{Alg: DMCS, Bench: ECSB, Procs: 32, Seed: 1}),
		get(Config{Alg: Spin, Bench: ECSB, Procs: 32, Seed: 1})
	if m.Throughput <= d.Throughput || m.Throughput <= s.Throughput {
		t.Errorf("P=32 ECSB: RMA-MCS %.3g, D-MCS %.3g, spin %.3g ops/s", m.Throughput, d.Throughput, s.Throughput)
	}
	rw, cr := get(Config{Alg: RMARW, Bench: ECSB, Procs: 32, WriteFrac: 0.002, Seed: 1}), get(Config{Alg: CentralRW, Bench: ECSB, Procs: 32, WriteFrac: 0.002, Seed: 1})
	if rw.Throughput <= cr.Throughput {
		t.Errorf("P=32 F_W=0.2%%: RMA-RW %.3g, central %.3g ops/s", rw.Throughput, cr.Throughput)
	}
	var tables, claims bytes.Buffer
	if err := WriteTables(&tables, figs, rs); err != nil {
		t.Fatal(err)
	}
	if err := WriteClaims(&claims, Claims(sc, rs)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tables.String(), "Fig. 5") || strings.Count(claims.String(), "\n") < 10 {
		t.Fatalf("tables or claims missing:\n%s\n%s", tables.String(), claims.String())
	}
	// The window minimum: every RMA-RW point with rare writers saw MinWrites writes.
	for _, r := range rs {
		checkCounts(t, r)
		if r.Alg == RMARW && r.WriteFrac > 0 && r.WriteFrac < 1 && r.Writes < int64(sc.MinWrites) && !r.Capped {
			t.Errorf("%s P=%d F_W=%g: %d writes in the window (minimum %d)", r.Label(), r.Procs, r.WriteFrac, r.Writes, sc.MinWrites)
		}
	}
	// The T_R sweeps act: at every P the values of Fig. 4e differ in T_R-triggered resets, and
	// so do those of Fig. 4f at each F_W.
	checks := CheckSweeps(figs, rs)
	trGroups := 0
	for _, c := range checks {
		if c.Param == ParamTR {
			trGroups++
			if !c.Acts {
				t.Errorf("vacuous T_R sweep: %+v", c)
			}
		}
	}
	if want := 3 * len(sc.RWProcs); trGroups != want {
		t.Errorf("%d T_R sweep groups checked, want %d", trGroups, want)
	}
	// Negative control: the paper's larger T_R values alone (2000 to 8000) at F_W = 0.2% are
	// never reached at this scale, and the check must say so.
	var paperTR Panel
	for _, f := range figs {
		for _, pn := range f.Panels {
			if pn.Title == "T_R (F_W=0.2%)" {
				paperTR = Panel{Title: pn.Title, X: pn.X, Metric: pn.Metric}
				for _, se := range pn.Series {
					if se.Points[0].TR >= 2000 {
						paperTR.Series = append(paperTR.Series, se)
					}
				}
			}
		}
	}
	neg := CheckSweeps([]Figure{{Name: "neg", Panels: []Panel{paperTR}}}, rs)
	if len(neg) != len(sc.RWProcs) {
		t.Fatalf("negative control: %d groups for %d process counts", len(neg), len(sc.RWProcs))
	}
	for _, c := range neg {
		if c.Acts {
			t.Errorf("negative control: T_R %v at P=%d reported acting (resets %v)", c.Values, c.Procs, c.Events)
		}
	}
	var counts bytes.Buffer
	if err := WriteCounts(&counts, figs, rs); err != nil {
		t.Fatal(err)
	}
	if err := WriteSweepChecks(&counts, checks); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(counts.String(), "T_R resets") || !strings.Contains(counts.String(), "writer phases") {
		t.Fatalf("counts without the T_R resets:\n%s", counts.String())
	}
	dir := t.TempDir()
	files, err := Plot(figs, rs, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(figs) {
		t.Fatalf("%d plots for %d figures", len(files), len(figs))
	}
	for _, f := range append(files, filepath.Join(dir, "fig3.png")) {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	t.Logf("\n%s", claims.String())
}

// CheckSweeps says a sweep acts iff its values differ in the events the threshold governs.
func TestCheckSweeps(t *testing.T) {
	pt := func(tr int, tl []int) Config {
		return Config{Alg: RMARW, Bench: ECSB, Procs: 64, WriteFrac: 0.002, TR: tr, TL: tl, Seed: 1}
	}
	for _, tc := range []struct {
		name   string
		series [][2]any // config, result counts
		param  string
		acts   bool
	}{
		{"T_R resets differ", [][2]any{{pt(16, nil), rmaCounts(9, 0, 0)}, {pt(1000, nil), rmaCounts(0, 0, 0)}}, ParamTR, true},
		{"T_R resets equal", [][2]any{{pt(1000, nil), rmaCounts(0, 0, 0)}, {pt(4000, nil), rmaCounts(0, 0, 0)}}, ParamTR, false},
		{"T_R resets equal but non-zero", [][2]any{{pt(100, nil), rmaCounts(3, 0, 0)}, {pt(200, nil), rmaCounts(3, 0, 0)}}, ParamTR, false},
		{"T_L hits differ at level 2", [][2]any{{pt(0, []int{2, 5}), rmaCounts(0, 0, 4)}, {pt(0, []int{20, 50}), rmaCounts(0, 0, 0)}}, ParamTL, true},
		{"T_L hits differ at level 1", [][2]any{{pt(0, []int{2, 5}), rmaCounts(0, 1, 0)}, {pt(0, []int{20, 50}), rmaCounts(0, 0, 0)}}, ParamTL, true},
		{"T_L never hit", [][2]any{{pt(0, []int{100, 10}), rmaCounts(0, 0, 0)}, {pt(0, []int{20, 50}), rmaCounts(0, 0, 0)}}, ParamTL, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pn := Panel{Title: tc.name, X: "procs", Metric: "throughput"}
			rs := Results{}
			for _, sr := range tc.series {
				c, r := sr[0].(Config), sr[1].(Result)
				pn.Series = append(pn.Series, Series{Label: "x", Points: []Config{c}})
				rs[key(c)] = r
			}
			cs := CheckSweeps([]Figure{{Name: "t", Panels: []Panel{pn}}}, rs)
			if len(cs) != 1 || cs[0].Param != tc.param {
				t.Fatalf("checks %+v, want one of %s", cs, tc.param)
			}
			if cs[0].Acts != tc.acts {
				t.Fatalf("acts = %v, want %v: %+v", cs[0].Acts, tc.acts, cs[0])
			}
		})
	}
}

func rmaCounts(trResets, tl1, tl2 int64) Result {
	var r Result
	r.Counts.TRResets = trResets
	r.Counts.TLHits[0], r.Counts.TLHits[1] = tl1, tl2
	return r
}

// A window's counts are the events of the processes' acquisitions inside it: never negative,
// even for processes that start an acquisition in the window and do not finish it (a window
// of 20 us on 4 nodes ends with most processes waiting).
func TestCountsShortWindow(t *testing.T) {
	r, err := Run(Config{Alg: RMARW, Procs: 64, WriteFrac: 0.25, TL: []int{2, 5}, TR: 16, Warmup: 200_000, Duration: 20_000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, r)
	t.Logf("%d ops, counts %+v", r.Ops, r.Counts)
}

// checkCounts fails if any count of r is negative.
func checkCounts(t *testing.T, r Result) {
	t.Helper()
	c := r.Counts
	all := []int64{c.ReaderEntries, c.BackOffs, c.TRHits, c.TRWriterQueued, c.TRClaimLost, c.TRResets, c.WritePhases, c.WriterResets}
	all = append(append(all, c.Passes[:]...), c.TLHits[:]...)
	for i, v := range all {
		if v < 0 {
			t.Fatalf("%s P=%d F_W=%g: count #%d is %d: %+v", r.Label(), r.Procs, r.WriteFrac, i, v, c)
		}
	}
}

// The open loop's driver offers its rate: unloaded (about 1% of the lock's capacity), the
// requests that arrive in a fixed window number Rate x P x window within four standard
// deviations of a Poisson count, nearly all of them are served in it, and the arrivals depend
// on the seed and the ranks only: another lock and another writer fraction see the same ones.
func TestOpenLoopOfferedRate(t *testing.T) {
	const seed = 4
	c := Config{Alg: RMARW, Procs: 32, WriteFrac: 0.25, Rate: 20_000, Warmup: 200_000, Duration: 2_000_000, Seed: seed}
	r, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	want := c.Rate * float64(c.Procs) * float64(c.Duration) / 1e9 // 1280
	if d := math.Abs(float64(r.Arrivals) - want); d > 4*math.Sqrt(want) {
		t.Fatalf("seed %d: %d arrivals in %d ns at %.0f/s x %d, want %.0f +- %.0f", seed, r.Arrivals, c.Duration, c.Rate, c.Procs, want, 4*math.Sqrt(want))
	}
	if out := r.Arrivals - r.Samples; out < 0 || out > int64(c.Procs) {
		t.Fatalf("seed %d: %d arrivals, %d served from them: %d outstanding at the window's end", seed, r.Arrivals, r.Samples, out)
	}
	if d := math.Abs(float64(r.Ops) - want); d > 4*math.Sqrt(want)+float64(c.Procs) {
		t.Fatalf("seed %d: %d completions, %.0f offered", seed, r.Ops, want)
	}
	for _, o := range []Config{{Alg: DMCS}, {Alg: RMARW, WriteFrac: 0.9}} {
		o.Procs, o.Rate, o.Warmup, o.Duration, o.Seed = c.Procs, c.Rate, c.Warmup, c.Duration, c.Seed
		ro, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		if ro.Arrivals != r.Arrivals {
			t.Fatalf("seed %d: %s F_W=%g has %d arrivals, RMA-RW F_W=0.25 %d", seed, o.Alg, o.WriteFrac, ro.Arrivals, r.Arrivals)
		}
	}
	// A closed loop has no arrivals.
	if cl, err := Run(Config{Alg: RMARW, Procs: 16, WriteFrac: 0.25, Warmup: 20_000, Duration: 50_000, Seed: seed}); err != nil || cl.Arrivals != 0 {
		t.Fatalf("closed loop: %d arrivals, %v", cl.Arrivals, err)
	}
	t.Logf("seed %d: %d arrivals (%.0f expected), %d served, mean %.2f us", seed, r.Arrivals, want, r.Samples, r.Mean/1e3)
}

// The open loop's latency grows with the offered load (virtual time: a property of the model,
// not of the machine running it): at 10% and 90% of the closed loop's throughput the requests
// are served at the offered rate, and the mean, p50 and p99 from arrival are higher at 90%;
// at 10% the mean is below the closed loop's (at 90% it need not be: the open loop's bursts
// and shorter lock queues serve fewer requests per outstanding one); a negative rate is
// refused.
func TestOpenLoopLatencyGrowsWithLoad(t *testing.T) {
	const seed = 2
	base := Config{Alg: RMARW, Procs: 32, WriteFrac: 0.25, Seed: seed}
	closed, err := Run(base)
	if err != nil {
		t.Fatal(err)
	}
	point := func(load float64) Result {
		c := base
		c.Rate = load * closed.Throughput / float64(c.Procs)
		r, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Rate != c.Rate {
			t.Fatalf("result rate %v, want %v", r.Rate, c.Rate)
		}
		offered := c.Rate * float64(c.Procs)
		if got := r.Throughput / offered; got < 0.85 || got > 1.15 {
			t.Fatalf("seed %d load %.2f: achieved %.0f/s of %.0f/s offered", seed, load, r.Throughput, offered)
		}
		return r
	}
	light, heavy := point(0.1), point(0.9)
	t.Logf("seed %d: closed loop %.2f M/s, mean %.1f us; open 10%%: mean %.1f us p50 %.1f p99 %.1f; 90%%: mean %.1f us p50 %.1f p99 %.1f",
		seed, closed.Throughput/1e6, closed.Mean/1e3, light.Mean/1e3, light.P50/1e3, light.P99/1e3, heavy.Mean/1e3, heavy.P50/1e3, heavy.P99/1e3)
	if light.Mean >= heavy.Mean || light.P50 > heavy.P50 || light.P99 >= heavy.P99 || light.Mean >= closed.Mean {
		t.Fatalf("seed %d: latency not growing with load: 10%% %+v, 90%% %+v, closed loop mean %.0f ns", seed, light, heavy, closed.Mean)
	}
	if _, err := Run(Config{Alg: RMARW, Procs: 16, Rate: -1}); err == nil {
		t.Fatal("negative rate accepted")
	}
}

// An open loop offered more than the lock serves says so and stops at its first window (a
// longer one only grows the backlog) instead of growing it to MaxWindow.
func TestOpenLoopSaturated(t *testing.T) {
	c := Config{Alg: RMARW, Procs: 32, WriteFrac: 0.25, Rate: 150_000, Seed: 1} // about 3x capacity
	r, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Saturated || r.Capped || r.Window > int64(40e9/c.Rate) {
		t.Fatalf("seed %d: saturated %v, capped %v, window %d ns: %d arrivals, %d served", c.Seed, r.Saturated, r.Capped, r.Window, r.Arrivals, r.Samples)
	}
	var buf bytes.Buffer
	if err := WriteOpen(&buf, []OpenPoint{{Load: 3, Split: "50-20", Result: r}}); err != nil || !strings.Contains(buf.String(), "(saturated)") {
		t.Fatalf("table does not mark the point: %v\n%s", err, buf.String())
	}
}

// An open-loop point is a function of its configuration and seed, every field of it.
func TestOpenLoopDeterministic(t *testing.T) {
	c := Config{Alg: RMARW, Procs: 32, WriteFrac: 0.25, TL: []int{20, 50}, Rate: 20_000, Seed: 5}
	a, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("seed %d: two runs differ:\n%+v\n%+v", c.Seed, a, b)
	}
	c.Seed++
	o, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if o.Arrivals == a.Arrivals && o.Mean == a.Mean {
		t.Fatalf("seeds %d and %d give the same point: %+v", c.Seed-1, c.Seed, a)
	}
}

// Negative control: in a closed loop without think time the measured mean latency is the
// panels' "latency", P / throughput (Little's law with P requests always outstanding), so that
// panel is the throughput panel inverted; in the open loop it is not (at half the load the
// mean is more than 25% off P / throughput).
func TestClosedLoopLatencyIsLittle(t *testing.T) {
	for _, tl := range Splits4d {
		c := Config{Alg: RMARW, Procs: 32, WriteFrac: 0.25, TL: tl, Seed: 1}
		r, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		little := Value("latency", r) * 1e3 // ns
		if d := math.Abs(r.Mean-little) / little; d > 0.05 {
			t.Errorf("T_L %v closed loop: mean %.0f ns, P / throughput %.0f ns (%.1f%% apart)", tl, r.Mean, little, d*100)
		}
		c.Rate = 0.5 * r.Throughput / float64(c.Procs)
		o, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if ol := Value("latency", o) * 1e3; math.Abs(o.Mean-ol)/ol < 0.25 {
			t.Errorf("T_L %v open loop at 50%%: mean %.0f ns, P / throughput %.0f ns", tl, o.Mean, ol)
		}
		t.Logf("T_L %v: closed mean %.0f ns = P/throughput %.0f ns; open 50%% mean %.0f ns", tl, r.Mean, little, o.Mean)
	}
}

// OpenLoop4d offers the three splits the same load, a fraction of the slowest one's capacity.
func TestOpenLoop4d(t *testing.T) {
	ps, closed, err := OpenLoop4d(context.Background(), []int{32}, []float64{0.5}, 1, 40, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 || len(closed) != 3 {
		t.Fatalf("%d open points, %d closed", len(ps), len(closed))
	}
	slowest := 0.0
	for _, r := range closed {
		if slowest == 0 || r.Throughput < slowest {
			slowest = r.Throughput
		}
	}
	for i, p := range ps {
		if p.Split != splitLabel(Splits4d[i]) || p.Offered != 0.5*slowest || p.Result.Rate*32 != p.Offered || p.Result.Samples == 0 {
			t.Fatalf("point %d: %+v (slowest %.0f)", i, p, slowest)
		}
	}
	var buf bytes.Buffer
	if err := WriteOpen(&buf, ps); err != nil || !strings.Contains(buf.String(), "50-20") {
		t.Fatalf("table: %v\n%s", err, buf.String())
	}
	f, err := PlotOpen(ps, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(f); err != nil || st.Size() == 0 {
		t.Fatalf("%s: %v", f, err)
	}
}
