package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDemoOutputOrder: with stdout and stderr in one file (not a terminal), `netlock demo` prints
// the header first, then a progress line per phase, then the table: the table's column names
// come after the progress lines, the header before them.
func TestDemoOutputOrder(t *testing.T) {
	var both bytes.Buffer
	resetFlags(rootCmd)
	rootCmd.SetArgs([]string{"demo", "--loopback", "--phases", "shared,contended/1", "--clients", "1", "--workers", "1",
		"--duration", "200ms"})
	rootCmd.SetOut(&both)
	rootCmd.SetErr(&both)
	if err := rootCmd.Execute(); err != nil {
		t.Fatalf("netlock demo: %v\n%s", err, both.String())
	}
	out := both.String()
	header := strings.Index(out, "netlock demo: ")
	progress := strings.Index(out, "\nshared ")
	progress1 := strings.Index(out, "\ncontended/1 ")
	columns := strings.Index(out, "\nphase ")
	if header != 0 || progress < 0 || progress1 < progress || columns < progress1 {
		t.Errorf("output out of order (header at %d, progress at %d and %d, column names at %d):\n%s", header, progress,
			progress1, columns, out)
	}
}
