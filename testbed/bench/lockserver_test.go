package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/faultnet"
	"github.com/netlock-go/netlock/internal/testenv"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/wire"
)

// TestServerVsEcho runs a tiny `netlock bench server`: the lock server must answer every request
// of the load generator, unchanged from the echo runs. Speed is not checked.
func TestServerVsEcho(t *testing.T) {
	var res VsEchoResult
	untilProgress(t, func(d time.Duration) bool {
		var err error
		res, err = RunServerVsEcho(context.Background(), VsEchoOptions{RunOptions: RunOptions{Duration: d,
			Workers: 2, Outstanding: 4, Rounds: 1, Shards: 2}})
		if err != nil {
			t.Fatal(err)
		}
		return allProgressed(res.ServerRuns) && allProgressed(res.EchoRuns)
	})
	for _, r := range append(res.ServerRuns, res.EchoRuns...) {
		checkLoad(t, r)
	}
	if res.Ratio <= 0 {
		t.Fatalf("ratio %v", res.Ratio)
	}
}

// TestRunRedis runs a tiny `netlock bench redis`; without redis-server it fails under CI and skips
// elsewhere.
func TestRunRedis(t *testing.T) {
	var res RedisResult
	untilProgress(t, func(d time.Duration) bool {
		var err error
		res, err = RunRedis(context.Background(), RedisOptions{RunOptions: RunOptions{Duration: d,
			Workers: 2, Outstanding: 2, Rounds: 1, Shards: 2}})
		if errors.Is(err, ErrNoRedis) {
			testenv.Missing(t, "redis-server", RedisInstallHint)
		}
		if err != nil {
			t.Fatal(err)
		}
		return res.NetLock.Pairs > 0 && res.Redis.Pairs > 0 && res.Raw.Pairs > 0
	})
	t.Logf("netlock %+v", res.NetLock)
	t.Logf("redis %+v", res.Redis)
	for _, r := range []PairResult{res.NetLock, res.Redis} {
		if r.Pairs == 0 || r.Pair.Count != r.Pairs || r.Concurrency != 4 {
			t.Fatalf("%+v", r)
		}
	}
	checkLoad(t, res.Raw)
	if len(res.RawRuns) != 1 || res.RawPairsPerSec <= 0 || res.RawRatio <= 0 {
		t.Fatalf("raw %+v", res.Raw)
	}
	if res.Ratio <= 0 || res.RedisVersion == "" || res.RedisRetries != 0 {
		t.Fatalf("ratio %v version %q retries %d", res.Ratio, res.RedisVersion, res.RedisRetries)
	}
}

// TestLoadLossyLockServer runs the load generator against a lock server whose sockets lose,
// duplicate and reorder datagrams: retransmissions must recover every cycle, and every answer
// must match a request (late duplicates count as stale, never as unexpected).
func TestLoadLossyLockServer(t *testing.T) {
	faults := faultnet.Faults{Loss: 0.05, Dup: 0.05, Reorder: 0.05}
	srv, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: 2,
		WrapConn: faultnet.Hook(faultnet.Config{Seed: 1, Send: faults, Recv: faults})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("lock server: %v", err)
		}
	}()
	var res LoadResult
	base := uint32(1)
	untilProgress(t, func(d time.Duration) bool {
		var err error
		res, err = RunLoad(context.Background(), LoadConfig{Target: srv.Addr(), Workers: 2, Outstanding: 4,
			Duration: d, Retransmit: 20 * time.Millisecond, Drain: 5 * time.Second, LockBase: base,
			Mode: wire.Exclusive})
		if err != nil {
			t.Fatal(err)
		}
		base += 100
		return res.Pairs > 0 && res.Retransmits > 0
	})
	checkLoad(t, res)
	if res.Retransmits == 0 {
		t.Fatalf("no retransmissions under 5%% loss: %+v", res)
	}
}

// TestLockServerProcess: `netlock server` as a child process (netlock bench redis's default)
// grants locks, and stop shuts it down cleanly (SIGTERM, exit status 0). Control: a binary that
// exits at once is reported, not waited for. The server accepts batches (--accept-batch, as
// netlock bench redis --batch starts it), and a batching client's concurrent pairs pass.
func TestLockServerProcess(t *testing.T) {
	bin := testenv.BuildNetlock(t)
	ctx := context.Background()
	addr, stop, err := startLockServerProcess(ctx, bin, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	nl, err := NewNetLockLocker(addr.String(), 1, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			rel, err := nl.Acquire(ctx, uint32(7+i))
			if err == nil {
				err = rel(ctx)
			}
			errs <- err
		}()
	}
	for range 16 {
		if e := <-errs; e != nil {
			err = e
		}
	}
	if cerr := nl.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("second stop: %v", err)
	}
	if _, _, err := startLockServerProcessOnce(ctx, "/bin/false", 2, false); err == nil ||
		!strings.Contains(err.Error(), "exited") {
		t.Fatalf("a server that exits at once: %v, want an error saying it exited", err)
	}
}
