package dpengine

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// The TNA program declares the answer's fields that only an answer writes mutually exclusive
// with the admin header (@pa_mutually_exclusive): bf-p4c may then give them the same
// containers, which is right only if no pass with hdr.admin valid writes them. The engine
// ignores the annotation (each field has its own storage), so the claim is checked here on a
// copy of the program that sets those fields to a sentinel at the start of every pass with
// hdr.admin valid and, at the end of the ingress, marks the admin reply (result 0xee) when one
// of them changed: the scenarios (every admin operation) and the differential sequences (admin
// probes among the requests) must then still pass. A pass that exits early is not checked.

var exclusiveAnno = regexp.MustCompile(`@pa_mutually_exclusive\("ingress", "hdr\.admin", "([a-z0-9_.]+)"\)`)

// adminExclusive returns the fields the program declares mutually exclusive with hdr.admin.
func adminExclusive(src string) []string {
	var fs []string
	for _, m := range exclusiveAnno.FindAllStringSubmatch(src, -1) {
		fs = append(fs, m[1])
	}
	return fs
}

// instrumentExclusive returns src with the sentinel check of fields (see above), or an error
// when its anchors are not where they were.
func instrumentExclusive(src string, fields []string) (string, error) {
	const ctl = "control NetlockIngress("
	const next = "\ncontrol NetlockIngressDeparser("
	i := strings.Index(src, ctl)
	if i < 0 {
		return "", fmt.Errorf("no %q", ctl)
	}
	a := strings.Index(src[i:], "\n    apply {\n")
	d := strings.Index(src, next)
	e := -1
	if d > i {
		e = strings.LastIndex(src[i:d], "\n    }\n}\n") // the apply block's end, the control's
	}
	if a < 0 || e < 0 {
		return "", fmt.Errorf("the ingress's apply block is not where it was")
	}
	a += i + len("\n    apply {\n")
	e += i + 1
	var set, changed strings.Builder
	set.WriteString("        if (hdr.admin.isValid()) {\n")
	for k, f := range fields {
		fmt.Fprintf(&set, "            %s = (bit<%s>)32w0xa5a5a5a5;\n", f, "WIDTH_"+fmt.Sprint(k))
		if k > 0 {
			changed.WriteString(" ||\n                ")
		}
		fmt.Fprintf(&changed, "%s != (bit<%s>)32w0xa5a5a5a5", f, "WIDTH_"+fmt.Sprint(k))
	}
	set.WriteString("        }\n")
	check := "        if (hdr.admin.isValid() && (" + changed.String() + ")) {\n            hdr.admin.result = 0xee;\n        }\n"
	out := src[:a] + set.String() + src[a:e] + check + src[e:]
	// The fields' widths: each "bit<N> name;" of its header type.
	for k, f := range fields {
		w, err := fieldWidth(src, f)
		if err != nil {
			return "", err
		}
		out = strings.ReplaceAll(out, fmt.Sprintf("bit<WIDTH_%d>", k), fmt.Sprintf("bit<%d>", w))
	}
	return out, nil
}

// fieldWidth is the width of hdr.H.F as the front end checked src: the type of member H of
// headers_t, then F's.
func fieldWidth(src, field string) (int, error) {
	parts := strings.Split(field, ".")
	if len(parts) != 3 || parts[0] != "hdr" {
		return 0, fmt.Errorf("%s: not hdr.header.field", field)
	}
	checked, err := CheckProgram(dataplane.Program{Name: dataplane.TNA.Name, File: dataplane.TNA.File, Source: []byte(src)}, dataplane.TofinoSizing)
	if err != nil {
		return 0, err
	}
	member := func(fs []*front.Field, name string) *front.Field {
		for _, f := range fs {
			if f.Name == name {
				return f
			}
		}
		return nil
	}
	var hdrs *front.StructDecl
	for _, d := range checked.Program.Decls {
		if sd, ok := d.(*front.StructDecl); ok && sd.Name == "headers_t" {
			hdrs = sd
		}
	}
	if hdrs == nil {
		return 0, fmt.Errorf("no headers_t")
	}
	h := member(hdrs.Fields, parts[1])
	if h == nil {
		return 0, fmt.Errorf("%s: no member %s in headers_t", field, parts[1])
	}
	ht, ok := h.T.(*front.StructType)
	if !ok {
		return 0, fmt.Errorf("%s: %s is no header", field, parts[1])
	}
	f := member(ht.Fields, parts[2])
	if f == nil {
		return 0, fmt.Errorf("%s: no field %s in %s", field, parts[2], ht.Decl.Name)
	}
	return front.WidthOf(f.T), nil
}

func TestAdminExclusive(t *testing.T) {
	src := string(dataplane.TNA.Source)
	fields := adminExclusive(src)
	if len(fields) == 0 {
		t.Fatalf("p4/%s declares no field mutually exclusive with hdr.admin: update this test", dataplane.TNA.File)
	}
	inst, err := instrumentExclusive(src, fields)
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := filepath.Glob(filepath.Join(scenarioDir, "scenarios", "*.scn"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no scenarios in %s: %v", scenarioDir, err)
	}
	testScenarios(t, dataplane.TNA, engine.PipelineInterpreted, srcs, []byte(inst))
	if msg := exclusiveFails(t, []byte(inst), 50); msg != "" {
		t.Error(msg)
	}
}

// TestAdminExclusiveCatches is its negative control: a program whose admin probe writes one of
// the fields (the answer's lock) must fail the check.
func TestAdminExclusiveCatches(t *testing.T) {
	const from = "            hdr.admin.size = meta.size;\n"
	mut := string(mutate(t, dataplane.TNA, from, from+"            hdr.a_nl.lock = hdr.nl.lock;\n"))
	inst, err := instrumentExclusive(mut, adminExclusive(mut))
	if err != nil {
		t.Fatal(err)
	}
	msg := exclusiveFails(t, []byte(inst), 50)
	if msg == "" {
		t.Fatal("an admin probe writing hdr.a_nl.lock passed the exclusivity check")
	}
	t.Logf("caught: %.300s", msg)
}

// exclusiveFails runs seeds differential sequences per configuration (admin probes among the
// requests) on the instrumented program src against the v1model program and returns the
// first failure, or "".
func exclusiveFails(t testing.TB, src []byte, seeds int) string {
	for _, rules := range diffConfigs {
		a := newDiffSwitch(t, dataplane.V1Model, rules, nil, engine.PipelineInterpreted)
		b := newDiffSwitch(t, dataplane.TNA, rules, src, engine.PipelineInterpreted)
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			if msg := agreeFails(a, b, rules, seed); msg != "" {
				return fmt.Sprintf("configuration %s, seed %d: %s", rules.name, seed, msg)
			}
		}
	}
	return ""
}
