package ctlcore

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// TestMovesInYieldAtTheirTurn: moves into the switch of one server's locks wait for its staging
// entry one at a time, the hottest first, and the server yields a lock only when its turn has
// come: a server's next lock is yielded only after the insert of the one before was sent (before,
// every lock was yielded at once and then waited for its turn, serving nothing). Some locks'
// queues take a few polls to drain.
func TestMovesInYieldAtTheirTurn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rates []float64 // of locks 100, 101, ... (all on server 1 or 2 by parity)
		busy  map[uint32]int
	}{
		{"one", []float64{5}, nil},
		{"ascending rates", []float64{1, 2, 3, 4, 5, 6}, nil},
		{"mixed, ties by id", []float64{3, 9, 3, 1, 9, 0, 7, 2}, nil},
		{"slow drains", []float64{4, 8, 2, 6, 5}, map[uint32]int{101: 3, 104: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFakeRack(t, testConfig(), 1)
			r.run(ms(300), nil)
			c := r.core
			for id, n := range tc.busy {
				r.busy[id] = n
			}
			var ins []*lockRec
			want := map[uint32]*[dataplane.Levels]dataplane.Region{}
			for k, rate := range tc.rates {
				lk := c.lock(uint32(100 + k))
				lk.server, lk.rate = uint16(1+k%2), rate
				ins = append(ins, lk)
				want[lk.id] = &[dataplane.Levels]dataplane.Region{{Left: uint32(10 + 2*k), Size: 1}, {Left: uint32(11 + 2*k), Size: 1}}
			}
			yielded := map[uint16]uint32{} // server -> its lock yielded and not in yet
			var order []uint32
			var bad []string
			r.onEffect = func(e Effect) {
				switch e := e.(type) {
				case ServerAdmin:
					if e.Msg.Status != wire.AdminYield {
						return
					}
					if y, ok := yielded[e.Server]; ok && y != e.Msg.Lock {
						bad = append(bad, fmt.Sprintf("%v: lock %d yielded while %d is yielded and not in", r.now.Sub(t0), e.Msg.Lock, y))
					}
					if _, ok := yielded[e.Server]; !ok {
						order = append(order, e.Msg.Lock)
					}
					yielded[e.Server] = e.Msg.Lock
				case Write:
					for _, u := range e.Updates {
						if u.Op == Insert && u.Entity.Lock != nil && !wire.IsReservedLock(u.Entity.Lock.Lock) {
							if y, ok := yielded[u.Entity.Lock.Server]; ok && y == u.Entity.Lock.Lock {
								delete(yielded, u.Entity.Lock.Server)
							}
						}
					}
				}
			}
			c.startMovesIn(slices.Clone(ins), want)
			r.step(Tick{})
			r.run(ms(2000), nil)
			if len(bad) > 0 {
				t.Fatalf("%d overlapping yields, first: %s", len(bad), bad[0])
			}
			if st := c.Stats(); st.MovesIn != uint64(len(tc.rates)) || st.MovesAborted != 0 {
				t.Fatalf("moves in %d, aborted %d, want %d in", st.MovesIn, st.MovesAborted, len(tc.rates))
			}
			// Per server, the yields came hottest first (ties: the lower id).
			for _, n := range []uint16{1, 2} {
				var got, exp []uint32
				for _, id := range order {
					if c.locks[id].server == n {
						got = append(got, id)
					}
				}
				for _, lk := range ins {
					if lk.server == n {
						exp = append(exp, lk.id)
					}
				}
				slices.SortStableFunc(exp, func(a, b uint32) int {
					ra, rb := c.locks[a].rate, c.locks[b].rate
					switch {
					case ra > rb:
						return -1
					case ra < rb:
						return 1
					}
					return int(a) - int(b)
				})
				if !slices.Equal(got, exp) {
					t.Errorf("server %d: yields in order %v, want %v", n, got, exp)
				}
			}
			for _, lk := range ins {
				if lk.state != stateSwitch || !lk.inTable || lk.regions != *want[lk.id] {
					t.Errorf("lock %d: %s, in table %v, regions %v", lk.id, lk.state, lk.inTable, lk.regions)
				}
			}
		})
	}
}

// TestMoveInCancelledWhileQueued: a server fails over while moves of its locks wait for the
// staging entry: the queued moves end without a yield, the lock stays with its server, and the
// staging entry is free again.
func TestMoveInCancelledWhileQueued(t *testing.T) {
	r := newFakeRack(t, testConfig(), 2)
	r.run(ms(300), nil)
	c := r.core
	var ins []*lockRec
	want := map[uint32]*[dataplane.Levels]dataplane.Region{}
	for k := range 4 {
		lk := c.lock(uint32(200 + k))
		lk.server, lk.rate = 1, float64(k)
		ins = append(ins, lk)
		want[lk.id] = &[dataplane.Levels]dataplane.Region{{Left: uint32(10 + 2*k), Size: 1}, {Left: uint32(11 + 2*k), Size: 1}}
	}
	yields := 0
	r.onEffect = func(e Effect) {
		if a, ok := e.(ServerAdmin); ok && a.Msg.Status == wire.AdminYield {
			yields++
		}
	}
	c.startMovesIn(ins, want)
	// Only the first move has its turn; cancel them all before any answer.
	c.cancelServerTasks(1, "test")
	r.run(ms(1000), nil)
	if yields != 1 {
		t.Errorf("%d yields, want 1 (the move whose turn had come)", yields)
	}
	for _, lk := range ins {
		if lk.state != stateServer || lk.moving || lk.inTable {
			t.Errorf("lock %d: %s moving %v in table %v", lk.id, lk.state, lk.moving, lk.inTable)
		}
	}
	if st := c.staging[1]; st.busy || len(st.queue) != 0 {
		t.Errorf("staging entry of server 1 busy %v, %d queued", st.busy, len(st.queue))
	}
}

// TestMoveLogs: every move logs one INFO line when it ends, with its outcome, cancelled ones
// included, and nothing at INFO when it starts; moves still under way when the Core stops are
// counted in one INFO line.
func TestMoveLogs(t *testing.T) {
	var buf bytes.Buffer
	cfg := testConfig()
	cfg.Log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := newFakeRack(t, cfg, 1)
	r.run(ms(300), nil)
	c := r.core
	moveIn := func(first uint32, n int, server uint16) {
		want := map[uint32]*[dataplane.Levels]dataplane.Region{}
		var ins []*lockRec
		for k := range n {
			lk := c.lock(first + uint32(k))
			lk.server, lk.rate = server, 1
			ins = append(ins, lk)
			want[lk.id] = &[dataplane.Levels]dataplane.Region{{Left: uint32(10 + 2*k), Size: 1}, {Left: uint32(11 + 2*k), Size: 1}}
		}
		c.startMovesIn(ins, want)
	}
	// Three moves that complete.
	moveIn(100, 3, 1)
	r.step(Tick{})
	r.run(ms(2000), nil)
	// Three cancelled before any answer: the server fails over.
	moveIn(200, 3, 2)
	c.cancelServerTasks(2, "its server fails over")
	r.run(ms(3000), nil)
	// Two under way when the controller stops.
	moveIn(300, 2, 1)
	c.Stop(r.now)

	out := buf.String()
	count := func(sub string) int { return strings.Count(out, sub) }
	if n := count(`msg="move into the switch" lock=10`); n != 3 || count("outcome=moved") != 3 {
		t.Errorf("%d end lines for the 3 moves that completed (%d moved):\n%s", n, count("outcome=moved"), out)
	}
	if n := count(`msg="move into the switch" lock=20`); n != 3 ||
		count(`outcome=cancelled`) != 3 || count(`why="its server fails over"`) != 3 {
		t.Errorf("%d end lines for the 3 cancelled moves:\n%s", n, out)
	}
	if count("lock=30") != 0 || count(`msg="stopping: moves cancelled" into_switch=2 out_of_switch=0`) != 1 {
		t.Errorf("the moves under way at the stop are not counted in one line:\n%s", out)
	}
	if count("moving") != 0 || count("move starts") != 0 {
		t.Errorf("the start of a move logs at INFO:\n%s", out)
	}
}
