package client

import (
	"fmt"
	"sync"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// keeper watches the leases of every held grant of a client from one goroutine: it closes Lost
// when a deadline passes and, with KeepAlive, renews each lease with a lease-probe when a third of
// it has elapsed, retransmitting with backoff until the reader goroutine hands it the answer
// (Grant.renewedLocked) or the deadline passes. Grants wait in a min-heap by the time the keeper
// must look at them next (Grant.kdue), so the keeper costs no goroutine and no timer per grant.
//
// Lock order: Client.mu, then Grant.mu, then keeper.mu; nothing else is locked while keeper.mu
// is held.
type keeper struct {
	c    *Client
	mu   sync.Mutex
	h    []*Grant      // guarded by mu; a min-heap by kdue, h[i].kidx == i
	kick chan struct{} // wakes the keeper when the earliest event moved earlier
	due  []*Grant      // the keeper goroutine's scratch list
}

func (k *keeper) init(c *Client) {
	k.c = c
	k.kick = make(chan struct{}, 1)
}

// schedule puts g in the heap (or moves it) to be looked at at next (ns on the client clock).
// renewed clears the keeper's renewal in flight (an answer arrived, or the caller renewed).
func (k *keeper) schedule(g *Grant, next int64, renewed bool) {
	k.mu.Lock()
	if renewed {
		g.kprob = false
		g.krto = 0
	}
	g.kdue = next
	if g.kidx < 0 {
		g.kidx = len(k.h)
		k.h = append(k.h, g)
		k.up(g.kidx)
	} else if !k.down(g.kidx) {
		k.up(g.kidx)
	}
	first := k.h[0] == g
	k.mu.Unlock()
	if first {
		select {
		case k.kick <- struct{}{}:
		default:
		}
	}
}

// remove takes g out of the heap (released or lost).
func (k *keeper) remove(g *Grant) {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := g.kidx
	if i < 0 {
		return
	}
	n := len(k.h) - 1
	if i != n {
		k.swap(i, n)
	}
	k.h[n] = nil
	k.h = k.h[:n]
	if i != n && !k.down(i) {
		k.up(i)
	}
	g.kidx = -1
}

func (k *keeper) swap(i, j int) {
	k.h[i], k.h[j] = k.h[j], k.h[i]
	k.h[i].kidx, k.h[j].kidx = i, j
}

func (k *keeper) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if k.h[p].kdue <= k.h[i].kdue {
			return
		}
		k.swap(i, p)
		i = p
	}
}

func (k *keeper) down(i int) bool {
	start := i
	for {
		l := 2*i + 1
		if l >= len(k.h) {
			break
		}
		m := l
		if r := l + 1; r < len(k.h) && k.h[r].kdue < k.h[l].kdue {
			m = r
		}
		if k.h[m].kdue >= k.h[i].kdue {
			break
		}
		k.swap(i, m)
		i = m
	}
	return i > start
}

// run is the keeper goroutine. It ends when the client closes.
func (k *keeper) run() {
	c := k.c
	defer c.wg.Done()
	t := stoppedTimer(c.cfg.Clock)
	defer t.Stop()
	for {
		k.mu.Lock()
		armed := len(k.h) > 0
		var wait time.Duration
		if armed {
			wait = max(time.Duration(k.h[0].kdue-c.cfg.Clock.Mono()), 0)
		}
		k.mu.Unlock()
		if armed {
			t.Reset(wait)
		}
		select {
		case <-t.C():
		case <-k.kick:
			t.Stop()
			continue
		case <-c.done:
			return
		}
		now := c.cfg.Clock.Mono()
		k.mu.Lock()
		k.due = k.due[:0]
		for len(k.h) > 0 && k.h[0].kdue <= now {
			g := k.h[0]
			k.due = append(k.due, g)
			k.remove0()
		}
		k.mu.Unlock()
		for i, g := range k.due {
			k.event(g, now)
			k.due[i] = nil
		}
	}
}

// remove0 pops the heap's root. Precondition: k.mu is held, the heap is not empty.
func (k *keeper) remove0() {
	g := k.h[0]
	n := len(k.h) - 1
	k.swap(0, n)
	k.h[n] = nil
	k.h = k.h[:n]
	k.down(0)
	g.kidx = -1
}

// event looks at g at now: past its deadline the lease is lost; with KeepAlive it is time to
// send (or retransmit) a renewal.
func (k *keeper) event(g *Grant, now int64) {
	c := k.c
	g.mu.Lock()
	dl, lost, released := g.deadline, g.lostErr != nil, g.released
	g.mu.Unlock()
	if lost || released {
		return
	}
	if now >= dl {
		g.markLost(fmt.Errorf("%w: the lease ended %v ago without renewal", ErrLeaseLost, time.Duration(now-dl)))
		return
	}
	if !c.cfg.KeepAlive {
		k.schedule(g, dl, false)
		return
	}
	k.mu.Lock()
	retry := g.kprob
	g.kprob = true
	if g.krto == 0 {
		g.krto = c.cfg.RetryInterval
	} else {
		g.krto = min(2*g.krto, c.cfg.MaxRetryInterval)
	}
	next := min(now+int64(g.krto), dl)
	k.mu.Unlock()
	c.mu.Lock()
	ts := int64(g.probeTS) // a retransmission repeats the renewal's timestamp: any copy's answer counts
	c.mu.Unlock()
	if !retry || ts == 0 {
		ts = c.timestamp()
	}
	req := wire.Fields{Op: wire.OpLeaseProbe, Mode: g.mode, Priority: g.opts.priority, Tenant: g.opts.tenant,
		Lock: g.key.lock, Txn: g.key.txn, Token: g.token, Timestamp: uint64(ts), LeaseMicros: leaseMicros(g.opts.lease)}
	if retry {
		req.Flags |= wire.FlagRetry
	}
	to, err := c.serverFor(g.key.lock)
	c.mu.Lock()
	if !g.held {
		c.mu.Unlock()
		return
	}
	g.probing, g.probeTS = true, uint64(ts)
	if err == nil {
		g.peer = to
	}
	c.mu.Unlock()
	k.schedule(g, next, false)
	if err == nil {
		_ = c.send(to, &req)
	}
}
