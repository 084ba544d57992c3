// Package lockserver is netlock's lock server: it owns the locks that are not in the switch and
// buffers the overflow of switch locks (q2), speaking the protocol of docs/protocol.md over UDP.
//
// The server is an I/O shell around [lockcore.Core]. Locks are partitioned over shards (lock id
// modulo the shard count); each shard is one Core behind a mutex, so all state of a lock is touched
// by one goroutine at a time. Packets are read in batches (recvmmsg through golang.org/x/net/ipv4)
// by several goroutines from the server's one socket (bound exclusively, so that no other process
// can share the address), stepped through the shard of their lock, and the
// answers written in batches (sendmmsg). A sweeper goroutine runs the cores' lease expiry.
//
// Malformed datagrams and ops a server does not accept are counted and dropped. On shutdown the
// server answers every packet it has read, then rejects the waiting requests (status shutdown).
//
// # Who may send what
//
// Control messages (overflow and queue-empty from the switch, admin from the controller, RDMA
// joins from remote RDMA clients) are processed only when they come from an address listed in
// Config.Peers for that op and carry Config.RackKey in their 8-byte trailer; anything else is
// dropped unanswered and counted by reason (ControlRefused, netlock_control_refused_total). A
// server without a rack key refuses every control message. Push-backs and admin replies the server
// sends carry the key. The key never appears in logs (RackKey redacts itself).
//
// # Fencing tokens
//
// Tokens are epoch-major (token = epoch<<EpochShift | count): the epoch is persisted in
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
// Shard goroutines and the sweeper never wait for an ALock: they only queue grants and, after a
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
	"errors"
	"fmt"
	"github.com/netlock-go/netlock/internal/clock"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

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
	// SweepInterval is how often leases are checked. Default 1ms.
	SweepInterval time.Duration
	// Core configures every shard's lock core. TokenBase is set by the server (from its epoch).
	Core lockcore.Config
	// RackKey is the key every control message (overflow, queue-empty, admin) must carry in its
	// trailer, and the key the server puts on the control messages it sends (push-back, admin
	// replies). 0: no key; every control message is then refused.
	RackKey RackKey
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
	// OnAccept, if set, is told every acquire the server accepts into a lock's queue (granted
	// or waiting; not a duplicate, a refusal, a buffered overflow or a dropped acquire of a
	// switch-resident lock), in the order the lock's shard took them: the acceptance order of
	// the history checker's FIFO rule, for tests. It runs under the shard's lock.
	OnAccept func(lock uint32, txn uint64)
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
	case c.TakeoverEpoch >= MaxEpoch:
		return fmt.Errorf("takeover epoch %d: must be below %d", c.TakeoverEpoch, uint64(MaxEpoch))
	case c.ControllerLease < 0:
		return errors.New("controller lease must not be negative")
	}
	if _, err := newAuth(c.RackKey, c.Peers); err != nil {
		return err
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

// shard is one partition of the locks. mu guards core and out.
type shard struct {
	mu   sync.Mutex
	core *lockcore.Core
	out  []lockcore.Effect
}

// Server is a lock server. Create it with New, serve with Run.
type Server struct {
	cfg     Config
	log     *slog.Logger
	conns   []net.PacketConn
	raw     []*net.UDPConn // nil entries for wrapped sockets
	shards  []*shard
	rdma    *rdmaTier // nil without an ALock table
	auth    *auth
	epochs  *epochStore
	addr    netip.AddrPort
	closing atomic.Bool
	// restartGrace is the wait the state file asked for (0: new server or no file); graceEnd
	// (monotonic ns) is when the longer of it and TakeoverGrace ends; skippedGrace is a restart
	// grace UnsafeSkipRestartGrace skipped. settled: the state file's max lease has been lowered
	// to this run's once the earlier run's leases ended. Only the sweeper writes settled.
	restartGrace, skippedGrace time.Duration
	graceEnd                   int64
	settled                    bool
	bad                        [badReasons]atomic.Uint64
	refused                    [refusedReasons]atomic.Uint64
	sent                       atomic.Uint64
	recv                       atomic.Uint64
	sendErr                    atomic.Uint64
	place                      placeState
}

// Reasons a datagram is dropped, for netlock_malformed_packets_total{reason}.
const (
	badShort = iota
	badVersion
	badOp
	badMode
	badUnexpected
	badReasons
)

var badNames = [badReasons]string{"short", "version", "op", "mode", "unexpected"}

// New binds the server's sockets and builds its shards. Nothing is served before Run.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("lockserver: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	var err error
	if s.auth, err = newAuth(cfg.RackKey, cfg.Peers); err != nil {
		return nil, fmt.Errorf("lockserver: %w", err)
	}
	var restart time.Duration
	s.epochs, restart, err = openEpoch(cfg.StateFile, stateOptions{after: cfg.TakeoverEpoch, init: cfg.InitState,
		maxLease: cfg.Core.MaxLease, boot: bootClock})
	if err != nil {
		return nil, fmt.Errorf("lockserver: %w", err)
	}
	if cfg.UnsafeSkipRestartGrace {
		s.skippedGrace, restart = restart, 0
	}
	start := cfg.Clock.Mono()
	s.place.init(cfg, start)
	grace := max(cfg.TakeoverGrace, restart)
	s.restartGrace, s.graceEnd = restart, start+int64(grace)
	for i := 0; i < cfg.Shards; i++ {
		cc := cfg.Core
		cc.TokenBase = epochBase(s.epochs.current())
		if grace > 0 {
			cc.GrantAfter = start + int64(grace)
		}
		if cfg.Standby {
			cc.GrantAfter = math.MaxInt64
		}
		core, err := lockcore.New(cc)
		if err != nil {
			s.epochs.close()
			return nil, fmt.Errorf("lockserver: %w", err)
		}
		s.shards = append(s.shards, &shard{core: core, out: make([]lockcore.Effect, 0, 64)})
	}
	if err := s.listen(); err != nil {
		s.closeConns()
		return nil, fmt.Errorf("lockserver: %w", err)
	}
	if cfg.RDMA.Locks > 0 {
		r, err := newRDMATier(s, cfg.RDMA)
		if err != nil {
			if r != nil && r.node != nil {
				_ = r.node.Close()
			}
			s.closeConns()
			return nil, fmt.Errorf("lockserver: %w", err)
		}
		s.rdma = r
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
// Epoch()<<EpochShift. Hand it to a server that takes this one's locks over (TakeoverEpoch).
func (s *Server) Epoch() uint64 { return s.epochs.current() }

// closeRDMA releases the RDMA tier of a server that never ran.
func (s *Server) closeRDMA() {
	if s.rdma != nil {
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
// waiting requests are rejected with status shutdown, and the sockets are closed.
func (s *Server) Run(ctx context.Context) error {
	s.log.Info("lock server serving", "addr", s.addr, "shards", len(s.shards), "sockets", len(s.conns),
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
	// Reject what waits, on the first socket, then close.
	w, werr := s.newWriter(0)
	if werr != nil {
		if s.rdma != nil {
			werr = errors.Join(werr, s.rdma.shutdown())
		}
		s.closeConns()
		return errors.Join(err, werr)
	}
	// Reject what waits and tell the holders that their leases will not be renewed; they keep
	// their locks until the leases end, and the state file records when that is.
	var until int64
	for _, sh := range s.shards {
		sh.mu.Lock()
		sh.out = sh.core.Drain(sh.out[:0])
		sh.out = sh.core.TellHolders(wire.StatusShutdown, sh.out)
		until = max(until, sh.core.LatestDeadline())
		w.addEffects(sh.out)
		sh.mu.Unlock()
	}
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
	if now < s.graceEnd {
		until = max(until, s.graceEnd)
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
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sweep(w)
	}
}

// sweep expires leases in every shard and sends what results.
func (s *Server) sweep(w *writer) {
	now := s.now()
	if s.rdma != nil {
		// Before Expire, so that a late sweep renews a waiting grant before it could expire it.
		s.rdma.keepAlive(now, w)
	}
	s.refillEpoch()
	s.settleMaxLease(now)
	s.applyHold(now, w)
	for _, sh := range s.shards {
		sh.mu.Lock()
		if now >= sh.core.NextDeadline() {
			sh.out = sh.core.Expire(now, sh.out[:0])
			if s.rdma != nil {
				sh.out = s.rdma.filter(sh, sh.out)
			}
			w.addEffects(sh.out)
		}
		sh.mu.Unlock()
		w.flushIfFull()
	}
	w.flush()
}

func (s *Server) shardOf(lock uint32) *shard { return s.shards[lock%uint32(len(s.shards))] }

// serve is the read loop of socket i.
func (s *Server) serve(i int) error {
	r, err := s.newReader(i)
	if err != nil {
		return err
	}
	w, err := s.newWriter(i)
	if err != nil {
		return err
	}
	var req lockcore.Request
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
			if !s.decode(b, from, &req) {
				continue
			}
			if req.Op == wire.OpAdmin && req.Status == wire.AdminTokenFloor {
				s.tokenFloor(&req, w)
				continue
			}
			if req.Op == wire.OpAdmin && req.Status == wire.AdminPing {
				// Answered here: the reply carries the server's epoch (a replacement server is
				// handed it as TakeoverEpoch), its shard count, the controller term in force and
				// the process instance (a restart changes it); it renews the controller lease.
				term := s.ping(&req)
				w.addEffects([]lockcore.Effect{{To: req.From, Msg: wire.Fields{Op: wire.OpAdmin, Status: req.Status,
					Flags: wire.FlagReply, Lock: req.Lock, Txn: req.Txn, Token: s.Epoch(), Slots: uint16(len(s.shards)),
					Timestamp: term, LeaseMicros: s.place.instance}}})
				continue
			}
			if req.Op == wire.OpAdmin && isPlacement(req.Status) {
				s.placement(&req, w)
				continue
			}
			if s.rdma != nil && !s.rdma.beforeStep(&req, w) {
				continue
			}
			sh := s.shardOf(req.Lock)
			sh.mu.Lock()
			hook := s.cfg.OnAccept != nil && (req.Op == wire.OpAcquire || req.Op == wire.OpOverflow)
			var taken uint64
			if hook {
				st := sh.core.Stats()
				taken = st.Grants + st.Queued
			}
			sh.out = sh.core.Step(now, &req, sh.out[:0])
			if hook {
				// An acquire grants or queues only itself, so this counts its acceptance.
				if st := sh.core.Stats(); st.Grants+st.Queued > taken {
					s.cfg.OnAccept(req.Lock, req.Txn)
				}
			}
			if s.rdma != nil {
				sh.out = s.rdma.afterStep(sh, &req, sh.out)
			}
			w.addEffects(sh.out)
			sh.mu.Unlock()
			w.flushIfFull()
		}
		w.flush()
	}
}

// decode validates a datagram into req; invalid ones, and control messages that are not
// authorized (docs/protocol.md, "Who may send what"), are counted and false is returned.
func (s *Server) decode(b []byte, from netip.AddrPort, req *lockcore.Request) bool {
	h, err := wire.Parse(b)
	if err != nil {
		switch {
		case errors.Is(err, wire.ErrShort):
			s.bad[badShort].Add(1)
		case errors.Is(err, wire.ErrVersion):
			s.bad[badVersion].Add(1)
		case errors.Is(err, wire.ErrOp):
			s.bad[badOp].Add(1)
		default:
			s.bad[badMode].Add(1)
		}
		return false
	}
	switch op := h.Op(); {
	case op == wire.OpAdmin && h.Has(wire.FlagReply):
		// An answer is never a request: stepping it would answer it (two servers could bounce
		// replies forever).
		s.bad[badUnexpected].Add(1)
		return false
	case op.IsControl():
		if why := s.auth.check(b, h, from); why >= 0 {
			s.refused[why].Add(1)
			return false
		}
	case op == wire.OpAcquire, op == wire.OpRelease, op == wire.OpLeaseProbe:
		if h.Has(wire.FlagForwarded) && !s.auth.forwardOK(from) {
			s.refused[refusedForwarded].Add(1)
			return false
		}
	default:
		s.bad[badUnexpected].Add(1)
		return false
	}
	h.Decode(&req.Fields)
	req.From = from
	return true
}

// tokenFloor answers wire.AdminTokenFloor: every token granted afterwards, by the shard of
// req.Lock (Slots 0) or by every shard (Slots 1), is larger than req.Token. A floor beyond the
// current epoch's range moves the server to a new epoch first (persisted), so that the tokens of
// a later restart stay above it. The reply carries the floor in force.
func (s *Server) tokenFloor(req *lockcore.Request, w *writer) {
	reply := wire.Fields{Op: wire.OpAdmin, Status: req.Status, Flags: wire.FlagReply, Lock: req.Lock, Txn: req.Txn,
		Slots: req.Slots}
	if req.Slots > 1 {
		reply = wire.Fields{Op: wire.OpReject, Status: wire.StatusBadRequest, Lock: req.Lock, Txn: req.Txn,
			Token: req.Token, Timestamp: req.Timestamp}
		w.addEffects([]lockcore.Effect{{To: req.From, Msg: reply}})
		return
	}
	inForce, err := s.raiseFloor(req.Lock, req.Token, req.Slots == 1)
	if err != nil {
		reply = wire.Fields{Op: wire.OpReject, Status: wire.StatusBadRequest, Lock: req.Lock, Txn: req.Txn,
			Token: req.Token, Timestamp: req.Timestamp}
		w.addEffects([]lockcore.Effect{{To: req.From, Msg: reply}})
		return
	}
	reply.Token = inForce
	w.addEffects([]lockcore.Effect{{To: req.From, Msg: reply}})
}

// raiseFloor makes every token granted afterwards by the shard of lock (every shard with all)
// larger than floor, moving the server to a later epoch first (persisted) when floor lies beyond
// half of the current one. It returns the floor in force (the largest of the shards').
func (s *Server) raiseFloor(lock uint32, floor uint64, all bool) (uint64, error) {
	e := s.Epoch()
	if floor >= epochBase(e)+epochRefill {
		// Past half of this epoch's range: a later epoch, persisted before any token above
		// floor is granted.
		ne, err := s.epochs.bump(floor>>EpochShift + 1)
		if err != nil {
			s.log.Error("token floor: cannot move to a new epoch", "err", err)
			return 0, err
		}
		s.raiseAll(epochBase(ne))
		floor = epochBase(ne)
	}
	shards := s.shards
	if !all {
		shards = []*shard{s.shardOf(lock)}
	}
	var inForce uint64
	for _, sh := range shards {
		sh.mu.Lock()
		sh.core.RaiseTokenFloor(floor)
		inForce = max(inForce, sh.core.LastToken())
		sh.mu.Unlock()
	}
	return inForce, nil
}

// raiseAll raises every shard's token floor to t.
func (s *Server) raiseAll(t uint64) {
	for _, sh := range s.shards {
		sh.mu.Lock()
		sh.core.RaiseTokenFloor(t)
		sh.mu.Unlock()
	}
}

// refillEpoch moves the server to the next epoch once a shard has counted half-way through the
// current one, so that no shard's tokens can ever reach the next epoch's range unannounced.
func (s *Server) refillEpoch() {
	e := s.Epoch()
	limit := epochBase(e) + epochRefill
	for _, sh := range s.shards {
		sh.mu.Lock()
		t := sh.core.LastToken()
		sh.mu.Unlock()
		if t >= limit {
			ne, err := s.epochs.bump(max(e+1, t>>EpochShift+1))
			if err != nil {
				s.log.Error("cannot move to a new token epoch", "err", err)
				return
			}
			s.raiseAll(epochBase(ne))
			s.log.Info("moved to a new token epoch", "epoch", ne)
			return
		}
	}
}
