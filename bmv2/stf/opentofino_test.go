package stf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/internal/testenv"
)

// TestOpenTofinoScenarios runs the scenarios of testdata/opentofino, restated here from the
// PTF tests of Barefoot/Intel's TNA examples, against the example programs themselves, which
// are fetched, never committed (github.com/barefootnetworks/Open-Tofino at commit 5a805ae,
// p4-examples/p4_16_programs):
//
//	NETLOCK_OPEN_TOFINO=/tmp/opentofino go test ./bmv2/stf -run OpenTofino -v
//
// Without the checkout the test is skipped (also under CI: the programs cannot be vendored).
// The TNA programs written here in the examples' style (testdata/tna_*.p4) run in every
// test run.
func TestOpenTofinoScenarios(t *testing.T) {
	root := testenv.OptIn(t, "NETLOCK_OPEN_TOFINO", "an Open-Tofino checkout (commit 5a805ae) to run the restated example tests")
	dir := filepath.Join(root, "p4-examples", "p4_16_programs")
	stfs, _ := filepath.Glob("testdata/opentofino/*.stf")
	if len(stfs) == 0 {
		t.Fatal("no scenarios in testdata/opentofino")
	}
	for _, path := range stfs {
		name := strings.TrimSuffix(filepath.Base(path), ".stf")
		t.Run(name, func(t *testing.T) {
			checked, err := front.LoadOptions(filepath.Join(dir, name, name+".p4"), front.Options{IncludeDirs: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Unix(0, 0)
			sw, err := engine.Load(checked, engine.Config{Now: func() time.Time { now = now.Add(time.Microsecond); return now }})
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmds, err := Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(sw, cmds)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Failures {
				t.Error(m)
			}
		})
	}
}

// TestOpenTofinoEngineLoad loads every example program the front end accepts into the
// engine and checks which ones the engine refuses, and why, against openTofinoEngineRefused.
func TestOpenTofinoEngineLoad(t *testing.T) {
	root := testenv.OptIn(t, "NETLOCK_OPEN_TOFINO", "an Open-Tofino checkout (commit 5a805ae) to load the example programs")
	dir := filepath.Join(root, "p4-examples", "p4_16_programs")
	progs, _ := filepath.Glob(filepath.Join(dir, "*", "*.p4"))
	subs, _ := filepath.Glob(filepath.Join(dir, "*", "program_*", "*.p4"))
	accepted, loaded := 0, 0
	for _, p := range append(progs, subs...) {
		base := strings.TrimSuffix(filepath.Base(p), ".p4")
		d := filepath.Base(filepath.Dir(p))
		if base != d && !strings.HasPrefix(d, "program_") {
			continue // an included file
		}
		if strings.HasPrefix(d, "program_") && !strings.HasPrefix(base, filepath.Base(filepath.Dir(filepath.Dir(p)))) {
			continue
		}
		checked, err := front.LoadOptions(p, front.Options{IncludeDirs: []string{dir}})
		if err != nil {
			continue // the front end's verdict is TestOpenTofinoCorpus's (bmv2/front)
		}
		accepted++
		_, err = engine.Load(checked, engine.Config{})
		want, refused := openTofinoEngineRefused[base]
		switch {
		case err == nil && refused:
			t.Errorf("%s loads; openTofinoEngineRefused says %q", base, want)
		case err != nil && !refused:
			t.Errorf("%s: %v", base, err)
		case err != nil && !strings.Contains(err.Error(), want):
			t.Errorf("%s: %v, want an error with %q", base, err, want)
		case err == nil:
			loaded++
		default:
			t.Logf("%-28s refused: %v", base, err)
		}
	}
	t.Logf("front-end-accepted programs %d: loaded by the engine %d, refused %d", accepted, loaded, accepted-loaded)
	if accepted-loaded != len(openTofinoEngineRefused) {
		t.Errorf("%d refused, openTofinoEngineRefused lists %d", accepted-loaded, len(openTofinoEngineRefused))
	}
}

// openTofinoEngineRefused lists the accepted example programs the engine does not run.
var openTofinoEngineRefused = map[string]string{
	"tna_32q_2pipe":      "2 pipes (the engine runs one pipe)",
	"tna_meter_lpf_wred": "TNA extern Lpf",
	"tna_ternary_match":  "TNA extern DirectLpf",
}
