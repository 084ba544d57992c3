package gogentest

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/p4/netlockgen"
)

// TestBindRefusesOtherSizing hands the pipeline generated for p4/netlock.p4's default sizing
// to a switch loaded with another sizing (-D NETLOCK_LOCKS=8 -D NETLOCK_PART_BITS=6) through
// Config.Generated: the table and register names match, so only the fingerprint and layout
// check tells them apart. Load must fail with ErrGenMismatch; the control binds the matching
// sizing's pipeline.
func TestBindRefusesOtherSizing(t *testing.T) {
	prog := filepath.Join("..", "..", "..", "p4", "netlock.p4")
	small, err := front.LoadOptions(prog, front.Options{Defines: map[string]string{"NETLOCK_LOCKS": "8", "NETLOCK_PART_BITS": "6"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.Load(small, engine.Config{Pipeline: engine.PipelineGenerated, Generated: netlockgen.NetlockBind, Now: clock()})
	if !errors.Is(err, engine.ErrGenMismatch) {
		t.Fatalf("default-sizing pipeline bound to the 8-lock switch: err %v, want ErrGenMismatch", err)
	}
	if !strings.Contains(err.Error(), "regenerate") {
		t.Errorf("error does not say what to do: %v", err)
	}
	sw, err := engine.Load(small, engine.Config{Pipeline: engine.PipelineGenerated, Generated: netlockgen.NetlockL8P6Bind, Now: clock()})
	if err != nil {
		t.Fatalf("control: the matching sizing's pipeline: %v", err)
	}
	if sw.GeneratedPipeline() == "" {
		t.Fatal("control: the matching sizing's pipeline is not running")
	}
	// The layout is compared on its own: the right program with another layout is refused.
	if err := sw.GenCheck(netlockgen.NetlockL8P6Fingerprint, netlockgen.NetlockLayout+"x"); !errors.Is(err, engine.ErrGenMismatch) {
		t.Errorf("another layout: err %v, want ErrGenMismatch", err)
	}
	if err := sw.GenCheck(netlockgen.NetlockL8P6Fingerprint, netlockgen.NetlockL8P6Layout); err != nil {
		t.Errorf("control: %v", err)
	}
}
