// Package target is netlock's software switch: a p4rt.Device backed by the
// bmv2/engine execution engine, and the packet loop that moves frames between
// switch ports (bmv2/port) and the engine.
//
// One mutex serializes every use of the engine (the engine's Switch is
// single-threaded): P4Runtime writes and reads, packets received on any port,
// and packet-outs. A received frame runs through engine.Switch.Process under
// that mutex and its outputs are sent to their egress ports before the mutex
// is released, so the engine's reused result buffers are never shared. Frames
// the pipeline sends to the CPU port go to the p4rt Listener as packet-ins,
// digests as DigestList data.
//
// Table entries are kept twice: in the engine (which forwards with them) and
// as the canonical P4Runtime protos the server sent, keyed by p4rt.EntryKey,
// so reads return exactly what was written; direct counter values are read
// from the engine. Const entries come from the engine.
package target

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/p4rt"
	"github.com/netlock-go/netlock/bmv2/port"
)

// Options configures a Device.
type Options struct {
	// CPUPort is the controller's port (simple_switch --cpu-port): frames the
	// pipeline sends there become packet-ins, packet-outs arrive on it. 0
	// means no CPU port (packet-outs are refused).
	CPUPort int
	// TofinoConstraints enables the engine's Tofino-constraint mode.
	TofinoConstraints bool
	// Log, if set, receives a line per packet event (received, transmitted,
	// dropped, packet-in, pipeline errors) and the program's log_msg output,
	// like simple_switch --log-console. Nil keeps the fast path silent.
	Log func(string)
	// Now is the engine's clock (timestamps, meters); nil is time.Now.
	Now func() time.Time
	// Pipeline chooses the interpreter or the generated pipeline Generated names
	// (engine.Config.Pipeline).
	Pipeline engine.Pipeline
	// MemoryLimit bounds the memory of a pipeline's state (engine.Config.MemoryLimit: 0 is a
	// quarter of the machine's memory). A pipeline that needs more is refused with
	// RESOURCE_EXHAUSTED, and so is a table entry past it.
	MemoryLimit int64
	// Generated is the generated pipeline to run an installed program on when it was
	// generated from it, whatever its -D values (engine.Config.Generated; with PipelineAuto
	// any other program runs on the interpreter). The zero value names none.
	Generated engine.Generated
	// Pipes is the number of pipes of the chip a TNA program runs on (engine.Config.Pipes: 0
	// or 1 is one pipe; 2 or 4 as Tofino's, port p in pipe p>>7). A program of several
	// Pipelines (p4/tna/netlock.p4's Tofino 1 fold) needs one pipe each. Ignored by v1model
	// programs.
	Pipes int
	// Loopback lists the ports in loopback mode for a TNA program (engine.Config.Loopback: nil
	// is the recirculation port 68 alone). Ignored by v1model programs.
	Loopback []int
	// Drop, if set, is told of every frame that Stats.Dropped or Stats.Errors counts: why, the
	// port (the input port; for DropNoPort the output port; for a failed packet-out CPUPort), the
	// frame (valid during the call only) and, for DropPipelineError, the error. It runs with the
	// device's lock held and must not call the Device. Nil costs nothing.
	Drop func(why DropReason, port int, frame []byte, err error)
}

// DropReason says why a frame was counted in Stats.Dropped or Stats.Errors.
type DropReason uint8

// Reasons for a drop (Stats.Dropped) or an error (Stats.Errors).
const (
	DropNoOutput      DropReason = iota + 1 // dropped: the program sent the frame nowhere (mark_to_drop, no route, or it kept the request: netlock.p4 queues acquires)
	DropNoPort                              // dropped: the program sent it to a port number with no port attached
	DropNoProgram                           // error: it arrived before any program was installed
	DropPipelineError                       // error: the pipeline failed on it (assert, pass limit, Tofino constraint)
)

func (r DropReason) String() string {
	switch r {
	case DropNoOutput:
		return "no output (the program dropped it, or kept it: a lock request it queued)"
	case DropNoPort:
		return "sent to a port with nothing attached"
	case DropNoProgram:
		return "arrived before a program was installed"
	case DropPipelineError:
		return "pipeline error"
	}
	return fmt.Sprintf("DropReason(%d)", uint8(r))
}

// Stats counts what the packet loop did.
type Stats struct {
	// Received counts frames from ports and Transmitted frames sent to
	// ports; PacketIns counts frames to the controller. Dropped counts input
	// frames (and packet-outs) that produced no output at all, plus outputs
	// for a port number with no port attached. Errors counts frames the
	// pipeline failed on (assert, pass limit, Tofino constraint) or that
	// arrived with no pipeline installed.
	Received, Transmitted, PacketIns, Dropped, Errors uint64
}

// Device is the engine-backed p4rt.Device with its ports.
type Device struct {
	opts Options

	mu       sync.Mutex // guards everything below and every engine call
	sw       *engine.Switch
	tables   map[uint32]*tableState
	meters   map[[2]uint64]*p4v1.MeterConfig
	groups   map[uint32]*p4v1.MulticastGroupEntry
	sessions map[uint32]*p4v1.CloneSessionEntry
	listener p4rt.Listener
	ports    map[int]port.Port
	stats    Stats
	started  bool
	closed   bool

	wg sync.WaitGroup // port readers
}

var _ p4rt.Device = (*Device)(nil)

// tableState is one table: the engine's table and the runtime entries as the
// server wrote them.
type tableState struct {
	t       *engine.Table
	keyName map[uint32]string // match field id -> engine key name
	entries map[string]*p4v1.TableEntry
}

// New returns a Device with no pipeline and no ports.
func New(opts Options) *Device {
	return &Device{
		opts:     opts,
		groups:   map[uint32]*p4v1.MulticastGroupEntry{},
		sessions: map[uint32]*p4v1.CloneSessionEntry{},
		ports:    map[int]port.Port{},
	}
}

// GeneratedPipeline returns the name of the generated pipeline that runs the installed program
// (engine.Switch.GeneratedPipeline), or "" when the interpreter runs it or no program is
// installed.
func (d *Device) GeneratedPipeline() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return ""
	}
	return d.sw.GeneratedPipeline()
}

// engineErr maps an engine error to what the p4rt server understands.
func engineErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, engine.ErrNotFound):
		return fmt.Errorf("%v: %w", err, p4rt.ErrNotFound)
	case errors.Is(err, engine.ErrAlreadyExists):
		return fmt.Errorf("%v: %w", err, p4rt.ErrAlreadyExists)
	case errors.Is(err, engine.ErrMemoryLimit):
		return fmt.Errorf("%v: %w", err, p4rt.ErrResourceExhausted)
	case errors.Is(err, engine.ErrConstTable):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, engine.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return err
}

var errNoPipeline = status.Error(codes.FailedPrecondition, "target: no pipeline installed")

// InstallPipeline implements p4rt.Device: the bundle's checked program is
// compiled into a new engine switch, which takes over the PRE of the old one.
func (d *Device) InstallPipeline(p *p4rt.Pipeline) error {
	if p == nil || p.Program == nil {
		return status.Error(codes.InvalidArgument, "target: pipeline without a checked program")
	}
	return d.LoadProgram(p.Program)
}

// LoadProgram installs a checked program directly (the program argument of
// netlock switch). The P4Runtime server does not know about it: a controller
// still pushes its pipeline before writing, as with simple_switch_grpc.
func (d *Device) LoadProgram(prog *front.Checked) error {
	cfg := engine.Config{
		Now:               d.opts.Now,
		CPUPort:           d.opts.CPUPort,
		TofinoConstraints: d.opts.TofinoConstraints,
		Pipeline:          d.opts.Pipeline,
		MemoryLimit:       d.opts.MemoryLimit,
		Generated:         d.opts.Generated,
		OnPacketIn:        d.onPacketIn,
		OnDigest:          d.onDigest,
	}
	if prog.Arch() == front.ArchTNA { // the chip's pipes and loopback ports are a TNA program's
		cfg.Pipes, cfg.Loopback = d.opts.Pipes, d.opts.Loopback
	}
	if d.opts.Log != nil {
		log := d.opts.Log
		cfg.Log = func(s string) { log("log_msg: " + s) }
		cfg.OnTable = func(table, action string, hit bool) {
			if hit {
				log("table " + table + ": hit, action " + action)
			} else {
				log("table " + table + ": miss, default action " + action)
			}
		}
	}
	sw, err := engine.Load(prog, cfg)
	if errors.Is(err, engine.ErrMemoryLimit) {
		return fmt.Errorf("target: %v: %w", err, p4rt.ErrResourceExhausted)
	}
	if err != nil {
		if pipes, perr := prog.TNAPipes(); perr == nil && len(pipes) > max(d.opts.Pipes, 1) {
			// the engine's Config.Pipes is the operator's Options.Pipes (netlock switch --pipes)
			return status.Errorf(codes.InvalidArgument, "target: %v (the switch runs %d pipe(s): Options.Pipes, netlock switch --pipes)", err, max(d.opts.Pipes, 1))
		}
		return status.Errorf(codes.InvalidArgument, "target: %v", err)
	}
	tables := map[uint32]*tableState{}
	for _, t := range sw.Tables() {
		ts := &tableState{t: t, keyName: map[uint32]string{}, entries: map[string]*p4v1.TableEntry{}}
		for _, k := range t.Keys {
			ts.keyName[k.ID] = k.Name
		}
		tables[t.ID] = ts
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw != nil {
		sw.CopyPRE(d.sw)
	}
	d.sw, d.tables, d.meters = sw, tables, map[[2]uint64]*p4v1.MeterConfig{}
	return nil
}

// onPacketIn and onDigest run inside Process with d.mu held.
func (d *Device) onPacketIn(frame []byte) {
	d.stats.PacketIns++
	if d.opts.Log != nil {
		d.opts.Log(fmt.Sprintf("Transmitting packet of size %d to the controller (CPU port %d)", len(frame), d.opts.CPUPort))
	}
	if d.listener != nil {
		d.listener.PacketIn(frame)
	}
}

func (d *Device) onDigest(g engine.Digest) {
	if d.opts.Log != nil {
		d.opts.Log(fmt.Sprintf("Digest %s (id %d) generated", g.Name, g.ID))
	}
	if d.listener == nil {
		return
	}
	members := make([]*p4v1.P4Data, len(g.Fields))
	for i, f := range g.Fields {
		members[i] = &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: canonical(f)}}
	}
	d.listener.Digest(g.ID, &p4v1.P4Data{Data: &p4v1.P4Data_Struct{Struct: &p4v1.P4StructLike{Members: members}}})
}

// canonical strips leading zero bytes (zero is one 0x00 byte). It copies.
func canonical(b []byte) []byte {
	i := 0
	for i < len(b)-1 && b[i] == 0 {
		i++
	}
	if len(b) == 0 {
		return []byte{0}
	}
	return append([]byte(nil), b[i:]...)
}

func (d *Device) table(id uint32) (*tableState, error) {
	if d.sw == nil {
		return nil, errNoPipeline
	}
	ts, ok := d.tables[id]
	if !ok {
		return nil, fmt.Errorf("target: table id %d: %w", id, p4rt.ErrNotFound)
	}
	return ts, nil
}

// entry converts a P4Runtime entry to the engine's form (key and action).
func (ts *tableState) entry(e *p4v1.TableEntry) (engine.Entry, error) {
	en := engine.Entry{Priority: e.GetPriority()}
	for _, m := range e.GetMatch() {
		name, ok := ts.keyName[m.GetFieldId()]
		if !ok {
			return en, status.Errorf(codes.InvalidArgument, "target: table %s has no match field %d", ts.t.Name, m.GetFieldId())
		}
		fm := engine.FieldMatch{Name: name}
		switch x := m.GetFieldMatchType().(type) {
		case *p4v1.FieldMatch_Exact_:
			fm.Value = x.Exact.GetValue()
		case *p4v1.FieldMatch_Lpm:
			fm.Value, fm.PrefixLen = x.Lpm.GetValue(), int(x.Lpm.GetPrefixLen())
		case *p4v1.FieldMatch_Ternary_:
			fm.Value, fm.Mask = x.Ternary.GetValue(), x.Ternary.GetMask()
		case *p4v1.FieldMatch_Range_:
			fm.Low, fm.High = x.Range.GetLow(), x.Range.GetHigh()
		case *p4v1.FieldMatch_Optional_:
			fm.Value = x.Optional.GetValue()
		default:
			return en, status.Errorf(codes.Unimplemented, "target: match type %T", x)
		}
		en.Match = append(en.Match, fm)
	}
	if a := e.GetAction().GetAction(); a != nil {
		args, err := ts.args(a)
		if err != nil {
			return en, err
		}
		en.ActionID, en.Args = a.GetActionId(), args
	} else if e.GetAction() != nil {
		return en, status.Error(codes.Unimplemented, "target: action profile members and groups")
	}
	return en, nil
}

// args orders an action's parameters by P4Info id (1-based position).
func (ts *tableState) args(a *p4v1.Action) ([][]byte, error) {
	var act *engine.Action
	for _, x := range ts.t.Actions() {
		if x.ID == a.GetActionId() {
			act = x
		}
	}
	if act == nil {
		return nil, status.Errorf(codes.InvalidArgument, "target: action %d is not an action of table %s", a.GetActionId(), ts.t.Name)
	}
	args := make([][]byte, len(act.Params))
	for _, p := range a.GetParams() {
		i := int(p.GetParamId()) - 1
		if i < 0 || i >= len(args) {
			return nil, status.Errorf(codes.InvalidArgument, "target: action %s has no parameter %d", act.Name, p.GetParamId())
		}
		args[i] = p.GetValue()
	}
	for i, v := range args {
		if v == nil {
			return nil, status.Errorf(codes.InvalidArgument, "target: action %s: parameter %d missing", act.Name, i+1)
		}
	}
	return args, nil
}

// action renders an engine action and its data as a P4Runtime action.
func (ts *tableState) action(name string, id uint32, args [][]byte) *p4v1.Action {
	for _, x := range ts.t.Actions() {
		if (id != 0 && x.ID == id) || (id == 0 && x.Name == name) {
			id = x.ID
			break
		}
	}
	a := &p4v1.Action{ActionId: id}
	for i, v := range args {
		a.Params = append(a.Params, &p4v1.Action_Param{ParamId: uint32(i + 1), Value: canonical(v)})
	}
	return a
}

// fromEngine renders an engine entry (a const entry) as a canonical
// P4Runtime entry: wildcard fields are left out.
func (ts *tableState) fromEngine(e engine.Entry) *p4v1.TableEntry {
	out := &p4v1.TableEntry{TableId: ts.t.ID, Priority: e.Priority}
	for i, fm := range e.Match {
		if i >= len(ts.t.Keys) {
			break
		}
		kf := ts.t.Keys[i]
		m := &p4v1.FieldMatch{FieldId: kf.ID}
		switch kf.Kind {
		case engine.Exact:
			m.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: canonical(fm.Value)}}
		case engine.LPM:
			if fm.PrefixLen == 0 {
				continue
			}
			m.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: canonical(fm.Value), PrefixLen: int32(fm.PrefixLen)}}
		case engine.Ternary:
			if isZero(fm.Mask) {
				continue
			}
			m.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: canonical(fm.Value), Mask: canonical(fm.Mask)}}
		case engine.Optional:
			if isZero(fm.Mask) {
				continue
			}
			m.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: canonical(fm.Value)}}
		case engine.Range:
			if isZero(fm.Low) && isFull(fm.High, kf.Width) {
				continue
			}
			m.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: canonical(fm.Low), High: canonical(fm.High)}}
		}
		out.Match = append(out.Match, m)
	}
	out.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: ts.action(e.Action, e.ActionID, e.Args)}}
	if ts.t.HasDirectCounter() {
		out.CounterData = &p4v1.CounterData{PacketCount: int64(e.Packets), ByteCount: int64(e.Bytes)}
	}
	return out
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

func isFull(b []byte, width int) bool {
	ones := 0
	for i := len(b) - 1; i >= 0; i-- {
		for bit := 0; bit < 8; bit++ {
			if b[i]>>bit&1 == 0 {
				return ones >= width
			}
			ones++
		}
	}
	return ones >= width
}

func meterConfig(c *p4v1.MeterConfig) engine.MeterConfig {
	// P4Runtime rates are units per second, the engine's per microsecond.
	return engine.MeterConfig{
		CIR: float64(c.GetCir()) / 1e6, PIR: float64(c.GetPir()) / 1e6,
		CBS: uint64(c.GetCburst()), PBS: uint64(c.GetPburst()),
	}
}

// InsertTableEntry implements p4rt.Device.
func (d *Device) InsertTableEntry(e *p4v1.TableEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts, err := d.table(e.GetTableId())
	if err != nil {
		return err
	}
	k := p4rt.EntryKey(e)
	if _, ok := ts.entries[k]; ok {
		return fmt.Errorf("target: table %s: %w", ts.t.Name, p4rt.ErrAlreadyExists)
	}
	if ts.t.ConstEntries() {
		return status.Errorf(codes.PermissionDenied, "target: table %s has const entries", ts.t.Name)
	}
	if ts.t.Size > 0 && len(ts.entries) >= ts.t.Size {
		return fmt.Errorf("target: table %s holds %d entries: %w", ts.t.Name, ts.t.Size, p4rt.ErrResourceExhausted)
	}
	en, err := ts.entry(e)
	if err != nil {
		return err
	}
	if err := ts.t.Insert(en); err != nil {
		return engineErr(err)
	}
	if c := e.GetCounterData(); c != nil && ts.t.HasDirectCounter() {
		if err := ts.t.SetDirectCounter(en, uint64(c.GetPacketCount()), uint64(c.GetByteCount())); err != nil {
			return engineErr(err)
		}
	}
	if c := e.GetMeterConfig(); c != nil && ts.t.HasDirectMeter() {
		if err := ts.t.SetMeter(en, meterConfig(c)); err != nil {
			return engineErr(err)
		}
	}
	e.CounterData = nil // read live from the engine
	ts.entries[k] = e
	return nil
}

// ModifyTableEntry implements p4rt.Device.
func (d *Device) ModifyTableEntry(e *p4v1.TableEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts, err := d.table(e.GetTableId())
	if err != nil {
		return err
	}
	k := p4rt.EntryKey(e)
	old, ok := ts.entries[k]
	if !ok {
		return fmt.Errorf("target: table %s: %w", ts.t.Name, p4rt.ErrNotFound)
	}
	en, err := ts.entry(e)
	if err != nil {
		return err
	}
	if err := ts.t.Modify(en); err != nil {
		return engineErr(err)
	}
	if c := e.GetCounterData(); c != nil && ts.t.HasDirectCounter() {
		if err := ts.t.SetDirectCounter(en, uint64(c.GetPacketCount()), uint64(c.GetByteCount())); err != nil {
			return engineErr(err)
		}
	}
	if c := e.GetMeterConfig(); c != nil && ts.t.HasDirectMeter() {
		if err := ts.t.SetMeter(en, meterConfig(c)); err != nil {
			return engineErr(err)
		}
	} else {
		e.MeterConfig = old.GetMeterConfig()
	}
	e.CounterData = nil
	ts.entries[k] = e
	return nil
}

// DeleteTableEntry implements p4rt.Device.
func (d *Device) DeleteTableEntry(e *p4v1.TableEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts, err := d.table(e.GetTableId())
	if err != nil {
		return err
	}
	k := p4rt.EntryKey(e)
	if _, ok := ts.entries[k]; !ok {
		return fmt.Errorf("target: table %s: %w", ts.t.Name, p4rt.ErrNotFound)
	}
	en, err := ts.entry(e)
	if err != nil {
		return err
	}
	if err := ts.t.Delete(en); err != nil {
		return engineErr(err)
	}
	delete(ts.entries, k)
	return nil
}

// withCounter returns a copy of a stored entry with its direct counter read
// from the engine.
func (ts *tableState) withCounter(e *p4v1.TableEntry) *p4v1.TableEntry {
	out := proto.Clone(e).(*p4v1.TableEntry)
	if ts.t.HasDirectCounter() {
		out.CounterData = &p4v1.CounterData{}
		if en, err := ts.entry(e); err == nil {
			if got, err := ts.t.Lookup(en); err == nil {
				out.CounterData = &p4v1.CounterData{PacketCount: int64(got.Packets), ByteCount: int64(got.Bytes)}
			}
		}
	}
	return out
}

// TableEntries implements p4rt.Device.
func (d *Device) TableEntries(tableID uint32, fn func(*p4v1.TableEntry) bool) error {
	d.mu.Lock()
	ts, err := d.table(tableID)
	if err != nil {
		d.mu.Unlock()
		return err
	}
	var out []*p4v1.TableEntry
	if ts.t.ConstEntries() {
		for _, e := range ts.t.Entries() {
			out = append(out, ts.fromEngine(e))
		}
	} else {
		keys := make([]string, 0, len(ts.entries))
		for k := range ts.entries {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, ts.withCounter(ts.entries[k]))
		}
	}
	d.mu.Unlock()
	for _, e := range out {
		if !fn(e) {
			break
		}
	}
	return nil
}

// TableEntry implements p4rt.Device.
func (d *Device) TableEntry(key *p4v1.TableEntry) (*p4v1.TableEntry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts, err := d.table(key.GetTableId())
	if err != nil {
		return nil, err
	}
	k := p4rt.EntryKey(key)
	if ts.t.ConstEntries() {
		for _, e := range ts.t.Entries() {
			if pe := ts.fromEngine(e); p4rt.EntryKey(pe) == k {
				return pe, nil
			}
		}
		return nil, fmt.Errorf("target: table %s: %w", ts.t.Name, p4rt.ErrNotFound)
	}
	e, ok := ts.entries[k]
	if !ok {
		return nil, fmt.Errorf("target: table %s: %w", ts.t.Name, p4rt.ErrNotFound)
	}
	return ts.withCounter(e), nil
}

// SetDefaultAction implements p4rt.Device.
func (d *Device) SetDefaultAction(tableID uint32, a *p4v1.Action) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts, err := d.table(tableID)
	if err != nil {
		return err
	}
	if a == nil {
		ts.t.ResetDefault()
		return nil
	}
	args, err := ts.args(a)
	if err != nil {
		return err
	}
	return engineErr(ts.t.SetDefault("", a.GetActionId(), args))
}

// DefaultAction implements p4rt.Device.
func (d *Device) DefaultAction(tableID uint32) (*p4v1.Action, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts, err := d.table(tableID)
	if err != nil {
		return nil, err
	}
	name, args := ts.t.Default()
	return ts.action(name, 0, args), nil
}

// Counter implements p4rt.Device.
func (d *Device) Counter(id uint32, i int64) (*p4v1.CounterData, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return nil, errNoPipeline
	}
	k, err := d.sw.CounterByID(id)
	if err != nil {
		return nil, engineErr(err)
	}
	p, b, err := k.Read(int(i))
	if err != nil {
		return nil, engineErr(err)
	}
	return &p4v1.CounterData{PacketCount: int64(p), ByteCount: int64(b)}, nil
}

// SetCounter implements p4rt.Device.
func (d *Device) SetCounter(id uint32, i int64, c *p4v1.CounterData) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return errNoPipeline
	}
	k, err := d.sw.CounterByID(id)
	if err != nil {
		return engineErr(err)
	}
	return engineErr(k.Write(int(i), uint64(c.GetPacketCount()), uint64(c.GetByteCount())))
}

// SetDirectCounter implements p4rt.Device.
func (d *Device) SetDirectCounter(key *p4v1.TableEntry, c *p4v1.CounterData) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts, err := d.table(key.GetTableId())
	if err != nil {
		return err
	}
	if _, ok := ts.entries[p4rt.EntryKey(key)]; !ok {
		return fmt.Errorf("target: table %s: %w", ts.t.Name, p4rt.ErrNotFound)
	}
	en, err := ts.entry(key)
	if err != nil {
		return err
	}
	return engineErr(ts.t.SetDirectCounter(en, uint64(c.GetPacketCount()), uint64(c.GetByteCount())))
}

// Meter implements p4rt.Device.
func (d *Device) Meter(id uint32, i int64) (*p4v1.MeterConfig, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return nil, errNoPipeline
	}
	return d.meters[[2]uint64{uint64(id), uint64(i)}], nil
}

// SetMeter implements p4rt.Device.
func (d *Device) SetMeter(id uint32, i int64, c *p4v1.MeterConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return errNoPipeline
	}
	m, err := d.sw.MeterByID(id)
	if err != nil {
		return engineErr(err)
	}
	cell := [2]uint64{uint64(id), uint64(i)}
	if c == nil {
		delete(d.meters, cell)
		return engineErr(m.Reset(int(i)))
	}
	if err := m.SetRates(int(i), meterConfig(c)); err != nil {
		return engineErr(err)
	}
	d.meters[cell] = c
	return nil
}

// SetDirectMeter implements p4rt.Device. The engine has no reset for a
// direct meter cell, so nil re-creates the entry (keeping its counter).
func (d *Device) SetDirectMeter(key *p4v1.TableEntry, c *p4v1.MeterConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts, err := d.table(key.GetTableId())
	if err != nil {
		return err
	}
	k := p4rt.EntryKey(key)
	stored, ok := ts.entries[k]
	if !ok {
		return fmt.Errorf("target: table %s: %w", ts.t.Name, p4rt.ErrNotFound)
	}
	en, err := ts.entry(stored)
	if err != nil {
		return err
	}
	if c != nil {
		if err := ts.t.SetMeter(en, meterConfig(c)); err != nil {
			return engineErr(err)
		}
	} else {
		got, err := ts.t.Lookup(en)
		if err != nil {
			return engineErr(err)
		}
		if err := ts.t.Delete(en); err != nil {
			return engineErr(err)
		}
		if err := ts.t.Insert(en); err != nil {
			return engineErr(err)
		}
		if ts.t.HasDirectCounter() {
			if err := ts.t.SetDirectCounter(en, got.Packets, got.Bytes); err != nil {
				return engineErr(err)
			}
		}
	}
	upd := proto.Clone(stored).(*p4v1.TableEntry)
	upd.MeterConfig = c
	ts.entries[k] = upd
	return nil
}

// Register implements p4rt.Device.
func (d *Device) Register(id uint32, i int64) (*p4v1.P4Data, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return nil, errNoPipeline
	}
	r, err := d.sw.RegisterByID(id)
	if err != nil {
		return nil, engineErr(err)
	}
	v, err := r.Read(int(i))
	if err != nil {
		return nil, engineErr(err)
	}
	return &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: canonical(v)}}, nil
}

// SetRegister implements p4rt.Device.
func (d *Device) SetRegister(id uint32, i int64, v *p4v1.P4Data) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return errNoPipeline
	}
	r, err := d.sw.RegisterByID(id)
	if err != nil {
		return engineErr(err)
	}
	return engineErr(r.Write(int(i), v.GetBitstring()))
}

func replicas(rs []*p4v1.Replica) []engine.Replica {
	out := make([]engine.Replica, len(rs))
	for i, r := range rs {
		out[i] = engine.Replica{Port: int(r.GetEgressPort()), Rid: int(r.GetInstance())}
	}
	return out
}

// prewrite checks an insert, modify or delete of a PRE entry against the
// stored ones.
func prewrite[T any](m map[uint32]T, id uint32, op p4v1.Update_Type, what string) error {
	_, ok := m[id]
	switch {
	case op == p4v1.Update_INSERT && ok:
		return fmt.Errorf("target: %s %d: %w", what, id, p4rt.ErrAlreadyExists)
	case op != p4v1.Update_INSERT && !ok:
		return fmt.Errorf("target: %s %d: %w", what, id, p4rt.ErrNotFound)
	}
	return nil
}

// WriteMulticastGroup implements p4rt.Device.
func (d *Device) WriteMulticastGroup(op p4v1.Update_Type, g *p4v1.MulticastGroupEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return errNoPipeline
	}
	id := g.GetMulticastGroupId()
	if err := prewrite(d.groups, id, op, "multicast group"); err != nil {
		return err
	}
	if op == p4v1.Update_DELETE {
		delete(d.groups, id)
		d.sw.DeleteMulticastGroup(int(id))
		return nil
	}
	d.groups[id] = g
	d.sw.SetMulticastGroup(int(id), replicas(g.GetReplicas()))
	return nil
}

// WriteCloneSession implements p4rt.Device.
func (d *Device) WriteCloneSession(op p4v1.Update_Type, s *p4v1.CloneSessionEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return errNoPipeline
	}
	id := s.GetSessionId()
	if err := prewrite(d.sessions, id, op, "clone session"); err != nil {
		return err
	}
	if op == p4v1.Update_DELETE {
		delete(d.sessions, id)
		d.sw.DeleteCloneSession(int(id))
		return nil
	}
	d.sessions[id] = s
	d.sw.SetCloneSession(int(id), engine.CloneSession{Replicas: replicas(s.GetReplicas()), TruncateLen: int(s.GetPacketLengthBytes())})
	return nil
}

// MulticastGroups implements p4rt.Device.
func (d *Device) MulticastGroups(fn func(*p4v1.MulticastGroupEntry) bool) error {
	d.mu.Lock()
	var gs []*p4v1.MulticastGroupEntry
	for _, g := range d.groups {
		gs = append(gs, g)
	}
	d.mu.Unlock()
	sort.Slice(gs, func(i, j int) bool { return gs[i].GetMulticastGroupId() < gs[j].GetMulticastGroupId() })
	for _, g := range gs {
		if !fn(g) {
			break
		}
	}
	return nil
}

// CloneSessions implements p4rt.Device.
func (d *Device) CloneSessions(fn func(*p4v1.CloneSessionEntry) bool) error {
	d.mu.Lock()
	var ss []*p4v1.CloneSessionEntry
	for _, s := range d.sessions {
		ss = append(ss, s)
	}
	d.mu.Unlock()
	sort.Slice(ss, func(i, j int) bool { return ss[i].GetSessionId() < ss[j].GetSessionId() })
	for _, s := range ss {
		if !fn(s) {
			break
		}
	}
	return nil
}

// SetListener implements p4rt.Device.
func (d *Device) SetListener(l p4rt.Listener) {
	d.mu.Lock()
	d.listener = l
	d.mu.Unlock()
}

// PacketOut implements p4rt.Device: the frame enters the pipeline as received
// on the CPU port; what it produces goes to the ports (or back to the
// controller).
func (d *Device) PacketOut(frame []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw == nil {
		return errNoPipeline
	}
	if d.opts.CPUPort == 0 {
		return status.Error(codes.FailedPrecondition, "target: no CPU port configured (--cpu-port)")
	}
	if d.opts.Log != nil {
		d.opts.Log(fmt.Sprintf("Processing packet-out of size %d from the controller", len(frame)))
	}
	res, err := d.sw.PacketOut(frame)
	if err != nil {
		d.stats.Errors++
		if d.opts.Drop != nil {
			d.opts.Drop(DropPipelineError, d.opts.CPUPort, frame, err)
		}
		if d.opts.Log != nil {
			d.opts.Log("Packet-out failed in the pipeline: " + err.Error())
		}
		return status.Errorf(codes.InvalidArgument, "target: %v", err)
	}
	d.emitLocked(d.opts.CPUPort, frame, res)
	return nil
}
