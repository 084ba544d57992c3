package rackmodel

import (
	"fmt"
	"math"
	"net/netip"

	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/lockserver/srvcore"
	"github.com/netlock-go/netlock/wire"
)

// machine is a lock server machine: ServerCores cores, each serving its requests one at a time
// (ServerCPU each, run to completion, DPDK). It runs its own lock server and, with
// Params.Standbys, the standby of the previous one.
type machine struct {
	idx int
	up  bool
	cpu []int64 // per core: busy until
}

// server is a lock server process: the real server core (lockserver/srvcore: its shards of
// lockcore, the rack key and the peers, the token epoch, the grant holds, the controller's admin
// operations) on a machine, behind a NIC port on the switch. The model is its shell, as
// lockserver.Server is over UDP: it hands every datagram to Core.Handle on the core of the
// request's shard (srvcore.Core.ShardIndex) and sends what comes out; it acknowledges every epoch
// the core asks to persist after FsyncDelay; and it runs Core.Tick at Core.NextDeadline (the UDP
// shell ticks every SweepInterval, 1ms; in virtual time the deadline itself is cheaper and no
// later).
type server struct {
	r       *Rack
	idx     int // 0-based: number idx+1 to the switch and the controller
	standby bool
	m       *machine
	port    int
	addr    netip.AddrPort
	core    *srvcore.Core
	up, dn  link
	tickAt  int64
	fr      udpframe.Frame
}

// addServer adds server s's process: its own (on machine s) or its standby (on the next
// machine).
func (r *Rack) addServer(s int, standby bool) error {
	p := r.p
	sv := &server{r: r, idx: s, standby: standby, m: r.mach[s], port: serverPort0 + s, addr: serverAddr(s),
		tickAt: math.MaxInt64}
	if standby {
		sv.m, sv.port = r.mach[(s+1)%p.Servers], standbyPort0+s
	}
	sv.up.prop, sv.dn.prop = int64(p.ServerPropagation), int64(p.ServerPropagation)
	cfg := srvcore.Config{
		Shards: p.ServerCores,
		Core:   lockcore.Config{DefaultLease: p.Lease, MaxLease: 2 * p.Lease},
		Key:    wire.Key(r.key),
		Peers:  srvcore.Peers{Switches: []string{switchIP.String()}, Controllers: []string{ctlIP.String()}},
		// A new server: its state file was just created at epoch 1 (lockserver's openEpoch).
		Epoch:           1,
		Start:           r.k.Now(),
		Standby:         standby,
		ControllerLease: p.ServerLease,
		Instance:        uint32(r.rng.Uint64()) | 1,
		Logger:          r.log.With("server", s+1, "standby", standby),
	}
	if r.accept != nil {
		cfg.TestingKnobs.OnAccept = func(lock uint32, txn uint64) {
			r.accept.Observe(wire.Append(nil, &wire.Fields{Op: wire.OpAcquire, Lock: lock, Txn: txn}))
		}
	}
	var err error
	if sv.core, err = srvcore.New(cfg); err != nil {
		return fmt.Errorf("rackmodel: server %d: %w", s+1, err)
	}
	r.servers = append(r.servers, sv)
	r.ports[sv.port] = sv
	return nil
}

func (sv *server) links() (up, down *link) { return &sv.up, &sv.dn }
func (sv *server) lossy() bool             { return false }

// receive takes a frame from the switch: the request waits for its shard's core, which serves it
// for ServerCPU.
func (sv *server) receive(b []byte) {
	r := sv.r
	if !sv.m.up {
		r.stats.ServerDropped++
		return
	}
	if err := udpframe.Parse(b, &sv.fr); err != nil {
		r.stats.Malformed++
		return
	}
	if sv.fr.Dst != sv.addr {
		r.stats.Unroutable++
		return
	}
	payload, from := sv.fr.Payload, sv.fr.Src
	var lock uint32
	var op wire.Op
	if h, err := wire.Parse(payload); err == nil {
		lock, op = h.Lock(), h.Op()
	}
	k := sv.core.ShardIndex(lock) % len(sv.m.cpu)
	start := max(r.k.Now(), sv.m.cpu[k])
	sv.m.cpu[k] = start + int64(r.p.ServerCPU)
	r.at(sv.m.cpu[k], func() {
		if !sv.m.up {
			r.stats.ServerDropped++
			return
		}
		switch op {
		case wire.OpOverflow:
			r.stats.Overflows++
		case wire.OpQueueEmpty:
			r.stats.QueueEmpties++
		}
		var out srvcore.Out
		sv.core.Handle(r.k.Now(), payload, from, &out)
		sv.apply(&out)
	})
}

// apply carries out what the core asked for: the datagrams in order, then the replies with a
// body, then the epoch to persist (acknowledged after FsyncDelay), as lockserver's writer does.
func (sv *server) apply(out *srvcore.Out) {
	r := sv.r
	now := r.k.Now()
	for i := range out.Sends {
		e := &out.Sends[i]
		switch {
		case e.Msg.Op == wire.OpGrant:
			r.stats.ServerGrants++
			r.series.grant(now, false)
		case e.Msg.Op == wire.OpPushBack && e.Msg.Txn != 0:
			r.stats.PushBacks++
		}
		r.hostSend(sv, sv.port, now, r.frame(sv.addr, e.To, &e.Msg, nil))
	}
	for i := range out.Bodies {
		b := &out.Bodies[i]
		r.hostSend(sv, sv.port, now, r.frame(sv.addr, b.To, &b.Msg, b.Data))
	}
	if e := out.Persist; e != 0 {
		r.at(now+int64(r.p.FsyncDelay), func() {
			if !sv.m.up {
				return
			}
			var out srvcore.Out
			sv.core.Persisted(r.k.Now(), e, &out)
			sv.apply(&out)
		})
	}
	sv.scheduleTick()
}

// scheduleTick makes sure Core.Tick runs at the core's next deadline (leases, grant holds, the
// controller lease, idle states). A tick scheduled earlier that is no longer the earliest does
// nothing when it comes.
func (sv *server) scheduleTick() {
	due := sv.core.NextDeadline()
	if due == math.MaxInt64 || due >= sv.tickAt {
		return
	}
	sv.tickAt = due
	sv.r.at(due, func() {
		if sv.tickAt != due {
			return
		}
		sv.tickAt = math.MaxInt64
		if !sv.m.up {
			return
		}
		var out srvcore.Out
		sv.core.Tick(sv.r.k.Now(), &out)
		sv.apply(&out)
	})
}
