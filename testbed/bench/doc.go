// Package bench holds netlock's benchmark infrastructure: the references the lock server is
// measured against and the load that measures them. Every comparison runs both sides in the same
// process invocation, alternating, and reports a ratio, because the machines it runs on are shared
// and noisy.
//
//   - [EchoServer] is the reference for the lock server: a batched UDP server (recvmmsg/sendmmsg
//     through golang.org/x/net/ipv4, one goroutine per SO_REUSEPORT socket) that answers every
//     netlock request after the minimum per-packet work, and keeps no lock state.
//   - [RunLoad] is a closed-loop UDP load generator: workers with their own socket keep a number of
//     acquire/release cycles in flight on uncontended locks, match answers by (lock, txn),
//     retransmit lost requests, and report throughput and latency percentiles ([Histogram]).
//   - [CompareWithEcho] and [RunServerVsEcho] (`netlock bench server`) compare a lock server with
//     the echo server under the same load.
//   - [RunPairs] drives any [Locker] with goroutines that acquire and release their own lock in a
//     loop; [RedisLocker] implements Redis locking (SET NX PX, Lua compare-and-delete) and
//     [NetLockLocker] netlock locking through the client library. [RunRedis]
//     (`netlock bench redis`) starts redis-server ([StartRedis]) and compares the two.
//
// Results go to docs/performance.md with the command that produced them. Tests in this package run
// tiny versions and check progress and answer matching, never speed.
package bench
