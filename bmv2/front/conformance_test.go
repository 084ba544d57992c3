package front

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
)

// TestConformance measures the front end against p4c's own test corpus. It needs a checkout of
// github.com/p4lang/p4c (never committed here):
//
//	NETLOCK_P4C_DIR=/tmp/p4c go test ./bmv2/front -run Conformance -v
//
// It reports (1) the fraction of v1model programs in testdata/p4_16_samples that have an .stf
// file and that we accept, (2) the fraction of v1model programs in testdata/p4_16_errors that
// we reject, and (3) for accepted samples with a p4c P4Info golden, how many table and action
// (name, id) pairs match p4c's. Failures are grouped by message.
func TestConformance(t *testing.T) {
	dir := os.Getenv("NETLOCK_P4C_DIR")
	if dir == "" {
		t.Skip("set NETLOCK_P4C_DIR to a p4c checkout to run the conformance measurement")
	}
	isV1 := func(path string) bool {
		src, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(src), "v1model.p4")
	}
	samples, _ := filepath.Glob(filepath.Join(dir, "testdata/p4_16_samples/*.p4"))
	var total, accepted int
	groups := map[string][]string{}
	var idPairs, idMatch int
	for _, f := range samples {
		stf := strings.TrimSuffix(f, ".p4") + ".stf"
		if _, err := os.Stat(stf); err != nil || !isV1(f) {
			continue
		}
		total++
		prog, err := Load(f)
		if err != nil {
			msg := err.(ErrorList)[0].Msg
			groups[group(msg)] = append(groups[group(msg)], filepath.Base(f))
			continue
		}
		accepted++
		golden := filepath.Join(dir, "testdata/p4_16_samples_outputs", filepath.Base(f)+".p4info.txtpb")
		if data, err := os.ReadFile(golden); err == nil {
			var want p4v1.P4Info
			if (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &want) != nil {
				continue
			}
			got, err := prog.P4Info()
			if err != nil {
				t.Logf("%s: P4Info: %v", filepath.Base(f), err)
				continue
			}
			n, m := comparePreambles(&want, got)
			idPairs += n
			idMatch += m
			if m != n && os.Getenv("NETLOCK_P4C_VERBOSE") != "" {
				t.Logf("%s: %d/%d table/action ids match", filepath.Base(f), m, n)
			}
		}
	}
	fmt.Printf("p4_16_samples (v1model, with .stf): accepted %d of %d (%.1f%%)\n", accepted, total, pct(accepted, total))
	printGroups(groups)
	fmt.Printf("P4Info table/action (name, id) pairs matching p4c: %d of %d (%.1f%%)\n", idMatch, idPairs, pct(idMatch, idPairs))

	errs, _ := filepath.Glob(filepath.Join(dir, "testdata/p4_16_errors/*.p4"))
	var etotal, rejected, atotal, arejected int
	for _, f := range errs {
		_, err := Load(f)
		atotal++
		if err != nil {
			arejected++
		}
		if !isV1(f) {
			continue
		}
		etotal++
		if err != nil {
			rejected++
			continue
		}
		fmt.Printf("  accepted but p4c rejects: %s\n", filepath.Base(f))
	}
	fmt.Printf("p4_16_errors (v1model): rejected %d of %d (%.1f%%)\n", rejected, etotal, pct(rejected, etotal))
	fmt.Printf("p4_16_errors (all, incl. programs for other architectures): rejected %d of %d (%.1f%%)\n", arejected, atotal, pct(arejected, atotal))

	// Every v1model sample, with or without an .stf file, for a wider view.
	var all, allOK int
	for _, f := range samples {
		if !isV1(f) {
			continue
		}
		all++
		if _, err := Load(f); err == nil {
			allOK++
		}
	}
	fmt.Printf("p4_16_samples (all v1model): accepted %d of %d (%.1f%%)\n", allOK, all, pct(allOK, all))
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// group strips names from a message so that similar failures count together.
func group(msg string) string {
	if strings.HasPrefix(msg, "not supported by the netlock target: ") {
		rest := strings.TrimPrefix(msg, "not supported by the netlock target: ")
		if i := strings.IndexAny(rest, " ("); i > 0 && !strings.HasPrefix(rest, "for") && !strings.HasPrefix(rest, "table") {
			_ = i
		}
		return "unsupported: " + rest
	}
	if i := strings.Index(msg, ": "); i > 0 && i < 40 {
		msg = msg[i+2:]
	}
	if len(msg) > 70 {
		msg = msg[:70]
	}
	return msg
}

func printGroups(groups map[string][]string) {
	type g struct {
		msg   string
		files []string
	}
	var gs []g
	for m, fs := range groups {
		gs = append(gs, g{m, fs})
	}
	sort.Slice(gs, func(i, j int) bool {
		if len(gs[i].files) != len(gs[j].files) {
			return len(gs[i].files) > len(gs[j].files)
		}
		return gs[i].msg < gs[j].msg
	})
	for _, x := range gs {
		ex := x.files
		if len(ex) > 3 {
			ex = ex[:3]
		}
		fmt.Printf("  %3d  %s   (e.g. %s)\n", len(x.files), x.msg, strings.Join(ex, ", "))
	}
}

// comparePreambles counts the tables and actions of want and how many of them got has with the
// same name and id.
func comparePreambles(want, got *p4v1.P4Info) (n, match int) {
	have := map[string]uint32{}
	for _, t := range got.Tables {
		have["t/"+t.Preamble.Name] = t.Preamble.Id
	}
	for _, a := range got.Actions {
		have["a/"+a.Preamble.Name] = a.Preamble.Id
	}
	for _, t := range want.Tables {
		n++
		if have["t/"+t.Preamble.Name] == t.Preamble.Id {
			match++
		}
	}
	for _, a := range want.Actions {
		n++
		if have["a/"+a.Preamble.Name] == a.Preamble.Id {
			match++
		}
	}
	return n, match
}
