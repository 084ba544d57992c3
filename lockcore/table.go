package lockcore

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
	const bits = 10
	return table{keys: make([]uint32, 1<<bits), vals: make([]*lockState, 1<<bits), shift: 32 - bits}
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
}

func (t *table) grow() {
	keys, vals := t.keys, t.vals
	t.keys = make([]uint32, 2*len(keys))
	t.vals = make([]*lockState, 2*len(vals))
	t.shift--
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
