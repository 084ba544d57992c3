package simrack

import (
	"math"
	"net/netip"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// server is a lock server of the simulated rack: a lockcore.Core (one shard) and, around it,
// the server-level rules of package lockserver that the control plane relies on: the rack key and
// peers, the epoch-major token base and its floors, admin ping (epoch, term, instance, controller
// lease), the placement sub-operations with the term fence, stats, takeover, residents, and the
// grant holds (standby, takeover grace, controller lease). It mirrors lockserver; the real server
// is exercised by the rack tests over UDP.
type server struct {
	s        *Sim
	num      uint16
	addr     netip.AddrPort
	port     int
	core     *lockcore.Core
	epoch    uint64
	term     uint64
	instance uint32
	standby  bool
	serving  bool // a standby that took over (wire.PingServing)
	graceEnd int64
	leaseEnd int64
	applied  int64
	lastStat int64
	dead     bool
	out      []lockcore.Effect
}

const epochShift = 40

func newServer(s *Sim, num uint16, addr netip.AddrPort, port int, epoch uint64, standby bool) *server {
	sv := &server{s: s, num: num, addr: addr, port: port, epoch: epoch, standby: standby,
		instance: uint32(s.rng.Uint64()) | 1, lastStat: s.now}
	cfg := lockcore.Config{DefaultLease: s.cfg.Lease, MaxLease: s.cfg.MaxLease, TokenBase: epoch << epochShift}
	if standby {
		cfg.GrantAfter = math.MaxInt64
	}
	var err error
	sv.core, err = lockcore.New(cfg)
	if err != nil {
		panic(err)
	}
	sv.leaseEnd = s.now + int64(s.cfg.ServerLease)
	sv.applied = sv.hold(s.now)
	return sv
}

func (sv *server) hold(now int64) int64 {
	if sv.standby || (sv.s.cfg.ServerLease > 0 && now >= sv.leaseEnd) {
		return math.MaxInt64
	}
	return sv.graceEnd
}

// recv handles one datagram addressed to the server.
func (sv *server) recv(from netip.AddrPort, b []byte) {
	if sv.dead {
		return
	}
	now := sv.s.now
	h, err := wire.Parse(b)
	if err != nil {
		return
	}
	var req lockcore.Request
	h.Decode(&req.Fields)
	req.From = from
	if req.Op.IsControl() {
		k, ok := wire.RackKey(b)
		allowed := false
		switch req.Op {
		case wire.OpOverflow, wire.OpQueueEmpty:
			allowed = from.Addr() == sv.s.plan.switchIP
		case wire.OpAdmin:
			allowed = from.Addr() == sv.s.plan.ctlIP && !h.Has(wire.FlagReply)
		}
		if !ok || k != sv.s.cfg.Key || !allowed {
			sv.s.counts.RefusedControl++
			return
		}
	} else if req.Op != wire.OpAcquire && req.Op != wire.OpRelease && req.Op != wire.OpLeaseProbe {
		return
	}
	sv.out = sv.out[:0]
	switch {
	case req.Op == wire.OpAdmin:
		sv.admin(now, &req)
	default:
		dropped := sv.core.Stats().ResidentDropped
		sv.out = sv.core.Step(now, &req, sv.out)
		accepted := req.Op == wire.OpAcquire || (req.Op == wire.OpOverflow && sv.core.Adopted(req.Lock))
		if accepted && sv.core.Stats().ResidentDropped == dropped {
			sv.s.accept.Observe(wire.Append(nil, &wire.Fields{Op: wire.OpAcquire, Lock: req.Lock, Txn: req.Txn}))
		}
	}
	sv.flush()
}

func (sv *server) reply(req *lockcore.Request, m wire.Fields, body []byte) {
	m.Op, m.Status, m.Flags, m.Lock, m.Txn = wire.OpAdmin, req.Status, wire.FlagReply, req.Lock, req.Txn
	b := append(wire.Append(nil, &m), make([]byte, wire.AuthLen)...)
	wire.SetRackKey(b, sv.s.cfg.Key)
	sv.s.send(sv.port, sv.addr, req.From, append(b, body...))
}

func (sv *server) admin(now int64, req *lockcore.Request) {
	switch {
	case req.Status == wire.AdminPing:
		if sv.s.cfg.ServerLease > 0 {
			sv.leaseEnd = now + int64(sv.s.cfg.ServerLease)
		}
		sv.term = max(sv.term, req.Timestamp)
		var serving uint8
		if sv.serving {
			serving = wire.PingServing
		}
		sv.reply(req, wire.Fields{Token: sv.epoch, Slots: 1, Timestamp: sv.term, LeaseMicros: sv.instance,
			Priority: serving}, nil)
	case req.Status == wire.AdminTokenFloor:
		sv.reply(req, wire.Fields{Token: sv.raise(req.Token), Slots: req.Slots}, nil)
	case req.Status >= wire.AdminYield && req.Status <= wire.AdminResidents:
		if req.Timestamp < sv.term {
			sv.s.sendFields(sv.port, sv.addr, req.From, wire.Fields{Op: wire.OpReject, Status: wire.StatusNotOwner,
				Lock: req.Lock, Txn: req.Txn, Token: req.Token})
			return
		}
		sv.term = req.Timestamp
		switch req.Status {
		case wire.AdminYield, wire.AdminAdopt:
			if req.Status == wire.AdminAdopt {
				sv.raise(req.Token)
			}
			sv.out = sv.core.Step(now, req, sv.out)
			for i := range sv.out {
				if sv.out[i].Msg.Op == wire.OpAdmin {
					sv.out[i].Msg.Timestamp = req.Timestamp
				}
			}
		case wire.AdminStats:
			k := int(req.Slots)
			if k == 0 || k > wire.MaxLockStats {
				k = wire.MaxLockStats
			}
			recs := sv.core.TopLocks(nil, k)
			var body []byte
			for _, st := range recs {
				body = wire.AppendLockStat(body, st)
			}
			sv.reply(req, wire.Fields{Token: uint64(now - sv.lastStat), Slots: uint16(len(recs)), Timestamp: req.Timestamp}, body)
			sv.lastStat = now
		case wire.AdminTakeover:
			if sv.standby || req.Token >= sv.epoch {
				sv.epoch = max(sv.epoch+1, req.Token+1)
				sv.core.RaiseTokenFloor(sv.epoch << epochShift)
				sv.serving = sv.serving || sv.standby
				sv.standby = false
				sv.graceEnd = now + int64(req.LeaseMicros)*1000
				sv.applyHold(now)
			}
			sv.reply(req, wire.Fields{Token: sv.epoch, Timestamp: req.Timestamp}, nil)
		case wire.AdminResidents:
			k := int(req.Slots)
			if k == 0 || k > wire.MaxResidents {
				k = wire.MaxResidents
			}
			ids := sv.core.Residents(nil, req.Lock, k)
			var body []byte
			for _, id := range ids {
				body = append(body, byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
			}
			sv.reply(req, wire.Fields{Slots: uint16(len(ids)), Timestamp: req.Timestamp}, body)
		}
	default:
		sv.out = sv.core.Step(now, req, sv.out)
	}
}

// raise makes every later token larger than floor, moving to a later epoch when floor is past
// half of the current one (lockserver's rule), and returns the floor in force.
func (sv *server) raise(floor uint64) uint64 {
	if floor >= sv.epoch<<epochShift+1<<39 {
		sv.epoch = floor>>epochShift + 1
		sv.core.RaiseTokenFloor(sv.epoch << epochShift)
	}
	sv.core.RaiseTokenFloor(floor)
	return sv.core.LastToken()
}

// applyHold brings the core's grant hold in line with the standby flag, the grace and the
// controller lease.
func (sv *server) applyHold(now int64) {
	h := sv.hold(now)
	if h == sv.applied {
		return
	}
	sv.applied = h
	sv.out = sv.core.SetGrantAfter(now, h, sv.out)
}

// tick runs the server's timers: lease expiry and idle states, and the grant hold.
func (sv *server) tick() {
	if sv.dead {
		return
	}
	now := sv.s.now
	sv.out = sv.out[:0]
	sv.applyHold(now)
	if now >= sv.core.NextDeadline() {
		sv.out = sv.core.Expire(now, sv.out)
	}
	sv.flush()
}

// flush sends the effects; control messages get the rack key.
func (sv *server) flush() {
	for i := range sv.out {
		e := &sv.out[i]
		sv.s.sendFields(sv.port, sv.addr, e.To, e.Msg)
	}
	sv.out = sv.out[:0]
}
