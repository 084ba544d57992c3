package gogentest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
)

// paramsValues are values of testdata/params.p4's parameters the test runs its one generated
// pipeline (generated with the defaults) with: the defaults, and values at the edges (a shift
// by the whole width, an empty range, a hash range of 0 and 1, a one-cell register, slices at
// both ends of their field).
var paramsValues = []map[string]string{
	nil,
	{"P_VAL": "9", "P_LO": "0", "P_SH": "0", "P_MASK": "0x0c", "P_HI": "255", "P_MAX": "1", "P_CELLS": "1", "P_PORT": "2"},
	{"P_VAL": "200", "P_LO": "16", "P_SH": "31", "P_MASK": "0x81", "P_HI": "3", "P_MAX": "0", "P_CELLS": "256", "P_PORT": "9"},
	{"P_VAL": "0", "P_LO": "9", "P_SH": "17", "P_MASK": "0", "P_HI": "9", "P_MAX": "77", "P_CELLS": "5", "P_PORT": "0"},
}

func loadParams(t *testing.T, defines map[string]string) *front.Checked {
	t.Helper()
	c, err := front.LoadOptions(filepath.Join("testdata", "params.p4"), front.Options{Defines: defines})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// paramsPacket is a random input for testdata/params.p4: header h (14 bytes), e (1) when the
// parser takes it; op often one of the values the parameters give.
func paramsPacket(rng *rand.Rand, defines map[string]string) []byte {
	b := make([]byte, 15+rng.IntN(4))
	if rng.IntN(10) == 0 {
		b = b[:rng.IntN(15)]
	}
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	if len(b) > 1 && rng.IntN(2) == 0 {
		var vals []string
		for _, v := range defines {
			vals = append(vals, v)
		}
		vals = append(vals, "7", "3", "4", "40", "240", "5")
		var x uint64
		fmt.Sscan(vals[rng.IntN(len(vals))], &x)
		b[0] = byte(x)
		b[1] = byte(x) + byte(rng.IntN(3)) - 1
	}
	return b
}

// paramsDiff runs n random packets through the interpreter on ref and the generated pipeline
// on prog (two loads of one program, or, for the negative control, knobs that bind other
// values) and returns the first difference in outputs or register cells, or "".
func paramsDiff(t *testing.T, defines map[string]string, seed uint64, n int, knobs engine.TestingKnobs) string {
	t.Helper()
	a, err := engine.Load(loadParams(t, defines), engine.Config{Pipeline: engine.PipelineInterpreted, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := engine.Load(loadParams(t, defines), engine.Config{Pipeline: engine.PipelineGenerated, Generated: ParamsPipeline, Now: clock(), TestingKnobs: knobs})
	if err != nil {
		t.Fatal(err)
	}
	if b.GeneratedPipeline() != "params" {
		t.Fatalf("the generated pipeline is not running: %q", b.GeneratedPipeline())
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	for i := 0; i < n; i++ {
		pkt := paramsPacket(rng, defines)
		port := 1 + rng.IntN(4)
		var got [2]string
		for k, sw := range []*engine.Switch{a, b} {
			res, err := sw.Process(port, pkt)
			got[k] = fmt.Sprintf("%v %v", err, res.Out)
		}
		if got[0] != got[1] {
			return fmt.Sprintf("packet %d %x on port %d:\ninterpreter %s\ngenerated   %s", i, pkt, port, got[0], got[1])
		}
	}
	ra, rb := a.Registers()[0], b.Registers()[0]
	for i := 0; i < ra.Size(); i++ {
		va, _ := ra.Read(i)
		vb, _ := rb.Read(i)
		if !bytes.Equal(va, vb) {
			return fmt.Sprintf("register cell %d: %x and %x", i, va, vb)
		}
	}
	return ""
}

// TestParams runs testdata/params.p4's one generated pipeline, generated with the parameters'
// defaults, bound to switches loaded with other values of them, against the interpreter on
// random packets: outputs and registers must be identical, so every place the parameters
// reach reads the bound switch's values. Re-run one seed with -seed=N.
func TestParams(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	for i, defines := range paramsValues {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if msg := paramsDiff(t, defines, seed, 2000, engine.TestingKnobs{}); msg != "" {
				t.Errorf("-D %v, seed %d (re-run: go test ./bmv2/engine/gogentest -run TestParams -seed=%d): %s", defines, seed, seed, msg)
			}
		})
	}
}

// TestParamsCatches is TestParams' negative control: bound with another set of values than
// its switch's (engine.TestingKnobs.GenParamsFrom), the pipeline must be told apart from the
// interpreter, for each set against the defaults' and the defaults against each set.
func TestParamsCatches(t *testing.T) {
	for i, defines := range paramsValues[1:] {
		for _, pair := range [][2]map[string]string{{defines, nil}, {nil, defines}} {
			t.Run(fmt.Sprintf("%d/%v", i+1, pair[0] == nil), func(t *testing.T) {
				knobs := engine.TestingKnobs{GenParamsFrom: loadParams(t, pair[1])}
				msg := paramsDiff(t, pair[0], 1, 2000, knobs)
				if msg == "" {
					t.Fatalf("switch -D %v bound with the values of -D %v: no difference found", pair[0], pair[1])
				}
				t.Logf("caught: %.200s", msg)
			})
		}
	}
}

// TestParamsRefused: the pipeline refuses a switch whose parameters it cannot serve: P_DIV,
// a divisor the code folds (Bind checks its value), and P_W, a width (the fingerprint covers
// types), with ErrGenMismatch; PipelineAuto then runs the interpreter. The control: another
// P_VAL binds.
func TestParamsRefused(t *testing.T) {
	for _, tc := range []struct {
		defines map[string]string
		want    string
	}{
		{map[string]string{"P_DIV": "8"}, "the generated code folded 0x4"},
		{map[string]string{"P_W": "8"}, "the switch runs program"},
		{map[string]string{"P_VAL": "8"}, ""},
	} {
		t.Run(fmt.Sprint(tc.defines), func(t *testing.T) {
			sw, err := engine.Load(loadParams(t, tc.defines), engine.Config{Pipeline: engine.PipelineGenerated, Generated: ParamsPipeline, Now: clock()})
			if tc.want == "" {
				if err != nil || sw.GeneratedPipeline() != "params" {
					t.Fatalf("control: Load = %v", err)
				}
				return
			}
			if !errors.Is(err, engine.ErrGenMismatch) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v, want ErrGenMismatch with %q", err, tc.want)
			}
			sw, err = engine.Load(loadParams(t, tc.defines), engine.Config{Generated: ParamsPipeline, Now: clock()})
			if err != nil || sw.GeneratedPipeline() != "" {
				t.Fatalf("auto: Load = %v, pipeline %q; want the interpreter", err, sw.GeneratedPipeline())
			}
		})
	}
}
