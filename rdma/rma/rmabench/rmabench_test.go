package rmabench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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

// The open loop: at a light load the requests arrive at the offered rate and wait little; at a
// load near the lock's capacity they queue (latency from arrival grows); a negative rate is
// refused.
func TestOpenLoop(t *testing.T) {
	base := Config{Alg: RMARW, Procs: 32, WriteFrac: 0.25, Seed: 2}
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
			t.Fatalf("load %.2f: achieved %.0f/s of %.0f/s offered", load, r.Throughput, offered)
		}
		return r
	}
	light, heavy := point(0.1), point(0.9)
	t.Logf("closed loop %.2f M/s, mean %.1f us; open 10%%: mean %.1f us p99 %.1f; 90%%: mean %.1f us p99 %.1f",
		closed.Throughput/1e6, closed.Mean/1e3, light.Mean/1e3, light.P99/1e3, heavy.Mean/1e3, heavy.P99/1e3)
	if light.Mean >= heavy.Mean || light.Mean >= closed.Mean {
		t.Fatalf("mean latency: 10%% load %.0f ns, 90%% %.0f ns, closed loop %.0f ns", light.Mean, heavy.Mean, closed.Mean)
	}
	if _, err := Run(Config{Alg: RMARW, Procs: 16, Rate: -1}); err == nil {
		t.Fatal("negative rate accepted")
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
