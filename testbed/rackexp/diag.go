package rackexp

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/netlock-go/netlock/client"
)

// Diagnosis of the Figure 15 stalls: with DIAG_SLOW_ACQUIRE set (a duration), every
// transaction takes its locks one Acquire at a time and prints to stderr each acquisition
// slower than that: the lock, its mode, the txn, how long it took and how it ended.
var diagSlow, _ = time.ParseDuration(os.Getenv("DIAG_SLOW_ACQUIRE"))

var diagStart = time.Now()

func diagAcquire(ctx context.Context, c *client.Client, t *client.Txn, specs []client.LockSpec) error {
	s := slices.Clone(specs)
	slices.SortFunc(s, func(a, b client.LockSpec) int { return int(int64(a.Lock) - int64(b.Lock)) })
	for _, sp := range s {
		t.Lock(sp.Lock, sp.Mode)
		t0 := time.Now()
		err := t.Acquire(ctx)
		if d := time.Since(t0); d >= diagSlow {
			tok := uint64(0)
			for _, g := range t.Grants() {
				if g.Lock() == sp.Lock {
					tok = g.Token()
				}
			}
			st := c.Stats()
			fmt.Fprintf(os.Stderr, "DIAG slow-acquire at=%.3f wall=%s lock=%d server=%d mode=%v txn=%d took=%v token=%d err=%v client=%s retrans=%d\n",
				time.Since(diagStart).Seconds(), t0.UTC().Format("15:04:05.000"), sp.Lock, sp.Lock%2+1, sp.Mode, t.ID(), d.Round(time.Millisecond), tok, err,
				c.LocalAddr(), st.Retransmits)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
