package clientcore

// heapTimer is an item's place in a timerHeap: when it is due (client monotonic ns) and its index in
// the heap, -1 when it is not in one. The zero value is not valid: an item starts with idx -1.
type heapTimer struct {
	due int64
	idx int
}

// timed is an item of a timerHeap: a pointer to a struct that holds its timer.
type timed interface{ timerOf() *heapTimer }

// timerHeap is a min-heap of items by their timer's due time, each knowing its own index, so that
// an item is moved or removed in O(log n) without a search. The core keeps two: operations by
// their next retransmission or timeout (Op.tm) and held grants by the lease keeper's next look
// (Entry.kt). Invariant: for every item x in h, x.timerOf().idx is x's index in h.
type timerHeap[T timed] struct{ h []T }

// len returns the number of items.
func (q *timerHeap[T]) len() int { return len(q.h) }

// min returns the item due first; the heap must not be empty.
func (q *timerHeap[T]) min() T { return q.h[0] }

// set puts x in the heap at due, or moves it there if it is in the heap already.
func (q *timerHeap[T]) set(x T, due int64) {
	t := x.timerOf()
	t.due = due
	if t.idx < 0 {
		t.idx = len(q.h)
		q.h = append(q.h, x)
		q.up(t.idx)
		return
	}
	if !q.down(t.idx) {
		q.up(t.idx)
	}
}

// remove takes x out of the heap; nothing happens when it is not in it.
func (q *timerHeap[T]) remove(x T) {
	t := x.timerOf()
	i := t.idx
	if i < 0 {
		return
	}
	n := len(q.h) - 1
	if i != n {
		q.swap(i, n)
	}
	var zero T
	q.h[n] = zero
	q.h = q.h[:n]
	if i != n && !q.down(i) {
		q.up(i)
	}
	t.idx = -1
}

func (q *timerHeap[T]) due(i int) int64 { return q.h[i].timerOf().due }

func (q *timerHeap[T]) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].timerOf().idx, q.h[j].timerOf().idx = i, j
}

func (q *timerHeap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if q.due(p) <= q.due(i) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *timerHeap[T]) down(i int) bool {
	start := i
	for {
		l := 2*i + 1
		if l >= len(q.h) {
			break
		}
		m := l
		if r := l + 1; r < len(q.h) && q.due(r) < q.due(l) {
			m = r
		}
		if q.due(m) >= q.due(i) {
			break
		}
		q.swap(i, m)
		i = m
	}
	return i > start
}

// timerOf returns the op's timer in Core.ops.
func (op *Op) timerOf() *heapTimer { return &op.tm }

// timerOf returns the entry's timer in Core.keep.
func (e *Entry) timerOf() *heapTimer { return &e.kt }

// schedule puts e in the lease keeper's heap (or moves it) to be looked at at next. renewed clears
// the keeper's renewal in flight (an answer arrived, or the caller renewed).
func (c *Core) schedule(e *Entry, next int64, renewed bool) {
	if renewed {
		e.kprob, e.krto = false, 0
	}
	c.keep.set(e, next)
}
