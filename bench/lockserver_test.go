package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/netlock-go/netlock/faultnet"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/wire"
)

// TestServerVsEcho runs a tiny `netlock bench server`: the lock server must answer every request
// of the load generator, unchanged from the echo runs. Speed is not checked.
func TestServerVsEcho(t *testing.T) {
	res, err := RunServerVsEcho(context.Background(), VsEchoOptions{Duration: 200 * time.Millisecond,
		Workers: 2, Outstanding: 4, Rounds: 1, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(res.ServerRuns, res.EchoRuns...) {
		checkLoad(t, r)
	}
	if res.Ratio <= 0 {
		t.Fatalf("ratio %v", res.Ratio)
	}
}

// TestRunRedis runs a tiny `netlock bench redis`; it skips when redis-server is not installed.
func TestRunRedis(t *testing.T) {
	res, err := RunRedis(context.Background(), RedisOptions{Duration: 200 * time.Millisecond,
		Workers: 2, Outstanding: 2, Rounds: 1, Shards: 2})
	if errors.Is(err, ErrNoRedis) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
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
	res, err := RunLoad(context.Background(), LoadConfig{Target: srv.Addr(), Workers: 2, Outstanding: 4,
		Duration: 300 * time.Millisecond, Retransmit: 20 * time.Millisecond, Drain: 5 * time.Second,
		Mode: wire.Exclusive})
	if err != nil {
		t.Fatal(err)
	}
	checkLoad(t, res)
	if res.Retransmits == 0 {
		t.Fatalf("no retransmissions under 5%% loss: %+v", res)
	}
}
