package dpengine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// The negative control of the differential test: one fault in p4/netlock.p4, made in the
// interpreter's copy of the program (engine.GenMutation), against the generated pipeline of
// the program as written. The comparison sees the same difference whichever side carries the
// fault, so nothing mutated is generated, committed or built; newGenDiff still checks that the
// side under test runs the generated pipeline and the reference the interpreter.

// gdMutationSite is the fault's place in p4/netlock.p4, found by its text (so that edits
// elsewhere do not move it): in action token_slot, the first comparison's >= becomes >, so
// that the first slot of a lock's level-0 region is taken for a slot outside both regions.
const gdMutationSite, gdMutationOp, gdMutationTo = "if (meta.tslot >= meta.left0 && ", ">=", ">"

// gdMutation is the fault at gdMutationSite, by file:line:col.
func gdMutation() (engine.GenMutation, error) {
	src := dataplane.V1Model.Source
	if bytes.Count(src, []byte(gdMutationSite)) != 1 {
		return engine.GenMutation{}, fmt.Errorf("%q is not in p4/netlock.p4 exactly once: update the mutation", gdMutationSite)
	}
	at := bytes.Index(src, []byte(gdMutationSite)) + strings.Index(gdMutationSite, gdMutationOp)
	line := 1 + bytes.Count(src[:at], []byte("\n"))
	col := at - bytes.LastIndexByte(src[:at], '\n')
	return engine.GenMutation{At: fmt.Sprintf("%s:%d:%d", dataplane.V1Model.File, line, col), Op: gdMutationOp, To: gdMutationTo}, nil
}

// gdLoadMutantInterp loads p4/netlock.p4 with the mutation on the interpreter.
func gdLoadMutantInterp(sz dataplane.Sizing, cfg engine.Config) (*Switch, error) {
	m, err := gdMutation()
	if err != nil {
		return nil, err
	}
	sz = sz.WithDefaults()
	checked, err := Check(sz)
	if err != nil {
		return nil, err
	}
	if _, err := m.Apply(checked); err != nil {
		return nil, err
	}
	if cfg.CPUPort == 0 {
		cfg.CPUPort = sz.CPUPort
	}
	cfg.Pipeline = engine.PipelineInterpreted
	sw, err := engine.Load(checked, cfg)
	if err != nil {
		return nil, err
	}
	return &Switch{Switch: sw, Sizing: sz, Program: dataplane.V1Model}, nil
}

// TestGenDifferentialMutant is the negative control of TestGenDifferential: the same harness,
// driving the generated pipeline of p4/netlock.p4 against the interpreter running the program
// with one off-by-one comparison, must find a difference in each of a few sequences; the test
// fails if the mutant passes.
func TestGenDifferentialMutant(t *testing.T) {
	m, err := gdMutation()
	if err != nil {
		t.Fatal(err)
	}
	n := genDiffPackets()
	for seed := uint64(1); seed <= 3; seed++ {
		g, err := newGenDiffRef(seed, gdSizings[0], gdLoadMutantInterp, gdLoadGen)
		if err != nil {
			t.Fatal(err)
		}
		d := g.run(n)
		if !d.differs() {
			t.Fatalf("seed %d: the mutant (%s) was not caught in %d packets of the differential test (a catch is a packet or state difference): %s",
				seed, m, n, d.text)
		}
		_, first, _ := strings.Cut(d.text, "first difference: ")
		t.Logf("seed %d: the mutant (%s) caught at packet %d of %d: %.200s", seed, m, g.n, n, first)
	}
}

// TestGenMutationSite: the mutation names one comparison of p4/netlock.p4 (Apply finds it and
// it is the operator expected), and changes the program (its fingerprint).
func TestGenMutationSite(t *testing.T) {
	m, err := gdMutation()
	if err != nil {
		t.Fatal(err)
	}
	checked, err := Check(dataplane.Sizing{Locks: 8, PartBits: 6})
	if err != nil {
		t.Fatal(err)
	}
	before := engine.Fingerprint(checked)
	undo, err := m.Apply(checked)
	if err != nil {
		t.Fatal(err)
	}
	if engine.Fingerprint(checked) == before {
		t.Error("the mutation does not change the program")
	}
	undo()
	if engine.Fingerprint(checked) != before {
		t.Error("undo does not restore the program")
	}
}

// TestGenDiffOutcomeKinds: only a packet or state difference counts as a catch for the
// mutant's negative control; an equal run or a control-plane change that failed (set-up, no
// comparison made) does not.
func TestGenDiffOutcomeKinds(t *testing.T) {
	for _, c := range []struct {
		kind gdKind
		want bool
	}{{gdEqual, false}, {gdSetup, false}, {gdPacket, true}, {gdState, true}} {
		if got := (gdDiff{kind: c.kind, text: "x"}).differs(); got != c.want {
			t.Errorf("kind %d: differs = %v, want %v", c.kind, got, c.want)
		}
	}
}
