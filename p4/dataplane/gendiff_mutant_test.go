package dataplane

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	genmutant "github.com/netlock-go/netlock/p4/netlockgen/mutant"
)

// gdLoadMutant loads p4/netlock.p4 bound to p4/netlockgen/mutant's pipeline (generated from
// p4/netlock.p4 with one fault and not registered: engine.Config.Generated binds it).
func gdLoadMutant(sz Sizing, cfg engine.Config) (*Switch, error) {
	cfg.Pipeline, cfg.Generated = engine.PipelineGenerated, genmutant.NetlockL8P6MutantBind
	sw, err := Load(sz, cfg)
	if err != nil {
		return nil, err
	}
	if sw.GeneratedPipeline() == "" {
		return nil, fmt.Errorf("the mutant is not bound")
	}
	return sw, nil
}

// TestGenDifferentialMutant is the negative control of TestGenDifferential: the same harness,
// driving p4/netlockgen/mutant (p4/netlock.p4 generated with one off-by-one comparison) against
// the interpreter, must find a difference in each of a few sequences; the test fails if the
// mutant passes.
func TestGenDifferentialMutant(t *testing.T) {
	n := genDiffPackets()
	for seed := uint64(1); seed <= 3; seed++ {
		g, err := newGenDiff(seed, gdSizings[0], gdLoadMutant)
		if err != nil {
			t.Fatal(err)
		}
		d := g.run(n)
		if !d.differs() {
			t.Fatalf("seed %d: the mutant (%s) was not caught in %d packets of the differential test (a catch is a packet or state difference): %s",
				seed, genmutant.Mutation, n, d.text)
		}
		_, first, _ := strings.Cut(d.text, "first difference: ")
		t.Logf("seed %d: the mutant (%s) caught at packet %d of %d: %.200s", seed, genmutant.Mutation, g.n, n, first)
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
