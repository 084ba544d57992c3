package engine

import (
	"errors"
	"testing"
)

// TestValueSets runs testdata/value_sets.p4: a select case on a value set matches
// what its members match (exact, ternary and lpm fields), nothing while it has none, and a set
// takes at most its size.
func TestValueSets(t *testing.T) {
	sw := load(t, "testdata/value_sets.p4", Config{})
	frame := func(etype uint16, vlan ...byte) []byte {
		f := make([]byte, 14, 64)
		f[12], f[13] = byte(etype>>8), byte(etype)
		return append(append(f, vlan...), make([]byte, 20)...)
	}
	accepted := func(f []byte) bool {
		t.Helper()
		res, err := sw.Process(1, f)
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Out) == 1
	}
	types, err := sw.ValueSet("known_types")
	if err != nil {
		t.Fatal(err)
	}
	vlanTypes, err := sw.ValueSet("vlan_types")
	if err != nil {
		t.Fatal(err)
	}
	vlans, err := sw.ValueSet("P.vlans")
	if err != nil {
		t.Fatal(err)
	}
	if types.ID == 0 || len(sw.ValueSets()) != 5 || len(vlans.Fields) != 2 || vlans.Fields[0].Kind != Ternary || vlans.Fields[1].Kind != LPM {
		t.Fatalf("value sets %d, known_types id %#x, vlans fields %+v", len(sw.ValueSets()), types.ID, vlans.Fields)
	}
	// No members: an IPv4 frame matches no case of the last select but its default, which
	// sets error.NoMatch (the ingress drops a packet with a parser error).
	if accepted(frame(0x0800)) {
		t.Fatal("accepted with an empty value set")
	}
	if err := types.SetMembers([][]FieldMatch{{{Value: []byte{0x08, 0x00}}}, {{Value: []byte{0x86, 0xdd}}}}); err != nil {
		t.Fatal(err)
	}
	if !accepted(frame(0x0800)) || accepted(frame(0x0801)) {
		t.Fatal("known_types: 0x0800 not accepted or 0x0801 accepted")
	}
	// A VLAN ethertype only through the value set, then a ternary VID and an lpm ethertype.
	vlan := []byte{0x01, 0x23, 0x08, 0x00} // vid 0x123, etype 0x0800
	if accepted(frame(0x9100, vlan...)) {
		t.Fatal("0x9100 parsed as VLAN without a member")
	}
	if err := vlanTypes.SetMembers([][]FieldMatch{{{Value: []byte{0x91, 0x00}}}}); err != nil {
		t.Fatal(err)
	}
	if err := vlans.SetMembers([][]FieldMatch{{{Value: []byte{0x01, 0x20}, Mask: []byte{0x0f, 0xf0}}, {Value: []byte{0x08, 0x00}, PrefixLen: 8}}}); err != nil {
		t.Fatal(err)
	}
	if !accepted(frame(0x9100, vlan...)) {
		t.Fatal("VLAN 0x123/0x0800 not accepted by the ternary and lpm member")
	}
	if !accepted(frame(0x9100, 0x01, 0x2f, 0x08, 0xff)) || accepted(frame(0x9100, 0x01, 0x33, 0x08, 0x00)) {
		t.Fatal("the member's mask and prefix are not what decides")
	}
	if err := vlanTypes.SetMembers(make([][]FieldMatch, 5)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("five members of a set of four: %v", err)
	}
	if err := types.SetMembers([][]FieldMatch{{{Value: []byte{1}}, {Value: []byte{2}}}, {{Value: []byte{3}}}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a member with the wrong field count: %v", err)
	}
}
