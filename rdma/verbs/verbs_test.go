package verbs

import (
	"errors"
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"
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

func TestMaskedCASResult(t *testing.T) {
	tests := []struct {
		name                           string
		old, cmp, cmpMask, swap, swapM uint64
		ok                             bool
		new                            uint64
	}{
		{"set-free-bits", 0b1000_0001, 0, 0b0110, 0b0110, 0b0110, true, 0b1000_0111},
		{"bits-taken", 0b0100, 0, 0b0110, 0b0110, 0b0110, false, 0b0100},
		{"clear-own-bits", 0b1110, 0b0110, 0b0110, 0, 0b0110, true, 0b1000},
		{"or-semantics", 0xf0, 0, 0, 0x0f, 0x0f, true, 0xff},
		{"swap", 0x1234, 0, 0, 0xabcd, ^uint64(0), true, 0xabcd},
		{"full-cas-hit", 7, 7, ^uint64(0), 9, ^uint64(0), true, 9},
		{"full-cas-miss", 7, 8, ^uint64(0), 9, ^uint64(0), false, 7},
		{"masked-out-bits-ignored", 0xff00, 0x0000, 0x00ff, 0x0001, 0x000f, true, 0xff01},
	}
	for _, tc := range tests {
		ok, n := MaskedCASResult(tc.old, tc.cmp, tc.cmpMask, tc.swap, tc.swapM)
		if ok != tc.ok || n != tc.new {
			t.Errorf("%s: got %v %#x, want %v %#x", tc.name, ok, n, tc.ok, tc.new)
		}
		wr := WorkRequest{Op: OpMaskedCAS, Compare: tc.cmp, CompareMask: tc.cmpMask, Value: tc.swap, SwapMask: tc.swapM}
		if n2, w := Apply(&wr, tc.old); w != tc.ok || n2 != tc.new {
			t.Errorf("%s: Apply got %v %#x", tc.name, w, n2)
		}
	}
}

// maskedAddRef is the definition of masked FAA, bit by bit: a carry never leaves a bit that is
// set in boundary.
func maskedAddRef(old, add, boundary uint64) uint64 {
	var out, carry uint64
	for i := uint(0); i < 64; i++ {
		s := old>>i&1 + add>>i&1 + carry
		out |= (s & 1) << i
		carry = s >> 1
		if boundary>>i&1 == 1 {
			carry = 0
		}
	}
	return out
}

func TestMaskedAdd(t *testing.T) {
	occ, tc, tm := Field{62, 1}, Field{32, 15}, Field{47, 15}
	b := Boundary(occ, tc, tm, Field{0, 32})
	tests := []struct {
		name           string
		old, add, want uint64
		boundary       uint64
	}{
		{"plain", 5, 7, 12, 0},
		{"plain-wraps", ^uint64(0), 2, 1, 0},
		{"field-wraps-alone", tm.Put(1<<15 - 1), tm.Add(1), 0, b},
		{"occ-toggles-up", 0, occ.Add(1), occ.Put(1), b},
		{"occ-toggles-down", occ.Put(1), occ.Add(-1), 0, b},
		{"release", occ.Put(1) | tc.Put(4) | tm.Put(9), occ.Add(-1) | tc.Add(1), tc.Put(5) | tm.Put(9), b},
		{"decrement-borrows-inside", tc.Put(0), tc.Add(-1), tc.Put(1<<15 - 1), b},
		{"low-field-overflow-stays", Field{0, 32}.Put(1<<32 - 1), Field{0, 32}.Add(1), 0, b},
	}
	for _, c := range tests {
		if got := MaskedAdd(c.old, c.add, c.boundary); got != c.want {
			t.Errorf("%s: got %#x, want %#x", c.name, got, c.want)
		}
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("RDMA_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < 200000; i++ {
		old, add, bd := rng.Uint64(), rng.Uint64(), rng.Uint64()&rng.Uint64()
		if got, want := MaskedAdd(old, add, bd), maskedAddRef(old, add, bd); got != want {
			t.Fatalf("seed %d (RDMA_SEED=%d to rerun): MaskedAdd(%#x, %#x, %#x) = %#x, want %#x", seed, seed, old, add, bd, got, want)
		}
	}
}

func TestField(t *testing.T) {
	f := Field{Shift: 4, Width: 8}
	if f.Mask() != 0xff0 || f.MSB() != 0x800 || f.Get(0xabc) != 0xab || f.Put(0x1ff) != 0xff0 || f.Add(-1) != 0xff0 {
		t.Fatalf("field: %#x %#x %#x %#x %#x", f.Mask(), f.MSB(), f.Get(0xabc), f.Put(0x1ff), f.Add(-1))
	}
	// Bits of no field stay unchanged by masked adds whose operands are zero there.
	b := Boundary(Field{0, 8}, Field{16, 8})
	if got := MaskedAdd(0x00ff_ffff, Field{0, 8}.Add(1)|Field{16, 8}.Add(1), b); got != 0x0000_ff00 {
		t.Fatalf("gap bits changed: %#x", got)
	}
}

func TestCheckRequest(t *testing.T) {
	tests := []struct {
		wr  WorkRequest
		err error
	}{
		{WorkRequest{Op: OpRead, Remote: MakePtr(1, 64), Words: 8}, nil},
		{WorkRequest{Op: OpRead, Remote: MakePtr(1, 4096-64), Words: 8}, nil},
		{WorkRequest{Op: OpRead, Remote: MakePtr(1, 4096-56), Words: 8}, ErrBadPtr},
		{WorkRequest{Op: OpRead, Remote: MakePtr(1, 64), Words: MaxWords + 1}, ErrBadRequest},
		{WorkRequest{Op: OpRead, Remote: MakePtr(1, 64), Words: 4, Dest: make([]uint64, 3)}, ErrBadRequest},
		{WorkRequest{Op: OpWrite, Remote: MakePtr(1, 64), Data: make([]uint64, 3)}, nil},
		{WorkRequest{Op: OpMaskedFAA, Remote: MakePtr(1, 64)}, nil},
		{WorkRequest{Op: Opcode(9), Remote: MakePtr(1, 64)}, ErrBadRequest},
		{WorkRequest{Op: OpCAS, Remote: MakePtr(1, 68)}, ErrBadPtr},
	}
	for i, tc := range tests {
		err := CheckRequest(&tc.wr, 4096)
		if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("#%d: %v, want %v", i, err, tc.err)
		}
	}
}
