package front_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/netlock-go/netlock/bmv2/front"
	p4infotext "github.com/netlock-go/netlock/internal/p4info"
	"github.com/netlock-go/netlock/internal/simpleswitch"
	"github.com/netlock-go/netlock/internal/testenv"
)

// realProgram is a v1model program of the repository with the -D macros it is used with.
type realProgram struct {
	name    string
	path    string
	defines map[string]string
}

// netlockSizings are the sizings of p4/netlock.p4 the project uses: p4/dataplane/dpengine's
// projectSizings (its TestProjectSizingsListed finds every sizing written in the repository's
// Go source; keep this list equal to it), and the largest part bits the program takes, 16.
var netlockSizings = []map[string]string{
	nil,
	{"NETLOCK_LOCKS": "8", "NETLOCK_PART_BITS": "6"},
	{"NETLOCK_LOCKS": "64", "NETLOCK_PART_BITS": "8"},
	{"NETLOCK_LOCKS": "64", "NETLOCK_PART_BITS": "6"},
	{"NETLOCK_LOCKS": "16", "NETLOCK_PART_BITS": "6"},
	{"NETLOCK_LOCKS": "16", "NETLOCK_PART_BITS": "3"},
	{"NETLOCK_LOCKS": "128", "NETLOCK_PART_BITS": "6"},
	{"NETLOCK_LOCKS": "100", "NETLOCK_PART_BITS": "8"},
	{"NETLOCK_LOCKS": "512", "NETLOCK_PART_BITS": "8"},
	{"NETLOCK_LOCKS": "2048", "NETLOCK_PART_BITS": "10"},
	{"NETLOCK_LOCKS": "16384", "NETLOCK_PART_BITS": "13"},
	{"NETLOCK_LOCKS": "16384", "NETLOCK_PART_BITS": "16"},
}

// includesV1model matches a v1model program's #include of v1model.p4.
var includesV1model = regexp.MustCompile(`(?m)^\s*#\s*include\s*[<"]v1model\.p4[>"]`)

// realPrograms lists the repository's v1model programs the front end accepts: p4/netlock.p4 in
// every sizing, the test programs of the engine, the STF suite, the Go backend, the P4Runtime
// server and client and the target, the front end's accept corpus, and the Mininet demo's
// basic.p4 (p4lang/tutorials' exercise). Files whose name starts with tna_ and included files
// are left out.
func realPrograms(t *testing.T) []realProgram {
	t.Helper()
	root := testenv.ModuleRoot(t)
	var out []realProgram
	for i, d := range netlockSizings {
		out = append(out, realProgram{name: fmt.Sprintf("netlock.p4#%d", i), path: filepath.Join(root, "p4/netlock.p4"), defines: d})
	}
	for _, pat := range []string{"bmv2/engine/testdata/*.p4", "bmv2/engine/gogentest/testdata/*.p4", "bmv2/front/testdata/accept/*.p4",
		"bmv2/p4rt/testdata/*.p4", "bmv2/stf/testdata/*.p4", "bmv2/stf/gogen_testdata/*.p4", "bmv2/target/testdata/*.p4",
		"controlplane/p4rtclient/testdata/*.p4", "testbed/mininet/*.p4"} {
		files, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			base := filepath.Base(f)
			if strings.HasPrefix(base, "tna_") || strings.HasSuffix(base, ".h.p4") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !includesV1model.Match(src) {
				continue // another architecture (own_arch_props.p4 names v1model.p4 in a comment only)
			}
			rel, _ := filepath.Rel(root, f)
			out = append(out, realProgram{name: rel, path: f})
		}
	}
	return out
}

// TestRealP4cBM2 compiles every v1model program of the repository with p4c-bm2-ss and checks
// that (1) p4c-bm2-ss accepts it exactly when CheckBMv2 and P4Info do (when it refuses one, the
// reason is the one they give), and (2) the P4Info p4c writes equals the one the front end
// writes: every table, action, field, register, counter, meter, action profile, digest and
// controller header, with the same ids, and the fields of P4Runtime 1.4.0 (initial default
// actions). NETLOCK_P4_TUTORIALS, a directory of p4lang/tutorials' solution programs, adds
// them (opt-in: they are not in the repository).
func TestRealP4cBM2(t *testing.T) {
	p4c := testenv.RealTool(t, "p4c-bm2-ss")
	progs := realPrograms(t)
	if dir := os.Getenv("NETLOCK_P4_TUTORIALS"); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.p4"))
		for _, f := range files {
			progs = append(progs, realProgram{name: "tutorials/" + filepath.Base(f), path: f})
		}
	}
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			checked, err := front.LoadOptions(p.path, front.Options{Defines: p.defines})
			if err != nil {
				t.Skipf("the front end refuses it: %v", err)
			}
			ours := checked.CheckBMv2()
			if ours == nil {
				// p4c-bm2-ss writes the P4Info too: what its P4Info generator refuses
				// (anonymous table properties), P4Info must refuse.
				if _, err := checked.P4Info(); err != nil {
					ours = err.(front.ErrorList)
				}
			}
			dir := t.TempDir()
			_, infoPath, diags, err := simpleswitch.Compile(p4c, p.path, dir, p.defines)
			if err != nil {
				if ours == nil {
					t.Fatalf("p4c-bm2-ss refuses what CheckBMv2 accepts:\n%s", diags)
				}
				if !strings.Contains(diags, ours[0].Msg) {
					t.Fatalf("p4c-bm2-ss refuses it for another reason than CheckBMv2 (%s):\n%s", ours[0].Msg, diags)
				}
				return
			}
			if ours != nil {
				t.Fatalf("CheckBMv2 refuses what p4c-bm2-ss compiles: %v", ours)
			}
			if strings.TrimSpace(diags) != "" {
				t.Logf("p4c-bm2-ss says:\n%s", diags)
			}
			text, err := os.ReadFile(infoPath)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := p4infotext.Unmarshal(text)
			if err != nil {
				t.Fatalf("p4c's P4Info does not load: %v", err)
			}
			mine, err := checked.P4Info()
			if err != nil {
				t.Fatal(err)
			}
			if d := p4infoDiff(theirs, mine); d != "" {
				t.Errorf("the P4Info differs from p4c's:\n%s", d)
			}
		})
	}
}

// TestRealP4test runs p4c's p4test (its front and mid end, no backend) on every v1model program
// of the repository the front end accepts (realPrograms: p4/netlock.p4 in every sizing among
// them): p4test must accept each, with what it says logged.
func TestRealP4test(t *testing.T) {
	p4test := testenv.RealTool(t, "p4test")
	for _, p := range realPrograms(t) {
		t.Run(p.name, func(t *testing.T) {
			if _, err := front.LoadOptions(p.path, front.Options{Defines: p.defines}); err != nil {
				t.Skipf("the front end refuses it: %v", err)
			}
			args := []string{"--std", "p4-16"}
			for _, k := range slices.Sorted(maps.Keys(p.defines)) {
				args = append(args, "-D"+k+"="+p.defines[k])
			}
			out, err := exec.Command(p4test, append(args, p.path)...).CombinedOutput()
			if err != nil {
				t.Fatalf("p4test refuses what the front end accepts: %v\n%s", err, out)
			}
			if s := strings.TrimSpace(string(out)); s != "" {
				t.Logf("p4test says:\n%s", s)
			}
		})
	}
}

// TestRealBMv2Rules checks the expectations of testdata/bmv2 (what TestBMv2Rules holds
// CheckBMv2 to) against p4c-bm2-ss itself.
func TestRealBMv2Rules(t *testing.T) {
	p4c := testenv.RealTool(t, "p4c-bm2-ss")
	for _, c := range bmv2RuleCases(t) {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			_, _, diags, err := simpleswitch.Compile(p4c, c.path, t.TempDir(), nil)
			switch {
			case c.want == "ok" && err != nil:
				t.Errorf("p4c-bm2-ss refuses it:\n%s", diags)
			case c.want != "ok" && err == nil:
				t.Errorf("p4c-bm2-ss compiles it; the test says it refuses it: %s", c.want)
			case c.want != "ok" && !strings.Contains(diags, c.want):
				t.Errorf("p4c-bm2-ss refuses it otherwise than %q:\n%s", c.want, diags)
			}
		})
	}
}

// p4infoDiff describes how got differs from want: for each part, the entities (by name)
// missing on one side or different, each as text; a part whose entities are the same but in
// another order (p4c's order is part of the format: clients list entities as P4Info does), with
// both orders; a message present on one side only (type_info: p4c writes none when its
// generator never asked for it); unknown fields (P4Runtime 1.4.0's, which p4runtime
// v1.4.0-rc.5 lacks) that differ. Empty when they are equal.
func p4infoDiff(want, got *p4v1.P4Info) string {
	if proto.Equal(want, got) {
		return ""
	}
	var b strings.Builder
	wm, gm := want.ProtoReflect(), got.ProtoReflect()
	fields := wm.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		wv, gv := wm.Get(fd), gm.Get(fd)
		if !fd.IsList() {
			switch {
			case fd.Message() == nil:
				if !wv.Equal(gv) {
					fmt.Fprintf(&b, "%s: p4c: %v, ours: %v\n", fd.Name(), wv, gv)
				}
			case wm.Has(fd) != gm.Has(fd):
				fmt.Fprintf(&b, "%s: p4c: %s; ours: %s\n", fd.Name(), presence(wm, fd), presence(gm, fd))
			case !proto.Equal(wv.Message().Interface(), gv.Message().Interface()):
				fmt.Fprintf(&b, "%s:\n  p4c:  %s\n  ours: %s\n", fd.Name(), text(wv.Message()), text(gv.Message()))
			}
			continue
		}
		w, wOrder := byName(wv.List())
		g, gOrder := byName(gv.List())
		var names []string
		for n := range w {
			names = append(names, n)
		}
		for n := range g {
			if _, ok := w[n]; !ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		differs := false
		for _, n := range names {
			x, y := w[n], g[n]
			switch {
			case y == nil:
				fmt.Fprintf(&b, "%s %s: only in p4c's: %s\n", fd.Name(), n, text(x))
			case x == nil:
				fmt.Fprintf(&b, "%s %s: only in ours: %s\n", fd.Name(), n, text(y))
			case !proto.Equal(x.Interface(), y.Interface()):
				fmt.Fprintf(&b, "%s %s:\n  p4c:  %s\n  ours: %s\n", fd.Name(), n, text(x), text(y))
			default:
				continue
			}
			differs = true
		}
		if !differs && !slices.Equal(wOrder, gOrder) {
			fmt.Fprintf(&b, "%s: the same entities in another order:\n  p4c:  %s\n  ours: %s\n", fd.Name(), strings.Join(wOrder, " "), strings.Join(gOrder, " "))
		}
	}
	if wu, gu := wm.GetUnknown(), gm.GetUnknown(); !bytes.Equal(wu, gu) {
		fmt.Fprintf(&b, "unknown fields of P4Info: p4c: %x, ours: %x\n", wu, gu)
	}
	if b.Len() == 0 {
		return "P4Info differs in a way p4infoDiff does not describe (extend it):\n  p4c:  " + text(wm) + "\n  ours: " + text(gm)
	}
	return b.String()
}

// byName maps a repeated part's entities by preamble name (by index when they have none) and
// lists the names in order.
func byName(l protoreflect.List) (map[string]protoreflect.Message, []string) {
	m := map[string]protoreflect.Message{}
	var order []string
	for j := 0; j < l.Len(); j++ {
		msg := l.Get(j).Message()
		name := fmt.Sprint(j)
		if pre := msg.Descriptor().Fields().ByName("preamble"); pre != nil {
			name = msg.Get(pre).Message().Interface().(*p4v1.Preamble).GetName()
		}
		m[name] = msg
		order = append(order, name)
	}
	return m, order
}

// presence describes message field fd of m: absent, present and empty, or present.
func presence(m protoreflect.Message, fd protoreflect.FieldDescriptor) string {
	switch {
	case !m.Has(fd):
		return "absent"
	case proto.Size(m.Get(fd).Message().Interface()) == 0:
		return "present, empty"
	}
	return "present: " + text(m.Get(fd).Message())
}

func text(m protoreflect.Message) string {
	s, _ := prototext.MarshalOptions{EmitUnknown: true}.Marshal(m.Interface())
	return string(s)
}

// TestP4InfoDiff: p4infoDiff names a changed id, a missing entity, a changed initial default
// action, another order and a type_info present on one side only, and nothing in an equal P4Info (the negative controls of TestRealP4cBM2's
// comparison).
func TestP4InfoDiff(t *testing.T) {
	checked, err := front.Load("testdata/accept/basic.p4")
	if err != nil {
		t.Fatal(err)
	}
	info, err := checked.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	if d := p4infoDiff(info, proto.Clone(info).(*p4v1.P4Info)); d != "" {
		t.Errorf("equal P4Infos differ: %s", d)
	}
	id := proto.Clone(info).(*p4v1.P4Info)
	id.Tables[0].Preamble.Id++
	missing := proto.Clone(info).(*p4v1.P4Info)
	missing.Actions = missing.Actions[1:]
	def := proto.Clone(info).(*p4v1.P4Info)
	p4infotext.SetInitialDefaultAction(def.Tables[0], p4infotext.ActionCall{ActionID: 1})
	order := proto.Clone(info).(*p4v1.P4Info)
	order.Actions[0], order.Actions[1] = order.Actions[1], order.Actions[0]
	noTypeInfo := proto.Clone(info).(*p4v1.P4Info)
	noTypeInfo.TypeInfo = nil
	for _, c := range []struct {
		name string
		m    *p4v1.P4Info
		want string
	}{
		{"id", id, "tables MyIngress.ipv4_lpm:"},
		{"missing action", missing, "only in p4c's"},
		{"initial default", def, "tables MyIngress.ipv4_lpm:"},
		{"order", order, "actions: the same entities in another order"},
		{"type_info", noTypeInfo, "type_info: p4c: present, empty; ours: absent"},
	} {
		if d := p4infoDiff(info, c.m); !strings.Contains(d, c.want) {
			t.Errorf("%s: the difference found is %q, want it to say %q", c.name, d, c.want)
		}
	}
}

// TestRealCheckBMv2Corpus compares CheckBMv2 with p4c-bm2-ss on p4c's v1model samples
// (NETLOCK_P4C_DIR, a p4c checkout; opt-in) where the table rule can apply: those the front end
// accepts in which some name is applied at two places or more (a table or a control instance;
// a textual count), and those CheckBMv2 refuses. It fails when CheckBMv2 refuses a program
// p4c-bm2-ss compiles, or accepts one p4c-bm2-ss refuses with the table rule's words.
func TestRealCheckBMv2Corpus(t *testing.T) {
	dir := testenv.OptIn(t, "NETLOCK_P4C_DIR", "a p4c checkout (its testdata/p4_16_samples)")
	p4c := testenv.RealTool(t, "p4c-bm2-ss")
	files, _ := filepath.Glob(filepath.Join(dir, "testdata/p4_16_samples/*.p4"))
	applies := regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*\.\s*apply\s*\(`)
	var compared, agreeOK, agreeRefused int
	var otherRefusals []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(src), "v1model.p4") {
			continue
		}
		checked, err := front.Load(f)
		if err != nil {
			continue
		}
		ours := checked.CheckBMv2()
		count := map[string]int{}
		multi := false
		for _, m := range applies.FindAllStringSubmatch(string(src), -1) {
			count[m[1]]++
			multi = multi || count[m[1]] > 1
		}
		if !multi && ours == nil {
			continue
		}
		compared++
		_, _, diags, err := simpleswitch.Compile(p4c, f, t.TempDir(), nil)
		tableRule := strings.Contains(diags, "has multiple successors") || strings.Contains(diags, "back to itself")
		switch {
		case err == nil && ours == nil:
			agreeOK++
		case err == nil:
			t.Errorf("%s: CheckBMv2 refuses what p4c-bm2-ss compiles: %v", filepath.Base(f), ours)
		case ours != nil && strings.Contains(diags, ours[0].Msg):
			agreeRefused++
		case ours != nil:
			t.Errorf("%s: CheckBMv2 says %q, p4c-bm2-ss:\n%s", filepath.Base(f), ours[0].Msg, diags)
		case tableRule:
			t.Errorf("%s: p4c-bm2-ss refuses it with the table rule, CheckBMv2 accepts it:\n%s", filepath.Base(f), diags)
		default:
			otherRefusals = append(otherRefusals, filepath.Base(f)+": "+firstErrorLine(diags))
		}
	}
	t.Logf("p4c samples compared (a name applied twice or more, or refused by CheckBMv2): %d; both accept %d, both refuse with the same reason %d; p4c-bm2-ss refuses for another reason %d:", compared, agreeOK, agreeRefused, len(otherRefusals))
	for _, o := range otherRefusals {
		t.Logf("  %s", o)
	}
}

func firstErrorLine(diags string) string {
	for _, l := range strings.Split(diags, "\n") {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(diags)
}
