package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSoftrackMicro runs `netlock softrack micro` briefly: both phases are measured, each with a
// row per rack, the servers-only rack's servers grant every lock (the column a reader takes the
// switch's share from), and the switch rack's switch holds locks at the end.
func TestSoftrackMicro(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two racks for about two seconds per phase")
	}
	var out bytes.Buffer
	resetFlags(rootCmd)
	rootCmd.SetArgs([]string{"softrack", "micro", "--warmup", "600ms", "--window", "200ms", "--rounds", "1"})
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	if err := rootCmd.Execute(); err != nil {
		t.Fatalf("netlock softrack micro: %v\n%s", err, out.String())
	}
	s := out.String()
	for _, phase := range []string{"\nshared:\n", "\nexclusive:\n"} {
		if !strings.Contains(s, phase) {
			t.Errorf("no %q phase:\n%s", strings.TrimSpace(phase), s)
		}
	}
	// | rack | txns/s | locks/s | servers' grants / locks | locks in the switch | failed txns | retransmitted / sent | ...
	row := regexp.MustCompile(`(?m)^\| (netlock, the whole pool|servers only) \| \d+ \| (\d+) \| ([0-9.]+) \| (\d+) \| 0 \| \d+ / \d+ \|`)
	rows := row.FindAllStringSubmatch(s, -1)
	if len(rows) != 4 {
		t.Fatalf("want 4 rack rows (2 phases x 2 racks), got %d:\n%s", len(rows), s)
	}
	for _, r := range rows {
		if r[2] == "0" {
			t.Errorf("rack %q granted no lock:\n%s", r[1], s)
		}
		// The servers' grants include those of transactions cut off at a window's end, so the
		// share may exceed 1; with every lock on the servers it is never below it.
		if share, _ := strconv.ParseFloat(r[3], 64); r[1] == "servers only" && (share < 0.995 || r[4] != "0") {
			t.Errorf("servers only: servers' share %s, %s locks in the switch; want >= 1 and 0", r[3], r[4])
		}
		if r[1] != "servers only" && r[4] == "0" {
			t.Errorf("the switch rack ended with no lock in the switch:\n%s", s)
		}
	}
	if n := strings.Count(s, "switch / servers only: **"); n != 2 {
		t.Errorf("want a ratio line per phase, got %d", n)
	}
}
