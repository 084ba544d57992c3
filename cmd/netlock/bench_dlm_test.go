package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// netlock bench dlm --quick runs every workload for every algorithm and writes its files.
func TestBenchDLM(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "bench", "dlm", "--quick", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "results.txt", "micro.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v (output %s)", f, err, out)
		}
	}
	for _, want := range []string{"exclusive-contention", "dslr-backoff", "drtm"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := run(t, "bench", "dlm", "--algs", "nope", "--out", dir); err == nil {
		t.Fatal("unknown algorithm accepted")
	}
}
