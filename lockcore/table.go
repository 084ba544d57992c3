package lockcore

import "math/bits"

// table maps lock ids to lock states: open addressing with linear probing and Fibonacci hashing,
// load factor at most 1/2, backward-shift deletion (no tombstones). It replaces a Go map on the
// hot path, where two lookups per acquire+release pair were half the cost.
//
// Invariant: every key k stored at slot i is reachable from its home slot h(k) by probing
// h(k), h(k)+1, ..., i without meeting an empty slot.
type table struct {
	keys  []uint32
	vals  []*lockState // nil marks an empty slot
	shift uint8        // 32 - log2(len)
	n     int
}

func newTable() table {
	return table{keys: make([]uint32, minTable), vals: make([]*lockState, minTable), shift: uint8(32 - bits.Len(minTable-1))}
}

func (t *table) home(k uint32) uint32 { return (k * 0x9E3779B1) >> t.shift }

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
	t.shift = uint8(32 - bits.Len(uint(n)-1))
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
