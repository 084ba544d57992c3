package clientcore

import (
	"crypto/rand"
	"encoding/binary"
	"math/bits"
	"testing"
)

// txnSpace is a client's transaction-id permutation with its key, as Core.NewTxnID computes it.
type txnSpace struct{ k0, k1 uint64 }

func (s txnSpace) id(n uint64) uint64 { return mix64(mix64(n^s.k0) ^ s.k1) }

func randomSpace(t *testing.T) txnSpace {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return txnSpace{k0: binary.BigEndian.Uint64(b[:8]), k1: binary.BigEndian.Uint64(b[8:])}
}

// unmix64 inverts mix64 (each xor-shift and each odd multiplication is invertible).
func unmix64(x uint64) uint64 {
	x ^= x>>31 ^ x>>62
	x *= 0x319642b2d24d8ec3 // inverse of 0x94d049bb133111eb mod 2^64
	x ^= x>>27 ^ x>>54
	x *= 0x96de1b173f119089 // inverse of 0xbf58476d1ce4e5b9
	x ^= x>>30 ^ x>>60
	return x
}

func TestMix64IsABijection(t *testing.T) {
	for _, c := range [][2]uint64{{0x94d049bb133111eb, 0x319642b2d24d8ec3}, {0xbf58476d1ce4e5b9, 0x96de1b173f119089}} {
		if c[0]*c[1] != 1 {
			t.Fatalf("%#x * %#x != 1 mod 2^64", c[0], c[1])
		}
	}
	s := randomSpace(t)
	for i := uint64(0); i < 100_000; i++ {
		x := s.id(i) ^ bits.RotateLeft64(i, 17)
		if unmix64(mix64(x)) != x {
			t.Fatalf("unmix64(mix64(%#x)) != %#x", x, x)
		}
	}
}

// TestTxnIDCollisions: the first ids of many clients never collide (the old scheme, a random
// 32-bit client id above a counter, collides for this many clients with probability 99%: its
// negative control below finds collisions), and one client's ids are all distinct.
func TestTxnIDCollisions(t *testing.T) {
	const clients = 300_000
	firsts := make(map[uint64]struct{}, clients)
	legacy := make(map[uint64]struct{}, clients)
	legacyDup := 0
	for range clients {
		s := randomSpace(t)
		id := s.id(1)
		if _, dup := firsts[id]; dup {
			t.Fatalf("two of %d clients drew the first id %#x", clients, id)
		}
		firsts[id] = struct{}{}
		// Negative control: the old ids, clientID<<32 | 1 with a random 32-bit client id.
		old := uint64(uint32(s.k0))<<32 | 1
		if _, dup := legacy[old]; dup {
			legacyDup++
		}
		legacy[old] = struct{}{}
	}
	// P(no collision among 300k 32-bit ids) = exp(-n^2/2^33) ~ 3e-5.
	if legacyDup == 0 {
		t.Errorf("negative control: no collision among %d 32-bit client ids (expected about 10)", clients)
	}
	t.Logf("old 32-bit client ids: %d collisions among %d clients; new: 0", legacyDup, clients)
	s := randomSpace(t)
	seen := make(map[uint64]struct{}, 1<<20)
	for n := uint64(1); n <= 1<<20; n++ {
		id := s.id(n)
		if _, dup := seen[id]; dup || id == 0 {
			t.Fatalf("id %#x of counter %d repeats or is 0", id, n)
		}
		seen[id] = struct{}{}
	}
}

// TestNewTxnIDIsTheKeyedPermutation: the core's ids are id(1), id(2), ... of its key.
func TestNewTxnIDIsTheKeyedPermutation(t *testing.T) {
	s := randomSpace(t)
	c := newTestCore(t, Config{TxnKey: [2]uint64{s.k0, s.k1}})
	for n := uint64(1); n <= 1000; n++ {
		want := s.id(n)
		if want == 0 {
			continue // skipped by NewTxnID (probability 2^-64)
		}
		if id := c.NewTxnID(); id != want {
			t.Fatalf("id %d = %#x, want %#x", n, id, want)
		}
	}
}

func TestClientIDKeepsDeterministicIDs(t *testing.T) {
	c := newTestCore(t, Config{ClientID: 7})
	if a, b := c.NewTxnID(), c.NewTxnID(); a != 7<<32|1 || b != 7<<32|2 {
		t.Fatalf("ids %#x %#x, want 7<<32|1 and |2", a, b)
	}
}
