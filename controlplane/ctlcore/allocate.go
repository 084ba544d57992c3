package ctlcore

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// Statistics and allocation (docs/controlplane.md, "Statistics", "Allocation periods"). Each
// AllocPeriod, when no move is under way and every server answers:
//
//   - every server reports its StatsLocks hottest locks (wire.AdminStats): requests (acquires,
//     releases, lease-probes) and overflows since its previous report, the deepest queue and the
//     largest contention a client declared (client.WithContention), also of the locks whose
//     state the server freed meanwhile (lockcore/unread.go);
//   - the switch's lock_hits direct counters are read (ReadLocks): a switch lock's requests are
//     its counter's increase less the admin packets the Core sent about it (probes hit the entry
//     too) and less its server's overflows (each overflowed acquire hits the entry again as a
//     push-back), so that r_i counts the same packets for switch and server locks;
//   - c_i = max(deepest queue seen by the sweeps or the server, declared contention, the
//     operator's Config.Contention, DefaultContention), at most MaxRegion;
//   - alloc.Allocator (Algorithm 3 with hysteresis, or the random strawman) gives the new
//     regions; every lock whose regions change moves out, then every lock with new regions
//     moves in (a lock whose regions move goes through its server).
//
// Manual mode (Config.Manual) runs a period only on Reallocate.

// Reallocate runs an allocation period now (Manual mode, or an operator's request); it returns
// false if one cannot start (not running, a period or a move under way).
func (c *Core) Reallocate() bool {
	if c.phase != Running || c.allocBusy || c.moves > 0 {
		return false
	}
	c.allocate()
	return true
}

func (c *Core) allocate() {
	if c.phase != Running || c.allocBusy || c.moves > 0 {
		return
	}
	for _, n := range c.order {
		if s := c.servers[n]; !s.alive {
			c.log.Debug("allocation period skipped: a server does not answer", "server", n)
			return
		}
	}
	c.allocBusy = true
	gen := c.gen
	reports := map[uint16][]wire.LockStat{}
	intervals := map[uint16]float64{}
	var hits map[uint32]uint64
	left := len(c.order) + 1
	failed := false
	done := func() {
		left--
		if left > 0 || gen != c.gen {
			return
		}
		if failed {
			c.allocBusy = false
			return
		}
		c.plan(reports, intervals, hits)
	}
	for _, n := range c.order {
		c.serverAdmin(n, wire.Fields{Status: wire.AdminStats, Slots: uint16(c.cfg.StatsLocks)}, func(rep wire.Fields, body []byte, err error) {
			var recs []wire.LockStat
			if err == nil {
				recs, err = wire.ParseLockStats(nil, body, int(rep.Slots))
			}
			if err != nil {
				failed = true
			} else {
				reports[n], intervals[n] = recs, float64(rep.Token)/1e9
			}
			done()
		})
	}
	c.emit(ReadLocks{ID: c.id()}, func(r Result) {
		if r.Err != nil {
			failed = true
		}
		hits = r.Hits
		done()
	})
}

// plan turns the period's statistics into demands, runs the allocator and starts the moves.
func (c *Core) plan(reports map[uint16][]wire.LockStat, intervals map[uint16]float64, hits map[uint32]uint64) {
	c.stats.Periods++
	period := c.stats.Periods
	overflows := map[uint32]uint32{}
	measured := map[uint32]float64{}
	for _, n := range c.order {
		recs, iv := reports[n], intervals[n]
		for _, st := range recs {
			if wire.IsReservedLock(st.Lock) {
				continue
			}
			lk := c.lock(st.Lock)
			overflows[st.Lock] += st.Overflows
			lk.depth = max(lk.depth, int(st.Depth))
			lk.declared = max(lk.declared, int(st.Declared))
			if !lk.inTable && lk.state == stateServer {
				lk.server = n
				if iv > 0 {
					measured[st.Lock] = float64(st.Requests) / iv
				}
			}
		}
	}
	elapsed := c.now.Sub(c.lastHitsAt).Seconds()
	first := c.lastHitsAt.IsZero()
	c.lastHitsAt = c.now
	for id, lk := range c.locks {
		if !lk.inTable {
			continue
		}
		h := hits[id]
		d := uint64(0)
		if h >= lk.lastHits {
			d = h - lk.lastHits
		}
		pkts := float64(d) - float64(lk.adminSent) - float64(overflows[id])
		lk.lastHits, lk.adminSent = h, 0
		if !first && elapsed > 0 {
			measured[id] = max(pkts, 0) / elapsed
		}
	}
	// r_i: an exponentially weighted average over periods; a lock that was not seen this period
	// counts 0 requests.
	a := c.cfg.Smoothing
	for id, lk := range c.locks {
		m, ok := measured[id]
		if !ok && lk.state != stateServer && lk.state != stateSwitch {
			continue // moving: its counts are not comparable this period
		}
		lk.rate = a*m + (1-a)*lk.rate
		if ok || lk.inTable {
			lk.seen = period
		}
	}
	var demands []alloc.Demand
	for _, lk := range c.locks {
		if period-lk.seen > 10 || lk.rate < max(c.cfg.MinRate, 1e-9) || (lk.state != stateServer && lk.state != stateSwitch) {
			continue
		}
		lk.recent[period%uint64(len(lk.recent))] = max(lk.depth, lk.declared)
		cont := max(c.cfg.Contention[lk.id], c.cfg.DefaultContention)
		for _, r := range lk.recent {
			cont = max(cont, r)
		}
		demands = append(demands, alloc.Demand{Lock: lk.id, Level: 0, Rate: lk.rate, Contention: min(cont, c.cfg.MaxRegion)})
	}
	// Keep the next period's observations apart.
	for id, lk := range c.locks {
		lk.depth, lk.declared = 0, 0
		if !lk.inTable && !lk.moving && lk.state == stateServer && period-lk.seen > 10 {
			delete(c.locks, id)
		}
	}
	// Every switch lock needs a lock index: offer the allocator at most as many locks as there are
	// indices (the locks in the switch now and the free ones), the best by r_i/c_i.
	if room := len(c.free) + c.switchLocks(); len(demands) > room {
		slices.SortFunc(demands, func(a, b alloc.Demand) int {
			x, y := a.Rate/float64(a.Contention), b.Rate/float64(b.Contention)
			switch {
			case x > y:
				return -1
			case x < y:
				return 1
			}
			return int(a.Lock) - int(b.Lock)
		})
		demands = demands[:room]
	}
	if c.cfg.SizeEveryLevel {
		for _, d := range demands {
			for lv := 1; lv < dataplane.Levels; lv++ {
				d.Level = lv
				demands = append(demands, d)
			}
		}
	}
	slices.SortFunc(demands, func(a, b alloc.Demand) int {
		if a.Lock != b.Lock {
			return int(a.Lock) - int(b.Lock)
		}
		return a.Level - b.Level
	})
	if err := c.pool.Restore(c.layout()); err != nil {
		c.log.Error("the current layout is invalid", "err", err)
		c.allocBusy = false
		return
	}
	p, err := c.pool.Step(demands)
	if err != nil {
		c.log.Error("allocation failed", "err", err)
		c.allocBusy = false
		return
	}
	c.stats.Value, c.stats.Best, c.stats.Slots = p.Value, p.Best, p.Used
	base := uint32(c.slotBase())
	want := map[uint32]*[dataplane.Levels]dataplane.Region{}
	for _, r := range p.Regions {
		w := want[r.Lock]
		if w == nil {
			w = &[dataplane.Levels]dataplane.Region{}
			want[r.Lock] = w
		}
		w[r.Level] = dataplane.Region{Left: base + uint32(r.Start), Size: uint16(r.Len)}
	}
	var outs, ins []*lockRec
	for id, lk := range c.locks {
		w := want[id]
		if lk.inTable && (w == nil || *w != lk.regions) {
			outs = append(outs, lk)
		}
		if w != nil && (!lk.inTable || *w != lk.regions) {
			ins = append(ins, lk)
		}
	}
	slices.SortFunc(outs, func(a, b *lockRec) int { return int(a.id) - int(b.id) })
	slices.SortFunc(ins, func(a, b *lockRec) int { return int(a.id) - int(b.id) })
	// At INFO only when it moves something: an idle rack logs nothing every period.
	level := slog.LevelDebug
	if len(outs)+len(ins) > 0 {
		level = slog.LevelInfo
	}
	c.log.Log(context.Background(), level, "allocation period", "period", period, "demands", len(demands),
		"value", p.Value, "best", p.Best, "slots", p.Used, "locks", p.Locks, "out", len(outs), "in", len(ins))
	startIns := func() {
		c.allocBusy = false
		c.startMovesIn(ins, want)
	}
	if len(outs) == 0 {
		startIns()
		return
	}
	left := len(outs)
	for _, lk := range outs {
		lk.onDone = func() {
			left--
			if left == 0 {
				startIns()
			}
		}
		c.moveOut(lk)
	}
}

func netipPrefix32(s *serverRec) netip.Prefix { return netip.PrefixFrom(s.Addr.Addr(), 32) }

// Evict moves a lock out of the switch now (an operator's request, or a test's); the next
// allocation period may bring it back. It returns false if the lock is not in the switch or is
// moving.
func (c *Core) Evict(id uint32) bool {
	lk := c.locks[id]
	if c.phase != Running || lk == nil || !lk.inTable || lk.moving {
		return false
	}
	c.moveOut(lk)
	return true
}
