package p4info

import (
	"bytes"
	"os"
	"strings"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// TestNewFields reads a P4Info with every field p4runtime 1.4.0 added (as p4c 34b86e9 writes
// them), keeps them through the rc.5 message and writes the same text back.
func TestNewFields(t *testing.T) {
	text, err := os.ReadFile("testdata/p4c14.txtpb")
	if err != nil {
		t.Fatal(err)
	}
	// The negative control: the project's messages alone refuse this text.
	if err := prototext.Unmarshal(text, &p4v1.P4Info{}); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("prototext.Unmarshal into the rc.5 message accepted the 1.4.0 fields (err %v): the test no longer tests them", err)
	}
	info, err := Unmarshal(text)
	if err != nil {
		t.Fatal(err)
	}
	tbl := info.GetTables()[0]
	if got := tbl.GetPreamble().GetName(); got != "MyIngress.ipv4_lpm" || tbl.GetSize() != 1024 {
		t.Fatalf("table %q size %d: the known fields were not read", got, tbl.GetSize())
	}
	call, ok, err := InitialDefaultAction(tbl)
	if err != nil || !ok {
		t.Fatalf("InitialDefaultAction: %v %v", ok, err)
	}
	if call.ActionID != 28792405 || len(call.Args) != 1 || call.Args[0].ParamID != 1 || !bytes.Equal(call.Args[0].Value, []byte{0, 1}) {
		t.Fatalf("InitialDefaultAction = %+v", call)
	}
	if !HasInitialEntries(tbl) {
		t.Fatal("HasInitialEntries = false")
	}
	// The fields survive the wire (what SetForwardingPipelineConfig sends).
	wire, err := proto.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	again := &p4v1.P4Info{}
	if err := proto.Unmarshal(wire, again); err != nil {
		t.Fatal(err)
	}
	if c2, ok, _ := InitialDefaultAction(again.GetTables()[0]); !ok || c2.ActionID != call.ActionID {
		t.Fatalf("after the wire: %+v %v", c2, ok)
	}
	out, err := Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	// The same text, but for the escapes of bytes (Go writes \x00 where p4c writes \000).
	if want := strings.ReplaceAll(string(text), `\000\001`, `\x00\x01`); out != want {
		t.Errorf("Marshal(Unmarshal(text)) differs:\n%s\nwant:\n%s", out, want)
	}
	back, err := Unmarshal([]byte(out))
	if err != nil || !proto.Equal(back, info) {
		t.Errorf("Unmarshal(Marshal(info)) differs from info (err %v)", err)
	}
}

// TestSetters: the setters replace what the table had, and Marshal writes it.
func TestSetters(t *testing.T) {
	tbl := &p4v1.Table{Preamble: &p4v1.Preamble{Id: 1, Name: "t"}}
	if _, ok, _ := InitialDefaultAction(tbl); ok || HasInitialEntries(tbl) {
		t.Fatal("a new table has the 1.4.0 fields")
	}
	SetInitialDefaultAction(tbl, ActionCall{ActionID: 7})
	SetInitialDefaultAction(tbl, ActionCall{ActionID: 9, Args: []Arg{{ParamID: 2, Value: []byte{5}}}})
	SetHasInitialEntries(tbl, true)
	c, ok, err := InitialDefaultAction(tbl)
	if err != nil || !ok || c.ActionID != 9 || len(c.Args) != 1 {
		t.Fatalf("InitialDefaultAction = %+v %v %v", c, ok, err)
	}
	out, err := Marshal(&p4v1.P4Info{Tables: []*p4v1.Table{tbl}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "initial_default_action {") != 1 || !strings.Contains(out, "action_id: 9") || !strings.Contains(out, "has_initial_entries: true") {
		t.Errorf("Marshal:\n%s", out)
	}
	SetHasInitialEntries(tbl, false)
	if HasInitialEntries(tbl) {
		t.Error("SetHasInitialEntries(false) kept it")
	}
}

// TestEqual: a P4Info without the 1.4.0 fields matches one with them; one with different
// values of them does not.
func TestEqual(t *testing.T) {
	text, err := os.ReadFile("testdata/p4c14.txtpb")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Unmarshal(text)
	if err != nil {
		t.Fatal(err)
	}
	bare := Without14(want)
	if _, ok, _ := InitialDefaultAction(bare.GetTables()[0]); ok || proto.Equal(bare, want) {
		t.Fatal("Without14 kept the 1.4.0 fields")
	}
	if !Equal(want, want) || !Equal(bare, want) {
		t.Error("Equal refuses the same P4Info, or the same without the 1.4.0 fields")
	}
	other := proto.Clone(want).(*p4v1.P4Info)
	SetInitialDefaultAction(other.GetTables()[0], ActionCall{ActionID: 25652968})
	if Equal(other, want) {
		t.Error("Equal accepts a different initial_default_action")
	}
	other = proto.Clone(bare).(*p4v1.P4Info)
	other.GetTables()[0].Size = 7
	if Equal(other, want) {
		t.Error("Equal accepts a different size without the 1.4.0 fields")
	}
}
