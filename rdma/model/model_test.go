package model

import (
	"fmt"
	"strings"
	"testing"
)

// Scenario 11: exhaustive interleavings of 2 local + 2 remote threads, budgets 1-2, both unlock
// variants: mutual exclusion, budget range, bypass bound, deadlock freedom and no trapped thread
// hold, and the bypass bound is reached (the check is not vacuous).
func TestExhaustiveALock(t *testing.T) {
	for _, nextFirst := range []bool{false, true} {
		for _, lb := range []int{1, 2} {
			for _, rb := range []int{1, 2} {
				cfg := Config{Local: 2, Remote: 2, LocalBudget: lb, RemoteBudget: rb, NextFirst: nextFirst, Liveness: true}
				t.Run(fmt.Sprintf("nextfirst=%v/L%d/R%d", nextFirst, lb, rb), func(t *testing.T) {
					res, err := Explore(cfg)
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("%d states, %d transitions, max bypass local %d remote %d", res.States, res.Transitions, res.MaxBypass[1], res.MaxBypass[2])
					if res.Violation != "" {
						t.Fatalf("%s\n%s", res.Violation, strings.Join(res.Trace, "\n"))
					}
					if res.Truncated {
						t.Fatal("exploration truncated")
					}
					if res.MaxBypass[1] != lb || res.MaxBypass[2] != rb {
						t.Fatalf("bypass maxima %d/%d, want exactly the budgets %d/%d", res.MaxBypass[1], res.MaxBypass[2], lb, rb)
					}
				})
			}
		}
	}
}

// The checker finds the section-6 (c) bug: a remote leader that does not wait for its victim
// write lets both cohorts in.
func TestExhaustiveFindsUnawaitedVictim(t *testing.T) {
	res, err := Explore(Config{Local: 1, Remote: 1, LocalBudget: 1, RemoteBudget: 1, UnawaitedVictim: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Violation, "mutual exclusion") {
		t.Fatalf("violation %q, want mutual exclusion", res.Violation)
	}
	t.Logf("counterexample (%d steps):\n%s", len(res.Trace), strings.Join(res.Trace, "\n"))
}

func TestConfigErrors(t *testing.T) {
	for i, cfg := range []Config{{Local: 3, Remote: 2, LocalBudget: 1, RemoteBudget: 1}, {Local: 1, Remote: 1}} {
		if _, err := Explore(cfg); err == nil {
			t.Errorf("#%d accepted", i)
		}
	}
}

// The trap check itself: in this 4-state graph thread 1 enters only on 0->1; state 3 is
// reachable but can never lead back to 0, so thread 1 is trapped there (thread 0 is not).
func TestTrappedDetectsTrap(t *testing.T) {
	c := &checker{n: 2}
	edges := []edge{
		{0, 1, 1, true}, {1, 0, 0, false}, {1, 2, 0, true}, {2, 3, 0, false}, {3, 2, 0, true},
	}
	if th, st := c.trapped(4, edges); th != 1 || (st != 2 && st != 3) {
		t.Fatalf("trapped = t%d at state %d, want t1 at state 2 or 3", th, st)
	}
	edges = append(edges, edge{3, 0, 0, false})
	if th, st := c.trapped(4, edges); th != -1 {
		t.Fatalf("no trap expected, got t%d at %d", th, st)
	}
}
