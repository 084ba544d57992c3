package lockserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/netlock-go/netlock/lockserver/srvcore"

	"github.com/netlock-go/netlock/internal/gogroup"
	"github.com/netlock-go/netlock/internal/rdmaproto"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/tablehandle"
	"github.com/netlock-go/netlock/rdma/verbs"
	"github.com/netlock-go/netlock/wire"
)

// RDMAConfig configures the server's RDMA tier: an ALock table (or, in Mode RDMAModeRW, an RMA-RW
// table) in the registered memory of an emulated RDMA node (rdma/emu) owned by the server. See the
// package documentation.
type RDMAConfig struct {
	// Locks is the number of ALocks; lock ids below it are RDMA-backed. 0 disables the tier.
	Locks int
	// Listen is the TCP address where the server node's emulated NIC serves the verbs of remote
	// clients (client/rdmaclient). Default "127.0.0.1:0". The address is handed to clients by the
	// join admin exchange, which carries IPv4 only.
	Listen string
	// Emu configures the emulated node. If RegionSize is 0 it is sized for the table plus 32768
	// descriptor pairs.
	Emu emu.Config
	// ALock configures the algorithm (budgets; Probe is for tests). The local budget is the one
	// the server's cohort uses.
	ALock alock.Config
	// Mode selects the table: RDMAModeALock (the default; exclusive only, shared requests are
	// served exclusively) or RDMAModeRW (RMA-RW, rdma/rma: shared requests are shared).
	Mode string
	// RW configures the RMA-RW table (Mode RDMAModeRW): counters per lock, T_L,1, T_L,2, T_R.
	RW rma.TableParams
	// MaxPeers bounds the remote nodes that may join. Default 1024; at most 65535.
	MaxPeers int
}

func (c *RDMAConfig) validate() error {
	if c.Locks == 0 {
		return nil
	}
	if c.Locks < 0 || c.Locks > 1<<20 {
		return fmt.Errorf("rdma locks %d: must be in 0..%d", c.Locks, 1<<20)
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	if c.MaxPeers == 0 {
		c.MaxPeers = 1024
	}
	if c.MaxPeers < 0 || c.MaxPeers > 65535 {
		return fmt.Errorf("rdma max peers %d: must be in 1..65535", c.MaxPeers)
	}
	switch c.Mode {
	case "", RDMAModeALock:
		c.Mode = RDMAModeALock
		if c.Emu.RegionSize == 0 {
			c.Emu.RegionSize = uint64(c.Locks)*alock.Size + 64 + 32768*2*alock.Size
		}
	case RDMAModeRW:
		if err := c.RW.Validate(); err != nil {
			return err
		}
		if c.Emu.RegionSize == 0 {
			// The table, a node block per lock used on this node, 32768 handles' queue nodes.
			c.Emu.RegionSize = uint64(c.Locks)*(c.RW.BlockSize()+128) + 64 + 32768*64
		}
	default:
		return fmt.Errorf("rdma mode %q: must be %q or %q", c.Mode, RDMAModeALock, RDMAModeRW)
	}
	return nil
}

// Errors of the RDMA tier.
var (
	// ErrNotRDMALock is returned for a lock id outside the ALock table.
	ErrNotRDMALock = errors.New("lockserver: lock is not RDMA-backed")
	// ErrNotHeld is returned by LocalLocks.Unlock for a lock no co-located caller holds.
	ErrNotHeld = errors.New("lockserver: lock not held through LocalLocks")
	// ErrClosed is returned by LocalLocks once the server has shut its RDMA tier down.
	ErrClosed = errors.New("lockserver: server closed")
)

// rdmaTier is the server's ALock table and the proxies that hold its locks for UDP clients.
//
// Lock order: srvcore.Shard > rlock.mu > sendMu. The proxies take rlock.mu and sendMu only.
type rdmaTier struct {
	s     *Server
	n     uint32 // table size: lock ids below it are RDMA-backed
	node  *emu.Node
	ln    net.Listener
	nic   netip.AddrPort // the NIC's TCP address
	tbl   *alock.Table   // ALock mode
	pool  *alock.Pool
	rw    *rwTable    // RW mode (nil in ALock mode)
	stop  atomic.Bool // set on shutdown: aborts every spin on the server's node
	locks []rlock
	local *LocalLocks

	// goroutines are the tier's proxies and abandoned local acquisitions; shutdown waits for them.
	goroutines gogroup.Group

	sendMu  sync.Mutex
	sendBuf []byte

	// waiting holds the locks that may have a grant waiting for its ALock (keepAlive); a leaf
	// mutex.
	waitMu  sync.Mutex
	waiting map[uint32]struct{}

	peersMu sync.Mutex
	peers   []netip.AddrPort // by node id - 1
	byAddr  map[netip.AddrPort]verbs.NodeID

	// Counters (RDMAStats).
	proxyGrants, proxyDropped, tryRefused atomic.Uint64
	proxies                               atomic.Int64

	// noALock is TestingKnobs.UnsafeNoALock: proxies send grants without taking the ALock (or,
	// in RW mode, the RMA-RW lock), the negative control of the three-way tests (it must break
	// exclusion). Atomic because the tests set it while the server runs (a proxy reads it once
	// per grant). Nil: never.
	noALock *atomic.Bool
	// scratch for Tick's probes
	probeOut []lockcore.Effect
}

// rlock is the server-side state of one RDMA-backed lock: the grants the core made for it, in
// grant order. q[0] is the one the proxy is acquiring the ALock for, or holds it for.
type rlock struct {
	mu      sync.Mutex
	cond    sync.Cond
	q       []*pending
	running bool   // a proxy goroutine serves q
	lastTok uint64 // largest token queued so far
}

// pending is one core grant of an RDMA lock.
type pending struct {
	grant   lockcore.Effect
	held    bool  // the proxy holds the ALock and has sent the grant
	ended   bool  // the core no longer lists this holder (release, expiry, reset)
	renewed int64 // when the core's lease of this grant last (re)started, ns, until held
}

// The tier hooks into the server core (srvcore.Tier): Intercept before a request is stepped,
// Filter on the effects of every step and expiry, Tick at every sweep.
var _ srvcore.Tier = (*rdmaTier)(nil)

// init builds the tier's node, table and NIC listener (r.s is set; the core exists).
func (r *rdmaTier) init(cfg RDMAConfig) error {
	r.n, r.locks = uint32(cfg.Locks), make([]rlock, cfg.Locks)
	r.byAddr, r.sendBuf, r.waiting = map[netip.AddrPort]verbs.NodeID{}, make([]byte, wire.Len), map[uint32]struct{}{}
	r.noALock = r.s.cfg.TestingKnobs.UnsafeNoALock
	for i := range r.locks {
		r.locks[i].cond.L = &r.locks[i].mu
	}
	node, err := emu.NewNode(cfg.Emu, rdmaproto.ServerNode)
	if err != nil {
		return fmt.Errorf("rdma node: %w", err)
	}
	r.node = node
	if cfg.Mode == RDMAModeRW {
		if r.rw, err = newRWTable(node, &r.stop, cfg.Locks, cfg.RW); err != nil {
			return err
		}
	} else {
		r.tbl, err = alock.NewTable(node.NewEndpoint(), cfg.Locks)
		if err != nil {
			return fmt.Errorf("rdma table: %w", err)
		}
		alg, err := alock.New(cfg.ALock)
		if err != nil {
			return err
		}
		r.pool = alg.NewPool(func() verbs.Endpoint { return rdmaproto.Wrap(node.NewEndpoint(), &r.stop, nil) })
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("rdma listen: %w", err)
	}
	r.ln = ln
	r.nic = ln.Addr().(*net.TCPAddr).AddrPort()
	r.nic = netip.AddrPortFrom(r.nic.Addr().Unmap(), r.nic.Port())
	r.local = &LocalLocks{r: r, held: make([]tablehandle.Held, cfg.Locks)}
	return nil
}

// unsafeNoALock reports the test knob TestingKnobs.UnsafeNoALock.
func (r *rdmaTier) unsafeNoALock() bool { return r.noALock != nil && r.noALock.Load() }

// beforeLock runs the test knob TestingKnobs.BeforeProxyLock, if set.
func (r *rdmaTier) beforeLock(lock uint32) {
	if f := r.s.cfg.TestingKnobs.BeforeProxyLock; f != nil {
		f(lock)
	}
}

// start makes the NIC serve remote verbs.
func (r *rdmaTier) start() { r.node.Serve(r.ln) }

// shutdown stops the tier: remote verbs stop being served, every spin on the server's node is
// abandoned (the table is discarded, so nothing is unlocked), pending UDP grants are answered
// with reject shutdown, and every goroutine of the tier has returned when it returns. The
// serve loops and the sweeper must have stopped.
func (r *rdmaTier) shutdown() error {
	r.goroutines.Close()
	r.stop.Store(true)
	err := r.node.Close() // also closes r.ln and the connections of remote clients
	for i := range r.locks {
		rl := &r.locks[i]
		rl.mu.Lock()
		rl.cond.Broadcast()
		rl.mu.Unlock()
	}
	r.goroutines.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// isRDMA reports whether lock is RDMA-backed.
func (r *rdmaTier) isRDMA(lock uint32) bool { return lock < r.n }

// Intercept adapts a request for an RDMA lock before the core sees it: in ALock mode a shared
// acquire is served exclusively (ALock has no shared mode). It reports false when the request was
// an RDMA admin operation, answered here (the core does not know them).
func (r *rdmaTier) Intercept(_ int64, req *lockcore.Request, out *srvcore.Out) bool {
	if req.Op == wire.OpAdmin && (req.Status == rdmaproto.AdminJoin || req.Status == rdmaproto.AdminPeer) {
		r.admin(req, out)
		return false
	}
	if req.Op == wire.OpAcquire && r.isRDMA(req.Lock) {
		if r.rw == nil {
			req.Mode = wire.Exclusive
		}
		if req.Flags&wire.FlagTry != 0 && r.busyElsewhere(req.Lock, req.Mode == wire.Shared) {
			r.tryRefused.Add(1)
			r.rejectNow(req, wire.StatusWouldBlock, out)
			return false
		}
	}
	return true
}

// busyElsewhere reports whether the ALock of lock is held or wanted by someone other than a UDP
// client (a co-located caller or a remote client): no live UDP grant is queued for it (a proxy
// may still be queued for a grant that ended) and one of its cohort tails is set. A try acquire
// is then refused at once instead of being granted by the core and made to wait for the ALock.
// It is a snapshot: an ALock caller arriving right after it can still make a granted try wait
// for the other cohort. In RW mode the RMA-RW lock is busy for a shared try when a writer holds
// or wants it, and for an exclusive try also when readers are inside.
func (r *rdmaTier) busyElsewhere(lock uint32, shared bool) bool {
	rl := &r.locks[lock]
	rl.mu.Lock()
	live := false
	for _, p := range rl.q {
		live = live || !p.ended
	}
	rl.mu.Unlock()
	if live {
		return false // the core decides: its UDP holder makes it would-block there
	}
	if r.rw != nil {
		return r.rw.busy(r.node, lock, shared)
	}
	off := r.tbl.Lock(int(lock)).Offset()
	// Local loads of both tails: the server is on the lock's node (a Read never conflicts with
	// the remote cohort's rCAS, Table 1).
	return r.node.Load(off+alock.OffTailL) != 0 || r.node.Load(off+alock.OffTailR) != 0
}

// rejectNow answers req with a reject built as the core builds it.
func (r *rdmaTier) rejectNow(req *lockcore.Request, st wire.Status, out *srvcore.Out) {
	m := wire.Fields{Op: wire.OpReject, Mode: req.Mode, Status: st, Priority: req.Priority, Tenant: req.Tenant,
		Lock: req.Lock, Txn: req.Txn, Token: req.Token, Timestamp: req.Timestamp}
	to := req.From
	if req.Flags&wire.FlagForwarded != 0 && req.Client.IsValid() {
		to = req.Client
		m.Flags, m.Client = wire.FlagForwarded, req.Client
	}
	out.Sends = append(out.Sends, lockcore.Effect{To: to, Msg: m})
}

// Filter filters the effects of one step (req) or expiry (req nil) of shard sh (see filter); an
// admin reset of an RDMA lock drops its holders without any effect, so the lock is reconciled
// with the core. sh's mutex is held.
func (r *rdmaTier) Filter(sh *srvcore.Shard, req *lockcore.Request, out []lockcore.Effect) []lockcore.Effect {
	out = r.filter(sh, out)
	if req != nil && req.Op == wire.OpAdmin && req.Status == wire.AdminResetLock && r.isRDMA(req.Lock) {
		r.reconcile(sh, req.Lock)
	}
	return out
}

// filter runs on the effects of a step or an expiry of shard sh, with sh.mu held. Grants of RDMA
// locks are taken out and queued for the lock's proxy, which sends each once it holds the ALock
// (a repeated grant of a holder whose grant went out already passes). A release
// acknowledgement or a reject on an RDMA lock may mean that a holder ended; the lock is then
// reconciled with the core.
func (r *rdmaTier) filter(sh *srvcore.Shard, out []lockcore.Effect) []lockcore.Effect {
	k := 0
	var dirty []uint32
	for i := range out {
		e := &out[i]
		if e.Msg.Op != wire.OpAdmin && r.isRDMA(e.Msg.Lock) {
			switch {
			case e.Msg.Op == wire.OpGrant:
				if !r.queueGrant(e) {
					continue
				}
			case e.Msg.Op == wire.OpReject, e.Msg.Op == wire.OpRelease && e.Msg.Flags&wire.FlagReply != 0:
				dirty = append(dirty, e.Msg.Lock)
			}
		}
		if k != i {
			out[k] = *e
		}
		k++
	}
	for _, l := range dirty {
		r.reconcile(sh, l)
	}
	return out[:k]
}

// queueGrant hands a core grant to its lock's proxy; it reports whether the grant should be sent
// now (a repeat of a grant that already went out).
func (r *rdmaTier) queueGrant(e *lockcore.Effect) bool {
	rl := &r.locks[e.Msg.Lock]
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for _, p := range rl.q {
		if p.grant.Msg.Token == e.Msg.Token && p.grant.Msg.Txn == e.Msg.Txn {
			if p.held {
				return true
			}
			p.grant = *e // a repeat while the ALock is being taken: the proxy sends the latest
			return false
		}
	}
	if e.Msg.Token <= rl.lastTok {
		return false // a grant of a request that ended already (cannot happen: tokens grow)
	}
	rl.lastTok = e.Msg.Token
	rl.q = append(rl.q, &pending{grant: *e, renewed: r.s.now()})
	r.waitMu.Lock()
	r.waiting[e.Msg.Lock] = struct{}{}
	r.waitMu.Unlock()
	if r.rw != nil {
		p, lock := rl.q[len(rl.q)-1], e.Msg.Lock
		r.goroutines.Go(func() { r.holder(lock, p) })
		return false
	}
	if !rl.running {
		lock := e.Msg.Lock
		if r.goroutines.Go(func() { r.proxy(lock) }) {
			rl.running = true
		}
	}
	return false
}

// reconcile marks every queued grant of lock whose holder the core no longer lists as ended,
// and wakes the proxy. The core is the authority: the server gives up the ALock of a UDP holder
// only after the core has removed it (release, lease expiry, admin reset). sh.mu is held.
func (r *rdmaTier) reconcile(sh *srvcore.Shard, lock uint32) {
	rl := &r.locks[lock]
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if len(rl.q) == 0 {
		return
	}
	info, _ := sh.Core().Inspect(lock)
	woke := false
	for _, p := range rl.q {
		if p.ended || isHolder(info.Holders, p.grant.Msg.Txn, p.grant.Msg.Token) {
			continue
		}
		p.ended = true
		woke = true
	}
	if woke {
		rl.cond.Broadcast()
	}
}

// keepAlive renews the core's lease of every UDP grant still waiting for its ALock once a third
// of its lease has passed, with a lease probe stepped on the client's behalf (its answer is
// dropped): a UDP request waiting for a co-located or remote ALock holder holds nothing yet, so
// its lease must not run out meanwhile. Its lease therefore starts, within a third of itself,
// when the grant is sent. The core calls it at the start of every Tick, with no mutex held.
func (r *rdmaTier) Tick(now int64, c *srvcore.Core, out *srvcore.Out) {
	r.waitMu.Lock()
	locks := make([]uint32, 0, len(r.waiting))
	for l := range r.waiting {
		locks = append(locks, l)
	}
	r.waitMu.Unlock()
	var probes []lockcore.Request
	for _, lock := range locks {
		sh := c.ShardOf(lock)
		sh.Lock()
		rl := &r.locks[lock]
		rl.mu.Lock()
		probes = probes[:0]
		waits := false
		for _, p := range rl.q {
			if p.held || p.ended {
				continue
			}
			waits = true
			if lease := int64(p.grant.Msg.LeaseMicros) * 1000; now-p.renewed >= lease/3 {
				p.renewed = now
				m := &p.grant.Msg
				probes = append(probes, lockcore.Request{From: p.grant.To, Fields: wire.Fields{Op: wire.OpLeaseProbe,
					Mode: m.Mode, Priority: m.Priority, Tenant: m.Tenant, Lock: lock, Txn: m.Txn, Token: m.Token}})
			}
		}
		if !waits {
			r.waitMu.Lock()
			delete(r.waiting, lock) // queueGrant adds it again, under rl.mu
			r.waitMu.Unlock()
		}
		rl.mu.Unlock()
		for i := range probes {
			q := &probes[i]
			r.probeOut = sh.Core().Step(now, q, r.probeOut[:0])
			k := 0
			for _, e := range r.probeOut {
				if e.Msg.Lock == lock && e.Msg.Txn == q.Txn && (e.Msg.Op == wire.OpLeaseProbe || e.Msg.Op == wire.OpReject) {
					continue // the answer to the probe, which the client did not send
				}
				r.probeOut[k] = e
				k++
			}
			r.probeOut = r.filter(sh, r.probeOut[:k])
			out.Sends = append(out.Sends, r.probeOut...)
			r.reconcile(sh, lock) // a refused probe means the holder ended
		}
		sh.Unlock()
	}
}

func isHolder(hs []lockcore.Entry, txn, token uint64) bool {
	for i := range hs {
		if hs[i].Txn == txn && hs[i].Token == token {
			return true
		}
	}
	return false
}

// proxy serves the queued grants of one RDMA lock in order: it takes the ALock in the local
// cohort (blocking, outside every mutex), sends the grant unless the holder ended meanwhile,
// waits until the core ends the holder, and unlocks. At most one grant per lock is being served
// at a time because the core serialises the (exclusive) UDP holders of the lock. The proxy
// returns when the queue is empty or the tier shuts down.
func (r *rdmaTier) proxy(lock uint32) {
	r.proxies.Add(1)
	defer r.proxies.Add(-1)
	rl := &r.locks[lock]
	ptr := r.tbl.Lock(int(lock))
	h, err := r.pool.Get()
	if err != nil {
		// The region is out of descriptors (RDMAConfig.Emu.RegionSize): the queued grants cannot
		// be served; their clients are refused as on shutdown, the core's holders expire.
		r.s.log.Error("rdma proxy handle", "lock", lock, "err", err)
		r.abandon(rl)
		return
	}
	for {
		rl.mu.Lock()
		for len(rl.q) > 0 && rl.q[0].ended {
			rl.pop()
		}
		if r.stop.Load() {
			rl.mu.Unlock()
			r.abandon(rl)
			return
		}
		if len(rl.q) == 0 {
			rl.mu.Unlock()
			break
		}
		p := rl.q[0]
		rl.mu.Unlock()
		take := !r.unsafeNoALock() // read once: an Unlock must match the Lock taken
		if take {
			r.beforeLock(lock)
			if err := rdmaproto.Do(func() error { return h.Lock(ptr) }); err != nil {
				r.abandon(rl) // shutting down; the handle is left in the queue with the table
				return
			}
		}
		rl.mu.Lock()
		stopping := r.serveLocked(rl, p)
		if !stopping {
			rl.pop()
		}
		rl.mu.Unlock()
		if stopping {
			r.abandon(rl)
			return
		}
		if take {
			if err := rdmaproto.Do(func() error { return h.Unlock(ptr) }); err != nil {
				r.abandon(rl)
				return
			}
		}
	}
	_ = r.pool.Put(h)
	rl.mu.Lock()
	rl.running = false
	// A grant queued between the emptiness check and here would have found running set: serve it.
	if len(rl.q) > 0 && !r.stop.Load() && r.goroutines.Go(func() { r.proxy(lock) }) {
		rl.running = true
	}
	rl.mu.Unlock()
}

// serveLocked hands p its grant, unless p has ended (counted as dropped) or the tier is
// stopping, and then waits on rl.cond until p ends or the tier stops. It reports whether the tier
// is stopping. Precondition: rl.mu is held; it is held again when serveLocked returns.
func (r *rdmaTier) serveLocked(rl *rlock, p *pending) (stopping bool) {
	if !p.ended && !r.stop.Load() {
		p.held = true
		r.send(&p.grant) // under rl.mu: before any later answer about this holder
		r.proxyGrants.Add(1)
		for !p.ended && !r.stop.Load() {
			rl.cond.Wait()
		}
	} else if p.ended {
		r.proxyDropped.Add(1)
	}
	return r.stop.Load()
}

func (rl *rlock) pop() {
	rl.q[0] = nil
	rl.q = rl.q[1:]
	if len(rl.q) == 0 {
		rl.q = nil
	}
}

// abandon ends a proxy on shutdown: the grants it had not sent are answered with reject
// shutdown (their holders never got the lock); a grant already sent stays the client's until its
// lease ends, as for any lock on a server that shuts down.
func (r *rdmaTier) abandon(rl *rlock) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for _, p := range rl.q {
		if !p.held && !p.ended {
			m := p.grant.Msg
			m.Op, m.Status, m.Flags, m.LeaseMicros = wire.OpReject, wire.StatusShutdown, m.Flags&wire.FlagForwarded, 0
			rej := lockcore.Effect{To: p.grant.To, Msg: m}
			r.send(&rej)
		}
	}
	rl.q = nil
	rl.running = false
}

// send writes one effect on the first socket (proxies do not own a batch writer).
func (r *rdmaTier) send(e *lockcore.Effect) {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	wire.Header(r.sendBuf).Encode(&e.Msg)
	var err error
	if raw := r.s.raw[0]; raw != nil {
		_, err = raw.WriteToUDPAddrPort(r.sendBuf, e.To)
	} else {
		_, err = r.s.conns[0].WriteTo(r.sendBuf, net.UDPAddrFromAddrPort(e.To))
	}
	if err != nil {
		r.s.sendErr.Add(1)
		return
	}
	r.s.sent.Add(1)
}

// admin answers the join and peer-lookup admin operations (docs/protocol.md, "RDMA admin").
func (r *rdmaTier) admin(req *lockcore.Request, out *srvcore.Out) {
	m := wire.Fields{Op: wire.OpAdmin, Status: req.Status, Flags: wire.FlagReply, Txn: req.Txn}
	reject := func(s wire.Status) {
		m = wire.Fields{Op: wire.OpReject, Status: s, Txn: req.Txn, Lock: req.Lock, Tenant: req.Tenant,
			Timestamp: req.Timestamp}
	}
	switch req.Status {
	case rdmaproto.AdminJoin:
		addr := req.Client
		if !addr.IsValid() || addr.Port() == 0 {
			reject(wire.StatusBadRequest)
			break
		}
		if addr.Addr().IsUnspecified() {
			addr = netip.AddrPortFrom(req.From.Addr(), addr.Port())
		}
		id, ok := r.join(addr)
		if !ok {
			reject(wire.StatusQueueFull)
			break
		}
		m.Tenant, m.Lock, m.Client = uint16(id), r.n, r.nic
		if r.rw != nil {
			m.Token, m.Timestamp = uint64(r.rw.tbl.Base()), rdmaproto.PackParams(r.rw.tbl.Params())
		} else {
			m.Token = uint64(r.tbl.Base())
		}
	case rdmaproto.AdminPeer:
		addr, ok := r.peer(verbs.NodeID(req.Tenant))
		if !ok {
			reject(wire.StatusBadRequest)
			break
		}
		m.Tenant, m.Client = req.Tenant, addr
	}
	out.Sends = append(out.Sends, lockcore.Effect{To: req.From, Msg: m})
}

// join registers a remote node's NIC address. Node ids are never reused (a stale descriptor
// pointer in some lock's queue must never reach a different node), so MaxPeers bounds the
// distinct addresses that ever joined since the server started.
func (r *rdmaTier) join(addr netip.AddrPort) (verbs.NodeID, bool) {
	r.peersMu.Lock()
	defer r.peersMu.Unlock()
	if id, ok := r.byAddr[addr]; ok {
		return id, true
	}
	if len(r.peers) >= r.s.cfg.RDMA.MaxPeers {
		return 0, false
	}
	id := verbs.NodeID(len(r.peers) + 1)
	if r.rw != nil {
		// RMA-RW hands the lock over between nodes by writing into the next holder's queue node,
		// which lives on its node: the server's node must reach every client's NIC.
		if err := r.node.Connect(id, addr.String()); err != nil {
			r.s.log.Error("rdma join: connect to the node's NIC", "node", id, "nic", addr, "err", err)
			return 0, false
		}
	}
	r.peers = append(r.peers, addr)
	r.byAddr[addr] = id
	r.s.log.Info("rdma node joined", "node", id, "nic", addr)
	return id, true
}

func (r *rdmaTier) peer(id verbs.NodeID) (netip.AddrPort, bool) {
	if id == rdmaproto.ServerNode {
		return r.nic, true
	}
	r.peersMu.Lock()
	defer r.peersMu.Unlock()
	if int(id) > len(r.peers) {
		return netip.AddrPort{}, false
	}
	return r.peers[id-1], true
}

// LocalLocks is the co-located Go API of the ALock table: goroutines in the server's process
// take RDMA-backed locks through ALock's local cohort (CPU atomics on the server node's memory,
// no verbs, no UDP). They exclude UDP clients of the same lock (whose grants the server takes in
// the same cohort) and remote clients (the remote cohort). Lock ids are the protocol's: lock i
// is table entry i, for i < Len().
//
// A lock taken here has no lease and no fencing token: it is held until Unlock. Lock and Unlock
// may be called by different goroutines, as with sync.Mutex. Safe for concurrent use. The tier
// shuts down when Run returns: blocked Lock calls then return ErrClosed, and so does every call
// after it.
type LocalLocks struct {
	r    *rdmaTier
	held []tablehandle.Held
}

// LocalLocks returns the co-located API of the server's RDMA table, or nil when the server has
// no RDMA tier.
func (s *Server) LocalLocks() *LocalLocks {
	if s.rdma == nil {
		return nil
	}
	return s.rdma.local
}

// Len is the number of RDMA-backed locks (ids 0..Len()-1).
func (l *LocalLocks) Len() int { return int(l.r.n) }

// Lock takes lock i exclusively (ALock: in the local cohort), blocking (spinning) until it is
// held.
//
// If ctx can be cancelled the acquisition runs on a helper goroutine and Lock returns ctx.Err()
// when ctx ends first; acquisitions cannot be withdrawn, so the helper finishes the acquisition
// and unlocks at once. With a context that is never done (context.Background()) the calling
// goroutine spins itself. Lock returns ErrClosed when the server shuts down first.
func (l *LocalLocks) Lock(ctx context.Context, i uint32) error { return l.acquire(ctx, i, false) }

// RLock takes lock i shared: in RW mode several holders (co-located, UDP, remote) may hold it
// at once; in ALock mode it is taken exclusively. Release it with RUnlock. Otherwise as Lock.
func (l *LocalLocks) RLock(ctx context.Context, i uint32) error { return l.acquire(ctx, i, true) }

func (l *LocalLocks) acquire(ctx context.Context, i uint32, shared bool) error {
	r := l.r
	if !r.isRDMA(i) {
		return fmt.Errorf("lock %d of %d: %w", i, r.n, ErrNotRDMALock)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.stop.Load() {
		return ErrClosed
	}
	h, err := r.handles().Get()
	if err != nil {
		return err
	}
	if ctx.Done() == nil {
		if err := rdmaproto.Do(func() error { return h.Lock(i, shared) }); err != nil {
			return r.lockErr(i, err)
		}
		l.held[i].Add(h, shared)
		return nil
	}
	var decided atomic.Bool // set by whichever of Lock and the helper gives up the other
	res := make(chan error, 1)
	if !r.goroutines.Go(func() {
		err := rdmaproto.Do(func() error { return h.Lock(i, shared) })
		if err == nil && !decided.CompareAndSwap(false, true) {
			// Abandoned by a cancelled Lock: give the lock back at once.
			if rdmaproto.Do(func() error { return h.Unlock(i) }) == nil {
				_ = r.handles().Put(h)
			}
			return
		}
		res <- err
	}) {
		_ = r.handles().Put(h)
		return ErrClosed
	}
	select {
	case err := <-res:
		if err != nil {
			return r.lockErr(i, err)
		}
	case <-ctx.Done():
		if decided.CompareAndSwap(false, true) {
			return ctx.Err()
		}
		if err := <-res; err != nil { // the helper got the lock (or failed) first
			return r.lockErr(i, err)
		}
	}
	l.held[i].Add(h, shared)
	return nil
}

// lockErr is the error of a failed acquisition: ErrClosed once the tier shuts down, else the
// cause (a verb that failed in the middle: the lock may be left blocked, as for a remote client).
func (r *rdmaTier) lockErr(i uint32, err error) error {
	if r.stop.Load() || errors.Is(err, rdmaproto.ErrAborted) {
		return ErrClosed
	}
	return fmt.Errorf("lock %d (the lock may be left blocked): %w", i, err)
}

// Unlock releases lock i taken with Lock.
func (l *LocalLocks) Unlock(i uint32) error { return l.release(i, false) }

// RUnlock releases one shared hold of lock i taken with RLock.
func (l *LocalLocks) RUnlock(i uint32) error { return l.release(i, true) }

func (l *LocalLocks) release(i uint32, shared bool) error {
	r := l.r
	if !r.isRDMA(i) {
		return fmt.Errorf("lock %d of %d: %w", i, r.n, ErrNotRDMALock)
	}
	h := l.held[i].Take(shared)
	if h == nil {
		return ErrNotHeld
	}
	if r.stop.Load() {
		return ErrClosed
	}
	if err := rdmaproto.Do(func() error { return h.Unlock(i) }); err != nil {
		return r.lockErr(i, err)
	}
	return r.handles().Put(h)
}

// RDMAStats are the counters of the RDMA tier.
type RDMAStats struct {
	// ProxyGrants counts UDP grants of RDMA locks sent after their proxy took the ALock.
	ProxyGrants uint64
	// ProxyDropped counts UDP grants that ended (lease expiry, reset) before their proxy got the
	// ALock, and were never sent.
	ProxyDropped uint64
	// TryRefused counts try acquires refused because the ALock was held or wanted outside UDP.
	TryRefused uint64
	// Proxies is the number of proxy goroutines (locks with UDP grants being served).
	Proxies int
	// Peers is the number of remote nodes that joined.
	Peers int
}

// RDMAStats returns the RDMA tier's counters, and false without an RDMA tier.
func (s *Server) RDMAStats() (RDMAStats, bool) {
	r := s.rdma
	if r == nil {
		return RDMAStats{}, false
	}
	r.peersMu.Lock()
	peers := len(r.peers)
	r.peersMu.Unlock()
	return RDMAStats{ProxyGrants: r.proxyGrants.Load(), ProxyDropped: r.proxyDropped.Load(),
		TryRefused: r.tryRefused.Load(), Proxies: int(r.proxies.Load()), Peers: peers}, true
}
