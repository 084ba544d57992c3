package ctlcore

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// Input is what the I/O shell hands the Core: Tick, Primary, or the Result of an Effect.
type Input interface{ input() }

// Tick lets time pass: the Core runs the timers that are due (sweeps, pings, allocation
// periods, waits). The shell sends one at NextDeadline or earlier.
type Tick struct{}

// Primary says whether the controller is the switch's primary controller (P4Runtime
// arbitration). The Core acts only while primary; becoming primary starts a takeover
// (docs/controlplane.md, "Controller death").
type Primary struct{ IsPrimary bool }

func (Tick) input()    {}
func (Primary) input() {}
func (Result) input()  {}

// Effect is one thing the shell must do for the Core. Every Effect has an ID; the shell answers
// each with exactly one Result of that ID (success, failure or timeout), in any order.
type Effect interface {
	EffectID() uint64
	String() string
}

// Op is a P4Runtime update type.
type Op uint8

// Update types.
const (
	Insert Op = iota + 1
	Modify
	Delete
)

func (o Op) String() string {
	switch o {
	case Insert:
		return "insert"
	case Modify:
		return "modify"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Entity is one thing of the switch a Write changes: exactly one field is set.
type Entity struct {
	// Rack is the default action of dataplane.TableRack (Modify).
	Rack *dataplane.Rack
	// Server is entry ServerNum of dataplane.TableServers.
	Server    *dataplane.Server
	ServerNum uint16
	// Route is the dataplane.TableRoute entry of Prefix.
	Route  *dataplane.NextHop
	Prefix netip.Prefix
	// ClonePort is the clone session dataplane.CloneSession(ClonePort) sending to ClonePort.
	ClonePort int
	// Lock is a dataplane.TableLock entry (Delete needs only Lock.Lock).
	Lock *dataplane.LockEntry
	// Tenant is a dataplane.TableTenant entry limiting Tenant.ID by its meter cell, with the
	// meter's rate and burst (packets per second, packets).
	Tenant *Tenant
}

// String renders the entity on one line with what the switch does with it: the rack's key,
// address and leases; a server's or a route's port and MAC; a lock entry's index, server and
// regions (level 0, level 1, each as first slot+size) and whether it is paused. The staging entry
// of server n (lock wire.ReservedLockBase+n) is "staging n".
func (e Entity) String() string {
	switch {
	case e.Rack != nil:
		return fmt.Sprintf("rack key %#x switch %v lease %v max %v", e.Rack.Key, e.Rack.SwitchIP, e.Rack.DefaultLease,
			e.Rack.MaxLease)
	case e.Server != nil:
		return fmt.Sprintf("server %d %v port %d mac %v", e.ServerNum, e.Server.Addr, e.Server.Port, macString(e.Server.MAC))
	case e.Route != nil:
		return fmt.Sprintf("route %v port %d mac %v", e.Prefix, e.Route.Port, macString(e.Route.DstMAC))
	case e.Lock != nil:
		l := e.Lock
		s := fmt.Sprintf("%s index %d server %d regions %d+%d,%d+%d", lockName(l.Lock), l.Index, l.Server,
			l.Regions[0].Left, l.Regions[0].Size, l.Regions[1].Left, l.Regions[1].Size)
		if l.Paused {
			s += " paused"
		}
		return s
	case e.Tenant != nil:
		return fmt.Sprintf("tenant %d meter %d rate %v burst %d", e.Tenant.ID, e.Tenant.Meter, e.Tenant.Rate, e.Tenant.Burst)
	}
	return fmt.Sprintf("clone-session %d port %d", dataplane.CloneSession(e.ClonePort), e.ClonePort)
}

func macString(m dataplane.MAC) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// lockName names a lock in the effects' String: "lock L", or "staging n" for server n's
// staging entry.
func lockName(id uint32) string {
	if wire.IsReservedLock(id) {
		return fmt.Sprintf("staging %d", id-wire.ReservedLockBase)
	}
	return fmt.Sprintf("lock %d", id)
}

// Update is one update of a Write.
type Update struct {
	Op     Op
	Entity Entity
}

// Write is a P4Runtime Write of Updates, atomic (all or none) when Atomic is set.
type Write struct {
	ID      uint64
	Updates []Update
	Atomic  bool
}

// PushPipeline installs p4/netlock.p4 with Config.Sizing (dpengine.Bundle) on the
// switch, with pipeline cookie Cookie.
type PushPipeline struct {
	ID     uint64
	Cookie uint64
}

// GetPipeline asks whether the switch has a pipeline (P4Runtime), and adopts its P4Info.
// Result.HasPipeline answers.
type GetPipeline struct{ ID uint64 }

// ReadLocks reads dataplane.TableLock: Result.Locks has its entries and Result.Hits their
// direct counters (lock_hits, packets).
type ReadLocks struct{ ID uint64 }

// SwitchAdmin sends an admin PacketOut (with the rack key) and waits for its PacketIn:
// Result.Admin. The shell sets Req.ID to match the reply.
type SwitchAdmin struct {
	ID  uint64
	Req dataplane.AdminRequest
}

// ServerAdmin sends an admin request (a control message with the rack key) to server Server's
// address (Config.Servers) and waits for the answer: Result.Server, and Result.Body after the
// answer's trailer. An answer with another op (a reject) is a Result too, not an error.
type ServerAdmin struct {
	ID     uint64
	Server uint16
	Msg    wire.Fields
}

func (e Write) EffectID() uint64        { return e.ID }
func (e PushPipeline) EffectID() uint64 { return e.ID }
func (e GetPipeline) EffectID() uint64  { return e.ID }
func (e ReadLocks) EffectID() uint64    { return e.ID }
func (e SwitchAdmin) EffectID() uint64  { return e.ID }
func (e ServerAdmin) EffectID() uint64  { return e.ID }

// String renders the Write and each update, in order, on one line.
func (e Write) String() string {
	s := fmt.Sprintf("#%d write", e.ID)
	if e.Atomic {
		s += " (atomic)"
	}
	for _, u := range e.Updates {
		s += fmt.Sprintf(" [%s %s]", u.Op, u.Entity)
	}
	return s
}
func (e PushPipeline) String() string {
	return fmt.Sprintf("#%d push pipeline cookie %#x", e.ID, e.Cookie)
}
func (e GetPipeline) String() string { return fmt.Sprintf("#%d get pipeline", e.ID) }
func (e ReadLocks) String() string   { return fmt.Sprintf("#%d read lock table", e.ID) }

var switchAdminNames = map[wire.Status]string{
	wire.AdminSwitchProbe: "probe", wire.AdminSwitchReset: "reset", wire.AdminSwitchForceRelease: "force-release",
	wire.AdminSwitchTokenBase: "token-base", wire.AdminSwitchGetCookie: "get-cookie",
	wire.AdminSwitchSetCookie: "set-cookie", wire.AdminSwitchSetBuffered: "set-buffered",
}

// String renders the request: the sub-operation by name, the lock (not for the cookie), and
// the fields that are not zero (a probe's level and offset, the value, a force-release's txn
// and token).
func (e SwitchAdmin) String() string {
	name, ok := switchAdminNames[e.Req.Op]
	if !ok {
		name = fmt.Sprintf("op %d", e.Req.Op)
	}
	s := fmt.Sprintf("#%d switch %s", e.ID, name)
	r := e.Req
	if r.Op != wire.AdminSwitchGetCookie && r.Op != wire.AdminSwitchSetCookie {
		s += " " + lockName(r.Lock)
	}
	if r.Level != 0 || r.Offset != 0 {
		s += fmt.Sprintf(" level %d offset %d", r.Level, r.Offset)
	}
	if r.Op == wire.AdminSwitchSetCookie {
		s += fmt.Sprintf(" %#x", r.Value)
	} else if r.Value != 0 {
		s += fmt.Sprintf(" value %d", r.Value)
	}
	if r.Txn != 0 || r.Token != 0 {
		s += fmt.Sprintf(" txn %d token %d", r.Txn, r.Token)
	}
	return s
}

var serverAdminNames = map[wire.Status]string{
	wire.AdminPing: "ping", wire.AdminTokenFloor: "floor", wire.AdminResetLock: "reset", wire.AdminYield: "yield",
	wire.AdminAdopt: "adopt", wire.AdminStats: "stats", wire.AdminTakeover: "takeover", wire.AdminResidents: "residents",
}

// String renders the request: the sub-operation by name and its arguments (a lock, a token or
// floor, a takeover's epoch and grace, how many records or ids are asked for), then the
// controller term it carries (not for floor and reset, which carry none).
func (e ServerAdmin) String() string {
	m := e.Msg
	name, ok := serverAdminNames[m.Status]
	if !ok {
		name = fmt.Sprintf("admin %d", m.Status)
	}
	s := fmt.Sprintf("#%d server %d %s", e.ID, e.Server, name)
	switch m.Status {
	case wire.AdminPing:
	case wire.AdminTakeover:
		s += fmt.Sprintf(" epoch %d grace %v", m.Token, time.Duration(m.LeaseMicros)*time.Microsecond)
	case wire.AdminStats:
		s += fmt.Sprintf(" top %d", m.Slots)
	case wire.AdminResidents:
		s += fmt.Sprintf(" from %d max %d", m.Lock, m.Slots)
	default:
		s += " " + lockName(m.Lock)
		if m.Token != 0 {
			s += fmt.Sprintf(" token %d", m.Token)
		}
	}
	if m.Status != wire.AdminTokenFloor && m.Status != wire.AdminResetLock {
		s += fmt.Sprintf(" term %d", m.Timestamp)
	}
	return s
}

// Result answers the Effect with the same ID. Err is set when it failed (a refused write, a
// timeout); the other fields are those of the Effect's kind.
type Result struct {
	ID  uint64
	Err error
	// GetPipeline.
	HasPipeline bool
	// ReadLocks.
	Locks []dataplane.LockEntry
	Hits  map[uint32]uint64
	// SwitchAdmin.
	Admin dataplane.AdminReply
	// ServerAdmin.
	Server wire.Fields
	Body   []byte
}

// Tenant is a tenant's quota at the switch: a packet meter of Rate acquires per second with
// bursts of Burst (dataplane's tenant_limit and tenant_meter).
type Tenant struct {
	ID    uint16
	Meter int
	Rate  float64
	Burst uint64
}

// Errors the shell reports in Result.Err (wrapped: the Core tests them with errors.Is).
var (
	// ErrTimeout: the Effect got no answer in time (the shell's deadline).
	ErrTimeout = errors.New("ctlcore: no answer")
	// ErrNotFound: a Modify or Delete named an entry the switch does not have.
	ErrNotFound = errors.New("ctlcore: no such entry")
	// ErrAlreadyExists: an Insert named an entry the switch has.
	ErrAlreadyExists = errors.New("ctlcore: entry exists")
)

func isNotFound(err error) bool      { return errors.Is(err, ErrNotFound) }
func isAlreadyExists(err error) bool { return errors.Is(err, ErrAlreadyExists) }
