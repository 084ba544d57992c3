package engine

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFieldWins: header extraction and emission through 8-byte windows (the byte-aligned fast
// path of extract and emit) agree with the bit reader and writer on random layouts, widths 1
// to 64 bits, and leave the slots' values intact on a round trip.
func TestFieldWins(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	planned := 0
	for iter := 0; iter < 3000; iter++ {
		var ps []piece
		total := 0
		for n := 1 + r.IntN(12); n > 0; n-- {
			w := 1 + r.IntN(64)
			ps = append(ps, piece{off: len(ps), width: w})
			total += w
		}
		if pad := (8 - total%8) % 8; pad > 0 {
			ps = append(ps, piece{off: len(ps), width: pad})
			total += pad
		}
		fw, win := fieldWins(ps)
		if fw == nil {
			// Only a field the windows cannot hold may refuse the plan.
			off, fits := 0, true
			for _, p := range ps {
				if p.width > 57 && (p.width != 64 || off&7 != 0) {
					fits = false
				}
				off += p.width
			}
			if fits {
				t.Fatalf("seed %d: no plan for %v", seed, ps)
			}
			continue
		}
		planned++
		in := make([]byte, total/8, total/8+8)
		for i := range in {
			in[i] = byte(r.Uint32())
		}
		// Garbage past the header must not leak into the fields.
		spare := in[:cap(in)]
		for i := len(in); i < len(spare); i++ {
			spare[i] = byte(r.Uint32())
		}
		if win > cap(in) {
			t.Fatalf("seed %d: window %d past the header and 8 spare bytes (%d)", seed, win, cap(in))
		}
		got := make([]uint64, len(ps))
		extractWins(got, 0, in[:cap(in)], fw)
		br := bitReader{b: in}
		for i, p := range ps {
			if want := br.get(p.width).lo; got[i] != want {
				t.Fatalf("seed %d: field %d (%d bits) = %#x, bit reader %#x", seed, i, p.width, got[i], want)
			}
		}
		prefix := []byte{0xaa, 0xbb}
		out := emitWins(append([]byte(nil), prefix...), got, 0, total/8, fw)
		if !bytes.Equal(out, append(prefix, in...)) {
			t.Fatalf("seed %d: emitted % x, want % x", seed, out, append(prefix, in...))
		}
		// Values wider than their field are cut to it, as the bit writer does.
		wide := make([]uint64, len(ps))
		for i := range wide {
			wide[i] = r.Uint64()
		}
		bw := bitWriter{}
		for i, p := range ps {
			bw.put(p.width, u128{lo: wide[i]})
		}
		if out := emitWins(nil, wide, 0, total/8, fw); !bytes.Equal(out, bw.flush()) {
			t.Fatalf("seed %d: emitted % x, bit writer % x", seed, out, bw.b)
		}
		// Word by word: the same bytes, for the fields and for values wider than them.
		wp := wordParts(fw, total/8)
		if wp == nil {
			t.Fatalf("seed %d: no word plan for %v", seed, ps)
		}
		if out := emitWords(append([]byte(nil), prefix...), got, 0, total/8, wp); !bytes.Equal(out, append(prefix, in...)) {
			t.Fatalf("seed %d: emitted word by word % x, want % x", seed, out, append(prefix, in...))
		}
		if out := emitWords(nil, wide, 0, total/8, wp); !bytes.Equal(out, bw.b) {
			t.Fatalf("seed %d: emitted word by word % x, bit writer % x", seed, out, bw.b)
		}
	}
	if planned < 100 {
		t.Fatalf("only %d layouts planned", planned)
	}
}

// TestSerialPlan: the compile-time serialization plan (hash and checksum inputs) gives the
// bytes serialize gives, on random field lists with and without a shared validity test,
// valid and invalid, byte-aligned or not; lists it cannot plan (fields of two headers, a
// computed value) fall back to serialize.
func TestSerialPlan(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	fast := 0
	for iter := 0; iter < 3000; iter++ {
		s := make([]uint64, 40)
		for i := range s {
			s[i] = r.Uint64()
		}
		vslot := 0
		if r.IntN(2) == 0 {
			vslot = 1 + 30 + r.IntN(2) // slot 30 or 31
			s[vslot-1] = uint64(r.IntN(2))
		}
		var ps []piece
		for n := r.IntN(10); n > 0; n-- {
			w := 1 + r.IntN(64)
			slot := len(ps)
			s[slot] &= mask128(w).lo // slots hold values masked to their width
			ps = append(ps, piece{off: slot, width: w, vslot: vslot})
		}
		mixed := false
		if len(ps) > 1 && r.IntN(4) == 0 {
			ps[r.IntN(len(ps))].vslot = 1 + 32 // another header
			s[32] = 1
			mixed = true
		}
		if len(ps) > 0 && r.IntN(6) == 0 {
			k := r.Uint64() & 0xff
			ps[r.IntN(len(ps))] = piece{off: -1, width: 8, f: func(*ctx) u128 { return u128{lo: k} }}
			mixed = true
		}
		sp := planSerial(ps)
		if sp.fast && mixed {
			t.Fatalf("seed %d: planned a list with two validity tests or a computed value: %v", seed, ps)
		}
		if sp.fast {
			fast++
		}
		c := &ctx{s: s}
		want := append([]byte(nil), serialize(c, ps)...)
		c.hbuf = append(c.hbuf[:0], 0xee, 0xee) // stale bytes must not leak
		if got := sp.run(c); !bytes.Equal(got, want) {
			t.Fatalf("seed %d: plan % x, serialize % x (pieces %v, fast %v)", seed, got, want, ps, sp.fast)
		}
	}
	if fast < 1000 {
		t.Fatalf("seed %d: only %d lists planned", seed, fast)
	}
}

// TestStoreRuns: a run of store instructions (runFn, its inlined dispatch) computes what the
// instructions compute one at a time (exec), for every operation, on random slots and values.
func TestStoreRuns(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	for iter := 0; iter < 2000; iter++ {
		s := make([]uint64, 16)
		for i := range s {
			s[i] = r.Uint64()
		}
		var ins []sinstr
		for n := 2 + r.IntN(8); n > 0; n-- {
			w := 1 + r.IntN(64)
			k := r.Uint64()
			ins = append(ins, sinstr{op: sop(r.IntN(int(sFn) + 1)), d: r.IntN(16), a: r.IntN(16), b: r.IntN(16),
				sh: uint(r.IntN(64)), k: k, m: mask128(w).lo, g: func(c *ctx) uint64 { return c.s[3] ^ k }})
		}
		want := append([]uint64(nil), s...)
		cw := &ctx{s: want}
		for i := range ins {
			ins[i].exec(cw, want)
		}
		c := &ctx{s: s}
		if runFn(ins)(c) != fNext {
			t.Fatalf("seed %d: a run did not continue", seed)
		}
		if !slices.Equal(s, want) {
			t.Fatalf("seed %d: run %v gave %x, one at a time %x", seed, ins, s, want)
		}
	}
}

// TestStaleTemps: a v1model packet starts with only its headers and metadata cleared; every
// other slot must be written before it is read. With the slots poisoned at every packet,
// locals declared without an initializer (in an apply block, an action, a control's locals,
// scalars, structs and headers) and an out parameter a function does not write still read as
// zero, as in bmv2, packet after packet. Negative control (the broken subtest): with
// declarations compiled into nothing, the poison shows.
func TestStaleTemps(t *testing.T) {
	poisonTemps = true
	defer func() { poisonTemps, brokenNoLocalInit = false, false }()
	run := func(t *testing.T) (nonzero int) {
		sw := load(t, "testdata/temps.p4", Config{})
		for i := 0; i < 3; i++ {
			in := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			res, err := sw.Process(1, in)
			if err != nil || len(res.Out) != 1 {
				t.Fatalf("packet %d: %v %v", i, res, err)
			}
			if got := res.Out[0].Data; !bytes.Equal(got, make([]byte, 7)) {
				t.Logf("packet %d: % x, want zeros", i, got)
				nonzero++
			}
		}
		return nonzero
	}
	t.Run("engine", func(t *testing.T) {
		if n := run(t); n != 0 {
			t.Errorf("%d packets read stale slots", n)
		}
	})
	t.Run("broken", func(t *testing.T) {
		brokenNoLocalInit = true
		defer func() { brokenNoLocalInit = false }()
		if n := run(t); n != 3 {
			t.Errorf("the negative control read stale slots in %d of 3 packets, want 3", n)
		}
	})
}
