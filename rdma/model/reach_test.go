package model

import (
	"flag"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var reachSeed = flag.Uint64("reach.seed", 0, "seed of TestCanReachRandom (0: time-based)")

type arc struct{ from, to int32 }

func arcEnds(a arc) (int32, int32) { return a.from, a.to }

func TestCanReach(t *testing.T) {
	// 0 -> 1 -> 2 -> 0 is a cycle; 3 -> 2; 4 -> 4; 5 has no edges; 2 -> 6 twice.
	edges := []arc{{0, 1}, {1, 2}, {2, 0}, {3, 2}, {4, 4}, {2, 6}, {2, 6}}
	for _, tc := range []struct {
		name  string
		goals []int
		want  []int
	}{
		{"none", nil, nil},
		{"cycle", []int{1}, []int{0, 1, 2, 3}},
		{"sink", []int{6}, []int{0, 1, 2, 3, 6}},
		{"self-loop", []int{4}, []int{4}},
		{"isolated", []int{5}, []int{5}},
		{"source only", []int{3}, []int{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReverse(7, edges, arcEnds)
			reach := make([]bool, 7)
			for _, g := range tc.goals {
				reach[g] = true
			}
			r.CanReach(reach)
			var got []int
			for v, ok := range reach {
				if ok {
					got = append(got, v)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("can reach %v: %v, want %v", tc.goals, got, tc.want)
			}
		})
	}
}

// TestCanReachRandom checks CanReach on random graphs, the Reverse reused across goal sets as
// the liveness checks do, against a forward search from every state.
func TestCanReachRandom(t *testing.T) {
	seed := *reachSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	for round := 0; round < 200; round++ {
		n := 1 + rng.IntN(30)
		edges := make([]arc, rng.IntN(3*n))
		succ := make([][]int32, n)
		for i := range edges {
			edges[i] = arc{int32(rng.IntN(n)), int32(rng.IntN(n))}
			succ[edges[i].from] = append(succ[edges[i].from], edges[i].to)
		}
		r := NewReverse(n, edges, arcEnds)
		for k := 0; k < 3; k++ {
			goal := make([]bool, n)
			for v := range goal {
				goal[v] = rng.IntN(5) == 0
			}
			reach := slices.Clone(goal)
			r.CanReach(reach)
			for v := range n {
				if want := forwardReaches(succ, goal, v); reach[v] != want {
					t.Fatalf("seed %d (rerun: go test ./rdma/model -run TestCanReachRandom -reach.seed=%d), round %d: "+
						"state %d of %d reaches a goal: %v, want %v (edges %v, goals %v)",
						seed, seed, round, v, n, reach[v], want, edges, goal)
				}
			}
		}
	}
}

// forwardReaches is the oracle: a depth-first search from v along the edges.
func forwardReaches(succ [][]int32, goal []bool, v int) bool {
	seen := make([]bool, len(succ))
	stack := []int32{int32(v)}
	seen[v] = true
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if goal[u] {
			return true
		}
		for _, w := range succ[u] {
			if !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return false
}
