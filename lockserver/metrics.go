package lockserver

import (
	"strings"

	"github.com/netlock-go/netlock/lockserver/srvcore"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// Stats sums the shards' core statistics.
func (s *Server) Stats() lockcore.Stats { return s.core.Stats() }

// Malformed returns the number of dropped datagrams by reason.
func (s *Server) Malformed() map[string]uint64 {
	m := make(map[string]uint64, srvcore.BadReasons)
	for i, v := range s.core.Malformed() {
		m[srvcore.BadNames[i]] = v
	}
	return m
}

// ControlRefused returns the number of control messages refused, by reason (docs/protocol.md,
// "Who may send what").
func (s *Server) ControlRefused() map[string]uint64 {
	m := make(map[string]uint64, srvcore.RefusedReasons)
	for i, v := range s.core.Refused() {
		m[srvcore.RefusedNames[i]] = v
	}
	return m
}

// collector exports the server's counters to Prometheus, read from the cores at scrape time so
// that the packet path updates no metric.
type collector struct{ s *Server }

var (
	descRequests  = prometheus.NewDesc("netlock_requests_total", "Requests processed, by op.", []string{"op"}, nil)
	descGrants    = prometheus.NewDesc("netlock_grants_total", "Locks granted.", nil, nil)
	descRejects   = prometheus.NewDesc("netlock_rejects_total", "Requests rejected, by reason.", []string{"reason"}, nil)
	descExpiries  = prometheus.NewDesc("netlock_lease_expiries_total", "Leases that ran out.", nil, nil)
	descReleases  = prometheus.NewDesc("netlock_releases_total", "Releases applied.", nil, nil)
	descPushBacks = prometheus.NewDesc("netlock_pushbacks_total", "Buffered requests pushed back to the switch.", nil, nil)
	descMalformed = prometheus.NewDesc("netlock_malformed_packets_total", "Datagrams dropped, by reason.", []string{"reason"}, nil)
	descDepth     = prometheus.NewDesc("netlock_queue_depth", "Requests waiting for a lock.", nil, nil)
	descHolders   = prometheus.NewDesc("netlock_holders", "Requests holding a lock.", nil, nil)
	descLocks     = prometheus.NewDesc("netlock_locks", "Locks with requests.", nil, nil)
	descBuffered  = prometheus.NewDesc("netlock_overflow_buffered", "Requests buffered in q2 for switch locks.", nil, nil)
	descPackets   = prometheus.NewDesc("netlock_packets_total", "Datagrams received and sent.", []string{"dir"}, nil)
	descRefused   = prometheus.NewDesc("netlock_control_refused_total", "Control messages dropped unanswered, by reason.", []string{"reason"}, nil)
	descEpoch     = prometheus.NewDesc("netlock_token_epoch", "The fencing-token epoch in force.", nil, nil)
	descResDrop   = prometheus.NewDesc("netlock_resident_dropped_total", "New acquires of switch-resident locks dropped (the client retransmits through the switch).", nil, nil)
	descAdopted   = prometheus.NewDesc("netlock_adopted_total", "Buffered requests moved into a lock's queue when the lock left the switch.", nil, nil)
	descHeld      = prometheus.NewDesc("netlock_grants_held", "1 while every grant is held (a standby before its takeover, a lapsed controller lease).", nil, nil)
	descTerm      = prometheus.NewDesc("netlock_controller_term", "The largest controller term seen.", nil, nil)
	descBound     = prometheus.NewDesc("netlock_bound_reached_total", "Requests refused (or, for holders, made to wait) at a bound of the server, by bound.", []string{"bound"}, nil)
	descWaitExp   = prometheus.NewDesc("netlock_wait_expired_total", "Queued requests dropped because their client stopped retransmitting (wait lease).", nil, nil)
	descReplays   = prometheus.NewDesc("netlock_replays_total", "Acquires of requests that had ended, not accepted again.", nil, nil)
	descRemember  = prometheus.NewDesc("netlock_ended_remembered", "Ended requests remembered to filter replays.", nil, nil)

	descUnreadDrop = prometheus.NewDesc("netlock_stats_unread_dropped_total", "Locks whose AdminStats counts were dropped unread after their state was freed, at the bound of kept counts (lockcore Config.MaxUnreadStats).", nil, nil)
	descUnreadReqs = prometheus.NewDesc("netlock_stats_unread_dropped_requests_total", "Requests and overflows in the AdminStats counts dropped so.", nil, nil)

	descRDMAGrants  = prometheus.NewDesc("netlock_rdma_proxy_grants_total", "UDP grants of RDMA locks sent after the server took the ALock.", nil, nil)
	descRDMADropped = prometheus.NewDesc("netlock_rdma_proxy_dropped_total", "UDP grants of RDMA locks that ended before the ALock was taken.", nil, nil)
	descRDMATry     = prometheus.NewDesc("netlock_rdma_try_refused_total", "Try acquires refused because the ALock was held outside UDP.", nil, nil)
	descRDMAProxies = prometheus.NewDesc("netlock_rdma_proxies", "Proxy goroutines serving UDP grants of RDMA locks.", nil, nil)
	descRDMAPeers   = prometheus.NewDesc("netlock_rdma_peers", "Remote RDMA nodes that joined.", nil, nil)
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descGrants, descRejects, descExpiries, descReleases,
		descPushBacks, descMalformed, descDepth, descHolders, descLocks, descBuffered, descPackets,
		descRefused, descEpoch, descResDrop, descAdopted, descHeld, descTerm, descBound, descWaitExp, descReplays,
		descRemember, descUnreadDrop, descUnreadReqs, descRDMAGrants, descRDMADropped, descRDMATry, descRDMAProxies, descRDMAPeers} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	for op := wire.Op(0); op.Valid(); op++ {
		counter(descRequests, st.Requests[op], op.String())
	}
	for s := wire.Status(1); !strings.HasPrefix(s.String(), "status("); s++ {
		counter(descRejects, st.Rejects[s], s.String())
	}
	counter(descGrants, st.Grants)
	counter(descExpiries, st.Expired)
	counter(descReleases, st.Released)
	counter(descPushBacks, st.PushedBack)
	for reason, v := range c.s.Malformed() {
		counter(descMalformed, v, reason)
	}
	for reason, v := range c.s.ControlRefused() {
		counter(descRefused, v, reason)
	}
	counter(descPackets, c.s.recv.Load(), "in")
	counter(descPackets, c.s.sent.Load(), "out")
	gauge(descDepth, st.Waiters)
	gauge(descHolders, st.Holders)
	gauge(descLocks, st.Locks)
	gauge(descBuffered, st.Buffered)
	gauge(descEpoch, int(c.s.Epoch()))
	counter(descResDrop, st.ResidentDropped)
	counter(descAdopted, st.Adopted)
	held := 0
	if c.s.Holding() {
		held = 1
	}
	gauge(descHeld, held)
	gauge(descTerm, int(c.s.Term()))
	for bound, v := range map[string]uint64{"locks": st.AtMaxLocks, "requests": st.AtMaxRequests, "waiters": st.AtMaxWaiters,
		"buffered": st.AtMaxBuffered, "holders": st.AtMaxHolders} {
		counter(descBound, v, bound)
	}
	counter(descWaitExp, st.WaitExpired)
	counter(descReplays, st.Replays)
	gauge(descRemember, st.Remembered)
	counter(descUnreadDrop, st.UnreadDropped)
	counter(descUnreadReqs, st.UnreadDroppedRequests)
	if rs, ok := c.s.RDMAStats(); ok {
		counter(descRDMAGrants, rs.ProxyGrants)
		counter(descRDMADropped, rs.ProxyDropped)
		counter(descRDMATry, rs.TryRefused)
		gauge(descRDMAProxies, rs.Proxies)
		gauge(descRDMAPeers, rs.Peers)
	}
}
