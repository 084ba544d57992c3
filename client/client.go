package client

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/internal/udpbatch"
	"github.com/netlock-go/netlock/wire"
)

// Client sends lock requests to netlock servers over one UDP socket. It is safe for concurrent
// use. Close it when done; Close does not release held locks (their leases expire).
type Client struct {
	cfg      Config
	conn     net.PacketConn
	raw      *net.UDPConn // the socket itself when not wrapped: batched I/O
	out      outbox
	clientID uint32
	ids      txnSpace // with clientID 0
	servers  []netip.AddrPort
	switches []addrMatch // answers from these are accepted for any request
	log      *slog.Logger

	txnSeq atomic.Uint64
	lastTS atomic.Int64

	mu      sync.Mutex
	entries map[key]*Grant            // guarded by mu: requests in flight and held grants
	routes  map[string]netip.AddrPort // guarded by mu: resolved Route results
	closed  bool                      // guarded by mu

	waiters sync.Pool // *waiter: reused, so that a request allocates no channel or timer
	keep    keeper    // the leases of held grants

	done      chan struct{} // closed by Close
	closeOnce sync.Once
	wg        sync.WaitGroup // the reader, the lease keeper and withdrawals

	stats struct {
		sent, retransmits, received, malformed, unknown, strayGrants, dupGrants,
		overflow, grants, rejects, leaseLost, renewals, foreign atomic.Int64
	}
}

// Stats counts the client's traffic.
type Stats struct {
	// Sent counts datagrams sent, Retransmits the part of them that repeated a request.
	Sent, Retransmits int64
	// Received counts well-formed datagrams read; Malformed the ones that failed to parse.
	Received, Malformed int64
	// Unknown counts answers for which no request was waiting (late duplicates, mostly).
	Unknown int64
	// StrayGrants counts grants for which no request was waiting; each was released at once.
	StrayGrants int64
	// DupGrants counts repeated grants of locks already held.
	DupGrants int64
	// Overflow counts answers dropped because their waiter's queue was full.
	Overflow int64
	// Grants, Rejects, LeaseLost and Renewals count outcomes.
	Grants, Rejects, LeaseLost, Renewals int64
	// Foreign counts well-formed datagrams dropped because they came from an address the client
	// did not send the request to (nor a configured switch): forged or misrouted answers.
	Foreign int64
}

// addrMatch is a resolved Config.Switches entry: an IP address and, if non-zero, a port.
type addrMatch struct {
	ip   netip.Addr
	port uint16
}

// key identifies the requests of one transaction on one lock.
type key struct {
	lock uint32
	txn  uint64
}

// kind is the kind of answer a waiter expects.
type kind uint8

const (
	kindAcquire kind = iota // grant or reject
	kindRelease             // release+reply or reject
	kindProbe               // lease-probe+reply or reject
	numKinds
)

// waiter is where the reader goroutine hands answers to one request in flight: a small
// buffered channel and a timer of the client's clock for retransmissions. Waiters are pooled.
type waiter struct {
	ch chan wire.Fields
	t  Timer
	m  wire.Fields // the answer being handled (exchange)
}

func (c *Client) getWaiter() *waiter { return c.waiters.Get().(*waiter) }

// putWaiter returns w to the pool; nobody may deliver to it any more (it was unregistered).
func (c *Client) putWaiter(w *waiter) {
	w.t.Stop()
	for {
		select {
		case <-w.ch:
		case <-w.t.C():
		default:
			c.waiters.Put(w)
			return
		}
	}
}

// stoppedTimer returns a timer of clk that is not running.
func stoppedTimer(clk Clock) Timer {
	t := clk.NewTimer(time.Hour)
	t.Stop()
	return t
}

// New opens the client's socket and starts its reader.
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Client{
		cfg:      cfg,
		clientID: cfg.ClientID,
		log:      cfg.Logger,
		entries:  make(map[key]*Grant),
		routes:   make(map[string]netip.AddrPort),
		done:     make(chan struct{}),
	}
	for _, s := range cfg.Servers {
		a, err := net.ResolveUDPAddr("udp", s)
		if err != nil {
			return nil, fmt.Errorf("client: server %q: %w", s, err)
		}
		c.servers = append(c.servers, unmapped(a.AddrPort()))
	}
	for _, s := range cfg.Switches {
		m, err := parseAddrMatch(s)
		if err != nil {
			return nil, fmt.Errorf("client: switch %q: %w", s, err)
		}
		c.switches = append(c.switches, m)
	}
	if c.clientID == 0 {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("client: transaction id key: %w", err)
		}
		c.ids = txnSpace{k0: binary.BigEndian.Uint64(b[:8]), k1: binary.BigEndian.Uint64(b[8:])}
	}
	la, err := net.ResolveUDPAddr("udp", cfg.Local)
	if err != nil {
		return nil, fmt.Errorf("client: local address %q: %w", cfg.Local, err)
	}
	uc, err := net.ListenUDP("udp", la)
	if err != nil {
		return nil, fmt.Errorf("client: listen: %w", err)
	}
	c.conn = uc
	if cfg.WrapConn != nil {
		c.conn = cfg.WrapConn(uc)
	} else {
		c.raw = uc
		if c.out.w, err = udpbatch.NewWriter(uc, sendBatch, wire.Len); err != nil {
			uc.Close()
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	c.waiters.New = func() any { return &waiter{ch: make(chan wire.Fields, 4), t: stoppedTimer(cfg.Clock)} }
	c.keep.init(c)
	c.wg.Add(2)
	go c.readLoop()
	go c.keep.run()
	return c, nil
}

// LocalAddr returns the address of the client's socket.
func (c *Client) LocalAddr() net.Addr { return c.conn.LocalAddr() }

// ID returns Config.ClientID: the high 32 bits of the client's transaction ids when it was set,
// 0 when the ids are drawn from the client's random id space (the default).
func (c *Client) ID() uint32 { return c.clientID }

// Close stops the client: pending requests return [ErrClosed], lease renewals stop, the socket is
// closed, and Close waits for the client's goroutines. Held locks are not released; their leases
// run out on the servers. Close is idempotent.
func (c *Client) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		close(c.done)
		err = c.conn.Close()
		c.wg.Wait()
	})
	return err
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	s := &c.stats
	return Stats{
		Sent: s.sent.Load(), Retransmits: s.retransmits.Load(), Received: s.received.Load(),
		Malformed: s.malformed.Load(), Unknown: s.unknown.Load(), StrayGrants: s.strayGrants.Load(),
		DupGrants: s.dupGrants.Load(), Overflow: s.overflow.Load(), Grants: s.grants.Load(),
		Rejects: s.rejects.Load(), LeaseLost: s.leaseLost.Load(), Renewals: s.renewals.Load(),
		Foreign: s.foreign.Load(),
	}
}

// newTxnID returns a fresh transaction id, never 0. By default it is the counter's next value
// mapped through the client's keyed permutation (txnSpace): distinct from every earlier id of
// this client, and uniformly distributed over the 2^64 values independently of every other
// client's ids (docs/protocol.md, "Transaction ids"). With Config.ClientID it is ClientID in the
// high 32 bits and the counter in the low 32 bits.
func (c *Client) newTxnID() uint64 {
	for {
		n := c.txnSeq.Add(1)
		var id uint64
		if c.clientID != 0 {
			id = uint64(c.clientID)<<32 | n&0xffffffff
		} else {
			id = c.ids.id(n)
		}
		if id != 0 {
			return id
		}
	}
}

// txnSpace is a client's random transaction-id space: a permutation of the 64-bit counter values
// keyed by two words from crypto/rand. id(n) = mix(mix(n^k0)^k1), where mix is the bijective
// finalizer of SplitMix64 (xor-shifts and multiplications by odd constants). Because mix is a
// bijection, one client never repeats an id before its counter wraps (2^64 ids); because k1 is
// uniform and independent of everything else, each id of a client is uniform over the 2^64
// values whatever the other clients drew, so a given id of one client equals a given id of
// another with probability exactly 2^-64.
type txnSpace struct{ k0, k1 uint64 }

func (s txnSpace) id(n uint64) uint64 { return mix64(mix64(n^s.k0) ^ s.k1) }

// mix64 is SplitMix64's finalizer, a bijection of uint64.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// timestamp returns the monotonic clock in ns, strictly increasing across calls, so that every request
// carries a distinct timestamp and a grant can be matched to the attempt it answers.
func (c *Client) timestamp() int64 {
	now := c.cfg.Clock.Mono()
	for {
		last := c.lastTS.Load()
		if now <= last {
			now = last + 1
		}
		if c.lastTS.CompareAndSwap(last, now) {
			return now
		}
	}
}

// parseAddrMatch reads "ip" (any port) or "host:port".
func parseAddrMatch(s string) (addrMatch, error) {
	if ip, err := netip.ParseAddr(s); err == nil {
		return addrMatch{ip: ip.Unmap()}, nil
	}
	a, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return addrMatch{}, err
	}
	ap := unmapped(a.AddrPort())
	return addrMatch{ip: ap.Addr(), port: ap.Port()}, nil
}

// isSwitch reports whether from is a configured switch address.
func (c *Client) isSwitch(from netip.AddrPort) bool {
	for _, m := range c.switches {
		if m.ip == from.Addr() && (m.port == 0 || m.port == from.Port()) {
			return true
		}
	}
	return false
}

// isServer reports whether from is a server the client sends to (a configured server or an
// answer of Route it resolved), or a switch. Precondition: c.mu is held.
func (c *Client) isServerLocked(from netip.AddrPort) bool {
	for _, a := range c.servers {
		if a == from {
			return true
		}
	}
	for _, a := range c.routes {
		if a == from {
			return true
		}
	}
	return c.isSwitch(from)
}

func unmapped(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// serverFor returns the address of the server that owns lock.
func (c *Client) serverFor(lock uint32) (netip.AddrPort, error) {
	if c.cfg.Route == nil {
		return c.servers[int(lock%uint32(len(c.servers)))], nil
	}
	s := c.cfg.Route(lock)
	c.mu.Lock()
	a, ok := c.routes[s]
	c.mu.Unlock()
	if ok {
		return a, nil
	}
	ua, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("client: route of lock %d: %w", lock, err)
	}
	a = unmapped(ua.AddrPort())
	c.mu.Lock()
	c.routes[s] = a
	c.mu.Unlock()
	return a, nil
}

// sendBatch is the most datagrams one sendmmsg carries.
const sendBatch = 64

// outbox combines the sends of many goroutines into sendmmsg calls. A sender appends its datagram
// to queue; if no flush is in progress it becomes the flusher and sends everything queued,
// including what others append meanwhile, until the queue is empty. Under load one system call
// thus carries many requests; alone, a sender pays one sendmmsg, as it would pay one sendto.
type outbox struct {
	mu       sync.Mutex
	queue    []outPkt // guarded by mu
	spare    []outPkt // guarded by mu
	flushing bool     // guarded by mu
	w        *udpbatch.Writer
}

type outPkt struct {
	to  netip.AddrPort
	buf [wire.Len]byte
}

// send encodes f and sends it to to. A failed send is treated like a lost datagram: the caller
// retransmits. It returns ErrClosed once the client is closed.
func (c *Client) send(to netip.AddrPort, f *wire.Fields) error {
	c.stats.sent.Add(1)
	if f.Flags&wire.FlagRetry != 0 {
		c.stats.retransmits.Add(1)
	}
	if c.raw == nil {
		var buf [wire.Len]byte
		wire.Header(buf[:]).Encode(f)
		if _, err := c.conn.WriteTo(buf[:], net.UDPAddrFromAddrPort(to)); err != nil {
			if c.isClosed() {
				return ErrClosed
			}
			c.log.Debug("netlock client: send failed", "op", f.Op, "lock", f.Lock, "err", err)
		}
		return nil
	}
	o := &c.out
	o.mu.Lock()
	o.queue = append(o.queue, outPkt{to: to})
	wire.Header(o.queue[len(o.queue)-1].buf[:]).Encode(f)
	if o.flushing {
		o.mu.Unlock()
		return nil
	}
	o.flushing = true
	for len(o.queue) > 0 {
		batch := o.queue
		o.queue, o.spare = o.spare[:0], nil
		o.mu.Unlock()
		for i := range batch {
			if err := o.w.Add(batch[i].buf[:], batch[i].to); err != nil {
				break
			}
			if o.w.Len() == o.w.Cap() {
				c.flushOut()
			}
		}
		c.flushOut()
		o.mu.Lock()
		o.spare = batch[:0]
	}
	o.flushing = false
	o.mu.Unlock()
	if c.isClosed() {
		return ErrClosed
	}
	return nil
}

// flushOut sends the outbox writer's datagrams. Only the flusher calls it.
func (c *Client) flushOut() {
	if _, err := c.out.w.Flush(); err != nil && !c.isClosed() {
		c.log.Debug("netlock client: send failed", "err", err)
	}
}

func (c *Client) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// recvBatch is the most datagrams one recvmmsg returns.
const recvBatch = 64

func (c *Client) readLoop() {
	defer c.wg.Done()
	if c.raw != nil {
		r, err := udpbatch.NewReader(c.raw, recvBatch, 2048)
		if err == nil {
			for {
				n, err := r.Read()
				if err != nil {
					if c.isClosed() || errors.Is(err, net.ErrClosed) {
						return
					}
					c.log.Warn("netlock client: read failed", "err", err)
					continue
				}
				for i := 0; i < n; i++ {
					c.input(r.Packet(i))
				}
			}
		}
		c.log.Warn("netlock client: batched reads unavailable", "err", err)
	}
	buf := make([]byte, 2048)
	for {
		n, from, err := c.conn.ReadFrom(buf)
		if err != nil {
			if c.isClosed() || errors.Is(err, net.ErrClosed) {
				return
			}
			c.log.Warn("netlock client: read failed", "err", err)
			continue
		}
		var ap netip.AddrPort
		if ua, ok := from.(*net.UDPAddr); ok {
			ap = unmapped(ua.AddrPort())
		}
		c.input(buf[:n], ap)
	}
}

// input handles one datagram read from the socket.
func (c *Client) input(b []byte, from netip.AddrPort) {
	h, err := wire.Parse(b)
	if err != nil {
		c.stats.malformed.Add(1)
		c.log.Debug("netlock client: malformed datagram", "from", from, "err", err)
		return
	}
	c.stats.received.Add(1)
	var f wire.Fields
	h.Decode(&f)
	c.dispatch(&f, unmapped(from))
}

// dispatch hands f to the request waiting for it. Answers are accepted only from the address
// the request was sent to (a grant being held: the server that granted it) or from a configured
// switch; the rest are counted as foreign and dropped.
func (c *Client) dispatch(f *wire.Fields, from netip.AddrPort) {
	c.mu.Lock()
	e := c.entries[key{f.Lock, f.Txn}]
	switch {
	case e == nil:
		if !c.isServerLocked(from) {
			// In particular a stray grant is given back only to a server this client uses: the
			// client must not be made to send releases anywhere.
			c.stats.foreign.Add(1)
			c.mu.Unlock()
			return
		}
	case from != e.peer && !(e.held && from == e.server) && !c.isSwitch(from):
		c.stats.foreign.Add(1)
		c.mu.Unlock()
		return
	}
	if e != nil {
		e.heard.Add(1)
		if f.Op == wire.OpReject && f.Token == 0 && e.aliveFirst != 0 && f.Timestamp >= e.aliveFirst &&
			f.Timestamp <= e.aliveLast {
			// The refusal of a liveness probe (exchange), possibly a late one: the server is
			// there; nobody waits for it.
			c.mu.Unlock()
			return
		}
	}
	var target *waiter
	var lost func()
	stray := false
	switch {
	case f.Op == wire.OpGrant:
		switch {
		case e != nil && e.waiters[kindAcquire] != nil:
			target = e.waiters[kindAcquire]
		case e != nil && e.held && e.token == f.Token:
			c.stats.dupGrants.Add(1)
		default:
			// Nobody waits for this grant (the acquire was abandoned, or the grant is a late
			// duplicate of one released already): give it back.
			c.stats.strayGrants.Add(1)
			stray = true
		}
	case f.Op == wire.OpRelease && f.Flags&wire.FlagReply != 0 && e != nil:
		target = e.waiters[kindRelease]
	case f.Op == wire.OpLeaseProbe && f.Flags&wire.FlagReply != 0 && e != nil:
		target = e.waiters[kindProbe]
		if target == nil && e.held && e.probing && f.Token == e.token && f.Timestamp == e.probeTS {
			e.renewedLocked(f) // the lease keeper's renewal
		}
	case f.Op == wire.OpReject && e != nil:
		c.stats.rejects.Add(1)
		if (f.Status == wire.StatusLeaseExpired || f.Status == wire.StatusShutdown) && e.held && e.token == f.Token {
			// The lease ended, or the server shuts down and will not renew it.
			var cause error = &RejectError{Op: wire.OpGrant, Lock: f.Lock, Txn: f.Txn, Status: f.Status}
			if f.Status == wire.StatusShutdown {
				cause = fmt.Errorf("%w: %w", ErrLeaseLost, cause)
			}
			lost = e.markLostLocked(cause)
			// Tell a pending release or renewal too.
			for _, k := range [...]kind{kindRelease, kindProbe} {
				if w := e.waiters[k]; w != nil {
					c.deliver(w, f)
				}
			}
			break
		}
		if e.held && e.probing && e.waiters[kindProbe] == nil && f.Token == e.token && f.Timestamp == e.probeTS {
			// The lease keeper's renewal was refused: the lease is lost.
			lost = e.markLostLocked(fmt.Errorf("%w: renewal refused: %w", ErrLeaseLost,
				&RejectError{Op: wire.OpLeaseProbe, Lock: f.Lock, Txn: f.Txn, Status: f.Status}))
			break
		}
		// A reject names no op; its echoed timestamp says which request it answers. Without one
		// (a server that does not echo), release (the last request of a txn) goes first, then
		// acquire, then renewal.
		for _, k := range [...]kind{kindRelease, kindAcquire, kindProbe} {
			if w := e.waiters[k]; w != nil && (f.Timestamp == 0 || e.ts[k] == 0 || e.ts[k] == f.Timestamp) {
				target = w
				break
			}
		}
	}
	if target != nil {
		c.deliver(target, f)
	} else if !stray && f.Op != wire.OpGrant && !(f.Op == wire.OpReject && e != nil && e.held) &&
		!(f.Op == wire.OpLeaseProbe && e != nil && e.held) {
		c.stats.unknown.Add(1)
	}
	c.mu.Unlock()
	if lost != nil {
		lost()
	}
	if stray {
		rel := wire.Fields{Op: wire.OpRelease, Mode: f.Mode, Lock: f.Lock, Txn: f.Txn, Token: f.Token,
			Tenant: f.Tenant, Priority: f.Priority, Timestamp: uint64(c.timestamp())}
		_ = c.send(from, &rel)
	}
}

// setPeer records the address the requests of g are sent to.
func (c *Client) setPeer(g *Grant, to netip.AddrPort) {
	c.mu.Lock()
	g.peer = to
	c.mu.Unlock()
}

// deliver queues f for a waiter without blocking; a full queue drops f (the waiter retransmits).
func (c *Client) deliver(w *waiter, f *wire.Fields) {
	select {
	case w.ch <- *f:
	default:
		c.stats.overflow.Add(1)
	}
}

// register makes w the waiter of kind kd of g's request, whose timestamp is ts (0: match any
// reject). The first registration puts g into the client's entries; a second request for the
// same (lock, txn) while one of the same kind is in flight is refused.
func (c *Client) register(g *Grant, kd kind, ts int64, w *waiter) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	switch e := c.entries[g.key]; {
	case e == nil:
		c.entries[g.key] = g
	case e != g:
		return fmt.Errorf("client: lock %d txn %#x: request already in flight", g.key.lock, g.key.txn)
	case g.waiters[kd] != nil:
		return fmt.Errorf("client: lock %d txn %#x: %v already in flight", g.key.lock, g.key.txn, kd)
	}
	g.waiters[kd] = w
	g.ts[kd] = uint64(ts)
	return nil
}

// unregisterLocked removes the waiter of kind kd and drops the entry once it is idle.
// Precondition: c.mu is held.
func (c *Client) unregisterLocked(g *Grant, kd kind) {
	g.waiters[kd] = nil
	c.dropIfIdleLocked(g)
}

// dropIfIdleLocked forgets g once it is neither held nor waited for. Precondition: c.mu is held.
func (c *Client) dropIfIdleLocked(g *Grant) {
	if g.held {
		return
	}
	for _, w := range g.waiters {
		if w != nil {
			return
		}
	}
	if c.entries[g.key] == g {
		delete(c.entries, g.key)
	}
}

// unregister removes the waiter w of kind kd and returns it to the pool.
func (c *Client) unregister(g *Grant, kd kind, w *waiter) {
	c.mu.Lock()
	c.unregisterLocked(g, kd)
	c.mu.Unlock()
	c.putWaiter(w)
}
