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
		if d == "" {
			t.Fatalf("seed %d: the mutant (%s) passed %d packets of the differential test", seed, genmutant.Mutation, n)
		}
		_, first, _ := strings.Cut(d, "first difference: ")
		t.Logf("seed %d: the mutant (%s) caught at packet %d of %d: %.200s", seed, genmutant.Mutation, g.n, n, first)
	}
}
