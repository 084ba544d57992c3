package p4rtclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"

	p4infotext "github.com/netlock-go/netlock/internal/p4info"
)

// TestLoadCompiledP4c14: a compiled program whose P4Info text has what today's p4c writes and
// the project's P4Runtime messages lack (initial_default_action in every table) loads, goes to
// the switch with it, and comes back with it (TestRealP4InfoController loads p4c's own).
func TestLoadCompiledP4c14(t *testing.T) {
	prog := testProgram(t) // its P4Info is the front end's, which writes what p4c writes
	want := map[string]uint32{}
	for _, tbl := range prog.P4Info.GetTables() {
		call, ok, err := p4infotext.InitialDefaultAction(tbl)
		if err != nil || !ok {
			t.Fatalf("table %s: no initial_default_action (%v)", tbl.GetPreamble().GetName(), err)
		}
		want[tbl.GetPreamble().GetName()] = call.ActionID
	}
	text, err := p4infotext.Marshal(prog.P4Info)
	if err != nil {
		t.Fatal(err)
	}
	if err := prototext.Unmarshal([]byte(text), &p4configv1.P4Info{}); err == nil {
		t.Fatal("the project's messages read initial_default_action: the test no longer tests its loading")
	}
	load := func(text string) *Program {
		dir := t.TempDir()
		dc, info := filepath.Join(dir, "prog.bin"), filepath.Join(dir, "prog.p4info.txtpb")
		if err := os.WriteFile(dc, prog.DeviceConfig, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(info, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		loaded, err := LoadCompiled(dc, info)
		if err != nil {
			t.Fatal(err)
		}
		return loaded
	}
	s := startSwitch(t)
	c := dial(t, s.addr, 1)
	ctx := ctxWait(t)
	if err := c.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	// The negative control: the switch compares initial_default_action with its own, so a wrong
	// one is refused (the field reached it).
	wrong := strings.Replace(text, "initial_default_action {\n    action_id: ", "initial_default_action {\n    action_id: 1", 1)
	if wrong == text {
		t.Fatal("no initial_default_action to corrupt")
	}
	if err := c.SetPipeline(ctx, load(wrong), 41); err == nil {
		t.Fatal("a P4Info with a wrong initial_default_action was accepted")
	}
	if err := c.SetPipeline(ctx, load(text), 42); err != nil {
		t.Fatal(err)
	}
	pi, err := c.LoadPipeline(ctx)
	if err != nil || pi == nil {
		t.Fatalf("LoadPipeline: %+v %v", pi, err)
	}
	for _, tbl := range pi.P4Info.GetTables() {
		call, ok, err := p4infotext.InitialDefaultAction(tbl)
		if err != nil || !ok || call.ActionID != want[tbl.GetPreamble().GetName()] {
			t.Errorf("table %s back from the switch: initial_default_action %+v %v %v", tbl.GetPreamble().GetName(), call, ok, err)
		}
	}
	// The pipeline works: the client resolves names with it.
	if err := c.AddRoutes(ctx, routes, route("10.0.2.0/24", 2)); err != nil {
		t.Fatal(err)
	}
}
