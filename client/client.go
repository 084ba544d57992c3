package client

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/netlock-go/netlock/client/clientcore"
	"github.com/netlock-go/netlock/internal/udpbatch"
	"github.com/netlock-go/netlock/wire"
)

// Client sends lock requests to netlock servers over one UDP socket. It is safe for concurrent
// use. Close it when done; Close does not release held locks (their leases expire).
//
// The protocol (retransmissions, matching answers to requests, leases) is package clientcore's;
// the Client is its shell: the socket and its reader goroutine, a timer goroutine that runs the
// core's Tick at its next deadline, and the callers, who wait for their operation. One mutex
// serializes the core.
type Client struct {
	cfg      Config
	conn     net.PacketConn
	raw      *net.UDPConn // the socket itself when not wrapped: batched I/O
	sendq    outbox
	clientID uint32
	servers  []netip.AddrPort
	log      *slog.Logger

	mu       sync.Mutex
	core     *clientcore.Core
	routes   map[string]netip.AddrPort // resolved Route results
	closed   bool
	out      clientcore.Out // the core's output of the call in progress
	lost     []*Grant       // scratch: grants whose lease a call lost
	due      int64          // the timer goroutine's deadline (math.MaxInt64: none)
	kick     chan struct{}  // wakes the timer goroutine when the core's deadline moved earlier
	waiters  sync.Pool      // *waiter: reused, so that a request allocates no channel
	overflow atomic.Int64

	done      chan struct{} // closed by Close
	closeOnce sync.Once
	wg        sync.WaitGroup // the reader and the timer
}

// Stats counts the client's traffic.
type Stats struct {
	// Sent counts requests sent, Retransmits the part of them that repeated a request.
	Sent, Retransmits int64
	// Datagrams counts the datagrams that carried them: fewer than Sent when requests were
	// batched (Config.Batch).
	Datagrams int64
	// Received counts well-formed datagrams read; Malformed the ones that failed to parse.
	Received, Malformed int64
	// Unknown counts answers for which no request was waiting (late duplicates, mostly).
	Unknown int64
	// StrayGrants counts grants for which no request was waiting; each was released at once.
	StrayGrants int64
	// DupGrants counts repeated grants of locks already held.
	DupGrants int64
	// Overflow counts wake-ups dropped because the waiting caller had gone (never, today).
	Overflow int64
	// Grants, Rejects, LeaseLost and Renewals count outcomes.
	Grants, Rejects, LeaseLost, Renewals int64
	// Foreign counts well-formed datagrams dropped because they came from an address the client
	// did not send the request to (nor a configured switch): forged or misrouted answers.
	Foreign int64
}

// waiter is where a caller waits for its operation: a channel the shell signals when the core
// reports the operation done. Waiters are pooled.
type waiter struct{ ch chan struct{} }

func (c *Client) getWaiter() *waiter { return c.waiters.Get().(*waiter) }

func (c *Client) putWaiter(w *waiter) {
	select {
	case <-w.ch:
	default:
	}
	c.waiters.Put(w)
}

// New opens the client's socket and starts its reader.
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, clientID: cfg.ClientID, log: cfg.Logger, routes: make(map[string]netip.AddrPort),
		done: make(chan struct{}), kick: make(chan struct{}, 1), due: maxInt64}
	for _, s := range cfg.Servers {
		a, err := net.ResolveUDPAddr("udp", s)
		if err != nil {
			return nil, fmt.Errorf("client: server %q: %w", s, err)
		}
		c.servers = append(c.servers, unmapped(a.AddrPort()))
	}
	cc := clientcore.Config{Route: c.serverFor, Servers: c.servers, RetryInterval: cfg.RetryInterval,
		MaxRetryInterval: cfg.MaxRetryInterval, RequestTimeout: cfg.RequestTimeout, MaxAttempts: cfg.MaxAttempts,
		KeepAlive: cfg.KeepAlive, ClientID: cfg.ClientID,
		Jitter: func(n int64) int64 { return mrand.Int64N(n + 1) }}
	for _, s := range cfg.Switches {
		m, err := parseAddrMatch(s)
		if err != nil {
			return nil, fmt.Errorf("client: switch %q: %w", s, err)
		}
		cc.Switches = append(cc.Switches, m)
	}
	if c.clientID == 0 {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("client: transaction id key: %w", err)
		}
		cc.TxnKey = [2]uint64{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
	}
	var err error
	if c.core, err = clientcore.New(cc); err != nil {
		return nil, fmt.Errorf("client: %w", err)
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
	}
	if err := c.sendq.init(c.raw, cfg.Batch); err != nil {
		uc.Close()
		return nil, fmt.Errorf("client: %w", err)
	}
	c.waiters.New = func() any { return &waiter{ch: make(chan struct{}, 1)} }
	c.wg.Add(2)
	go c.readLoop()
	go c.timerLoop()
	return c, nil
}

const maxInt64 = 1<<63 - 1

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
		c.out.Reset()
		c.core.Close(&c.out)
		c.finishLocked() // wakes the waiting callers; nothing is sent any more
		c.unlock()
		close(c.done)
		err = c.conn.Close()
		c.wg.Wait()
	})
	return err
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	s := c.core.Stats()
	c.mu.Unlock()
	return Stats{Sent: s.Sent, Retransmits: s.Retransmits, Received: s.Received, Malformed: s.Malformed,
		Datagrams: c.sendq.datagrams.Load(), Unknown: s.Unknown, StrayGrants: s.StrayGrants, DupGrants: s.DupGrants, Overflow: c.overflow.Load(),
		Grants: s.Grants, Rejects: s.Rejects, LeaseLost: s.LeaseLost, Renewals: s.Renewals, Foreign: s.Foreign}
}

// newTxnID returns a fresh transaction id (clientcore.Core.NewTxnID).
func (c *Client) newTxnID() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.NewTxnID()
}

// parseAddrMatch reads "ip" (any port) or "host:port".
func parseAddrMatch(s string) (clientcore.AddrMatch, error) {
	if ip, err := netip.ParseAddr(s); err == nil {
		return clientcore.AddrMatch{IP: ip.Unmap()}, nil
	}
	a, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return clientcore.AddrMatch{}, err
	}
	ap := unmapped(a.AddrPort())
	return clientcore.AddrMatch{IP: ap.Addr(), Port: ap.Port()}, nil
}

func unmapped(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// serverFor returns the address of the server that owns lock (the core's Route). c.mu is held:
// Config.Route is called under the client's mutex.
func (c *Client) serverFor(lock uint32) (netip.AddrPort, error) {
	if c.cfg.Route == nil {
		return c.servers[int(lock%uint32(len(c.servers)))], nil
	}
	s := c.cfg.Route(lock)
	if a, ok := c.routes[s]; ok {
		return a, nil
	}
	ua, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("client: route of lock %d: %w", lock, err)
	}
	a := unmapped(ua.AddrPort())
	c.routes[s] = a
	return a, nil
}

// now returns the client's monotonic clock.
func (c *Client) now() int64 { return c.cfg.Clock.Mono() }

// finishLocked carries out what the core asked for in c.out: it queues the datagrams (sent by
// flush after the mutex is dropped), wakes the callers of finished operations, collects the
// grants whose lease was lost, and moves the timer. c.mu is held.
func (c *Client) finishLocked() {
	if !c.closed {
		for i := range c.out.Sends {
			s := &c.out.Sends[i]
			c.sendq.add(s.To, &s.Msg)
		}
	}
	for _, op := range c.out.Done {
		if w, ok := op.User.(*waiter); ok && w != nil {
			select {
			case w.ch <- struct{}{}:
			default:
				c.overflow.Add(1)
			}
		}
	}
	for _, e := range c.out.Lost {
		if g, ok := e.User.(*Grant); ok && g != nil {
			c.lost = append(c.lost, g)
		}
	}
	if d := c.core.NextDeadline(); d < c.due {
		c.due = d
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// unlock drops c.mu after finishLocked, then sends what was queued and reports lost leases
// outside the mutex.
func (c *Client) unlock() {
	lost := c.lost
	c.lost = nil
	c.mu.Unlock()
	c.flush()
	for _, g := range lost {
		g.reportLost()
	}
}

// timerLoop runs the core's Tick at its next deadline.
func (c *Client) timerLoop() {
	defer c.wg.Done()
	t := c.cfg.Clock.NewTimer(maxDuration)
	defer t.Stop()
	for {
		c.mu.Lock()
		due := c.core.NextDeadline()
		c.due = due
		c.mu.Unlock()
		if due != maxInt64 {
			t.Reset(max(durationUntil(due, c.now()), 0))
		} else {
			t.Stop()
		}
		select {
		case <-t.C():
		case <-c.kick:
			t.Stop()
			continue
		case <-c.done:
			return
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		c.out.Reset()
		c.core.Tick(c.now(), &c.out)
		c.finishLocked()
		c.due = maxInt64 // recomputed at the top
		c.unlock()
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
				c.mu.Lock()
				if c.closed {
					c.mu.Unlock()
					return
				}
				c.out.Reset()
				now := c.now()
				for i := 0; i < n; i++ {
					b, from := r.Packet(i)
					c.core.Receive(now, b, from, &c.out)
				}
				c.finishLocked()
				hold := c.sendq.batch > 1 && len(c.out.Done) > 0
				if hold {
					c.sendq.hold.Store(true)
				}
				c.unlock()
				if hold {
					// The callers just woken mostly send their next request at once (a release
					// after a grant): let them run and queue it, then send what they queued
					// together.
					runtime.Gosched()
					c.sendq.hold.Store(false)
					c.flushNow()
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
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.out.Reset()
	c.core.Receive(c.now(), b, from, &c.out)
	c.finishLocked()
	c.unlock()
}

func (c *Client) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// sendBatch is the most datagrams one sendmmsg carries.
const sendBatch = 64

// senders is how many goroutines of one client send at once (on a raw socket), each through its
// own writer: a sender whose thread the operating system deschedules in the middle of its system
// call holds up only the datagrams it took, not every other caller's.
const senders = 4

// batchSenders is the number of senders of a batching client (Config.Batch above 1): one, so
// that the requests queued while it is in its system call leave together in the next datagram
// (group commit). With four, a caller almost always found a free sender and a datagram carried
// 1.01 requests on average (netlock bench redis --batch 30, 64 lockers, 2026-11-29); with one,
// 1.13-1.20; with the reader also holding the queue while the callers it woke run (readLoop),
// 5.4.
const batchSenders = 1

// outbox combines the sends of many goroutines into sendmmsg calls. Calls queue their datagrams
// under the client's mutex; after dropping it, a caller flushes: if one of the outbox's senders
// is free, it takes the sender and everything queued and sends it (udpbatch sends beside the
// socket's write lock, so that the senders do not wait for each other); it then looks again, and
// sends what others queued meanwhile if they found every sender busy, until the queue is empty.
// Under load one system call thus carries several requests; alone, a caller pays one sendmmsg,
// as it would pay one sendto. A wrapped socket has one sender, which writes one datagram at a
// time in queue order.
type outbox struct {
	batch     int          // the most requests per datagram (Config.Batch, at least 1)
	datagrams atomic.Int64 // datagrams handed to the socket
	hold      atomic.Bool  // the reader flushes for the callers it woke (flush)
	mu        sync.Mutex
	queue     []outPkt  // guarded by mu
	free      []*sender // guarded by mu: the senders not in use
}

// sender is one of the outbox's writers with the batch buffer it hands back to the queue.
type sender struct {
	w       *udpbatch.Writer // nil on a wrapped socket
	spare   []outPkt
	packed  []bool // scratch of pack: the packets already in a datagram
	scratch []byte // a wrapped socket's datagram buffer
}

type outPkt struct {
	to  netip.AddrPort
	buf [wire.Len]byte
}

// init makes the outbox's senders: senders writers on raw, or one sender on a wrapped socket,
// each with datagram buffers for batch requests (Config.Batch; 0 or 1: single).
func (o *outbox) init(raw *net.UDPConn, batch int) error {
	o.batch = max(batch, 1)
	if raw == nil {
		o.free = []*sender{{scratch: make([]byte, o.batch*wire.Len)}}
		return nil
	}
	ns := senders
	if o.batch > 1 {
		ns = batchSenders
	}
	for i := 0; i < ns; i++ {
		w, err := udpbatch.NewWriter(raw, sendBatch, o.batch*wire.Len)
		if err != nil {
			return err
		}
		o.free = append(o.free, &sender{w: w})
	}
	return nil
}

func (o *outbox) add(to netip.AddrPort, f *wire.Fields) {
	o.mu.Lock()
	o.queue = append(o.queue, outPkt{to: to})
	wire.Header(o.queue[len(o.queue)-1].buf[:]).Encode(f)
	o.mu.Unlock()
}

// flush sends what is queued, while a sender is free, unless the reader holds the queue: it has
// just woken callers of a batching client and sends what they queue once they have run (it
// clears hold before it flushes, and a request queued after that finds hold clear and is sent
// by its own caller). A failed send is treated like a lost datagram: the core retransmits.
func (c *Client) flush() {
	if c.sendq.hold.Load() {
		return
	}
	c.flushNow()
}

// flushNow sends what is queued, while a sender is free.
func (c *Client) flushNow() {
	o := &c.sendq
	o.mu.Lock()
	for len(o.queue) > 0 && len(o.free) > 0 {
		s := o.free[len(o.free)-1]
		o.free = o.free[:len(o.free)-1]
		batch := o.queue
		o.queue, s.spare = s.spare[:0], nil
		o.mu.Unlock()
		c.send(s, batch)
		o.mu.Lock()
		s.spare = batch[:0]
		o.free = append(o.free, s)
	}
	o.mu.Unlock()
}

// send sends batch through s: one datagram per packet, or, with Config.Batch above 1, the
// packets of one destination packed into batch datagrams (pack).
func (c *Client) send(s *sender, batch []outPkt) {
	if c.sendq.batch > 1 {
		c.pack(s, batch)
		if s.w != nil {
			c.flushOut(s.w)
		}
		return
	}
	c.sendq.datagrams.Add(int64(len(batch)))
	if s.w == nil {
		for i := range batch {
			c.writeTo(batch[i].buf[:], batch[i].to)
		}
		return
	}
	for i := range batch {
		if err := s.w.Add(batch[i].buf[:], batch[i].to); err != nil {
			break
		}
		if s.w.Len() == s.w.Cap() {
			c.flushOut(s.w)
		}
	}
	c.flushOut(s.w)
}

// pack sends batch as batch datagrams of up to Config.Batch headers each (every header flagged
// wire.FlagBatch, also in a batch of one: the server then batches its answers to this client): a
// datagram starts with the first packet not yet sent and takes the later packets to the same
// destination, in queue order (so one destination's requests keep their order). A
// retransmission (wire.FlagRetry) goes single, unflagged, and takes nobody along: a server that
// does not accept batches still answers it.
func (c *Client) pack(s *sender, batch []outPkt) {
	limit := c.sendq.batch
	s.packed = slices.Grow(s.packed[:0], len(batch))[:len(batch)]
	clear(s.packed)
	for i := range batch {
		if s.packed[i] {
			continue
		}
		to := batch[i].to
		var d []byte
		if s.w != nil {
			d = s.w.Next()
		} else {
			d = s.scratch
		}
		n := copy(d, batch[i].buf[:])
		retry := isRetry(&batch[i])
		if !retry {
			for j := i + 1; j < len(batch) && n < limit*wire.Len; j++ {
				if !s.packed[j] && batch[j].to == to && !isRetry(&batch[j]) {
					n += copy(d[n:], batch[j].buf[:])
					s.packed[j] = true
				}
			}
		}
		if !retry {
			for k := 0; k < n; k += wire.Len {
				h := wire.Header(d[k : k+wire.Len])
				h.SetFlags(h.Flags() | wire.FlagBatch)
			}
		}
		c.sendq.datagrams.Add(1)
		if s.w != nil {
			s.w.Commit(n, to)
		} else {
			c.writeTo(d[:n], to)
		}
	}
}

func isRetry(p *outPkt) bool { return wire.Header(p.buf[:]).Has(wire.FlagRetry) }

// writeTo sends one datagram on a wrapped socket.
func (c *Client) writeTo(b []byte, to netip.AddrPort) {
	if _, err := c.conn.WriteTo(b, net.UDPAddrFromAddrPort(to)); err != nil && !c.isClosed() {
		c.log.Debug("netlock client: send failed", "to", to, "err", err)
	}
}

// flushOut sends w's datagrams.
func (c *Client) flushOut(w *udpbatch.Writer) {
	if _, err := w.Flush(); err != nil && !c.isClosed() {
		c.log.Debug("netlock client: send failed", "err", err)
	}
}
