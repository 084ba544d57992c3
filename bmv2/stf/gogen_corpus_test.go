package stf

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/internal/testenv"
)

// dirRE matches the directories of a path in a message.
var dirRE = regexp.MustCompile(`/[^\s:]*/`)

// TestP4CCorpusGoBackend runs p4c's p4_16_samples v1model STF tests on their generated
// pipelines when NETLOCK_P4C_SAMPLES names the extracted directory (never committed; `make
// p4c-gogen`). The generated pipelines are judged against the tests the interpreter passes
// (TestP4CCorpus's count): of those, it logs how many the generator refused (grouped by
// reason), generated, built, passed and failed (by name). A failure there is a generator bug
// and fails the test, as do a generator error, a build failure and a pipeline that does not
// bind; refusals do not.
// gogenCorpusMin is the fewest v1model STF tests (and interpreter passes) the corpus run
// accepts as p4c's samples.
const gogenCorpusMin = 100

func TestP4CCorpusGoBackend(t *testing.T) {
	dir := testenv.OptIn(t, "NETLOCK_P4C_SAMPLES", "p4c's testdata/p4_16_samples (docs/p4.md, Conformance)")
	stfs, _ := filepath.Glob(filepath.Join(dir, "*.stf"))
	sort.Strings(stfs)
	v1 := regexp.MustCompile(`#include\s*<v1model.p4>`)
	var total, accepted int
	var interpFailed []string
	var cases []gogenCase
	for _, s := range stfs {
		p4 := strings.TrimSuffix(s, ".stf") + ".p4"
		src, err := os.ReadFile(p4)
		if err != nil || !v1.Match(src) {
			continue
		}
		total++
		checked, err := front.Load(p4)
		if err != nil {
			continue
		}
		accepted++
		if _, ok := runOne(checked, s); !ok {
			interpFailed = append(interpFailed, filepath.Base(p4))
			continue
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, gogenCase{Name: strings.TrimSuffix(filepath.Base(s), ".stf"), P4: strings.TrimSuffix(abs, ".stf") + ".p4",
			STFs: []string{abs}, Clock: 1000})
	}
	t.Logf("v1model STF tests: %d; accepted by the front end: %d; passed on the interpreter: %d (not passed: %v)", total, accepted,
		len(cases), strings.Join(interpFailed, " "))
	// p4c 34b86e9's samples hold 190 v1model STF tests, 188 passed by the interpreter: far
	// fewer means NETLOCK_P4C_SAMPLES names the wrong directory, which must not pass.
	if total < gogenCorpusMin || len(cases) < gogenCorpusMin {
		t.Fatalf("%s: %d v1model STF tests, %d passed by the interpreter; want at least %d (is NETLOCK_P4C_SAMPLES p4c's testdata/p4_16_samples?)",
			dir, total, len(cases), gogenCorpusMin)
	}
	rep := gogenRun(t, cases, gogenRandom)
	t.Logf("of the %d the interpreter passes: generated %d, refused %d, generator errors %d; built %d, build failures %d (go build %v)",
		len(cases), len(rep.generated), len(rep.refused), len(rep.genErrs), rep.built, len(rep.buildErrs), rep.buildTime.Round(1e9))
	pass, _ := rep.count("pass")
	fail, failed := rep.count("fail")
	bind, bound := rep.count("bind")
	errs, errored := rep.count("error")
	t.Logf("on the generated pipelines: %d passed, %d failed, %d not bound, %d runner errors", pass, fail, bind, errs)
	eq, differ, norun := rep.randomDiffs()
	t.Logf("%d random packets after each passed STF file, interpreter against generated: %d equal, %d different, %d not run", gogenRandom, eq, len(differ), len(norun))
	for _, x := range norun {
		t.Logf("  random not run: %.300s", x)
	}
	for _, x := range differ {
		t.Errorf("random packets: %.600s", x)
	}
	groups := map[string][]string{}
	reasonRE := regexp.MustCompile(`not supported by the Go backend: (.*)$`)
	for name, why := range rep.refused {
		k := why
		if m := reasonRE.FindStringSubmatch(why); m != nil {
			k = m[1]
		}
		k = dirRE.ReplaceAllString(k, "")
		if i := strings.Index(k, " aliases the argument of a parameter"); i >= 0 {
			k = "an argument aliased by another parameter (X" + k[i:]
			k = k[:strings.Index(k, " passed at")] + ")"
		}
		k = numRE.ReplaceAllString(firstLine(k), "N")
		groups[k] = append(groups[k], name)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		sort.Strings(groups[k])
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return len(groups[keys[i]]) > len(groups[keys[j]]) || len(groups[keys[i]]) == len(groups[keys[j]]) && keys[i] < keys[j]
	})
	for _, k := range keys {
		t.Logf("  refused %3d  %s: %s", len(groups[k]), k, strings.Join(groups[k], " "))
	}
	for _, k := range sortedKeys(rep.genErrs) {
		t.Errorf("generator error %s: %s", k, rep.genErrs[k])
	}
	for _, k := range sortedKeys(rep.buildErrs) {
		t.Errorf("build failure %s: %s", k, rep.buildErrs[k])
	}
	for _, x := range [][]string{failed, bound, errored} {
		for _, n := range x {
			t.Errorf("not passed on the generated pipeline: %s", n)
		}
	}
	for _, s := range rep.stfs {
		if s.Status != "pass" {
			t.Logf("  %s %s: %s", s.Case, s.Status, firstLine(s.Msg))
		}
	}
}
