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
	sc := QuickScale()
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
	m, d, s := get(Config{Alg: RMAMCS, Bench: ECSB, Procs: 64, Seed: 1}), get(Config{Alg: DMCS, Bench: ECSB, Procs: 64, Seed: 1}),
		get(Config{Alg: Spin, Bench: ECSB, Procs: 64, Seed: 1})
	if m.Throughput <= d.Throughput || m.Throughput <= s.Throughput {
		t.Errorf("P=64 ECSB: RMA-MCS %.3g, D-MCS %.3g, spin %.3g ops/s", m.Throughput, d.Throughput, s.Throughput)
	}
	rw, cr := get(Config{Alg: RMARW, Bench: ECSB, Procs: 64, WriteFrac: 0.002, Seed: 1}), get(Config{Alg: CentralRW, Bench: ECSB, Procs: 64, WriteFrac: 0.002, Seed: 1})
	if rw.Throughput <= cr.Throughput {
		t.Errorf("P=64 F_W=0.2%%: RMA-RW %.3g, central %.3g ops/s", rw.Throughput, cr.Throughput)
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
