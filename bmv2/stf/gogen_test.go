package stf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/internal/testenv"
)

// STF programs through the Go backend: every program is compiled to Go by engine.GenerateGo
// into one package of a temporary module (a replace directive points at this checkout), one
// driver program links them all (one go build for the lot), and the driver runs each STF file
// on a switch bound to the generated pipeline (engine.PipelineGenerated: the package's init
// registered it under the program's fingerprint). The outcome of each program is kept in its
// own category: refused by the generator (ErrGenUnsupported, with the reason), a generator
// error (anything else GenerateGo returns, or a panic), a build failure of its package, a
// bind failure (Load on the generated pipeline failed), and per STF file passed or failed.

// gogenCase is one program and the STF files run on it.
type gogenCase struct {
	Name    string            `json:"name"`
	P4      string            `json:"p4"` // absolute path
	Defines map[string]string `json:"defines,omitempty"`
	STFs    []string          `json:"stfs"`  // absolute paths
	Clock   int64             `json:"clock"` // the clock's start (Unix seconds); it advances 1µs per reading
	Pkg     string            `json:"pkg"`   // the generated package (set by gogenRun)
}

// gogenSTF is the driver's verdict on one STF file.
type gogenSTF struct {
	Case   string `json:"case"`
	STF    string `json:"stf"`
	Status string `json:"status"` // pass, fail, bind, error
	Msg    string `json:"msg,omitempty"`
}

// gogenReport holds the outcomes by category.
type gogenReport struct {
	programs  int
	generated []string          // case names
	refused   map[string]string // case -> reason (file:line:col: ...)
	genErrs   map[string]string // case -> generator error or panic
	buildErrs map[string]string // case -> first compiler messages
	built     int
	stfs      []gogenSTF
	buildTime time.Duration
}

func (r *gogenReport) count(status string) (n int, names []string) {
	for _, s := range r.stfs {
		if s.Status == status {
			n++
			names = append(names, s.Case+"/"+filepath.Base(s.STF))
		}
	}
	return n, names
}

// summary logs the counts, categories apart.
func (r *gogenReport) summary(t *testing.T) {
	t.Helper()
	pass, _ := r.count("pass")
	fail, failed := r.count("fail")
	bind, bound := r.count("bind")
	errs, errored := r.count("error")
	t.Logf("programs %d: generated %d, refused by the generator %d, generator errors %d; built %d, build failures %d (go build %v)",
		r.programs, len(r.generated), len(r.refused), len(r.genErrs), r.built, len(r.buildErrs), r.buildTime.Round(time.Second))
	t.Logf("STF files on the generated pipelines: %d passed, %d failed, %d not bound, %d runner errors", pass, fail, bind, errs)
	for _, k := range sortedKeys(r.refused) {
		t.Logf("  refused %s: %s", k, dirRE.ReplaceAllString(r.refused[k], ""))
	}
	for _, k := range sortedKeys(r.genErrs) {
		t.Logf("  generator error %s: %s", k, r.genErrs[k])
	}
	for _, k := range sortedKeys(r.buildErrs) {
		t.Logf("  build failure %s: %s", k, r.buildErrs[k])
	}
	for _, x := range [][]string{failed, bound, errored} {
		for _, n := range x {
			t.Logf("  STF not passed: %s", n)
		}
	}
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// gogenRun generates, builds and runs the cases.
func gogenRun(t *testing.T, cases []gogenCase) *gogenReport {
	t.Helper()
	root := testenv.ModuleRoot(t)
	dir := t.TempDir()
	rep := &gogenReport{programs: len(cases), refused: map[string]string{}, genErrs: map[string]string{}, buildErrs: map[string]string{}}
	var gen []gogenCase
	for i, c := range cases {
		c.Pkg = fmt.Sprintf("p%03d", i)
		src, err := gogenGenerate(c)
		switch {
		case errors.Is(err, engine.ErrGenUnsupported):
			rep.refused[c.Name] = err.Error()
			continue
		case err != nil:
			rep.genErrs[c.Name] = err.Error()
			continue
		}
		if err := os.MkdirAll(filepath.Join(dir, c.Pkg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.Pkg, "pipeline_gen.go"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		rep.generated = append(rep.generated, c.Name)
		gen = append(gen, c)
	}
	gomod := fmt.Sprintf("module gogentmp\n\ngo 1.24.0\n\nrequire github.com/netlock-go/netlock v0.0.0\n\nreplace github.com/netlock-go/netlock => %s\n", root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	// Build; a package that does not compile is a generator bug: record it, drop it from the
	// driver and build again.
	start := time.Now()
	drv := filepath.Join(dir, "driver")
	for round := 0; ; round++ {
		if err := os.WriteFile(filepath.Join(dir, "main.go"), gogenDriver(gen), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := gogenGo(dir, "build", "-o", drv, ".")
		if err == nil {
			break
		}
		bad := gogenBuildErrors(out)
		if len(bad) == 0 || round > 20 {
			t.Fatalf("go build of the generated packages: %v\n%s", err, out)
		}
		kept := gen[:0]
		for _, c := range gen {
			if msg, ok := bad[c.Pkg]; ok {
				rep.buildErrs[c.Name] = msg
				continue
			}
			kept = append(kept, c)
		}
		gen = kept
	}
	rep.buildTime = time.Since(start)
	rep.built = len(gen)
	in, err := json.Marshal(gen)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(drv)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the driver: %v\n%s", err, stderr.Bytes())
	}
	if err := json.Unmarshal(out, &rep.stfs); err != nil {
		t.Fatalf("the driver's output: %v\n%s", err, out)
	}
	return rep
}

// gogenGenerate runs the generator on one case; a panic is a generator error.
func gogenGenerate(c gogenCase) (src []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			src, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	checked, err := front.LoadOptions(c.P4, front.Options{Defines: c.Defines})
	if err != nil {
		return nil, fmt.Errorf("front end: %w", err)
	}
	return engine.GenerateGo(checked, engine.GenOptions{Package: c.Pkg, Name: "pipeline", Source: filepath.Base(c.P4)})
}

// gogenGo runs the go command in dir, offline, module-aware with the temporary module's
// requirements filled in from the module cache.
func gogenGo(dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}

var buildPkgRE = regexp.MustCompile(`(?m)^# gogentmp/(p\d+)$`)

// gogenBuildErrors maps each package the compiler complained about to its first messages.
func gogenBuildErrors(out []byte) map[string]string {
	bad := map[string]string{}
	locs := buildPkgRE.FindAllSubmatchIndex(out, -1)
	for i, l := range locs {
		end := len(out)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		msg := strings.TrimSpace(string(out[l[1]:end]))
		lines := strings.Split(msg, "\n")
		if len(lines) > 3 {
			lines = lines[:3]
		}
		bad[string(out[l[2]:l[3]])] = strings.Join(lines, " | ")
	}
	return bad
}

// gogenDriver is the driver program: it reads the cases as JSON on stdin, runs every STF file
// of each on a fresh switch bound to the case's generated pipeline, and writes the verdicts as
// JSON.
func gogenDriver(cases []gogenCase) []byte {
	var b bytes.Buffer
	b.WriteString(`// Code generated by the Go backend's STF test; DO NOT EDIT.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/stf"
`)
	for _, c := range cases {
		fmt.Fprintf(&b, "\t_ %q\n", "gogentmp/"+c.Pkg)
	}
	b.WriteString(`)

type gcase struct {
	Name    string            ` + "`json:\"name\"`" + `
	P4      string            ` + "`json:\"p4\"`" + `
	Defines map[string]string ` + "`json:\"defines,omitempty\"`" + `
	STFs    []string          ` + "`json:\"stfs\"`" + `
	Clock   int64             ` + "`json:\"clock\"`" + `
}

type verdict struct {
	Case   string ` + "`json:\"case\"`" + `
	STF    string ` + "`json:\"stf\"`" + `
	Status string ` + "`json:\"status\"`" + `
	Msg    string ` + "`json:\"msg,omitempty\"`" + `
}

func one(c gcase, path string) (v verdict) {
	v = verdict{Case: c.Name, STF: path}
	defer func() {
		if r := recover(); r != nil {
			v.Status, v.Msg = "fail", fmt.Sprintf("panic: %v", r)
		}
	}()
	checked, err := front.LoadOptions(c.P4, front.Options{Defines: c.Defines})
	if err != nil {
		v.Status, v.Msg = "error", err.Error()
		return v
	}
	now := time.Unix(c.Clock, 0)
	sw, err := engine.Load(checked, engine.Config{Pipeline: engine.PipelineGenerated,
		Now: func() time.Time { now = now.Add(time.Microsecond); return now }})
	if err != nil {
		v.Status, v.Msg = "bind", err.Error()
		return v
	}
	if sw.GeneratedPipeline() == "" {
		v.Status, v.Msg = "bind", "the interpreter runs it"
		return v
	}
	f, err := os.Open(path)
	if err != nil {
		v.Status, v.Msg = "error", err.Error()
		return v
	}
	defer f.Close()
	cmds, err := stf.Parse(f)
	if err != nil {
		v.Status, v.Msg = "error", err.Error()
		return v
	}
	res, err := stf.Run(sw, cmds)
	switch {
	case err != nil:
		v.Status, v.Msg = "fail", err.Error()
	case !res.Passed():
		v.Status, v.Msg = "fail", res.Failures[0]
	default:
		v.Status = "pass"
	}
	return v
}

func main() {
	var cases []gcase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := []verdict{}
	for _, c := range cases {
		for _, s := range c.STFs {
			out = append(out, one(c, s))
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
`)
	return b.Bytes()
}

// gogenRepoCases are the repository's STF programs: bmv2/stf/testdata/NAME.p4 with NAME.stf,
// the Go backend's regression programs gogen_testdata/NAME.p4 with NAME.stf, and
// p4/netlock.p4 (as written) with p4/testdata/*.stf.
func gogenRepoCases(t *testing.T) []gogenCase {
	t.Helper()
	stfs, err := filepath.Glob("testdata/*.stf")
	if err != nil || len(stfs) == 0 {
		t.Fatalf("no STF files: %v", err)
	}
	regs, err := filepath.Glob("gogen_testdata/*.stf")
	if err != nil || len(regs) == 0 {
		t.Fatalf("no gogen_testdata STF files: %v", err)
	}
	stfs = append(stfs, regs...)
	var cases []gogenCase
	for _, s := range stfs {
		abs, err := filepath.Abs(s)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, gogenCase{Name: strings.TrimSuffix(filepath.Base(s), ".stf"),
			P4: strings.TrimSuffix(abs, ".stf") + ".p4", STFs: []string{abs}})
	}
	root := testenv.ModuleRoot(t)
	nl, err := filepath.Glob(filepath.Join(root, "p4", "testdata", "*.stf"))
	if err != nil || len(nl) == 0 {
		t.Fatalf("no p4/testdata STF files: %v", err)
	}
	return append(cases, gogenCase{Name: "netlock", P4: filepath.Join(root, "p4", "netlock.p4"), STFs: nl})
}

// TestGoBackendSTF runs the repository's STF programs on their generated pipelines (see the
// comment at the top of this file). A generator error, a package that does not build, a
// pipeline that does not bind and an STF file that fails fail the test; a refusal is allowed
// (the interpreter runs those programs) but must name the program and, below the program
// level, file:line:col.
func TestGoBackendSTF(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a module of generated packages")
	}
	cases := gogenRepoCases(t)
	// The regression programs' expectations hold on the interpreter, the reference
	// (TestSuite runs testdata/ and dataplane the p4/testdata files).
	for _, c := range cases {
		if filepath.Base(filepath.Dir(c.P4)) != "gogen_testdata" {
			continue
		}
		checked, err := front.Load(c.P4)
		if err != nil {
			t.Fatal(err)
		}
		if group, ok := runOne(checked, c.STFs[0]); !ok {
			t.Errorf("%s on the interpreter: %s", c.Name, group)
		}
	}
	rep := gogenRun(t, cases)
	rep.summary(t)
	posRE := regexp.MustCompile(`^[^: ]+\.p4(:\d+:\d+)?: `)
	for name, why := range rep.refused {
		if !posRE.MatchString(why) {
			t.Errorf("refusal of %s does not name the program's file:line:col: %s", name, why)
		}
	}
	for name, e := range rep.genErrs {
		t.Errorf("generator error on %s: %s", name, e)
	}
	for name, e := range rep.buildErrs {
		t.Errorf("generated package of %s does not build: %s", name, e)
	}
	for _, s := range rep.stfs {
		if s.Status != "pass" {
			t.Errorf("%s %s on the generated pipeline: %s: %s", s.Case, filepath.Base(s.STF), s.Status, s.Msg)
		}
	}
	if len(rep.generated) == 0 || len(rep.stfs) == 0 {
		t.Error("nothing was generated or run")
	}
	// netlock.p4 must be among the generated: the repository links its pipeline.
	if !contains(rep.generated, "netlock") {
		t.Error("p4/netlock.p4 was not generated")
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
