package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/netlock-go/netlock/controlplane/controller"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
)

// TestControllerConfigPipeline: pipeline.device_config and pipeline.p4info make `netlock
// controller` push a compiled pipeline (a Tofino's under Stratum: docs/dataplane.md, "Tofino")
// instead of a P4 source bundle: the device config's bytes as they are, the P4Info parsed from
// its text. The P4Info here is our front end's for p4/tna/netlock.p4 (no bf-p4c here), the device
// config stand-in bytes: what Stratum would do with them cannot be tried here.
func TestControllerConfigPipeline(t *testing.T) {
	checked, err := dpengine.CheckProgram(dataplane.TNA, dataplane.DefaultSizing)
	if err != nil {
		t.Fatal(err)
	}
	text, err := checked.P4InfoText()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dc, info := filepath.Join(dir, "device_config.pb.bin"), filepath.Join(dir, "p4info.txt")
	blob := []byte("\x0a\x07netlock stand-in for a BfPipelineConfig")
	if err := os.WriteFile(dc, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(info, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("../../testbed/rack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v, err := controller.ConfigSchema().LoadBytes([]byte(merge(string(example),
		"pipeline:\n  device_config: "+dc+"\n  p4info: "+info+"\n")), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	fc, err := controller.ConfigFromValues(v)
	if err != nil {
		t.Fatal(err)
	}
	if fc.Program == nil || !bytes.Equal(fc.Program.DeviceConfig, blob) {
		t.Fatalf("the program pushed: %+v", fc.Program)
	}
	found := false
	for _, x := range fc.Program.P4Info.Tables {
		found = found || x.Preamble.Name == dataplane.TableLock
	}
	if !found || fc.Program.P4Info.PkgInfo.GetArch() != "tna" {
		t.Errorf("the P4Info pushed has no %s or is not TNA's (arch %q)", dataplane.TableLock, fc.Program.P4Info.PkgInfo.GetArch())
	}
}
