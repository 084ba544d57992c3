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
	"slices"
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
// on a switch bound to the case's generated pipeline (engine.PipelineGenerated with
// engine.Config.Generated the package's PipelinePipeline). The outcome of each program is kept in its
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
	// Control, if set, makes the case the random phase's negative control: the interpreter
	// runs the program with this mutation (its STF result ignored), so the random packets
	// must show a difference.
	Control *engine.GenMutation `json:"control,omitempty"`
}

// gogenSTF is the driver's verdict on one STF file.
type gogenSTF struct {
	Case   string `json:"case"`
	STF    string `json:"stf"`
	Status string `json:"status"` // pass, fail, bind, error
	Msg    string `json:"msg,omitempty"`
	// Rand is the random differential after a passed STF file: "" when RandN random packets
	// gave equal results and state on both pipelines, else the first difference (or why it
	// did not run, starting "reference:").
	Rand  string `json:"rand,omitempty"`
	RandN int    `json:"randn"`
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

// gogenNotV1Model is the generator's refusal of a program of another architecture (TNA): a
// category of its own, apart from the v1model constructs the generator does not support.
const gogenNotV1Model = "not supported by the Go backend: TNA programs"

// notV1Model lists the refused cases that are not v1model programs.
func (r *gogenReport) notV1Model() []string {
	var out []string
	for _, k := range sortedKeys(r.refused) {
		if strings.HasSuffix(r.refused[k], gogenNotV1Model) {
			out = append(out, k)
		}
	}
	return out
}

// summary logs the counts, categories apart.
func (r *gogenReport) summary(t *testing.T) {
	t.Helper()
	pass, _ := r.count("pass")
	fail, failed := r.count("fail")
	bind, bound := r.count("bind")
	errs, errored := r.count("error")
	notV1 := r.notV1Model()
	t.Logf("programs %d: generated %d, not v1model (refused) %d, refused by the generator (v1model) %d, generator errors %d; built %d, build failures %d (go build %v)",
		r.programs, len(r.generated), len(notV1), len(r.refused)-len(notV1), len(r.genErrs), r.built, len(r.buildErrs), r.buildTime.Round(time.Second))
	t.Logf("STF files on the generated pipelines: %d passed, %d failed, %d not bound, %d runner errors", pass, fail, bind, errs)
	eq, differ, norun := r.randomDiffs()
	t.Logf("random packets after each passed STF file, interpreter against generated: %d equal, %d different, %d not run", eq, len(differ), len(norun))
	for _, x := range append(differ, norun...) {
		t.Logf("  random: %.400s", x)
	}
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

// randomDiffs counts the random differentials: equal, different (the differences) and not
// run because the interpreter fails the STF file.
func (r *gogenReport) randomDiffs() (equal int, differ []string, norun []string) {
	for _, s := range r.stfs {
		switch {
		case s.Status != "pass" || s.RandN == 0 && s.Rand == "":
		case s.Rand == "":
			equal++
		case strings.HasPrefix(s.Rand, "reference:"):
			norun = append(norun, s.Case+"/"+filepath.Base(s.STF)+": "+s.Rand)
		default:
			differ = append(differ, s.Case+"/"+filepath.Base(s.STF)+": "+s.Rand)
		}
	}
	return equal, differ, norun
}

// gogenRun generates, builds and runs the cases; after each STF file that passes, nrand
// random packets go to the generated switch and to an interpreted one that ran the same file.
func gogenRun(t *testing.T, cases []gogenCase, nrand int) *gogenReport {
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
	cmd.Env = append(os.Environ(), fmt.Sprintf("GOGEN_RANDOM=%d", nrand))
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
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/stf"
`)
	for _, c := range cases {
		fmt.Fprintf(&b, "\t%q\n", "gogentmp/"+c.Pkg)
	}
	b.WriteString(")\n\n// pipelines are the generated pipelines by package.\nvar pipelines = map[string]engine.Generated{\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "\t%q: %s.PipelinePipeline,\n", c.Pkg, c.Pkg)
	}
	b.WriteString(`}

type gcase struct {
	Name    string            ` + "`json:\"name\"`" + `
	Pkg     string            ` + "`json:\"pkg\"`" + `
	P4      string            ` + "`json:\"p4\"`" + `
	Defines map[string]string ` + "`json:\"defines,omitempty\"`" + `
	STFs    []string          ` + "`json:\"stfs\"`" + `
	Clock   int64             ` + "`json:\"clock\"`" + `
	Control *engine.GenMutation ` + "`json:\"control,omitempty\"`" + `
}

type verdict struct {
	Case   string ` + "`json:\"case\"`" + `
	STF    string ` + "`json:\"stf\"`" + `
	Status string ` + "`json:\"status\"`" + `
	Msg    string ` + "`json:\"msg,omitempty\"`" + `
	Rand   string ` + "`json:\"rand,omitempty\"`" + `
	RandN  int    ` + "`json:\"randn\"`" + `
}

// clock is a switch's clock: it advances 1µs per reading while step is set (as the STF
// tests' clocks), else only when the driver moves it (the random phase: both switches see the
// same time whatever number of readings each pipeline makes).
type clock struct {
	now  time.Time
	step bool
}

func (k *clock) read() time.Time {
	if k.step {
		k.now = k.now.Add(time.Microsecond)
	}
	return k.now
}

func load(c gcase, pl engine.Pipeline, k *clock) (*engine.Switch, error) {
	checked, err := front.LoadOptions(c.P4, front.Options{Defines: c.Defines})
	if err != nil {
		return nil, err
	}
	if c.Control != nil && pl == engine.PipelineInterpreted {
		if _, err := c.Control.Apply(checked); err != nil {
			return nil, err
		}
	}
	return engine.Load(checked, engine.Config{Pipeline: pl, Generated: pipelines[c.Pkg], Now: k.read})
}

func one(c gcase, path string, nrand int) (v verdict) {
	v = verdict{Case: c.Name, STF: path}
	defer func() {
		if r := recover(); r != nil {
			v.Status, v.Msg = "fail", fmt.Sprintf("panic: %v", r)
		}
	}()
	gk := &clock{now: time.Unix(c.Clock, 0), step: true}
	sw, err := load(c, engine.PipelineGenerated, gk)
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
	if v.Status != "pass" || nrand == 0 {
		return v
	}
	// The random phase: the interpreter runs the same STF file (the same control-plane
	// state), then both switches take the same random packets.
	rk := &clock{now: time.Unix(c.Clock, 0), step: true}
	ref, err := load(c, engine.PipelineInterpreted, rk)
	if err != nil {
		v.Rand = "reference: " + err.Error()
		return v
	}
	if res, err := stf.Run(ref, cmds); (err != nil || !res.Passed()) && c.Control == nil {
		v.Rand = "reference: the STF file fails on the interpreter"
		return v
	}
	v.Rand = randomDiff(c.Name+path, cmds, ref, sw, rk, gk, nrand)
	v.RandN = nrand
	return v
}

type outcome struct {
	err  string
	outs []string
	pins []string
	digs []string
}

func capture(r *engine.Result, err error) outcome {
	var o outcome
	if err != nil {
		o.err = err.Error()
	}
	if r == nil {
		return o
	}
	for _, x := range r.Out {
		o.outs = append(o.outs, fmt.Sprintf("port %d %x", x.Port, x.Data))
	}
	for _, x := range r.PacketIn {
		o.pins = append(o.pins, fmt.Sprintf("%x", x))
	}
	for _, d := range r.Digests {
		o.digs = append(o.digs, fmt.Sprintf("%d %s %x", d.Receiver, d.Name, d.Fields))
	}
	return o
}

func (a outcome) String() string {
	return fmt.Sprintf("error %q outputs %v packet-ins %v digests %v", a.err, a.outs, a.pins, a.digs)
}

// randomDiff sends n random packets (STF packets with bytes changed, cut or extended, on any
// port, and random bytes) to both switches and returns "" when every result and, at the end,
// every register cell and counter are equal, else the first difference.
func randomDiff(name string, cmds []stf.Command, ref, gen *engine.Switch, rk, gk *clock, n int) string {
	type tmpl struct {
		port int
		data []byte
	}
	var ts []tmpl
	for _, c := range cmds {
		if c.Name != "packet" || len(c.Args) < 2 {
			continue
		}
		port, err1 := strconv.Atoi(c.Args[0])
		data, err2 := hex.DecodeString(strings.Join(c.Args[1:], ""))
		if err1 == nil && err2 == nil {
			ts = append(ts, tmpl{port, data})
		}
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	rng := rand.New(rand.NewPCG(h.Sum64(), 1))
	rk.step, gk.step = false, false
	for i := 0; i < n; i++ {
		var port int
		var pkt []byte
		switch r := rng.IntN(100); {
		case r < 75 && len(ts) > 0:
			t := ts[rng.IntN(len(ts))]
			port, pkt = t.port, append([]byte(nil), t.data...)
			switch {
			case r < 45:
				for k := 1 + rng.IntN(3); k > 0 && len(pkt) > 0; k-- {
					pkt[rng.IntN(len(pkt))] ^= byte(1 + rng.IntN(255))
				}
			case r < 55:
				pkt = pkt[:rng.IntN(len(pkt)+1)]
			case r < 65:
				for k := rng.IntN(40); k > 0; k-- {
					pkt = append(pkt, byte(rng.Uint32()))
				}
			default:
				port = rng.IntN(9)
			}
		default:
			port = rng.IntN(9)
			pkt = make([]byte, rng.IntN(100))
			for k := range pkt {
				pkt[k] = byte(rng.Uint32())
			}
			if len(pkt) > 14 && rng.IntN(2) == 0 {
				pkt[12], pkt[13] = 0x08, 0x00
			}
		}
		d := time.Duration(rng.IntN(1000)) * time.Microsecond
		rk.now, gk.now = rk.now.Add(d), gk.now.Add(d)
		a := capture(ref.Process(port, pkt))
		b := capture(gen.Process(port, pkt))
		if a.String() != b.String() {
			return fmt.Sprintf("random packet %d on port %d %x: interpreter %s; generated %s", i, port, pkt, a, b)
		}
	}
	for i, r := range ref.Registers() {
		g := gen.Registers()[i]
		for c := 0; c < r.Size(); c++ {
			x, _ := r.Read(c)
			y, _ := g.Read(c)
			if !bytes.Equal(x, y) {
				return fmt.Sprintf("after %d random packets: register %s[%d] interpreter %x, generated %x", n, r.Name, c, x, y)
			}
		}
	}
	for i, k := range ref.Counters() {
		g := gen.Counters()[i]
		if !slices.Equal(k.Packets, g.Packets) || !slices.Equal(k.Bytes, g.Bytes) {
			return fmt.Sprintf("after %d random packets: counter %s interpreter %v/%v, generated %v/%v", n, k.Name, k.Packets, k.Bytes, g.Packets, g.Bytes)
		}
	}
	for i, t := range ref.Tables() {
		x, y := t.Entries(), gen.Tables()[i].Entries()
		for j := range x {
			if j >= len(y) || x[j].Packets != y[j].Packets || x[j].Bytes != y[j].Bytes {
				return fmt.Sprintf("after %d random packets: table %s entry %d: direct counters differ", n, t.Name, j)
			}
		}
	}
	return ""
}

func main() {
	var cases []gcase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	nrand, _ := strconv.Atoi(os.Getenv("GOGEN_RANDOM"))
	out := []verdict{}
	for _, c := range cases {
		for _, s := range c.STFs {
			out = append(out, one(c, s, nrand))
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

// gogenRandom is the number of random packets sent after each passed STF file.
const gogenRandom = 1000

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
	// The random phase's negative control: round3.p4 under another name (so another
	// fingerprint), its interpreter with one comparison inverted.
	ctl := gogenControl(t)
	rep := gogenRun(t, append(cases, ctl), gogenRandom)
	var kept []gogenSTF
	for _, s := range rep.stfs {
		if s.Case != ctl.Name {
			kept = append(kept, s)
			continue
		}
		if s.Status != "pass" || s.Rand == "" || strings.HasPrefix(s.Rand, "reference:") {
			t.Errorf("negative control: %s with the interpreter mutated (%s): STF %s, random phase %q; want a difference",
				ctl.Name, ctl.Control, s.Status, s.Rand)
		} else {
			t.Logf("negative control (%s, interpreter mutated %s) caught: %.200s", ctl.Name, ctl.Control, s.Rand)
		}
	}
	rep.stfs = kept
	rep.programs--
	if _, bad := rep.buildErrs[ctl.Name]; contains(rep.generated, ctl.Name) && !bad {
		rep.built--
	}
	rep.generated = slices.DeleteFunc(rep.generated, func(n string) bool { return n == ctl.Name })
	rep.summary(t)
	_, differ, _ := rep.randomDiffs()
	for _, d := range differ {
		t.Errorf("random packets: %.600s", d)
	}
	// The refusals are pinned: a new one, or one that went away (the generator learnt the
	// construct, or a program changed), fails until gogenRefusals is updated, and with it the
	// counts in docs/p4.md.
	for _, name := range sortedKeys(rep.refused) {
		want, ok := gogenRefusals[name]
		if !ok {
			t.Errorf("%s refused, not among the expected refusals: %s", name, rep.refused[name])
		} else if !strings.Contains(rep.refused[name], want) {
			t.Errorf("%s refused for another reason: %s; want %q", name, rep.refused[name], want)
		}
	}
	for _, name := range sortedKeys(gogenRefusals) {
		if _, ok := rep.refused[name]; !ok {
			t.Errorf("%s was expected to be refused (%s) and was not: update gogenRefusals and docs/p4.md", name, gogenRefusals[name])
		}
	}
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

// gogenRefusals are the repository's STF programs the generator refuses, with the reason
// (a part of the refusal's message): 7 not v1model, 5 v1model constructs it does not support.
var gogenRefusals = map[string]string{
	"tna_counter":  gogenNotV1Model,
	"tna_digest":   gogenNotV1Model,
	"tna_hash":     gogenNotV1Model,
	"tna_meter":    gogenNotV1Model,
	"tna_mirror":   gogenNotV1Model,
	"tna_register": gogenNotV1Model,
	"tna_resubmit": gogenNotV1Model,
	"exprs":        "exprs.p4:50:33: not supported by the Go backend: signed values",
	"externs":      "externs.p4:29:34: not supported by the Go backend: header fields wider than 64 bits",
	"parser":       "parser.p4:48:11: not supported by the Go backend: parser loops",
	"varbit":       "varbit.p4:25:9: not supported by the Go backend: packet_in.extract",
	"wide":         "wide.p4:20:24: not supported by the Go backend: header fields wider than 64 bits",
}

// gogenControl copies testdata/round3.p4 and its STF file to round3_control.* in a temporary
// directory: a case whose interpreter inverts `hdr.i.a == 8w1` (line 40).
func gogenControl(t *testing.T) gogenCase {
	t.Helper()
	dir := t.TempDir()
	for _, ext := range []string{".p4", ".stf"} {
		b, err := os.ReadFile("testdata/round3" + ext)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "round3_control"+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return gogenCase{Name: "round3_control", P4: filepath.Join(dir, "round3_control.p4"),
		STFs:    []string{filepath.Join(dir, "round3_control.stf")},
		Control: &engine.GenMutation{At: "round3_control.p4:40:21", Op: "==", To: "!="}}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
