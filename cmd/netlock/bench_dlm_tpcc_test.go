package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// netlock bench dlm-tpcc --quick runs DSLR and DrTM under TPC-C and writes its files; bad
// arguments are refused.
func TestBenchDLMTPCC(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "bench", "dlm-tpcc", "--quick", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "results.txt", "tpcc-fig10.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v (output %s)", f, err, out)
		}
	}
	for _, want := range []string{"dslr", "drtm", "client", "ordered", "high", "low", "0.570"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	// The rack model's workload (no Stock-Level reads) and a slower network: recorded, and slower.
	slow := filepath.Join(dir, "slow")
	if _, _, err := run(t, "bench", "dlm-tpcc", "--quick", "--no-reads", "--one-way-ns", "6800", "--out", slow); err != nil {
		t.Fatal(err)
	}
	var fast, slowPs []struct {
		Alg     string  `json:"alg"`
		MRPS    float64 `json:"mrps"`
		NoReads bool    `json:"no_reads"`
	}
	for _, x := range []struct {
		dir string
		ps  any
	}{{dir, &fast}, {slow, &slowPs}} {
		b, err := os.ReadFile(filepath.Join(x.dir, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, x.ps); err != nil {
			t.Fatal(err)
		}
	}
	if len(fast) == 0 || len(fast) != len(slowPs) {
		t.Fatalf("%d and %d points", len(fast), len(slowPs))
	}
	for i := range fast {
		if fast[i].NoReads || !slowPs[i].NoReads || slowPs[i].MRPS >= fast[i].MRPS {
			t.Errorf("point %d (%s): %+v at 850 ns, %+v at 6.8 us one way without reads", i, fast[i].Alg, fast[i], slowPs[i])
		}
	}
	for _, bad := range [][]string{{"--algs", "nope"}, {"--figures", "fig9"}, {"--profile", "tpcc"}, {"--orders", "random"}, {"--per", "rack"}, {"--one-way-ns", "-1"}} {
		args := append([]string{"bench", "dlm-tpcc", "--quick", "--out", dir}, bad...)
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// netlock bench tpcc-share on a small trace prints the shares beside the paper's and writes
// its files.
func TestBenchTPCCShare(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "bench", "tpcc-share", "--profiles", "dslr-trace", "--warehouses", "10", "--txns", "100",
		"--slots", "2000,10000", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"shares.json", "shares.txt"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v (output %s)", f, err, out)
		}
	}
	for _, want := range []string{"dslr-trace", "0.329", "0.432", "warehouse"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := run(t, "bench", "tpcc-share", "--profiles", "nope", "--out", dir); err == nil {
		t.Error("unknown profile accepted")
	}
}
