package p4rt

import (
	"errors"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/netlock-go/netlock/bmv2/front"
)

// Sentinel errors a Device returns; the server maps them to status codes.
// Any other error from a Device becomes INTERNAL unless it already carries a
// gRPC status (status.FromError), which is passed through.
var (
	// ErrAlreadyExists: an INSERT of an entity that exists (ALREADY_EXISTS).
	ErrAlreadyExists = errors.New("p4rt: entity already exists")
	// ErrNotFound: a MODIFY or DELETE of an entity that does not exist (NOT_FOUND).
	ErrNotFound = errors.New("p4rt: entity not found")
	// ErrResourceExhausted: a table or the PRE is full (RESOURCE_EXHAUSTED).
	ErrResourceExhausted = errors.New("p4rt: resource exhausted")
)

// Pipeline is a forwarding pipeline the server has verified: the P4Info of
// the request, equal to the one the front end generated from Bundle.
type Pipeline struct {
	P4Info  *p4configv1.P4Info
	Bundle  *Bundle
	Program *front.Checked
	Cookie  uint64
}

// Listener receives what the data plane sends to the controller. Its methods
// may be called from any goroutine and must not block for long.
type Listener interface {
	// PacketIn delivers a frame the pipeline sent to the CPU port. If the
	// program has a @controller_header("packet_in") header, frame starts with
	// it (as deparsed); the server strips it into PacketIn metadata. The
	// server does not retain frame after PacketIn returns.
	PacketIn(frame []byte)
	// Digest delivers one digest message: the digest's P4Info id and its data
	// (a P4Data struct of bitstrings, as the P4Info type_spec describes).
	Digest(digestID uint32, data *p4v1.P4Data)
	// IdleTimeout reports table entries (keys as EntryKey identifies them, in
	// a table whose P4Info idle_timeout_behavior is NOTIFY_CONTROL) that were
	// not hit for their idle_timeout_ns. The server sends one
	// IdleTimeoutNotification to the primaries.
	IdleTimeout(entries []*p4v1.TableEntry)
}

// Device is what the execution engine implements so that the server can
// program it. The server serializes all calls that change state (one at a
// time), validates every argument against the installed pipeline's P4Info
// first, and never passes nil entities. Reads may run concurrently with one
// another and with the data plane.
//
// The server never calls the Device while holding a lock that the Listener
// methods take, so the Device may call its Listener from inside any method
// (MemDevice.PacketOut does) and from data-plane goroutines.
//
// Table entries, counters, meters and registers are addressed by P4Info ids;
// indices are in range. Every proto passed in belongs to the Device from then
// on (the server does not modify it afterwards); values returned are not
// modified by the server either (it clones what it changes).
type Device interface {
	// InstallPipeline replaces the running program with p. All state of the
	// previous program (table entries, default actions, counters, meters,
	// registers) is discarded; the PRE (multicast groups, clone sessions) is
	// kept, as it does not depend on the program. Const entries and default
	// actions of the program take effect.
	InstallPipeline(p *Pipeline) error

	// InsertTableEntry adds an entry (ErrAlreadyExists if EntryKey(e) is
	// present, ErrResourceExhausted if the table is full). e may carry
	// CounterData / MeterConfig for the table's direct resources.
	InsertTableEntry(e *p4v1.TableEntry) error
	// ModifyTableEntry replaces the action (and the direct resources that
	// are set) of an existing entry (ErrNotFound).
	ModifyTableEntry(e *p4v1.TableEntry) error
	// DeleteTableEntry removes the entry with EntryKey(e) (ErrNotFound).
	DeleteTableEntry(e *p4v1.TableEntry) error
	// TableEntries calls fn for every entry of the table, in any order,
	// including const entries, each with its direct counter data and meter
	// config when the table has them. fn returning false stops the walk.
	TableEntries(tableID uint32, fn func(*p4v1.TableEntry) bool) error
	// TableEntry returns the entry with EntryKey(key), or ErrNotFound.
	TableEntry(key *p4v1.TableEntry) (*p4v1.TableEntry, error)
	// SetDefaultAction sets a table's default action; nil restores the
	// program's default.
	SetDefaultAction(tableID uint32, a *p4v1.Action) error
	// DefaultAction returns a table's current default action.
	DefaultAction(tableID uint32) (*p4v1.Action, error)

	// Counter and SetCounter read and write one cell of an indexed counter.
	Counter(counterID uint32, index int64) (*p4v1.CounterData, error)
	SetCounter(counterID uint32, index int64, d *p4v1.CounterData) error
	// SetDirectCounter sets the direct counter of an existing table entry
	// (ErrNotFound); reads come with TableEntry.
	SetDirectCounter(key *p4v1.TableEntry, d *p4v1.CounterData) error
	// Meter returns the configuration of one meter cell (nil: unconfigured,
	// every packet is green). SetMeter with nil resets the cell.
	Meter(meterID uint32, index int64) (*p4v1.MeterConfig, error)
	SetMeter(meterID uint32, index int64, c *p4v1.MeterConfig) error
	// SetDirectMeter configures the direct meter of an existing table entry
	// (ErrNotFound); nil resets it.
	SetDirectMeter(key *p4v1.TableEntry, c *p4v1.MeterConfig) error
	// Register and SetRegister read and write one register cell (a bitstring
	// P4Data of the register's width).
	Register(registerID uint32, index int64) (*p4v1.P4Data, error)
	SetRegister(registerID uint32, index int64, v *p4v1.P4Data) error

	// WriteMulticastGroup and WriteCloneSession insert, modify or delete a
	// PRE entry (ErrAlreadyExists, ErrNotFound as for tables).
	WriteMulticastGroup(op p4v1.Update_Type, g *p4v1.MulticastGroupEntry) error
	WriteCloneSession(op p4v1.Update_Type, s *p4v1.CloneSessionEntry) error
	// MulticastGroups and CloneSessions walk the PRE entries.
	MulticastGroups(fn func(*p4v1.MulticastGroupEntry) bool) error
	CloneSessions(fn func(*p4v1.CloneSessionEntry) bool) error

	// PacketOut injects a frame from the controller. If the program has a
	// @controller_header("packet_out") header, frame starts with it (the
	// server encodes the PacketOut metadata into it); the engine parses it
	// like any packet arriving on the CPU port. The Device owns frame.
	PacketOut(frame []byte) error

	// SetListener registers where packet-ins and digests go (nil: dropped).
	SetListener(l Listener)
}
