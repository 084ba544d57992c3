package rangebench

import (
	"fmt"
	"math/bits"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// The server-CPU range lock manager: the paper's type-I baselines (a maple tree, an interval
// tree, a lock-free list behind eRPC), reduced to what their cost depends on in this model. A
// lock request is a two-sided message; a server thread spends RPC ns on it, then updates the
// range table under its write lock (see ServerModel): a request that
// conflicts with a held lock or an earlier waiter waits in FIFO order, and is answered when an
// unlock grants it. An unlock is a message answered at once. Simulated threads run one at a
// time, so the table needs no Go lock; its mutex is modelled by busyUntil.

const (
	opLock   = 1
	opUnlock = 2
)

type srvLock struct {
	id, lo, hi uint64
}

type srvWait struct {
	srvLock
	r *sim.Request
}

type rangeServer struct {
	m         ServerModel
	held      []srvLock
	waiting   []srvWait
	next      uint64
	busyUntil int64
}

// table charges one table operation on the server thread behind ep, queueing behind the
// table's write lock: a tree operation over the held locks, plus, for an unlock, the waiters it
// examines.
func (s *rangeServer) table(ep verbs.Endpoint, unlock bool) {
	now := ep.Now()
	start := max(now, s.busyUntil)
	cost := s.m.TableOp + s.m.PerLevel*int64(bits.Len(uint(len(s.held)+1)))
	if unlock {
		cost += s.m.PerWaiter * int64(len(s.waiting))
	}
	s.busyUntil = start + cost
	verbs.Spend(ep, s.busyUntil-now)
}

func overlaps(a, b srvLock) bool { return a.lo < b.hi && b.lo < a.hi }

func (s *rangeServer) free(x srvLock, before int) bool {
	for _, h := range s.held {
		if overlaps(h, x) {
			return false
		}
	}
	for _, w := range s.waiting[:before] {
		if overlaps(w.srvLock, x) {
			return false
		}
	}
	return true
}

func (s *rangeServer) handle(ep verbs.Endpoint, r *sim.Request) {
	verbs.Spend(ep, s.m.RPC)
	s.table(ep, r.Body[0] == opUnlock)
	switch r.Body[0] {
	case opLock:
		s.next++
		x := srvLock{id: s.next, lo: r.Body[1], hi: r.Body[2]}
		if s.free(x, len(s.waiting)) {
			s.held = append(s.held, x)
			r.Reply(ep, []uint64{x.id})
			return
		}
		s.waiting = append(s.waiting, srvWait{x, r})
	case opUnlock:
		for i, h := range s.held {
			if h.id == r.Body[1] {
				s.held = append(s.held[:i], s.held[i+1:]...)
				break
			}
		}
		r.Reply(ep, []uint64{0})
		for i := 0; i < len(s.waiting); {
			w := s.waiting[i]
			if s.free(w.srvLock, i) {
				s.held = append(s.held, w.srvLock)
				s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
				w.r.Reply(ep, []uint64{w.id})
				continue
			}
			i++
		}
	default:
		panic(fmt.Sprintf("rangebench: server op %d", r.Body[0]))
	}
}

type serverLocker struct{ q *sim.RPC }

func (l *serverLocker) aborts() uint64 { return 0 }

func (l *serverLocker) lock(ep verbs.Endpoint, lo, hi uint64) (func() error, error) {
	rep, err := l.q.Call(ep, []uint64{opLock, lo, hi})
	if err != nil {
		return nil, err
	}
	id := rep[0]
	return func() error {
		_, err := l.q.Call(ep, []uint64{opUnlock, id})
		return err
	}, nil
}
