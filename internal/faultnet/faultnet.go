// Package faultnet wraps a [net.PacketConn] and injects seeded packet faults: loss, duplication,
// reordering and delay, on the send side, the receive side or both. It exists for tests of the lock
// client and server under the network conditions NetLock's UDP protocol must survive.
//
// Every fault decision is drawn from one pseudo-random stream seeded by [Config.Seed], in the order
// the datagrams pass through the wrapper. The decisions are therefore reproducible from the seed for
// a given order of datagrams; the order itself depends on goroutine scheduling, so a whole run is
// reproducible only as far as the program under test is deterministic. Tests print the seed.
//
// Send-side faults:
//   - loss: WriteTo reports success and sends nothing;
//   - duplication: the datagram is sent twice;
//   - reordering: the datagram is held back and sent right after the next datagram written on the
//     same Conn (or after [Faults.HoldMax] if no other datagram comes);
//   - delay: the datagram is sent after a random delay in [0, Faults.Delay), on a timer, so later
//     datagrams may overtake it.
//
// Receive-side faults:
//   - loss: the datagram is read and discarded;
//   - duplication: the datagram is returned by two successive ReadFrom calls;
//   - reordering: the datagram is held back and returned after the next datagram that arrives
//     (or after [Faults.HoldMax] if none arrives);
//   - delay: ReadFrom sleeps a random time in [0, Faults.Delay) before it returns the datagram
//     (head-of-line: later datagrams wait too).
//
// [Conn.Stats] reports what was injected. Close stops all pending timers and waits for them.
package faultnet

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Faults are the probabilities (each in [0, 1]) and magnitudes of the faults injected in one
// direction. The zero value injects nothing.
type Faults struct {
	// Loss is the probability that a datagram is dropped.
	Loss float64
	// Dup is the probability that a datagram is delivered twice.
	Dup float64
	// Reorder is the probability that a datagram is held back behind the next one.
	Reorder float64
	// DelayProb is the probability that a datagram is delayed by a random time in [0, Delay).
	// If Delay > 0 and DelayProb is 0, every datagram is delayed.
	DelayProb float64
	// Delay is the upper bound of an injected delay.
	Delay time.Duration
	// HoldMax bounds how long a reordered datagram waits for a successor. Default 5ms.
	HoldMax time.Duration
}

func (f *Faults) validate() error {
	for _, p := range []float64{f.Loss, f.Dup, f.Reorder, f.DelayProb} {
		if p < 0 || p > 1 || p != p {
			return errors.New("faultnet: probability outside [0, 1]")
		}
	}
	if f.Delay < 0 || f.HoldMax < 0 {
		return errors.New("faultnet: negative duration")
	}
	if f.HoldMax == 0 {
		f.HoldMax = 5 * time.Millisecond
	}
	if f.Delay > 0 && f.DelayProb == 0 {
		f.DelayProb = 1
	}
	return nil
}

// Config configures a [Conn].
type Config struct {
	// Seed seeds the fault decisions.
	Seed uint64
	// Send are the faults injected into WriteTo.
	Send Faults
	// Recv are the faults injected into ReadFrom.
	Recv Faults
	// Exempt, if set, selects datagrams that pass untouched in both directions: no fault is
	// drawn for them and they are not counted in Stats (a rack's own links, say, while the
	// faults model the network between clients and servers).
	Exempt func(p []byte) bool
}

// Stats counts injected faults. Each field counts datagrams.
type Stats struct {
	Sent, SendLost, SendDup, SendReordered, SendDelayed int64
	Recv, RecvLost, RecvDup, RecvReordered, RecvDelayed int64
}

// Conn is a fault-injecting [net.PacketConn]. It is safe for concurrent use like the conn it wraps
// (one reader at a time, as net.UDPConn users normally have).
type Conn struct {
	net.PacketConn
	cfg Config

	rngMu sync.Mutex
	rng   *rand.Rand // guarded by rngMu

	sendMu   sync.Mutex
	sendHeld *packet                  // guarded by sendMu: a reordered datagram waiting for a successor
	holdT    *time.Timer              // guarded by sendMu
	timers   map[*time.Timer]struct{} // guarded by sendMu: live timers, see startTimerLocked
	closed   bool                     // guarded by sendMu
	wg       sync.WaitGroup

	recvMu       sync.Mutex // serializes ReadFrom
	recvPending  []packet   // guarded by recvMu: duplicates and released held datagrams
	recvHeld     *packet    // guarded by recvMu
	userDeadline atomic.Int64
	done         chan struct{}
	closeOnce    sync.Once

	sent, sendLost, sendDup, sendReordered, sendDelayed atomic.Int64
	recv, recvLost, recvDup, recvReordered, recvDelayed atomic.Int64
}

type packet struct {
	b    []byte
	addr net.Addr
}

var _ net.PacketConn = (*Conn)(nil)

// Wrap returns c wrapped with the faults of cfg. It panics if cfg holds a probability outside
// [0, 1] or a negative duration (a programming error in a test).
func Wrap(c net.PacketConn, cfg Config) *Conn {
	if err := cfg.Send.validate(); err != nil {
		panic(err)
	}
	if err := cfg.Recv.validate(); err != nil {
		panic(err)
	}
	return &Conn{
		PacketConn: c,
		cfg:        cfg,
		rng:        rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		timers:     make(map[*time.Timer]struct{}),
		done:       make(chan struct{}),
	}
}

// Hook returns a function that wraps a conn with cfg, for configuration hooks such as the lock
// client's Config.WrapConn. Every wrapped conn gets its own seed derived from cfg.Seed and the
// number of conns wrapped before it. The returned function is safe for concurrent use.
func Hook(cfg Config) func(net.PacketConn) net.PacketConn {
	var n atomic.Uint64
	return func(c net.PacketConn) net.PacketConn {
		cc := cfg
		cc.Seed = cfg.Seed + n.Add(1)*0x632be59bd9b4e019
		return Wrap(c, cc)
	}
}

// Stats returns the fault counters.
func (c *Conn) Stats() Stats {
	return Stats{
		Sent: c.sent.Load(), SendLost: c.sendLost.Load(), SendDup: c.sendDup.Load(),
		SendReordered: c.sendReordered.Load(), SendDelayed: c.sendDelayed.Load(),
		Recv: c.recv.Load(), RecvLost: c.recvLost.Load(), RecvDup: c.recvDup.Load(),
		RecvReordered: c.recvReordered.Load(), RecvDelayed: c.recvDelayed.Load(),
	}
}

// Add returns the field-wise sum of s and o.
func (s Stats) Add(o Stats) Stats {
	return Stats{
		Sent: s.Sent + o.Sent, SendLost: s.SendLost + o.SendLost, SendDup: s.SendDup + o.SendDup,
		SendReordered: s.SendReordered + o.SendReordered, SendDelayed: s.SendDelayed + o.SendDelayed,
		Recv: s.Recv + o.Recv, RecvLost: s.RecvLost + o.RecvLost, RecvDup: s.RecvDup + o.RecvDup,
		RecvReordered: s.RecvReordered + o.RecvReordered, RecvDelayed: s.RecvDelayed + o.RecvDelayed,
	}
}

// decision is the set of faults drawn for one datagram.
type decision struct {
	lose, dup, reorder bool
	delay              time.Duration
}

func (c *Conn) decide(f *Faults) decision {
	c.rngMu.Lock()
	defer c.rngMu.Unlock()
	// Always draw the same number of values so that one fault kind does not shift the others.
	r1, r2, r3, r4, r5 := c.rng.Float64(), c.rng.Float64(), c.rng.Float64(), c.rng.Float64(), c.rng.Float64()
	d := decision{lose: r1 < f.Loss, dup: r2 < f.Dup, reorder: r3 < f.Reorder}
	if f.Delay > 0 && r4 < f.DelayProb {
		d.delay = time.Duration(r5 * float64(f.Delay))
	}
	return d
}

// WriteTo sends p to addr through the send-side faults. A dropped datagram is reported as sent.
func (c *Conn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if c.cfg.Exempt != nil && c.cfg.Exempt(p) {
		return c.PacketConn.WriteTo(p, addr)
	}
	c.sent.Add(1)
	d := c.decide(&c.cfg.Send)
	if d.lose {
		c.sendLost.Add(1)
		return len(p), nil
	}
	copies := 1
	if d.dup {
		c.sendDup.Add(1)
		copies = 2
	}
	if d.delay > 0 {
		c.sendDelayed.Add(1)
		b := append([]byte(nil), p...)
		for range copies {
			if !c.after(d.delay, func() { _, _ = c.PacketConn.WriteTo(b, addr) }) {
				return 0, net.ErrClosed
			}
		}
		return len(p), nil
	}
	c.sendMu.Lock()
	if c.closed {
		c.sendMu.Unlock()
		return 0, net.ErrClosed
	}
	held := c.sendHeld
	if d.reorder && held == nil {
		c.sendReordered.Add(1)
		c.sendHeld = &packet{b: append([]byte(nil), p...), addr: addr}
		c.armHoldLocked()
		c.sendMu.Unlock()
		if copies == 2 {
			// One copy goes now, the duplicate is the one held back.
			if _, err := c.PacketConn.WriteTo(p, addr); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	c.sendHeld = nil
	if held != nil && c.holdT != nil {
		c.stopTimerLocked(c.holdT)
		c.holdT = nil
	}
	c.sendMu.Unlock()

	var err error
	for range copies {
		_, err = c.PacketConn.WriteTo(p, addr)
	}
	if held != nil {
		_, _ = c.PacketConn.WriteTo(held.b, held.addr)
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// armHoldLocked flushes the held datagram after HoldMax. Precondition: c.sendMu is held.
func (c *Conn) armHoldLocked() {
	if c.holdT != nil {
		c.stopTimerLocked(c.holdT)
	}
	held := c.sendHeld
	c.holdT = c.startTimerLocked(c.cfg.Send.HoldMax, func() {
		c.sendMu.Lock()
		if c.sendHeld != held {
			c.sendMu.Unlock()
			return
		}
		c.sendHeld = nil
		c.sendMu.Unlock()
		_, _ = c.PacketConn.WriteTo(held.b, held.addr)
	})
}

// after runs f after d unless the conn is closed first. It reports false if the conn is closed.
func (c *Conn) after(d time.Duration, f func()) bool {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.closed {
		return false
	}
	c.startTimerLocked(d, f)
	return true
}

// startTimerLocked runs f after d on a timer that Close stops and waits for.
// Precondition: c.sendMu is held.
func (c *Conn) startTimerLocked(d time.Duration, f func()) *time.Timer {
	c.wg.Add(1)
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		defer c.wg.Done()
		c.sendMu.Lock()
		_, live := c.timers[t]
		delete(c.timers, t)
		c.sendMu.Unlock()
		if live {
			f()
		}
	})
	c.timers[t] = struct{}{}
	return t
}

// stopTimerLocked stops t if it has not fired. Precondition: c.sendMu is held.
func (c *Conn) stopTimerLocked(t *time.Timer) {
	if _, live := c.timers[t]; !live {
		return
	}
	delete(c.timers, t)
	if t.Stop() {
		c.wg.Done()
	}
}

// ReadFrom reads the next datagram after the receive-side faults.
func (c *Conn) ReadFrom(p []byte) (int, net.Addr, error) {
	c.recvMu.Lock()
	defer c.recvMu.Unlock()
	for {
		if len(c.recvPending) > 0 {
			q := c.recvPending[0]
			c.recvPending = c.recvPending[1:]
			return copy(p, q.b), q.addr, nil
		}
		n, addr, err := c.readUnderlying(p)
		if err != nil {
			var ne net.Error
			if c.recvHeld != nil && errors.As(err, &ne) && ne.Timeout() && !c.userDeadlinePassed() {
				// The hold time ran out with no successor: deliver the held datagram.
				q := c.recvHeld
				c.recvHeld = nil
				return copy(p, q.b), q.addr, nil
			}
			return n, addr, err
		}
		if c.cfg.Exempt != nil && c.cfg.Exempt(p[:n]) {
			return n, addr, nil
		}
		c.recv.Add(1)
		d := c.decide(&c.cfg.Recv)
		if d.lose {
			c.recvLost.Add(1)
			continue
		}
		if d.delay > 0 {
			c.recvDelayed.Add(1)
			select {
			case <-time.After(d.delay):
			case <-c.done:
				return 0, nil, net.ErrClosed
			}
		}
		if d.reorder && c.recvHeld == nil {
			c.recvReordered.Add(1)
			c.recvHeld = &packet{b: append([]byte(nil), p[:n]...), addr: addr}
			if d.dup {
				c.recvDup.Add(1)
				return n, addr, nil
			}
			continue
		}
		if d.dup {
			c.recvDup.Add(1)
			c.recvPending = append(c.recvPending, packet{b: append([]byte(nil), p[:n]...), addr: addr})
		}
		if c.recvHeld != nil {
			c.recvPending = append(c.recvPending, *c.recvHeld)
			c.recvHeld = nil
		}
		return n, addr, nil
	}
}

// readUnderlying reads from the wrapped conn. While a datagram is held for reordering, the read
// deadline is shortened to the hold time. Precondition: c.recvMu is held.
func (c *Conn) readUnderlying(p []byte) (int, net.Addr, error) {
	if c.recvHeld == nil {
		return c.PacketConn.ReadFrom(p)
	}
	dl := time.Now().Add(c.cfg.Recv.HoldMax)
	if u := c.userDeadline.Load(); u != 0 && u < dl.UnixNano() {
		dl = time.Unix(0, u)
	}
	_ = c.PacketConn.SetReadDeadline(dl)
	n, addr, err := c.PacketConn.ReadFrom(p)
	_ = c.PacketConn.SetReadDeadline(c.userDeadlineTime())
	return n, addr, err
}

func (c *Conn) userDeadlineTime() time.Time {
	if u := c.userDeadline.Load(); u != 0 {
		return time.Unix(0, u)
	}
	return time.Time{}
}

func (c *Conn) userDeadlinePassed() bool {
	u := c.userDeadline.Load()
	return u != 0 && time.Now().UnixNano() >= u
}

// SetReadDeadline sets the read deadline of the wrapped conn and remembers it, since the
// receive-side reordering shortens the deadline while it holds a datagram.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if t.IsZero() {
		c.userDeadline.Store(0)
	} else {
		c.userDeadline.Store(t.UnixNano())
	}
	return c.PacketConn.SetReadDeadline(t)
}

// SetDeadline sets both deadlines; see SetReadDeadline.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.PacketConn.SetWriteDeadline(t)
}

// Close stops all pending delayed or held datagrams (they are dropped), waits for timer callbacks
// that are already running, and closes the wrapped conn.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.sendMu.Lock()
		c.closed = true
		for t := range c.timers {
			if t.Stop() {
				c.wg.Done()
			}
		}
		clear(c.timers)
		c.sendHeld = nil
		c.sendMu.Unlock()
	})
	err := c.PacketConn.Close()
	c.wg.Wait()
	if errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
