package citron

// Meet in the middle (step 2(d)). A request at node n notifies the ancestors of n at distances
// 1, 1+m, 1+2m, ... ("starting from desc's parent node, Bob notifies desc's every m-th
// ancestor"; the paper does not say whether the second one is at distance m or 1+m - both
// cover, we take 1+m), except that ancestors in the top m-1 levels other than the parent are
// replaced by the ancestor at depth m-1 ("to avoid contention of RDMA atomic verbs, CITRON does
// not notify nodes in the top m-1 levels of the lock tree except for node's parent. Instead,
// CITRON replaces them with nodes in the m-th level"). A request at an internal node checks the
// node itself and its internal descendants within m levels (depths d..d+m-1). Every window of m
// consecutive depths between a checker and a notifier therefore holds one notified node:
// consecutive notified depths are at most m apart, the lowest is the parent, and the highest is
// in the top m levels (TestMITMCoverage checks every pair of small trees).

// notifySet returns the ancestors n notifies, lowest first (the last one is the topmost, which
// is always in the top m levels). The root notifies nothing.
func notifySet(n node, m int) []node {
	var out []node
	replaced := false
	for d := n.d - 1; d >= 0; d -= m {
		if d < m-1 && d != n.d-1 {
			if !replaced {
				out = append(out, n.ancestor(m-1))
				replaced = true
			}
			continue
		}
		out = append(out, n.ancestor(d))
	}
	return out
}

// checkDepths is the range of depths [from, to] a request at internal node n of a tree of
// height h checks.
func checkDepths(n node, h, m int) (from, to int) { return n.d, min(n.d+m-1, h-1) }

// continuation returns the nodes that carry a unit on from node v's depth upward at the given
// first distance and then every m levels (scale-up propagation; see scale.go): v's ancestors at
// distances first, first+m, ... that exist in the tree.
func continuation(v node, first, m int) []node {
	var out []node
	for d := v.d - first; d >= 0; d -= m {
		out = append(out, v.ancestor(d))
	}
	return out
}
