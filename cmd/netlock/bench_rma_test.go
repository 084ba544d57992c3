package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// netlock bench rma runs one figure at a small scale and writes its files.
func TestBenchRMA(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "bench", "rma", "--figs", "fig5", "--procs", "16,32", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "tables.md", "fig5.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v (output %s)", f, err, out)
		}
	}
	tables, _ := os.ReadFile(filepath.Join(dir, "tables.md"))
	if !strings.Contains(string(tables), "central-rw") {
		t.Fatalf("tables without the baseline:\n%s", tables)
	}
	if _, _, err := run(t, "bench", "rma", "--figs", "fig9"); err == nil {
		t.Fatal("unknown figure accepted")
	}
}
