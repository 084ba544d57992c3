package front

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/internal/testenv"
)

// TestOpenTofinoCorpus measures the front end on the P4_16 example programs Barefoot/Intel
// published for Tofino (github.com/barefootnetworks/Open-Tofino, p4-examples/p4_16_programs,
// removed from the repository's head after SDE 9.9.0, so take commit 5a805ae). The files are
// fetched, never committed:
//
//	git --git-dir=<Open-Tofino mirror> archive 5a805ae p4-examples | tar -x -C /tmp/opentofino
//	NETLOCK_OPEN_TOFINO=/tmp/opentofino go test ./bmv2/front -run OpenTofino -v
//
// Each example's main program (DIR/DIR.p4, and the two programs of tna_32q_multiprogram) is
// loaded as bf-p4c compiles it: with p4_16_programs as the include directory. A program is
// accepted, or refused for one of three reasons kept apart: a feature outside the netlock
// subset ("not supported by the netlock target"), a file the program needs that is not in
// the checkout, or an error of our checker (the examples compiled with Intel's bf-p4c, so any
// other diagnostic is a bug here, unless p4c's open-sourced Tofino backend refuses the example
// too: tna_simple_switch's egress parser depth). The verdict of every program must be the one recorded in
// openTofinoExpected; a change either way fails the test, so the table (and docs/p4.md)
// stays current.
func TestOpenTofinoCorpus(t *testing.T) {
	root := testenv.OptIn(t, "NETLOCK_OPEN_TOFINO", "an Open-Tofino checkout (commit 5a805ae, see the comment) to run the corpus")
	dir := filepath.Join(root, "p4-examples", "p4_16_programs")
	progs := openTofinoPrograms(t, dir)
	counts := map[string]int{}
	var lines []string
	for _, p := range progs {
		rel, _ := filepath.Rel(dir, p)
		verdict, why := classifyCorpus(p, dir)
		counts[verdict]++
		lines = append(lines, fmt.Sprintf("%-60s %-12s %s", rel, verdict, why))
		want, ok := openTofinoExpected[rel]
		if !ok {
			t.Errorf("%s: not in openTofinoExpected (verdict %s: %s)", rel, verdict, why)
			continue
		}
		if want.verdict != verdict || !strings.Contains(why, want.why) {
			t.Errorf("%s: verdict %s (%s), want %s (%q)", rel, verdict, why, want.verdict, want.why)
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("programs %d: accepted %d, unsupported feature %d, needs a file %d, checker error %d",
		len(progs), counts["accepted"], counts["unsupported"], counts["missing-file"], counts["checker"])
	if len(progs) != len(openTofinoExpected) {
		t.Errorf("found %d programs, openTofinoExpected lists %d", len(progs), len(openTofinoExpected))
	}
}

// openTofinoPrograms lists the main programs: DIR/DIR.p4 and DIR/program_X/DIR_X.p4.
func openTofinoPrograms(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if p := filepath.Join(dir, e.Name(), e.Name()+".p4"); fileExists(p) {
			out = append(out, p)
		}
		subs, _ := filepath.Glob(filepath.Join(dir, e.Name(), "program_*", e.Name()+"_*.p4"))
		out = append(out, subs...)
	}
	if len(out) == 0 {
		t.Fatalf("no programs under %s", dir)
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// classifyCorpus loads one program and returns its verdict (accepted, unsupported, missing-file,
// checker) and the first diagnostic.
func classifyCorpus(path, incDir string) (string, string) {
	_, err := LoadOptions(path, Options{IncludeDirs: []string{incDir}})
	if err == nil {
		return "accepted", ""
	}
	errs, ok := err.(ErrorList)
	if !ok || len(errs) == 0 {
		return "checker", err.Error()
	}
	for _, e := range errs {
		if strings.Contains(e.Msg, "cannot include") {
			return "missing-file", e.Error()
		}
	}
	for _, e := range errs {
		if strings.HasPrefix(e.Msg, "not supported by the netlock target") {
			return "unsupported", e.Error()
		}
	}
	return "checker", errs[0].Error()
}

type corpusVerdict struct {
	verdict string
	why     string // a substring of the first diagnostic
}

// openTofinoExpected is the verdict for each program of the corpus (p4rt_utests is a
// v1model program; the others are TNA).
var openTofinoExpected = map[string]corpusVerdict{
	"bri_with_pdfixed_thrift/bri_with_pdfixed_thrift.p4":       {"accepted", ""},
	"p4rt_utests/p4rt_utests.p4":                               {"accepted", ""},
	"tna_32q_2pipe/tna_32q_2pipe.p4":                           {"accepted", ""},
	"tna_32q_multiprogram/program_a/tna_32q_multiprogram_a.p4": {"accepted", ""},
	"tna_32q_multiprogram/program_b/tna_32q_multiprogram_b.p4": {"accepted", ""},
	"tna_action_profile/tna_action_profile.p4":                 {"accepted", ""},
	"tna_action_selector/tna_action_selector.p4":               {"accepted", ""},
	"tna_bridged_md/tna_bridged_md.p4":                         {"accepted", ""},
	"tna_checksum/tna_checksum.p4":                             {"accepted", ""},
	"tna_counter/tna_counter.p4":                               {"accepted", ""},
	"tna_custom_hash/tna_custom_hash.p4":                       {"accepted", ""},
	"tna_digest/tna_digest.p4":                                 {"accepted", ""},
	"tna_dkm/tna_dkm.p4":                                       {"accepted", ""},
	"tna_dyn_hashing/tna_dyn_hashing.p4":                       {"accepted", ""},
	"tna_exact_match/tna_exact_match.p4":                       {"accepted", ""},
	"tna_field_slice/tna_field_slice.p4":                       {"accepted", ""},
	"tna_idletimeout/tna_idletimeout.p4":                       {"accepted", ""},
	"tna_lpm_match/tna_lpm_match.p4":                           {"accepted", ""},
	"tna_meter_bytecount_adjust/tna_meter_bytecount_adjust.p4": {"accepted", ""},
	"tna_meter_lpf_wred/tna_meter_lpf_wred.p4":                 {"accepted", ""},
	"tna_mirror/tna_mirror.p4":                                 {"accepted", ""},
	"tna_multicast/tna_multicast.p4":                           {"accepted", ""},
	"tna_operations/tna_operations.p4":                         {"accepted", ""},
	"tna_pktgen/tna_pktgen.p4":                                 {"accepted", ""},
	"tna_port_metadata/tna_port_metadata.p4":                   {"accepted", ""},
	"tna_port_metadata_extern/tna_port_metadata_extern.p4":     {"accepted", ""},
	"tna_ports/tna_ports.p4":                                   {"accepted", ""},
	"tna_proxy_hash/tna_proxy_hash.p4":                         {"accepted", ""},
	"tna_pvs/tna_pvs.p4":                                       {"accepted", ""},
	"tna_random/tna_random.p4":                                 {"accepted", ""},
	"tna_range_match/tna_range_match.p4":                       {"accepted", ""},
	"tna_register/tna_register.p4":                             {"accepted", ""},
	"tna_resubmit/tna_resubmit.p4":                             {"accepted", ""},
	// Refused as p4c-barefoot (p4c 34b86e9) refuses it, 2026-11-29: "Parser SwitchEgressParser:
	// longest path through parser (224B) exceeds maximum parse depth (160B)" (the example predates
	// the limit; p4c's own copy of it turns the limit off with @command_line).
	"tna_simple_switch/tna_simple_switch.p4":   {"checker", "longest path through parser (224B) exceeds maximum parse depth (160B)"},
	"tna_snapshot/tna_snapshot.p4":             {"accepted", ""},
	"tna_symmetric_hash/tna_symmetric_hash.p4": {"accepted", ""},
	"tna_ternary_match/tna_ternary_match.p4":   {"accepted", ""},
	"tna_timestamp/tna_timestamp.p4":           {"accepted", ""},
}

// TestClassify is the negative control of the corpus measurement: a program of each category
// must be classified as such.
func TestClassify(t *testing.T) {
	dir := t.TempDir()
	progs := map[string]string{
		"ok.p4":          "#include <core.p4>\n#include <tna.p4>\n#include \"common/h.p4\"\n",
		"unsupported.p4": "#include <core.p4>\naction a() { for (bit<8> i = 0; i < 2; i = i + 1) { } }\n",
		"missing.p4":     "#include <core.p4>\n#include \"common/nothere.p4\"\n",
		"checker.p4":     "#include <core.p4>\n#include <tna.p4>\nconst bit<8> x = 16w1 + 8w1;\n",
	}
	if err := os.MkdirAll(filepath.Join(dir, "common"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "common", "h.p4"), []byte("header h_t { bit<8> f; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, src := range progs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"ok.p4": "accepted", "unsupported.p4": "unsupported", "missing.p4": "missing-file", "checker.p4": "checker"}
	for name, w := range want {
		if got, why := classifyCorpus(filepath.Join(dir, name), dir); got != w {
			t.Errorf("%s: %s (%s), want %s", name, got, why, w)
		}
	}
}

// TestP4cTofinoCorpus runs the front end over p4c's own Tofino test programs (the P4 programs
// of p4testgen's Tofino target, backends/p4tools/modules/testgen/targets/tofino/test/p4-programs
// of a p4c checkout, never committed), which p4c's Tofino backend compiles: every one must be
// accepted without a stateful ALU warning (check_tna_salu.go), the tofino2_only ones with
// __TARGET_TOFINO__=2 (some declare the architecture themselves, some include tofino2_specs.p4
// and the rest directly).
//
//	NETLOCK_P4C_DIR=/var/tmp/p4tools-build/p4c-src go test ./bmv2/front -run P4cTofinoCorpus -v
func TestP4cTofinoCorpus(t *testing.T) {
	root := testenv.OptIn(t, "NETLOCK_P4C_DIR", "a p4c checkout to run its Tofino test programs")
	dir := filepath.Join(root, "backends", "p4tools", "modules", "testgen", "targets", "tofino", "test", "p4-programs")
	var files []string
	for _, p := range []string{"*.p4", "tofino1_only/*.p4", "tofino2_only/*.p4"} {
		fs, _ := filepath.Glob(filepath.Join(dir, p))
		files = append(files, fs...)
	}
	if len(files) < 50 {
		t.Fatalf("%d programs under %s", len(files), dir)
	}
	for _, f := range files {
		gen := "1"
		if strings.Contains(f, "tofino2_only") {
			gen = "2"
		}
		c, err := LoadOptions(f, Options{IncludeDirs: []string{dir, filepath.Dir(f)}, Defines: map[string]string{"__TARGET_TOFINO__": gen}})
		if err != nil {
			msg := err.Error()
			if len(msg) > 400 {
				msg = msg[:400]
			}
			t.Errorf("%s: %s", strings.TrimPrefix(f, dir+"/"), msg)
			continue
		}
		// The compiler builds these programs: a stateful ALU warning about one of them would be
		// a rule of check_tna_salu.go that bf-p4c does not have.
		for _, w := range c.Warnings {
			if strings.Contains(w.Error(), "RegisterAction ") {
				t.Errorf("%s: %v", strings.TrimPrefix(f, dir+"/"), w)
			}
		}
	}
	t.Logf("%d programs", len(files))
}
