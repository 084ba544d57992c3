package bench

import (
	"context"
	"errors"
	"testing"
	"time"
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
