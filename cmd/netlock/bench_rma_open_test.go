package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// netlock bench rma-open runs Fig. 4d's open loop at a small scale and writes its files.
func TestBenchRMAOpen(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "bench", "rma-open", "--quick", "--procs", "32", "--loads", "0.5", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"open.json", "open.md", "fig4d-open.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v (output %s)", f, err, out)
		}
	}
	if !strings.Contains(out, "| 32 | 0.50 |") {
		t.Fatalf("output lacks the P=32 rows:\n%s", out)
	}
}
