package sim_test

import (
	"testing"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// A two-sided call costs the message path both ways plus the server's receive and handling
// time; with one server thread, concurrent calls queue behind each other.
func TestRPCCost(t *testing.T) {
	c := sim.DefaultCost()
	c.WireJitter = -1
	c.PollCQ = 20
	const handle = 1000
	oneCall := c.PostOp + c.NICOp + c.OneWay + c.NICOp + c.PollCQ + c.LocalOp + handle +
		c.PostOp + c.NICOp + c.OneWay + c.NICOp + c.PollCQ
	tests := []struct {
		name          string
		callers       int
		serverThreads int
		want          []int64 // sorted latencies
	}{
		{"one-call", 1, 1, []int64{oneCall}},
		{"queued", 2, 1, []int64{oneCall, oneCall + c.PollCQ + c.LocalOp + handle + c.PostOp}},
		{"two-threads", 2, 2, []int64{oneCall, oneCall + c.NICOp}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, sim.Config{Nodes: 3, Cost: c})
			q := s.NewRPC(0)
			q.Serve(tc.serverThreads, func(ep verbs.Endpoint, r *sim.Request) {
				verbs.Spend(ep, handle)
				r.Reply(ep, []uint64{r.Body[0] + 1})
			})
			var lat []int64
			for i := 0; i < tc.callers; i++ {
				s.Go(1+i%2, func(ep verbs.Endpoint) error {
					t0 := ep.Now()
					rep, err := q.Call(ep, []uint64{41})
					if err != nil || rep[0] != 42 {
						t.Errorf("reply %v %v", rep, err)
					}
					lat = append(lat, ep.Now()-t0)
					return nil
				})
			}
			if err := s.Run(1 << 30); err != nil {
				t.Fatal(err)
			}
			if len(lat) != len(tc.want) {
				t.Fatalf("latencies %v", lat)
			}
			if lat[0] > lat[len(lat)-1] {
				lat[0], lat[len(lat)-1] = lat[len(lat)-1], lat[0]
			}
			for i := range lat {
				if lat[i] != tc.want[i] {
					t.Fatalf("latencies %v, want %v", lat, tc.want)
				}
			}
		})
	}
}
