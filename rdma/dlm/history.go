package dlm

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// History records lock holds as intervals of one global sequence (a logical clock every thread
// advances atomically) and checks them for reader-writer exclusion.
//
// A thread takes a hold's start from the sequence after its Acquire returned and its end before
// it validates or releases, so for a correct lock the end of a hold happens before the start of
// every conflicting hold that follows it: the release it precedes (or, for a DrTM lease, the
// clock reading of the validation it precedes) is what the next holder had to observe. Two
// conflicting intervals that overlap are therefore a violation, on both emulators. Holds whose
// protection failed (a DrTM lease that ran out before the commit) are not recorded.
type History struct {
	seq atomic.Uint64
	mu  sync.Mutex
	iv  []Interval
}

// Interval is one recorded hold.
type Interval struct {
	Word       verbs.Ptr
	Mode       Mode
	Start, End uint64
	// Owner is the holding client's id.
	Owner uint64
}

// Tick advances the sequence and returns its new value.
func (h *History) Tick() uint64 { return h.seq.Add(1) }

// Add records a hold.
func (h *History) Add(iv Interval) {
	h.mu.Lock()
	h.iv = append(h.iv, iv)
	h.mu.Unlock()
}

// Len is the number of recorded holds.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.iv)
}

// Violation is two conflicting holds that overlap.
type Violation struct {
	A, B Interval
}

func (v Violation) String() string {
	return fmt.Sprintf("%v: %v by %d during [%d, %d] overlaps %v by %d during [%d, %d]", v.A.Word,
		v.B.Mode, v.B.Owner, v.B.Start, v.B.End, v.A.Mode, v.A.Owner, v.A.Start, v.A.End)
}

// Check returns the overlapping conflicting holds (at most limit of them; limit <= 0 for all).
// For each word it sweeps the holds in start order, keeping the latest-ending hold so far and the
// latest-ending exclusive one: an exclusive hold must start after every earlier hold ended, a
// shared one after every earlier exclusive hold ended.
func (h *History) Check(limit int) []Violation {
	h.mu.Lock()
	iv := slices.Clone(h.iv)
	h.mu.Unlock()
	slices.SortFunc(iv, func(a, b Interval) int {
		if c := cmp.Compare(a.Word, b.Word); c != 0 {
			return c
		}
		return cmp.Compare(a.Start, b.Start)
	})
	var out []Violation
	for i := 0; i < len(iv); {
		j := i
		var all, excl *Interval
		for ; j < len(iv) && iv[j].Word == iv[i].Word; j++ {
			cur := &iv[j]
			var other *Interval
			switch {
			case cur.Mode == Exclusive && all != nil && all.End > cur.Start:
				other = all
			case cur.Mode == Shared && excl != nil && excl.End > cur.Start:
				other = excl
			}
			if other != nil {
				out = append(out, Violation{A: *other, B: *cur})
				if limit > 0 && len(out) >= limit {
					return out
				}
			}
			if all == nil || cur.End > all.End {
				all = cur
			}
			if cur.Mode == Exclusive && (excl == nil || cur.End > excl.End) {
				excl = cur
			}
		}
		i = j
	}
	return out
}
