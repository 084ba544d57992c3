package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/wire"
)

func Example() {
	// A lock server on loopback; a real deployment lists its lock servers' addresses instead.
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
	addr := srv.Addr().String()

	c, err := client.New(client.Config{
		Servers:   []string{addr},
		Local:     "127.0.0.1:0",
		Lease:     2 * time.Second,
		KeepAlive: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// One lock.
	g, err := c.Acquire(ctx, 42, wire.Exclusive)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("holding lock", g.Lock(), "in mode", g.Mode(), "with a fencing token:", g.Token() > 0)
	if err := g.Release(ctx); err != nil {
		log.Fatal(err)
	}

	// A transaction over several locks, taken in ascending order and released at the end.
	err = c.RunTxn(ctx, []client.LockSpec{{Lock: 7, Mode: wire.Shared}, {Lock: 3, Mode: wire.Exclusive}},
		func(ctx context.Context) error {
			fmt.Println("in the transaction")
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}

	// A lock that is taken fails TryAcquire at once.
	g, err = c.Acquire(ctx, 42, wire.Exclusive)
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.TryAcquire(ctx, 42, wire.Shared)
	fmt.Println("try while held:", errors.Is(err, client.ErrWouldBlock))
	_ = g.Release(ctx)
	// Output:
	// holding lock 42 in mode X with a fencing token: true
	// in the transaction
	// try while held: true
}
