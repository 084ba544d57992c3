package ctlcore

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/lockserver/srvcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
	"github.com/netlock-go/netlock/wire"
)

// The real cores the test racks are made of (scriptRack, fakeRack): the switch, p4/netlock.p4 on
// the P4 engine with the sizes of the Core's configuration, programmed through the engine's
// runtime API as P4Runtime would; and the lock servers, lockserver/srvcore cores. The racks wire
// them and script their failures; every rule is the cores'.

// Addresses and ports of a test rack. The clients are 10.0.1.x behind port rackHostPort (their
// route is Config.Hosts'); the controllers' server admin datagrams enter the switch on
// rackCtlPort from rackCtl and are routed by the switch's table; their answers come back out of
// band (the controller's address has no route).
var (
	rackClient  = netip.AddrPortFrom(netip.MustParseAddr("10.0.1.1"), 40000)
	rackTraffic = netip.AddrPortFrom(netip.MustParseAddr("10.0.1.2"), 40000)
	rackCtl     = netip.AddrPortFrom(netip.MustParseAddr("10.0.2.1"), 9000)
)

const (
	rackHostPort = 20
	rackCtlPort  = 30
)

var (
	errUnavailable = errors.New("switch unavailable")
	errNotPrimary  = errors.New("permission denied: not the primary controller")
)

// coreSwitch is a rack's switch: the program loaded by the last pipeline push (nil: none), or
// down (it processes nothing and answers nothing).
type coreSwitch struct {
	cfg   *Config
	now   func() time.Time // the rack's clock, the switch's
	down  bool
	dp    *dpengine.Switch
	admID uint16
}

// running reports whether the switch processes packets: up, with a pipeline.
func (s *coreSwitch) running() bool { return !s.down && s.dp != nil }

// load loads a fresh program (empty tables, zero registers), keeping the clone sessions: the
// pipeline push (bmv2 keeps its packet replication engine across one).
func (s *coreSwitch) load() error {
	dp, err := dpengine.Load(s.cfg.sizing(), engine.Config{TofinoConstraints: true, Now: s.now})
	if err != nil {
		return fmt.Errorf("loading the switch: %w", err)
	}
	if s.dp != nil {
		dp.CopyPRE(s.dp.Switch)
	}
	s.dp = dp
	return nil
}

// restart loses the pipeline, the tables, the clone sessions and the registers (keep: only the
// registers, the cookie among them).
func (s *coreSwitch) restart(keep bool) {
	if !keep || s.dp == nil {
		s.dp = nil
		return
	}
	for _, r := range s.dp.Registers() {
		r.Reset()
	}
}

// process runs frame, arrived on port, through the program and returns what it sent out (copied:
// the engine reuses its buffers). The switch must be running.
func (s *coreSwitch) process(port int, frame []byte) ([]engine.Output, error) {
	res, err := s.dp.Process(port, frame)
	if err != nil {
		return nil, fmt.Errorf("the switch failed a packet on port %d: %w", port, err)
	}
	outs := make([]engine.Output, len(res.Out))
	for i, o := range res.Out {
		outs[i] = engine.Output{Port: o.Port, Data: slices.Clone(o.Data)}
	}
	return outs, nil
}

// admin sends an admin request through the CPU port and returns the reply and the packets the
// switch sent besides (a force-release's reject and grant, a set-buffered's queue-empty); ok is
// false when no reply comes (the switch is down, has no pipeline, or drops the packet).
func (s *coreSwitch) admin(q dataplane.AdminRequest) (rep dataplane.AdminReply, outs []engine.Output, ok bool, err error) {
	if !s.running() {
		return rep, nil, false, nil
	}
	s.admID++
	q.ID = s.admID
	res, err := s.dp.Process(s.cfg.sizing().CPUPort, q.PacketOut(nil, s.cfg.Rack.Key))
	if err != nil {
		return rep, nil, false, fmt.Errorf("the switch failed an admin packet: %w", err)
	}
	for _, pi := range res.PacketIn {
		_, _, fr, err := dataplane.ParsePacketIn(pi)
		if err != nil {
			continue
		}
		if r, err := dataplane.ParseAdminReply(fr); err == nil && r.ID == q.ID && !ok {
			rep, ok = r, true
		}
	}
	for _, o := range res.Out {
		outs = append(outs, engine.Output{Port: o.Port, Data: slices.Clone(o.Data)})
	}
	return rep, outs, ok, nil
}

// readLocks answers ReadLocks: the lock table and its direct counters.
func (s *coreSwitch) readLocks(id uint64) Result {
	if !s.running() {
		return Result{ID: id, Err: errUnavailable}
	}
	res := Result{ID: id, Hits: map[uint32]uint64{}}
	res.Locks, res.Hits = s.lockTable()
	return res
}

// lockTable reads the switch's lock table and its direct counters, in lock order.
func (s *coreSwitch) lockTable() ([]dataplane.LockEntry, map[uint32]uint64) {
	hits := map[uint32]uint64{}
	if s.dp == nil {
		return nil, hits
	}
	t, err := s.dp.Table(dataplane.TableLock)
	if err != nil {
		return nil, hits
	}
	var locks []dataplane.LockEntry
	for _, e := range t.Entries() {
		le, err := dataplane.ParseLockEntry(e.Match[0].Value, e.Action, e.Args)
		if err != nil {
			continue
		}
		locks = append(locks, le)
		hits[le.Lock] = e.Packets
	}
	slices.SortFunc(locks, func(a, b dataplane.LockEntry) int { return cmp.Compare(a.Lock, b.Lock) })
	return locks, hits
}

// switchLock returns the switch's entry of lock id.
func (s *coreSwitch) switchLock(id uint32) (dataplane.LockEntry, bool) {
	if s.dp == nil {
		return dataplane.LockEntry{}, false
	}
	t, err := s.dp.Table(dataplane.TableLock)
	if err != nil {
		return dataplane.LockEntry{}, false
	}
	e, err := t.Lookup(engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyLock, Value: dataplane.LockEntry{Lock: id}.Match()}}})
	if err != nil {
		return dataplane.LockEntry{}, false
	}
	le, err := dataplane.ParseLockEntry(e.Match[0].Value, e.Action, e.Args)
	return le, err == nil
}

// write applies a Write to the switch's tables through the engine's runtime API (P4Runtime's
// operations): an atomic one all or nothing, another update by update (the first refusal is the
// error, as the shell reports a batch).
func (s *coreSwitch) write(w Write) error {
	if s.down {
		return errUnavailable
	}
	if s.dp == nil {
		return errors.New("no pipeline")
	}
	if w.Atomic {
		for _, u := range w.Updates {
			if err := s.check(u); err != nil {
				return err
			}
		}
	}
	var first error
	for _, u := range w.Updates {
		err := s.check(u)
		if err == nil {
			err = s.update(u)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// tableKey returns the table of an entity and its key (ok false: the rack's default action or a
// clone session).
func (s *coreSwitch) tableKey(e Entity) (*engine.Table, engine.Entry, bool, error) {
	var name string
	var key engine.Entry
	switch {
	case e.Server != nil:
		name = dataplane.TableServers
		key.Match = []engine.FieldMatch{{Name: dataplane.KeyServer, Value: dataplane.ServerMatch(e.ServerNum)}}
	case e.Route != nil:
		v, plen, err := dataplane.RouteMatch(e.Prefix)
		if err != nil {
			return nil, key, false, err
		}
		name = dataplane.TableRoute
		key.Match = []engine.FieldMatch{{Name: dataplane.KeyRouteDst, Value: v, PrefixLen: plen}}
	case e.Lock != nil:
		name = dataplane.TableLock
		key.Match = []engine.FieldMatch{{Name: dataplane.KeyLock, Value: e.Lock.Match()}}
	case e.Tenant != nil:
		name = dataplane.TableTenant
		key.Match = []engine.FieldMatch{{Name: dataplane.KeyTenant, Value: dataplane.TenantMatch(e.Tenant.ID)}}
	default:
		return nil, key, false, nil
	}
	t, err := s.dp.Table(name)
	if err != nil {
		return nil, key, false, err
	}
	return t, key, true, nil
}

// check says whether u can be applied: an insert of an entity that exists, or a modification or
// deletion of one that does not, is refused (P4Runtime's ALREADY_EXISTS and NOT_FOUND).
func (s *coreSwitch) check(u Update) error {
	e := u.Entity
	if e.Rack != nil {
		return nil
	}
	t, key, ok, err := s.tableKey(e)
	if err != nil {
		return err
	}
	var exists bool
	if ok {
		_, err := t.Lookup(key)
		exists = err == nil
	} else {
		_, exists = s.dp.CloneSessions()[dataplane.CloneSession(e.ClonePort)]
	}
	switch {
	case u.Op == Insert && exists:
		return fmt.Errorf("%w: %s", ErrAlreadyExists, e)
	case u.Op != Insert && !exists:
		return fmt.Errorf("%w: %s", ErrNotFound, e)
	}
	return nil
}

// update applies u (checked).
func (s *coreSwitch) update(u Update) error {
	e := u.Entity
	dp := s.dp
	if e.Rack != nil {
		return dp.SetRack(*e.Rack)
	}
	t, key, ok, err := s.tableKey(e)
	if err != nil {
		return err
	}
	if !ok {
		if u.Op == Delete {
			dp.DeleteCloneSession(dataplane.CloneSession(e.ClonePort))
		} else {
			dp.AddPortSession(e.ClonePort)
		}
		return nil
	}
	if u.Op == Delete {
		return t.Delete(key)
	}
	switch {
	case e.Server != nil:
		key.Action, key.Args, err = e.Server.Action()
	case e.Route != nil:
		key.Action, key.Args = e.Route.Action()
	case e.Lock != nil:
		if err := e.Lock.Validate(dp.Sizing); err != nil {
			return err
		}
		key.Action, key.Args = e.Lock.Action()
	case e.Tenant != nil:
		key.Action, key.Args = dataplane.TenantAction(e.Tenant.Meter)
	}
	if err != nil {
		return err
	}
	if u.Op == Insert {
		err = t.Insert(key)
	} else {
		err = t.Modify(key)
	}
	if err != nil || e.Tenant == nil {
		return err
	}
	m, err := dp.Meter(dataplane.MeterTenant)
	if err != nil {
		return err
	}
	perMicro := e.Tenant.Rate / 1e6
	return m.SetRates(e.Tenant.Meter, engine.MeterConfig{CIR: perMicro, PIR: perMicro, CBS: e.Tenant.Burst, PBS: e.Tenant.Burst})
}

// frame builds a datagram from src to dst (a control message carries the rack key).
func rackFrame(cfg *Config, src, dst netip.AddrPort, m *wire.Fields) []byte {
	n := wire.Len
	if m.Op.IsControl() {
		n = wire.ControlLen
	}
	var buf [wire.ControlLen]byte
	wire.Header(buf[:]).Encode(m)
	if m.Op.IsControl() {
		wire.SetRackKey(buf[:], cfg.Rack.Key)
	}
	return udpframe.Append(nil, udpframe.Endpoint{Addr: src}, udpframe.Endpoint{MAC: cfg.Rack.SwitchMAC, Addr: dst}, buf[:n])
}

// carryOut carries out what a server's core asked for in out, as a lock server's shell does
// (lockserver/server.go): every datagram through send, and a Persist confirmed at once, the
// effects of the confirmation in turn. The racks' clocks are virtual: a write lands at once.
func carryOut(core *srvcore.Core, now int64, out *srvcore.Out, send func(to netip.AddrPort, m wire.Fields, body []byte)) {
	for _, e := range out.Sends {
		send(e.To, e.Msg, nil)
	}
	for _, b := range out.Bodies {
		send(b.To, b.Msg, b.Data)
	}
	if e := out.Persist; e != 0 {
		var more srvcore.Out
		core.Persisted(now, e, &more)
		carryOut(core, now, &more, send)
	}
}

func parseFrame(b []byte, fr *udpframe.Frame, m *wire.Fields) bool {
	if udpframe.Parse(b, fr) != nil {
		return false
	}
	h, err := wire.Parse(fr.Payload)
	if err != nil {
		return false
	}
	h.Decode(m)
	return true
}

// newServerCore starts a lock server process's core: one shard, the rack's key and leases, the
// switch and the controllers' address as its peers, the controller lease of the Core's
// configuration.
func newServerCore(cfg *Config, instance uint32, standby bool, epoch uint64, grace time.Duration, start int64) (*srvcore.Core, error) {
	c, err := srvcore.New(srvcore.Config{
		Shards:          1,
		Core:            lockcore.Config{DefaultLease: cfg.Rack.DefaultLease, MaxLease: cfg.Rack.MaxLease},
		Key:             wire.Key(cfg.Rack.Key),
		Peers:           srvcore.Peers{Switches: []string{cfg.Rack.SwitchIP.String()}, Controllers: []string{rackCtl.Addr().String()}},
		Epoch:           epoch,
		Start:           start,
		Grace:           grace,
		Standby:         standby,
		ControllerLease: cfg.ServerLease,
		Instance:        instance,
	})
	if err != nil {
		return nil, fmt.Errorf("server instance %d: %w", instance, err)
	}
	return c, nil
}
