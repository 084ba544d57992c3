package rangebench

import (
	"fmt"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Static segmentation (the paper's SS baseline): the space is cut into fixed-size segments, each
// a DSLR-style bakery mutex on one word (ticket counter in the high half, served counter in the
// low half); a range locks every segment it touches, in ascending order, each with one FAA and
// polling until served, and releases them all in one batch. Segment sizes are kept in eighths of
// a unit so that SS-Under (L/8) is defined for L = 1 (a 1-unit range then covers 8 segments).

const ticketOne = 1 << 32

func ssSeg8(cfg Config) uint64 {
	switch cfg.Scheme {
	case SSOver:
		return 64 * cfg.L
	case SSUnder:
		return cfg.L
	}
	return 8 * cfg.L
}

func ssSegments(cfg Config) uint64 { return (cfg.N*8 + ssSeg8(cfg) - 1) / ssSeg8(cfg) }

type ssLocker struct {
	base verbs.Ptr
	seg8 uint64
}

func (l *ssLocker) aborts() uint64 { return 0 }

func (l *ssLocker) lock(ep verbs.Endpoint, lo, hi uint64) (func() error, error) {
	first, last := lo*8/l.seg8, (hi*8+l.seg8-1)/l.seg8
	for s := first; s < last; s++ {
		p := l.base.Add(8 * s)
		old, err := verbs.FAA(ep, p, ticketOne)
		if err != nil {
			return nil, fmt.Errorf("ss segment %d: %w", s, err)
		}
		for v := old; v&(ticketOne-1) != old>>32; {
			if v, err = verbs.SpinRead(ep, p); err != nil {
				return nil, err
			}
			if v&(ticketOne-1) == old>>32 {
				break
			}
		}
	}
	return func() error {
		wrs := make([]verbs.WorkRequest, 0, last-first)
		for s := first; s < last; s++ {
			wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpFAA, Remote: l.base.Add(8 * s), Value: 1})
		}
		_, err := verbs.Exec(ep, wrs)
		return err
	}, nil
}
