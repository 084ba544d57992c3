package dlm

import (
	"fmt"
	"math/rand"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// DrTM configures the DrTM lock (package documentation). Zero fields take the defaults in
// parentheses.
type DrTM struct {
	// Lease is a read lease's length in ns (400 us: kDRTMSharedLeaseTime of the DSLR authors'
	// DrTM, the implementation NetLock's comparison ran).
	Lease int64
	// Delta bounds the clock skew between machines, ns (0: rdma/sim has one clock). An exclusive
	// request treats a lease as expired only when now > end + Delta; a holder's lease is valid
	// only while now < end - Delta.
	Delta int64
	// JoinMargin is how much of a lease must remain for a reader to share it (0, as the DSLR
	// authors' DrTM: any valid lease).
	JoinMargin int64
	// Clock, if set, is the synchronized clock (ns) leases are read on; nil: the endpoint's clock
	// (rdma/sim's virtual time, one clock for every node). DrTM assumes clocks synchronized within
	// Delta (PTP); rdma/emu's endpoint clocks count from their node's creation, so they are skewed
	// by the gaps between the creations, and emulator runs pass one clock here.
	Clock func() int64
	// UnsafeIgnoreLease is a negative control: an exclusive request overwrites read leases that
	// have not expired. Never use it.
	UnsafeIgnoreLease bool
}

func (d *DrTM) fill() error {
	if d.Lease == 0 {
		d.Lease = 400_000
	}
	if d.Lease < 0 || d.Delta < 0 || d.JoinMargin < 0 {
		return fmt.Errorf("drtm: negative time in %+v", *d)
	}
	return nil
}

// Name implements Algorithm.
func (d DrTM) Name() string {
	if d.UnsafeIgnoreLease {
		return "drtm-unsafe"
	}
	return "drtm"
}

// NewClient implements Algorithm.
func (d DrTM) NewClient(ep verbs.Endpoint, id uint64, _ *rand.Rand) (Client, error) {
	if err := d.fill(); err != nil {
		return nil, err
	}
	now := d.Clock
	if now == nil {
		now = ep.Now
	}
	return &drtmClient{cfg: d, ep: ep, now: now, locked: drtmWriteBit | (id&0xff)<<drtmOwnerShift}, nil
}

// The DrTM lock word: write-lock bit, 8-bit owner, 55-bit read-lease end.
const (
	drtmWriteBit   = uint64(1) << 63
	drtmOwnerShift = 55
	drtmLeaseMask  = uint64(1)<<drtmOwnerShift - 1
)

type drtmClient struct {
	cfg    DrTM
	ep     verbs.Endpoint
	now    func() int64 // the lease clock
	locked uint64       // this client's write-locked word
	st     Stats
}

func (c *drtmClient) Stats() *Stats { return &c.st }

// Acquire implements Client.
func (c *drtmClient) Acquire(w verbs.Ptr, m Mode) (Hold, error) {
	expect := uint64(0)
	for {
		want, end := c.locked, int64(0)
		if m == Shared {
			end = c.now() + c.cfg.Lease
			want = uint64(end) & drtmLeaseMask
		}
		old, err := verbs.CAS(c.ep, w, expect, want)
		if err != nil {
			return Hold{}, fmt.Errorf("drtm acquire %v: %w", w, err)
		}
		if old == expect {
			c.st.Acquired++
			return Hold{Word: w, Mode: m, LeaseEnd: end}, nil
		}
		if old&drtmWriteBit != 0 {
			c.st.Conflicts++
			return Hold{}, ErrConflict
		}
		lease := int64(old & drtmLeaseMask)
		now := c.now()
		switch {
		case now > lease+c.cfg.Delta || m == Exclusive && c.cfg.UnsafeIgnoreLease:
			// Expired (on every clock within Delta): take it over from its value.
			expect = old
			c.st.Retries++
		case m == Shared && now < lease-c.cfg.Delta-c.cfg.JoinMargin:
			// A valid lease: share it as it is.
			c.st.Joins++
			c.st.Acquired++
			return Hold{Word: w, Mode: m, LeaseEnd: lease}, nil
		default:
			c.st.Conflicts++
			return Hold{}, ErrConflict
		}
	}
}

// Validate implements Client: a shared hold protects the transaction only while its lease holds
// on every clock.
func (c *drtmClient) Validate(h Hold) error {
	if h.Mode == Shared && c.now() >= h.LeaseEnd-c.cfg.Delta {
		c.st.Expired++
		return ErrLeaseExpired
	}
	return nil
}

// Release implements Client: a write lock is compare-and-swapped back to 0; a read lease is left
// to expire.
func (c *drtmClient) Release(h Hold) error {
	c.st.Released++
	if h.Mode == Shared {
		return nil
	}
	old, err := verbs.CAS(c.ep, h.Word, c.locked, 0)
	if err != nil {
		return fmt.Errorf("drtm release %v: %w", h.Word, err)
	}
	if old != c.locked {
		return fmt.Errorf("drtm release %v: word %#x, not write-locked by this client (%#x)", h.Word, old, c.locked)
	}
	return nil
}
