package main

import (
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
	for _, bad := range [][]string{{"--algs", "nope"}, {"--figures", "fig9"}, {"--profile", "tpcc"}, {"--orders", "random"}, {"--per", "rack"}} {
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
