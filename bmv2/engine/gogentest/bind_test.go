package gogentest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/p4/netlockgen"
)

// TestBindRefusesOtherProgram hands p4/netlockgen's pipeline of p4/netlock.p4 to a switch
// loaded from a version of netlock.p4 with one statement changed, whatever its sizing: its
// tables, registers and slots are the program's, so only the fingerprint tells them apart.
// Load must fail with ErrGenMismatch. The controls: the program itself binds with its own
// sizing and another (-D NETLOCK_LOCKS=8 -D NETLOCK_PART_BITS=6), as the pipeline reads the
// sizing when it binds.
func TestBindRefusesOtherProgram(t *testing.T) {
	prog := filepath.Join("..", "..", "..", "p4", "netlock.p4")
	src, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	const from, to = "hdr.ipv4.ttl = 64;", "hdr.ipv4.ttl = 63;"
	if !bytes.Contains(src, []byte(from)) {
		t.Fatalf("%q is not in p4/netlock.p4: update the test", from)
	}
	changed := bytes.Replace(src, []byte(from), []byte(to), 1)
	small := map[string]string{"NETLOCK_LOCKS": "8", "NETLOCK_PART_BITS": "6"}
	load := func(src []byte, defines map[string]string) *front.Checked {
		read := func(p string) ([]byte, error) {
			if filepath.Base(p) == "netlock.p4" {
				return src, nil
			}
			return nil, os.ErrNotExist
		}
		c, err := front.LoadOptions("netlock.p4", front.Options{ReadFile: read, Defines: defines})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, defines := range []map[string]string{nil, small} {
		_, err := engine.Load(load(changed, defines), engine.Config{Pipeline: engine.PipelineGenerated, Generated: netlockgen.NetlockPipeline, Now: clock()})
		if !errors.Is(err, engine.ErrGenMismatch) {
			t.Fatalf("-D %v: the pipeline bound to a changed netlock.p4: err %v, want ErrGenMismatch", defines, err)
		}
		if !strings.Contains(err.Error(), "regenerate") {
			t.Errorf("error does not say what to do: %v", err)
		}
		sw, err := engine.Load(load(src, defines), engine.Config{Pipeline: engine.PipelineGenerated, Generated: netlockgen.NetlockPipeline, Now: clock()})
		if err != nil {
			t.Fatalf("control, -D %v: netlock.p4 itself: %v", defines, err)
		}
		if sw.GeneratedPipeline() != "netlock" {
			t.Fatalf("control, -D %v: the pipeline is not running: %q", defines, sw.GeneratedPipeline())
		}
		// The layout is compared on its own: the right program with another layout is refused.
		if err := sw.GenCheck(netlockgen.NetlockFingerprint, netlockgen.NetlockLayout+"x"); !errors.Is(err, engine.ErrGenMismatch) {
			t.Errorf("another layout: err %v, want ErrGenMismatch", err)
		}
		if err := sw.GenCheck(netlockgen.NetlockFingerprint, netlockgen.NetlockLayout); err != nil {
			t.Errorf("control: %v", err)
		}
	}
}
