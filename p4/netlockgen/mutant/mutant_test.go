package mutant

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
)

var update = flag.Bool("mutant.update", false, "rewrite pipeline_gen.go")

const (
	genFile = "pipeline_gen.go"
	program = "../../netlock.p4"
)

func load(t *testing.T) *front.Checked {
	t.Helper()
	c, err := front.LoadOptions(program, front.Options{Defines: Defines})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func generate(t *testing.T, c *front.Checked, m *engine.GenMutation) []byte {
	t.Helper()
	opts := engine.GenOptions{Package: "mutant", Name: Name,
		Source:   program + " -D NETLOCK_LOCKS=8 -D NETLOCK_PART_BITS=6 with the mutation " + Mutation.String(),
		Generate: "go test -run ^TestMutantUpToDate$ -mutant.update .", NoRegister: true}
	var src []byte
	var err error
	if m != nil {
		src, err = engine.GenerateGoMutant(c, opts, *m)
	} else {
		src, err = engine.GenerateGo(c, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestMutantUpToDate regenerates the mutant and compares (-mutant.update rewrites it): a stale
// file fails, naming the command that brings it up to date.
func TestMutantUpToDate(t *testing.T) {
	want := generate(t, load(t), &Mutation)
	if *update {
		if err := os.WriteFile(genFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(genFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Errorf("%s is stale (p4/netlock.p4 or the generator changed): run go generate ./p4/netlockgen/mutant (if it does not build, delete it first)", genFile)
	}
}

// withoutFingerprint is a generated file without its Fingerprint constant's line, a hash of
// the syntax tree that the mutation changes whatever the code: comparing without it shows that
// the generated code itself changed.
func withoutFingerprint(src []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(src, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("const ")) && bytes.Contains(l, []byte("Fingerprint = ")) {
			continue
		}
		out = append(out, l...)
	}
	return out
}

// TestMutantIsMutated: the mutation changes the generated code (the mutant is not the
// program's pipeline under another name) and the mutant is registered for no program (neither
// the program nor the mutated program binds it by fingerprint). dataplane's
// TestGenDifferentialMutant binds it with Config.Generated. (This package's tests do not name
// the generated code, so that they build, and regenerate it, when it is missing or broken.)
func TestMutantIsMutated(t *testing.T) {
	c := load(t)
	mutated, plain := generate(t, c, &Mutation), generate(t, c, nil)
	if bytes.Equal(withoutFingerprint(mutated), withoutFingerprint(plain)) {
		t.Fatal("the mutation does not change the generated code (only the fingerprint, if anything)")
	}
	if len(withoutFingerprint(plain)) == len(plain) {
		t.Fatal("withoutFingerprint removed no Fingerprint line: update the test to the generator's output")
	}
	if _, ok := engine.RegisteredPipeline(c); ok {
		t.Error("a pipeline is registered for the program in a binary that links only the mutant")
	}
	undo, err := Mutation.Apply(c)
	if err != nil {
		t.Fatal(err)
	}
	_, ok := engine.RegisteredPipeline(c)
	undo()
	if ok {
		t.Error("a pipeline is registered for the mutated program")
	}
}

// TestMutationChecked: a mutation whose position or operator does not match the program is an
// error, not a silent mutation of something else.
func TestMutationChecked(t *testing.T) {
	c := load(t)
	for _, m := range []engine.GenMutation{
		{At: Mutation.At, Op: "==", To: "!="},
		{At: "netlock.p4:1:1", Op: Mutation.Op, To: Mutation.To},
	} {
		if _, err := m.Apply(c); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: Apply = %v, want ErrInvalid", m, err)
		}
	}
}
