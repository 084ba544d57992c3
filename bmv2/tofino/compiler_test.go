package tofino

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReportRead reads a logs directory laid out as p4c-barefoot writes it (resources.json in
// the shape of bf-p4c's compiler_interfaces/schemas/resources_schema.py), takes the stage count
// from resources.json when table_summary.log has none, and refuses a resources.json without the
// pipe's stages.
func TestReportRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("table_summary.log", "Table allocation done 1 time(s), state = INITIAL\nNumber of stages in table allocation: 7\n  Number of stages for ingress table allocation: 7\n")
	write("resources.json", `{"compiler_version": "9.13.4 (34b86e9)", "schema_version": "1.0.0",
	  "resources": {"mau": {"nStages": 12, "mau_stages": [
	    {"stage_number": 0, "rams": {"nRows": 8, "nColumns": 10, "srams": [{"row": 0, "column": 2, "usages": []}, {"row": 1, "column": 2, "usages": []}]},
	     "tcams": {"nRows": 12, "nColumns": 2, "tcams": [{"row": 0, "column": 0, "usages": []}]},
	     "meter_alus": {"nAlus": 4, "meters": [{"row": 1, "usages": []}]},
	     "hash_bits": {"nBits": 416, "nFunctions": 8, "bits": [{"hash_bit": 0}, {"hash_bit": 1}]},
	     "hash_distribution_units": {"units": [{"id": 0}]},
	     "logical_tables": {"size": 16, "ids": [{"id": 0, "table_name": "t"}]},
	     "vliw": {"size": 32, "instructions": [{"number": 0}, {"number": 1}, {"number": 2}]}},
	    {"stage_number": 1, "rams": {"srams": [{"row": 3, "column": 4, "usages": []}]},
	     "meter_alus": {"meters": [{"row": 3, "usages": []}, {"row": 5, "usages": []}]}}]}}}`)
	// phv.json in the shape p4c-barefoot 9.13.4 writes it (cut from tna_simple_switch.p4's): two
	// fields overlaid in a 16-bit container, one field in a tagalong container, an empty
	// container, an egress field split over two containers, and fields not allocated.
	write("phv.json", `{"containers": [
	  {"bit_width": 16, "container_type": "normal", "gress": "ingress", "phv_number": 129, "slices": [
	    {"field_slice": {"field_name": "ig_intr_md.ingress_port", "slice_info": {"lsb": 0, "msb": 8}}, "slice_info": {"lsb": 0, "msb": 8}},
	    {"field_slice": {"field_name": "ig_md.bd", "slice_info": {"lsb": 0, "msb": 15}}, "slice_info": {"lsb": 0, "msb": 15}}]},
	  {"bit_width": 32, "container_type": "tagalong", "gress": "ingress", "slices": [
	    {"field_slice": {"field_name": "hdr.ipv4.src_addr", "slice_info": {"lsb": 0, "msb": 31}}, "slice_info": {"lsb": 0, "msb": 31}}]},
	  {"bit_width": 8, "container_type": "normal", "gress": "ingress", "slices": []},
	  {"bit_width": 8, "container_type": "normal", "gress": "egress", "slices": [
	    {"field_slice": {"field_name": "eg_md.x", "slice_info": {"lsb": 0, "msb": 7}}, "slice_info": {"lsb": 0, "msb": 7}}]},
	  {"bit_width": 8, "container_type": "normal", "gress": "egress", "slices": [
	    {"field_slice": {"field_name": "eg_md.x", "slice_info": {"lsb": 8, "msb": 11}}, "slice_info": {"lsb": 0, "msb": 3}}]},
	  {"bit_width": 8, "container_type": "normal", "gress": "ghost", "slices": [
	    {"field_slice": {"field_name": "gh.y", "slice_info": {"lsb": 0, "msb": 7}}, "slice_info": {"lsb": 0, "msb": 7}}]}],
	  "fields": [
	    {"field_info": {"bit_width": 9, "field_class": "imeta", "field_name": "ig_intr_md.ingress_port", "gress": "ingress"}, "status": "allocated"},
	    {"field_info": {"bit_width": 16, "field_class": "meta", "field_name": "ig_md.bd", "gress": "ingress"}, "status": "allocated"},
	    {"field_info": {"bit_width": 32, "field_class": "pkt", "field_name": "hdr.ipv4.src_addr", "gress": "ingress"}, "status": "allocated"},
	    {"field_info": {"bit_width": 1, "field_class": "imeta", "field_name": "ig_intr_md.resubmit_flag", "gress": "ingress"}, "status": "unreferenced"},
	    {"field_info": {"bit_width": 12, "field_class": "meta", "field_name": "eg_md.x", "gress": "egress"}, "status": "partially allocated"},
	    {"field_info": {"bit_width": 8, "field_class": "meta", "field_name": "eg_md.z", "gress": "egress"}, "status": "eliminated"},
	    {"field_info": {"bit_width": 8, "field_class": "meta", "field_name": "gh.y", "gress": "ghost"}, "status": "allocated"}]}`)
	r := &Report{}
	if err := r.read(dir); err != nil {
		t.Fatal(err)
	}
	if r.Stages != 7 || r.AvailableStages != 12 || r.SRAMs != 3 || r.TCAMs != 1 || r.MeterALUs != 3 || r.HashBits != 2 ||
		r.HashDist != 1 || r.LogicalTables != 1 || r.VLIW != 3 || len(r.PerStage) != 2 || r.CompilerVersion != "9.13.4 (34b86e9)" {
		t.Fatalf("report %+v", r)
	}
	if want := (PHVUse{Containers: [2]int{1, 2}, ContainerBits: [2]int{16, 16}, TagalongBits: [2]int{32, 0},
		FieldBits: [2]int{57, 12}, SliceBits: [2]int{57, 12}, Fields: [2]int{3, 1}}); r.PHVUse != want {
		t.Errorf("PHV use %+v, want %+v", r.PHVUse, want)
	}
	// p4c-barefoot 9.13.4 leaves table_summary.log empty: the stage count is then the last stage
	// resources.json gives a logical table, plus one (stage 0 here; stage 1 has none).
	write("table_summary.log", "")
	r = &Report{}
	if err := r.read(dir); err != nil || r.Stages != 1 {
		t.Errorf("without the summary's stage count: stages %d, %v; want 1 from resources.json", r.Stages, err)
	}
	write("phv.json", `{"containers": [{"bit_width": 8, "gress": "ingress", "slices": [{"slice_info": {"lsb": 7, "msb": 0}}]}]}`)
	if err := (&Report{}).read(dir); err == nil {
		t.Error("a phv.json with a slice [0:7] was read")
	}
	write("resources.json", `{"resources": {"mau": {"mau_stages": []}}}`)
	if err := (&Report{}).read(dir); err == nil {
		t.Error("a resources.json without nStages was read")
	}
}

// TestCompileFailures runs Compile with stand-ins for p4c-barefoot: one that refuses the program
// (ErrCompile with its output) and one that does not finish in time (a timeout, not a refusal).
func TestCompileFailures(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	refuse := script("refuse", `echo "netlock.p4(7): error: too many RegisterActions" >&2; exit 1`)
	r, err := Compile(context.Background(), "netlock.p4", CompileOptions{Compiler: refuse, Target: "tofino", Arch: "tna",
		OutDir: filepath.Join(dir, "out1")})
	if !errors.Is(err, ErrCompile) || !strings.Contains(err.Error(), "too many RegisterActions") || r == nil {
		t.Errorf("a refusal: %v", err)
	}
	if r.SuperCluster[0].Bits != 0 || r.Unallocated[0].Slices != 0 {
		t.Errorf("a refusal before clustering: super cluster %+v, unallocated %+v", r.SuperCluster[0], r.Unallocated)
	}
	// A program whose fields do not fit: the slices left over, by gress (the listing as bf-p4c
	// 9.13.4 prints it; hand-written).
	out3 := filepath.Join(dir, "out3")
	full := script("full", "mkdir -p "+out3+"/pipe/logs && echo '"+`{"containers": [{"bit_width": 32, "container_type": "normal", "gress": "ingress", "slices": [{"slice_info": {"lsb": 0, "msb": 31}}]}], "fields": []}`+"' > "+out3+`/pipe/logs/phv.json
cat >&2 <<'END'
error: PHV allocation was not successful
4 field slices remain unallocated

The following fields were not allocated: 
    ingress::seq_0<64b>[14:0]
    ingress::binc_0<1b>
    ingress::hdr.admin.value_hi<32b>[31:17]
    egress::hdr.ans.txn<64b>[63:32]


3 errors, 111 warnings generated.
END
exit 1`)
	r, err = Compile(context.Background(), "netlock.p4", CompileOptions{Compiler: full, Target: "tofino", Arch: "tna",
		OutDir: out3})
	if want := [2]Unallocated{{Slices: 3, Bits: 15 + 1 + 15}, {Slices: 1, Bits: 32}}; !errors.Is(err, ErrCompile) || r == nil || r.Unallocated != want {
		t.Errorf("a PHV that does not fit: %v, report %+v, want unallocated %+v", err, r, want)
	}
	if r != nil && r.PHVUse.ContainerBits[0] != 32 {
		t.Errorf("a PHV that does not fit: the partial allocation not read: %+v", r.PHVUse)
	}
	// A compiler that clusters and then runs past its timeout (as bf-p4c in a long PHV
	// allocation): the report still has the super clusters, and the error says it ran out of time.
	if err := os.WriteFile(filepath.Join(dir, "clusters.log"), []byte(clusterLog), 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "out2")
	slow := script("slow", "mkdir -p "+out2+"/pipe/logs && cp "+filepath.Join(dir, "clusters.log")+" "+out2+"/pipe/logs/phv_allocation_0.log && exec sleep 30")
	r, err = Compile(context.Background(), "netlock.p4", CompileOptions{Compiler: slow, Target: "tofino", Arch: "tna",
		OutDir: out2, Timeout: 500 * time.Millisecond})
	if errors.Is(err, ErrCompile) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not finish within 500ms") {
		t.Errorf("a compile past its timeout: %v", err)
	}
	if r == nil || r.SuperCluster[0].Bits != 80 || r.SuperCluster[1].Bits != 16 {
		t.Errorf("a compile past its timeout: report %+v", r)
	}
}

// TestReadPlacement reads the placement rounds of a table_summary.log as p4c-barefoot 9.13.4
// writes it with -Ttable_summary:1: the first round's header is p4/tna/netlock.p4's at 4ddbc8d
// (2026-11-30, NETLOCK_PART_BITS 14), cut before its table; the second round is made up in the
// same form. A log without a round reads as none.
func TestReadPlacement(t *testing.T) {
	log := `Table allocation done 1 time(s), state = INITIAL
Number of stages in table allocation: 29
  Number of stages for ingress table allocation: 29
  Number of stages for egress table allocation: 2
Critical path length through the table dependency graph: 73
Number of tables allocated: 201
+-------+-----------------+-----------------------------+
| Stage | Min / Max Stage |         Table Name          |
+-------+-----------------+-----------------------------+
|   0   |    [ 0, - ]     |         tbl_h_now_b         |
Table allocation done 2 time(s), state = NOCC_TRY1
Number of stages in table allocation: 27
  Number of stages for ingress table allocation: 27
  Number of stages for egress table allocation: 1
Critical path length through the table dependency graph: 73
Number of tables allocated: 190
`
	got := readPlacement([]byte(log))
	want := []PlacementRound{
		{State: "INITIAL", Stages: 29, GressStages: [2]int{29, 2}, Tables: 201, CriticalPath: 73},
		{State: "NOCC_TRY1", Stages: 27, GressStages: [2]int{27, 1}, Tables: 190, CriticalPath: 73},
	}
	if len(got) != len(want) {
		t.Fatalf("rounds %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("round %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if r := readPlacement([]byte("Number of stages in table allocation: 7\n")); r != nil {
		t.Errorf("a log without a round: %+v", r)
	}
}

// TestAssemble runs the assembler step with stand-ins for bfas: one that refuses the assembly
// (ErrAssemble, its error lines and not its warnings), one that writes the binary, and one that
// exits 0 without it (also ErrAssemble: no binary is no build).
func TestAssemble(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(out, "pipe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "pipe", "netlock.bfa"), []byte("version: 1.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// as bfas (p4c 34b86e9) refused bf-p4c's Tofino 2 assembly on 2026-12-01 (shortened)
	refuse := script("refuse", `echo "netlock.bfa:2242: warning: duplicate hash group 1, will merge with" >&2
echo "netlock.bfa:6808: error: action bus slice (0..31) can't fit in a single slot for 16 bit access" >&2
exit 1`)
	r := &Report{}
	err := r.assemble(context.Background(), CompileOptions{Assembler: refuse, Target: "tofino2", OutDir: out}, filepath.Join(out, "pipe"), filepath.Join(out, "asm"))
	if !errors.Is(err, ErrAssemble) || !strings.Contains(err.Error(), "can't fit in a single slot") || strings.Contains(err.Error(), "duplicate hash group") || r.Binary != "" {
		t.Errorf("a refusal: %v, binary %q", err, r.Binary)
	}
	// bfas's arguments: -o DIR -g FILE.bfa
	good := script("good", `touch "$2/tofino2.bin" "$2/context.json"`)
	r = &Report{}
	if err := r.assemble(context.Background(), CompileOptions{Assembler: good, Target: "tofino2", OutDir: out}, filepath.Join(out, "pipe"), filepath.Join(out, "asm")); err != nil || r.Binary != filepath.Join(out, "asm", "tofino2.bin") {
		t.Errorf("an assembly: %v, binary %q", err, r.Binary)
	}
	// as bfas assembled bf-p4c's (p4c 34b86e9) Tofino 2 output of the program on 2026-12-01:
	// a binary whose parser takes the first transition of every select (ErrParserMatch)
	shadow := script("shadow", `echo "netlock.bfa:993: warning: Can't match parser state due to previous match" >&2
echo "netlock.bfa:1012: warning: Can't match parser state due to previous match" >&2
touch "$2/tofino2.bin"`)
	r = &Report{}
	err = r.assemble(context.Background(), CompileOptions{Assembler: shadow, Target: "tofino2", OutDir: out}, filepath.Join(out, "pipe"), filepath.Join(out, "asm"))
	if !errors.Is(err, ErrParserMatch) || !strings.Contains(err.Error(), "2 parser states") {
		t.Errorf("a parser that cannot match: %v", err)
	}
	none := script("none", `exit 0`)
	r = &Report{}
	if err := r.assemble(context.Background(), CompileOptions{Assembler: none, Target: "tofino", OutDir: out}, filepath.Join(out, "pipe"), filepath.Join(out, "asm")); !errors.Is(err, ErrAssemble) || r.Binary != "" {
		t.Errorf("no binary: %v, binary %q", err, r.Binary)
	}
}

// TestCompilePipelines runs CompilePipelines with a stand-in for p4c-barefoot that writes the
// output of a program of two Pipelines, as bf-p4c does (OUT/pipe_a, OUT/pipe_b): one Report
// each, in their names' order, read from its own directory; Compile refuses such a program.
func TestCompilePipelines(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var sh strings.Builder
	sh.WriteString("#!/bin/sh\n")
	for name, stages := range map[string]int{"pipe_b": 9, "pipe_a": 12} {
		logs := filepath.Join(out, name, "logs")
		fmt.Fprintf(&sh, "mkdir -p %s\n", logs)
		fmt.Fprintf(&sh, "printf 'Table allocation done 1 time(s), state = INITIAL\\nNumber of stages in table allocation: %d\\n' > %s/table_summary.log\n", stages, logs)
		fmt.Fprintf(&sh, `echo '{"compiler_version": "9.13.4", "resources": {"mau": {"nStages": 12, "mau_stages": [{"stage_number": 0, "meter_alus": {"meters": [{"row": 1}]}}]}}}' > %s/resources.json`+"\n", logs)
	}
	bin := filepath.Join(dir, "p4c")
	if err := os.WriteFile(bin, []byte(sh.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	opt := CompileOptions{Compiler: bin, Target: "tofino", Arch: "tna", OutDir: out}
	rs, err := CompilePipelines(context.Background(), "fold.p4", opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Pipeline != "pipe_a" || rs[0].Stages != 12 || rs[1].Pipeline != "pipe_b" || rs[1].Stages != 9 ||
		rs[0].MeterALUs != 1 || rs[0].AvailableStages != 12 {
		for _, r := range rs {
			t.Logf("%s: %+v", r.Pipeline, *r)
		}
		t.Fatalf("%d reports, want pipe_a (12 stages) and pipe_b (9)", len(rs))
	}
	if r, err := Compile(context.Background(), "fold.p4", opt); err == nil || !strings.Contains(err.Error(), "2 Pipelines") || r == nil {
		t.Errorf("Compile of two Pipelines: %v", err)
	}
}
