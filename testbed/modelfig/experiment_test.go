package modelfig

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/testbed/rackmodel"
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
		{Fig10(Options{}), 4},
		{Fig15(Options{}), 0},
	} {
		if len(tc.f.Specs) != tc.want {
			t.Errorf("%s: %d points, want %d", tc.f.Name, len(tc.f.Specs), tc.want)
		}
		for _, s := range tc.f.Specs {
			if s.Params.Clients != 10 || s.Params.Servers != 2 {
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
		t.Skip("runs three sweeps of the rack model")
	}
	dir := t.TempDir()
	o := Options{Params: tiny, Quick: true, Warmup: time.Millisecond, Settle: 200 * time.Microsecond, Window: 500 * time.Microsecond}
	for _, mk := range []func(Options) *Figure{Fig13, Fig14, Fig10} {
		f := mk(o)
		if err := f.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Results {
			if r.Txns() == 0 || r.Violations != 0 {
				t.Errorf("%s %s: %d txns, %d violations", f.Name, r.Label, r.Counters.Txns, r.Violations)
			}
			if r.Slots == 0 && r.SwitchRPS != 0 {
				t.Errorf("%s %s: no switch memory but %.0f switch grants/s", f.Name, r.Label, r.SwitchRPS)
			}
		}
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
