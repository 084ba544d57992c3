package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/internal/udpbatch"
	"github.com/netlock-go/netlock/wire"
)

// BenchRetransmit is the first retransmission timeout of the benchmarks' UDP clients.
const BenchRetransmit = 200 * time.Millisecond

// LoadConfig configures the closed-loop load generator [RunLoad].
type LoadConfig struct {
	// Target is the server's UDP address (a lock server or an [EchoServer]).
	Target netip.AddrPort
	// Workers is the number of goroutines, each with its own UDP socket. 0 means 4.
	Workers int
	// Outstanding is the number of requests each worker keeps in flight. 0 means 16.
	Outstanding int
	// Duration is the measured interval. 0 means 1 s.
	Duration time.Duration
	// Warmup runs the load before the measured interval without counting it. 0 means none.
	Warmup time.Duration
	// LockBase is the first lock id. Worker w, slot s uses lock LockBase + w*Outstanding + s, so
	// no two requests ever contend; give runs against one server disjoint ranges.
	LockBase uint32
	// Mode is the lock mode requested; the zero value is shared, so callers usually set
	// wire.Exclusive.
	Mode wire.Mode
	// Retransmit is how long a request waits for its answer before it is sent again with
	// FlagRetry (lock-server requests are idempotent). 0 means [BenchRetransmit].
	Retransmit time.Duration
	// Drain bounds how long, after Duration, the generator waits to finish the cycles in flight
	// (every granted lock is released before RunLoad returns). 0 means 2 s.
	Drain time.Duration
}

func (c *LoadConfig) setDefaults() {
	if c.Workers <= 0 {
		c.Workers = 4
	}
	if c.Outstanding <= 0 {
		c.Outstanding = 16
	}
	if c.Duration <= 0 {
		c.Duration = time.Second
	}
	if c.Retransmit <= 0 {
		c.Retransmit = BenchRetransmit
	}
	if c.Drain <= 0 {
		c.Drain = 2 * time.Second
	}
}

// LoadResult is what one [RunLoad] measured. An op is one request and its answer: an
// acquire/grant or a release/acknowledgement; a pair is an acquire and its release.
type LoadResult struct {
	Target      string        `json:"target"`
	Workers     int           `json:"workers"`
	Outstanding int           `json:"outstanding"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	// Ops is the number of answers received in the measured interval; OpsPerSec is Ops/Elapsed.
	Ops       uint64  `json:"ops"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Pairs is the number of acquire+release cycles completed in the measured interval.
	Pairs uint64 `json:"pairs"`
	// Latency is per op, from the first transmission of a request to its answer.
	Latency Latency `json:"latency"`
	// Retransmits counts requests sent again after Retransmit without an answer.
	Retransmits uint64 `json:"retransmits"`
	// Rejects counts acquires answered with a reject (none are expected: locks are uncontended).
	Rejects uint64 `json:"rejects"`
	// Stale counts answers to a request that had already been answered (duplicates caused by
	// retransmission).
	Stale uint64 `json:"stale"`
	// Unexpected counts answers that match no request this worker sent, or of the wrong kind.
	Unexpected uint64 `json:"unexpected"`
	// StrayGrants counts grants for cycles that had already ended (a duplicated acquire granted
	// again after its release); each is released at once. They are also counted in Stale.
	StrayGrants uint64 `json:"stray_grants"`
	// Malformed counts datagrams that failed wire.Parse.
	Malformed uint64 `json:"malformed"`
	// Unfinished counts cycles still waiting for an answer when the drain period ended.
	Unfinished uint64 `json:"unfinished"`
}

func (r *LoadResult) add(o *LoadResult) {
	r.Ops += o.Ops
	r.Pairs += o.Pairs
	r.Retransmits += o.Retransmits
	r.Rejects += o.Rejects
	r.Stale += o.Stale
	r.StrayGrants += o.StrayGrants
	r.Unexpected += o.Unexpected
	r.Malformed += o.Malformed
	r.Unfinished += o.Unfinished
}

// runNonce makes transaction ids unique across runs in one process (runs against one lock server
// use disjoint lock ranges anyway; this keeps txn ids unique too).
var runNonce atomic.Uint32

// RunLoad runs the closed-loop workload against cfg.Target and reports throughput and latency.
// Each of cfg.Workers goroutines owns a UDP socket and cfg.Outstanding slots; each slot owns one
// lock and loops: acquire (exclusive or shared) -> grant -> release (echoing the grant's token) ->
// acknowledgement. Answers are matched to slots by (lock, txn). The same code drives the lock
// server and the echo server.
func RunLoad(ctx context.Context, cfg LoadConfig) (LoadResult, error) {
	cfg.setDefaults()
	nonce := uint64(runNonce.Add(1) & 0xffff)
	res := LoadResult{Target: cfg.Target.String(), Workers: cfg.Workers, Outstanding: cfg.Outstanding}
	workers := make([]*loadWorker, cfg.Workers)
	for i := range workers {
		c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(cfg.Target))
		if err != nil {
			for _, w := range workers[:i] {
				w.conn.Close()
			}
			return res, fmt.Errorf("bench: dial %s: %w", cfg.Target, err)
		}
		// Room for every answer in flight, so that a slow worker does not lose answers.
		_ = c.SetReadBuffer(1 << 20)
		if workers[i], err = newLoadWorker(&cfg, i, nonce, c); err != nil {
			c.Close()
			for _, w := range workers[:i] {
				w.conn.Close()
			}
			return res, fmt.Errorf("bench: %w", err)
		}
	}
	start := time.Now()
	measureFrom := start.Add(cfg.Warmup)
	measureTo := measureFrom.Add(cfg.Duration)
	var wg sync.WaitGroup
	errs := make([]error, len(workers))
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.conn.Close()
			errs[i] = w.run(ctx, start, measureFrom, measureTo)
		}()
	}
	wg.Wait()
	var hist Histogram
	for _, w := range workers {
		res.add(&w.res)
		hist.Merge(&w.hist)
	}
	res.Elapsed = cfg.Duration
	res.OpsPerSec = float64(res.Ops) / cfg.Duration.Seconds()
	res.Latency = hist.Summary()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	return res, ctx.Err()
}

const (
	slotIdle uint8 = iota
	slotAcquiring
	slotReleasing
)

type loadSlot struct {
	lock    uint32
	txn     uint64
	state   uint8
	retries uint32
	first   time.Duration // first transmission of the current request, since start
	last    time.Duration // latest transmission
	buf     []byte        // the request, wire.Len bytes
}

type loadWorker struct {
	cfg   *LoadConfig
	id    int
	conn  *net.UDPConn
	r     *udpbatch.Reader
	w     *udpbatch.Writer
	base  uint32
	txn   uint64 // next txn id
	slots []loadSlot
	res   LoadResult
	hist  Histogram
}

func newLoadWorker(cfg *LoadConfig, id int, nonce uint64, c *net.UDPConn) (*loadWorker, error) {
	k := cfg.Outstanding
	w := &loadWorker{cfg: cfg, id: id, conn: c,
		base: cfg.LockBase + uint32(id*k), txn: nonce<<48 | uint64(id+1)<<32,
		slots: make([]loadSlot, k)}
	var err error
	// Room for every answer in flight plus a few duplicates; a full writer flushes itself.
	if w.r, err = udpbatch.NewReader(c, k+8, maxDatagram); err != nil {
		return nil, err
	}
	if w.w, err = udpbatch.NewWriter(c, k+8, wire.Len); err != nil {
		return nil, err
	}
	for i := range w.slots {
		w.slots[i].lock = w.base + uint32(i)
		w.slots[i].buf = make([]byte, wire.Len)
	}
	return w, nil
}

// queue appends slot s's request to the next write batch.
func (w *loadWorker) queue(s *loadSlot) {
	copy(w.w.Next(), s.buf)
	w.w.Commit(wire.Len, w.cfg.Target)
}

// releaseStray sends a release for a grant of a cycle that has already ended. It is not
// retransmitted: if it is lost, the server's lease expiry frees the lock.
func (w *loadWorker) releaseStray(grant wire.Header) {
	w.res.StrayGrants++
	wire.Header(w.w.Next()).Encode(&wire.Fields{Op: wire.OpRelease, Mode: grant.Mode(),
		Lock: grant.Lock(), Txn: grant.Txn(), Token: grant.Token()})
	w.w.Commit(wire.Len, w.cfg.Target)
}

// flush sends the queued requests. A datagram the kernel refuses is dropped and will be
// retransmitted; only a closed socket is an error.
func (w *loadWorker) flush() error {
	if _, err := w.w.Flush(); errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// startAcquire begins a new cycle on s.
func (w *loadWorker) startAcquire(s *loadSlot, now time.Duration, wall int64) {
	w.txn++
	s.txn = w.txn
	s.state = slotAcquiring
	s.first, s.last, s.retries = now, now, 0
	h := wire.Header(s.buf)
	h.Encode(&wire.Fields{Op: wire.OpAcquire, Mode: w.cfg.Mode, Lock: s.lock, Txn: s.txn,
		Timestamp: uint64(wall)})
	w.queue(s)
}

func (w *loadWorker) startRelease(s *loadSlot, token uint64, now time.Duration) {
	s.state = slotReleasing
	s.first, s.last, s.retries = now, now, 0
	h := wire.Header(s.buf)
	h.SetOp(wire.OpRelease)
	h.SetFlags(0)
	h.SetToken(token)
	w.queue(s)
}

func (w *loadWorker) run(ctx context.Context, start, measureFrom, measureTo time.Time) error {
	from, to := measureFrom.Sub(start), measureTo.Sub(start)
	stopAt := to + w.cfg.Drain
	wallBase := start.UnixNano()
	tick := min(w.cfg.Retransmit/2, 20*time.Millisecond)
	var deadlineSet time.Duration = -1
	stopping := false
	active := len(w.slots)

	now := time.Since(start)
	for i := range w.slots {
		w.startAcquire(&w.slots[i], now, wallBase+int64(now))
	}
	if err := w.flush(); err != nil {
		return err
	}
	nextScan := now + tick
	for active > 0 {
		if deadlineSet < 0 || now-deadlineSet > tick/2 {
			if err := w.conn.SetReadDeadline(start.Add(now + tick)); err != nil {
				return err
			}
			deadlineSet = now
		}
		n, err := w.r.Read()
		now = time.Since(start)
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("bench: worker %d read: %w", w.id, err)
		}
		if !stopping && (now >= to || ctx.Err() != nil) {
			stopping = true
		}
		inWindow := now >= from && now < to
		for i := 0; i < n; i++ {
			b, _ := w.r.Packet(i) // the socket is connected: only the target's answers arrive
			h, err := wire.Parse(b)
			if err != nil {
				w.res.Malformed++
				continue
			}
			idx := int(h.Lock() - w.base)
			if h.Lock() < w.base || idx >= len(w.slots) {
				w.res.Unexpected++
				continue
			}
			s := &w.slots[idx]
			if h.Txn() != s.txn || s.state == slotIdle {
				if h.Txn() == s.txn || h.Txn() < s.txn && h.Txn() > w.txn&^0xffffffff {
					w.res.Stale++ // an answer to an earlier cycle of this slot
					if h.Op() == wire.OpGrant && h.Txn() != s.txn {
						// A duplicated acquire of a finished cycle reached the server after
						// its release and was granted again: give that grant back, or the
						// lock stays held until its lease runs out.
						w.releaseStray(h)
					}
				} else {
					w.res.Unexpected++
				}
				continue
			}
			switch {
			case s.state == slotAcquiring && h.Op() == wire.OpGrant:
				w.answered(s, now, inWindow)
				w.startRelease(s, h.Token(), now)
			case s.state == slotAcquiring && h.Op() == wire.OpReject:
				w.answered(s, now, inWindow)
				w.res.Rejects++
				if stopping {
					s.state = slotIdle
					active--
				} else {
					w.startAcquire(s, now, wallBase+int64(now))
				}
			case s.state == slotReleasing && (h.Op() == wire.OpRelease && h.Has(wire.FlagReply) ||
				h.Op() == wire.OpReject && h.Status() == wire.StatusNotHolder):
				// A repeated release (retransmitted, or duplicated by the network) that finds
				// nothing answers not-holder, and that answer can overtake or outlive the
				// acknowledgement of the first: the release was applied (docs/protocol.md,
				// Idempotence). The locks are uncontended, so no one else can hold it.
				w.answered(s, now, inWindow)
				if inWindow {
					w.res.Pairs++
				}
				if stopping {
					s.state = slotIdle
					active--
				} else {
					w.startAcquire(s, now, wallBase+int64(now))
				}
			case s.state == slotReleasing && h.Op() == wire.OpGrant:
				w.res.Stale++ // a duplicate grant (answer to a retransmitted acquire)
			default:
				w.res.Unexpected++
			}
		}
		if now >= nextScan {
			nextScan = now + tick
			if now >= stopAt {
				break
			}
			for i := range w.slots {
				s := &w.slots[i]
				if s.state != slotIdle && now-s.last >= w.cfg.Retransmit {
					h := wire.Header(s.buf)
					h.SetFlags(h.Flags() | wire.FlagRetry)
					s.last = now
					s.retries++
					w.res.Retransmits++
					w.queue(s)
				}
			}
		}
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.res.Unfinished = uint64(active)
	return nil
}

// answered records the answer to s's current request.
func (w *loadWorker) answered(s *loadSlot, now time.Duration, inWindow bool) {
	if inWindow {
		w.res.Ops++
		w.hist.Record(now - s.first)
	}
}
