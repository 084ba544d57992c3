package rwmodel

// Data-driven scenarios of the step machines (testdata/*.txt, github.com/cockroachdb/datadriven):
// each command moves one process over the abstract memory of the model checker and prints the
// operations it performed. Regenerate the expected output with
// `go test ./rdma/rma/rwmodel -run TestScenarios -rewrite` and review the diff.
//
//	new nodes=N ppn=K [elements=(a,b)] [tl=(t1,t2)] [readers] [tr=T] [tdc=D] roles=(W,R,...)
//	lock p=i | rlock p=i | unlock p=i | runlock p=i   start an acquisition or a release
//	run p=i                 apply p's enabled operations in batch order until it finishes
//	                        its phase or every pending operation is blocked
//	step p=i op=j           apply operation j of p's pending batch
//	pending p=i             print p's pending operations
//	mem                     print the non-zero words

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var c *checker
		var s State
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var p int
			if d.HasArg("p") {
				d.ScanArgs(t, "p", &p)
			}
			if d.Cmd != "new" && c == nil {
				d.Fatalf(t, "no lock: start with new")
			}
			var out strings.Builder
			switch d.Cmd {
			case "new":
				var cfg Config
				d.ScanArgs(t, "nodes", &cfg.Lock.Nodes)
				d.ScanArgs(t, "ppn", &cfg.Lock.ProcsPerNode)
				if d.HasArg("elements") {
					cfg.Lock.Elements = ints(t, d, "elements")
				}
				if d.HasArg("tl") {
					cfg.Lock.TL = ints(t, d, "tl")
				}
				cfg.Lock.Readers = d.HasArg("readers")
				if d.HasArg("tr") {
					d.ScanArgs(t, "tr", &cfg.Lock.TR)
				}
				if d.HasArg("tdc") {
					d.ScanArgs(t, "tdc", &cfg.Lock.TDC)
				}
				var roles []string
				for _, a := range d.CmdArgs {
					if a.Key == "roles" {
						roles = a.Vals
					}
				}
				for _, r := range roles {
					cfg.Roles = append(cfg.Roles, map[string]Role{"W": W, "R": R, "E": E, "-": I}[r])
				}
				var err error
				if c, err = newChecker(cfg); err != nil {
					return "error: " + err.Error()
				}
				s = State{}
				return fmt.Sprintf("%d levels, %d counters, %d words", c.sh.Levels(), c.sh.Counters(), len(c.words))
			case "lock", "rlock", "unlock", "runlock":
				ph := s.p[p].ph
				k := 0
				if d.Cmd == "rlock" && len(c.modes(p)) == 2 {
					k = 1
				}
				if (ph == phNCS) != (d.Cmd == "lock" || d.Cmd == "rlock") || (ph != phNCS && ph != phCS) {
					return fmt.Sprintf("error: p%d cannot %s now", p, d.Cmd)
				}
				s = c.apply(t, &s, p, k, &out)
				c.printPending(&s, p, &out)
			case "run":
				seen := map[string]bool{}
				for {
					if s.p[p].ph == phNCS || s.p[p].ph == phCS {
						break
					}
					key := string(c.encode(nil, &s))
					if seen[key] {
						fmt.Fprintf(&out, "p%d spins (its polls see nothing new)\n", p)
						c.printPending(&s, p, &out)
						break
					}
					seen[key] = true
					moved := false
					for k := 0; k < int(s.p[p].n); k++ {
						if next, ok, _, _ := c.step(&s, p, k); ok && !s.p[p].ops[k].applied {
							_ = next
							s = c.apply(t, &s, p, k, &out)
							moved = true
							break
						}
					}
					if !moved {
						fmt.Fprintf(&out, "p%d blocked\n", p)
						c.printPending(&s, p, &out)
						break
					}
				}
			case "step":
				var k int
				d.ScanArgs(t, "op", &k)
				if s.p[p].ph != phAcq && s.p[p].ph != phRel || k >= int(s.p[p].n) {
					return fmt.Sprintf("error: p%d has no pending operation %d", p, k)
				}
				if _, ok, _, _ := c.step(&s, p, k); !ok {
					return fmt.Sprintf("p%d: operation %d is blocked: %s", p, k, c.opString(&s, &s.p[p].ops[k]))
				}
				s = c.apply(t, &s, p, k, &out)
			case "pending":
				c.printPending(&s, p, &out)
			case "mem":
				for i, w := range c.words {
					if s.mem[i] != 0 {
						fmt.Fprintf(&out, "%s = %s\n", c.wordName(w), c.valName(w, s.mem[i]))
					}
				}
			default:
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			return out.String()
		})
	})
}

// apply performs move k of p, printing it and what it led to.
func (c *checker) apply(t *testing.T, s *State, p, k int, out *strings.Builder) State {
	t.Helper()
	label := c.label(s, p, k)
	next, ok, bad, enter := c.step(s, p, k)
	if !ok {
		t.Fatalf("move %d of p%d is disabled", k, p)
	}
	fmt.Fprintln(out, label)
	if bad != "" {
		fmt.Fprintln(out, "VIOLATION:", bad)
	}
	switch {
	case enter != 0:
		fmt.Fprintf(out, "p%d holds the lock (%s)\n", p, modeName(enter))
	case s.p[p].ph == phRel && next.p[p].ph == phNCS:
		fmt.Fprintf(out, "p%d released\n", p)
	}
	return next
}

func (c *checker) printPending(s *State, p int, out *strings.Builder) {
	q := &s.p[p]
	for k := 0; k < int(q.n); k++ {
		if !q.ops[k].applied {
			fmt.Fprintf(out, "  pending %d: %s\n", k, c.opString(s, &q.ops[k]))
		}
	}
}

func ints(t *testing.T, d *datadriven.TestData, key string) []int {
	var v []int
	for _, a := range d.CmdArgs {
		if a.Key != key {
			continue
		}
		for i := range a.Vals {
			var x int
			a.Scan(t, i, &x)
			v = append(v, x)
		}
	}
	return v
}
