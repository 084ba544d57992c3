package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/testenv"
)

func startRedisForTest(t *testing.T) *RedisServer {
	t.Helper()
	s, err := StartRedis(context.Background())
	if errors.Is(err, ErrNoRedis) {
		testenv.Missing(t, "redis-server", RedisInstallHint)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func TestRedisLocker(t *testing.T) {
	s := startRedisForTest(t)
	ctx := context.Background()
	if v := s.Version(ctx); v == "" {
		t.Fatal("no version")
	}
	l := NewRedisLocker(s.Addr, 4, 10*time.Second)
	defer l.Close()
	rel, err := l.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	// A second acquire spins while the lock is held and succeeds after the release.
	got := make(chan error, 1)
	go func() {
		rel2, err := l.Acquire(ctx, 1)
		if err == nil {
			err = rel2(ctx)
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-got:
		t.Fatalf("second acquire returned while held: %v", err)
	default:
	}
	if err := rel(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if l.Retries.Load() == 0 {
		t.Fatal("no retries counted")
	}
	// Releasing twice is refused: the key is no longer ours.
	if err := rel(ctx); err == nil {
		t.Fatal("double release accepted")
	}
	// An acquire whose context ends while it spins gives up.
	rel, err = l.Acquire(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := l.Acquire(cctx, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire on held lock: %v", err)
	}
	if err := rel(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRunPairsRedis(t *testing.T) {
	s := startRedisForTest(t)
	l := NewRedisLocker(s.Socket, 4, 10*time.Second)
	defer l.Close()
	var res PairResult
	untilProgress(t, func(d time.Duration) bool {
		var err error
		res, err = RunPairs(context.Background(), "redis", l, PairConfig{Concurrency: 4,
			Duration: d, Warmup: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return res.Pairs > 0
	})
	t.Logf("%+v", res)
	if res.Pairs == 0 || res.Pair.Count != res.Pairs || res.Acquire.P99 <= 0 || res.Release.P99 <= 0 {
		t.Fatalf("%+v", res)
	}
}
