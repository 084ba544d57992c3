package rack

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds the tests against hangs; nothing asserts timing.
const wait = 60 * time.Second

// TestHotLocksIntoTheSwitch: clients hammer four locks through the rack; the controller measures
// them, moves them into the switch, and the switch grants most of what follows.
func TestHotLocksIntoTheSwitch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	r, err := Start(ctx, Config{Controller: ctlcore.Config{AllocPeriod: 200 * time.Millisecond, SweepPeriod: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	clients, err := r.NewClients(4, client.Config{RetryInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		defer c.Close()
	}
	run := func(d time.Duration) uint64 {
		n, err := HotLoad(ctx, clients, d)
		if err != nil {
			t.Error(err)
		}
		return n
	}
	run(time.Second)
	for deadline := time.Now().Add(wait); len(r.Primary().Snapshot().Locks) < 4; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("locks in the switch: %v", r.Primary().Snapshot().Locks)
		}
		run(100 * time.Millisecond)
	}
	var before uint64
	for _, s := range r.Servers() {
		before += s.Stats().Grants
	}
	n := run(time.Second)
	var after uint64
	for _, s := range r.Servers() {
		after += s.Stats().Grants
	}
	t.Logf("%d acquisitions, %d of them granted by the servers; controller %+v", n, after-before, r.Primary().Snapshot().Stats)
	if n == 0 || after-before >= n/2 {
		t.Errorf("%d acquisitions, %d granted by the servers: the switch should grant most", n, after-before)
	}
}
