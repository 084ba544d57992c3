package rackmodel

import (
	"time"

	"github.com/netlock-go/netlock/internal/latency"
)

// Counters are the rack's monotonic counters. Categories are kept apart: a grant is counted
// where it was made (SwitchGrants, ServerGrants) and where it was observed (Granted).
type Counters struct {
	// Clients.
	Txns           uint64 // committed transactions
	Aborts         uint64 // transactions given up (a reject, a lease lost, an acquire given up; a NetChain rollback)
	Rollbacks      uint64 // NetChain runs rolled back at their deadline (client.NetChainRollback; each an abort when done)
	Acquisitions   uint64 // locks of committed transactions
	AcquiresSent   uint64 // acquires sent (first sends)
	Granted        uint64 // acquires answered with a grant (first answer)
	Rejects        uint64 // acquires answered with a reject
	Abandoned      uint64 // acquires given up (unreachable server, Params.GiveUp): withdrawn
	ReleasesSent   uint64 // releases sent (first sends)
	ReleaseAcks    uint64 // releases acknowledged
	ReleaseRefused uint64 // releases answered with a reject (the grant had ended)
	LeasesLost     uint64 // held locks whose lease was ended by the rack
	Retransmits    uint64 // requests sent again after RetryTimeout (clientcore: flagged retry)
	DupAnswers     uint64 // a grant again for a held lock (answer to a retransmission)
	Stray          uint64 // answers matching no outstanding request (clientcore: unknown, stray grants, foreign)
	// Where grants were made.
	SwitchGrants uint64 // by p4/netlock.p4 (including requests pushed back from q2)
	ServerGrants uint64 // by a lock server's lockcore
	// Switch.
	SwitchPackets uint64 // packets the pipeline processed
	SwitchPasses  uint64 // their ingress passes (resubmits included)
	SwitchDropped uint64 // packets that reached a switch that was down
	EngineErrors  uint64 // packets the engine failed on (too many passes, ...)
	PacketIns     uint64 // packets the program sent to the CPU port outside admin requests
	// The overflow path of switch locks (q2 at the servers).
	Overflows    uint64 // acquires the switch sent to a server's q2 (no room in the lock's region)
	QueueEmpties uint64 // queue-empty notifications the servers received
	PushBacks    uint64 // requests the servers pushed back into the switch

	// Servers and network.
	ServerDropped  uint64 // packets that reached a server that was down
	ControlRefused uint64 // control messages without the rack key or from the wrong peer (srvcore)
	Malformed      uint64 // frames a host could not decode (and datagrams the servers dropped as such)
	Unroutable     uint64 // frames for a port, address or UDP port with nobody there
	Dropped        uint64 // frames a client's link lost (Params.Loss)
	Duplicated     uint64 // frames a client's link duplicated (Params.Dup)
}

// Sub returns c - o, field by field.
func (c Counters) Sub(o Counters) Counters {
	return Counters{
		Txns: c.Txns - o.Txns, Aborts: c.Aborts - o.Aborts, Rollbacks: c.Rollbacks - o.Rollbacks,
		Acquisitions: c.Acquisitions - o.Acquisitions,
		AcquiresSent: c.AcquiresSent - o.AcquiresSent, Granted: c.Granted - o.Granted, Rejects: c.Rejects - o.Rejects,
		ReleasesSent: c.ReleasesSent - o.ReleasesSent, ReleaseAcks: c.ReleaseAcks - o.ReleaseAcks,
		ReleaseRefused: c.ReleaseRefused - o.ReleaseRefused, LeasesLost: c.LeasesLost - o.LeasesLost,
		Retransmits: c.Retransmits - o.Retransmits, DupAnswers: c.DupAnswers - o.DupAnswers, Stray: c.Stray - o.Stray,
		SwitchGrants: c.SwitchGrants - o.SwitchGrants, ServerGrants: c.ServerGrants - o.ServerGrants,
		SwitchPackets: c.SwitchPackets - o.SwitchPackets, SwitchPasses: c.SwitchPasses - o.SwitchPasses,
		SwitchDropped: c.SwitchDropped - o.SwitchDropped, EngineErrors: c.EngineErrors - o.EngineErrors,
		PacketIns: c.PacketIns - o.PacketIns, ServerDropped: c.ServerDropped - o.ServerDropped,
		Overflows: c.Overflows - o.Overflows, QueueEmpties: c.QueueEmpties - o.QueueEmpties, PushBacks: c.PushBacks - o.PushBacks,
		ControlRefused: c.ControlRefused - o.ControlRefused, Malformed: c.Malformed - o.Malformed,
		Unroutable: c.Unroutable - o.Unroutable, Abandoned: c.Abandoned - o.Abandoned, Dropped: c.Dropped - o.Dropped,
		Duplicated: c.Duplicated - o.Duplicated,
	}
}

// Counters returns the counters so far.
func (r *Rack) Counters() Counters {
	c := r.stats
	for _, w := range r.workers {
		st := w.core.Stats()
		c.Retransmits += uint64(st.Retransmits)
		c.DupAnswers += uint64(st.DupGrants)
		c.Stray += uint64(st.Unknown + st.StrayGrants + st.Foreign)
		c.Malformed += uint64(st.Malformed)
	}
	for _, s := range r.servers {
		for _, n := range s.core.Refused() {
			c.ControlRefused += n
		}
		for _, n := range s.core.Malformed() {
			c.Malformed += n
		}
	}
	return c
}

// WorkerCounters are one worker's monotonic counters (Rack.WorkerCounters): a class of workers'
// share of the rack's (Figure 12's tenants and priorities).
type WorkerCounters struct {
	Txns         uint64        // committed transactions
	Aborts       uint64        // transactions given up
	Granted      uint64        // acquires answered with a grant
	Rejects      uint64        // acquires answered with a reject
	QuotaRejects uint64        // of them, refused for the tenant's quota (wire.StatusQuota)
	TxnTime      time.Duration // the committed transactions' latencies, summed (start to last release answered)
}

// Sub returns c - o, field by field.
func (c WorkerCounters) Sub(o WorkerCounters) WorkerCounters {
	return WorkerCounters{Txns: c.Txns - o.Txns, Aborts: c.Aborts - o.Aborts, Granted: c.Granted - o.Granted,
		Rejects: c.Rejects - o.Rejects, QuotaRejects: c.QuotaRejects - o.QuotaRejects, TxnTime: c.TxnTime - o.TxnTime}
}

// Add returns c + o, field by field.
func (c WorkerCounters) Add(o WorkerCounters) WorkerCounters {
	return WorkerCounters{Txns: c.Txns + o.Txns, Aborts: c.Aborts + o.Aborts, Granted: c.Granted + o.Granted,
		Rejects: c.Rejects + o.Rejects, QuotaRejects: c.QuotaRejects + o.QuotaRejects, TxnTime: c.TxnTime + o.TxnTime}
}

// WorkerCounters returns worker w's counters so far (0-based over the rack: client c's worker
// i is c*Workers+i); zero for a worker that does not exist.
func (r *Rack) WorkerCounters(w int) WorkerCounters {
	if w < 0 || w >= len(r.workers) {
		return WorkerCounters{}
	}
	return r.workers[w].stats
}

// latencies are the histograms of the current measurement window (ResetLatency).
type latencies struct {
	req latency.Histogram // acquire sent (first send) to grant received
	txn latency.Histogram // transaction start to its last release acknowledged
}

// ResetLatency starts new latency histograms.
func (r *Rack) ResetLatency() { r.lat = latencies{} }

// Latency returns the summaries of the acquire latency and the transaction latency since the
// last ResetLatency.
func (r *Rack) Latency() (acquire, txn latency.Latency) {
	return r.lat.req.Summary(), r.lat.txn.Summary()
}

// series is the rack's throughput over time (Figure 15): grants by the switch and by the servers
// and committed transactions per bucket.
type series struct {
	origin        int64
	bucket        int64
	sw, srv, txns []uint64
}

// Sample is one bucket of a Series.
type Sample struct {
	At           time.Duration // the bucket's start (virtual time since the rack started)
	SwitchGrants uint64
	ServerGrants uint64
	Txns         uint64
}

// StartSeries records throughput in buckets of width from now on (replacing any series): the
// first bucket starts now.
func (r *Rack) StartSeries(width time.Duration) {
	r.series = &series{origin: r.k.Now(), bucket: int64(width)}
}

// Series returns the buckets recorded so far.
func (r *Rack) Series() []Sample {
	s := r.series
	if s == nil {
		return nil
	}
	n := max(len(s.sw), len(s.srv), len(s.txns))
	out := make([]Sample, n)
	for i := range out {
		out[i].At = time.Duration(s.origin + int64(i)*s.bucket)
		if i < len(s.sw) {
			out[i].SwitchGrants = s.sw[i]
		}
		if i < len(s.srv) {
			out[i].ServerGrants = s.srv[i]
		}
		if i < len(s.txns) {
			out[i].Txns = s.txns[i]
		}
	}
	return out
}

func bump(v []uint64, i int) []uint64 {
	for len(v) <= i {
		v = append(v, 0)
	}
	v[i]++
	return v
}

func (s *series) grant(t int64, sw bool) {
	if s == nil {
		return
	}
	if t < s.origin {
		return
	}
	i := int((t - s.origin) / s.bucket)
	if sw {
		s.sw = bump(s.sw, i)
	} else {
		s.srv = bump(s.srv, i)
	}
}

func (s *series) txn(t int64) {
	if s == nil {
		return
	}
	if t < s.origin {
		return
	}
	s.txns = bump(s.txns, int((t-s.origin)/s.bucket))
}
