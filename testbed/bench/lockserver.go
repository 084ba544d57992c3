package bench

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"github.com/netlock-go/netlock/lockserver"
)

// startLockServer runs an in-process lock server on a free loopback port until the returned stop
// function is called; stop (idempotent) waits for it and returns its Run error.
func startLockServer(ctx context.Context, shards int) (netip.AddrPort, func() error, error) {
	srv, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: shards})
	if err != nil {
		return netip.AddrPort{}, nil, fmt.Errorf("bench: %w", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(sctx) }()
	stop := sync.OnceValue(func() error {
		cancel()
		err := <-done
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		return err
	})
	return srv.Addr(), stop, nil
}

// RunServerVsEcho starts, in this process and on loopback, a lock server (lockserver, opts.Shards
// shards) and an [EchoServer] (opts.Shards sockets), runs the same closed-loop load against each
// in alternating rounds ([CompareWithEcho]) and returns both medians and their ratio. This is
// `netlock bench server`.
func RunServerVsEcho(ctx context.Context, opts VsEchoOptions) (VsEchoResult, error) {
	opts.setDefaults()
	addr, stop, err := startLockServer(ctx, opts.Shards)
	if err != nil {
		return VsEchoResult{Options: opts}, err
	}
	res, err := CompareWithEcho(ctx, addr, opts)
	if serr := stop(); err == nil && serr != nil {
		err = fmt.Errorf("bench: lock server: %w", serr)
	}
	return res, err
}
