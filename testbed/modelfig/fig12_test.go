package modelfig

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/testbed/rackmodel"
)

// TestFig12 runs Figure 12 quick on ten client machines of four workers: every run checked (0
// violations), both classes commit in every run, and the paper's shapes: without priorities the
// two tenants of five machines share alike, with priorities the high one gets more; without
// quotas the tenant of seven machines gets more than the one of three, with quotas they share
// alike and only the quota run refuses anyone for quota. Each pair is the other's negative
// control: the same classes, the policy off.
func TestFig12(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four runs of the rack model")
	}
	p := rackmodel.Params{Clients: 10, Workers: 4, Servers: 2, ServerCores: 2, Sizing: dataplane.Sizing{Locks: 512, PartBits: 8}}
	f := Fig12(Options{Params: p, Quick: true})
	if err := f.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(f.Policies) != 5 {
		t.Fatalf("%d runs, want 5", len(f.Policies))
	}
	for _, pr := range f.Policies {
		if pr.Violations != 0 {
			t.Errorf("%s: %d violations", pr.Label, pr.Violations)
		}
		if pr.Stats[0].AloneTPS == 0 || pr.Stats[0].TogetherTPS == 0 || pr.Stats[1].TogetherTPS == 0 {
			t.Errorf("%s: a class starved: %+v", pr.Label, pr.Stats)
		}
		refused := pr.Stats[0].QuotaRejects + pr.Stats[1].QuotaRejects
		if (pr.Quota > 0) != (refused > 0) {
			t.Errorf("%s: quota %.0f/s, %d refused for quota", pr.Label, pr.Quota, refused)
		}
	}
	for _, tc := range []struct {
		label  string
		lo, hi float64 // the joining class's throughput over the first's
	}{
		{Fig12NoPriority, 0.8, 1.25},
		{Fig12Priority, 1.5, 1e9},
		{Fig12NoQuota, 1.5, 1e9},
		{Fig12Quota, 0.7, 1.5},
	} {
		for _, pr := range f.Policies {
			if pr.Label != tc.label {
				continue
			}
			if r := pr.Stats[1].TogetherTPS / pr.Stats[0].TogetherTPS; r < tc.lo || r > tc.hi {
				t.Errorf("%s: joining / first %.2f, want %.2f..%.2f (%+v)", pr.Label, r, tc.lo, tc.hi, pr.Stats)
			}
		}
	}
	// The control: with level 1 of one slot the priority-1 class alone overflows and takes back one
	// of its requests per queue-empty (level 1's one free slot): it commits less than with both
	// levels sized alike.
	var sized, one PolicyRun
	for _, pr := range f.Policies {
		switch pr.Label {
		case Fig12Priority:
			sized = pr
		case Fig12OneSlot:
			one = pr
		}
	}
	if one.Stats[0].AloneTPS >= sized.Stats[0].AloneTPS || one.Counters.PushBacks == 0 {
		t.Errorf("priority 1 alone: %.0f/s with level 1 of one slot (%d push-backs, %d queue-empties), %.0f/s sized as level 0",
			one.Stats[0].AloneTPS, one.Counters.PushBacks, one.Counters.QueueEmpties, sized.Stats[0].AloneTPS)
	}
	png, err := f.Plot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pngDecode(b); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	f.WriteMarkdown(&md)
	for _, want := range []string{Fig12Priority, Fig12Quota, "refused for quota", "**0 violations**"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
}
