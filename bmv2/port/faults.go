package port

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Faults configures fault injection on the send side of a port. The zero
// value injects nothing. Probabilities are per frame, in [0, 1].
type Faults struct {
	// Seed makes the fault sequence reproducible.
	Seed uint64
	// Loss is the probability that a frame is dropped.
	Loss float64
	// Dup is the probability that a frame is sent twice.
	Dup float64
	// Reorder is the probability that a frame is held back and sent after the
	// next frame. A held frame is also sent when the port closes, never later.
	Reorder float64
	// Delay delays every frame by Delay plus a uniform random part of Jitter
	// (frames with different delays may overtake one another).
	Delay, Jitter time.Duration
}

// FaultStats counts what a fault-injecting port did.
type FaultStats struct {
	Sent, Lost, Duplicated, Reordered, Delayed uint64
}

// FaultyPort wraps a port with seeded send-side fault injection.
type FaultyPort struct {
	Port
	cfg Faults

	mu      sync.Mutex
	rng     *rand.Rand
	held    []byte
	hasHeld bool
	closed  bool
	timers  map[*time.Timer]struct{}
	stats   FaultStats
}

// WithFaults wraps p so that frames sent through the result suffer the
// configured faults. Receiving is unchanged (wrap the peer for the other
// direction).
func WithFaults(p Port, cfg Faults) *FaultyPort {
	return &FaultyPort{
		Port:   p,
		cfg:    cfg,
		rng:    rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		held:   make([]byte, 0, MaxFrame),
		timers: map[*time.Timer]struct{}{},
	}
}

// Stats returns the counts so far.
func (f *FaultyPort) Stats() FaultStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Send implements Port.
func (f *FaultyPort) Send(frame []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	if f.cfg.Loss > 0 && f.rng.Float64() < f.cfg.Loss {
		f.stats.Lost++
		return nil
	}
	copies := 1
	if f.cfg.Dup > 0 && f.rng.Float64() < f.cfg.Dup {
		f.stats.Duplicated++
		copies = 2
	}
	releaseHeld := f.hasHeld
	if !f.hasHeld && f.cfg.Reorder > 0 && f.rng.Float64() < f.cfg.Reorder {
		f.stats.Reordered++
		f.held = append(f.held[:0], frame...)
		f.hasHeld = true
		copies--
	}
	var err error
	for range copies {
		err = f.emitLocked(frame)
	}
	if releaseHeld {
		f.hasHeld = false
		if e := f.emitLocked(f.held); err == nil {
			err = e
		}
	}
	return err
}

// emitLocked sends frame now or after the configured delay. Precondition: f.mu is held.
func (f *FaultyPort) emitLocked(frame []byte) error {
	if f.cfg.Delay == 0 && f.cfg.Jitter == 0 {
		f.stats.Sent++
		return f.Port.Send(frame)
	}
	d := f.cfg.Delay
	if f.cfg.Jitter > 0 {
		d += time.Duration(f.rng.Int64N(int64(f.cfg.Jitter)))
	}
	f.stats.Delayed++
	f.stats.Sent++
	c := append([]byte(nil), frame...)
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		f.mu.Lock()
		_, live := f.timers[t]
		delete(f.timers, t)
		f.mu.Unlock()
		if live {
			_ = f.Port.Send(c)
		}
	})
	f.timers[t] = struct{}{}
	return nil
}

// Close flushes a held frame, cancels delayed frames and closes the port.
func (f *FaultyPort) Close() error {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		if f.hasHeld {
			f.hasHeld = false
			_ = f.Port.Send(f.held)
		}
		for t := range f.timers {
			t.Stop()
			delete(f.timers, t)
		}
	}
	f.mu.Unlock()
	return f.Port.Close()
}
