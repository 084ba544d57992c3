package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/wire"
)

// startLockServer runs an in-process lock server on a free loopback port until the returned stop
// function is called; stop (idempotent) waits for it and returns its Run error.
func startLockServer(ctx context.Context, shards int, acceptBatch bool) (netip.AddrPort, func() error, error) {
	srv, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: shards, AcceptBatch: acceptBatch})
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

// startLockServerProcess runs `bin server` as a child process on a free loopback port (a state
// file in a temporary directory, logs at warn level), as a separate process like redis-server, so
// that the lock server does not share the benchmark's Go scheduler and garbage collector with
// the client goroutines. It waits until the server grants a lock. stop (idempotent) sends
// SIGTERM, waits for the graceful shutdown (SIGKILL after 10 s) and removes the directory; it
// returns an error if the server did not exit cleanly.
func startLockServerProcess(ctx context.Context, bin string, shards int, acceptBatch bool) (netip.AddrPort, func() error, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		addr, stop, err := startLockServerProcessOnce(ctx, bin, shards, acceptBatch)
		if err == nil {
			return addr, stop, nil
		}
		lastErr = err
	}
	return netip.AddrPort{}, nil, lastErr
}

func freeLoopbackUDPPort() (int, error) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

func startLockServerProcessOnce(ctx context.Context, bin string, shards int, acceptBatch bool) (netip.AddrPort, func() error, error) {
	port, err := freeLoopbackUDPPort()
	if err != nil {
		return netip.AddrPort{}, nil, fmt.Errorf("bench: free port: %w", err)
	}
	dir, err := os.MkdirTemp("", "netlock-bench-server-")
	if err != nil {
		return netip.AddrPort{}, nil, fmt.Errorf("bench: %w", err)
	}
	addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port))
	cmd := exec.Command(bin, "server", "--listen", addr.String(), "--shards", strconv.Itoa(shards),
		"--state-file", filepath.Join(dir, "server.state"), "--init", "--log-level", "warn")
	if acceptBatch {
		cmd.Args = append(cmd.Args, "--accept-batch")
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return netip.AddrPort{}, nil, fmt.Errorf("bench: start %s server: %w", bin, err)
	}
	done := make(chan struct{}) // closed when the process has exited; waitErr is then set
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	stop := sync.OnceValue(func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var err error
		select {
		case <-done:
			err = waitErr
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			err = fmt.Errorf("no exit 10 s after SIGTERM: %w", waitErr)
		}
		os.RemoveAll(dir)
		if err != nil {
			return fmt.Errorf("bench: lock server process: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
		}
		return nil
	})
	if err := waitServing(ctx, addr, done, &waitErr); err != nil {
		_ = stop()
		return netip.AddrPort{}, nil, fmt.Errorf("bench: lock server process at %v: %w: %s", addr, err,
			bytes.TrimSpace(stderr.Bytes()))
	}
	return addr, stop, nil
}

// probeLock is the lock waitServing takes: above every lock the benchmarks use.
const probeLock = 1<<31 - 1

// waitServing acquires and releases probeLock at addr until it succeeds (10 s at most), or the
// process exits (done closed, *waitErr its exit).
func waitServing(ctx context.Context, addr netip.AddrPort, done <-chan struct{}, waitErr *error) error {
	c, err := client.New(client.Config{Servers: []string{addr.String()}, Local: "127.0.0.1:0",
		RetryInterval: 20 * time.Millisecond})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got := make(chan error, 1)
	go func() {
		g, err := c.Acquire(ctx, probeLock, wire.Exclusive)
		if err == nil {
			err = g.Release(ctx)
		}
		got <- err
	}()
	select {
	case err := <-got:
		return err
	case <-done:
		return fmt.Errorf("exited: %v", *waitErr)
	}
}

// RunServerVsEcho starts, in this process and on loopback, a lock server (lockserver, opts.Shards
// shards) and an [EchoServer] (opts.Shards sockets), runs the same closed-loop load against each
// in alternating rounds ([CompareWithEcho]) and returns both medians and their ratio. This is
// `netlock bench server`.
func RunServerVsEcho(ctx context.Context, opts VsEchoOptions) (VsEchoResult, error) {
	opts.setDefaults()
	addr, stop, err := startLockServer(ctx, opts.Shards, false)
	if err != nil {
		return VsEchoResult{Options: opts}, err
	}
	res, err := CompareWithEcho(ctx, addr, opts)
	if serr := stop(); err == nil && serr != nil {
		err = fmt.Errorf("bench: lock server: %w", serr)
	}
	return res, err
}
