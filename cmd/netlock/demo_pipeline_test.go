//go:build !netlock_nogen

package main

import (
	"strings"
	"testing"
)

// TestDemoPipeline: the netlock binary links p4/netlockgen, so `netlock demo` runs p4/netlock.p4
// on its generated pipeline by default (auto) and with --pipeline gen, on the interpreter with
// --pipeline interp, and its header line says which.
func TestDemoPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the rack")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "pipeline netlock)"},
		{[]string{"--pipeline", "gen"}, "pipeline netlock)"},
		{[]string{"--pipeline", "interp"}, "pipeline interpreter)"},
	} {
		t.Run(strings.Join(append([]string{"default"}, tt.args...), " "), func(t *testing.T) {
			args := append([]string{"demo", "--phases", "exclusive", "--clients", "1", "--workers", "1",
				"--duration", "300ms", "--warmup", "100ms"}, tt.args...)
			out, _, err := run(t, args...)
			if err != nil {
				t.Fatalf("netlock %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			header, _, _ := strings.Cut(strings.TrimLeft(out, "\n"), "\n")
			if !strings.Contains(header, tt.want) {
				t.Errorf("netlock %s: header %q, want %q in it", strings.Join(args, " "), header, tt.want)
			}
		})
	}
}
