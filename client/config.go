package client

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"time"

	"github.com/netlock-go/netlock/internal/clock"
	"github.com/netlock-go/netlock/wire"
)

// Clock is the client's source of time (package internal/clock): wire timestamps, lease
// deadlines, retransmissions and request timeouts all run on its monotonic clock (Mono), so a
// step of the wall clock moves no lease; the wall clock only serves [Grant.Deadline]'s estimate.
// Tests inject a manual clock.
type Clock = clock.Clock

// Timer is a stoppable, resettable one-shot timer of a [Clock] (clock.Timer). The client has
// one, for the next deadline of its core.
type Timer = clock.Timer

// SystemClock is the operating system's clocks (clock.System).
var SystemClock Clock = clock.System

// DefaultMaxAttempts is [Config.MaxAttempts]'s default.
const DefaultMaxAttempts = 16

// Config configures a [Client]. The zero value of every optional field selects the documented
// default.
type Config struct {
	// Servers are the UDP addresses ("host:port") of the lock servers. Lock l is sent to
	// Servers[l % len(Servers)] unless Route is set. At least one of Servers and Route is required.
	Servers []string
	// Route, if set, overrides the static partition: it returns the "host:port" of the server that
	// owns lock. It is called for every datagram sent (so a changed answer, after a failover,
	// applies to requests in flight, releases and renewals), under the client's mutex: it must
	// be quick and must not call the Client. The resolution of each distinct answer is cached.
	Route func(lock uint32) string
	// Switches are the addresses ("ip" or "ip:port") of ToR switches that may answer requests
	// for switch-resident locks. Answers are otherwise accepted only from the address a request
	// was sent to; the rest are dropped and counted (Stats.Foreign).
	Switches []string
	// Local is the local UDP address to bind, e.g. "127.0.0.1:0". Default ":0".
	Local string
	// ClientID, if non-zero, makes transaction ids deterministic: ClientID in the high 32 bits, a
	// counter in the low 32 bits. The caller must then keep ClientIDs unique among the clients of
	// a rack (tests and traces do). Default 0: ids from the client's random 64-bit id space
	// (crypto/rand keys; see docs/protocol.md, "Transaction ids").
	ClientID uint32

	// Tenant and Priority are sent with every acquire unless overridden per request.
	// Priority 0 is the highest.
	Tenant   uint16
	Priority uint8
	// Lease is the lease asked for on acquire and renewal; 0 asks for the server's default. It
	// must fit the protocol's 32-bit microsecond field.
	Lease time.Duration
	// KeepAlive renews each held lease with a lease-probe when a third of it has elapsed.
	KeepAlive bool

	// RetryInterval is the first retransmission interval of a request. Default 25ms.
	RetryInterval time.Duration
	// MaxRetryInterval bounds the exponential backoff of retransmissions. Default 500ms.
	// An acquire waiting in a queue keeps being retransmitted at this interval: the server
	// ignores the repeats, and a lost request is thereby re-sent.
	MaxRetryInterval time.Duration
	// RequestTimeout bounds a release, a renewal or a withdrawal when the caller's context does
	// not end earlier. Acquire waits as long as its context allows while its server answers
	// (MaxAttempts). Default 5s.
	RequestTimeout time.Duration
	// MaxAttempts bounds how many copies of a request are sent in a row to a server that sends
	// nothing back about it; the request then fails with an [*UnreachableError], whatever its
	// context allows. Anything from the server about the request's lock and transaction resets
	// the count: an answer, or, for an acquire that waits in the server's queue (the server
	// answers it only when it grants; a try acquire of an RDMA-backed lock may wait too, for the
	// ALock), the answer to the liveness probe (a lease-probe with token 0, which the server and
	// the switch refuse with not-holder) that goes with each of its retransmissions once
	// MaxAttempts/2 of them went unanswered (so a waiting acquire sends one probe per
	// MaxAttempts/2 retransmissions while the server answers). Default 16: with the default
	// intervals (25, 50, 100, 200, 400 ms, then
	// 500 ms, each up to a quarter shorter by jitter) an unreachable server is reported after
	// 4.7 to 6.3 s. Negative: no bound (the context alone ends the wait).
	MaxAttempts int

	// Batch, if above 1, packs up to Batch requests queued at once for the same server into one
	// datagram (a batch, wire.FlagBatch; docs/protocol.md "Batches"): under load one datagram
	// then carries several requests, alone a request still goes single. Retransmissions always
	// go single. The servers must accept batches (netlock server --accept-batch) and be reached
	// directly: a switch on the path answers or forwards only a batch's first request (the
	// others are retransmitted singly after RetryInterval), and a server that does not accept
	// batches drops them whole. 0 or 1: one request per datagram (the default). At most
	// wire.MaxBatch. Batched answers are read whatever Batch says.
	Batch int

	// WrapConn, if set, wraps the client's UDP socket, e.g. with faultnet in tests. The client
	// closes the returned conn on Close.
	WrapConn func(net.PacketConn) net.PacketConn
	// Logger receives debug and warning logs. Default: discard.
	Logger *slog.Logger
	// Clock is the time source. Default SystemClock.
	Clock Clock
}

func (c *Config) validate() error {
	if len(c.Servers) == 0 && c.Route == nil {
		return errors.New("client: config: no Servers and no Route")
	}
	if c.Lease < 0 || c.Lease/time.Microsecond > math.MaxUint32 {
		return fmt.Errorf("client: config: lease %v outside [0, %v]", c.Lease,
			time.Duration(math.MaxUint32)*time.Microsecond)
	}
	if c.Lease > 0 && c.Lease < time.Microsecond {
		return fmt.Errorf("client: config: lease %v below 1µs", c.Lease)
	}
	if c.RetryInterval < 0 || c.MaxRetryInterval < 0 || c.RequestTimeout < 0 {
		return errors.New("client: config: negative interval")
	}
	if c.Batch < 0 || c.Batch > wire.MaxBatch {
		return fmt.Errorf("client: config: batch %d outside [0, %d]", c.Batch, wire.MaxBatch)
	}
	if c.Local == "" {
		c.Local = ":0"
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = 25 * time.Millisecond
	}
	if c.MaxRetryInterval == 0 {
		c.MaxRetryInterval = 500 * time.Millisecond
	}
	if c.MaxRetryInterval < c.RetryInterval {
		c.MaxRetryInterval = c.RetryInterval
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 5 * time.Second
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = SystemClock
	}
	return nil
}
