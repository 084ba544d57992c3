package dpengine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/stf"
	"github.com/netlock-go/netlock/internal/simpleswitch"
	"github.com/netlock-go/netlock/internal/testenv"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// The data plane on bmv2's real simple_switch (make test-real; internal/simpleswitch drives
// it): p4/netlock.p4 compiled by p4c-bm2-ss runs every STF scenario, and the differential
// test's sequences run on it as a third party next to the interpreter and the generated
// pipeline, packet for packet.

// compiled caches p4c-bm2-ss's JSON of p4/netlock.p4 by sizing within one run of the tests (a
// compile takes 20-60 s): sizing's defines -> the JSON's contents.
var compiled sync.Map

// compileNetlock compiles p4/netlock.p4 with sz's macros into dir (or copies the JSON an
// earlier test of this run compiled for the same sizing there) and returns the JSON's path.
func compileNetlock(t *testing.T, tools simpleswitch.Tools, sz dataplane.Sizing, dir string) string {
	t.Helper()
	key := fmt.Sprint(sz.Defines()) // fmt prints a map's keys sorted
	path := filepath.Join(dir, "netlock.json")
	if data, ok := compiled.Load(key); ok {
		if err := os.WriteFile(path, data.([]byte), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	src := filepath.Join(testenv.ModuleRoot(t), "p4", filepath.FromSlash(dataplane.V1Model.File))
	json, _, diags, err := simpleswitch.Compile(tools.P4c, src, dir, sz.Defines())
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(diags) != "" {
		t.Logf("p4c-bm2-ss p4/netlock.p4:\n%s", diags)
	}
	data, err := os.ReadFile(json)
	if err != nil {
		t.Fatal(err)
	}
	compiled.Store(key, data)
	return json
}

// TestRealScenarios runs every STF scenario of p4/testdata on real simple_switch: the
// commands as they are, but for our two extensions, which stf.RunReal translates
// (register_read's expected value, check_counter).
func TestRealScenarios(t *testing.T) {
	tools := simpleswitch.RequireTools(t)
	dir := t.TempDir()
	json := compileNetlock(t, tools, dataplane.DefaultSizing, dir)
	sw, err := Load(dataplane.DefaultSizing, engine.Config{}) // names, keys and actions for RunReal
	if err != nil {
		t.Fatal(err)
	}
	stfs, err := filepath.Glob(filepath.Join(scenarioDir, "*.stf"))
	if err != nil || len(stfs) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range stfs {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".stf"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cmds, err := stf.Parse(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			ss, err := simpleswitch.Start(simpleswitch.Options{Switch: tools.Switch, CLI: tools.CLI, JSON: json,
				Ports: stf.Ports(cmds), Debug: true, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			res, err := stf.RunReal(ss, sw.Switch, cmds, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Failures {
				t.Errorf("%s: %s", path, f)
			}
		})
	}
}

// rigMirror is a second switch running the same program as a rig's: it gets every packet the
// rig's switch gets and must send the same packets, port by port, in the same order
// (rig.checkMirrors).
type rigMirror interface {
	name() string
	// sync gives the mirror the rig's switch's tables, meters, clone sessions and registers.
	sync(sw *Switch) error
	// process runs one frame and returns what left each port (the CPU port's packet-ins too).
	process(port int, frame []byte) (map[int][][]byte, error)
}

// outputs are the frames a result sent, by port (packet-ins under the CPU port).
func outputs(res *engine.Result, cpu int) map[int][][]byte {
	m := map[int][][]byte{}
	for _, o := range res.Out {
		m[o.Port] = append(m[o.Port], slices.Clone(o.Data))
	}
	for _, p := range res.PacketIn {
		m[cpu] = append(m[cpu], slices.Clone(p))
	}
	return m
}

// checkMirrors runs the frame the rig's switch just processed on every mirror and compares.
func (r *rig) checkMirrors(port int, frame []byte, res *engine.Result) {
	if len(r.mirrors) == 0 {
		return
	}
	r.t.Helper()
	want := outputs(res, r.sw.Sizing.CPUPort)
	for _, m := range r.mirrors {
		got, err := m.process(port, frame)
		if err != nil {
			r.t.Fatalf("%s: %v", m.name(), err)
		}
		if d := diffOutputs(want, got); d != "" {
			r.t.Fatalf("%s sends other packets than the interpreter for the frame on port %d (%X):\n%s", m.name(), port, frame, d)
		}
	}
}

// diffOutputs describes how got differs from want, port by port; "" when equal.
func diffOutputs(want, got map[int][][]byte) string {
	var ports []int
	for p := range want {
		ports = append(ports, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			ports = append(ports, p)
		}
	}
	sort.Ints(ports)
	var b strings.Builder
	for _, p := range ports {
		w, g := want[p], got[p]
		if slices.EqualFunc(w, g, bytes.Equal) {
			continue
		}
		fmt.Fprintf(&b, "port %d:\n", p)
		for _, f := range w {
			fmt.Fprintf(&b, "  interpreter %X\n", f)
		}
		for _, f := range g {
			fmt.Fprintf(&b, "  mirror      %X\n", f)
		}
	}
	return b.String()
}

func (r *rig) syncMirrors() {
	for _, m := range r.mirrors {
		if err := m.sync(r.sw); err != nil {
			r.t.Fatalf("%s: %v", m.name(), err)
		}
	}
}

// realMirror is real simple_switch.
type realMirror struct{ ss *simpleswitch.Switch }

func (m realMirror) name() string { return "simple_switch" }

func (m realMirror) sync(sw *Switch) error { return m.ss.SyncFrom(sw.Switch) }

func (m realMirror) process(port int, frame []byte) (map[int][][]byte, error) {
	if err := m.ss.Send(port, frame); err != nil {
		return nil, err
	}
	if err := m.ss.Wait(time.Minute); err != nil {
		return nil, err
	}
	return m.ss.Received(), nil
}

// engineMirror is the program on another pipeline of the engine (the generated one).
type engineMirror struct {
	label string
	sw    *Switch
}

func (m engineMirror) name() string { return m.label }

func (m engineMirror) sync(from *Switch) error {
	for _, t := range from.Tables() {
		to, err := m.sw.Table(t.Name)
		if err != nil {
			return err
		}
		to.Clear()
		for _, e := range t.Entries() {
			e.Packets, e.Bytes = 0, 0
			if err := to.Insert(e); err != nil {
				return err
			}
		}
		name, args := t.Default()
		if err := to.SetDefault(name, 0, args); err != nil && !strings.Contains(err.Error(), "const") {
			return err
		}
	}
	for _, k := range from.Meters() {
		if k.Direct() {
			continue
		}
		to, err := m.sw.Meter(k.Name)
		if err != nil {
			return err
		}
		for i := 0; i < k.Size(); i++ {
			if c := k.Rates(i); c != nil {
				if err := to.SetRates(i, *c); err != nil {
					return err
				}
			}
		}
	}
	for id, s := range from.CloneSessions() {
		m.sw.SetCloneSession(id, s)
	}
	for _, reg := range from.Registers() {
		to, err := m.sw.Register(reg.Name)
		if err != nil {
			return err
		}
		for i := 0; i < reg.Size(); i++ {
			v, err := reg.Read(i)
			if err != nil {
				return err
			}
			if err := to.Write(i, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m engineMirror) process(port int, frame []byte) (map[int][][]byte, error) {
	res, err := m.sw.Process(port, frame)
	if err != nil {
		return nil, err
	}
	return outputs(res, m.sw.Sizing.CPUPort), nil
}

// realDiffSeeds is how many sequences of each configuration TestRealDifferential runs.
const realDiffSeeds = 60

// TestRealDifferential runs the differential test's seeded sequences (realDiffSeeds per
// configuration, 240 in all) on the interpreter, checked against the lockcore oracle as
// TestDifferential does, with real simple_switch and the generated pipeline as mirrors: every
// packet into the interpreter goes into both, and each must send the same packets, port by
// port, in the same order. A failure prints its seed (re-run it with -seed=N).
func TestRealDifferential(t *testing.T) {
	tools := simpleswitch.RequireTools(t)
	sz := dataplane.Sizing{Locks: 8, PartBits: 6} // newDiffSwitch's
	json := compileNetlock(t, tools, sz, t.TempDir())
	ports := []int{100 + 1, 100 + 2, sz.WithDefaults().CPUPort}
	for c := 1; c <= 20; c++ {
		ports = append(ports, c)
	}
	ss, err := simpleswitch.Start(simpleswitch.Options{Switch: tools.Switch, CLI: tools.CLI, JSON: json, Ports: ports, Debug: true, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	for _, rules := range diffConfigs {
		t.Run(rules.name, func(t *testing.T) {
			r := newDiffSwitch(t, dataplane.V1Model, rules, nil, engine.PipelineInterpreted)
			gen, err := gdLoadGen(sz, engine.Config{Now: func() time.Time { return r.now }})
			if err != nil {
				t.Fatal(err)
			}
			r.mirrors = []rigMirror{realMirror{ss}, engineMirror{"the generated pipeline", gen}}
			for _, seed := range diffSeeds(t, realDiffSeeds) {
				ok := t.Run("", func(t *testing.T) {
					r.t = t
					defer func() {
						if t.Failed() {
							t.Logf("seed %d (re-run: go test ./p4/dataplane/dpengine -run 'TestRealDifferential/%s' -seed=%d)", seed, rules.name, seed)
						}
					}()
					runDiff(t, r, nil, rules, seed)
				})
				if !ok {
					return
				}
			}
		})
	}
}

// TestMirrors checks the mirrors TestRealDifferential uses, without the real tools: the
// generated pipeline as a mirror of the interpreter agrees packet for packet over a few
// sequences, and the interpreter running the program with gdMutation (one off-by-one
// comparison) as the mirror is caught (the negative control of the mirror comparison and of
// its sync).
func TestMirrors(t *testing.T) {
	sz := dataplane.Sizing{Locks: 8, PartBits: 6}
	rules := diffConfigs[1] // overflow: small regions, where the mutant's bound check matters
	r := newDiffSwitch(t, dataplane.V1Model, rules, nil, engine.PipelineInterpreted)
	gen, err := gdLoadGen(sz, engine.Config{Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	r.mirrors = []rigMirror{engineMirror{"the generated pipeline", gen}}
	for _, seed := range diffSeeds(t, 5) {
		if msg := diffFails(r, rules, seed); msg != "" {
			t.Fatalf("seed %d: %s", seed, msg)
		}
	}
	mut, err := gdLoadMutantInterp(sz, engine.Config{Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	r.mirrors = []rigMirror{engineMirror{"the mutant", mut}}
	caught := 0
	seeds := diffSeeds(t, 40)
	for _, seed := range seeds {
		if msg := diffFails(r, rules, seed); strings.Contains(msg, "the mutant sends other packets") {
			caught++
		}
	}
	if caught == 0 {
		t.Fatalf("the mutant mirror passed %d sequences (seeds from %d)", len(seeds), seeds[0])
	}
	t.Logf("the mutant caught in %d of %d sequences", caught, len(seeds))
}
