package front

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestTNAUnknownTableProperty: bf-p4c warns about a table property it does not know and ignores
// it; so does the front end for TNA programs (testdata/accept/tna_table_props.p4), while a
// v1model program still refuses one (testdata/reject/table_props.p4).
func TestTNAUnknownTableProperty(t *testing.T) {
	c, err := Load("testdata/accept/tna_table_props.p4")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Error(), "unknown table property some_vendor_hint") {
		t.Fatalf("warnings %v, want one for some_vendor_hint", c.Warnings)
	}
}

// saluSource is a TNA program with one register action per register, each apply body as given.
func saluSource(bodies map[string]string) string {
	var b strings.Builder
	b.WriteString(`#include "tna_skel.inc"
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
`)
	names := make([]string, 0, len(bodies))
	for n := range bodies {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "    Register<bit<32>, bit<32>>(1024) r_%s;\n", n)
		fmt.Fprintf(&b, "    RegisterAction<bit<32>, bit<32>, bit<32>>(r_%s) %s = {\n        void apply(inout bit<32> v, out bit<32> rv) { rv = 0; %s }\n    };\n", n, n, bodies[n])
	}
	b.WriteString("    apply {\n")
	for _, n := range names {
		fmt.Fprintf(&b, "        md.val = %s.execute(md.idx);\n", n)
	}
	b.WriteString("        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;\n    }\n}\n#include \"tna_main.inc\"\n")
	return b.String()
}

// saluWarnings loads src (including testdata/reject's scaffolding) for Tofino gen and returns its
// stateful ALU warnings as "action: kind" (kind: comparisons, sliced, concatenates).
func saluWarnings(t *testing.T, src, gen string) []string {
	t.Helper()
	read := func(p string) ([]byte, error) {
		if p == "main.p4" {
			return []byte(src), nil
		}
		return os.ReadFile(p)
	}
	c, err := LoadOptions("main.p4", Options{ReadFile: read, IncludeDirs: []string{"testdata/reject"},
		Defines: map[string]string{"__TARGET_TOFINO__": gen}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range c.Warnings {
		msg := w.Error()
		i := strings.Index(msg, "RegisterAction ")
		if i < 0 {
			continue
		}
		name, rest, _ := strings.Cut(msg[i+len("RegisterAction "):], ":")
		for _, kind := range []string{"comparisons", "sliced", "concatenates"} {
			if strings.Contains(rest, kind) {
				out = append(out, name+": "+kind)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestTNAStatefulALUWarnings: register actions bf-p4c's stateful ALU cannot hold (more
// comparisons than its units, a slice of the register's value in a condition, a concatenation of
// the register's value) are warned about, and their twins that fit are not (the negative
// controls: two comparisons, one of them written four ways; a slice of a packet field in a
// condition; a concatenation of packet fields; a zero extension). Tofino 2 has four units.
func TestTNAStatefulALUWarnings(t *testing.T) {
	src := saluSource(map[string]string{
		"cmp2":        "if (v == md.val && md.idx > v) { rv = 1; } if (md.val != v || v >= md.idx) { rv = 2; } if (v < md.idx) { rv = 3; }",
		"cmp3":        "if (v == md.val) { rv = 1; } else if (v > md.idx) { rv = 2; } else if (v == 7) { rv = 3; }",
		"cmp5":        "if (v == 1 || v == 2 || v == 3 || v == 4 || v == 5) { rv = 1; }",
		"slice_cond":  "if (v[7:0] == 1) { v = 0; }",
		"slice_field": "if (md.val[7:0] == 1) { v = 0; }",
		"concat_reg":  "rv = v[15:0] ++ md.val[15:0];",
		"concat_pkt":  "v = md.val[15:0] ++ md.idx[15:0];",
		"zero_ext":    "rv = 16w0 ++ md.val[15:0];",
	})
	for _, tc := range []struct {
		gen  string
		want []string
	}{
		{"1", []string{"cmp3: comparisons", "cmp5: comparisons", "concat_reg: concatenates", "slice_cond: sliced"}},
		{"2", []string{"cmp5: comparisons", "concat_reg: concatenates", "slice_cond: sliced"}},
	} {
		if got := saluWarnings(t, src, tc.gen); !slices.Equal(got, tc.want) {
			t.Errorf("Tofino %s: warnings %q, want %q", tc.gen, got, tc.want)
		}
	}
}

// TestTNAStatefulALUNetlock pins the register actions of p4/tna/netlock.p4 that the stateful ALU
// rules warn about (docs/dataplane.md, "The real compiler"), so a change to the program or to
// the rules shows here.
func TestTNAStatefulALUNetlock(t *testing.T) {
	c, err := Load("../../p4/tna/netlock.p4")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, w := range c.Warnings {
		msg := w.Error()
		if i := strings.Index(msg, "RegisterAction "); i >= 0 {
			name, _, _ := strings.Cut(msg[i+len("RegisterAction "):], ":")
			seen[name] = true
		}
	}
	got := make([]string, 0, len(seen))
	for n := range seen {
		got = append(got, n)
	}
	sort.Strings(got)
	want := []string{"ended_seen", "flags_wdraw", "floor_cmp", "gnext_wr0", "gnext_wr1", "q_upd", "state_upd", "wait_dec", "wait_inc", "wait_rd"}
	if !slices.Equal(got, want) {
		t.Errorf("register actions warned about: %q, want %q", got, want)
	}
}
