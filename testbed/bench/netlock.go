package bench

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/wire"
)

// NetLockLocker takes exclusive netlock locks through the client library: lock l goes through
// client l % len(clients), so that the load is spread over several sockets as an application
// with several client processes would spread it.
type NetLockLocker struct {
	clients []*client.Client
}

// NewNetLockLocker creates n clients of the lock server at server ("host:port"), each on its own
// loopback UDP socket, asking for leases of lease (0: the server's default) and packing up to
// batch requests per datagram (client.Config.Batch; 0 or 1: one). The clients first
// retransmit after [BenchRetransmit], as the load generator does, instead of the library's 25 ms
// default: on a loaded two-core machine answers often take longer than 25 ms, and spurious
// retransmissions would only add load (loopback loses nothing unless a socket buffer overflows).
func NewNetLockLocker(server string, n int, lease time.Duration, batch int) (*NetLockLocker, error) {
	l := &NetLockLocker{}
	for i := 0; i < n; i++ {
		c, err := client.New(client.Config{Servers: []string{server}, Local: "127.0.0.1:0", Lease: lease,
			RetryInterval: BenchRetransmit, Batch: batch})
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("bench: netlock client: %w", err)
		}
		l.clients = append(l.clients, c)
	}
	return l, nil
}

// Close closes every client.
func (l *NetLockLocker) Close() error {
	var errs []error
	for _, c := range l.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Stats sums the clients' counters.
func (l *NetLockLocker) Stats() client.Stats {
	var s client.Stats
	for _, c := range l.clients {
		t := c.Stats()
		s.Sent += t.Sent
		s.Retransmits += t.Retransmits
		s.Datagrams += t.Datagrams
		s.Received += t.Received
		s.Malformed += t.Malformed
		s.Unknown += t.Unknown
		s.StrayGrants += t.StrayGrants
		s.DupGrants += t.DupGrants
		s.Overflow += t.Overflow
		s.Grants += t.Grants
		s.Rejects += t.Rejects
		s.LeaseLost += t.LeaseLost
		s.Renewals += t.Renewals
	}
	return s
}

// Acquire implements [Locker].
func (l *NetLockLocker) Acquire(ctx context.Context, lock uint32) (func(context.Context) error, error) {
	c := l.clients[int(lock)%len(l.clients)]
	g, err := c.Acquire(ctx, lock, wire.Exclusive)
	if err != nil {
		return nil, err
	}
	return g.Release, nil
}

// RedisOptions configures [RunRedis].
type RedisOptions struct {
	RunOptions
	// TTL is the Redis lock expiry (PX) and the netlock lease. 0 means 10 s.
	TTL time.Duration `json:"ttl_ns"`
	// Unix connects to Redis over its Unix socket instead of loopback TCP.
	Unix bool `json:"unix"`
	// ServerBin is a netlock binary: the lock server runs as its child process (`ServerBin
	// server`), a process of its own as redis-server is. Empty: the lock server runs inside the
	// benchmark's process, sharing its Go scheduler and garbage collector with the client
	// goroutines.
	ServerBin string `json:"server_bin,omitempty"`
	// Batch, if above 1, has the netlock clients pack up to Batch requests per datagram
	// (client.Config.Batch) and starts the lock server accepting batches (--accept-batch).
	// 0 or 1: one request per datagram, the default comparison.
	Batch int `json:"batch,omitempty"`
}

func (o *RedisOptions) setDefaults() {
	o.RunOptions.setDefaults()
	if o.TTL <= 0 {
		o.TTL = 10 * time.Second
	}
}

// RedisResult is the outcome of [RunRedis].
type RedisResult struct {
	Options      RedisOptions `json:"options"`
	RedisVersion string       `json:"redis_version"`
	// NetLock and Redis are the median runs (by pairs/s); the Runs fields hold every run.
	NetLock     PairResult   `json:"netlock"`
	Redis       PairResult   `json:"redis"`
	NetLockRuns []PairResult `json:"netlock_runs"`
	RedisRuns   []PairResult `json:"redis_runs"`
	// Ratio is netlock's median pairs/s over Redis's. RoundRatios are the ratios of the runs of
	// each round (run close together in time, so they share the machine's load of the moment).
	Ratio       float64   `json:"ratio"`
	RoundRatios []float64 `json:"round_ratios"`
	// Raw is the median run of the same lock workload against the same lock server driven by
	// the batched UDP load generator ([RunLoad], Workers sockets with Outstanding cycles in
	// flight each) instead of the client library: what the protocol and server allow without
	// the library's per-request cost. RawPairsPerSec is its pairs/s and RawRatio that over
	// Redis's median. Supplementary: the headline ratio is Ratio.
	Raw            LoadResult   `json:"raw"`
	RawRuns        []LoadResult `json:"raw_runs"`
	RawPairsPerSec float64      `json:"raw_pairs_per_sec"`
	RawRatio       float64      `json:"raw_ratio"`
	// Target is the ratio docs/targets.md asks for.
	Target float64 `json:"target"`
	// RedisRetries counts SET NX attempts that found a lock taken (none are expected: locks are
	// not shared between goroutines). NetLockRetransmits counts client retransmissions.
	RedisRetries       uint64 `json:"redis_retries"`
	NetLockRetransmits int64  `json:"netlock_retransmits"`
	// NetLockRequests and NetLockDatagrams count the requests the netlock clients sent and the
	// datagrams that carried them (fewer with Batch).
	NetLockRequests  int64 `json:"netlock_requests"`
	NetLockDatagrams int64 `json:"netlock_datagrams"`
}

// RedisTarget is the netlock/Redis ratio docs/targets.md asks for.
const RedisTarget = 5.0

// RunRedis starts redis-server ([StartRedis]; [ErrNoRedis] if it is not installed) and a lock
// server on loopback (a child process running opts.ServerBin, or in this process without it),
// and runs the same lock workload ([RunPairs]) against each
// in rotating rounds: Redis locks (SET NX PX + compare-and-delete script, via go-redis), netlock
// locks through the client library, and, as a supplementary reference, netlock driven by the raw
// batched load generator. It stops redis-server before returning. This is
// `netlock bench redis`.
func RunRedis(ctx context.Context, opts RedisOptions) (RedisResult, error) {
	opts.setDefaults()
	res := RedisResult{Options: opts, Target: RedisTarget}
	rs, err := StartRedis(ctx)
	if err != nil {
		return res, err
	}
	defer rs.Stop()
	res.RedisVersion = rs.Version(ctx)
	start := startLockServer
	if opts.ServerBin != "" {
		start = func(ctx context.Context, shards int, acceptBatch bool) (netip.AddrPort, func() error, error) {
			return startLockServerProcess(ctx, opts.ServerBin, shards, acceptBatch)
		}
	}
	addr, stop, err := start(ctx, opts.Shards, opts.Batch > 1)
	if err != nil {
		return res, err
	}
	defer stop()

	conc := opts.Workers * opts.Outstanding
	redisAddr := rs.Addr
	if opts.Unix {
		redisAddr = rs.Socket
	}
	rl := NewRedisLocker(redisAddr, conc, opts.TTL)
	defer rl.Close()
	nl, err := NewNetLockLocker(addr.String(), opts.Workers, opts.TTL, opts.Batch)
	if err != nil {
		return res, err
	}
	defer nl.Close()

	run := 0
	pairs := func(name string, l Locker) (PairResult, error) {
		run++
		return RunPairs(ctx, name, l, PairConfig{Concurrency: conc, Duration: opts.Duration,
			Warmup: opts.Warmup, LockBase: uint32(run * conc)})
	}
	for r := 0; r < opts.Rounds; r++ {
		// Rotate the order every round: netlock, redis, raw; then redis, raw, netlock; ...
		for i := 0; i < 3; i++ {
			switch (r + i) % 3 {
			case 0:
				pr, err := pairs("netlock", nl)
				if err != nil {
					return res, err
				}
				res.NetLockRuns = append(res.NetLockRuns, pr)
			case 1:
				pr, err := pairs("redis", rl)
				if err != nil {
					return res, err
				}
				res.RedisRuns = append(res.RedisRuns, pr)
			case 2:
				run++
				lr, err := RunLoad(ctx, LoadConfig{Target: addr, Workers: opts.Workers,
					Outstanding: opts.Outstanding, Duration: opts.Duration, Warmup: opts.Warmup,
					LockBase: uint32(run * conc), Mode: wire.Exclusive})
				if err != nil {
					return res, fmt.Errorf("bench: raw netlock run: %w", err)
				}
				res.RawRuns = append(res.RawRuns, lr)
			}
		}
	}
	res.NetLock, res.Redis = medianPairs(res.NetLockRuns), medianPairs(res.RedisRuns)
	res.Raw = medianLoad(res.RawRuns)
	res.RawPairsPerSec = float64(res.Raw.Pairs) / opts.Duration.Seconds()
	if res.Redis.PairsPerSec > 0 {
		res.Ratio = res.NetLock.PairsPerSec / res.Redis.PairsPerSec
		res.RawRatio = res.RawPairsPerSec / res.Redis.PairsPerSec
	}
	for i := range res.RedisRuns {
		if res.RedisRuns[i].PairsPerSec > 0 {
			res.RoundRatios = append(res.RoundRatios, res.NetLockRuns[i].PairsPerSec/res.RedisRuns[i].PairsPerSec)
		}
	}
	res.RedisRetries = rl.Retries.Load()
	st := nl.Stats()
	res.NetLockRetransmits, res.NetLockRequests, res.NetLockDatagrams = st.Retransmits, st.Sent, st.Datagrams
	if err := stop(); err != nil {
		return res, fmt.Errorf("bench: lock server: %w", err)
	}
	return res, nil
}
