package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// resetFlags puts every flag of the command tree back to its default, so that the global command
// line can be executed again in-process (pflag keeps values, --help included, across parses).
func resetFlags(c *cobra.Command) {
	reset := func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			_ = sv.Replace(nil)
		} else {
			_ = f.Value.Set(f.DefValue)
		}
		f.Changed = false
	}
	c.Flags().VisitAll(reset)
	c.PersistentFlags().VisitAll(reset)
	for _, sub := range c.Commands() {
		resetFlags(sub)
	}
}

// run executes the netlock command line in-process and returns what it printed.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	resetFlags(rootCmd)
	rootCmd.SetArgs(args)
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&errb)
	err = rootCmd.Execute()
	return out.String(), errb.String(), err
}

const frontData = "../../bmv2/front/testdata"

func TestP4Check(t *testing.T) {
	out, _, err := run(t, "p4", "check", filepath.Join(frontData, "accept", "basic.p4"))
	if err != nil || strings.TrimSpace(out) != "OK" {
		t.Fatalf("check of an accepted program: %q, %v", out, err)
	}
	bad := filepath.Join(frontData, "reject", "abstract_extern.p4")
	want, err := os.ReadFile(strings.TrimSuffix(bad, ".p4") + ".err")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(want)), "\n")
	out, _, err = run(t, "p4", "check", bad)
	if err == nil {
		t.Fatalf("check of a rejected program succeeded: %q", out)
	}
	// The expected message (its text after the position) is printed.
	_, msg, _ := strings.Cut(first, ": ")
	if !strings.Contains(out, msg) {
		t.Fatalf("output %q lacks %q", out, msg)
	}
}

func TestP4Info(t *testing.T) {
	out, _, err := run(t, "p4", "info", filepath.Join(frontData, "accept", "basic.p4"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join(frontData, "accept", "basic.p4info.txtpb"))
	if err != nil {
		t.Fatal(err)
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if norm(out) != norm(string(golden)) {
		t.Fatalf("p4 info differs from the golden P4Info:\n%s", out)
	}
}

func TestBenchCore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a one-second benchmark")
	}
	out, _, err := run(t, "bench", "core", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r CoreResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bench core --json printed %q: %v", out, err)
	}
	if r.Pairs == 0 || r.PairsPerSec <= 0 || r.AllocsPerOp != 0 {
		t.Fatalf("bench core: %+v (want pairs measured and 0 allocations per pair)", r)
	}
}

func TestServerAndDemoFlagsValidated(t *testing.T) {
	for _, args := range [][]string{
		{"server", "--listen", "127.0.0.1:0", "--shards", "-1"},
		{"server", "--config", filepath.Join(t.TempDir(), "missing.yaml")},
		{"demo", "--phases", "bogus"},
		{"demo", "--clients", "0", "--workers", "-2"},
		{"demo", "--loopback", "--udp-ports"},
		{"demo", "--pipeline", "bogus"},
		{"demo", "--loopback", "--pipeline", "gen"},
		{"loadgen"},
		{"loadgen", "--servers", "127.0.0.1:1", "--phases", "crash"},
		{"loadgen", "--servers", "127.0.0.1:1", "--node", "3", "--nodes", "2"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("netlock %s: no error", strings.Join(args, " "))
		}
	}
}

// TestP4Tofino runs the Tofino estimate on the TNA program for both generations: the figures
// are bmv2/tofino's (checked there and in p4/dataplane/dpengine); here, that the command prints
// them with the generation's capacities and says when the PHV demand exceeds the pipe's, and
// that it refuses a v1model program and an unknown target, and that --chain prints the
// critical path.
func TestP4Tofino(t *testing.T) {
	prog := filepath.Join("..", "..", "p4", "tna", "netlock.p4")
	// The verdict on the critical path: Tofino 1's 12 stages cannot hold it; Tofino 2's 20 do
	// (by the model: docs/dataplane.md, "Where it stands"; TestTofinoPassPHV keeps it so); so
	// do the logical tables. Sized
	// as on a Tofino (dataplane.TofinoSizing): at the default sizes a pool register's 131072
	// cells are more than a Tofino 2 stateful ALU reaches, which the estimate refuses.
	if _, _, err := run(t, "p4", "tofino", "--target", "tofino2", prog); err == nil || !strings.Contains(err.Error(), "stateful ALU reaches 23") {
		t.Errorf("tofino2 at the default sizes: %v, want the pool's registers refused", err)
	}
	for _, tc := range []struct{ target, capacity, verdict string }{
		{"tofino", "4096 PHV bits the stages reach + 2048 tagalong", "more than the pipe's 12, no layout of one pass fits"},
		{"tofino2", "5120 PHV bits the stages reach", "stages (ingress "},
	} {
		out, _, err := run(t, "p4", "tofino", "--target", tc.target, "-D", "NETLOCK_PART_BITS=14", prog)
		if err != nil {
			t.Fatalf("%s: %v", tc.target, err)
		}
		line := func(prefix string) string {
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, prefix) {
					return l
				}
			}
			t.Errorf("%s: no line %q:\n%s", tc.target, prefix, out)
			return ""
		}
		if fits := !strings.Contains(line("critical path of the table dependency graph"), "no layout of one pass fits"); fits != (tc.target == "tofino2") {
			t.Errorf("%s: the critical path fits the pipe: %v, want %v:\n%s", tc.target, fits, tc.target == "tofino2", out)
		}
		// The logical tables (docs/dataplane.md, "Where it stands"): by their earliest stages
		// they fit Tofino 2's 20 stages, not Tofino 1's 12.
		if l := line("logical tables (bf-p4c's, as modelled): "); strings.Contains(l, "no layout of one pass fits") != (tc.target == "tofino") {
			t.Errorf("%s: the logical tables' verdict: %s", tc.target, l)
		}
		for _, want := range []string{tc.capacity, "critical path of the table dependency graph (bf-p4c's, as modelled): ", tc.verdict,
			"stages by dependencies between values: ", "stateful ALUs: 31 of ", "PHV demand, ingress: ", "PHV demand, egress: ", "the compiler must overlay"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.target, want, out)
			}
		}
	}
	out, _, err := run(t, "p4", "tofino", "--chain", prog)
	if err != nil || !strings.Contains(out, "ingress: critical path ") || !strings.Contains(out, "  0  tbl_netlock") {
		t.Errorf("--chain: %v\n%s", err, out)
	}
	out, _, err = run(t, "p4", "tofino", "--pass-flags", "ptype=P_ACQ,ptype=P_REL", prog)
	if err != nil || !strings.Contains(out, "ingress pass ptype=P_ACQ: critical path ") || !strings.Contains(out, "ingress pass (no flag): critical path ") {
		t.Errorf("--pass-flags: %v\n%s", err, out)
	}
	if _, _, err := run(t, "p4", "tofino", "--pass-flags", "ptype=P_ACQ,meta", prog); err == nil || !strings.Contains(err.Error(), "not a variable") {
		t.Errorf("--pass-flags with a name that is no flag: %v", err)
	}
	if _, _, err := run(t, "p4", "tofino", filepath.Join("..", "..", "p4", "netlock.p4")); err == nil || !strings.Contains(err.Error(), "not a TNA Switch") {
		t.Errorf("a v1model program: %v", err)
	}
	if _, _, err := run(t, "p4", "tofino", "--target", "tofino3", prog); err == nil {
		t.Error("--target tofino3 was accepted")
	}
}
