package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/wire"
)

// Example runs README.md's client snippet (useLocks; TestReadmeSnippet keeps the two the same)
// against a lock server started on loopback for the example. A deployment runs `netlock server`
// on its lock servers' hosts and passes their addresses instead.
func Example() {
	srv, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: 1})
	if err != nil {
		log.Fatal(err)
	}
	srvCtx, stopServer := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Run(srvCtx) }()
	defer func() {
		stopServer()
		<-served
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store := newStore()
	if err := useLocks(ctx, []string{srv.Addr().String()}, store); err != nil {
		log.Fatal(err)
	}
	fmt.Println(store.values["orders/42"], store.values["stock/7"])
	// Output:
	// paid 6
}

// useLocks is README.md's client snippet, verbatim.
func useLocks(ctx context.Context, servers []string, store *Store) error {
	c, err := client.New(client.Config{Servers: servers, KeepAlive: true})
	if err != nil {
		return err // a bad address: no client, nothing to close
	}
	defer c.Close()

	g, err := c.Acquire(ctx, client.LockID("orders/42"), wire.Exclusive) // waits in the lock's FIFO queue
	if err != nil {
		return err // errors.Is(err, client.ErrQuota), client.ErrUnreachable, client.ErrTimeout, ...
	}
	if err := g.LostErr(); err != nil {
		return err // the lease was lost (KeepAlive renews it): stop using the resource
	}
	err = store.Write("orders/42", "paid", g.Token()) // the store refuses tokens older than the last it saw
	if rerr := g.Release(ctx); err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}

	// Strict 2PL in global lock order, no deadlock; fn's ctx ends if a lease is lost.
	locks := []client.LockSpec{{Lock: client.LockID("orders/42"), Mode: wire.Shared},
		{Lock: client.LockID("stock/7"), Mode: wire.Exclusive}}
	return c.RunTxn(ctx, locks, func(ctx context.Context) error {
		return store.Write("stock/7", "6", 0) // 0: fn has no token to show
	})
}

// Store is a resource guarded by locks that fences writers: it refuses a write whose token is
// smaller than the largest it has seen for the key (0: the writer has no token to show).
type Store struct {
	mu     sync.Mutex
	values map[string]string
	tokens map[string]uint64
}

func newStore() *Store { return &Store{values: map[string]string{}, tokens: map[string]uint64{}} }

// Write sets key to value unless token is older than the last one seen for key.
func (s *Store) Write(key, value string, token uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.tokens[key] {
		return fmt.Errorf("store: %s: token %d older than %d", key, token, s.tokens[key])
	}
	s.tokens[key] = token
	s.values[key] = value
	return nil
}

// ExampleClient_TryAcquire: a lock that is held fails TryAcquire at once.
func ExampleClient_TryAcquire() {
	srv, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: 1})
	if err != nil {
		log.Fatal(err)
	}
	srvCtx, stopServer := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Run(srvCtx) }()
	defer func() {
		stopServer()
		<-served
	}()
	c, err := client.New(client.Config{Servers: []string{srv.Addr().String()}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	g, err := c.Acquire(ctx, 42, wire.Exclusive)
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.TryAcquire(ctx, 42, wire.Shared)
	fmt.Println("try while held:", errors.Is(err, client.ErrWouldBlock))
	if err := g.Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// try while held: true
}

// ExampleLockID: names map to lock ids with a fixed hash.
func ExampleLockID() {
	fmt.Printf("%#x\n", client.LockID("orders/42"))
	// Output:
	// 0xc4dd165f
}
