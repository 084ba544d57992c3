package rackmodel

import (
	"testing"
	"time"

	"github.com/netlock-go/netlock/alloc"
)

// TestMassPushBackKeepsFencing: with both priority levels sized alike (SizeEveryLevel), a
// queue-empty of an overflowing lock announces a whole region, and the server pushes back that
// many requests at once; 384 closed-loop streams on one exclusive lock whose regions are 64 refill
// the region from q2 again and again (waits pass the clients' retry timeout, so requests are
// retransmitted too). Exclusion and token order must hold (the online checker). The violation
// Figure 8's one-lock point once showed here was the model's clock stepping back under a busy
// pipeline (docs/rackmodel.md, "The push-back rule"; dpengine.TestSweepAfterClockStepBack).
func TestMassPushBackKeepsFencing(t *testing.T) {
	p := small()
	p.Clients, p.Workers = 6, 64
	p.SizeEveryLevel = true
	p.MaxRegion = 64
	r, err := New(Config{Params: p, Phase: "contended/1", Seed: testSeed(t),
		Alloc: AllocSpec{Strategy: alloc.StrategyKnapsack, Slots: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warmAllocate(t, r); err != nil {
		t.Fatal(err)
	}
	c0 := r.Counters()
	r.Start()
	r.Run(10 * time.Millisecond)
	if err := r.Quiesce(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	c := r.Counters().Sub(c0)
	if c.QueueEmpties == 0 || c.PushBacks < 16*c.QueueEmpties {
		t.Fatalf("%d push-backs for %d queue-empties: want whole regions pushed back at once", c.PushBacks, c.QueueEmpties)
	}
	t.Logf("%d overflows, %d queue-empties, %d push-backs, %d granted", c.Overflows, c.QueueEmpties, c.PushBacks, c.Granted)
	for _, v := range r.Violations() {
		t.Errorf("violation: %v", v)
	}
}
