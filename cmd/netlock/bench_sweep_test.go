package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The sweeps' progress lines come after every n-th point and after the last; the closing lines
// name the count, the note and every file.
func TestSweepOutput(t *testing.T) {
	var b bytes.Buffer
	p := sweepProgress[struct{}](&b, time.Now(), 3)
	for done := 1; done <= 7; done++ {
		p(done, 7, struct{}{})
	}
	if got := regexp.MustCompile(`\(\d+s\)`).ReplaceAllString(b.String(), "(T)"); got != "  3/7 points (T)\n  6/7 points (T)\n  7/7 points (T)\n" {
		t.Errorf("progress:\n%s", got)
	}
	for _, tc := range []struct {
		note string
		want string
	}{
		{"", "\n2 points in T; wrote:\n  a.json\n  b.png\n"},
		{"seed 5", "\n2 points in T (seed 5); wrote:\n  a.json\n  b.png\n"},
	} {
		b.Reset()
		printWrote(&b, 2, time.Now(), tc.note, []string{"a.json", "b.png"})
		if got := regexp.MustCompile(`in [0-9.]+[mµn]?s`).ReplaceAllString(b.String(), "in T"); got != tc.want {
			t.Errorf("note %q: got %q, want %q", tc.note, got, tc.want)
		}
	}
}

// netlock bench rdma runs a two-point sweep and writes its files; the closing lines name them.
func TestBenchRDMA(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "bench", "rdma", "--nodes", "2", "--locks", "20", "--threads", "1", "--locality", "100",
		"--algs", "alock,spinlock", "--duration-us", "50", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "summary.md", "throughput_2nodes.png"} {
		p := filepath.Join(dir, f)
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v (output %s)", f, err, out)
		}
		if !strings.Contains(out, "  "+p+"\n") {
			t.Errorf("output does not name %s:\n%s", p, out)
		}
	}
	if !strings.Contains(out, "\n2 points in ") {
		t.Errorf("output does not count the points:\n%s", out)
	}
}
