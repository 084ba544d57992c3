package verbs

import (
	"errors"
	"testing"
)

func TestPtr(t *testing.T) {
	tests := []struct {
		node NodeID
		off  uint64
		str  string
	}{
		{0, 64, "0:0x40"},
		{1, 0, "1:0x0"},
		{19, 1 << 20, "19:0x100000"},
		{65535, 1<<48 - 8, "65535:0xfffffffffff8"},
	}
	for i, tc := range tests {
		p := MakePtr(tc.node, tc.off)
		if p.Node() != tc.node || p.Offset() != tc.off || p.String() != tc.str {
			t.Errorf("#%d: got %d/%#x/%q", i, p.Node(), p.Offset(), p.String())
		}
		if p.Add(8).Offset() != tc.off+8 && tc.off+8 < 1<<48 {
			t.Errorf("#%d: Add", i)
		}
	}
	if !Ptr(0).IsNull() || MakePtr(0, 64).IsNull() {
		t.Fatal("null pointer")
	}
}

func TestCheckPtr(t *testing.T) {
	tests := []struct {
		p  Ptr
		ok bool
	}{
		{MakePtr(1, 0), true}, {MakePtr(1, 4088), true}, {MakePtr(1, 4096), false}, {MakePtr(1, 12), false},
	}
	for i, tc := range tests {
		err := CheckPtr(tc.p, 4096)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrBadPtr) {
			t.Errorf("#%d: %v", i, err)
		}
	}
}
