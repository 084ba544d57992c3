package emu_test

import (
	"errors"
	"math/rand"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// twoNodes returns an endpoint on node 1 and node 0 (the target) either in one process or with
// node 0 reached only over the TCP transport.
func twoNodes(t *testing.T, cfg emu.Config, tcp bool) (ep verbs.Endpoint, target *emu.Node) {
	t.Helper()
	if !tcp {
		c := cluster(t, cfg, 2)
		return c.Node(1).NewEndpoint(), c.Node(0)
	}
	a, err := emu.NewNode(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := emu.NewNode(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(); a.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.Serve(ln)
	if err := b.Connect(0, ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	return b.NewEndpoint(), a
}

// The extended verbs (masked CAS, masked FAA, multi-word READ/WRITE, Exec) with their exact
// semantics, in process and over the TCP transport.
func TestExtendedVerbs(t *testing.T) {
	for _, tcp := range []bool{false, true} {
		name := map[bool]string{false: "in-process", true: "tcp"}[tcp]
		t.Run(name, func(t *testing.T) {
			ep, tn := twoNodes(t, emu.Config{}, tcp)
			p, _ := tn.Alloc(256)
			lo, hi := verbs.Field{Shift: 0, Width: 8}, verbs.Field{Shift: 8, Width: 8}
			bd := verbs.Boundary(lo, hi)
			steps := []struct {
				name string
				do   func() (uint64, error)
				want uint64 // returned value
				mem  uint64 // word afterwards
			}{
				{"mcas-set-bits", func() (uint64, error) {
					v, _, err := verbs.MaskedCAS(ep, p, 0, 0b0110, 0b0110, 0b0110)
					return v, err
				}, 0, 0b0110},
				{"mcas-conflict", func() (uint64, error) {
					v, ok, err := verbs.MaskedCAS(ep, p, 0, 0b0011, 0b0011, 0b0011)
					if ok {
						t.Error("overlapping masked CAS succeeded")
					}
					return v, err
				}, 0b0110, 0b0110},
				{"mcas-or", func() (uint64, error) {
					v, _, err := verbs.MaskedCAS(ep, p, 0, 0, 0x100, 0x100)
					return v, err
				}, 0b0110, 0x106},
				{"mcas-clear-own", func() (uint64, error) {
					v, _, err := verbs.MaskedCAS(ep, p, 0b0110, 0b0110, 0, 0b0110)
					return v, err
				}, 0x106, 0x100},
				{"mfaa-no-carry", func() (uint64, error) {
					return verbs.MaskedFAA(ep, p, lo.Add(0xff)|hi.Add(1), bd)
				}, 0x100, 0x2ff},
				{"mfaa-wrap-low-only", func() (uint64, error) {
					return verbs.MaskedFAA(ep, p, lo.Add(1), bd)
				}, 0x2ff, 0x200},
				{"mfaa-decrement", func() (uint64, error) {
					return verbs.MaskedFAA(ep, p, hi.Add(-3), bd)
				}, 0x200, 0xff00},
			}
			for _, s := range steps {
				got, err := s.do()
				if err != nil || got != s.want || tn.Load(p.Offset()) != s.mem {
					t.Fatalf("%s: got %#x err %v mem %#x, want %#x mem %#x", s.name, got, err, tn.Load(p.Offset()), s.want, s.mem)
				}
			}
			data := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
			if err := verbs.WriteWords(ep, p.Add(64), data); err != nil {
				t.Fatal(err)
			}
			got, err := verbs.ReadWords(ep, p.Add(64), len(data))
			if err != nil || len(got) != len(data) || got[0] != 1 || got[10] != 11 {
				t.Fatalf("multi-word: %v %v", got, err)
			}
			// Exec: one batch, one signaled request (all on node 0); unsignaled results via Dest.
			block := make([]uint64, 4)
			wrs := []verbs.WorkRequest{
				{Op: verbs.OpMaskedFAA, Remote: p, Value: lo.Add(5), Boundary: bd},
				{Op: verbs.OpRead, Remote: p.Add(64), Words: 4, Dest: block},
				{Op: verbs.OpCAS, Remote: p.Add(64), Compare: 1, Value: 100},
				{Op: verbs.OpRead, Remote: p},
			}
			res, err := verbs.Exec(ep, wrs)
			if err != nil {
				t.Fatal(err)
			}
			if res[0] != 0xff00 || block[3] != 4 || res[1] != 1 || res[2] != 1 || res[3] != 0xff05 {
				t.Fatalf("exec results %#x block %v", res, block)
			}
			if n := signaled(wrs); n != 1 {
				t.Fatalf("%d signaled requests, want 1", n)
			}
			st := ep.Stats().Snapshot()
			if st.MaskedCASes != 4 || st.MaskedFAAs != 4 || st.Words != 10+10+3 {
				t.Fatalf("accounting: %+v", st)
			}
			// Bad requests are errors, not crashes.
			if _, err := verbs.ReadWords(ep, p, verbs.MaxWords+1); !errors.Is(err, verbs.ErrBadRequest) {
				t.Fatalf("oversized read: %v", err)
			}
			if _, err := verbs.ReadWords(ep, verbs.MakePtr(0, 1<<20-16), 4); !errors.Is(err, verbs.ErrBadPtr) {
				t.Fatalf("read past the region: %v", err)
			}
		})
	}
}

func signaled(wrs []verbs.WorkRequest) int {
	n := 0
	for _, wr := range wrs {
		if wr.Signaled {
			n++
		}
	}
	return n
}

// Remote masked atomics are atomic among themselves: six initiators on three nodes each own one
// 8-bit field of a word (masked FAA) and one bit of another (masked CAS set/clear); with the
// NIC's read-write window widened, no increment and no bit is lost.
func TestMaskedAtomicsSerialized(t *testing.T) {
	c := cluster(t, emu.Config{AtomicWindowYields: 3}, 3)
	p, _ := c.Node(0).Alloc(64)
	counters, bits := p, p.Add(8)
	var bd uint64
	for i := 0; i < 8; i++ {
		bd |= verbs.Field{Shift: uint(8 * i), Width: 8}.MSB()
	}
	var wg sync.WaitGroup
	const rounds = 150
	for i := 0; i < 6; i++ {
		ep := c.Node(i % 3).NewEndpoint()
		f := verbs.Field{Shift: uint(8 * i), Width: 8}
		bit := uint64(1) << (3 * i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < rounds; j++ {
				if _, err := verbs.MaskedFAA(ep, counters, f.Add(1), bd); err != nil {
					t.Error(err)
					return
				}
				if _, ok, err := verbs.MaskedCAS(ep, bits, 0, bit, bit, bit); err != nil || !ok {
					t.Errorf("setting own bit: ok=%v err=%v", ok, err)
					return
				}
				if _, ok, err := verbs.MaskedCAS(ep, bits, bit, bit, 0, bit); err != nil || !ok {
					t.Errorf("clearing own bit: ok=%v err=%v", ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	w := c.Node(0).Load(counters.Offset())
	for i := 0; i < 6; i++ {
		if got := (verbs.Field{Shift: uint(8 * i), Width: 8}).Get(w); got != rounds {
			t.Errorf("field %d: %d increments of %d", i, got, rounds)
		}
	}
	if b := c.Node(0).Load(bits.Offset()); b != 0 {
		t.Errorf("bits left set: %#x", b)
	}
}

// Negative control: local CPU atomics are NOT atomic with remote masked atomics. A CPU FAA and a
// CPU CAS landing in the NIC's read-write window of a masked FAA / masked CAS are lost.
func TestMaskedAtomicsNotAtomicWithCPU(t *testing.T) {
	tests := []struct {
		name   string
		remote func(ep verbs.Endpoint, p verbs.Ptr) error
		local  func(m verbs.Memory, off uint64)
		want   uint64 // word afterwards: the remote result only
		sum    uint64 // what an atomic execution would leave
	}{
		{"cpu-faa-vs-masked-faa", func(ep verbs.Endpoint, p verbs.Ptr) error {
			_, err := verbs.MaskedFAA(ep, p, 1<<8, 1<<15)
			return err
		}, func(m verbs.Memory, off uint64) { m.FAA(off, 1) }, 1 << 8, 1<<8 | 1},
		{"cpu-cas-vs-masked-cas", func(ep verbs.Endpoint, p verbs.Ptr) error {
			_, _, err := verbs.MaskedCAS(ep, p, 0, 0xf0, 0xf0, 0xf0)
			return err
		}, func(m verbs.Memory, off uint64) { m.CAS(off, 0, 0x0f) }, 0xf0, 0xff},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var local verbs.Memory
			var once sync.Once
			c := cluster(t, emu.Config{OnAtomicWindow: func(p verbs.Ptr) {
				once.Do(func() { tc.local(local, p.Offset()) })
			}}, 2)
			local = c.Node(0).NewEndpoint().Local()
			p, _ := c.Node(0).Alloc(64)
			if err := tc.remote(c.Node(1).NewEndpoint(), p); err != nil {
				t.Fatal(err)
			}
			if got := c.Node(0).Load(p.Offset()); got != tc.want {
				t.Fatalf("word %#x, want %#x (the CPU's update lost; atomic would give %#x)", got, tc.want, tc.sum)
			}
		})
	}
}

// Per-QP order under random delays: a WRITE (or masked FAA) followed by a READ of the same
// queue pair always sees it, signaled or not; Exec's single completion covers the whole batch.
func TestPerQPOrderUnderDelay(t *testing.T) {
	c := cluster(t, emu.Config{OpDelay: 200 * time.Microsecond, Seed: 7}, 2)
	ep := c.Node(1).NewEndpoint()
	p, _ := c.Node(0).Alloc(64)
	rng := rand.New(rand.NewSource(1))
	for i := 1; i <= 100; i++ {
		v := rng.Uint64()
		wrs := []verbs.WorkRequest{
			{Op: verbs.OpWrite, Remote: p, Value: v},
			{Op: verbs.OpMaskedFAA, Remote: p.Add(8), Value: 1},
			{Op: verbs.OpRead, Remote: p},
			{Op: verbs.OpRead, Remote: p.Add(8)},
		}
		res, err := verbs.Exec(ep, wrs)
		if err != nil {
			t.Fatal(err)
		}
		if res[2] != v || res[3] != uint64(i) {
			t.Fatalf("round %d: read %#x/%d after write %#x and %d increments", i, res[2], res[3], v, i)
		}
	}
}

// A failed unsignaled request puts its queue pair in error: the next signaled completion of the
// queue pair reports it (Exec does not return garbage results).
func TestUnsignaledErrorReported(t *testing.T) {
	c := cluster(t, emu.Config{}, 2)
	ep := c.Node(1).NewEndpoint()
	p, _ := c.Node(0).Alloc(64)
	_, err := verbs.Exec(ep, []verbs.WorkRequest{{Op: verbs.OpRead, Remote: verbs.MakePtr(0, 1<<30)}, {Op: verbs.OpRead, Remote: p}})
	if !errors.Is(err, verbs.ErrBadPtr) {
		t.Fatalf("got %v, want the earlier request's bad pointer", err)
	}
	if _, err := verbs.Read(ep, p); err != nil {
		t.Fatalf("queue pair still in error after reporting: %v", err)
	}
}
