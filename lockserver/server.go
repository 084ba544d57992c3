// Package lockserver is netlock's lock server: it owns the locks that are not in the switch and
// buffers the overflow of switch locks (q2), speaking the protocol of docs/protocol.md over UDP.
//
// The server is the I/O shell around the pure server core, package srvcore, which holds every
// rule: the shards of lockcore.Core, who may send what, the token epoch, the grant holds, the
// controller's admin operations. The shell owns the socket (one, bound exclusively, so that no
// other process can share the address), reads batches (recvmmsg through golang.org/x/net/ipv4),
// hands each datagram to the core, writes the answers in batches (sendmmsg), persists the epoch
// the core asks for (the state file) before acknowledging it, runs the core's Tick every
// SweepInterval, and exports metrics. Its clock is monotonic (internal/clock).
//
// Malformed datagrams and ops a server does not accept are counted and dropped. On shutdown the
// server answers every packet it has read, then rejects the waiting requests (status shutdown),
// tells the holders their leases will not be renewed, and records in the state file when those
// leases end.
//
// # Batches
//
// With Config.AcceptBatch (--accept-batch; off by default) a datagram may carry several client
// requests (wire.FlagBatch, docs/protocol.md "Batches"): the core handles each of its headers as
// a datagram of its own, and the answers to a batching client from one recvmmsg read leave as
// batch datagrams. Batches are for clients that reach the server directly: a switch on the path
// answers or forwards a batch's first header only.
//
// # Who may send what
//
// Control messages (overflow and queue-empty from the switch, admin from the controller, RDMA
// joins from remote RDMA clients) are processed only when they come from an address listed in
// Config.Peers for that op and carry Config.RackKey in their 8-byte trailer; anything else is
// dropped unanswered and counted by reason (ControlRefused, netlock_control_refused_total). A
// server without a rack key refuses every control message. Push-backs and admin replies the server
// sends carry the key. The key never appears in logs (wire.Key redacts itself).
//
// # Fencing tokens
//
// Tokens are epoch-major (token = epoch<<wire.EpochShift | count): the epoch is persisted in
// Config.StateFile and bumped, fsync'd, before the first grant of every start, so tokens grow
// across restarts without any clock; Config.TakeoverEpoch hands a replacement server the failed
// server's epoch; the admin sub-operation token floor (wire.AdminTokenFloor) raises the floor of
// one lock's shard or of all shards at runtime, moving to a later epoch first when the floor lies
// beyond half of the current one.
//
// # RDMA tier
//
// With Config.RDMA.Locks = N > 0 (netlock server --rdma --rdma-locks N) the server owns an
// emulated RDMA node (rdma/emu, node id 0) whose registered memory holds an ALock table of N
// locks (rdma/alock); lock ids below N are RDMA-backed, the others behave as above. One lock is
// then taken three ways, and ALock alone arbitrates between them:
//
//   - co-located goroutines call [Server.LocalLocks] and take it in ALock's local cohort (CPU
//     atomics on the server node's memory), spinning in their own goroutine;
//   - UDP clients send acquires as usual. The shard's core still orders them (a shared acquire of
//     an RDMA lock is made exclusive first: ALock is exclusive-only), but a grant the core makes
//     for an RDMA lock is not sent: the shard queues it for the lock's proxy goroutine, which
//     takes the ALock in the local cohort on the client's behalf and only then sends the grant.
//     The core serialises UDP holders, so one proxy acquisition per lock is outstanding at most;
//   - remote clients (client/rdmaclient) join over UDP admin sub-operations and take it in the
//     remote cohort with verbs over emu's TCP transport (Config.RDMA.Listen).
//
// With Config.RDMA.Mode = RDMAModeRW (--rdma-mode rw) the table holds RMA-RW locks (rdma/rma)
// instead and shared acquisitions are shared on all three paths (rdma_rw.go).
//
// The tier hooks into the server core as a srvcore.Tier (Intercept, Filter, Tick): it is not in
// the packet loop. Readers and the sweeper never wait for an ALock: they only queue grants and, after a
// step or an expiry that may have ended a UDP holder of an RDMA lock (release, lease expiry,
// admin reset), mark the queued grants the core no longer lists as holders (Core.Inspect) as
// ended. The proxy sends a grant only if it has not ended by the time the ALock is taken (else
// it gives the ALock back unsent), sends it under the lock's mutex so that it precedes any later
// answer about that holder, and unlocks once the holder has ended. While a grant waits for its
// ALock the sweeper keeps its lease alive (a lease probe stepped on the client's behalf every
// third of the lease, its answer dropped), so the lease effectively starts when the grant is
// sent. Lock order: shard.mu, then the per-lock mutex, then the proxies' send mutex and the
// waiting set's mutex.
//
// On shutdown, after the UDP drain, the tier stops its NIC, abandons every spin on the server's
// node (the table is discarded with the node; nothing is unlocked), answers the grants still
// waiting for their ALock with reject shutdown, and waits for its goroutines. ALock has no
// leases: a remote client that dies holding or waiting for a lock blocks it until the server
// restarts. docs/architecture.md ("RDMA tier") and docs/protocol.md ("RDMA admin") have the
// details.
package lockserver

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/internal/clock"
	"github.com/netlock-go/netlock/lockserver/srvcore"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netlock-go/netlock/internal/udpbatch"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// Clock is the server's source of time (package internal/clock): leases, grace periods,
// controller leases and rates run on its monotonic clock, so a step of the wall clock expires
// nothing and extends nothing (docs/protocol.md, "Leases and clocks"). The zero Config uses
// clock.System.
type Clock = clock.Clock

// Config configures a Server.
type Config struct {
	// Listen is the UDP address to serve. Default "0.0.0.0:8888".
	Listen string
	// Shards is the number of lock partitions. Default GOMAXPROCS.
	Shards int
	// Sockets is the number of reader goroutines, each with its own descriptor of the server's
	// one socket (bound exclusively: no other process can bind the address or join it; a second
	// server on the address fails to start). Default 1. With several, datagrams of one sender
	// may be stepped out of their arrival order (each reader takes whole batches): the protocol
	// tolerates it (it tolerates a reordering network), but the switch's overflow and queue-empty
	// then race more often.
	Sockets int
	// Batch is the number of datagrams read or written per system call. Default 64.
	Batch int
	// AcceptBatch accepts batch datagrams from clients that reach the server directly
	// (srvcore.Config.AcceptBatch, docs/protocol.md "Batches"): each header is handled as a
	// datagram of its own, and the answers to the batch's sender go back batched. Off (the
	// default), batches are dropped whole and counted (malformed, reason batch-off). Leave it off
	// for a server behind a switch that does not drop batches itself.
	AcceptBatch bool
	// SweepInterval is how often leases are checked. Default 1ms.
	SweepInterval time.Duration
	// Core configures every shard's lock core. TokenBase is set by the server (from its epoch).
	Core lockcore.Config
	// RackKey is the key every control message (overflow, queue-empty, admin) must carry in its
	// trailer, and the key the server puts on the control messages it sends (push-back, admin
	// replies). 0: no key; every control message is then refused.
	RackKey wire.Key
	// Peers says which source addresses may send which control message; a control message from
	// anyone else is refused, key or not (docs/protocol.md, "Who may send what").
	Peers Peers
	// StateFile is where the server persists its fencing-token epoch and the longest lease it
	// may grant (a few bytes, fsync'd). The epoch is bumped before the first grant of every
	// start, so tokens grow across restarts whatever the clock says. A server that finds its
	// state file restarted and may have granted leases that still run: it grants nothing for
	// the restart grace, the longest lease its previous run may have granted (after a graceful
	// shutdown on the same boot, only what is left of the leases it had granted). A missing
	// state file is an error unless InitState. Empty: the state is kept in memory only, a
	// restarted server starts again at TakeoverEpoch+1 and waits for nothing (tests; netlock
	// server always sets a file).
	StateFile string
	// InitState creates a new state file: the server is new. New fails if the file exists.
	InitState bool
	// UnsafeSkipRestartGrace grants at once after a restart, although the previous run's
	// leases may still run: two holders of one lock, unless the operator knows that no client
	// held a lock of this server. For tests and emergencies; the server says so in its log.
	UnsafeSkipRestartGrace bool
	// TakeoverEpoch is the epoch of the server whose locks this one takes over (its Epoch, or
	// the token of its admin ping reply): this server's epoch, hence every token it grants, is
	// larger. Use it with TakeoverGrace.
	TakeoverEpoch uint64
	// TakeoverGrace holds all grants for this long after start: set it to at least the longest
	// lease when this server takes over the locks of a failed one.
	TakeoverGrace time.Duration
	// Clock is the time source. If nil, the system clock.
	Clock Clock
	// Logger receives the server's logs. If nil, logs are discarded.
	Logger *slog.Logger
	// Registerer receives the server's metrics. If nil, metrics are not registered.
	Registerer prometheus.Registerer
	// WrapConn, if set, wraps each socket (tests inject faults with faultnet). A wrapped socket is
	// served one datagram at a time: batching needs the raw socket.
	WrapConn func(net.PacketConn) net.PacketConn
	// RDMA configures the ALock table (RDMA.Locks > 0 enables it; see the package documentation).
	RDMA RDMAConfig
	// Standby makes the server a standby for a failed server's address: it queues requests but
	// grants nothing until the controller's wire.AdminTakeover (which hands it the failed
	// server's epoch and a grace period).
	Standby bool
	// TestingKnobs are for tests only.
	TestingKnobs TestingKnobs
	// ControllerLease, if positive, fences the server to the controller: each authenticated admin
	// ping renews the server's authority for this long, and the server grants nothing while it
	// has none (the controller declares a server dead only after it stopped pinging it and this
	// lease has run out, so a server it cut off cannot grant beside its replacement;
	// docs/controlplane.md, "Failures"). The server starts with one lease of authority. 0: no
	// fencing.
	ControllerLease time.Duration
}

func (c *Config) validate() error {
	if c.Listen == "" {
		c.Listen = fmt.Sprintf("0.0.0.0:%d", wire.Port)
	}
	if c.Shards == 0 {
		c.Shards = runtime.GOMAXPROCS(0)
	}
	if c.Batch == 0 {
		c.Batch = 64
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = time.Millisecond
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	core, err := c.Core.WithDefaults()
	if err != nil {
		return err
	}
	c.Core = core
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Shards < 1 || c.Shards > 1024:
		return fmt.Errorf("shards %d: must be in 1..1024", c.Shards)
	case c.Sockets < 0 || c.Sockets > 256:
		return fmt.Errorf("sockets %d: must be in 0..256", c.Sockets)
	case c.Batch < 1 || c.Batch > 1024:
		return fmt.Errorf("batch %d: must be in 1..1024", c.Batch)
	case c.SweepInterval < 0:
		return errors.New("sweep interval must not be negative")
	case c.TakeoverGrace < 0:
		return errors.New("takeover grace must not be negative")
	case c.TakeoverEpoch >= wire.MaxEpoch:
		return fmt.Errorf("takeover epoch %d: must be below %d", c.TakeoverEpoch, uint64(wire.MaxEpoch))
	case c.ControllerLease < 0:
		return errors.New("controller lease must not be negative")
	}
	for what, list := range map[string][]string{"peers.switches": c.Peers.Switches,
		"peers.controllers": c.Peers.Controllers, "peers.rdma_nodes": c.Peers.RDMANodes} {
		if err := srvcore.ParsePeers(what, list); err != nil {
			return err
		}
	}
	if c.Sockets == 0 {
		c.Sockets = 1
	}
	if err := c.RDMA.validate(); err != nil {
		return err
	}
	if _, err := netip.ParseAddrPort(c.Listen); err != nil {
		if _, err2 := net.ResolveUDPAddr("udp", c.Listen); err2 != nil {
			return fmt.Errorf("listen %q: %w", c.Listen, err)
		}
	}
	return nil
}

// TestingKnobs holds behaviour that only tests ask for.
type TestingKnobs struct {
	// OnAccept, if set, is told every acquire the server accepts into a lock's queue
	// (srvcore.TestingKnobs.OnAccept): the acceptance order of the history checker's FIFO rule.
	OnAccept func(lock uint32, txn uint64)
	// UnsafeNoALock makes the RDMA tier's proxies send grants without taking the ALock: the
	// negative control of the three-way exclusion tests.
	UnsafeNoALock *atomic.Bool
	// BeforeProxyLock, if set, runs in the RDMA tier's proxy (or, in RW mode, holder) goroutine
	// just before it takes the ALock of lock for a UDP grant the core made, outside every mutex:
	// a test can let a co-located or remote caller take the ALock first, so that the grant waits.
	BeforeProxyLock func(lock uint32)
}

// Server is a lock server: the UDP shell around a srvcore.Core. Create it with New, serve with
// Run.
type Server struct {
	cfg     Config
	log     *slog.Logger
	core    *srvcore.Core
	conns   []net.PacketConn
	raw     []*net.UDPConn // nil entries for wrapped sockets
	rdma    *rdmaTier      // nil without an ALock table
	epochs  *epochStore
	addr    netip.AddrPort
	closing atomic.Bool
	sent    atomic.Uint64
	recv    atomic.Uint64
	sendErr atomic.Uint64
	// restartGrace is the wait the state file asked for (0: new server or no file); graceEnd
	// (monotonic ns) is when the longer of it and TakeoverGrace ends; skippedGrace is a restart
	// grace UnsafeSkipRestartGrace skipped. settled: the state file's max lease has been lowered
	// to this run's once the earlier run's leases ended. Only the sweeper writes settled.
	restartGrace, skippedGrace time.Duration
	graceEnd                   int64
	settled                    bool
	instance                   uint32
}

// New binds the server's socket and builds its core. Nothing is served before Run.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("lockserver: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	var restart time.Duration
	var err error
	s.epochs, restart, err = openEpoch(cfg.StateFile, stateOptions{after: cfg.TakeoverEpoch, init: cfg.InitState,
		maxLease: cfg.Core.MaxLease, boot: bootClock})
	if err != nil {
		return nil, fmt.Errorf("lockserver: %w", err)
	}
	if cfg.UnsafeSkipRestartGrace {
		s.skippedGrace, restart = restart, 0
	}
	start := cfg.Clock.Mono()
	grace := max(cfg.TakeoverGrace, restart)
	s.restartGrace, s.graceEnd = restart, start+int64(grace)
	var b [4]byte
	_, _ = rand.Read(b[:])
	s.instance = binary.BigEndian.Uint32(b[:]) | 1 // never 0: 0 means "unknown" to a controller
	core := cfg.Core
	if core.HashSeed == 0 {
		// Lock ids chosen to collide under a known hash key would turn the lock table's lookups
		// into scans: every start draws its own key (lockcore.Config.HashSeed).
		var k [8]byte
		_, _ = rand.Read(k[:])
		core.HashSeed = binary.BigEndian.Uint64(k[:]) | 1
	}
	cc := srvcore.Config{Shards: cfg.Shards, Core: core, Key: cfg.RackKey, Peers: cfg.Peers, AcceptBatch: cfg.AcceptBatch,
		Epoch: s.epochs.current(), Start: start, Grace: grace, Standby: cfg.Standby, ControllerLease: cfg.ControllerLease,
		Instance: s.instance, Logger: cfg.Logger, TestingKnobs: srvcore.TestingKnobs{OnAccept: cfg.TestingKnobs.OnAccept}}
	if cfg.RDMA.Locks > 0 {
		// The tier needs the core and the core the tier: the tier is made first and told the
		// core right after.
		s.rdma = &rdmaTier{s: s}
		cc.Tier = s.rdma
	}
	if s.core, err = srvcore.New(cc); err != nil {
		s.epochs.close()
		return nil, fmt.Errorf("lockserver: %w", err)
	}
	if err := s.listen(); err != nil {
		s.closeConns()
		return nil, fmt.Errorf("lockserver: %w", err)
	}
	if cfg.RDMA.Locks > 0 {
		if err := s.rdma.init(cfg.RDMA); err != nil {
			if s.rdma.node != nil {
				_ = s.rdma.node.Close()
			}
			s.closeConns()
			return nil, fmt.Errorf("lockserver: %w", err)
		}
	}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(&collector{s: s}); err != nil {
			s.closeRDMA()
			s.closeConns()
			return nil, fmt.Errorf("lockserver: register metrics: %w", err)
		}
	}
	return s, nil
}

// listen binds the server's socket, exclusively (a second server on the address fails here, and
// no process can join it: udpbatch.ListenShared), with one reader connection per Sockets.
func (s *Server) listen() error {
	udps, err := udpbatch.ListenShared("udp", s.cfg.Listen, s.cfg.Sockets, 4<<20)
	if err != nil {
		return err
	}
	s.addr = udps[0].LocalAddr().(*net.UDPAddr).AddrPort()
	for _, udp := range udps {
		var c net.PacketConn = udp
		if s.cfg.WrapConn != nil {
			c = s.cfg.WrapConn(udp)
			udp = nil
		}
		s.conns = append(s.conns, c)
		s.raw = append(s.raw, udp)
	}
	return nil
}

// closeConns closes the sockets and releases the state file (a server that stops or never ran).
func (s *Server) closeConns() {
	for _, c := range s.conns {
		c.Close()
	}
	s.epochs.close()
}

// Epoch returns the server's fencing-token epoch: every token it grants is at least
// wire.EpochBase(Epoch()). Hand it to a server that takes this one's locks over (TakeoverEpoch).
func (s *Server) Epoch() uint64 { return s.core.Epoch() }

// Term returns the largest controller term the server has seen.
func (s *Server) Term() uint64 { return s.core.Term() }

// Holding reports whether the server holds every grant now (a standby before its takeover, a
// lapsed controller lease).
func (s *Server) Holding() bool { return s.core.Holding() }

// closeRDMA releases the RDMA tier of a server that never ran.
func (s *Server) closeRDMA() {
	if s.rdma != nil && s.rdma.node != nil {
		_ = s.rdma.node.Close()
		_ = s.rdma.ln.Close()
	}
}

// RDMAAddr returns the TCP address of the server's emulated RDMA NIC, and false without an RDMA
// tier.
func (s *Server) RDMAAddr() (netip.AddrPort, bool) {
	if s.rdma == nil {
		return netip.AddrPort{}, false
	}
	return s.rdma.nic, true
}

// Addr returns the address the server is bound to.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Run serves until ctx is done, then shuts down gracefully: the packets already read are answered,
// waiting requests are rejected with status shutdown, holders are told their leases will not be
// renewed, the state file records when those leases end, and the socket is closed.
func (s *Server) Run(ctx context.Context) error {
	s.log.Info("lock server serving", "addr", s.addr, "shards", s.core.Shards(), "readers", len(s.conns),
		"epoch", s.Epoch(), "rack_key", s.cfg.RackKey)
	if s.cfg.RackKey == 0 {
		s.log.Warn("no rack key configured: every control message (overflow, queue-empty, admin) is refused")
	}
	if s.cfg.StateFile == "" {
		s.log.Warn("no state file: the token epoch is not persisted, a restart reissues smaller fencing tokens")
	} else {
		s.log.Info("state file", "path", s.cfg.StateFile)
	}
	if s.restartGrace > 0 {
		s.log.Warn("restarted: granting nothing until the leases the previous run may have granted have ended",
			"restart_grace", s.restartGrace)
	}
	if s.skippedGrace > 0 {
		s.log.Error("UNSAFE: restart grace skipped: a lock held under the previous run may be granted twice",
			"skipped", s.skippedGrace)
	}
	if s.rdma != nil {
		s.rdma.start()
		s.log.Info("rdma tier serving", "nic", s.rdma.nic, "locks", s.rdma.n)
	}
	var wg sync.WaitGroup
	errc := make(chan error, len(s.conns))
	for i := range s.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.serve(i); err != nil {
				errc <- err
			}
		}()
	}
	sweepDone := make(chan struct{})
	go func() {
		defer close(sweepDone)
		s.sweeper(ctx)
	}()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		s.log.Error("lock server socket failed", "err", err)
	}
	s.closing.Store(true)
	for _, c := range s.conns {
		_ = c.SetReadDeadline(time.Unix(1, 0))
	}
	wg.Wait()
	<-sweepDone
	// Reject what waits and tell the holders, on the first socket, then close.
	w, werr := s.newWriter(0)
	if werr != nil {
		if s.rdma != nil {
			werr = errors.Join(werr, s.rdma.shutdown())
		}
		s.closeConns()
		return errors.Join(err, werr)
	}
	var out srvcore.Out
	until := s.core.Drain(&out)
	w.apply(s.now(), &out)
	w.flush()
	if s.rdma != nil {
		if rerr := s.rdma.shutdown(); rerr != nil {
			s.log.Error("rdma tier shutdown", "err", rerr)
		}
	} else {
		s.recordClean(until)
	}
	s.closeConns()
	s.log.Info("lock server stopped", "received", s.recv.Load(), "sent", s.sent.Load())
	return err
}

func (s *Server) now() int64 { return s.cfg.Clock.Mono() }

// recordClean writes the graceful shutdown's record into the state file: every lease this server
// granted ends by until (monotonic ns; 0: none is held), or by the end of a grace period still in
// force (the leases of a previous run or of a failed server). A restart on the same boot then
// waits only for what is left (epochStore). Without an RDMA tier only: ALock has no leases.
func (s *Server) recordClean(until int64) {
	if s.cfg.StateFile == "" {
		return
	}
	now := s.now()
	if ge := max(s.graceEnd, s.core.GraceEnd()); now < ge {
		until = max(until, ge)
	}
	id, boot, err := bootClock()
	if err == nil {
		err = s.epochs.markClean(id, boot+max(until-now, 0))
	}
	if err != nil {
		s.log.Warn("graceful shutdown not recorded: a restart will wait the whole restart grace", "err", err)
		return
	}
	s.log.Info("graceful shutdown recorded: a restart on this boot waits for the leases still running",
		"longest", time.Duration(max(until-now, 0)))
}

// settleMaxLease lowers the state file's longest lease to this run's once the restart grace has
// ended (until then an earlier run's longer leases may still run, and a crash must wait for them).
func (s *Server) settleMaxLease(now int64) {
	if s.settled || now < s.graceEnd {
		return
	}
	s.settled = true
	if err := s.epochs.setMaxLease(uint64(s.cfg.Core.MaxLease / time.Microsecond)); err != nil {
		s.log.Error("state file: max lease not lowered", "err", err)
	}
}

func (s *Server) sweeper(ctx context.Context) {
	t := time.NewTicker(s.cfg.SweepInterval)
	defer t.Stop()
	w, err := s.newWriter(0)
	if err != nil {
		s.log.Error("lease sweeper", "err", err)
		return
	}
	var out srvcore.Out
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := s.now()
		s.settleMaxLease(now)
		out.Reset()
		s.core.Tick(now, &out)
		w.apply(now, &out)
		w.flush()
	}
}

// serve is the read loop of reader i.
func (s *Server) serve(i int) error {
	r, err := s.newReader(i)
	if err != nil {
		return err
	}
	w, err := s.newWriter(i)
	if err != nil {
		return err
	}
	var out srvcore.Out
	for {
		n, err := r.read()
		if err != nil {
			if s.closing.Load() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("read: %w", err)
		}
		s.recv.Add(uint64(n))
		now := s.now()
		for k := 0; k < n; k++ {
			b, from := r.packet(k)
			out.Reset()
			s.core.Handle(now, b, from, &out)
			w.apply(now, &out)
			w.flushIfFull()
		}
		w.flush()
	}
}

// apply sends what out asks for and persists the epoch it asks for, acknowledging it to the core
// (which may ask for more: the loop ends when nothing waits). out is consumed.
func (w *writer) apply(now int64, out *srvcore.Out) {
	s := w.s
	for {
		w.addEffects(out.Sends, out.BatchTo)
		for i := range out.Bodies {
			b := &out.Bodies[i]
			w.sendBody(b.To, &b.Msg, b.Data)
		}
		e := out.Persist
		if e == 0 {
			return
		}
		out.Reset()
		if _, err := s.epochs.bump(e); err != nil {
			s.log.Error("cannot persist the token epoch", "epoch", e, "err", err)
			s.core.PersistFailed(now, e, out)
		} else {
			s.core.Persisted(now, e, out)
		}
	}
}

// Validate fills in c's defaults and checks it, as New does (for configuration front ends).
func (c *Config) Validate() error { return c.validate() }
