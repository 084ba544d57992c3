package p4rt

import (
	"fmt"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"
)

// MemDevice is a Device that keeps every entity in memory and processes no
// packets: PacketOut hands the frame straight back to the listener as a
// packet-in (so a program whose packet_in and packet_out headers have the
// same layout sees its metadata come back). Tests and controllers can use it
// until the execution engine implements Device.
//
// It enforces table sizes (ErrResourceExhausted) and applies the program's
// default actions (P4Info const_default_action_id or, failing that, the
// action the program declares; tables without either default to NoAction
// when the table has it). Const entries are not loaded (the P4Info does not
// carry them).
type MemDevice struct {
	mu        sync.RWMutex
	pipe      *Pipeline
	sch       *schema
	tables    map[uint32]map[string]*p4v1.TableEntry
	defaults  map[uint32]*p4v1.Action
	counters  map[[2]uint64]*p4v1.CounterData
	meters    map[[2]uint64]*p4v1.MeterConfig
	registers map[[2]uint64]*p4v1.P4Data
	groups    map[uint32]*p4v1.MulticastGroupEntry
	sessions  map[uint32]*p4v1.CloneSessionEntry
	listener  Listener
	// PacketOuts counts the frames injected with PacketOut.
	packetOuts int
}

var _ Device = (*MemDevice)(nil)

// NewMemDevice returns an empty MemDevice.
func NewMemDevice() *MemDevice {
	return &MemDevice{groups: map[uint32]*p4v1.MulticastGroupEntry{}, sessions: map[uint32]*p4v1.CloneSessionEntry{}}
}

// InstallPipeline implements Device.
func (d *MemDevice) InstallPipeline(p *Pipeline) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pipe, d.sch = p, newSchema(p.P4Info)
	d.tables = map[uint32]map[string]*p4v1.TableEntry{}
	d.defaults = map[uint32]*p4v1.Action{}
	d.counters = map[[2]uint64]*p4v1.CounterData{}
	d.meters = map[[2]uint64]*p4v1.MeterConfig{}
	d.registers = map[[2]uint64]*p4v1.P4Data{}
	for id := range d.sch.tables {
		d.tables[id] = map[string]*p4v1.TableEntry{}
		d.defaults[id] = d.initialDefault(id)
	}
	return nil
}

// initialDefault finds a table's default action from the program.
func (d *MemDevice) initialDefault(tableID uint32) *p4v1.Action {
	ti := d.sch.tables[tableID]
	if id := ti.t.GetConstDefaultActionId(); id != 0 {
		return &p4v1.Action{ActionId: id}
	}
	if d.pipe.Program != nil {
		if a := programDefault(d.pipe, ti); a != nil {
			return a
		}
	}
	for _, ref := range ti.t.GetActionRefs() {
		if d.sch.actions[ref.GetId()].a.GetPreamble().GetName() == "NoAction" {
			return &p4v1.Action{ActionId: ref.GetId()}
		}
	}
	return nil
}

func (d *MemDevice) table(id uint32) (map[string]*p4v1.TableEntry, error) {
	if d.tables == nil {
		return nil, fmt.Errorf("p4rt: no pipeline installed")
	}
	t, ok := d.tables[id]
	if !ok {
		return nil, fmt.Errorf("p4rt: table %d: %w", id, ErrNotFound)
	}
	return t, nil
}

// InsertTableEntry implements Device.
func (d *MemDevice) InsertTableEntry(e *p4v1.TableEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, err := d.table(e.GetTableId())
	if err != nil {
		return err
	}
	k := EntryKey(e)
	if _, ok := t[k]; ok {
		return fmt.Errorf("table %s: %w", d.sch.tables[e.GetTableId()].t.GetPreamble().GetName(), ErrAlreadyExists)
	}
	if size := d.sch.tables[e.GetTableId()].t.GetSize(); size > 0 && int64(len(t)) >= size {
		return fmt.Errorf("table %s holds %d entries: %w", d.sch.tables[e.GetTableId()].t.GetPreamble().GetName(), size, ErrResourceExhausted)
	}
	ti := d.sch.tables[e.GetTableId()]
	if ti.directCounter != 0 && e.CounterData == nil {
		e.CounterData = &p4v1.CounterData{}
	}
	t[k] = e
	return nil
}

// ModifyTableEntry implements Device.
func (d *MemDevice) ModifyTableEntry(e *p4v1.TableEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, err := d.table(e.GetTableId())
	if err != nil {
		return err
	}
	old, ok := t[EntryKey(e)]
	if !ok {
		return fmt.Errorf("table %s: %w", d.sch.tables[e.GetTableId()].t.GetPreamble().GetName(), ErrNotFound)
	}
	if e.CounterData == nil {
		e.CounterData = old.CounterData
	}
	if e.MeterConfig == nil {
		e.MeterConfig = old.MeterConfig
	}
	t[EntryKey(e)] = e
	return nil
}

// DeleteTableEntry implements Device.
func (d *MemDevice) DeleteTableEntry(e *p4v1.TableEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, err := d.table(e.GetTableId())
	if err != nil {
		return err
	}
	k := EntryKey(e)
	if _, ok := t[k]; !ok {
		return fmt.Errorf("table %s: %w", d.sch.tables[e.GetTableId()].t.GetPreamble().GetName(), ErrNotFound)
	}
	delete(t, k)
	return nil
}

// TableEntries implements Device.
func (d *MemDevice) TableEntries(tableID uint32, fn func(*p4v1.TableEntry) bool) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	t, err := d.table(tableID)
	if err != nil {
		return err
	}
	for _, e := range t {
		if !fn(e) {
			break
		}
	}
	return nil
}

// TableEntry implements Device.
func (d *MemDevice) TableEntry(key *p4v1.TableEntry) (*p4v1.TableEntry, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	t, err := d.table(key.GetTableId())
	if err != nil {
		return nil, err
	}
	e, ok := t[EntryKey(key)]
	if !ok {
		return nil, ErrNotFound
	}
	return e, nil
}

// SetDefaultAction implements Device.
func (d *MemDevice) SetDefaultAction(tableID uint32, a *p4v1.Action) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.table(tableID); err != nil {
		return err
	}
	if a == nil {
		a = d.initialDefault(tableID)
	}
	d.defaults[tableID] = a
	return nil
}

// DefaultAction implements Device.
func (d *MemDevice) DefaultAction(tableID uint32) (*p4v1.Action, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if _, err := d.table(tableID); err != nil {
		return nil, err
	}
	return d.defaults[tableID], nil
}

func cell(id uint32, i int64) [2]uint64 { return [2]uint64{uint64(id), uint64(i)} }

// Counter implements Device.
func (d *MemDevice) Counter(id uint32, i int64) (*p4v1.CounterData, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if c, ok := d.counters[cell(id, i)]; ok {
		return c, nil
	}
	return &p4v1.CounterData{}, nil
}

// SetCounter implements Device.
func (d *MemDevice) SetCounter(id uint32, i int64, c *p4v1.CounterData) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.counters[cell(id, i)] = c
	return nil
}

// AddCounter adds to an indexed counter cell, as the data plane would (for tests).
func (d *MemDevice) AddCounter(id uint32, i int64, packets, bytes int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := proto.Clone(d.counters[cell(id, i)]).(*p4v1.CounterData)
	if c == nil {
		c = &p4v1.CounterData{}
	}
	c.PacketCount += packets
	c.ByteCount += bytes
	d.counters[cell(id, i)] = c
}

func (d *MemDevice) entryLocked(key *p4v1.TableEntry) (*p4v1.TableEntry, map[string]*p4v1.TableEntry, error) {
	t, err := d.table(key.GetTableId())
	if err != nil {
		return nil, nil, err
	}
	e, ok := t[EntryKey(key)]
	if !ok {
		return nil, nil, ErrNotFound
	}
	return e, t, nil
}

// SetDirectCounter implements Device.
func (d *MemDevice) SetDirectCounter(key *p4v1.TableEntry, c *p4v1.CounterData) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, t, err := d.entryLocked(key)
	if err != nil {
		return err
	}
	n := proto.Clone(e).(*p4v1.TableEntry) // entries handed out by reads stay unchanged
	n.CounterData = c
	t[EntryKey(key)] = n
	return nil
}

// Meter implements Device.
func (d *MemDevice) Meter(id uint32, i int64) (*p4v1.MeterConfig, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.meters[cell(id, i)], nil
}

// SetMeter implements Device.
func (d *MemDevice) SetMeter(id uint32, i int64, c *p4v1.MeterConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c == nil {
		delete(d.meters, cell(id, i))
	} else {
		d.meters[cell(id, i)] = c
	}
	return nil
}

// SetDirectMeter implements Device.
func (d *MemDevice) SetDirectMeter(key *p4v1.TableEntry, c *p4v1.MeterConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, t, err := d.entryLocked(key)
	if err != nil {
		return err
	}
	n := proto.Clone(e).(*p4v1.TableEntry)
	n.MeterConfig = c
	t[EntryKey(key)] = n
	return nil
}

// Register implements Device.
func (d *MemDevice) Register(id uint32, i int64) (*p4v1.P4Data, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if v, ok := d.registers[cell(id, i)]; ok {
		return v, nil
	}
	return &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{0}}}, nil
}

// SetRegister implements Device.
func (d *MemDevice) SetRegister(id uint32, i int64, v *p4v1.P4Data) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.registers[cell(id, i)] = v
	return nil
}

// WriteMulticastGroup implements Device.
func (d *MemDevice) WriteMulticastGroup(op p4v1.Update_Type, g *p4v1.MulticastGroupEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return prewrite(d.groups, g.GetMulticastGroupId(), op, g, "multicast group")
}

// WriteCloneSession implements Device.
func (d *MemDevice) WriteCloneSession(op p4v1.Update_Type, s *p4v1.CloneSessionEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return prewrite(d.sessions, s.GetSessionId(), op, s, "clone session")
}

func prewrite[T any](m map[uint32]T, id uint32, op p4v1.Update_Type, v T, what string) error {
	_, ok := m[id]
	switch op {
	case p4v1.Update_INSERT:
		if ok {
			return fmt.Errorf("%s %d: %w", what, id, ErrAlreadyExists)
		}
		m[id] = v
	case p4v1.Update_MODIFY:
		if !ok {
			return fmt.Errorf("%s %d: %w", what, id, ErrNotFound)
		}
		m[id] = v
	case p4v1.Update_DELETE:
		if !ok {
			return fmt.Errorf("%s %d: %w", what, id, ErrNotFound)
		}
		delete(m, id)
	}
	return nil
}

// MulticastGroups implements Device.
func (d *MemDevice) MulticastGroups(fn func(*p4v1.MulticastGroupEntry) bool) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, g := range d.groups {
		if !fn(g) {
			break
		}
	}
	return nil
}

// CloneSessions implements Device.
func (d *MemDevice) CloneSessions(fn func(*p4v1.CloneSessionEntry) bool) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, s := range d.sessions {
		if !fn(s) {
			break
		}
	}
	return nil
}

// PacketOut implements Device: the frame comes back as a packet-in.
func (d *MemDevice) PacketOut(frame []byte) error {
	d.mu.Lock()
	d.packetOuts++
	l := d.listener
	d.mu.Unlock()
	if l != nil {
		l.PacketIn(frame)
	}
	return nil
}

// PacketOuts returns how many frames PacketOut received.
func (d *MemDevice) PacketOuts() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.packetOuts
}

// EmitDigest delivers a digest to the listener, as the data plane would.
func (d *MemDevice) EmitDigest(digestID uint32, data *p4v1.P4Data) {
	d.mu.RLock()
	l := d.listener
	d.mu.RUnlock()
	if l != nil {
		l.Digest(digestID, data)
	}
}

// EmitPacketIn delivers a frame to the listener as a packet-in.
func (d *MemDevice) EmitPacketIn(frame []byte) {
	d.mu.RLock()
	l := d.listener
	d.mu.RUnlock()
	if l != nil {
		l.PacketIn(frame)
	}
}

// EmitIdleTimeout reports entries as idle to the listener.
func (d *MemDevice) EmitIdleTimeout(entries ...*p4v1.TableEntry) {
	d.mu.RLock()
	l := d.listener
	d.mu.RUnlock()
	if l != nil {
		l.IdleTimeout(entries)
	}
}

// SetListener implements Device.
func (d *MemDevice) SetListener(l Listener) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.listener = l
}
