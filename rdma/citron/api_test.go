package citron

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// The API's errors: an empty, inverted or out-of-space range, an unknown mode, a second
// Unlock, an Unlock after the lease, and a bad configuration.
func TestAPIErrors(t *testing.T) {
	s, err := sim.New(sim.Config{Nodes: 2, RegionSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(s.Endpoint(0), Config{Space: 4096, Lease: 100 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	s.Go(1, func(ep verbs.Endpoint) error {
		c, err := NewClient(ep, srv, ClientOptions{})
		if err != nil {
			return err
		}
		ctx := context.Background()
		bad := []struct {
			lo, hi uint64
			mode   Mode
			want   error
		}{
			{5, 5, Exclusive, ErrEmptyRange},
			{6, 5, Shared, ErrInvertedRange},
			{4000, 4097, Exclusive, ErrOutOfSpace},
			{0, 1, Mode(7), ErrBadMode},
		}
		for _, b := range bad {
			if _, err := c.LockRange(ctx, b.lo, b.hi, b.mode); !errors.Is(err, b.want) {
				t.Errorf("[%d,%d) %v: %v, want %v", b.lo, b.hi, b.mode, err, b.want)
			}
		}
		h, err := c.LockRange(ctx, 0, 4096, Exclusive) // the whole space
		if err != nil {
			return err
		}
		if lo, hi := h.Range(); lo != 0 || hi != 4096 || h.Mode() != Exclusive {
			t.Errorf("handle [%d,%d) %v", lo, hi, h.Mode())
		}
		if err := h.Unlock(); err != nil {
			return err
		}
		if err := h.Unlock(); !errors.Is(err, ErrReleased) {
			t.Errorf("second unlock: %v", err)
		}
		h, err = c.LockRange(ctx, 10, 20, Shared)
		if err != nil {
			return err
		}
		verbs.Spend(ep, int64(200*time.Microsecond))
		if err := h.Unlock(); !errors.Is(err, ErrLeaseExpired) {
			t.Errorf("unlock after the lease: %v", err)
		}
		return nil
	})
	if err := s.Run(int64(time.Second)); err != nil {
		t.Fatal(err)
	}
	for i, cfg := range []Config{{}, {Space: 100, M: 9}, {Space: 100, Delta: 2}, {Space: 1 << 60}} {
		if _, err := NewServer(s.Endpoint(0), cfg); err == nil {
			t.Errorf("#%d: config accepted", i)
		}
	}
}
