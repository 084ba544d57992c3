package stf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
)

// TestSuite runs every testdata/NAME.stf against testdata/NAME.p4. The expected packets in
// the .stf files were written by hand or computed independently (checksums and hashes in
// Python), never copied from the engine's output.
func TestSuite(t *testing.T) {
	stfs, err := filepath.Glob("testdata/*.stf")
	if err != nil || len(stfs) == 0 {
		t.Fatalf("no STF files: %v", err)
	}
	for _, path := range stfs {
		name := strings.TrimSuffix(filepath.Base(path), ".stf")
		t.Run(name, func(t *testing.T) {
			checked, err := front.Load(strings.TrimSuffix(path, ".stf") + ".p4")
			if err != nil {
				t.Fatal(err)
			}
			now := time.Unix(0, 0)
			sw, err := engine.Load(checked, engine.Config{Now: func() time.Time { now = now.Add(time.Microsecond); return now }})
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmds, err := Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(sw, cmds)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Failures {
				t.Error(m)
			}
			if res.Packets == 0 {
				t.Error("the test sends no packets")
			}
		})
	}
}

// TestCompare covers the expect pattern rules of p4c's testutils.compare_pkt.
func TestCompare(t *testing.T) {
	tests := []struct {
		exp  string
		got  []byte
		fail bool
	}{
		{"AABB", []byte{0xaa, 0xbb}, false},
		{"AABB", []byte{0xaa, 0xbb, 0xcc}, false},
		{"AABB$", []byte{0xaa, 0xbb, 0xcc}, true},
		{"AABB$", []byte{0xaa, 0xbb}, false},
		{"A*B*", []byte{0xa1, 0xb2}, false},
		{"A*B*", []byte{0xa1, 0xc2}, true},
		{"AABBCC", []byte{0xaa, 0xbb}, true},
	}
	for _, tt := range tests {
		if got := compare(tt.exp, tt.got) != ""; got != tt.fail {
			t.Errorf("compare(%q, %X) failed=%v, want %v", tt.exp, tt.got, got, tt.fail)
		}
	}
}

func TestTernaryAndLPMValues(t *testing.T) {
	v, m, err := ternary("0x0A**")
	if err != nil || v.Int64() != 0x0A00 || m.Int64() != 0xFF00 {
		t.Errorf("ternary(0x0A**) = %v %v %v", v, m, err)
	}
	v, m, err = ternary("5&&&7")
	if err != nil || v.Int64() != 5 || m.Int64() != 7 {
		t.Errorf("ternary(5&&&7) = %v %v %v", v, m, err)
	}
	x, n, err := lpm("0x0a01****")
	if err != nil || x.Int64() != 0x0a010000 || n != 16 {
		t.Errorf("lpm(0x0a01****) = %v %d %v", x, n, err)
	}
	x, n, err = lpm("10.0/8")
	if err == nil {
		t.Errorf("lpm(10.0/8) = %v %d, want an error", x, n)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("add t 1 a:0x0a** b(c:1)\npacket 0 AABB\nexpect 0 AA**$\n")
	f.Add("check_counter c(1) packets == 2\nmc_node_create 1 2 3\n")
	f.Fuzz(func(t *testing.T, s string) {
		cmds, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, c := range cmds {
			if c.Name == "" {
				t.Fatalf("empty command from %q", s)
			}
		}
	})
}

// TestRandomPackets sends random packets through every testdata program after its STF
// setup: the switch must neither panic nor fail (no program here asserts).
func TestRandomPackets(t *testing.T) {
	stfs, _ := filepath.Glob("testdata/*.stf")
	for _, path := range stfs {
		checked, err := front.Load(strings.TrimSuffix(path, ".stf") + ".p4")
		if err != nil {
			t.Fatal(err)
		}
		sw, err := engine.Load(checked, engine.Config{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cmds, err := Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var setup []Command
		for _, c := range cmds {
			if c.Name != "packet" && c.Name != "expect" {
				setup = append(setup, c)
			}
		}
		if _, err := Run(sw, setup); err != nil {
			t.Fatal(err)
		}
		if msg := shake(sw, 2000, true); msg != "" {
			t.Errorf("%s: %s", path, msg)
		}
	}
}
