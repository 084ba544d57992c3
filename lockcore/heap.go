package lockcore

// dlHeap is a binary min-heap of the locks that have holders, keyed by the earliest deadline of
// each lock's holders (lockState.due). Every lock with holders is in it exactly once, at index
// lockState.hidx (-1 when it is not in the heap). Expire pops only the locks whose earliest
// deadline has passed, so a sweep costs O((expired locks + 1) log n), not a walk over every held
// lock; grants and releases cost O(log n) (O(1) when the lock's earliest deadline does not move).
//
// Invariant: for every i > 0, h[(i-1)/2].due <= h[i].due, and h[i].hidx == i.
type dlHeap []*lockState

func (h dlHeap) less(i, j int) bool { return h[i].due < h[j].due }

func (h dlHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = int32(i), int32(j)
}

func (h dlHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h dlHeap) down(i int) bool {
	start, n := i, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}

// push adds l (not in the heap) with key l.due.
func (h *dlHeap) push(l *lockState) {
	l.hidx = int32(len(*h))
	*h = append(*h, l)
	h.up(len(*h) - 1)
}

// remove takes l (in the heap) out.
func (h *dlHeap) remove(l *lockState) {
	i, n := int(l.hidx), len(*h)-1
	if i != n {
		h.swap(i, n)
	}
	(*h)[n] = nil
	*h = (*h)[:n]
	if i != n && !h.down(i) {
		h.up(i)
	}
	l.hidx = -1
}

// fix restores the order after l.due changed.
func (h dlHeap) fix(l *lockState) {
	if !h.down(int(l.hidx)) {
		h.up(int(l.hidx))
	}
}
