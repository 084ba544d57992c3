package lockserver

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"math"
	"net"
	"net/netip"
	"slices"
	"sync"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// This file holds the control plane's admin sub-operations (wire.AdminYield .. AdminResidents,
// docs/protocol.md "Control-plane admin operations") and the grant holds around them: a standby
// that waits for its takeover, the takeover grace, and the controller lease.
//
// Controller terms. Every placement request carries the controller's term in Timestamp; the
// server keeps the largest term it has seen (raised by those requests and by admin pings that
// carry one) and refuses a request with a smaller term (reject not-owner). A controller that
// takes over from a failed one pings every server with a larger term first, so that a slow
// message of the old controller can no longer move a lock.

// placeState is the server's share of lock placement. mu guards every field.
type placeState struct {
	mu         sync.Mutex
	term       uint64
	standby    bool
	graceEnd   int64 // ns: no grants before (takeover grace); 0 none
	lease      int64 // ns: Config.ControllerLease
	leaseUntil int64 // ns: the authority the last ping gave
	applied    int64 // the grant hold last applied to the cores
	lastStats  int64 // ns: the end of the previous AdminStats interval
	instance   uint32
}

func (p *placeState) init(cfg Config, now int64) {
	p.standby = cfg.Standby
	if cfg.TakeoverGrace > 0 {
		p.graceEnd = now + int64(cfg.TakeoverGrace)
	}
	p.lease = int64(cfg.ControllerLease)
	p.leaseUntil = now + p.lease
	p.lastStats = now
	p.applied = p.holdLocked(now)
	var b [4]byte
	_, _ = rand.Read(b[:])
	p.instance = binary.BigEndian.Uint32(b[:]) | 1 // never 0: 0 means "unknown" to a controller
}

// holdLocked returns the time before which the cores must grant nothing.
func (p *placeState) holdLocked(now int64) int64 {
	if p.standby || (p.lease > 0 && now >= p.leaseUntil) {
		return math.MaxInt64
	}
	return p.graceEnd
}

// ping renews the controller lease, raises the term to req's (if larger) and returns the term in
// force.
func (s *Server) ping(req *lockcore.Request) uint64 {
	p := &s.place
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lease > 0 {
		p.leaseUntil = s.now() + p.lease
	}
	p.term = max(p.term, req.Timestamp)
	return p.term
}

// Term returns the largest controller term the server has seen.
func (s *Server) Term() uint64 {
	s.place.mu.Lock()
	defer s.place.mu.Unlock()
	return s.place.term
}

// Holding reports whether the server holds every grant now (a standby before its takeover, a
// lapsed controller lease).
func (s *Server) Holding() bool {
	s.place.mu.Lock()
	defer s.place.mu.Unlock()
	return s.place.applied == math.MaxInt64
}

// applyHold brings the cores' grant hold in line with the standby flag, the takeover grace and
// the controller lease.
func (s *Server) applyHold(now int64, w *writer) {
	p := &s.place
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.holdLocked(now)
	if h == p.applied {
		return
	}
	if h == math.MaxInt64 && p.lease > 0 && !p.standby {
		s.log.Warn("controller lease ran out: holding every grant until the controller pings again")
	} else if p.applied == math.MaxInt64 {
		s.log.Info("grants resume", "grace_end", h)
	}
	p.applied = h
	for _, sh := range s.shards {
		sh.mu.Lock()
		sh.out = sh.core.SetGrantAfter(now, h, sh.out[:0])
		w.addEffects(sh.out)
		sh.mu.Unlock()
	}
	w.flush()
}

func isPlacement(st wire.Status) bool { return st >= wire.AdminYield && st <= wire.AdminResidents }

// placement answers the placement sub-operations.
func (s *Server) placement(req *lockcore.Request, w *writer) {
	p := &s.place
	p.mu.Lock()
	stale := req.Timestamp < p.term
	if !stale {
		p.term = req.Timestamp
	}
	p.mu.Unlock()
	if stale {
		w.addEffects([]lockcore.Effect{{To: req.From, Msg: wire.Fields{Op: wire.OpReject, Status: wire.StatusNotOwner,
			Lock: req.Lock, Txn: req.Txn, Token: req.Token, Timestamp: req.Timestamp}}})
		return
	}
	now := s.now()
	switch req.Status {
	case wire.AdminYield, wire.AdminAdopt:
		if req.Status == wire.AdminAdopt {
			if _, err := s.raiseFloor(req.Lock, req.Token, false); err != nil {
				w.addEffects([]lockcore.Effect{{To: req.From, Msg: wire.Fields{Op: wire.OpReject,
					Status: wire.StatusBadRequest, Lock: req.Lock, Txn: req.Txn, Token: req.Token, Timestamp: req.Timestamp}}})
				return
			}
		}
		sh := s.shardOf(req.Lock)
		sh.mu.Lock()
		sh.out = sh.core.Step(now, req, sh.out[:0])
		w.addEffects(sh.out)
		sh.mu.Unlock()
	case wire.AdminStats:
		s.stats(req, w, now)
	case wire.AdminTakeover:
		s.takeover(req, w, now)
	case wire.AdminResidents:
		s.residents(req, w)
	}
}

func (s *Server) stats(req *lockcore.Request, w *writer, now int64) {
	k := int(req.Slots)
	if k == 0 || k > wire.MaxLockStats {
		k = wire.MaxLockStats
	}
	var all []wire.LockStat
	for _, sh := range s.shards {
		sh.mu.Lock()
		all = sh.core.TopLocks(all, k)
		sh.mu.Unlock()
	}
	slices.SortFunc(all, func(a, b wire.LockStat) int {
		if c := cmp.Compare(uint64(b.Requests)+uint64(b.Overflows), uint64(a.Requests)+uint64(a.Overflows)); c != 0 {
			return c
		}
		return cmp.Compare(a.Lock, b.Lock)
	})
	if len(all) > k {
		all = all[:k]
	}
	p := &s.place
	p.mu.Lock()
	interval := now - p.lastStats
	p.lastStats = now
	p.mu.Unlock()
	var body []byte
	for _, st := range all {
		body = wire.AppendLockStat(body, st)
	}
	w.sendBody(req.From, &wire.Fields{Op: wire.OpAdmin, Status: req.Status, Flags: wire.FlagReply, Lock: req.Lock,
		Txn: req.Txn, Token: uint64(max(interval, 0)), Timestamp: req.Timestamp, Slots: uint16(len(all))}, body)
}

func (s *Server) residents(req *lockcore.Request, w *writer) {
	k := int(req.Slots)
	if k == 0 || k > wire.MaxResidents {
		k = wire.MaxResidents
	}
	var ids []uint32
	for _, sh := range s.shards {
		sh.mu.Lock()
		ids = sh.core.Residents(ids, req.Lock, k)
		sh.mu.Unlock()
	}
	slices.Sort(ids)
	if len(ids) > k {
		ids = ids[:k]
	}
	body := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		body = append(body, byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
	}
	w.sendBody(req.From, &wire.Fields{Op: wire.OpAdmin, Status: req.Status, Flags: wire.FlagReply, Lock: req.Lock,
		Txn: req.Txn, Timestamp: req.Timestamp, Slots: uint16(len(ids))}, body)
}

// takeover starts a standby (or moves any server's tokens above a failed server's epoch): the
// epoch goes above req.Token, persisted, and grants wait req.LeaseMicros.
func (s *Server) takeover(req *lockcore.Request, w *writer, now int64) {
	p := &s.place
	p.mu.Lock()
	fresh := p.standby || req.Token >= s.Epoch()
	p.mu.Unlock()
	if fresh {
		ne, err := s.epochs.bump(max(s.Epoch()+1, req.Token+1))
		if err != nil {
			s.log.Error("takeover: cannot move to a new epoch", "err", err)
			w.addEffects([]lockcore.Effect{{To: req.From, Msg: wire.Fields{Op: wire.OpReject,
				Status: wire.StatusBadRequest, Lock: req.Lock, Txn: req.Txn, Token: req.Token, Timestamp: req.Timestamp}}})
			return
		}
		s.raiseAll(epochBase(ne))
		p.mu.Lock()
		p.standby = false
		p.graceEnd = now + int64(req.LeaseMicros)*1000
		p.mu.Unlock()
		s.log.Info("taking over", "failed_epoch", req.Token, "epoch", ne, "grace_us", req.LeaseMicros)
		s.applyHold(now, w)
	}
	w.addEffects([]lockcore.Effect{{To: req.From, Msg: wire.Fields{Op: wire.OpAdmin, Status: req.Status,
		Flags: wire.FlagReply, Lock: req.Lock, Txn: req.Txn, Token: s.Epoch(), Timestamp: req.Timestamp}}})
}

// sendBody sends an admin reply with a body after its rack key trailer, after everything the
// writer holds (replies with a body are rare: they skip the batch).
func (w *writer) sendBody(to netip.AddrPort, m *wire.Fields, body []byte) {
	w.flush()
	b := make([]byte, wire.ControlLen, wire.ControlLen+len(body))
	w.encode(b, m)
	b = append(b, body...)
	if _, err := w.pc.WriteTo(b, net.UDPAddrFromAddrPort(to)); err != nil {
		w.s.sendErr.Add(1)
		return
	}
	w.s.sent.Add(1)
}
