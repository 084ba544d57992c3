package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/p4/dataplane"
)

// TestP4STFScenarios runs the scenarios' STF files (p4/testdata, written in p4/netlock.p4's
// terms) against both programs as their header says, the TNA program through
// dpengine.ScenarioSTF; the negative control is a file whose queue read is off by one, which
// must fail on both.
func TestP4STFScenarios(t *testing.T) {
	files, err := filepath.Glob("../../p4/testdata/*.stf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	progs := []string{"../../p4/netlock.p4", "../../p4/tna/netlock.p4"}
	for _, prog := range progs {
		for _, f := range files {
			t.Run(filepath.Base(filepath.Dir(prog))+"/"+filepath.Base(f), func(t *testing.T) {
				out, _, err := run(t, "p4", "stf", "--tofino", prog, f)
				if err != nil || !strings.HasPrefix(out, "PASS ") {
					t.Fatalf("netlock p4 stf --tofino %s %s: %v\n%s", prog, f, err, out)
				}
			})
		}
	}
	src, err := os.ReadFile("../../p4/testdata/ended.stf")
	if err != nil {
		t.Fatal(err)
	}
	// The first read of the queue counters, one more slot occupied at level 0 than there is.
	lines := strings.Split(string(src), "\n")
	found := false
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 4 && f[0] == "register_read" && f[1] == dataplane.RegisterQueue {
			v, err := strconv.ParseUint(f[3], 0, 64)
			if err != nil {
				t.Fatal(err)
			}
			lines[i] = strings.Join(append(f[:3], strconv.FormatUint(v+1, 10)), " ")
			found = true
			break
		}
	}
	if !found {
		t.Fatal("ended.stf reads no queue counters")
	}
	bad := filepath.Join(t.TempDir(), "bad.stf")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, prog := range progs {
		if out, _, err := run(t, "p4", "stf", "--tofino", prog, bad); err == nil || !strings.Contains(out, "FAIL") {
			t.Errorf("%s ran a wrong queue count: %v\n%s", prog, err, out)
		}
	}
}
