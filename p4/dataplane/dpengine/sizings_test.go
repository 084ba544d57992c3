package dpengine

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/testenv"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// projectSizings are the sizings of p4/netlock.p4 the repository runs: the program as written
// (netlock switch, the controller's default, testbed/rack.yaml), the data-plane tests' and
// benchmark's, testbed/softrack's test, testbed/rackmodel's default and tests (the controller's
// test rack among them), testbed/modelfig's and controlplane/ctlcore's scenarios'.
// TestProjectSizingsListed keeps the list complete.
var projectSizings = []dataplane.Sizing{
	dataplane.DefaultSizing,
	dataplane.TofinoSizing,
	{Locks: 8, PartBits: 6},
	{Locks: 64, PartBits: 8},
	{Locks: 64, PartBits: 6},
	{Locks: 16, PartBits: 6},
	{Locks: 16, PartBits: 3},
	{Locks: 128, PartBits: 6},
	{Locks: 100, PartBits: 8},
	{Locks: 512, PartBits: 8},
	{Locks: 2048, PartBits: 10},
	{Locks: 16384, PartBits: 13},
}

// TestEverySizingRunsGenerated: p4/netlockgen's one pipeline binds to p4/netlock.p4 with every
// sizing the repository runs (its Bind reads the sizing), and runs a differential sequence
// equal to the interpreter with each.
func TestEverySizingRunsGenerated(t *testing.T) {
	seed := *genDiffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	n := 1500
	if *genDiffN > 0 {
		n = *genDiffN
	}
	for _, sz := range projectSizings {
		name := fmt.Sprintf("l%dp%d", sz.WithDefaults().Locks, sz.WithDefaults().PartBits)
		t.Run(name, func(t *testing.T) {
			every := 256
			if sz.Slots() > 4096 {
				every = n // the whole state at the end: a comparison reads every cell
			}
			g, err := newGenDiff(seed, gdSizing{name, sz, every}, gdLoadGen)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if got := g.sut.GeneratedPipeline(); got != "netlock" {
				t.Fatalf("the switch runs pipeline %q", got)
			}
			if d := g.run(n); d.kind != gdEqual {
				t.Fatalf("seed %d (re-run: go test ./p4/dataplane/dpengine -run '^TestEverySizingRunsGenerated/%s$' -gendiff.seed=%d): %s", seed, name, seed, d.text)
			}
		})
	}
}

// TestBundleRunsGenerated: p4/netlock.p4 installed as the controller installs it, a P4Runtime
// device config (Bundle: a main file with the sizes' #defines that includes the
// program, compiled by p4rt.Bundle.Compile as bmv2/target does), binds the generated pipeline
// with the program's sizes and with others: those #defines are the program's parameters, as -D
// values are. The control: a bundle of another program (netlock.p4 with one statement changed)
// runs on the interpreter under auto.
func TestBundleRunsGenerated(t *testing.T) {
	for _, sz := range []dataplane.Sizing{dataplane.DefaultSizing, {Locks: 64, PartBits: 6}} {
		checked, err := Bundle(sz).Compile()
		if err != nil {
			t.Fatal(err)
		}
		sw, err := engine.Load(checked, pipelineConfig(engine.Config{}, engine.PipelineGenerated))
		if err != nil {
			t.Fatalf("sizing %+v: %v", sz, err)
		}
		if sw.GeneratedPipeline() != "netlock" {
			t.Fatalf("sizing %+v: the pipeline is not running", sz)
		}
	}
	b := Bundle(dataplane.Sizing{})
	const from, to = "hdr.ipv4.ttl = 64;", "hdr.ipv4.ttl = 63;"
	for i := range b.Files {
		if b.Files[i].Name == path.Base(dataplane.V1Model.File) {
			if !strings.Contains(string(b.Files[i].Data), from) {
				t.Fatalf("%q is not in p4/netlock.p4: update the test", from)
			}
			b.Files[i].Data = []byte(strings.Replace(string(b.Files[i].Data), from, to, 1))
		}
	}
	checked, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	sw, err := engine.Load(checked, pipelineConfig(engine.Config{}, engine.PipelineAuto))
	if err != nil || sw.GeneratedPipeline() != "" {
		t.Fatalf("control: a changed program under auto: %v, pipeline %q; want the interpreter", err, sw.GeneratedPipeline())
	}
}

// TestEverySizingCatches is TestEverySizingRunsGenerated's negative control: the pipeline
// bound to a switch of one sizing with the values of another (engine.TestingKnobs) must be
// told apart from the interpreter by the same sequence, so the sizing each binding reads is
// what its runs depend on.
func TestEverySizingCatches(t *testing.T) {
	for _, pair := range [][2]dataplane.Sizing{
		{{Locks: 8, PartBits: 6}, {Locks: 64, PartBits: 8}},
		{{Locks: 64, PartBits: 8}, {Locks: 8, PartBits: 6}},
		{{Locks: 2048, PartBits: 10}, {Locks: 64, PartBits: 6}},
	} {
		sz, other := pair[0], pair[1]
		t.Run(fmt.Sprintf("l%dp%d-with-l%dp%d", sz.Locks, sz.PartBits, other.Locks, other.PartBits), func(t *testing.T) {
			from, err := Check(other)
			if err != nil {
				t.Fatal(err)
			}
			wrong := func(sz dataplane.Sizing, cfg engine.Config) (*Switch, error) {
				cfg.TestingKnobs.GenParamsFrom = from
				return gdLoadGen(sz, cfg)
			}
			g, err := newGenDiff(1, gdSizing{"wrong", sz, 256}, wrong)
			if err != nil {
				t.Fatal(err)
			}
			d := g.run(1500)
			if !d.differs() {
				t.Fatalf("bound with another sizing's values, the pipeline was not told apart: %s", d.text)
			}
			_, first, _ := strings.Cut(d.text, "first difference: ")
			t.Logf("caught at packet %d: %.200s", g.n, first)
		})
	}
}

// sizingLiteral matches a Sizing composite literal of the repository's Go source.
var sizingLiteral = regexp.MustCompile(`Sizing\{([^{}]*)\}`)

// sourceSizings returns the valid sizings written as literals with integer fields in the
// repository's Go files (not generated ones), with where each is.
func sourceSizings(t *testing.T) map[dataplane.Sizing][]string {
	t.Helper()
	root := testenv.ModuleRoot(t)
	field := regexp.MustCompile(`^\s*(\w+)\s*:\s*(\d+)\s*$`)
	found := map[dataplane.Sizing][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_gen.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range sizingLiteral.FindAllSubmatch(src, -1) {
			var sz dataplane.Sizing
			ok := len(strings.TrimSpace(string(m[1]))) > 0
			for _, f := range strings.Split(string(m[1]), ",") {
				fm := field.FindStringSubmatch(f)
				if fm == nil {
					ok = false
					break
				}
				v, _ := strconv.Atoi(fm[2])
				switch fm[1] {
				case "Locks":
					sz.Locks = v
				case "PartBits":
					sz.PartBits = v
				case "TenantMeters":
					sz.TenantMeters = v
				case "Ended":
					sz.Ended = v
				case "CPUPort":
					sz.CPUPort = v
				default:
					ok = false
				}
			}
			if ok && sz.Validate() == nil {
				rel, _ := filepath.Rel(root, p)
				found[sz.WithDefaults()] = append(found[sz.WithDefaults()], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestProjectSizingsListed: every valid sizing written as a literal in the repository's Go
// source is in projectSizings, so TestEverySizingRunsGenerated runs it. The control: the scan
// finds sizings of this package, of another package and of the list itself.
func TestProjectSizingsListed(t *testing.T) {
	found := sourceSizings(t)
	listed := map[dataplane.Sizing]bool{}
	for _, sz := range projectSizings {
		listed[sz.WithDefaults()] = true
	}
	for sz, where := range found {
		if !listed[sz] {
			t.Errorf("sizing %+v (in %s) is not in projectSizings", sz, strings.Join(where, ", "))
		}
	}
	for _, want := range []struct {
		sz   dataplane.Sizing
		file string
	}{
		{dataplane.Sizing{Locks: 8, PartBits: 6}, filepath.Join("p4", "dataplane", "dpengine", "diff_test.go")},
		{dataplane.Sizing{Locks: 16384, PartBits: 13}, filepath.Join("testbed", "rackmodel", "params.go")},
		{dataplane.Sizing{Locks: 64, PartBits: 6}, filepath.Join("testbed", "rackmodel", "controller_test.go")},
	} {
		if !slices.Contains(found[want.sz.WithDefaults()], want.file) {
			t.Errorf("control: the scan did not find %+v in %s (found in %q)", want.sz, want.file, found[want.sz.WithDefaults()])
		}
	}
}
