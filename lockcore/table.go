package lockcore

import "math/bits"

// table maps lock ids to lock states: open addressing with linear probing, load factor at most
// 1/2, backward-shift deletion (no tombstones). It replaces a Go map on the hot path, where two
// lookups per acquire+release pair were half the cost.
//
// The home slot of key k is the top log2(len) bits of mul*scramble(k^xor) mod 2^64: keyed
// multiply-shift hashing (Dietzfelbinger et al. 1997) of the key scrambled by a xorshift-multiply
// round (the first of Wellons' lowbias32). For any xor, k -> scramble(k^xor) is a bijection, so with mul a random odd 64-bit number
// two distinct ids share a home slot with probability at most 2/len whatever ids a client picks
// (Config.HashSeed: the lock server draws one per start). The scrambling is there because plain
// multiply-shift clusters arithmetic progressions (sequential lock ids among them) under linear
// probing for a few multipliers in a hundred (Patrascu and Thorup 2010: measured, a mean of 30
// probes per insert for ids 0..2047 under 1% of random multipliers; scrambled, at most 1.65 over
// 200 seeds and any of sequential, random and adversarial ids, as with MurmurHash3's longer
// finalizer). hashKey(0), the fixed default
// of tests and of the data plane's oracle, is public: ids chosen against it collide
// (TestTableAdversarialIDs, the negative control), as ids chosen against the Fibonacci constant the
// table used before it was seeded did (issue 18: 4x the CPU).
//
// Invariant: every key k stored at slot i is reachable from its home slot h(k) by probing
// h(k), h(k)+1, ..., i without meeting an empty slot.
type table struct {
	keys  []uint32
	vals  []*lockState // nil marks an empty slot
	key   hashKey
	shift uint8 // 64 - log2(len)
	n     int
}

// hashKey is the key of the table's hash function.
type hashKey struct {
	mul uint64 // odd
	xor uint32
}

// newHashKey derives the hash key of a seed; seed 0 gives the fixed default (xor 0, mul the
// 64-bit golden ratio 0x9E3779B97F4A7C15). Other seeds pass through SplitMix64's finalizer, so
// that seeds 1, 2, 3 give unrelated keys.
func newHashKey(seed uint64) hashKey {
	if seed == 0 {
		return hashKey{mul: 0x9E3779B97F4A7C15}
	}
	return hashKey{mul: mix64(seed) | 1, xor: uint32(mix64(seed ^ 0x5851F42D4C957F2D))}
}

// mix64 is SplitMix64's output function: a bijection of uint64 that spreads every input bit.
func mix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// scramble is a bijection of uint32 that spreads the input bits: a xorshift-multiply round.
func scramble(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x7FEB352D
	return x ^ x>>15
}

func newTable(k hashKey) table {
	return table{keys: make([]uint32, minTable), vals: make([]*lockState, minTable), key: k,
		shift: uint8(64 - bits.Len(minTable-1))}
}

func (t *table) home(k uint32) uint32 {
	return uint32((uint64(scramble(k^t.key.xor)) * t.key.mul) >> t.shift)
}

// probes returns how many slots a lookup of k examines (1 when k, or an empty slot, sits at its
// home slot): the cost TestTableAdversarialIDs measures.
func (t *table) probes(k uint32) int {
	mask := uint32(len(t.vals) - 1)
	n := 1
	for i := t.home(k); t.vals[i] != nil && t.keys[i] != k; i = (i + 1) & mask {
		n++
	}
	return n
}

func (t *table) get(k uint32) *lockState {
	mask := uint32(len(t.vals) - 1)
	for i := t.home(k); ; i = (i + 1) & mask {
		v := t.vals[i]
		if v == nil || t.keys[i] == k {
			return v
		}
	}
}

// put stores v under k, which must not be present.
func (t *table) put(k uint32, v *lockState) {
	if 2*(t.n+1) > len(t.vals) {
		t.grow()
	}
	mask := uint32(len(t.vals) - 1)
	i := t.home(k)
	for t.vals[i] != nil {
		i = (i + 1) & mask
	}
	t.keys[i], t.vals[i] = k, v
	t.n++
}

func (t *table) del(k uint32) {
	mask := uint32(len(t.vals) - 1)
	i := t.home(k)
	for {
		if t.vals[i] == nil {
			return
		}
		if t.keys[i] == k {
			break
		}
		i = (i + 1) & mask
	}
	// Backward shift: move later entries of the probe run into the hole when their home slot
	// does not lie cyclically in (hole, j].
	for j := (i + 1) & mask; t.vals[j] != nil; j = (j + 1) & mask {
		h := t.home(t.keys[j])
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			i = j
		}
	}
	t.vals[i] = nil
	t.n--
	if len(t.vals) > minTable && 8*t.n < len(t.vals) {
		t.resize(len(t.vals) / 2) // a table that emptied gives its memory back
	}
}

func (t *table) grow() { t.resize(2 * len(t.vals)) }

// minTable is the smallest table size; a table shrinks by half when it is less than 1/8 full.
const minTable = 1 << 10

// resize rehashes into n slots (a power of two).
func (t *table) resize(n int) {
	keys, vals := t.keys, t.vals
	t.keys = make([]uint32, n)
	t.vals = make([]*lockState, n)
	t.shift = uint8(64 - bits.Len(uint(n)-1))
	t.n = 0
	for i, v := range vals {
		if v != nil {
			t.put(keys[i], v)
		}
	}
}

// each calls f for every stored lock state. f must not add or delete entries.
func (t *table) each(f func(*lockState)) {
	for _, v := range t.vals {
		if v != nil {
			f(v)
		}
	}
}
