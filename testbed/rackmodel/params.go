package rackmodel

import (
	"errors"
	"fmt"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// Params are the rack model's parameters: the machines, the cost of each step of a request, and
// the switch's memory. Every figure made with the model states them (Params.Table). Zero fields
// take the defaults of PaperParams, which model the NetLock paper's testbed (section 6.1): one
// Tofino switch, ten client machines and two lock servers with 8-core CPUs and 40G NICs, the
// servers and clients on DPDK.
type Params struct {
	// Clients is the number of client machines (paper: 10 for Figures 10, 13 and 14).
	Clients int
	// Workers is the number of worker threads per client machine. A worker runs one transaction
	// at a time, closed loop (paper: 8-core clients; one worker per core).
	Workers int
	// Servers is the number of lock servers (paper: 2). Lock l is sent to server l mod Servers
	// (the client's default route, client.Config.Servers).
	Servers int
	// ServerCores is the number of cores of a lock server; each core runs one shard of the
	// server's srvcore.Core (lock l on shard l mod ServerCores, srvcore.Core.ShardIndex) and
	// serves its requests one at a time (paper: 8 cores, DPDK with RSS).
	ServerCores int

	// ServerCPU is a server core's time for one request: receive, lockcore step, send the
	// answers (run to completion, DPDK). Default 444ns: the paper's 18 MRPS per 8-core server.
	ServerCPU time.Duration
	// ClientCPU is a client worker's time to send one request or to take in one answer.
	// Default 100ns (the paper's clients generate up to 18 MRPS per machine).
	ClientCPU time.Duration
	// HostLatency is the one-way latency through a host's stack and NIC (DPDK, PCIe), paid once
	// when a host sends and once when it receives. Default 3µs: with the switch and links below
	// an acquire granted by the switch takes about 7µs from send to receipt, the paper's
	// Figure 8(a) (7.1µs average, "dominated by the processing latency at the client software
	// and NIC").
	HostLatency time.Duration
	// LinkGbps is the rate of every host-switch link, each direction. Default 40. A frame
	// occupies its link for (frame bytes + 20) * 8 / rate (preamble and gap included).
	LinkGbps float64
	// Propagation is the one-way propagation delay of a host-switch cable. Default 50ns.
	Propagation time.Duration
	// SwitchLatency is the switch's port-to-port latency for a packet that takes one pipeline
	// pass. Default 600ns (Tofino: under 1µs, paper section 6.2).
	SwitchLatency time.Duration
	// PassLatency is the latency of each further pass (resubmit or recirculation) of the same
	// packet. Default 200ns.
	PassLatency time.Duration
	// SwitchMpps is the rate of pipeline passes the switch sustains, in millions per second:
	// each pass occupies the pipeline for 1/rate. Default 4000 (the paper: "more than 4 billion
	// packets per second").
	SwitchMpps float64

	// Lease is the lease clients ask for, and the servers' default. Default 10ms.
	Lease time.Duration
	// RetryTimeout is how long a client waits for an answer before it sends the request again
	// (with the retry flag; client.Config.RetryInterval). A waiting acquire is re-sent too, with a
	// liveness probe. Default 5ms, so that runs without faults retransmit nothing.
	RetryTimeout time.Duration
	// ThinkTime is how long a transaction works while holding all its locks, between its last
	// grant and its releases (paper Figure 14). Default 0.
	ThinkTime time.Duration
	// ThinkEachLock makes a transaction think after every grant, not only after the last: the
	// next acquire is sent ThinkTime after a grant. (The paper's section 4.5 counts the think
	// time in the time a request occupies its slot; its Figure 14 numbers fit this reading:
	// about 80 request streams each doing one request per RTT + think time.)
	ThinkEachLock bool
	// Contention is the contention c_i the controller assumes for every lock whose queue it has
	// not seen deeper (ctlcore.Config.DefaultContention: the operator's setting); it sizes a
	// switch lock's region. Default 0: ctlcore's default, 1.
	Contention int
	// SizeEveryLevel makes the controller size both priority levels of a switch lock by its c_i
	// (ctlcore.Config.SizeEveryLevel), for workloads that use both; default false: level 1 gets
	// one slot.
	SizeEveryLevel bool

	// MaxRetryTimeout caps the clients' exponential backoff of retransmissions
	// (client.Config.MaxRetryInterval). Default RetryTimeout: every copy after RetryTimeout.
	MaxRetryTimeout time.Duration
	// MaxAttempts is client.Config.MaxAttempts: copies sent in a row to a server that says
	// nothing about the request before it fails as unreachable. Default 16 (the client's);
	// negative: no bound.
	MaxAttempts int
	// GiveUp is how long a client waits for a grant before it gives the acquire up (withdrawn,
	// history.Abandoned; the transaction aborts). Default 0: it waits as long as MaxAttempts
	// allows.
	GiveUp time.Duration
	// RequestTimeout bounds a release (client.Config.RequestTimeout). Default 5s.
	RequestTimeout time.Duration
	// Loss and Dup are the probabilities that a datagram on a client's link is lost or
	// duplicated, each direction (drawn from the seed). Default 0.
	Loss, Dup float64

	// SweepPeriod is the period of the controller's lease sweep (ctlcore.Config.SweepPeriod): the
	// switch's cookie, its grant counters, force-release of expired switch holders. Default 1ms.
	SweepPeriod time.Duration
	// PingPeriod is the period of the controller's pings of the servers; a server that misses
	// DeadAfter pings in a row is suspected and declared dead (ctlcore). Defaults 1ms, 3.
	PingPeriod time.Duration
	DeadAfter  int
	// LeaseMargin is added to the longest lease (2 x Lease, the switch's and servers' maximum)
	// when the controller waits out leases after a failure. Default 1ms.
	LeaseMargin time.Duration
	// PollInterval paces the controller's polls (a drain, a barrier) and its retries
	// (ctlcore.Config.PollInterval). Default 100µs.
	PollInterval time.Duration
	// AllocPeriod, if set, makes the controller run an allocation period on its own every
	// AllocPeriod while the clients run (ctlcore.Config.AllocPeriod). Default 0: periods run
	// only when asked (Rack.Allocate, on a quiesced rack).
	AllocPeriod time.Duration
	// Hysteresis is the allocator's (ctlcore.Config.Hysteresis). Default 0.
	Hysteresis float64
	// AdminDelay is the time each way of a control-plane operation on the switch: a P4Runtime
	// write or read, a pipeline push, an admin packet through the CPU port. Default 0: the
	// control plane's switch operations take no virtual time.
	AdminDelay time.Duration
	// EffectTimeout is when the controller's shell gives an operation up (ctlcore.ErrTimeout).
	// Default 200ms.
	EffectTimeout time.Duration
	// OutOfBandAdmin carries the controller's admin requests to the servers and their answers on
	// a management network of their own (AdminDelay each way) instead of through the switch.
	OutOfBandAdmin bool
	// ServerLease is the controller lease the servers enforce (srvcore.Config.ControllerLease,
	// ctlcore.Config.ServerLease). Default 0: none.
	ServerLease time.Duration
	// Standbys gives every lock server a standby (srvcore.Config.Standby) for its address on a
	// switch port of its own, run by the next server's machine (its cores); the controller fails a
	// dead server over to it. Without standbys a dead server's locks wait for it.
	Standbys bool
	// ServerPropagation, if set, is the propagation delay of the links between the switch and
	// the lock servers (a slow link keeps push-backs in flight longer). Default Propagation.
	ServerPropagation time.Duration
	// FsyncDelay is how long a lock server takes to persist a new token epoch
	// (srvcore.Out.Persist) before it acknowledges it. Default 0: at once.
	FsyncDelay time.Duration

	// Sizing is the switch program's sizes (dataplane.Sizing): the per-lock state entries bound
	// the number of switch locks, the pool the slots. Default: 16384 locks, 4 x 8192 slots.
	Sizing dataplane.Sizing
	// MaxRegion bounds one lock's region at one priority level, so that a release's walk stays
	// well under the engine's bound on passes per packet (docs/dataplane.md). Default 256.
	MaxRegion int
}

// PaperParams returns the defaults: the paper's testbed at its scale (10 clients, 2 servers).
func PaperParams() Params {
	p := Params{}
	p.fill()
	return p
}

func (p *Params) fill() {
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	defInt(&p.Clients, 10)
	defInt(&p.Workers, 8)
	defInt(&p.Servers, 2)
	defInt(&p.ServerCores, 8)
	defDur(&p.ServerCPU, 444*time.Nanosecond)
	defDur(&p.ClientCPU, 100*time.Nanosecond)
	defDur(&p.HostLatency, 3*time.Microsecond)
	if p.LinkGbps == 0 {
		p.LinkGbps = 40
	}
	defDur(&p.Propagation, 50*time.Nanosecond)
	defDur(&p.SwitchLatency, 600*time.Nanosecond)
	defDur(&p.PassLatency, 200*time.Nanosecond)
	if p.SwitchMpps == 0 {
		p.SwitchMpps = 4000
	}
	defDur(&p.Lease, 10*time.Millisecond)
	defDur(&p.RetryTimeout, 5*time.Millisecond)
	defDur(&p.MaxRetryTimeout, p.RetryTimeout)
	defInt(&p.MaxAttempts, client.DefaultMaxAttempts)
	defDur(&p.RequestTimeout, 5*time.Second)
	defDur(&p.SweepPeriod, time.Millisecond)
	defDur(&p.PingPeriod, time.Millisecond)
	defInt(&p.DeadAfter, 3)
	defDur(&p.LeaseMargin, time.Millisecond)
	defDur(&p.PollInterval, 100*time.Microsecond)
	defDur(&p.EffectTimeout, 200*time.Millisecond)
	defDur(&p.ServerPropagation, p.Propagation)
	if p.Sizing == (dataplane.Sizing{}) {
		p.Sizing = dataplane.Sizing{Locks: 16384, PartBits: 13}
	}
	defInt(&p.MaxRegion, 256)
}

// validate fills defaults and checks the parameters.
func (p *Params) validate() error {
	p.fill()
	switch {
	case p.Clients < 1 || p.Clients > 100:
		return fmt.Errorf("rackmodel: %d clients: want 1..100", p.Clients)
	case p.Workers < 1 || p.Workers > 1000:
		return fmt.Errorf("rackmodel: %d workers per client: want 1..1000", p.Workers)
	case p.Servers < 1 || p.Servers > 100:
		return fmt.Errorf("rackmodel: %d servers: want 1..100", p.Servers)
	case p.ServerCores < 1 || p.ServerCores > 256:
		return fmt.Errorf("rackmodel: %d server cores: want 1..256", p.ServerCores)
	case p.ServerCPU < 0 || p.ClientCPU < 0 || p.HostLatency < 0 || p.Propagation < 0 || p.SwitchLatency < 0 ||
		p.PassLatency < 0 || p.ThinkTime < 0 || p.AdminDelay < 0 || p.ServerPropagation < 0 || p.FsyncDelay < 0 ||
		p.GiveUp < 0 || p.ServerLease < 0 || p.AllocPeriod < 0 || p.Hysteresis < 0:
		return errors.New("rackmodel: negative cost, delay, period or think time")
	case p.Loss < 0 || p.Loss >= 1 || p.Dup < 0 || p.Dup >= 1:
		return errors.New("rackmodel: loss and duplication are probabilities below 1")
	case p.MaxRetryTimeout < p.RetryTimeout || p.RequestTimeout <= 0 || p.EffectTimeout <= 0 || p.PollInterval <= 0:
		return errors.New("rackmodel: max retry timeout below the retry timeout, or a timeout or poll interval not positive")
	case p.LinkGbps <= 0 || p.SwitchMpps <= 0:
		return errors.New("rackmodel: link and switch rates must be positive")
	case p.Lease < time.Microsecond || p.RetryTimeout < time.Microsecond:
		return errors.New("rackmodel: lease and retry timeout must be at least 1µs")
	case p.SweepPeriod < time.Microsecond || p.PingPeriod < time.Microsecond || p.DeadAfter < 1 || p.LeaseMargin < 0:
		return errors.New("rackmodel: sweep and ping periods must be at least 1µs, dead-after at least 1")
	case p.Contention < 0 || p.Contention > 1<<16-1:
		return fmt.Errorf("rackmodel: default contention %d: want 0..65535", p.Contention)
	case p.MaxRegion < 1 || p.MaxRegion > dataplane.MaxRegion:
		return fmt.Errorf("rackmodel: max region %d: want 1..%d", p.MaxRegion, dataplane.MaxRegion)
	}
	if err := p.Sizing.Validate(); err != nil {
		return fmt.Errorf("rackmodel: %w", err)
	}
	return nil
}

// Rows returns the parameters as (name, value, meaning) rows, for the tables next to figures.
func (p Params) Rows() [][3]string {
	p.fill()
	sz := p.Sizing
	rows := [][3]string{
		{"clients", fmt.Sprint(p.Clients), "client machines"},
		{"workers", fmt.Sprint(p.Workers), "worker threads per client, one transaction at a time each"},
		{"servers", fmt.Sprint(p.Servers), "lock servers"},
		{"server cores", fmt.Sprint(p.ServerCores), "cores (lockcore shards) per server"},
		{"server CPU", p.ServerCPU.String(), fmt.Sprintf("per request per core (%.1f MRPS per server)",
			float64(p.ServerCores)/p.ServerCPU.Seconds()/1e6)},
		{"client CPU", p.ClientCPU.String(), "per message sent or received by a worker"},
		{"host latency", p.HostLatency.String(), "stack and NIC, each way, at every host"},
		{"links", fmt.Sprintf("%g Gb/s, %v", p.LinkGbps, p.Propagation), "host-switch rate and propagation"},
		{"switch", fmt.Sprintf("%v + %v per extra pass, %g Mpps", p.SwitchLatency, p.PassLatency, p.SwitchMpps),
			"port-to-port latency, line rate in pipeline passes"},
		{"lease", p.Lease.String(), "asked by clients"},
		{"retry", retryString(p), "client retransmission timeout (client.Config.RetryInterval, MaxAttempts)"},
		{"think time", thinkString(p), "a transaction holds its locks this long"},
		{"default contention", fmt.Sprint(max(p.Contention, 1)), "the controller's c_i of a lock not seen deeper (ctlcore.Config.DefaultContention)"},
		{"controller", fmt.Sprintf("sweep %v, ping %v, dead after %d, lease margin %v, poll %v, switch operations %v",
			p.SweepPeriod, p.PingPeriod, p.DeadAfter, p.LeaseMargin, p.PollInterval, p.AdminDelay),
			"controlplane/ctlcore's periods and waits; the time of its switch operations each way"},
		{"switch memory", fmt.Sprintf("%d slots, %d locks, region <= %d", sz.Slots(), sz.Locks, p.MaxRegion),
			"netlock.p4's pool and per-lock state"},
	}
	if p.SizeEveryLevel {
		rows = append(rows, [3]string{"priority levels", "both sized by c_i",
			"the controller sizes level 1 of a switch lock as level 0 (ctlcore.Config.SizeEveryLevel)"})
	}
	return rows
}

// WithDefaults returns p with its zero fields set to PaperParams' values.
func (p Params) WithDefaults() Params {
	p.fill()
	return p
}

func retryString(p Params) string {
	s := p.RetryTimeout.String()
	if p.MaxRetryTimeout > p.RetryTimeout {
		s += " doubling to " + p.MaxRetryTimeout.String()
	}
	if p.MaxAttempts > 0 {
		s += fmt.Sprintf(", unreachable after %d", p.MaxAttempts)
	}
	return s
}

func thinkString(p Params) string {
	if p.ThinkEachLock && p.ThinkTime > 0 {
		return p.ThinkTime.String() + " after every grant"
	}
	return p.ThinkTime.String()
}
