package dlm

import (
	"fmt"
	"math/rand"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// DSLR configures the DSLR lock (package documentation). Zero fields take the defaults in
// parentheses, which are the authors' settings.
type DSLR struct {
	// Lease is the lock lease in ns: a waiter that sees no release for 2 x Lease x (the requests
	// ahead of it) resets the lock (10 ms: the authors' experiment scripts run "d2lm_10000", in
	// microseconds).
	Lease int64
	// CountMax is COUNT_MAX, the ticket at which the counters are reset (32768 = 2^15, the
	// authors' kMaxPossibleNumber). Must be in [2, 32768]; tests lower it to exercise resets.
	CountMax uint64
	// ReadBackoff makes a waiter pause before each poll for min(ReadBackoffMax, ahead x
	// ReadBackoffBase), ahead being the exclusive requests ahead plus a tenth of the shared ones
	// (rounded up) for an exclusive request and the exclusive requests ahead for a shared one: the
	// authors' PerformReadBackoff, off by default as in their code (20 us and 1 ms when on).
	ReadBackoff                     bool
	ReadBackoffBase, ReadBackoffMax int64
	// RetryBase and RetryMax bound the random exponential backoff after a ticket taken while a
	// counter reset is pending (10 us and 10 ms, the authors' scripts' base_backoff and
	// max_backoff).
	RetryBase, RetryMax int64
	// UnsafeIgnoreShared is a negative control: an exclusive request is granted once nX reaches its
	// ticket, ignoring shared holders. Never use it.
	UnsafeIgnoreShared bool
}

func (d *DSLR) fill() error {
	def := func(p *int64, v int64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&d.Lease, 10_000_000)
	def(&d.ReadBackoffBase, 20_000)
	def(&d.ReadBackoffMax, 1_000_000)
	def(&d.RetryBase, 10_000)
	def(&d.RetryMax, 10_000_000)
	if d.CountMax == 0 {
		d.CountMax = 1 << 15
	}
	if d.CountMax < 2 || d.CountMax > 1<<15 {
		return fmt.Errorf("dslr: COUNT_MAX %d outside [2, 32768]", d.CountMax)
	}
	if d.Lease < 0 || d.ReadBackoffBase < 0 || d.ReadBackoffMax < 0 || d.RetryBase < 0 || d.RetryMax < 0 {
		return fmt.Errorf("dslr: negative time in %+v", *d)
	}
	return nil
}

// Name implements Algorithm.
func (d DSLR) Name() string {
	switch {
	case d.UnsafeIgnoreShared:
		return "dslr-unsafe"
	case d.ReadBackoff:
		return "dslr-backoff"
	}
	return "dslr"
}

// NewClient implements Algorithm.
func (d DSLR) NewClient(ep verbs.Endpoint, _ uint64, r *rand.Rand) (Client, error) {
	if err := d.fill(); err != nil {
		return nil, err
	}
	return &dslrClient{cfg: d, ep: ep, r: r}, nil
}

// The DSLR lock word: four 16-bit counters, nX in the top bits.
const (
	dslrMaxS = 0
	dslrMaxX = 16
	dslrNS   = 32
	dslrNX   = 48
)

func dslrFields(w uint64) (nX, nS, maxX, maxS uint64) {
	return w >> dslrNX & 0xffff, w >> dslrNS & 0xffff, w >> dslrMaxX & 0xffff, w >> dslrMaxS & 0xffff
}

func dslrWord(nX, nS, maxX, maxS uint64) uint64 {
	return nX<<dslrNX | nS<<dslrNS | maxX<<dslrMaxX | maxS<<dslrMaxS
}

type dslrClient struct {
	cfg DSLR
	ep  verbs.Endpoint
	r   *rand.Rand
	st  Stats
}

func (c *dslrClient) Stats() *Stats { return &c.st }

// granted is DSLR's grant rule for a request holding tickets (tx, ts) against counters (nX, nS).
func (c *dslrClient) granted(m Mode, nX, nS, tx, ts uint64) bool {
	if m == Shared || c.cfg.UnsafeIgnoreShared {
		return nX == tx
	}
	return nX == tx && nS == ts
}

// Acquire implements Client.
func (c *dslrClient) Acquire(w verbs.Ptr, m Mode) (Hold, error) {
	inc := uint64(1) << dslrMaxS
	if m == Exclusive {
		inc = 1 << dslrMaxX
	}
	cm := c.cfg.CountMax
	for attempt := 0; ; attempt++ {
		prev, err := verbs.FAA(c.ep, w, inc)
		if err != nil {
			return Hold{}, fmt.Errorf("dslr acquire %v: %w", w, err)
		}
		nX, nS, tx, ts := dslrFields(prev)
		if tx >= cm || ts >= cm {
			// A counter reset is pending: give the ticket back and come back later.
			if _, err := verbs.FAA(c.ep, w, -inc); err != nil {
				return Hold{}, fmt.Errorf("dslr undo %v: %w", w, err)
			}
			c.st.Retries++
			verbs.Spend(c.ep, backoff(c.r, c.cfg.RetryBase, c.cfg.RetryMax, attempt))
			continue
		}
		h := Hold{Word: w, Mode: m}
		switch {
		case m == Exclusive && tx+1 >= cm:
			h.resetter, h.reset = true, dslrWord(cm, ts, cm, ts)
		case m == Shared && ts+1 >= cm:
			h.resetter, h.reset = true, dslrWord(tx, cm, tx, cm)
		}
		if !c.granted(m, nX, nS, tx, ts) {
			if err := c.wait(&h, tx, ts, nX, nS); err != nil {
				return Hold{}, err
			}
		}
		c.st.Acquired++
		return h, nil
	}
}

// wait polls the lock word until the request with tickets (tx, ts) is granted. It resets the
// lock when the counters have not moved for 2 x Lease x (requests ahead), and aborts when it did
// or when a reset overtook it.
func (c *dslrClient) wait(h *Hold, tx, ts, nX, nS uint64) error {
	w, m := h.Word, h.Mode
	lastX, lastS := nX, nS
	since := c.ep.Now()
	for {
		if c.cfg.ReadBackoff {
			ahead := tx - nX
			if m == Exclusive {
				ahead += (ts - nS + 9) / 10
			}
			verbs.Spend(c.ep, min(c.cfg.ReadBackoffMax, int64(ahead)*c.cfg.ReadBackoffBase))
		}
		cur, err := verbs.SpinRead(c.ep, w)
		if err != nil {
			return fmt.Errorf("dslr poll %v: %w", w, err)
		}
		c.st.Polls++
		var maxX, maxS uint64
		nX, nS, maxX, maxS = dslrFields(cur)
		if c.granted(m, nX, nS, tx, ts) {
			return nil
		}
		if nX > tx || nS > ts {
			// A reset counted this request as released: it no longer holds a place in line.
			c.st.Overtaken++
			return c.abortReset(h)
		}
		now := c.ep.Now()
		if nX != lastX || nS != lastS {
			lastX, lastS, since = nX, nS, now
			continue
		}
		ahead := int64(tx-nX) + int64(ts-nS)
		if ahead < 1 {
			ahead = 1
		}
		if now-since < 2*c.cfg.Lease*ahead {
			continue
		}
		// No release for too long: a holder died or the transactions deadlocked. Count everyone
		// ahead and this request as released, unless the counters move meanwhile.
		for {
			from := dslrWord(lastX, lastS, maxX, maxS)
			to := dslrWord(tx+1, ts, maxX, maxS)
			if m == Shared {
				to = dslrWord(tx, ts+1, maxX, maxS)
			}
			old, err := verbs.CAS(c.ep, w, from, to)
			if err != nil {
				return fmt.Errorf("dslr reset %v: %w", w, err)
			}
			if old == from {
				c.st.Resets++
				return c.abortReset(h)
			}
			oX, oS, oMaxX, oMaxS := dslrFields(old)
			if oX != lastX || oS != lastS {
				lastX, lastS, since = oX, oS, c.ep.Now()
				nX, nS = oX, oS
				break
			}
			maxX, maxS = oMaxX, oMaxS
		}
	}
}

// abortReset ends a request that a reset passed (or that reset the lock itself): it holds
// nothing, but a resetter still owes the counter reset.
func (c *dslrClient) abortReset(h *Hold) error {
	if h.resetter {
		if err := c.resetCounters(h); err != nil {
			return err
		}
	}
	return ErrReset
}

// resetCounters compare-and-swaps the word from the state after the resetter's release to 0,
// until it succeeds (requests that took a ticket meanwhile undo it). The other holders release
// within a lease, so a reset that has not happened after 2 x Lease never will (a lease reset
// over-advanced the counters, see TestDSLRResetOfLiveHolder): that is an error rather than a
// livelock, since every later request would undo its ticket forever.
func (c *dslrClient) resetCounters(h *Hold) error {
	start := c.ep.Now()
	for {
		old, err := verbs.CAS(c.ep, h.Word, h.reset, 0)
		if err != nil {
			return fmt.Errorf("dslr counter reset %v: %w", h.Word, err)
		}
		if old == h.reset {
			c.st.CounterResets++
			return nil
		}
		if c.ep.Now()-start > 2*c.cfg.Lease {
			return fmt.Errorf("dslr counter reset %v: word %#x never reached %#x: %w", h.Word, old, h.reset, ErrResetStuck)
		}
	}
}

// Validate implements Client: DSLR holds do not expire.
func (c *dslrClient) Validate(Hold) error { return nil }

// Release implements Client.
func (c *dslrClient) Release(h Hold) error {
	inc := uint64(1) << dslrNS
	if h.Mode == Exclusive {
		inc = 1 << dslrNX
	}
	prev, err := verbs.FAA(c.ep, h.Word, inc)
	if err != nil {
		return fmt.Errorf("dslr release %v: %w", h.Word, err)
	}
	nX, nS, maxX, maxS := dslrFields(prev)
	if h.Mode == Shared && nS >= maxS || h.Mode == Exclusive && nX >= maxX {
		// A lease reset already counted this release.
		if _, err := verbs.FAA(c.ep, h.Word, -inc); err != nil {
			return fmt.Errorf("dslr undo release %v: %w", h.Word, err)
		}
		c.st.StaleReleases++
	}
	c.st.Released++
	if h.resetter {
		return c.resetCounters(&h)
	}
	return nil
}
