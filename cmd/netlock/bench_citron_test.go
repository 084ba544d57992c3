package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// netlock bench citron runs each experiment at a small scale and writes its files.
func TestBenchCitron(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args  []string
		files []string
		want  string
	}{
		{[]string{"micro", "--quick", "--threads", "6", "--schemes", "citron,ss-exact,server"}, []string{"micro.json", "micro.txt", "micro.png"}, "CITRON peak"},
		{[]string{"fastpath", "--quick", "--fp-threads", "6"}, []string{"fastpath.json", "fastpath.png"}, "fast-path"},
		{[]string{"k", "--quick", "--k-threads", "6", "--k", "1,2"}, []string{"k.json"}, "citron"},
		{[]string{"atomics", "--quick", "--threads", "6", "--schemes", "citron,ss-exact", "--atomics", "0,250,50"}, []string{"atomics-hotspot.json", "atomics.png"}, "| default (hashed unit, 250 ns) | 250 ns | 50 ns |"},
		{[]string{"falseconf", "--quick", "--trials", "200", "--k", "1,2", "--tree-n", "65536"}, []string{"falseconf.png"}, "false conflicts"},
	}
	for _, tc := range tests {
		args := append([]string{"bench", "citron"}, append(tc.args, "--out", dir, "--duration-us", "20", "--warmup-us", "5")...)
		out, _, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, out)
		}
		for _, f := range tc.files {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Fatalf("%v: %s: %v", tc.args, f, err)
			}
		}
		if !strings.Contains(out, tc.want) {
			t.Fatalf("%v: output lacks %q:\n%s", tc.args, tc.want, out)
		}
	}
	if _, _, err := run(t, "bench", "citron", "micro", "--quick", "--schemes", "nope", "--out", dir); err == nil {
		t.Fatal("unknown scheme accepted")
	}
	for _, bad := range [][]string{{"micro", "--same-word-ns", "-5"}, {"atomics", "--atomics", "100,-1"}, {"atomics", "--atomics", "1"}} {
		args := append([]string{"bench", "citron"}, append(bad, "--quick", "--threads", "6", "--schemes", "citron", "--out", dir,
			"--duration-us", "20", "--warmup-us", "5")...)
		if _, _, err := run(t, args...); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}
