package softrack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/wire"
)

// The hot-lock load (HotLoad) contends for the locks HotLockBase .. HotLockBase+HotLocks-1: few
// enough that the controller sees them as the rack's hottest and moves them into the switch.
const (
	HotLockBase = 100
	HotLocks    = 4
)

// NewClients makes n lock clients, client i+1 on client host i+1 (NewClient), each with cfg. On
// an error it closes the clients it made and returns none.
func (r *Rack) NewClients(n int, cfg client.Config) ([]*client.Client, error) {
	clients := make([]*client.Client, 0, n)
	for i := 1; i <= n; i++ {
		c, err := r.NewClient(i, cfg)
		if err != nil {
			for _, c := range clients {
				_ = c.Close()
			}
			return nil, fmt.Errorf("rack: client %d: %w", i, err)
		}
		clients = append(clients, c)
	}
	return clients, nil
}

// HotLoad runs the hot-lock load on clients until d has passed: one goroutine per client, each
// acquiring a lock exclusively and releasing it at once, over and over; client c's i-th
// acquisition is of lock HotLockBase+(c+i)%HotLocks, so the clients start on different locks
// and walk them in step. It returns how many acquisitions completed (each one released), and the
// errors joined if any failed: a client stops at its first error, the others go on. d sizes the
// load on the wall clock; nothing should assert on it.
func HotLoad(ctx context.Context, clients []*client.Client, d time.Duration) (uint64, error) {
	var (
		wg   sync.WaitGroup
		n    atomic.Uint64
		errs = make([]error, len(clients))
	)
	end := time.Now().Add(d)
	for ci, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				lock := uint32(HotLockBase + (ci+i)%HotLocks)
				g, err := c.Acquire(ctx, lock, wire.Exclusive)
				if err != nil {
					errs[ci] = fmt.Errorf("hot load: client %d: acquire lock %d: %w", ci+1, lock, err)
					return
				}
				if err := g.Release(ctx); err != nil {
					errs[ci] = fmt.Errorf("hot load: client %d: release lock %d: %w", ci+1, lock, err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return n.Load(), errors.Join(errs...)
}
