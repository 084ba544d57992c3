package softfig

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/netlock-go/netlock/client"
)

// slowLog reports slow acquisitions (Config.SlowAcquire): with it, a transaction takes its
// locks one Acquire at a time, in lock order, and every acquisition that took at least min is
// logged with the lock, its mode, the txn, how long it took and how it ended.
type slowLog struct {
	min   time.Duration
	log   *slog.Logger
	start time.Time
}

func (s *slowLog) acquire(ctx context.Context, c *client.Client, t *client.Txn, specs []client.LockSpec) error {
	sorted := slices.Clone(specs)
	slices.SortFunc(sorted, func(a, b client.LockSpec) int { return int(int64(a.Lock) - int64(b.Lock)) })
	for _, sp := range sorted {
		t.Lock(sp.Lock, sp.Mode)
		t0 := time.Now()
		err := t.Acquire(ctx)
		if d := time.Since(t0); d >= s.min {
			tok := uint64(0)
			for _, g := range t.Grants() {
				if g.Lock() == sp.Lock {
					tok = g.Token()
				}
			}
			s.log.Warn("slow acquire", "at", t0.Sub(s.start).Round(time.Millisecond), "lock", sp.Lock, "mode", sp.Mode,
				"txn", t.ID(), "took", d.Round(time.Millisecond), "token", tok, "err", err, "client", c.LocalAddr(),
				"retransmits", c.Stats().Retransmits)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
