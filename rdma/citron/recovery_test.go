package citron

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Scenario 12: a client crashes at a point of the protocol (after its ticket was served, after
// occupying/locking and notifying, or while holding the lock) and leaves its state behind; the
// survivors, whose requests overlap it, must all finish (lazy lease recovery), never overlap each
// other, and the recovery must actually have happened.
func TestLeaseRecovery(t *testing.T) {
	tests := []struct {
		name       string
		point      string
		start, end uint64
		mode       Mode
		hot, max   uint64 // survivors: starts in [0, hot), lengths up to max
	}{
		{"leaf-holder", "holding", 10, 12, Exclusive, 64, 8},
		{"leaf-notified", "notified", 10, 12, Exclusive, 64, 8},
		{"internal-holder", "holding", 0, 256, Exclusive, 512, 64},
		{"internal-notified", "notified", 0, 256, Exclusive, 512, 64},
		{"internal-ticket", "ticket", 0, 1024, Exclusive, 1024, 1024},
		{"high-node-holder", "holding", 0, 1024, Exclusive, 1024, 16},
		{"shared-internal-holder", "holding", 0, 256, Shared, 512, 64},
		{"shared-leaf-holder", "holding", 0, 8, Shared, 64, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Space: 4096, M: 2, Lease: 200 * time.Microsecond}
			s, err := sim.New(sim.Config{Nodes: 3, RegionSize: 8 << 20, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := NewServer(s.Endpoint(0), cfg)
			if err != nil {
				t.Fatal(err)
			}
			o := newOracle()
			cnt := counter{}
			crashedAt := ""
			// The victim: its one request stops at tc.point.
			s.Go(1, func(ep verbs.Endpoint) error {
				opt := ClientOptions{crashAt: func(p string) bool {
					if p == tc.point {
						crashedAt = p
						return true
					}
					return false
				}}
				w := workload{clients: 1, ops: 1, space: 4096}
				err := runClientFixed(ep, srv, w, o, opt, tc.start, tc.end, tc.mode)
				if !errors.Is(err, errCrashed) {
					return fmt.Errorf("victim did not crash at %q: %v", tc.point, err)
				}
				return nil
			})
			finished := 0
			const survivors = 6
			for i := 0; i < survivors; i++ {
				id := i + 1
				s.Go(1+i%2, func(ep verbs.Endpoint) error {
					verbs.Spend(ep, 20000) // after the victim
					w := workload{clients: survivors, ops: 15, maxLen: tc.max, hot: tc.hot, space: 4096, k: 2, seed: 7}
					w.csPause = func(ep verbs.Endpoint) { verbs.Spend(ep, 3000) }
					err := runClient(context.Background(), ep, srv, w, id, o, nil, ClientOptions{Probe: cnt.probe})
					if err == nil {
						finished++
					}
					return err
				})
			}
			if err := s.Run(int64(time.Second)); err != nil {
				t.Fatal(err)
			}
			t.Logf("crashed at %q; survivors finished %d/%d by %v:%s", crashedAt, finished, survivors, time.Duration(s.Now()), cnt)
			if crashedAt == "" {
				t.Fatal("the victim never reached its crash point")
			}
			if o.violations != 0 {
				t.Fatalf("violations: %s", o.first)
			}
			if finished != survivors {
				t.Fatalf("%d of %d survivors finished", finished, survivors)
			}
			if cnt[EvRecover] == 0 {
				t.Fatal("no recovery happened")
			}
		})
	}
}

// runClientFixed runs one request [start, end) in mode like runClient.
func runClientFixed(ep verbs.Endpoint, dir Directory, w workload, o *oracle, opt ClientOptions, start, end uint64, mode Mode) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashed); !ok {
				panic(r)
			}
			err = errCrashed
		}
	}()
	c, err := NewClient(ep, dir, opt)
	if err != nil {
		return err
	}
	h, err := c.LockRange(context.Background(), start, end, mode)
	if err != nil {
		return err
	}
	if opt.crashAt != nil && opt.crashAt("holding") {
		o.grantAt(0, start, end, mode, ep.Now(), ep.Now()+int64(c.cfg.Lease))
		return errCrashed
	}
	o.grant(0, start, end, mode)
	return h.Unlock()
}
