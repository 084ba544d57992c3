package front

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/proto"

	"github.com/netlock-go/netlock/internal/testenv"

	p4infotext "github.com/netlock-go/netlock/internal/p4info"
)

// TestConformance measures the front end against p4c's own test corpus. It needs a checkout of
// github.com/p4lang/p4c (never committed here):
//
//	NETLOCK_P4C_DIR=/tmp/p4c go test ./bmv2/front -run Conformance -v
//
// It reports (1) the fraction of v1model programs in testdata/p4_16_samples that have an .stf
// file and that we accept, (2) for the programs in testdata/p4_16_errors (v1model, and all), how
// many we reject for an error, how many we refuse only as unsupported (kept apart: refusing a
// program is not finding its error) and how many we accept, and how often our first diagnostic is
// on the line of p4c's first error (testdata/p4_16_errors_outputs/NAME.p4-stderr), and (3) for
// accepted samples with a p4c P4Info golden, how many table and action (name, id) pairs match
// p4c's. Failures are grouped by message. A v1model error program that we accept fails the test.
func TestConformance(t *testing.T) {
	dir := testenv.OptIn(t, "NETLOCK_P4C_DIR", "a p4c checkout (docs/p4.md, Conformance)")
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
	var v1Errs, allErrs errorFigures
	for _, f := range errs {
		_, err := Load(f)
		want, wantOK := p4cFirstError(filepath.Join(dir, "testdata/p4_16_errors_outputs", filepath.Base(f)+"-stderr"))
		v := classify(err, want, wantOK)
		allErrs.add(v)
		if !isV1(f) {
			continue
		}
		v1Errs.add(v)
		switch v {
		case errAccepted:
			t.Errorf("v1model error program accepted, p4c rejects it: %s", filepath.Base(f))
		case errLineDiffers:
			if os.Getenv("NETLOCK_P4C_VERBOSE") != "" {
				fmt.Printf("  first error elsewhere: %s: ours %v, p4c's %s\n", filepath.Base(f), err.(ErrorList)[0].Pos, want)
			}
		case errUnsupported:
			fmt.Printf("  refused only as unsupported: %s: %s\n", filepath.Base(f), err.(ErrorList)[0].Msg)
		}
	}
	fmt.Printf("p4_16_errors (v1model): %s\n", v1Errs)
	fmt.Printf("p4_16_errors (all, incl. programs for other architectures): %s\n", allErrs)

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
		want, err := p4infotext.Unmarshal(data)
		if err != nil {
			continue
		}
		got, err := prog.P4Info()
		if err != nil {
			t.Logf("%s: P4Info: %v", filepath.Base(f), err)
			continue
		}
		goldens++
		if proto.Equal(want.TypeInfo, got.TypeInfo) {
			typeInfoSame++
		} else if os.Getenv("NETLOCK_P4C_VERBOSE") != "" {
			t.Logf("%s: type_info differs", filepath.Base(f))
		}
		if proto.Equal(want, got) {
			fullSame++
		} else if os.Getenv("NETLOCK_P4C_VERBOSE") != "" {
			t.Logf("%s: P4Info differs", filepath.Base(f))
		}
		n, m := comparePreambles(want, got)
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
	fmt.Printf("P4Info equal to p4c's as a whole (initial_default_action included): %d of %d samples\n", fullSame, goldens)
}

// errorVerdict is what the front end did with one of p4c's error programs, compared with p4c's
// expected diagnostics (testdata/p4_16_errors_outputs/NAME.p4-stderr).
type errorVerdict int

const (
	// errAccepted: the program was accepted; p4c rejects it.
	errAccepted errorVerdict = iota
	// errUnsupported: rejected, but every diagnostic is "not supported by the netlock target":
	// the program was refused, not found wrong.
	errUnsupported
	// errLineSame: rejected with a real error, and the first diagnostic is on the file and line
	// of p4c's first error.
	errLineSame
	// errLineDiffers: rejected with a real error, the first diagnostic elsewhere.
	errLineDiffers
	// errNoLine: rejected with a real error, but p4c's expected output has no first error with a
	// file and line to compare with.
	errNoLine
)

// errorFigures counts verdicts; the categories are reported apart, never summed into one rate.
type errorFigures [errNoLine + 1]int

func (f *errorFigures) add(v errorVerdict) { f[v]++ }

func (f errorFigures) String() string {
	total := 0
	for _, n := range f {
		total += n
	}
	real := f[errLineSame] + f[errLineDiffers] + f[errNoLine]
	return fmt.Sprintf("%d programs: rejected for an error %d (%.1f%%), refused only as unsupported %d, accepted %d; "+
		"of those rejected for an error, first diagnostic on p4c's line %d of %d with a line to compare (%.1f%%)",
		total, real, pct(real, total), f[errUnsupported], f[errAccepted],
		f[errLineSame], f[errLineSame]+f[errLineDiffers], pct(f[errLineSame], f[errLineSame]+f[errLineDiffers]))
}

// p4cDiag matches a p4c diagnostic that has a position: "FILE(LINE): [--Werror=kind] error: ...".
var p4cDiag = regexp.MustCompile(`^(\S[^(]*)\((\d+)\):\s*(?:\[--W[^\]]*\]\s*)?(error|warning):`)

// p4cNoPos matches a p4c error without a position: "[--Werror=kind] error: ..." or "error: ...".
var p4cNoPos = regexp.MustCompile(`^(?:\[--W[^\]]*\]\s*)?error:`)

// p4cFirstError returns "FILE:LINE" (FILE without directories) of the first error in p4c's
// expected stderr, or false when the file is missing or its first error has no position.
func p4cFirstError(path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m := p4cDiag.FindStringSubmatch(line); m != nil {
			if m[3] == "error" {
				return filepath.Base(m[1]) + ":" + m[2], true
			}
			continue
		}
		if p4cNoPos.MatchString(line) {
			return "", false
		}
	}
	return "", false
}

// classify compares the front end's verdict err on an error program with p4c's first error.
func classify(err error, want string, wantOK bool) errorVerdict {
	if err == nil {
		return errAccepted
	}
	list, _ := err.(ErrorList)
	real := false
	for _, e := range list {
		if !strings.HasPrefix(e.Msg, "not supported by the netlock target: ") {
			real = true
		}
	}
	if !real {
		return errUnsupported
	}
	if !wantOK {
		return errNoLine
	}
	first := list[0].Pos
	if fmt.Sprintf("%s:%d", filepath.Base(first.File), first.Line) == want {
		return errLineSame
	}
	return errLineDiffers
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
