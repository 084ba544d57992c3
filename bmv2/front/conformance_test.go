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
	"google.golang.org/protobuf/proto"
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
	var idPairs, idMatch, goldens int
	for _, f := range samples {
		stf := strings.TrimSuffix(f, ".p4") + ".stf"
		if _, err := os.Stat(stf); err != nil || !isV1(f) {
			continue
		}
		total++
		if _, err := Load(f); err != nil {
			msg := err.(ErrorList)[0].Msg
			groups[group(msg)] = append(groups[group(msg)], filepath.Base(f))
			continue
		}
		accepted++
	}
	fmt.Printf("p4_16_samples (v1model, with .stf): accepted %d of %d (%.1f%%)\n", accepted, total, pct(accepted, total))
	printGroups(groups)

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
	var all, allOK, exprs, unres, typeInfoSame, fullSame int
	for _, f := range samples {
		if !isV1(f) {
			continue
		}
		all++
		prog, err := Load(f)
		if err != nil {
			continue
		}
		allOK++
		if pt, ok := mainPackage(prog); ok && pt.Decl.Name == "V1Switch" {
			if _, err := prog.V1Switch(); err != nil {
				t.Errorf("%s: V1Switch: %v", filepath.Base(f), err)
			}
		}
		n, bad := unresolved(prog.Program)
		exprs += n
		unres += len(bad)
		if len(bad) > 0 && os.Getenv("NETLOCK_P4C_VERBOSE") != "" {
			t.Logf("%s: %s", filepath.Base(f), strings.Join(bad, "; "))
		}
		golden := filepath.Join(dir, "testdata/p4_16_samples_outputs", filepath.Base(f)+".p4info.txtpb")
		data, err := os.ReadFile(golden)
		if err != nil || prog.Main == nil {
			continue // no golden, or a program without a package instance (p4c writes none)
		}
		var want p4v1.P4Info
		if (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &want) != nil {
			continue
		}
		got, err := prog.P4Info()
		if err != nil {
			t.Logf("%s: P4Info: %v", filepath.Base(f), err)
			continue
		}
		goldens++
		if want.TypeInfo == nil {
			want.TypeInfo = &p4v1.P4TypeInfo{}
		}
		if proto.Equal(want.TypeInfo, got.TypeInfo) {
			typeInfoSame++
		} else if os.Getenv("NETLOCK_P4C_VERBOSE") != "" {
			t.Logf("%s: type_info differs", filepath.Base(f))
		}
		if proto.Equal(&want, got) {
			fullSame++
		} else if os.Getenv("NETLOCK_P4C_VERBOSE") != "" {
			t.Logf("%s: P4Info differs", filepath.Base(f))
		}
		n, m := comparePreambles(&want, got)
		idPairs += n
		idMatch += m
		if m != n && os.Getenv("NETLOCK_P4C_VERBOSE") != "" {
			t.Logf("%s: %d/%d entities match", filepath.Base(f), m, n)
		}
	}
	fmt.Printf("p4_16_samples (all v1model): accepted %d of %d (%.1f%%)\n", allOK, all, pct(allOK, all))
	fmt.Printf("expressions of accepted samples without a type, declaration or callee: %d of %d\n", unres, exprs)
	fmt.Printf("P4Info entities (name, id, alias, widths, sizes) matching p4c's goldens of %d accepted samples: %d of %d (%.1f%%)\n", goldens, idMatch, idPairs, pct(idMatch, idPairs))
	fmt.Printf("P4Info type_info equal to p4c's: %d of %d samples\n", typeInfoSame, goldens)
	fmt.Printf("P4Info equal to p4c's as a whole (fields of p4runtime v1.4.0-rc.5): %d of %d samples\n", fullSame, goldens)
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// group strips names from a message so that similar failures count together.
func group(msg string) string {
	if rest, ok := strings.CutPrefix(msg, "not supported by the netlock target: "); ok {
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

// comparePreambles counts the entities of want (tables, actions, action profiles, counters,
// meters, registers, digests, controller headers; match fields and action parameters) and how many
// of them got reproduces with the same name, id, alias, bit widths and sizes.
func comparePreambles(want, got *p4v1.P4Info) (n, match int) {
	have := map[string]string{}
	add := func(kind string, p *p4v1.Preamble, extra string) {
		have[kind+"/"+p.Name] = fmt.Sprintf("%d %s %q %v %s", p.Id, p.Alias, p.Annotations, p.Doc, extra)
	}
	check := func(kind string, p *p4v1.Preamble, extra string) {
		n++
		want := fmt.Sprintf("%d %s %q %v %s", p.Id, p.Alias, p.Annotations, p.Doc, extra)
		if have[kind+"/"+p.Name] == want {
			match++
		} else if os.Getenv("NETLOCK_P4C_VERBOSE") != "" {
			fmt.Printf("    %s %s: want %q, got %q\n", kind, p.Name, want, have[kind+"/"+p.Name])
		}
	}
	walk := func(info *p4v1.P4Info, f func(string, *p4v1.Preamble, string)) {
		for _, t := range info.Tables {
			var mf []string
			for _, m := range t.MatchFields {
				mf = append(mf, fmt.Sprintf("%s:%d:%v", m.Name, m.Bitwidth, m.GetMatchType()))
			}
			var refs []string
			for _, r := range t.ActionRefs {
				refs = append(refs, fmt.Sprintf("%d/%v", r.Id, r.Scope))
			}
			sort.Strings(refs)
			f("table", t.Preamble, strings.Join(mf, ",")+fmt.Sprintf(" refs=%v const=%d impl=%d direct=%v size=%d isconst=%v idle=%v",
				refs, t.ConstDefaultActionId, t.ImplementationId, t.DirectResourceIds, t.Size, t.IsConstTable, t.IdleTimeoutBehavior))
		}
		for _, a := range info.Actions {
			var ps []string
			for _, p := range a.Params {
				ps = append(ps, fmt.Sprintf("%s:%d", p.Name, p.Bitwidth))
			}
			f("action", a.Preamble, strings.Join(ps, ","))
		}
		for _, x := range info.ActionProfiles {
			f("action_profile", x.Preamble, fmt.Sprint(x.Size, x.WithSelector, x.MaxGroupSize, x.TableIds))
		}
		for _, x := range info.Counters {
			f("counter", x.Preamble, fmt.Sprint(x.Size, x.Spec.GetUnit()))
		}
		for _, x := range info.DirectCounters {
			f("direct_counter", x.Preamble, fmt.Sprint(x.DirectTableId))
		}
		for _, x := range info.Meters {
			f("meter", x.Preamble, fmt.Sprint(x.Size, x.Spec.GetUnit()))
		}
		for _, x := range info.DirectMeters {
			f("direct_meter", x.Preamble, fmt.Sprint(x.DirectTableId))
		}
		for _, x := range info.Registers {
			f("register", x.Preamble, fmt.Sprint(x.Size))
		}
		for _, x := range info.Digests {
			f("digest", x.Preamble, "")
		}
		for _, x := range info.ControllerPacketMetadata {
			var ms []string
			for _, m := range x.Metadata {
				ms = append(ms, fmt.Sprintf("%s:%d", m.Name, m.Bitwidth))
			}
			f("controller_header", x.Preamble, strings.Join(ms, ","))
		}
	}
	walk(got, add)
	walk(want, check)
	return n, match
}

func mainPackage(c *Checked) (*PackageType, bool) {
	if c.Main == nil {
		return nil, false
	}
	pt, ok := c.Main.T.(*PackageType)
	return pt, ok
}
