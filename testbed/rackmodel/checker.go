package rackmodel

import (
	"fmt"

	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

// checker checks exclusion and fencing online, on the client observations as they happen (in
// virtual-time order), with history.Check's definitions (package history): a grant holds from
// its observation until its release was decided, its loss, or its lease deadline, whichever is
// first; two holder intervals of a lock must not overlap unless both are shared; of two ordered
// intervals with one exclusive, the later has the larger token. A grant observed after its
// deadline holds nothing. It keeps per lock only the open intervals and the largest tokens of
// the ended ones, so it can run over runs whose full history would not fit in memory;
// TestCheckerAgreesWithHistory runs both on the same runs.
type checker struct {
	locks      map[uint32]*lockCheck
	violations []history.Violation
	dropped    int // violations beyond maxViolations, not kept
}

const maxViolations = 100

type ivl struct {
	start    int64
	txn      uint64
	mode     wire.Mode
	token    uint64
	deadline int64 // 0: none
}

type lockCheck struct {
	open      []ivl
	maxAll    uint64 // largest token of an ended interval
	maxX      uint64 // largest token of an ended exclusive interval
	anyEnded  bool
	anyXEnded bool
}

func (c *checker) init() { c.locks = map[uint32]*lockCheck{} }

func (c *checker) violate(v history.Violation) {
	if len(c.violations) >= maxViolations {
		c.dropped++
		return
	}
	c.violations = append(c.violations, v)
}

func ns(e *history.Event) int64 { return e.At.Sub(epoch).Nanoseconds() }

// end ends open interval i at t. An interval that ends when it starts held nothing (history:
// empty) and orders nothing.
func (lc *lockCheck) end(i int, t int64) {
	iv := lc.open[i]
	lc.open[i] = lc.open[len(lc.open)-1]
	lc.open = lc.open[:len(lc.open)-1]
	if t <= iv.start {
		return
	}
	lc.maxAll = max(lc.maxAll, iv.token)
	lc.anyEnded = true
	if iv.mode == wire.Exclusive {
		lc.maxX = max(lc.maxX, iv.token)
		lc.anyXEnded = true
	}
}

func (c *checker) observe(e *history.Event) {
	switch e.Kind {
	case history.Granted:
		c.granted(e)
	case history.Released, history.Lost:
		lc := c.locks[e.Lock]
		if lc == nil {
			return
		}
		for i := range lc.open {
			if lc.open[i].txn == e.Txn {
				t := ns(e)
				if d := lc.open[i].deadline; d != 0 && d < t {
					t = d
				}
				lc.end(i, t)
				return
			}
		}
	}
}

func (c *checker) granted(e *history.Event) {
	t := ns(e)
	var dl int64
	if !e.Deadline.IsZero() {
		dl = e.Deadline.Sub(epoch).Nanoseconds()
	}
	lc := c.locks[e.Lock]
	if lc == nil {
		lc = &lockCheck{}
		c.locks[e.Lock] = lc
	}
	// Intervals whose lease ran out by now have ended at their deadline.
	for i := 0; i < len(lc.open); {
		if d := lc.open[i].deadline; d != 0 && d <= t {
			lc.end(i, d)
			continue
		}
		i++
	}
	if dl != 0 && dl <= t {
		return // observed after its deadline: holds nothing, orders nothing
	}
	for _, o := range lc.open {
		if o.txn == e.Txn {
			if o.token != e.Token {
				c.violate(history.Violation{Rule: "double-grant", Lock: e.Lock, Txns: []uint64{e.Txn},
					Detail: fmt.Sprintf("granted token %d while holding token %d", e.Token, o.token)})
			}
			return
		}
		if o.mode == wire.Exclusive || e.Mode == wire.Exclusive {
			c.violate(history.Violation{Rule: "exclusion", Lock: e.Lock, Txns: []uint64{o.txn, e.Txn},
				Detail: fmt.Sprintf("%s (token %d) granted at %v while %s (token %d) holds", e.Mode, e.Token,
					t, o.mode, o.token)})
		}
	}
	switch {
	case e.Mode == wire.Exclusive && lc.anyEnded && e.Token <= lc.maxAll:
		c.violate(history.Violation{Rule: "fencing", Lock: e.Lock, Txns: []uint64{e.Txn},
			Detail: fmt.Sprintf("exclusive token %d not above an earlier holder's %d", e.Token, lc.maxAll)})
	case e.Mode == wire.Shared && lc.anyXEnded && e.Token <= lc.maxX:
		c.violate(history.Violation{Rule: "fencing", Lock: e.Lock, Txns: []uint64{e.Txn},
			Detail: fmt.Sprintf("shared token %d not above an earlier exclusive holder's %d", e.Token, lc.maxX)})
	}
	lc.open = append(lc.open, ivl{start: t, txn: e.Txn, mode: e.Mode, token: e.Token, deadline: dl})
}
