package rwmodel

import (
	"strings"
	"testing"

	"github.com/netlock-go/netlock/rdma/rma"
)

const (
	W = Writer
	R = Reader
	E = Either
	I = Idle
)

type exhaustive struct {
	name string
	cfg  Config
	// large configurations (a million states and more) are skipped with -short and -race.
	large bool
	// wantPhase is the writer-phase maximum that must be reached (T_W), 0 to skip.
	wantPhase int
	// wantReaders is the number of readers that must be seen inside at once, 0 to skip.
	wantReaders int
}

func rw(nodes, ppn int, el, tl []int, tr, tdc int) rma.Config {
	return rma.Config{Nodes: nodes, ProcsPerNode: ppn, Elements: el, TL: tl, Readers: true, TR: tr, TDC: tdc}
}

// Every interleaving of small RMA-MCS and RMA-RW configurations: mutual exclusion (writers,
// and readers against writers), the writer-phase bound T_W = prod T_L,i (reached exactly),
// deadlock freedom, the idle invariants and, where marked, that no state traps a process. The
// paper model-checked RMA-RW with SPIN (section 4.4); this explores the implementation's own
// step machines.
func TestExhaustive(t *testing.T) {
	for _, c := range []exhaustive{
		{name: "D-MCS structure (N=1), 3 writers on 3 nodes", cfg: Config{Lock: rma.Config{Nodes: 3, ProcsPerNode: 1}, Roles: []Role{W, W, W}, Liveness: true}},
		{name: "RMA-MCS N=2, 2 nodes x 2, T_L,2=2", cfg: Config{Lock: rma.Config{Nodes: 2, ProcsPerNode: 2, Elements: []int{2}, TL: []int{1, 2}}, Roles: []Role{W, W, W, I}, Liveness: true}},
		{name: "RMA-MCS N=3, racks of 2 nodes", large: true, cfg: Config{Lock: rma.Config{Nodes: 4, ProcsPerNode: 1, Elements: []int{2, 1}, TL: []int{1, 2, 1}}, Roles: []Role{W, W, W, I}, Liveness: true}},
		{name: "RMA-RW N=1, 2 writers + 1 reader, T_L,1=2", wantPhase: 2, cfg: Config{Lock: rw(3, 1, nil, []int{2}, 1, 2), Roles: []Role{W, W, R}, Liveness: true}},
		{name: "RMA-RW N=1, 1 writer + 2 readers, T_R=2", wantReaders: 2, cfg: Config{Lock: rw(3, 1, nil, []int{1}, 2, 2), Roles: []Role{W, R, R}, Liveness: true}},
		{name: "RMA-RW N=1, 2 processes of either kind", wantPhase: 1, wantReaders: 2, cfg: Config{Lock: rw(2, 1, nil, []int{1}, 1, 0), Roles: []Role{E, E}, Liveness: true}},
		{name: "RMA-RW N=1, finite rounds", wantReaders: 2, cfg: Config{Lock: rw(3, 1, nil, []int{1}, 1, 2), Roles: []Role{W, R, R}, Rounds: 2, Liveness: true}},
		{name: "RMA-RW N=1, Listing 8's release order (safe with the fixed reader wait)", wantReaders: 2, cfg: Config{Lock: withFaults(rw(3, 1, nil, []int{1}, 1, 2), rma.Faults{PaperReleaseOrder: true}), Roles: []Role{W, R, R}, Rounds: 2, Liveness: true}},
		{name: "RMA-RW N=1, 1 writer + 3 readers, one counter, T_R=3", wantReaders: 3, cfg: Config{Lock: rw(4, 1, nil, []int{2}, 3, 4), Roles: []Role{W, R, R, R}, Liveness: true}},
		{name: "RMA-RW N=1, 1 writer + 3 readers, one counter, T_R=2", wantReaders: 2, cfg: Config{Lock: rw(4, 1, nil, []int{2}, 2, 4), Roles: []Role{W, R, R, R}, Liveness: true}},
		{name: "RMA-RW N=1, 2 writers + 2 readers, finite rounds", large: true, wantPhase: 1, wantReaders: 2, cfg: Config{Lock: rw(4, 1, nil, []int{1}, 2, 4), Roles: []Role{W, W, R, R}, Rounds: 2, Liveness: true}},
		{name: "RMA-RW N=1, 4 readers, finite rounds, T_R=2", large: true, wantReaders: 2, cfg: Config{Lock: rw(4, 1, nil, []int{1}, 2, 4), Roles: []Role{R, R, R, R}, Rounds: 2, Liveness: true}},
		{name: "RMA-RW N=1, 1 writer + 4 readers, T_R=3", large: true, wantReaders: 3, cfg: Config{Lock: rw(5, 1, nil, []int{1}, 3, 5), Roles: []Role{W, R, R, R, R}}},
		{name: "RMA-RW N=2, T_L=(1,2)", large: true, wantPhase: 2, cfg: Config{Lock: rw(2, 2, []int{2}, []int{1, 2}, 1, 0), Roles: []Role{W, W, W, R}, Liveness: true}},
		{name: "RMA-RW N=2, T_L=(2,1)", large: true, wantPhase: 2, cfg: Config{Lock: rw(2, 2, []int{2}, []int{2, 1}, 1, 0), Roles: []Role{W, W, W, R}}},
		{name: "RMA-RW N=2, 2 writers + 2 readers, T_R=2", large: true, wantReaders: 2, cfg: Config{Lock: rw(2, 2, []int{2}, []int{1, 1}, 2, 0), Roles: []Role{W, R, W, R}}},
		{name: "RMA-RW N=1, 3 processes of either kind", large: true, wantPhase: 2, wantReaders: 2, cfg: Config{Lock: rw(3, 1, nil, []int{2}, 1, 2), Roles: []Role{E, E, E}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.large && (testing.Short() || raceEnabled) {
				t.Skip("a million states or more: run without -short and -race (go test ./rdma/rma/rwmodel)")
			}
			res, err := Explore(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d states, %d transitions, %d writer and %d reader entries, max phase %d, max readers %d",
				res.States, res.Transitions, res.WriterEntries, res.ReaderEntries, res.MaxPhase, res.MaxReaders)
			if res.Violation != "" {
				t.Fatalf("%s\n%s", res.Violation, strings.Join(res.Trace, "\n"))
			}
			if res.Truncated {
				t.Fatal("exploration truncated")
			}
			if c.wantPhase != 0 && res.MaxPhase != c.wantPhase {
				t.Fatalf("max writer phase %d, want exactly T_W = %d", res.MaxPhase, c.wantPhase)
			}
			if c.wantReaders != 0 && res.MaxReaders != c.wantReaders {
				t.Fatalf("at most %d readers inside, want %d", res.MaxReaders, c.wantReaders)
			}
		})
	}
}

// The checker catches the negative controls and the errata of the paper's listings (each
// with a counterexample trace), which the fixed protocol passes (TestExhaustive).
func TestExhaustiveFindsFaults(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"writer skips the drain", Config{Lock: withFaults(rw(2, 1, nil, []int{1}, 1, 0), rma.Faults{SkipDrain: true}), Roles: []Role{W, R}},
			"mutual exclusion (reader/writer)"},
		{"reader ignores WRITE mode", Config{Lock: withFaults(rw(2, 1, nil, []int{1}, 1, 0), rma.Faults{ReaderIgnoresWrite: true}), Roles: []Role{W, R}},
			"mutual exclusion (reader/writer)"},
		{"E3: per-process parent queue nodes", Config{Lock: rma.Config{Nodes: 2, ProcsPerNode: 2, Elements: []int{2}, TL: []int{1, 2}, Faults: rma.Faults{PaperQueueNodes: true}}, Roles: []Role{W, W, W, I}},
			"deadlock"},
		{"E4': Listing 6's reset in a reader clears a writer's flag", Config{Lock: withFaults(rw(2, 1, nil, []int{1}, 1, 0), rma.Faults{PaperReaderReset: true}), Roles: []Role{W, R}, Liveness: true},
			"liveness: from this state process p0"},
		{"Listings 8 and 9: reset before leaving the queue, readers wait for ARRIVE < T_R", Config{Lock: withFaults(rw(3, 1, nil, []int{1}, 1, 2), rma.Faults{PaperReleaseOrder: true, PaperReaderBarrier: true}), Roles: []Role{W, R, R}, Rounds: 2},
			"deadlock"},
		{"Listing 9: concurrent unclaimed reader resets", Config{Lock: withFaults(rw(4, 1, nil, []int{2}, 3, 4), rma.Faults{UnclaimedReaderReset: true}), Roles: []Role{W, R, R, R}},
			"mutual exclusion (reader/writer)"},
		{"Listing 9: readers wait for ARRIVE < T_R", Config{Lock: withFaults(rw(3, 1, nil, []int{1}, 1, 3), rma.Faults{PaperReaderBarrier: true}), Roles: []Role{W, R, R}, Rounds: 2},
			"deadlock"},
		{"reset subtracts ARRIVE before DEPART", Config{Lock: withFaults(rw(3, 1, nil, []int{3}, 1, 2), rma.Faults{ResetArriveFirst: true}), Roles: []Role{W, W, R}},
			"mutual exclusion (reader/writer)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Explore(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Violation, c.want) {
				t.Fatalf("violation %q after %d states, want %q", res.Violation, res.States, c.want)
			}
			t.Logf("%s after %d states; counterexample (%d steps):\n%s", res.Violation, res.States, len(res.Trace), strings.Join(res.Trace, "\n"))
		})
	}
}

func withFaults(c rma.Config, f rma.Faults) rma.Config {
	c.Faults = f
	return c
}

func TestConfigErrors(t *testing.T) {
	for i, c := range []Config{
		{Lock: rma.Config{Nodes: 7, ProcsPerNode: 1}, Roles: make([]Role, 7)},
		{Lock: rma.Config{Nodes: 2, ProcsPerNode: 1}, Roles: []Role{W}},
		{Lock: rma.Config{Nodes: 2, ProcsPerNode: 1}, Roles: []Role{W, R}},
		{Lock: rw(3, 1, nil, []int{1}, 1, 1), Roles: []Role{W, W, W}},
		{Lock: rma.Config{Nodes: 0, ProcsPerNode: 1}},
	} {
		if _, err := Explore(c); err == nil {
			t.Errorf("#%d accepted", i)
		}
	}
}

// The trap check itself: thread 1 enters only on 0->1; state 3 is reachable but cannot lead
// back to 0, so thread 1 is trapped there.
func TestTrappedDetectsTrap(t *testing.T) {
	c := &checker{cfg: Config{Roles: []Role{W, W}}, procs: make([]*rma.Proc, 2)}
	edges := []edge{{0, 1, 1, true}, {1, 0, 0, false}, {1, 2, 0, true}, {2, 3, 0, false}, {3, 2, 0, true}}
	if th, st := c.trapped(4, edges); th != 1 || (st != 2 && st != 3) {
		t.Fatalf("trapped = p%d at state %d, want p1 at state 2 or 3", th, st)
	}
	edges = append(edges, edge{3, 0, 0, false})
	if th, st := c.trapped(4, edges); th != -1 {
		t.Fatalf("no trap expected, got p%d at %d", th, st)
	}
}
