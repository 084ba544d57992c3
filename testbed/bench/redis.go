package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// RedisInstallHint is the command that installs the Redis server the benchmark runs.
const RedisInstallHint = "apt-get install -y redis-server"

// ErrNoRedis is returned when redis-server is not on PATH.
var ErrNoRedis = errors.New("bench: redis-server not found; install it with: " + RedisInstallHint)

// RedisServer is a redis-server process started for a benchmark: loopback only, no persistence,
// its files in a temporary directory that Stop removes.
type RedisServer struct {
	// Addr is the loopback TCP address it listens on.
	Addr string
	// Socket is the path of its Unix socket.
	Socket string

	cmd    *exec.Cmd
	dir    string
	done   chan struct{}
	stderr bytes.Buffer
}

// StartRedis starts redis-server on a free loopback TCP port and a Unix socket in a temporary
// directory, with persistence off (--save "" --appendonly no), and waits until it answers PING.
// It returns [ErrNoRedis] when redis-server is not installed.
func StartRedis(ctx context.Context) (*RedisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedis
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := startRedis(ctx, bin)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startRedis(ctx context.Context, bin string) (*RedisServer, error) {
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, fmt.Errorf("bench: free port: %w", err)
	}
	dir, err := os.MkdirTemp("", "netlock-redis-")
	if err != nil {
		return nil, err
	}
	s := &RedisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Socket: filepath.Join(dir, "redis.sock"), dir: dir, done: make(chan struct{})}
	s.cmd = exec.Command(bin,
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--unixsocket", s.Socket, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning", "--logfile", "")
	s.cmd.Stdout = &s.stderr
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bench: start redis-server: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	rdb := redis.NewClient(redisOptions(s.Addr, 1))
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			s.Stop()
			return nil, fmt.Errorf("bench: redis-server exited: %s", bytes.TrimSpace(s.stderr.Bytes()))
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Stop()
			return nil, fmt.Errorf("bench: redis-server at %s does not answer: %w", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Version returns the server's version string (INFO server redis_version).
func (s *RedisServer) Version(ctx context.Context) string {
	rdb := redis.NewClient(redisOptions(s.Addr, 1))
	defer rdb.Close()
	info, err := rdb.InfoMap(ctx, "server").Result()
	if err != nil {
		return ""
	}
	return info["Server"]["redis_version"]
}

// Stop kills the server, waits for it and removes its directory.
func (s *RedisServer) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
	os.RemoveAll(s.dir)
}

func redisOptions(addr string, pool int) *redis.Options {
	return &redis.Options{
		Addr:                     addr,
		PoolSize:                 pool,
		MinIdleConns:             pool,
		Protocol:                 2,
		DisableIdentity:          true,
		MaxRetries:               -1,
		ReadTimeout:              5 * time.Second,
		WriteTimeout:             5 * time.Second,
		PoolTimeout:              10 * time.Second,
		ContextTimeoutEnabled:    true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}

// redisRelease deletes the lock key only if it still holds our token (the usual compare-and-delete
// of Redis locking; a plain DEL could delete a lock that expired and was taken by someone else).
var redisRelease = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then
	return redis.call("del", KEYS[1])
else
	return 0
end`)

// RedisLocker takes locks in Redis the usual single-instance way: SET key token NX PX ttl to
// acquire, retried with a small backoff while the key exists, and the compare-and-delete script to
// release.
type RedisLocker struct {
	rdb   *redis.Client
	ttl   time.Duration
	token atomic.Uint64
	// Retries counts SET NX attempts that found the lock taken.
	Retries atomic.Uint64
}

// NewRedisLocker connects to addr ("host:port" or a Unix socket path) with a pool of pool
// connections; ttl is the lock's expiry (PX).
func NewRedisLocker(addr string, pool int, ttl time.Duration) *RedisLocker {
	return &RedisLocker{rdb: redis.NewClient(redisOptions(addr, pool)), ttl: ttl}
}

// Close closes the connection pool.
func (l *RedisLocker) Close() error { return l.rdb.Close() }

// Acquire implements [Locker].
func (l *RedisLocker) Acquire(ctx context.Context, lock uint32) (func(context.Context) error, error) {
	key := "netlock:bench:" + strconv.FormatUint(uint64(lock), 10)
	token := strconv.FormatUint(l.token.Add(1), 10)
	ttl := strconv.FormatInt(l.ttl.Milliseconds(), 10)
	backoff := 20 * time.Microsecond
	for {
		err := l.rdb.Do(ctx, "set", key, token, "nx", "px", ttl).Err()
		if err == nil {
			break
		}
		if !errors.Is(err, redis.Nil) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if _, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) {
				// go-redis sets the socket deadline to the context's, which can expire just
				// before the context reports it.
				return nil, fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
			}
			return nil, fmt.Errorf("bench: redis SET NX: %w", err)
		}
		l.Retries.Add(1)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, time.Millisecond)
	}
	return func(ctx context.Context) error {
		n, err := redisRelease.Run(ctx, l.rdb, []string{key}, token).Int()
		if err != nil {
			return fmt.Errorf("bench: redis release: %w", err)
		}
		if n != 1 {
			return fmt.Errorf("bench: redis release of %s: lock was no longer ours", key)
		}
		return nil
	}, nil
}
