package sim

import (
	"fmt"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// RPC is a two-sided message queue into one node, served by CPU threads of that node (one
// shared receive queue, like an SRQ polled by several server threads): a client thread Calls
// with a request of words and waits for the reply; server threads receive requests, spend CPU
// on them ([Spend]) and reply, possibly later and from another server thread (a lock manager
// answers a blocked request when the lock is granted).
//
// Costs, in the model of [Cost]: a message (request or reply) costs its sender PostOp, crosses
// the sender's NIC pipeline (NICOp + NICLine per extra 64-byte line), OneWay, and the receiver's
// NIC pipeline; a server thread pays PollCQ+LocalOp to take a request off the queue; the
// caller pays PollCQ for the reply. Requests wait in the queue while every server thread is
// busy, which is where a CPU-bound server's queueing latency comes from.
type RPC struct {
	s     *Sim
	node  verbs.NodeID
	queue []*Request
	idle  []*thread
}

// Request is one received request.
type Request struct {
	// Body is the request's words; From is the caller's node.
	Body []uint64
	From verbs.NodeID
	// Arrived is the virtual time at which the request reached the server's queue.
	Arrived int64

	q       *RPC
	pd      *pending
	th      *thread // caller
	replied bool
}

// NewRPC creates a two-sided queue into node n.
func (s *Sim) NewRPC(n int) *RPC {
	return &RPC{s: s, node: verbs.NodeID(n)}
}

// send carries a message of n words from node src (posted by th at its current time) to node
// dst and calls deliver with the time at which it has crossed dst's NIC.
func (s *Sim) send(th *thread, src, dst verbs.NodeID, words int, deliver func(at int64)) {
	c := s.cfg.Cost
	th.debt += c.PostOp
	sn, dn := &s.nic[src], &s.nic[dst]
	oneWay := c.OneWay
	if sn == dn {
		oneWay = c.LoopbackOneWay
	}
	extra := int64((max(words, 1)*8+63)/64-1) * c.NICLine
	out := max(s.k.Now()+th.debt, sn.free)
	sn.free = out + s.svc(sn) + extra
	s.push(sn.free+oneWay+s.jitter(c.WireJitter), nil, func() {
		in := max(s.k.Now(), dn.free)
		dn.free = in + s.svc(dn) + extra
		deliver(dn.free)
	})
}

// Call sends body to the queue's node and blocks the calling simulated thread until the reply
// arrives; it returns the reply's words.
func (q *RPC) Call(ep verbs.Endpoint, body []uint64) ([]uint64, error) {
	e, ok := ep.(*endpoint)
	if !ok || e.th == nil || e.s != q.s {
		return nil, fmt.Errorf("sim: RPC call from a non-simulated thread")
	}
	s := q.s
	e.stats.Sends.Add(1)
	r := &Request{Body: append([]uint64(nil), body...), From: e.node, q: q, pd: &pending{}, th: e.th}
	s.send(e.th, e.node, q.node, len(body), func(at int64) {
		s.push(at, nil, func() {
			r.Arrived = s.k.Now()
			q.queue = append(q.queue, r)
			if k := len(q.idle); k > 0 {
				th := q.idle[k-1]
				q.idle = q.idle[:k-1]
				th.parked = false
				s.push(s.k.Now(), th, nil)
			}
		})
	})
	e.th.flush(0)
	if !r.pd.ready {
		r.pd.waiter = e.th
		e.th.block()
	}
	e.th.debt += s.cfg.Cost.PollCQ
	return r.pd.c.Words, nil
}

// Serve starts n server threads on the queue's node; each takes requests off the queue in
// arrival order and calls handle, which may spend CPU, access memory through ep, and reply now
// or later (Request.Reply, from any server thread). Server threads run until the simulation
// ends; parked idle they do not count as a deadlock.
func (q *RPC) Serve(n int, handle func(ep verbs.Endpoint, r *Request)) {
	for i := 0; i < n; i++ {
		q.s.spawn(int(q.node), func(ep verbs.Endpoint) error {
			e := ep.(*endpoint)
			c := q.s.cfg.Cost
			for {
				for len(q.queue) == 0 {
					q.idle = append(q.idle, e.th)
					e.th.debt = 0
					e.th.parked = true
					e.th.block()
				}
				r := q.queue[0]
				q.queue = q.queue[1:]
				e.th.flush(c.PollCQ + c.LocalOp)
				handle(ep, r)
			}
		}, true)
	}
}

// Reply sends body back to the caller of r (at most once), costed on the replying server thread.
func (r *Request) Reply(ep verbs.Endpoint, body []uint64) {
	e := ep.(*endpoint)
	if r.replied {
		panic("sim: request replied twice")
	}
	r.replied = true
	s := r.q.s
	e.stats.Sends.Add(1)
	words := append([]uint64(nil), body...)
	s.send(e.th, e.node, r.From, len(body), func(at int64) {
		s.push(at, nil, func() {
			r.pd.c.Words = words
			r.pd.ready = true
			if th := r.pd.waiter; th != nil {
				r.pd.waiter = nil
				s.push(s.k.Now(), th, nil)
			}
		})
	})
}
