package softfig

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAlternate: two racks, one allocating switch memory and one without, take turns under the
// same load; both commit transactions, the servers of the one without switch grant every lock,
// the other's controller moved locks into its switch.
func TestAlternate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two software racks for seconds")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := Config{Clients: 2, Workers: 2, Phase: "contended/8", Warmup: 1500 * time.Millisecond,
		Window: 300 * time.Millisecond, Rounds: 2}
	cc := ctlcore.Config{Strategy: alloc.StrategyKnapsack, AllocPeriod: 200 * time.Millisecond,
		SweepPeriod: 50 * time.Millisecond}
	res, err := Alternate(ctx, cfg, []Variant{{Name: "knapsack", Controller: cc}, {Name: "servers only", Controller: cc,
		NoSwitch: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("%s: %d txns, %.0f TPS, server share %.2f, %d switch locks, %d errors", r.Variant, r.Txns, r.TPS,
			r.ServerShare(), r.SwitchLocks, r.Errors)
		if r.Txns == 0 {
			t.Errorf("%s: no transaction committed", r.Variant)
		}
	}
	if res[0].SwitchLocks == 0 || res[0].ServerShare() > 0.5 {
		t.Errorf("knapsack: %d locks in the switch, servers granted %.2f of the locks", res[0].SwitchLocks,
			res[0].ServerShare())
	}
	if res[1].SwitchLocks != 0 || res[1].ServerShare() < 0.99 {
		t.Errorf("servers only: %d locks in the switch, servers granted %.2f of the locks", res[1].SwitchLocks,
			res[1].ServerShare())
	}
}

// TestTimeline: the software rack under load, sampled and its recorded history checked: it
// commits in every part of the run and history.Check finds nothing. (Failures are not injected
// here: in this build a switch restart under load does not recover on the software rack,
// docs/performance.md.)
func TestTimeline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a software rack for seconds")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := Config{Clients: 2, Workers: 3, Phase: "contended/4", Warmup: time.Second, Lease: 300 * time.Millisecond,
		Think: 2 * time.Millisecond}
	cc := ctlcore.Config{AllocPeriod: 200 * time.Millisecond, SweepPeriod: 50 * time.Millisecond}
	tl := Timeline{Label: "no failure", Bin: 200 * time.Millisecond, End: 2 * time.Second, Controller: cc}
	if err := RunTimeline(ctx, cfg, &tl); err != nil {
		t.Fatal(err)
	}
	t.Logf("events %+v; %d checked, %d violations %s", tl.Events, tl.Checked, tl.Violations, tl.FirstViolation)
	if tl.Violations > 0 || tl.Checked == 0 {
		t.Errorf("%d events checked, %d violations (%s)", tl.Checked, tl.Violations, tl.FirstViolation)
	}
	half := len(tl.Samples) / 2
	var first, second uint64
	for i, s := range tl.Samples {
		if i < half {
			first += s.Txns
		} else {
			second += s.Txns
		}
	}
	if first == 0 || second == 0 {
		t.Errorf("commits per half: %d, %d (%+v)", first, second, tl.Samples)
	}
}
