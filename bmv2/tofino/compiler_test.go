package tofino

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	write("phv_allocation_summary_0.log", "+--+\n| Total 8-bit | 12 |\n| Total 32-bit | 40 |\nother\n"+
		"|     Overall PHV Usage     |    37 (16.52%)   |  697 (17.02%)  |      465 (11.35%)     |      232 (5.66%)     |    808 (19.73%)   |         520 (12.7%)        |         288 (7.03%)        |      4096      |\n")
	r := &Report{}
	if err := r.read(dir); err != nil {
		t.Fatal(err)
	}
	if r.Stages != 7 || r.AvailableStages != 12 || r.SRAMs != 3 || r.TCAMs != 1 || r.MeterALUs != 3 || r.HashBits != 2 ||
		r.HashDist != 1 || r.LogicalTables != 1 || r.VLIW != 3 || len(r.PerStage) != 2 || r.CompilerVersion != "9.13.4 (34b86e9)" {
		t.Fatalf("report %+v", r)
	}
	if !strings.Contains(r.PHV, "Total 32-bit") || strings.Contains(r.PHV, "other") {
		t.Errorf("PHV totals %q", r.PHV)
	}
	if want := (PHVUse{Containers: 37, Bits: 697, IngressBits: 465, EgressBits: 232, Alloc: 808, IngressAlloc: 520,
		EgressAlloc: 288, Available: 4096}); r.PHVUse != want {
		t.Errorf("PHV use %+v, want %+v", r.PHVUse, want)
	}
	// p4c-barefoot 9.13.4 leaves table_summary.log empty: the stage count is then the last stage
	// resources.json gives a logical table, plus one (stage 0 here; stage 1 has none).
	write("table_summary.log", "")
	r = &Report{}
	if err := r.read(dir); err != nil || r.Stages != 1 {
		t.Errorf("without the summary's stage count: stages %d, %v; want 1 from resources.json", r.Stages, err)
	}
	write("resources.json", `{"resources": {"mau": {"mau_stages": []}}}`)
	if err := (&Report{}).read(dir); err == nil {
		t.Error("a resources.json without nStages was read")
	}
}
