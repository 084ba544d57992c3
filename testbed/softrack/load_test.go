package softrack

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/client"
)

// TestHotLoad: the hot-lock load completes acquisitions, touches only the hot locks (every acquire
// a server accepts is of one of them), and reports a failing client (here: a cancelled context)
// as an error with no acquisitions counted. NewClients refuses a client host the rack lacks.
func TestHotLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var mu sync.Mutex
	accepted := map[uint32]int{}
	r, err := Start(ctx, Config{Clients: 2, OnAccept: func(lock uint32, _ uint64) {
		mu.Lock()
		accepted[lock]++
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	if _, err := r.NewClients(3, client.Config{}); err == nil {
		t.Error("NewClients(3) on a rack of 2 client hosts: no error")
	}
	clients, err := r.NewClients(2, client.Config{RetryInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		defer c.Close()
	}

	n, err := HotLoad(ctx, clients, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no acquisition completed")
	}
	mu.Lock()
	for lock := range accepted {
		if lock < HotLockBase || lock >= HotLockBase+HotLocks {
			t.Errorf("lock %d accepted by a server: not a hot lock (%v)", lock, accepted)
		}
	}
	mu.Unlock()

	// Negative control: every acquire fails, and HotLoad says so.
	dead, stop := context.WithCancel(ctx)
	stop()
	n, err = HotLoad(dead, clients, time.Hour)
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("HotLoad on a cancelled context: %d acquisitions, error %v; want 0 and context.Canceled", n, err)
	}
}
