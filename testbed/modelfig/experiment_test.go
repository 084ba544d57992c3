package modelfig

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/testbed/rackmodel"
	"github.com/netlock-go/netlock/testbed/tpcc"
	"github.com/netlock-go/netlock/testbed/tpcc/tpccbench"
)

// tiny is a rack small enough to run a figure in a test.
var tiny = rackmodel.Params{Clients: 2, Workers: 3, Servers: 2, ServerCores: 2, Sizing: dataplane.Sizing{Locks: 512, PartBits: 8}}

func TestFigureSpecs(t *testing.T) {
	for _, tc := range []struct {
		f    *Figure
		want int
	}{
		{Fig13(Options{}), 3 * len(Fig13Variants)},
		{Fig14(Options{}), 2 * len(Fig14Think) * len(Fig14Slots)},
		{Fig10(Options{}), 2 * (2 + len(Fig10NetlockClientCs) + len(Fig10NetChains))},
		{Fig11(Options{}), 2 * (2 + len(Fig10NetlockClientCs) + len(Fig10NetChains))},
		{Fig15(Options{}), 0},
	} {
		if len(tc.f.Specs) != tc.want {
			t.Errorf("%s: %d points, want %d", tc.f.Name, len(tc.f.Specs), tc.want)
		}
		clients, servers := 10, 2
		if tc.f.Name == "fig11" {
			clients, servers = 6, 6
		}
		for _, s := range tc.f.Specs {
			if s.Params.Clients != clients || s.Params.Servers != servers {
				t.Errorf("%s: point %q is not at the paper's scale: %+v", tc.f.Name, s.Label, s.Params)
			}
		}
	}
	if f := Fig10(Options{}); f.Specs[0].Slots != rackmodel.PaperParams().Sizing.Slots()-4 {
		t.Errorf("fig10 gives netlock %d slots, want the whole pool but the controller's 4 staging slots", f.Specs[0].Slots)
	}
	if f := Fig15(Options{}); !f.Params.Standbys {
		t.Error("fig15's servers have no standbys: the controller cannot fail a server over")
	}
}

// TestFiguresRun runs each figure's quick sweep on a tiny rack and checks the report, the plot and
// that every point committed transactions without a violation.
func TestFiguresRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four sweeps of the rack model")
	}
	dir := t.TempDir()
	o := Options{Params: tiny, Quick: true, Warmup: time.Millisecond, Settle: 200 * time.Microsecond, Window: 500 * time.Microsecond}
	for _, mk := range []func(Options) *Figure{Fig13, Fig14, Fig10, Fig11} {
		f := runChecked(t, mk(o))
		var md bytes.Buffer
		f.WriteMarkdown(&md)
		if !strings.Contains(md.String(), "|") || !strings.Contains(md.String(), "x |") {
			t.Errorf("%s: no ratio table:\n%s", f.Name, md.String())
		}
		file, err := f.Plot(dir)
		if err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil || img.Bounds().Dx() < 200 {
			t.Errorf("%s: plot %s: %v", f.Name, filepath.Base(file), err)
		}
	}
}

// TestFig10Baselines: Figures 10 and 11 run DSLR and DrTM on the rack's shape and workload
// (clients, servers, workers per client, warehouses per client, the specification's profile,
// ascending order, no Stock-Level reads), for every figure size.
func TestFig10Baselines(t *testing.T) {
	for _, o := range []Options{{}, {Quick: true}, {Params: tiny, Seed: 7}} {
		for _, f := range []*Figure{Fig10(o), Fig11(o)} {
			b := f.Baseline
			if b == nil {
				t.Fatalf("%s: no baselines", f.Name)
			}
			p := f.Params
			if len(b.Figures) != 1 || b.Figures[0].Machines != p.Clients || b.Figures[0].Servers != p.Servers {
				t.Errorf("%s: baselines on %+v, the rack has %d clients and %d servers", f.Name, b.Figures, p.Clients, p.Servers)
			}
			if !slices.Equal(b.Threads, []int{p.Workers}) || !slices.Equal(b.Algs, []string{"dslr", "drtm"}) ||
				!slices.Equal(b.PerNode, []int{1, 10}) || !slices.Equal(b.Per, []string{tpccbench.PerClient}) ||
				!slices.Equal(b.Orders, []tpcc.Order{tpcc.Ordered}) || b.Profile != tpcc.Spec || !b.NoReads ||
				b.Seed != int64(max(o.Seed, 1)) {
				t.Errorf("%s: baselines %+v do not match the rack's workload", f.Name, b)
			}
			for _, s := range f.Specs {
				if s.Params != p {
					t.Errorf("%s: point %q on another rack", f.Name, s.Label)
				}
			}
		}
	}
}

// TestFig10Run runs Figure 10's quick sweep on a tiny rack with its baselines: every system
// commits, the servers-only rack has no switch share and the netlock rack some, each
// baseline's warehouses are the rack's (one and ten per client), the table has the ratios
// beside the paper's and the caps. Negative control: the same baselines with Stock-Level's reads
// grant more requests per transaction, so dropping them is not a no-op.
func TestFig10Run(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep of the rack model")
	}
	o := Options{Params: tiny, Quick: true, Warmup: time.Millisecond, Settle: 200 * time.Microsecond, Window: 500 * time.Microsecond}
	f := Fig10(o)
	if err := f.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for _, ph := range fig10Phases {
		n, s := f.find(ph.phase+", "+Fig10Netlock, -1), f.find(ph.phase+", "+Fig10Servers, -1)
		if n == nil || s == nil {
			t.Fatalf("%s: results missing", ph.phase)
		}
		if c := ShareCap(*s); c.S != 0 || c.ServerBound != 1 || c.LatencyBound != 1 {
			t.Errorf("%s servers only: %+v, want no share and caps of 1", ph.phase, c)
		}
		if c := ShareCap(*n); c.S <= 0 || c.S >= 1 || c.ServerBound <= c.LatencyBound || c.LatencyBound <= 1 {
			t.Errorf("%s netlock: %+v, want a share in (0, 1) and 1 < latency cap < server cap", ph.phase, c)
		}
		// NetLock with client.c's clients: commits, with the switch.
		for _, v := range Fig10NetlockClientCs {
			if r := f.find(ph.phase+", "+v.Label, -1); r == nil || r.TPS <= 0 || r.ClientC == nil || *r.ClientC != v.Policy || r.SwitchRPS <= 0 {
				t.Errorf("%s %s: %+v, want transactions with client.c's rule %v, some granted by the switch", ph.phase, v.Label, r, v.Policy)
			}
		}
		// NetChain, with each client policy: the switch alone grants, and retries rejected
		// acquires; only the rollback rule rolls back.
		for _, v := range Fig10NetChains {
			nc := f.find(ph.phase+", "+v.Label, -1)
			if nc == nil || nc.TPS <= 0 || nc.ServerRPS != 0 || nc.SwitchRPS <= 0 || nc.Periods != 0 {
				t.Errorf("%s %s: %+v, want transactions granted by the switch alone, no allocation period", ph.phase, v.Label, nc)
				continue
			}
			if nc.NetChain.Policy != v.Policy || (v.Policy.Rule != client.NetChainRollback && nc.Counters.Rollbacks != 0) {
				t.Errorf("%s %s: policy %v, %d rollbacks, want %v", ph.phase, v.Label, nc.NetChain.Policy, nc.Counters.Rollbacks, v.Policy)
			}
		}
		want := tiny.Clients
		if ph.contention == "low" {
			want = 10 * tiny.Clients
		}
		for _, alg := range []string{"dslr", "drtm"} {
			b := f.baseline(alg, ph.contention)
			if b == nil {
				t.Fatalf("%s %s: no baseline point in %+v", alg, ph.contention, f.Baselines)
			}
			if b.TPS <= 0 || b.MRPS <= 0 || b.Warehouses != want || b.Threads != tiny.Workers || !b.NoReads {
				t.Errorf("%s %s: %+v, want transactions on %d warehouses with %d threads, no reads", alg, ph.contention, b, want, tiny.Workers)
			}
		}
	}
	var md bytes.Buffer
	f.WriteMarkdown(&md)
	for _, want := range []string{"DSLR (rdma/sim", "DrTM (rdma/sim", "18.4x", "14.9x", "28.6x", "33.5x", "cap 1/(1-s)", "against the caps",
		"NetChain, backoff 5µs-320µs (switch only", "NetChain, rollback 400µs (switch only", "NetChain, rollback 1ms, burst (switch only", "rollbacks/txn", "workers without a commit", "client.c on both sides", "netlock, client.c: rollback 2ms, burst", "4.4x", "3.5x", "chain replication"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("fig10 report lacks %q:\n%s", want, md.String())
		}
	}
	// Negative control: with Stock-Level's reads the baselines take more requests per transaction
	// (over 20 ms: a Stock-Level's 390 reads take about a millisecond).
	perTxn := func(noReads bool) map[string]float64 {
		b := *f.Baseline
		b.NoReads, b.Algs, b.Duration = noReads, []string{"dslr"}, 20_000_000
		ps, err := tpccbench.Run(context.Background(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, p := range ps {
			m[p.Contention] = p.MRPS * 1e6 / p.TPS
		}
		return m
	}
	with, without := perTxn(false), perTxn(true)
	for _, c := range []string{"high", "low"} {
		if with[c] <= without[c] {
			t.Errorf("dslr %s: %.1f requests per transaction with reads, %.1f without: the reads were not dropped", c, with[c], without[c])
		}
	}
	if _, err := f.Plot(t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

// TestCapNote: a gain is placed against the caps; a gain above the server cap is flagged
// (negative control: a cap that never flags would let a reader miss it).
func TestCapNote(t *testing.T) {
	c := ShareCap(Result{RPS: 100, SwitchRPS: 25})
	if math.Abs(c.ServerBound-4.0/3) > 1e-9 || math.Abs(c.LatencyBound-1/(1-0.25*(1-SwitchGrantRatio))) > 1e-9 {
		t.Fatalf("caps at s = 0.25: %+v", c)
	}
	for _, tc := range []struct {
		g    float64
		want string
	}{{0.9, "a loss"}, {1.1, "within both caps"}, {1.2, "above the latency cap, within the server cap"}, {1.5, "above both caps"}} {
		if got := capNote(tc.g, c); got != tc.want {
			t.Errorf("gain %.2f: %q, want %q", tc.g, got, tc.want)
		}
	}
}

// TestRunCanceled: a canceled context stops a point.
func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Spec{Params: tiny, Phase: "tpcc-low"}); err == nil {
		t.Error("Run ignored a canceled context")
	}
}

// TestFig15: the quick timeline on a tiny rack goes through every phase, has no violation with
// the waits, and the negative control without the recovery wait has one; the report and the plot
// are written.
func TestFig15(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three timelines of the rack model")
	}
	// Contended enough for the negative control (the run is deterministic for its seed): one
	// client node (ten warehouses) with sixteen workers; with testbed/tpcc's TPC-C three nodes of
	// four workers never overlap a holder across the restart in the quick timeline.
	p := rackmodel.Params{Clients: 1, Workers: 16, Servers: 2, ServerCores: 2, Sizing: dataplane.Sizing{Locks: 2048, PartBits: 10}}
	f := Fig15(Options{Params: p, Quick: true})
	if f.Timelines[0].Slots != poolSlots(p) {
		t.Errorf("fig15 allocates %d slots, want the small pool %d", f.Timelines[0].Slots, poolSlots(p))
	}
	if err := f.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	main := f.Timelines[0]
	if main.Violations != 0 {
		t.Errorf("with the waits: %d violations, first %s", main.Violations, main.FirstViolation)
	}
	if f.Timelines[1].Violations == 0 {
		t.Errorf("%s: no violation", f.Timelines[1].Label)
	}
	names := map[string]PhaseStat{}
	for _, p := range main.Phases {
		names[p.Name] = p
	}
	for _, n := range []string{"before the restart", "re-programmed; the switch's locks wait out the leases",
		"every lock on the servers", "after the reallocation",
		"failed over to its standby on server 1's machine, waiting out the leases", "after the failover"} {
		if _, ok := names[n]; !ok {
			t.Errorf("no phase %q in %+v", n, main.Phases)
		}
	}
	if p := names["before the restart"]; p.RPS == 0 || p.SwitchRPS == 0 {
		t.Errorf("before the restart: %+v", p)
	}
	if p := names["re-programmed; the switch's locks wait out the leases"]; p.SwitchRPS != 0 {
		t.Errorf("the switch granted while its locks waited out the leases: %+v", p)
	}
	if p := names["after the failover"]; p.RPS == 0 {
		t.Errorf("nothing granted after the failover: %+v", p)
	}
	dir := t.TempDir()
	png, err := f.Plot(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pngDecode(b); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	f.WriteMarkdown(&md)
	for _, want := range []string{"switch down", "failing over to the standby", "negative control", "**0 violations**"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
}

func pngDecode(b []byte) (any, error) { return png.Decode(bytes.NewReader(b)) }

// TestMicroFigures runs Figures 8 and 9 quick on a tiny rack whose server cores are slow enough
// for one core to saturate: every point in the switch is granted by the switch, contention costs
// throughput and latency, the lock server grows with its cores and the switch beats its best
// (CheckShape); the negative controls are results with those shapes broken, which CheckShape must
// reject.
func TestMicroFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two sweeps of the rack model")
	}
	p := tiny
	p.ServerCPU = 5 * time.Microsecond
	o := Options{Params: p, Quick: true}
	dir := t.TempDir()
	for _, mk := range []func(Options) *Figure{Fig8, Fig9} {
		f := runChecked(t, mk(o))
		if err := f.CheckShape(); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		var md strings.Builder
		f.WriteMarkdown(&md)
		if !strings.Contains(md.String(), "passed") {
			t.Errorf("%s: report:\n%s", f.Name, md.String())
		}
		if f.Name == "fig9" && !strings.Contains(md.String(), "x** |") {
			t.Errorf("fig9: no switch / server ratio:\n%s", md.String())
		}
		file, err := f.Plot(dir)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pngDecode(b); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		for _, nc := range microControls(f) {
			g := *f
			g.Results = slices.Clone(f.Results)
			nc.breakIt(g.Results)
			if err := g.CheckShape(); !errors.Is(err, nc.want) {
				t.Errorf("%s, negative control %q: CheckShape = %v, want %v", f.Name, nc.name, err, nc.want)
			}
		}
	}
}

type microControl struct {
	name    string
	breakIt func([]Result)
	want    error
}

// microControls are the negative controls of CheckShape for f: its results with one shape broken.
func microControls(f *Figure) []microControl {
	idx := func(rs []Result, suffix string) int {
		return slices.IndexFunc(rs, func(r Result) bool { return strings.HasSuffix(r.Label, suffix) })
	}
	switch f.Name {
	case "fig8":
		return []microControl{
			{"a point granted by the servers", func(rs []Result) { rs[0].SwitchRPS, rs[0].ServerRPS = 0, rs[0].RPS }, ErrNotInSwitch},
			{"contention costs nothing", func(rs []Result) {
				i, j := idx(rs, ", 1 lock"), len(rs)-1
				rs[i].RPS, rs[i].SwitchRPS, rs[i].Acquire = rs[j].RPS, rs[j].SwitchRPS, rs[j].Acquire
			}, ErrContention},
		}
	case "fig9":
		return []microControl{
			{"cores do not help", func(rs []Result) {
				i, j := idx(rs, "server, 1 core"), idx(rs, "server, 8 cores")
				rs[j].RPS = rs[i].RPS
			}, ErrCores},
			{"the switch no faster", func(rs []Result) {
				i, j := idx(rs, "server, 8 cores"), idx(rs, Fig9Switch)
				rs[j].RPS, rs[j].SwitchRPS = rs[i].RPS, rs[i].RPS
			}, ErrSwitchSlower},
			{"the switch's point granted by the server", func(rs []Result) {
				j := idx(rs, Fig9Switch)
				rs[j].SwitchRPS = 0
			}, ErrNotInSwitch},
		}
	}
	return nil
}

// TestMicroSpecs: Figures 8 and 9 at full size are the paper's racks: Figure 8 up to 12 client
// machines, Figure 9 ten and one lock server of 1 to 8 cores, Fig89Workers streams per client;
// every lock-switch point warms up long enough for the controller to move every lock in.
func TestMicroSpecs(t *testing.T) {
	f8, f9 := Fig8(Options{}), Fig9(Options{})
	if n := 2*len(Fig8Clients) + len(Fig8Locks); len(f8.Specs) != n {
		t.Errorf("fig8: %d points, want %d", len(f8.Specs), n)
	}
	if n := 3 * (len(Fig9Cores) + 1); len(f9.Specs) != n {
		t.Errorf("fig9: %d points, want %d", len(f9.Specs), n)
	}
	for _, f := range []*Figure{f8, f9} {
		for _, s := range f.Specs {
			p := s.Params
			if p.Workers != Fig89Workers {
				t.Errorf("%s %s: %d workers per client", f.Name, s.Label, p.Workers)
			}
			if f == f9 && (p.Clients != Fig9Clients || p.Servers != 1) {
				t.Errorf("fig9 %s: %d clients, %d servers", s.Label, p.Clients, p.Servers)
			}
			if s.Slots == 0 {
				continue
			}
			_, locks := microPhase(s.Variant, p.Clients*p.Workers, max(1, locksOf(Result{Spec: s, Clients: p.Clients, Workers: p.Workers})))
			if periods := int(s.Warmup / s.AllocPeriod); periods*64*p.Servers < locks {
				t.Errorf("%s %s: %d allocation periods for %d locks", f.Name, s.Label, periods, locks)
			}
		}
	}
	if last := f8.Specs[len(f8.Specs)-1]; last.Params.Clients != 12 || last.Phase != "contended/5000" {
		t.Errorf("fig8's last point: %d clients, %s", last.Params.Clients, last.Phase)
	}
}

// TestFig9Controls: Figure 9 quick is deterministic for its seed, and its shape check fails on a
// rack where one core is not the bottleneck (server CPU of 1ns: the clients bound every server
// alike, and cores do not help), the negative control of the check on real runs.
func TestFig9Controls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four sweeps of the rack model")
	}
	p := tiny
	p.ServerCPU = 5 * time.Microsecond
	var runs [2]*Figure
	for i := range runs {
		runs[i] = Fig9(Options{Params: p, Quick: true, Seed: 7})
		if err := runs[i].Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range runs[0].Results {
		if q := runs[1].Results[i]; q.Counters != r.Counters || q.Acquire != r.Acquire {
			t.Errorf("seed 7, %s: two runs differ: %+v and %+v", r.Label, r.Counters, q.Counters)
		}
	}
	p.ServerCPU = time.Nanosecond
	f := Fig9(Options{Params: p, Quick: true, Seed: 7})
	if err := f.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := f.CheckShape(); !errors.Is(err, ErrCores) {
		t.Errorf("servers of 1ns a request: CheckShape = %v, want %v", err, ErrCores)
	}
}

// runChecked runs f and checks every point: transactions committed, no violation, and no switch
// grant where the switch had no memory (every lock on the servers).
func runChecked(t *testing.T, f *Figure) *Figure {
	t.Helper()
	if err := f.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Results {
		if r.Txns() == 0 || r.Violations != 0 {
			t.Errorf("%s %s: %d txns, %d violations", f.Name, r.Label, r.Counters.Txns, r.Violations)
		}
		if r.Slots == 0 && r.NetChain == nil && r.SwitchRPS != 0 {
			t.Errorf("%s %s: no switch memory but %.0f switch grants/s", f.Name, r.Label, r.SwitchRPS)
		}
		if r.NetChain != nil && (r.ServerRPS != 0 || r.SwitchRPS == 0) {
			t.Errorf("%s %s: NetChain, but %.0f server grants/s and %.0f switch grants/s", f.Name, r.Label, r.ServerRPS, r.SwitchRPS)
		}
	}
	return f
}
