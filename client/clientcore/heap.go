package clientcore

// opHeap is a min-heap of operations by their timer (Op.due); Op.hidx is the index, -1 outside.
type opHeap struct{ h []*Op }

func (q *opHeap) set(op *Op) {
	if op.hidx < 0 {
		op.hidx = len(q.h)
		q.h = append(q.h, op)
		q.up(op.hidx)
		return
	}
	if !q.down(op.hidx) {
		q.up(op.hidx)
	}
}

func (q *opHeap) remove(op *Op) {
	i := op.hidx
	if i < 0 {
		return
	}
	n := len(q.h) - 1
	if i != n {
		q.swap(i, n)
	}
	q.h[n] = nil
	q.h = q.h[:n]
	if i != n && !q.down(i) {
		q.up(i)
	}
	op.hidx = -1
}

func (q *opHeap) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].hidx, q.h[j].hidx = i, j
}

func (q *opHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if q.h[p].due <= q.h[i].due {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *opHeap) down(i int) bool {
	start := i
	for {
		l := 2*i + 1
		if l >= len(q.h) {
			break
		}
		m := l
		if r := l + 1; r < len(q.h) && q.h[r].due < q.h[l].due {
			m = r
		}
		if q.h[m].due >= q.h[i].due {
			break
		}
		q.swap(i, m)
		i = m
	}
	return i > start
}

// entryHeap is the lease keeper's min-heap of held grants by when to look next (Entry.kdue);
// Entry.kidx is the index, -1 outside.
type entryHeap struct{ h []*Entry }

// schedule puts e in the heap (or moves it) to be looked at at next. renewed clears the keeper's
// renewal in flight (an answer arrived, or the caller renewed).
func (q *entryHeap) schedule(e *Entry, next int64, renewed bool) {
	if renewed {
		e.kprob, e.krto = false, 0
	}
	e.kdue = next
	if e.kidx < 0 {
		e.kidx = len(q.h)
		q.h = append(q.h, e)
		q.up(e.kidx)
		return
	}
	if !q.down(e.kidx) {
		q.up(e.kidx)
	}
}

func (q *entryHeap) remove(e *Entry) {
	i := e.kidx
	if i < 0 {
		return
	}
	n := len(q.h) - 1
	if i != n {
		q.swap(i, n)
	}
	q.h[n] = nil
	q.h = q.h[:n]
	if i != n && !q.down(i) {
		q.up(i)
	}
	e.kidx = -1
}

func (q *entryHeap) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].kidx, q.h[j].kidx = i, j
}

func (q *entryHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if q.h[p].kdue <= q.h[i].kdue {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *entryHeap) down(i int) bool {
	start := i
	for {
		l := 2*i + 1
		if l >= len(q.h) {
			break
		}
		m := l
		if r := l + 1; r < len(q.h) && q.h[r].kdue < q.h[l].kdue {
			m = r
		}
		if q.h[m].kdue >= q.h[i].kdue {
			break
		}
		q.swap(i, m)
		i = m
	}
	return i > start
}
