package stf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
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
	root := os.Getenv("NETLOCK_OPEN_TOFINO")
	if root == "" {
		t.Skip("set NETLOCK_OPEN_TOFINO to an Open-Tofino checkout (commit 5a805ae) to run the restated example tests")
	}
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
