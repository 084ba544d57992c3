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

func (h dlHeap) len() int { return len(h) }

// push adds l (not in the heap) with key l.due.
func (h *dlHeap) push(l *lockState) {
	l.hidx = int32(len(*h))
	*h = append(*h, l)
	siftUp(*h, len(*h)-1)
}

// remove takes l (in the heap) out.
func (h *dlHeap) remove(l *lockState) {
	i, n := int(l.hidx), len(*h)-1
	if i != n {
		h.swap(i, n)
	}
	(*h)[n] = nil
	*h = (*h)[:n]
	if i != n && !siftDown(*h, i) {
		siftUp(*h, i)
	}
	l.hidx = -1
}

// fix restores the order after l.due changed.
func (h dlHeap) fix(l *lockState) {
	if !siftDown(h, int(l.hidx)) {
		siftUp(h, int(l.hidx))
	}
}

// waitHeap is a binary min-heap of the locks that have live waiters while wait leases are on
// (Config.WaitLease), keyed by lockState.wdue, a lower bound of the earliest wait deadline of the
// lock's waiters: a retransmission pushes its waiter's deadline later without touching the heap,
// and Expire, when it reaches the lock, removes the waiters whose deadline passed and sets wdue to
// the earliest deadline left. Every lock with live waiters is in it exactly once, at index
// lockState.widx (-1 when it is not in the heap). It mirrors dlHeap.
//
// Invariant: for every i > 0, h[(i-1)/2].wdue <= h[i].wdue, and h[i].widx == i.
type waitHeap []*lockState

func (h waitHeap) less(i, j int) bool { return h[i].wdue < h[j].wdue }

func (h waitHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].widx, h[j].widx = int32(i), int32(j)
}

func (h waitHeap) len() int { return len(h) }

// push adds l (not in the heap) with key l.wdue.
func (h *waitHeap) push(l *lockState) {
	l.widx = int32(len(*h))
	*h = append(*h, l)
	siftUp(*h, len(*h)-1)
}

// remove takes l (in the heap) out.
func (h *waitHeap) remove(l *lockState) {
	i, n := int(l.widx), len(*h)-1
	if i != n {
		h.swap(i, n)
	}
	(*h)[n] = nil
	*h = (*h)[:n]
	if i != n && !siftDown(*h, i) {
		siftUp(*h, i)
	}
	l.widx = -1
}

// fix restores the order after l.wdue changed.
func (h waitHeap) fix(l *lockState) {
	if !siftDown(h, int(l.widx)) {
		siftUp(h, int(l.widx))
	}
}

// indexedHeap is a binary min-heap kept in a slice (the parent of i at (i-1)/2) whose swap also
// moves what records each element's index: what siftUp and siftDown need of it. The Core's
// heaps (dlHeap, waitHeap, unreadStats) are ordered by these two alone.
type indexedHeap interface {
	len() int
	less(i, j int) bool
	swap(i, j int)
}

// siftUp moves element i up while it is less than its parent.
func siftUp[H indexedHeap](h H, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// siftDown moves element i down while a child is less than it, and reports whether it moved.
func siftDown[H indexedHeap](h H, i int) bool {
	start, n := i, h.len()
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
