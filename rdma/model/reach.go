package model

// Reverse is the reverse adjacency of a transition graph on the states 0..n-1, in compressed
// rows: the predecessors of state v are pred[start[v]:start[v+1]]. The liveness checks of this
// package and of rdma/rma/rwmodel run over it (which states can still reach a goal). A Reverse
// is not safe for concurrent use: CanReach reuses its scratch queue.
type Reverse struct {
	start []int32 // len n+1
	pred  []int32 // len(edges)
	queue []int32 // CanReach's scratch
}

// NewReverse builds the reverse adjacency of the graph on the states 0..n-1 whose edges are
// edges, ends(e) giving edge e's source and target (each in 0..n-1). Parallel edges are kept.
func NewReverse[E any](n int, edges []E, ends func(E) (from, to int32)) *Reverse {
	r := &Reverse{start: make([]int32, n+1), pred: make([]int32, len(edges))}
	for _, e := range edges {
		_, to := ends(e)
		r.start[to+1]++
	}
	for i := 1; i <= n; i++ {
		r.start[i] += r.start[i-1]
	}
	fill := append([]int32(nil), r.start[:n]...)
	for _, e := range edges {
		from, to := ends(e)
		r.pred[fill[to]] = from
		fill[to]++
	}
	return r
}

// CanReach extends reach (one entry per state) to every state from which a state marked in
// reach on entry can be reached: afterwards reach[v] is true iff some path leads from v to a
// marked state (the empty path included).
func (r *Reverse) CanReach(reach []bool) {
	q := r.queue[:0]
	for v, ok := range reach {
		if ok {
			q = append(q, int32(v))
		}
	}
	for len(q) > 0 {
		v := q[len(q)-1]
		q = q[:len(q)-1]
		for _, u := range r.pred[r.start[v]:r.start[v+1]] {
			if !reach[u] {
				reach[u] = true
				q = append(q, u)
			}
		}
	}
	r.queue = q
}
