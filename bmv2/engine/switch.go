// Package engine executes checked v1model P4 programs with bmv2 simple_switch semantics.
//
// Load compiles a front.Checked program once into Go closures over a flat per-packet state of
// 64-bit slots (headers, metadata, locals and parameters each have a fixed slot range), so a
// packet runs without walking the AST and, in steady state, without allocating. A Switch is
// the raw, single-threaded core: Process takes one packet on one port and returns every
// packet the switch emits for it (after resubmits, recirculations, clones and multicast), with
// the digests it produced. The runtime API (tables, registers, counters, meters, clone
// sessions, multicast groups) identifies objects by P4Info id or by control-plane name.
package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netlock-go/netlock/bmv2/front"
)

// DropPort is bmv2's drop port: mark_to_drop sets egress_spec to it.
const DropPort = 511

// egressStartSpec is egress_spec as egress begins: bmv2's egress_thread sets it to DropPort
// + 1, which the 9-bit field holds as 0.
const egressStartSpec = (DropPort + 1) & (1<<9 - 1)

// instance_type values as bmv2 simple_switch sets them.
const (
	InstanceNormal       = 0
	InstanceIngressClone = 1
	InstanceEgressClone  = 2
	InstanceRecirc       = 4
	InstanceReplication  = 5
	InstanceResubmit     = 6
)

// MaxPasses bounds the pipeline passes (resubmit, recirculation, clones, replicas) one input
// packet may cause.
const MaxPasses = 1024

// ErrTooManyPasses is returned when a packet loops through the pipeline more than MaxPasses
// times.
var ErrTooManyPasses = errors.New("engine: too many pipeline passes")

// Config configures a Switch.
type Config struct {
	// Now is the clock for timestamps and meters. If nil, time.Now is used.
	Now func() time.Time
	// Random returns random numbers for random() and HashAlgorithm.random. If nil, a
	// PCG seeded with (1, 2) is used.
	Random func() uint64
	// Log receives log_msg output. If nil, log_msg does nothing.
	Log func(string)
	// OnDigest, if set, receives every digest as it is produced (also returned in Result).
	OnDigest func(Digest)
	// CPUPort, if not 0, is the port of the controller (bmv2 --cpu-port): packets the
	// pipeline sends there are packet-ins (Result.PacketIn and OnPacketIn), and PacketOut
	// injects a frame as if received on it.
	CPUPort int
	// OnPacketIn, if set, receives every packet-in (also returned in Result). The frame is
	// only valid during the call.
	OnPacketIn func(frame []byte)
	// OnTable, if set, is called for every table application with the table's name, the
	// action that ran and whether an entry was hit (bmv2's --log-console lines). It is off the
	// fast path when nil.
	OnTable func(table, action string, hit bool)
	// OnIngress, if set, is called at the start of every ingress pass with the port the packet
	// enters on (a resubmitted or recirculated packet's too; on a chip of several pipes the
	// port's pipe is the pass's, port>>7): the tests count passes with it. It is off the fast
	// path when nil.
	OnIngress func(port int)
	// TofinoConstraints makes the engine enforce what a Tofino stateful ALU allows, failing
	// the packet with ErrTofinoConstraint otherwise. In one pipeline pass (parser and
	// ingress, or egress and deparser) each register array may be used by one register
	// action: at most one read and at most one write, of one cell, within one action
	// invocation (an action called from an action belongs to the caller's invocation; an
	// access outside any action is an invocation of its own). A register array used by both
	// ingress and egress is an error too (a Tofino register lives in one gress).
	TofinoConstraints bool
	// Loopback lists the ports in loopback mode, for TNA programs: a packet sent out of one
	// enters the ingress pipeline again, received on that port (Tofino recirculates this way,
	// through its recirculation ports or front-panel ports put in loopback). nil means
	// TNARecirculationPort alone; an empty slice, no port. v1model programs recirculate with
	// recirculate() instead and ignore it.
	Loopback []int
	// Pipes is the number of pipes of the chip, for TNA programs: 0 or 1 is one pipe holding
	// every port; 2 or 4 are Tofino's multi-pipe chips, where port p is in pipe p>>7 (bits
	// 8:7 of the 9-bit port: 0-127 pipe 0, 128-255 pipe 1, ...). A program of one Pipeline
	// runs in every pipe, and each pipe has its own copy of the program's stateful objects
	// (registers, indexed counters, meters, direct meters, direct registers); the table
	// entries, default actions, value sets, port metadata, clone sessions and multicast groups
	// are one set for all pipes (the control plane writes them symmetrically). A packet's
	// ingress pass uses the state of the pipe of the port it arrived on (a resubmitted packet
	// stays in it; one recirculated through a loopback port enters that port's pipe), its
	// egress pass the state of the pipe of the port it leaves on. A program of several
	// Pipelines (Switch(pa, pb, ...)) needs Pipes of at least their number and runs the k-th
	// in pipe k, with its own objects, named with its prefix (pa.Ing.t). With Pipes > 1,
	// Process and PacketOut on a port outside the pipes that run the program, and any packet
	// sent to such a port, fail with ErrNoPipe. See pipes.go for the runtime API's reads and
	// writes. Other values are an error from Load, and so is Pipes > 1 for a v1model program.
	Pipes int
	// PipeScopes, if not nil, gives the pipes each Pipeline of a TNA program runs in, as
	// bf_switchd's configuration does (pipe_scope): PipeScopes[k] for the k-th Pipeline of
	// Switch(...), each pipe in at most one scope (Open-Tofino's tna_32q_2pipe runs its two
	// Pipelines as [][]int{{0, 2}, {1, 3}}). A Pipeline in several pipes has a copy of its
	// state in each; a pipe in no scope runs nothing (its ports fail with ErrNoPipe). nil:
	// one Pipeline in every pipe, or the k-th of several in pipe k.
	PipeScopes [][]int
	// Pipeline chooses between the interpreter and the generated pipeline Generated names
	// (v1model programs; see Pipeline and GenerateGo). The zero value is PipelineAuto.
	Pipeline Pipeline
	// MemoryLimit bounds the bytes the program's state may take: the cells of its registers,
	// counters and meters, one packet's state (8 bytes a slot) and its table entries (each at
	// Table.EntryBytes). Load fails with an error wrapping ErrMemoryLimit when the program
	// declares more, before allocating it; Table.Insert fails the same way when one more entry
	// would pass the limit. 0 means DefaultMemoryLimit() (a quarter of the machine's memory);
	// a negative value means no limit.
	MemoryLimit int64
	// Generated is the generated pipeline to run the program on (with PipelineAuto or
	// PipelineGenerated): the Go backend's output for the program, linked into the binary (a
	// generated package's <Name>Pipeline). Its Bind refuses a program it was not generated
	// from (ErrGenMismatch; PipelineAuto then runs the interpreter) and reads the values of
	// the program's parameters (its -D values) from the switch, so one pipeline serves every
	// sizing of its program. The zero value names none.
	Generated Generated
	// TestingKnobs are test-only behaviours; the zero value is production's.
	TestingKnobs TestingKnobs
}

// TNARecirculationPort is Tofino 1's recirculation port of pipe 0 (always in loopback),
// the loopback port of a TNA program unless Config.Loopback says otherwise.
const TNARecirculationPort = 68

// Digest is one digest() call: the receiver, the data's type name and P4Info digest id,
// and the field values, big-endian, in declaration order.
type Digest struct {
	Receiver uint32
	Name     string
	ID       uint32
	Fields   [][]byte
}

// Output is one packet leaving the switch.
type Output struct {
	Port int
	Data []byte
}

// Result is what Process produced. Its slices are reused by the next call to Process.
type Result struct {
	Out      []Output
	PacketIn [][]byte // frames sent to Config.CPUPort
	Digests  []Digest
}

// CloneSession is a mirroring session: a port (bmv2 mirroring_add), a multicast group
// (mirroring_add_mc) and/or a list of replicas (P4Runtime CloneSessionEntry).
type CloneSession struct {
	Port     int
	HasPort  bool
	McastGrp int
	Replicas []Replica
	// TruncateLen, if > 0, truncates the clones to that many bytes.
	TruncateLen int
}

// Replica is one copy made by the packet replication engine.
type Replica struct {
	Port int
	Rid  int
}

type slotRange struct{ off, n int }

type packet struct {
	s            []uint64
	data         []byte
	payload      int
	inPort       int
	lenReg       int // bmv2's packet length register: egress starts with packet_length = lenReg
	egressPort   int
	out          []byte
	truncLen     int
	cloneSet     bool
	cloneSession uint32
	cloneFL      int
	resubmit     bool
	resubmitFL   int
	recirc       bool
	recircFL     int
	digests      []Digest
	tna          tnaPacket // TNA programs: what the pass needs to know of earlier passes
}

// ctx is the execution state of one pipeline pass.
type ctx struct {
	sw            *Switch
	s             []uint64
	p             *packet
	in            []byte
	cur           int
	out           []byte
	outBits       int
	perr          int
	stackErr      int
	retBase       int
	entry         *entry
	lastAction    int
	exiting       bool
	fail          error
	hbuf          []byte
	pass          uint64
	actInvocation uint64 // id of the outermost action invocation (Tofino-constraint groups)
	actDepth      int    // nesting of action invocations
	gress         uint8  // gressIngress or gressEgress during a pass
	plen          int
	genArgs       []u128    // action data of the last Apply of generated code
	pipe          int       // the pipe of the pass (Config.Pipes): whose state it uses
	packer        BitPacker // generated code's hash and checksum inputs laid out at run time
}

func (c *ctx) pktLen() int     { return c.plen }
func (c *ctx) payload() []byte { return c.p.data[c.p.payload:] }

// Switch is a loaded program with its tables and extern state. It is not safe for
// concurrent use.
type Switch struct {
	cfg     Config
	checked *front.Checked
	nslots  int

	parser, verify, ingress, egress, compute, deparser stmtFn

	hdrBase, hdrN, metaBase, metaN, smBase, smN int
	smOff                                       map[string]int

	tables     []*Table
	registers  []*Register
	counters   []*Counter
	meters     []*Meter
	profiles   []*ActionProfile
	valueSets  []*ValueSet
	fieldLists [][]slotRange

	mcGroups map[int][]int
	mcNodes  map[int]mcNode
	mcNext   int
	mcCache  map[int][]Replica
	sessions map[int]CloneSession
	start    time.Time
	startSet bool
	lastNs   uint64 // the last reading of clockNs
	// inProcess is set during a Process call, whose clock reading is processUs (micros).
	inProcess bool
	processUs uint64
	c         ctx
	free      []*packet
	used      []*packet
	ingressQ  []*packet
	egressQ   []*packet
	res       Result
	pass      uint64
	f         smFields
	digestIDs map[string]uint32
	tna       *tnaState // set for TNA programs (tna.go)
	// pipes is the number of pipes of the chip (Config.Pipes, at least 1). With pipes > 1:
	// pipeOf maps a pipe to the Pipeline it runs (an index of tnaPipes and groups), -1 for
	// none; groups are each Pipeline's objects with a copy of their state in each pipe of its
	// scope (pipes.go). tnaPipes are the Pipelines of a TNA program (one, or Switch(pa, pb,
	// ...)); tna is tnaPipes[pipeOf[c.pipe]].
	pipes    int
	pipeOf   []int
	groups   []pipeGroup
	tnaPipes []*tnaState
	mem      memBudget // the state's memory against Config.MemoryLimit (memlimit.go)
	// A v1model packet's state cleared when it starts: the headers, user and standard
	// metadata [zeroLo, zeroHi) (allocated in that order) and the scratch slots from scratchLo
	// on (initSM). 0, 0: the whole state (TNA).
	zeroLo, zeroHi, scratchLo int
	genName                   string // the generated pipeline that runs the blocks, if any
	genFP                     string // Fingerprint of the program, once computed
	compiledFL                int    // field lists of the compiled program (GenLayout)

	// genExprs are the program's expressions in Fingerprint's order, computed with genFP
	// (GenConst).
	genExprs []front.Expr
}

// poisonTemps makes newPacket fill the slots it does not clear with garbage (tests: a slot
// read before it is written changes the packet's result).
var poisonTemps bool

// brokenNoLocalInit compiles declarations without an initializer into nothing (the negative
// control of TestStaleTemps; never set outside it).
var brokenNoLocalInit bool

func poison(s []uint64) {
	for i := range s {
		s[i] = 0xa5a5_5a5a_a5a5_5a5a ^ uint64(i)*0x9e37_79b9_7f4a_7c15
	}
}

type mcNode struct {
	rid   int
	ports []int
}

type compiler struct {
	checked       *front.Checked
	sw            *Switch
	sizes         map[front.Type]int
	nslots        int
	errCodes      map[*front.EnumMember]int
	root          *scope
	funcs         map[*front.FunctionDecl]*frame
	globalActions map[*front.ActionDecl]bool
	ids           map[string]uint32
	smOff         map[string]int
	smBase        int
	metaBase      int
	metaT         front.Type
	flIndex       map[uint64]int
	locOverride   map[front.Expr]loc
	specs         map[string]*frame // actions specialized for constant arguments
	// The TNA objects with per-pipe state that the Switch does not list (splitPipes).
	tnaDirRegs []*tnaDirectReg
	regActions []*regAction
}

func (cp *compiler) alloc(n int) int {
	b := cp.nslots
	cp.nslots += n
	return b
}

// Load compiles a checked v1model program.
func Load(checked *front.Checked, cfg Config) (sw *Switch, err error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Random == nil {
		r := rand.New(rand.NewPCG(1, 2))
		cfg.Random = r.Uint64
	}
	// TNA programs (tna.go) share the compiler; their pipeline is set up by loadTNA.
	tna := checked.Arch() == front.ArchTNA
	var v1 *front.V1Switch
	if !tna {
		if v1, err = checked.V1Switch(); err != nil {
			return nil, err
		}
		// What p4c-bm2-ss refuses, bmv2 never runs: neither does this switch.
		if errs := checked.CheckBMv2(); errs != nil {
			return nil, fmt.Errorf("%w: not a bmv2 program: %w", ErrInvalid, errs)
		}
	}
	if cfg.MemoryLimit == 0 {
		cfg.MemoryLimit = DefaultMemoryLimit()
	}
	npipes, err := pipeCount(cfg, tna)
	if err != nil {
		return nil, err
	}
	sw = &Switch{cfg: cfg, checked: checked, mcGroups: map[int][]int{}, mcNodes: map[int]mcNode{}, sessions: map[int]CloneSession{},
		mem: memBudget{limit: cfg.MemoryLimit}, pipes: npipes}
	cp := &compiler{checked: checked, sw: sw, sizes: map[front.Type]int{}, errCodes: map[*front.EnumMember]int{},
		funcs: map[*front.FunctionDecl]*frame{}, globalActions: map[*front.ActionDecl]bool{}, ids: map[string]uint32{}, flIndex: map[uint64]int{}, locOverride: map[front.Expr]loc{}, specs: map[string]*frame{}}
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(compileError)
			if !ok {
				panic(r)
			}
			sw, err = nil, ce.err
		}
	}()
	for i, m := range checked.ErrorMembers {
		cp.errCodes[m] = i
	}
	for _, d := range checked.Program.Decls {
		if a, ok := d.(*front.ActionDecl); ok {
			cp.globalActions[a] = true
		}
	}
	if info, err := checked.P4Info(); err == nil {
		for _, t := range info.Tables {
			cp.ids[t.Preamble.Name] = t.Preamble.Id
		}
		for _, a := range info.Actions {
			cp.ids[a.Preamble.Name] = a.Preamble.Id
		}
		for _, x := range info.Counters {
			cp.ids[x.Preamble.Name] = x.Preamble.Id
		}
		for _, x := range info.DirectCounters {
			cp.ids[x.Preamble.Name] = x.Preamble.Id
		}
		for _, x := range info.Meters {
			cp.ids[x.Preamble.Name] = x.Preamble.Id
		}
		for _, x := range info.DirectMeters {
			cp.ids[x.Preamble.Name] = x.Preamble.Id
		}
		for _, x := range info.ValueSets {
			cp.ids[x.Preamble.Name] = x.Preamble.Id
		}
		for _, x := range info.Registers {
			cp.ids[x.Preamble.Name] = x.Preamble.Id
		}
		for _, x := range info.ActionProfiles {
			cp.ids[x.Preamble.Name] = x.Preamble.Id
		}
		sw.digestIDs = map[string]uint32{}
		for _, x := range info.Digests {
			sw.digestIDs[x.Preamble.Name] = x.Preamble.Id
		}
	}
	cp.root = &scope{m: map[front.Decl]*binding{}, actions: map[*front.ActionDecl]*Action{}}
	// Global constants.
	for _, d := range checked.Program.Decls {
		if c, ok := d.(*front.ConstDecl); ok {
			if v, ok := cp.valueU128(c.Val); ok {
				cp.root.m[c] = &binding{kind: bConst, t: c.T, val: v}
			}
		}
	}
	// Global extern instances (registers and friends declared at top level).
	for _, d := range checked.Program.Decls {
		if inst, ok := d.(*front.InstanceDecl); ok && inst != checked.Main {
			if _, ok := inst.T.(*front.ExternType); ok {
				cp.instance(cp.root, inst)
			}
		}
	}
	if tna {
		if cfg.Pipeline == PipelineGenerated {
			return nil, fmt.Errorf("%w: the Go backend does not compile TNA programs (%s)", ErrInvalid, programName(checked))
		}
		cp.loadTNA()
		return sw, nil
	}
	// The pipeline's shared state: headers, user metadata, standard metadata.
	pp := v1.Parser.Parser
	if pp == nil || len(pp.Params) < 4 {
		return nil, fmt.Errorf("engine: the V1Switch parser must take (packet_in, out H, inout M, inout standard_metadata_t)")
	}
	hT, mT, smT := pp.Params[1].T, pp.Params[2].T, pp.Params[3].T
	sw.hdrN, sw.metaN, sw.smN = cp.slotsOf(hT), cp.slotsOf(mT), cp.slotsOf(smT)
	sw.hdrBase, sw.metaBase, sw.smBase = cp.alloc(sw.hdrN), cp.alloc(sw.metaN), cp.alloc(sw.smN)
	cp.smBase, cp.metaBase, cp.metaT = sw.smBase, sw.metaBase, mT
	sw.smOff = map[string]int{}
	if st, ok := under(smT).(*front.StructType); ok {
		for _, f := range st.Fields {
			off, _ := cp.fieldOffset(st, f.Name)
			sw.smOff[f.Name] = off
		}
	}
	cp.smOff = sw.smOff
	regions := []int{sw.hdrBase, sw.metaBase, sw.smBase}
	bindTop := func(b front.Block, order []int) stmtFn {
		sc := &scope{parent: cp.root, m: map[front.Decl]*binding{}, prefix: cpName("", nil, b.Name()), actions: map[*front.ActionDecl]*Action{}}
		var params, ctor []*front.Param
		if b.Parser != nil {
			params, ctor = b.Parser.Params, b.Parser.CtorParams
		} else {
			params, ctor = b.Control.Params, b.Control.CtorParams
		}
		cp.bindCtor(sc, cp.root, ctor, b.Args)
		for i, p := range params {
			if i < len(order) && order[i] >= 0 {
				sc.m[p] = &binding{kind: bSlot, t: p.T, base: regions[order[i]]}
			}
		}
		if b.Parser != nil {
			return cp.parser(sc, b.Parser)
		}
		return cp.control(sc, b.Control)
	}
	sw.parser = bindTop(v1.Parser, []int{-1, 0, 1, 2})
	sw.verify = bindTop(v1.VerifyChecksum, []int{0, 1})
	sw.ingress = bindTop(v1.Ingress, []int{0, 1, 2})
	sw.egress = bindTop(v1.Egress, []int{0, 1, 2})
	sw.compute = bindTop(v1.ComputeChecksum, []int{0, 1})
	sw.deparser = bindTop(v1.Deparser, []int{-1, 0})
	cp.reserve(front.Pos{}, "a packet's state ("+strconv.Itoa(cp.nslots)+" slots)", uint64(cp.nslots), slotBytes)
	sw.nslots = cp.nslots
	sw.zeroLo, sw.zeroHi, sw.scratchLo = sw.hdrBase, sw.smBase+sw.smN, cp.nslots
	sw.c.sw = sw
	sw.initSM()
	sw.compiledFL = len(sw.fieldLists) // GenFieldList appends more when a pipeline binds
	if err := sw.usePipeline(checked); err != nil {
		return nil, err
	}
	// As bmv2's simple_switch, whose clock starts when the switch is made: a packet's
	// timestamps count from the load, not from the first packet.
	sw.start, sw.startSet = cfg.Now(), true
	return sw, nil
}

// LoadFile loads, checks and compiles a P4 file.
func LoadFile(path string, opts front.Options, cfg Config) (*Switch, error) {
	checked, err := front.LoadOptions(path, opts)
	if err != nil {
		return nil, err
	}
	return Load(checked, cfg)
}

// micros is the switch clock: microseconds since the switch was loaded (bmv2 counts from the
// switch's start; Load reads the clock once). During a Process call it
// is the instant the call read when it began: one packet and everything it causes (its
// passes, clones, resubmits, recirculations and the meters they run) happen at one instant of
// the in-memory switch, so ingress_global_timestamp and egress_global_timestamp are equal
// (bmv2 reads its clock at each; a program may not rely on their difference here), and the
// clock is read once per packet instead of twice or more.
func (s *Switch) micros() uint64 {
	if s.inProcess {
		return s.processUs
	}
	return s.clockNs() / 1000
}

// clockNs is the switch clock in nanoseconds since its first reading of Config.Now. It never
// goes back, whatever Config.Now does (a switch's clock is a counter: bmv2's is a steady clock,
// Tofino's a free-running timestamp): a reading before the last one gives the last one. A clock
// that stepped back would make a grant stamped a moment ago look granted in the future, and a
// lease sweep computing (now - grant time) mod 2^32 would take it for one that ran out long ago
// (the rack model's admin packets, timed from the model's clock while a busy pipeline stamped
// packets ahead of it, did exactly that: TestClockNeverGoesBack).
func (s *Switch) clockNs() uint64 {
	now := s.cfg.Now()
	if !s.startSet {
		s.start, s.startSet = now, true
	}
	if d := now.Sub(s.start); d > 0 && uint64(d) > s.lastNs {
		s.lastNs = uint64(d)
	}
	return s.lastNs
}

func (s *Switch) newPacket() *packet {
	var p *packet
	if n := len(s.free); n > 0 {
		p = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		p = &packet{s: make([]uint64, s.nslots)}
	}
	if s.tna != nil || s.zeroHi == 0 {
		clear(p.s)
	} else {
		// A v1model packet starts with its headers invalid and its metadata zero; every other
		// slot (locals, parameters, temporaries) is written before it is read (declarations
		// clear or initialize, calls copy in, tables write action data), so it keeps whatever
		// the previous packet left (TestStaleTemps runs the STF suite over poisoned slots).
		clear(p.s[s.zeroLo:s.zeroHi])
		clear(p.s[s.scratchLo:])
		if poisonTemps {
			poison(p.s[:s.zeroLo])
			poison(p.s[s.zeroHi:s.scratchLo])
		}
	}
	p.data, p.out = p.data[:0], p.out[:0]
	p.payload, p.truncLen = 0, 0
	p.cloneSet, p.resubmit, p.recirc = false, false, false
	p.cloneFL, p.resubmitFL, p.recircFL = -1, -1, -1
	p.digests = p.digests[:0]
	s.used = append(s.used, p)
	return p
}

// Offsets of the standard_metadata fields the traffic manager uses.
type smFields struct {
	ingressPort, egressSpec, egressPort, instanceType, packetLength int
	ingressTS, egressTS, mcastGrp, egressRid, parserError           int
}

func (s *Switch) initSM() {
	f := func(n string) int {
		off, ok := s.smOff[n]
		if !ok {
			// A field missing from standard_metadata_t: use a scratch slot.
			s.nslots++
			return s.nslots - 1
		}
		return s.smBase + off
	}
	s.f = smFields{f("ingress_port"), f("egress_spec"), f("egress_port"), f("instance_type"), f("packet_length"),
		f("ingress_global_timestamp"), f("egress_global_timestamp"), f("mcast_grp"), f("egress_rid"), f("parser_error")}
}

func (s *Switch) copyFieldList(dst, src *packet, fl int) {
	if fl < 0 || fl >= len(s.fieldLists) {
		return
	}
	for _, r := range s.fieldLists[fl] {
		copy(dst.s[r.off:r.off+r.n], src.s[r.off:r.off+r.n])
	}
}

// Process runs one packet received on port through the pipeline.
func (s *Switch) Process(port int, data []byte) (*Result, error) {
	if s.tna != nil {
		return s.processTNA(port, data)
	}
	s.processUs = s.micros()
	s.inProcess = true
	defer func() { s.inProcess = false }()
	s.free = append(s.free, s.used...)
	s.used = s.used[:0]
	s.res.Out = s.res.Out[:0]
	s.res.PacketIn = s.res.PacketIn[:0]
	s.res.Digests = s.res.Digests[:0]
	p := s.newPacket()
	p.data = append(p.data, data...)
	p.inPort = port
	// As bmv2's receive_: only a packet received on a port gets ingress_port and
	// ingress_global_timestamp; a resubmitted or recirculated packet starts with its metadata
	// reset (both 0) except the fields of its field list.
	p.s[s.f.ingressPort] = uint64(port)
	p.s[s.f.ingressTS] = s.processUs & (1<<48 - 1)
	p.s[s.f.instanceType] = InstanceNormal
	s.ingressQ = append(s.ingressQ[:0], p)
	s.egressQ = s.egressQ[:0]
	passes := 0
	for len(s.ingressQ) > 0 || len(s.egressQ) > 0 {
		passes++
		if passes > MaxPasses {
			return &s.res, ErrTooManyPasses
		}
		if n := len(s.ingressQ); n > 0 {
			p := s.ingressQ[n-1]
			s.ingressQ = s.ingressQ[:n-1]
			if err := s.ingressPass(p); err != nil {
				return &s.res, err
			}
			continue
		}
		p := s.egressQ[0]
		n := copy(s.egressQ, s.egressQ[1:])
		s.egressQ = s.egressQ[:n]
		if err := s.egressPass(p); err != nil {
			return &s.res, err
		}
	}
	return &s.res, nil
}

func (s *Switch) run(p *packet, f stmtFn) error {
	c := &s.c
	c.exiting = false
	f(c)
	if c.fail != nil {
		err := c.fail
		c.fail = nil
		return err
	}
	return nil
}

func (s *Switch) beginPass(p *packet) *ctx {
	s.pass++
	c := &s.c
	c.s, c.p, c.pass = p.s, p, s.pass
	p.data = slices.Grow(p.data, 8) // spare bytes for the parser's 8-byte windows
	c.in, c.cur, c.perr, c.entry = p.data, 0, 0, nil
	c.plen = len(p.data)
	return c
}

func (s *Switch) ingressPass(p *packet) error {
	if f := s.cfg.OnIngress; f != nil {
		f(p.inPort)
	}
	c := s.beginPass(p)
	c.gress = gressIngress
	p.s[s.f.packetLength] = uint64(len(p.data))
	p.lenReg = len(p.data)
	c.exiting = false
	s.parser(c)
	if c.fail != nil {
		err := c.fail
		c.fail = nil
		return err
	}
	if c.perr != 0 {
		p.s[s.f.parserError] = uint64(c.perr)
	}
	p.payload = c.cur / 8
	if err := s.run(p, s.verify); err != nil {
		return err
	}
	if err := s.run(p, s.ingress); err != nil {
		return err
	}
	for _, d := range p.digests {
		s.res.Digests = append(s.res.Digests, d)
		if s.cfg.OnDigest != nil {
			s.cfg.OnDigest(d)
		}
	}
	p.digests = p.digests[:0]
	// Traffic manager, in bmv2's order: clone, resubmit, multicast, drop, unicast.
	if p.cloneSet {
		if sess, ok := s.sessions[int(p.cloneSession)]; ok {
			var perr error
			mk := func() *packet {
				// As bmv2: the clone is the packet as received, parsed again with
				// ingress_port set (its headers are the original ones, not ingress's
				// edits); then its metadata, standard and user, is reset (what the
				// parser wrote too) and the field list's fields copied from the original.
				q := s.newPacket()
				q.data = append(q.data, p.data...)
				q.inPort = p.inPort
				if err := s.parseClone(q); err != nil && perr == nil {
					perr = err
				}
				s.resetMetadata(q)
				s.copyFieldList(q, p, p.cloneFL)
				q.s[s.f.instanceType] = InstanceIngressClone
				q.lenReg = len(p.data)
				return q
			}
			s.replicate(sess, mk)
			if perr != nil {
				return perr
			}
		}
	}
	if p.resubmit {
		// As bmv2: the packet as received, with its metadata reset (ingress_port and
		// ingress_global_timestamp 0 too) but for the field list's fields.
		q := s.newPacket()
		q.data = append(q.data, p.data...)
		q.inPort = p.inPort
		s.copyFieldList(q, p, p.resubmitFL)
		q.s[s.f.instanceType] = InstanceResubmit
		s.ingressQ = append(s.ingressQ, q)
		return nil
	}
	if grp := p.s[s.f.mcastGrp]; grp != 0 {
		for _, r := range s.replicas(int(grp)) {
			q := s.clonePacket(p)
			q.s[s.f.egressRid] = uint64(r.Rid)
			q.s[s.f.instanceType] = InstanceReplication
			q.egressPort = r.Port
			s.egressQ = append(s.egressQ, q)
		}
		return nil
	}
	spec := p.s[s.f.egressSpec]
	if spec == DropPort {
		return nil
	}
	p.egressPort = int(spec)
	// As bmv2: a unicast packet enters egress as a normal one (a resubmitted or recirculated
	// packet too).
	p.s[s.f.instanceType] = InstanceNormal
	s.egressQ = append(s.egressQ, p)
	return nil
}

// resetMetadata zeroes a packet's user and standard metadata (bmv2's PHV::reset_metadata).
func (s *Switch) resetMetadata(q *packet) {
	clear(q.s[s.metaBase : s.metaBase+s.metaN])
	clear(q.s[s.smBase : s.smBase+s.smN])
}

// parseClone runs the parser over an ingress clone, as bmv2 does before the clone enters
// egress, with ingress_port set to the port the original came in on. It uses the switch's
// context, which the ingress pass no longer needs.
func (s *Switch) parseClone(q *packet) error {
	c := &s.c
	c.s, c.p = q.s, q
	q.data = slices.Grow(q.data, 8) // spare bytes for the parser's 8-byte windows
	c.in, c.cur, c.perr, c.entry = q.data, 0, 0, nil
	c.plen = len(q.data)
	c.gress = gressIngress
	q.s[s.f.ingressPort] = uint64(q.inPort)
	q.s[s.f.packetLength] = uint64(len(q.data))
	c.exiting = false
	s.parser(c)
	if c.fail != nil {
		err := c.fail
		c.fail = nil
		return err
	}
	if c.perr != 0 {
		q.s[s.f.parserError] = uint64(c.perr)
	}
	q.payload = c.cur / 8
	return nil
}

// clonePacket copies a packet with its whole state.
func (s *Switch) clonePacket(p *packet) *packet {
	q := s.newPacket()
	copy(q.s, p.s)
	q.data = append(q.data, p.data...)
	q.payload, q.inPort, q.truncLen, q.lenReg = p.payload, p.inPort, p.truncLen, p.lenReg
	return q
}

func (s *Switch) replicate(sess CloneSession, mk func() *packet) {
	if sess.McastGrp != 0 {
		for _, r := range s.replicas(sess.McastGrp) {
			q := mk()
			q.s[s.f.egressRid] = uint64(r.Rid)
			q.egressPort = r.Port
			s.egressQ = append(s.egressQ, q)
		}
	}
	if sess.HasPort {
		q := mk()
		q.egressPort = sess.Port
		q.truncLen = sess.TruncateLen
		s.egressQ = append(s.egressQ, q)
	}
	for _, r := range sess.Replicas {
		q := mk()
		q.egressPort = r.Port
		q.s[s.f.egressRid] = uint64(r.Rid)
		q.truncLen = sess.TruncateLen
		s.egressQ = append(s.egressQ, q)
	}
}

func (s *Switch) egressPass(p *packet) error {
	c := s.beginPass(p)
	c.gress = gressEgress
	p.s[s.f.egressPort] = uint64(p.egressPort)
	// As bmv2's egress_thread: egress starts with egress_spec set to one past the drop port,
	// so a packet leaves unless egress marks it to drop, whatever ingress left there (a
	// multicast replica of a packet ingress marked to drop, for example). bmv2's Field::set
	// keeps the value to the field's 9 bits, so egress reads 512 & 0x1FF = 0 (real
	// simple_switch, bmv2_meta.stf).
	p.s[s.f.egressSpec] = egressStartSpec
	p.s[s.f.egressTS] = s.micros() & (1<<48 - 1)
	p.cloneSet, p.recirc = false, false
	// As bmv2: packet_length is the length register (the length as received, for a
	// clone of any kind too), whatever ingress wrote there.
	p.s[s.f.packetLength] = uint64(p.lenReg)
	c.plen = p.lenReg
	if err := s.run(p, s.egress); err != nil {
		return err
	}
	if p.cloneSet {
		if sess, ok := s.sessions[int(p.cloneSession)]; ok {
			mk := func() *packet {
				q := s.clonePacket(p)
				s.resetMetadata(q)
				s.copyFieldList(q, p, p.cloneFL)
				q.s[s.f.instanceType] = InstanceEgressClone
				return q
			}
			s.replicate(sess, mk)
		}
	}
	if p.s[s.f.egressSpec] == DropPort {
		return nil
	}
	if err := s.run(p, s.compute); err != nil {
		return err
	}
	c.out, c.outBits = p.out[:0], 0
	if err := s.run(p, s.deparser); err != nil {
		return err
	}
	out := append(c.out, p.data[p.payload:]...)
	if p.truncLen > 0 && p.truncLen < len(out) {
		out = out[:p.truncLen]
	}
	p.out = out
	if p.recirc {
		// As bmv2: the deparsed packet, with its metadata reset (ingress_port and
		// ingress_global_timestamp 0 too) but for the field list's fields.
		q := s.newPacket()
		q.data = append(q.data, out...)
		q.inPort = p.inPort
		s.copyFieldList(q, p, p.recircFL)
		q.s[s.f.instanceType] = InstanceRecirc
		s.ingressQ = append(s.ingressQ, q)
		return nil
	}
	if s.cfg.CPUPort != 0 && p.egressPort == s.cfg.CPUPort {
		s.res.PacketIn = append(s.res.PacketIn, out)
		if s.cfg.OnPacketIn != nil {
			s.cfg.OnPacketIn(out)
		}
		return nil
	}
	s.res.Out = append(s.res.Out, Output{Port: p.egressPort, Data: out})
	return nil
}

// PacketOut injects a frame from the controller, as received on Config.CPUPort (the
// program's @controller_header("packet_out") header, if any, leads the frame).
func (s *Switch) PacketOut(frame []byte) (*Result, error) {
	if s.cfg.CPUPort == 0 {
		return nil, fmt.Errorf("%w: no CPU port configured", ErrInvalid)
	}
	return s.Process(s.cfg.CPUPort, frame)
}

// ---- Runtime API ----

// Tables lists the tables.
func (s *Switch) Tables() []*Table { return s.tables }

// Registers lists the register arrays.
func (s *Switch) Registers() []*Register { return s.registers }

// Counters lists the counters (indexed and direct).
func (s *Switch) Counters() []*Counter { return s.counters }

// Meters lists the meters (indexed and direct).
func (s *Switch) Meters() []*Meter { return s.meters }

// lookupName finds a name exactly, or as a unique suffix after a dot (as p4c's STF runner).
func lookupName[T any](kind, name string, xs []T, nameOf func(T) string) (T, error) {
	var zero T
	var cand []T
	for _, x := range xs {
		n := nameOf(x)
		if n == name {
			return x, nil
		}
		if strings.HasSuffix(n, "."+name) || strings.HasSuffix(n, name) && strings.HasSuffix(strings.ReplaceAll(n, ".", "_"), name) {
			cand = append(cand, x)
		}
	}
	if len(cand) == 1 {
		return cand[0], nil
	}
	if len(cand) > 1 {
		return zero, fmt.Errorf("%w: %s %q is ambiguous", ErrInvalid, kind, name)
	}
	return zero, fmt.Errorf("%w: %s %q", ErrNotFound, kind, name)
}

// Table finds a table by full control-plane name or unique suffix.
func (s *Switch) Table(name string) (*Table, error) {
	return lookupName("table", name, s.tables, func(t *Table) string { return t.Name })
}

// TableByID finds a table by P4Info id.
func (s *Switch) TableByID(id uint32) (*Table, error) {
	for _, t := range s.tables {
		if t.ID == id {
			return t, nil
		}
	}
	return nil, fmt.Errorf("%w: table id %d", ErrNotFound, id)
}

// Register finds a register array by name or unique suffix.
func (s *Switch) Register(name string) (*Register, error) {
	return lookupName("register", name, s.registers, func(r *Register) string { return r.Name })
}

// RegisterByID finds a register array by P4Info id.
func (s *Switch) RegisterByID(id uint32) (*Register, error) {
	for _, r := range s.registers {
		if r.ID == id {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%w: register id %d", ErrNotFound, id)
}

// Counter finds a counter by name or unique suffix.
func (s *Switch) Counter(name string) (*Counter, error) {
	return lookupName("counter", name, s.counters, func(k *Counter) string { return k.Name })
}

// Meter finds a meter by name or unique suffix.
func (s *Switch) Meter(name string) (*Meter, error) {
	return lookupName("meter", name, s.meters, func(m *Meter) string { return m.Name })
}

// SetCloneSession configures a mirroring session.
func (s *Switch) SetCloneSession(id int, sess CloneSession) { s.sessions[id] = sess }

// DeleteCloneSession removes a mirroring session.
func (s *Switch) DeleteCloneSession(id int) { delete(s.sessions, id) }

// CloneSessionOf returns a session's configuration.
func (s *Switch) CloneSessionOf(id int) (CloneSession, bool) {
	sess, ok := s.sessions[id]
	return sess, ok
}

// MulticastGroupCreate creates an empty multicast group (bmv2 mc_mgrp_create).
func (s *Switch) MulticastGroupCreate(grp int) {
	s.mcCache = nil
	s.mcGroups[grp] = s.mcGroups[grp][:0]
}

// MulticastNodeCreate creates a node of replicas with one rid (bmv2 mc_node_create) and
// returns its handle.
func (s *Switch) MulticastNodeCreate(rid int, ports []int) int {
	h := s.mcNext
	s.mcNext++
	s.mcNodes[h] = mcNode{rid: rid, ports: append([]int(nil), ports...)}
	return h
}

// MulticastNodeAssociate adds a node to a group (bmv2 mc_node_associate).
func (s *Switch) MulticastNodeAssociate(grp, node int) error {
	if _, ok := s.mcNodes[node]; !ok {
		return fmt.Errorf("%w: multicast node %d", ErrNotFound, node)
	}
	if _, ok := s.mcGroups[grp]; !ok {
		return fmt.Errorf("%w: multicast group %d", ErrNotFound, grp)
	}
	s.mcCache = nil
	s.mcGroups[grp] = append(s.mcGroups[grp], node)
	return nil
}

// SetMulticastGroup replaces a group's replicas (the P4Runtime MulticastGroupEntry shape).
func (s *Switch) SetMulticastGroup(grp int, rs []Replica) {
	s.mcCache = nil
	s.mcGroups[grp] = nil
	for _, r := range rs {
		h := s.MulticastNodeCreate(r.Rid, []int{r.Port})
		s.mcGroups[grp] = append(s.mcGroups[grp], h)
	}
}

// DeleteMulticastGroup removes a group.
func (s *Switch) DeleteMulticastGroup(grp int) {
	s.mcCache = nil
	delete(s.mcGroups, grp)
}

// replicas returns a group's replicas; the list is cached until the PRE changes, so
// multicast does not allocate per packet. Callers must not modify it.
func (s *Switch) replicas(grp int) []Replica {
	if s.mcCache == nil {
		s.mcCache = map[int][]Replica{}
	}
	if rs, ok := s.mcCache[grp]; ok {
		return rs
	}
	var out []Replica
	for _, h := range s.mcGroups[grp] {
		n := s.mcNodes[h]
		for _, p := range n.ports {
			out = append(out, Replica{Port: p, Rid: n.rid})
		}
	}
	s.mcCache[grp] = out
	return out
}
