package dataplane

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/tofino"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated stage tables of docs/dataplane.md")

const docsDataplane = "../docs/dataplane.md"

// TestTofinoStages runs the stage analysis (bmv2/tofino) on p4/tna/netlock.p4's ingress for
// Tofino 1 and 2. It checks that the analysis saw every register action of the program (each
// in its register's node), that the orders the program's structure promises hold (the grant
// counter's high half after its low half, the slot's state after its txn, the lock state
// after lk_q), and that docs/dataplane.md shows the layouts as computed (-update-docs rewrites
// them).
func TestTofinoStages(t *testing.T) {
	checked, err := DefaultSizing.LoadProgram(TNA)
	if err != nil {
		t.Fatal(err)
	}
	pipes, err := checked.TNAPipes()
	if err != nil {
		t.Fatal(err)
	}
	actions := registerActions(t)
	doc, err := os.ReadFile(docsDataplane)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for _, res := range []tofino.Resources{tofino.Tofino1, tofino.Tofino2} {
		l, err := tofino.Analyze(pipes[0].Ingress.Control, res)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for _, o := range l.Ops {
			if o.Stage < o.Earliest || o.Earliest < o.Floor {
				t.Errorf("%s: stage %d, earliest %d, floor %d", o.Name, o.Stage, o.Earliest, o.Floor)
			}
			for _, a := range o.Actions {
				seen[a] = o.Name
			}
		}
		for ra, r := range actions {
			if seen[ra] != r {
				t.Errorf("register action %s of %s: in the analysis as %q", ra, r, seen[ra])
			}
		}
		after := func(a, b string) {
			t.Helper()
			x, y := l.Op(a), l.Op(b)
			if x == nil || y == nil {
				t.Fatalf("%s or %s not in the layout", a, b)
			}
			if !(x.Floor > y.Floor && x.Stage > y.Stage) {
				t.Errorf("%s (floor %d, stage %d) is not after %s (floor %d, stage %d)", a, x.Floor, x.Stage, b, y.Floor, y.Stage)
			}
		}
		after("lk_tok_hi", "lk_tok")
		after("s_hold0", "s_txn_hi0")
		after("s_flags0", "s_hold0")
		after("lk_state", "lk_q")
		after("lk_q", "tenant_meter")
		after("lock_table", "rack")

		// What docs/dataplane.md concludes ("What this says"): the floor exceeds Tofino 1's
		// stages and fits Tofino 2's; the stateful ALUs exceed a Tofino 1 pipe's.
		stateful := 0
		for _, o := range l.Ops {
			if o.Kind != tofino.KindTable {
				stateful++
			}
		}
		if res == tofino.Tofino1 && (l.Floor <= res.Stages || stateful <= res.Stages*res.SALUs) {
			t.Errorf("%s: floor %d, %d stateful ALUs: docs/dataplane.md says it does not fit; update it", res.Name, l.Floor, stateful)
		}
		if res == tofino.Tofino2 && l.Floor > res.Stages {
			t.Errorf("%s: floor %d: docs/dataplane.md says it fits at the floor; update it", res.Name, l.Floor)
		}
		begin, end := "<!-- tofino-stages "+res.Name+" -->\n", "<!-- end tofino-stages "+res.Name+" -->"
		i, j := strings.Index(text, begin), strings.Index(text, end)
		if i < 0 || j < i {
			t.Fatalf("docs/dataplane.md has no %q ... %q section", begin, end)
		}
		want := l.Markdown()
		if got := text[i+len(begin) : j]; got != want {
			if *updateDocs {
				text = text[:i+len(begin)] + want + text[j:]
				continue
			}
			t.Errorf("docs/dataplane.md's %s stage table is not the analysis's (go test ./dataplane -run TestTofinoStages -update-docs):\n%s",
				res.Name, want)
		}
	}
	if *updateDocs {
		if err := os.WriteFile(docsDataplane, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The egress places nothing: it writes answers from headers.
	l, err := tofino.Analyze(pipes[0].Egress.Control, tofino.Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Ops) != 0 {
		var names []string
		for _, o := range l.Ops {
			names = append(names, o.Name)
		}
		slices.Sort(names)
		t.Errorf("the egress uses tables or registers now: %v (docs/dataplane.md says it does not)", names)
	}
}
