package engine

import (
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
)

// TestRegisterActionViews: bf-p4c accepts a RegisterAction whose index type is not its
// Register's when the cells are as wide (the engine indexes the register with the value), and
// one that views the cells at another width over a wider index (the engine refuses it: it keeps
// one cell per index, not sub-words).
func TestRegisterActionViews(t *testing.T) {
	src := tnaProgram(`Register<bit<32>, bit<32>>(1024) r;
    RegisterAction<bit<32>, bit<32>, bit<32>>(r) put = { void apply(inout bit<32> v) { v = 32w0xabcd0000 | (bit<32>)hdr.h.a; } };
    RegisterAction<bit<32>, bit<16>, bit<32>>(r) get = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };`,
		`if (hdr.h.a != 0) { put.execute(5); } else { hdr.h.b = get.execute(16w5); }`)
	sw, err := Load(checkSource(t, "v.p4", src, nil), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Process(1, []byte{7, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	res, err := sw.Process(1, []byte{0, 0, 0, 0, 0})
	if err != nil || len(res.Out) != 1 {
		t.Fatalf("out %v, err %v", res.Out, err)
	}
	if got := res.Out[0].Data[1:5]; string(got) != "\xab\xcd\x00\x07" {
		t.Errorf("b = %x, want abcd0007 (cell 5 through the 16-bit index)", got)
	}
	view := tnaProgram(`Register<bit<32>, bit<10>>(1024) w;
    RegisterAction<bit<16>, bit<11>, bit<16>>(w) half = { void apply(inout bit<16> v, out bit<16> rv) { rv = v; } };`,
		`hdr.h.b = (bit<32>)half.execute(3);`)
	_, err = Load(checkSource(t, "v.p4", view, nil), Config{})
	if err == nil || !strings.Contains(err.Error(), "half views the 32-bit cells of w as 16-bit cells") {
		t.Fatalf("16-bit view of 32-bit cells: got %v, want the engine's refusal", err)
	}
}

// TestMirrorInDeparserSubControl: a deparser that applies a control of its own mirrors from it
// (front/testdata/accept/tna_deparser_sub.p4; bf-p4c inlines the control into the deparser).
func TestMirrorInDeparserSubControl(t *testing.T) {
	c, err := front.Load("../front/testdata/accept/tna_deparser_sub.p4")
	if err != nil {
		t.Fatal(err)
	}
	sw, err := Load(c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	sw.SetCloneSession(5, CloneSession{Port: 9, HasPort: true})
	frame := make([]byte, 64)
	frame[0] = 0xaa
	res, err := sw.Process(2, frame)
	if err != nil {
		t.Fatal(err)
	}
	ports := map[int]int{}
	for _, o := range res.Out {
		ports[o.Port]++
	}
	if len(res.Out) != 2 || ports[2] != 1 || ports[9] != 1 {
		t.Fatalf("out on ports %v, want the packet on 2 and its mirror on 9", ports)
	}
	sw.DeleteCloneSession(5) // the negative control: no session, no mirror
	if res, err = sw.Process(2, frame); err != nil || len(res.Out) != 1 {
		t.Fatalf("without the session: out %d, err %v", len(res.Out), err)
	}
}

// TestTofino2Refused: the engine runs Tofino 1's TNA; a T2NA program (accepted by the front end,
// front/testdata/accept/t2na_features.p4) and a tna.p4 program with __TARGET_TOFINO__ 2 are
// refused with the reason, and the same tna.p4 program for Tofino 1 loads (the control).
func TestTofino2Refused(t *testing.T) {
	c, err := front.Load("../front/testdata/accept/t2na_features.p4")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(c, Config{}); err == nil || !strings.Contains(err.Error(), "a Tofino 2 program") {
		t.Fatalf("t2na.p4: got %v, want the engine's refusal", err)
	}
	for gen, refused := range map[string]bool{"1": false, "2": true} {
		src := tnaProgram("", "")
		c := checkSource(t, "g.p4", src, map[string]string{"__TARGET_TOFINO__": gen})
		if got := c.TofinoGeneration(); got != map[bool]int{false: 1, true: 2}[refused] {
			t.Errorf("__TARGET_TOFINO__=%s: generation %d", gen, got)
		}
		_, err := Load(c, Config{})
		if (err != nil) != refused {
			t.Errorf("tna.p4 with __TARGET_TOFINO__=%s: %v", gen, err)
		}
	}
}
