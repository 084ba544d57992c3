package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// This file runs TNA programs (arch/tna.p4): one Pipeline of six blocks, with the Tofino
// packet path as p4c's Tofino model in p4testgen and Intel's TNA documentation describe it.
// The chip may have several pipes running the Pipeline, each with its own copy of the state
// (Config.Pipes, pipes.go): a pass runs in the pipe of its port.
//
// Ingress: the ingress parser sees ingress_intrinsic_metadata_t (64 bits: resubmit_flag,
// ingress_port, ingress_mac_tstamp), then 64 bits of port metadata (SetPortMetadata) or, for
// a resubmitted packet, the resubmit header, then the frame. A parser error or reject sets
// ingress_intrinsic_metadata_from_parser_t.parser_err; the packet is dropped when the
// program never reads parser_err or when the error is PARSER_ERROR_NO_MATCH (reject).
// After the ingress control and deparser, the traffic manager acts on
// ingress_intrinsic_metadata_for_deparser_t and _for_tm_t: mirroring (Mirror.emit: the
// packet as received, behind the mirror header, to the session's destinations through
// egress), resubmission (Resubmit.emit: the packet as received enters ingress again; once per
// packet), digests (Digest.pack), then, unless drop_ctl bit 0 is set, unicast to
// ucast_egress_port (if the program wrote it), multicast to mcast_grp_a and mcast_grp_b,
// and a copy to the CPU port (copy_to_cpu); bypass_egress sends the copies out directly.
//
// Egress: the egress parser sees egress_intrinsic_metadata_t (egress_port, egress_rid,
// pkt_length, ...), then what the ingress deparser emitted (bridged headers and the frame).
// Parser errors set parser_err and never drop. After the egress control and deparser,
// Mirror.emit mirrors the deparsed packet (egress to egress), and unless drop_ctl bit 0 is
// set the packet leaves on egress_port; a port in loopback mode (Config.Loopback, by default
// Tofino's recirculation port 68) sends it into the ingress again: recirculation.
//
// Intrinsic metadata bytes are never part of the payload: the payload starts where the
// parser stopped, or after the intrinsic metadata if the parser did not consume it.

// Sizes of the intrinsic data in front of the packet in the parsers, in bytes.
const (
	tnaIgPrefix = 16 // ingress_intrinsic_metadata_t and PORT_METADATA_SIZE bits
	tnaPortMeta = 8  // port metadata / resubmit data
)

// tnaUnset marks ucast_egress_port, digest_type, resubmit_type and mirror_type as not
// written in the pass (a value no field of 9 bits or fewer has). As on Tofino, where these
// fields only count when the pipeline wrote them, there is no unicast without a
// ucast_egress_port, and Digest.pack, Resubmit.emit and Mirror.emit do nothing unless the
// pass wrote digest_type, resubmit_type or mirror_type; a deparser's comparison with an
// unwritten one is false.
const tnaUnset = 1 << 9

// Parser error flags of parser_err (tna.p4's PARSER_ERROR_*).
const (
	tnaErrNoMatch    = 0x0001
	tnaErrPartialHdr = 0x0002
	tnaErrCtrRange   = 0x0004
	tnaErrTimeout    = 0x0008
	tnaErrPhvOwner   = 0x0080
	tnaErrMultiWrite = 0x0100
)

// ErrTNAResubmit is returned when a resubmitted packet asks to be resubmitted again (Tofino
// resubmits a packet at most once). It wraps ErrTofinoConstraint.
var ErrTNAResubmit = fmt.Errorf("%w: a packet is resubmitted at most once", ErrTofinoConstraint)

// tnaState is the TNA part of a Switch: the pipe's blocks, where the architecture's data live
// in the packet state, and the requests of the pass being run.
type tnaState struct {
	igParser, ingress, igDeparser, egParser, egress, egDeparser stmtFn

	// Slots of the intrinsic metadata fields the target sets or reads.
	igValid, igResubmitFlag, igPort, igMacTstamp              int // ingress_intrinsic_metadata_t
	tmUcast, tmBypass, tmCopyToCPU, tmMcastA, tmMcastB, tmRid int // _for_tm_t
	igPrsrTstamp, igPrsrErr                                   int // _from_parser_t
	igDropCtl                                                 int // _for_deparser_t
	igDigestType, igResubType, igMirrorType                   int
	egPort, egPrsrTstamp, egPrsrErr, egDropCtl                int
	egMirrorType                                              int

	igPrefix, egPrefix prefixLayout // encoders of the intrinsic headers
	errBits            []uint64     // parser error code -> parser_err flag
	parserErrRead      bool         // the program reads parser_err

	portMeta map[int][]byte // port metadata by ingress port (phase 0)
	loopback map[int]bool   // ports in loopback mode (Config.Loopback)
	req      tnaRequests
	inBuf    []byte
	meterCol map[*Meter][3]uint64 // GREEN, YELLOW, RED values of TNA meters
}

// tnaRequests are the deparser's requests in one pass.
type tnaRequests struct {
	resubmit   bool
	resubData  [tnaPortMeta]byte
	resubPos   string
	mirror     bool
	mirrorSess uint32
	mirrorHdr  []byte
	deposits   []deposit
}

// reset clears the requests, keeping their buffers.
func (r *tnaRequests) reset() {
	*r = tnaRequests{mirrorHdr: r.mirrorHdr[:0], deposits: r.deposits[:0]}
}

// tnaPacket is what a TNA pass needs to know of the passes before it.
type tnaPacket struct {
	resubmitted bool
	resubData   [tnaPortMeta]byte
	rid         uint64
	ridFirst    bool
}

// prefixLayout places the fields of an intrinsic metadata header in bytes.
type prefixLayout struct {
	off, width map[string]int
	bytes      int
}

func newPrefixLayout(st *front.StructType) prefixLayout {
	l := prefixLayout{off: map[string]int{}, width: map[string]int{}}
	bit := 0
	for _, f := range st.Fields {
		w := widthOf(f.T)
		l.off[f.Name], l.width[f.Name] = bit, w
		bit += w
	}
	l.bytes = (bit + 7) / 8
	return l
}

// put writes a field (absent fields are ignored).
func (l prefixLayout) put(b []byte, name string, v uint64) {
	if w, ok := l.width[name]; ok {
		writeBits(b, l.off[name], w, u128{lo: v}.trunc(w))
	}
}

// loadTNA compiles the Pipelines of a TNA program (called by Load after the shared setup):
// one Pipeline runs in every pipe of the chip, each pipe with its own copy of the state
// (splitPipes); several Pipelines (Switch(pipe0, pipe1, ...)) run one in each pipe, pipe k
// the k-th, each with its own objects, named with the Pipeline's control-plane prefix
// (front.TNAPipe.Name).
func (cp *compiler) loadTNA() {
	if cp.checked.TofinoGeneration() == 2 {
		cp.fail(cp.checked.Main.P, "not supported by the netlock engine: a Tofino 2 program (t2na.p4, or tna.p4 with __TARGET_TOFINO__ 2); the engine runs Tofino 1's TNA")
	}
	sw := cp.sw
	pipes, err := cp.checked.TNAPipes()
	if err != nil {
		cp.fail(cp.checked.Main.P, "%v", err)
	}
	if len(pipes) > 1 {
		switch {
		case sw.pipes == 1:
			cp.fail(cp.checked.Main.P, "not supported by the netlock engine: %d pipes (the engine runs one pipe); a chip of more is Config.Pipes", len(pipes))
		case len(pipes) > sw.pipes && sw.cfg.PipeScopes == nil:
			cp.fail(cp.checked.Main.P, "not supported by the netlock engine: %d pipes on a chip of %d (Config.Pipes)", len(pipes), sw.pipes)
		}
		seen := map[string]bool{}
		for _, p := range pipes {
			if seen[p.Name] {
				cp.fail(cp.checked.Main.P, "not supported by the netlock engine: Pipeline %s in two pipes of Switch (one Pipeline in every pipe is Switch(%s) with Config.Pipes)", p.Name, p.Name)
			}
			seen[p.Name] = true
		}
	}
	// What the pipes share: port metadata, loopback ports, meter colours.
	shared := &tnaState{portMeta: map[int][]byte{}, meterCol: map[*Meter][3]uint64{}, loopback: map[int]bool{}}
	if sw.cfg.Loopback == nil {
		shared.loopback[TNARecirculationPort] = true
	}
	for _, port := range sw.cfg.Loopback {
		shared.loopback[port] = true
	}
	// Every TNA program runs with Tofino's register rules.
	sw.cfg.TofinoConstraints = true
	scopes, err := pipeScopes(sw.cfg.PipeScopes, len(pipes), sw.pipes)
	if err != nil {
		panic(compileError{err})
	}
	for k, p := range pipes {
		t := &tnaState{portMeta: shared.portMeta, meterCol: shared.meterCol, loopback: shared.loopback}
		// The objects of the Pipeline: those its blocks create, and for a program of one
		// Pipeline the top-level instances too.
		var objs pipelineObjs
		if len(pipes) > 1 {
			objs = cp.objsMark()
		}
		cp.loadTNAPipeline(p, t)
		objs = cp.objsSince(objs)
		if len(pipes) > 1 {
			cp.pipelineNames(p.Name, objs)
		}
		sw.tnaPipes = append(sw.tnaPipes, t)
		if sw.pipes > 1 {
			cp.splitPipes(scopes[k], objs)
		}
	}
	sw.tna = sw.tnaPipes[0]
	if sw.pipes > 1 {
		sw.pipeOf = make([]int, sw.pipes)
		for p := range sw.pipeOf {
			sw.pipeOf[p] = -1
		}
		for k, sc := range scopes {
			for _, p := range sc {
				sw.pipeOf[p] = k
			}
		}
		sw.c.pipe = sw.groups[0].home
	}
	cp.reserve(front.Pos{}, "a packet's state ("+strconv.Itoa(cp.nslots)+" slots)", uint64(cp.nslots), slotBytes)
	sw.nslots = cp.nslots
	sw.c.sw = sw
}

// loadTNAPipeline compiles the six blocks of one Pipeline into t.
func (cp *compiler) loadTNAPipeline(p *front.TNAPipe, t *tnaState) {
	cp.sw.tna = t  // the blocks' closures capture the Pipeline's state
	cp.tnaRules(p) // tna_rules.go: refuse what a Tofino cannot run

	structNamed := func(name string) *front.StructType {
		for _, d := range cp.checked.Globals[name] {
			if sd, ok := d.(*front.StructDecl); ok && front.IsTNADecl(sd) {
				if st, ok := sd.T.(*front.StructType); ok {
					return st
				}
			}
		}
		cp.fail(p.IngressParser.Parser.P, "engine: tna.p4 declares no %s", name)
		return nil
	}
	igIntrT := structNamed("ingress_intrinsic_metadata_t")
	tmT := structNamed("ingress_intrinsic_metadata_for_tm_t")
	igPrsrT := structNamed("ingress_intrinsic_metadata_from_parser_t")
	igDprsrT := structNamed("ingress_intrinsic_metadata_for_deparser_t")
	egIntrT := structNamed("egress_intrinsic_metadata_t")
	egPrsrT := structNamed("egress_intrinsic_metadata_from_parser_t")
	egDprsrT := structNamed("egress_intrinsic_metadata_for_deparser_t")
	egOportT := structNamed("egress_intrinsic_metadata_for_output_port_t")

	ip, ep := p.IngressParser.Parser, p.EgressParser.Parser
	if len(ip.Params) < 3 || len(ep.Params) < 3 {
		cp.fail(ip.P, "engine: the TNA parsers take (packet_in, out H, out M, ...)")
	}
	region := func(t front.Type) int { return cp.alloc(cp.slotsOf(t)) }
	igHdr, igMeta := region(ip.Params[1].T), region(ip.Params[2].T)
	egHdr, egMeta := region(ep.Params[1].T), region(ep.Params[2].T)
	igIntr, tm, igPrsr, igDprsr := region(igIntrT), region(tmT), region(igPrsrT), region(igDprsrT)
	egIntr, egPrsr, egDprsr, egOport := region(egIntrT), region(egPrsrT), region(egDprsrT), region(egOportT)

	field := func(base int, st *front.StructType, name string) int {
		off, _ := cp.fieldOffset(st, name)
		return base + off
	}
	t.igValid = igIntr
	t.igResubmitFlag, t.igPort, t.igMacTstamp = field(igIntr, igIntrT, "resubmit_flag"), field(igIntr, igIntrT, "ingress_port"), field(igIntr, igIntrT, "ingress_mac_tstamp")
	t.tmUcast, t.tmBypass, t.tmCopyToCPU = field(tm, tmT, "ucast_egress_port"), field(tm, tmT, "bypass_egress"), field(tm, tmT, "copy_to_cpu")
	t.tmMcastA, t.tmMcastB, t.tmRid = field(tm, tmT, "mcast_grp_a"), field(tm, tmT, "mcast_grp_b"), field(tm, tmT, "rid")
	t.igPrsrTstamp, t.igPrsrErr = field(igPrsr, igPrsrT, "global_tstamp"), field(igPrsr, igPrsrT, "parser_err")
	t.igDropCtl = field(igDprsr, igDprsrT, "drop_ctl")
	t.igDigestType, t.igResubType = field(igDprsr, igDprsrT, "digest_type"), field(igDprsr, igDprsrT, "resubmit_type")
	t.igMirrorType = field(igDprsr, igDprsrT, "mirror_type")
	t.egMirrorType = field(egDprsr, egDprsrT, "mirror_type")
	t.egPort = field(egIntr, egIntrT, "egress_port")
	t.egPrsrTstamp, t.egPrsrErr = field(egPrsr, egPrsrT, "global_tstamp"), field(egPrsr, egPrsrT, "parser_err")
	t.egDropCtl = field(egDprsr, egDprsrT, "drop_ctl")
	t.igPrefix, t.egPrefix = newPrefixLayout(igIntrT), newPrefixLayout(egIntrT)
	if t.igPrefix.bytes != tnaIgPrefix-tnaPortMeta {
		cp.fail(ip.P, "engine: ingress_intrinsic_metadata_t is %d bytes, not 8", t.igPrefix.bytes)
	}

	t.errBits = make([]uint64, len(cp.checked.ErrorMembers))
	for i, m := range cp.checked.ErrorMembers {
		switch m.Name {
		case "NoError":
			t.errBits[i] = 0
		case "PacketTooShort", "HeaderTooShort", "StackOutOfBounds":
			t.errBits[i] = tnaErrPartialHdr
		case "CounterRange":
			t.errBits[i] = tnaErrCtrRange
		case "ParserTimeout", "Timeout":
			t.errBits[i] = tnaErrTimeout
		case "PhvOwner":
			t.errBits[i] = tnaErrPhvOwner
		case "MultiWrite":
			t.errBits[i] = tnaErrMultiWrite
		default:
			t.errBits[i] = tnaErrNoMatch // NoMatch, and the program's own errors (verify)
		}
	}
	front.Inspect(cp.checked.Program, func(e front.Expr) {
		if m, ok := e.(*front.MemberExpr); ok && m.Kind == front.MemberField && m.Name == "parser_err" {
			t.parserErrRead = true
		}
	})

	// Each block's parameters, in the order of tna.p4's block types; -1 is packet_in/out.
	bind := func(b front.Block, bases []int) stmtFn {
		sc := &scope{parent: cp.root, m: map[front.Decl]*binding{}, prefix: cpName("", nil, b.Name()), actions: map[*front.ActionDecl]*Action{}}
		var params, ctor []*front.Param
		if b.Parser != nil {
			params, ctor = b.Parser.Params, b.Parser.CtorParams
		} else {
			params, ctor = b.Control.Params, b.Control.CtorParams
		}
		cp.bindCtor(sc, cp.root, ctor, b.Args)
		for i, prm := range params {
			if i < len(bases) && bases[i] >= 0 {
				sc.m[prm] = &binding{kind: bSlot, t: prm.T, base: bases[i]}
			}
		}
		if b.Parser != nil {
			return cp.parser(sc, b.Parser)
		}
		return cp.control(sc, b.Control)
	}
	t.igParser = bind(p.IngressParser, []int{-1, igHdr, igMeta, igIntr, tm, igPrsr})
	t.ingress = bind(p.Ingress, []int{igHdr, igMeta, igIntr, igPrsr, igDprsr, tm})
	t.igDeparser = bind(p.IngressDeparser, []int{-1, igHdr, igMeta, igDprsr, igIntr})
	t.egParser = bind(p.EgressParser, []int{-1, egHdr, egMeta, egIntr, egPrsr, egDprsr})
	t.egress = bind(p.Egress, []int{egHdr, egMeta, egIntr, egPrsr, egDprsr, egOport})
	t.egDeparser = bind(p.EgressDeparser, []int{-1, egHdr, egMeta, egDprsr, egIntr, egPrsr})
}

// SetPortMetadata sets the port metadata (phase 0 data) the ingress parser of a TNA program
// sees after the intrinsic metadata of packets arriving on port: up to 8 bytes, left-aligned
// (port_metadata_unpack reads them). It is an error for v1model programs.
func (s *Switch) SetPortMetadata(port int, data []byte) error {
	if s.tna == nil {
		return fmt.Errorf("%w: port metadata exists in TNA programs only", ErrInvalid)
	}
	if len(data) > tnaPortMeta {
		return fmt.Errorf("%w: port metadata is at most %d bytes, not %d", ErrInvalid, tnaPortMeta, len(data))
	}
	s.tna.portMeta[port] = append([]byte(nil), data...)
	return nil
}

// nanos is the time in nanoseconds since the switch's first clock reading (the Tofino
// timestamps of TNA programs); it never goes back (clockNs).
func (s *Switch) nanos() uint64 { return s.clockNs() }

// processTNA is Process for TNA programs. It leaves the objects in their home pipes
// (pipes.go).
func (s *Switch) processTNA(port int, data []byte) (*Result, error) {
	res, err := s.runTNA(port, data)
	if s.pipes > 1 {
		s.goHome()
	}
	return res, err
}

// runTNA runs a packet and every packet it causes through the pipes.
func (s *Switch) runTNA(port int, data []byte) (*Result, error) {
	s.free = append(s.free, s.used...)
	s.used = s.used[:0]
	s.res.Out = s.res.Out[:0]
	s.res.PacketIn = s.res.PacketIn[:0]
	s.res.Digests = s.res.Digests[:0]
	p := s.newPacket()
	p.data = append(p.data, data...)
	p.inPort = port
	p.tna = tnaPacket{}
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
			if err := s.tnaIngressPass(p); err != nil {
				return &s.res, err
			}
			continue
		}
		p := s.egressQ[0]
		n := copy(s.egressQ, s.egressQ[1:])
		s.egressQ = s.egressQ[:n]
		if err := s.tnaEgressPass(p); err != nil {
			return &s.res, err
		}
	}
	return &s.res, nil
}

// runBlock runs one block of the pass and returns how it ended and the error that stops the
// packet, if any.
func (s *Switch) runBlock(f stmtFn) (flow, error) {
	c := &s.c
	c.exiting = false
	r := f(c)
	if c.fail != nil {
		err := c.fail
		c.fail = nil
		return r, err
	}
	return r, nil
}

// tnaInput builds the parser's input: prefix bytes, then the frame.
func (t *tnaState) tnaInput(prefix int, frame []byte) []byte {
	in := t.inBuf[:0]
	for i := 0; i < prefix; i++ {
		in = append(in, 0)
	}
	in = append(in, frame...)
	t.inBuf = in
	return in
}

// payloadStart is where the payload begins in the frame, given the parser's cursor (bits)
// in an input with prefix bytes in front of the frame. A cursor inside a byte rounds up: the
// deparser pads what it emits to whole bytes before the payload (a bridged header of 19
// bits and the Ethernet header after it end 5 bits short of a byte), so the rest of that
// byte is padding.
func payloadStart(cur, prefix, frame int) int {
	return min(max((cur+7)/8-prefix, 0), frame)
}

// tnaIngressPass runs the ingress of the pipe of p.inPort.
func (s *Switch) tnaIngressPass(p *packet) error {
	if f := s.cfg.OnIngress; f != nil {
		f(p.inPort)
	}
	if s.pipes > 1 {
		if err := s.enterPortPipe(p.inPort); err != nil {
			return err
		}
	}
	t := s.tna
	c := s.beginPass(p)
	c.gress = gressIngress
	now := s.nanos()
	in := t.tnaInput(tnaIgPrefix, p.data)
	flag := uint64(0)
	if p.tna.resubmitted {
		flag = 1
		copy(in[tnaIgPrefix-tnaPortMeta:tnaIgPrefix], p.tna.resubData[:])
	} else {
		copy(in[tnaIgPrefix-tnaPortMeta:tnaIgPrefix], t.portMeta[p.inPort])
	}
	t.igPrefix.put(in, "resubmit_flag", flag)
	t.igPrefix.put(in, "ingress_port", uint64(p.inPort))
	t.igPrefix.put(in, "ingress_mac_tstamp", now)
	c.in = in
	c.plen = len(p.data)
	t.req.reset()
	// Fields the traffic manager and the deparser act on only when the pass wrote them.
	p.s[t.tmUcast] = tnaUnset
	p.s[t.igDigestType], p.s[t.igResubType], p.s[t.igMirrorType] = tnaUnset, tnaUnset, tnaUnset

	r, err := s.runBlock(t.igParser)
	if err != nil {
		return err
	}
	s.applyDeposits()
	perr := uint64(0)
	if c.perr != 0 {
		perr = t.errBits[c.perr]
	} else if r == fExit {
		perr = tnaErrNoMatch // transition reject
	}
	p.s[t.igPrsrErr] = perr
	p.s[t.igPrsrTstamp] = now & (1<<48 - 1)
	if perr != 0 && (!t.parserErrRead || perr&tnaErrNoMatch != 0) {
		return nil // the ingress parser drops the packet
	}
	p.payload = payloadStart(c.cur, tnaIgPrefix, len(p.data))
	if _, err := s.runBlock(t.ingress); err != nil {
		return err
	}
	c.out, c.outBits = p.out[:0], 0
	if _, err := s.runBlock(t.igDeparser); err != nil {
		return err
	}
	out := append(c.out, p.data[p.payload:]...)
	p.out = out
	for _, d := range p.digests {
		s.res.Digests = append(s.res.Digests, d)
		if s.cfg.OnDigest != nil {
			s.cfg.OnDigest(d)
		}
	}
	p.digests = p.digests[:0]
	drop := p.s[t.igDropCtl]
	if t.req.mirror && drop&4 == 0 {
		// Ingress mirroring copies the packet as it was received.
		s.tnaMirror(t.req.mirrorSess, t.req.mirrorHdr, p.data, p.inPort)
	}
	if drop&1 != 0 {
		return nil
	}
	if t.req.resubmit {
		if p.tna.resubmitted {
			return fmt.Errorf("%w (%s)", ErrTNAResubmit, t.req.resubPos)
		}
		q := s.newPacket()
		q.data = append(q.data, p.data...)
		q.inPort = p.inPort
		q.tna = tnaPacket{resubmitted: true, resubData: t.req.resubData}
		s.ingressQ = append(s.ingressQ, q)
		return nil // resubmission replaces forwarding
	}
	bypass := p.s[t.tmBypass]&1 != 0
	if port := p.s[t.tmUcast]; port < tnaUnset {
		if err := s.tnaForward(out, int(port), 0, false, bypass); err != nil {
			return err
		}
	}
	for _, g := range []uint64{p.s[t.tmMcastA], p.s[t.tmMcastB]} {
		if g == 0 {
			continue
		}
		for i, rep := range s.replicas(int(g)) {
			if err := s.tnaForward(out, rep.Port, uint64(rep.Rid), i == 0, bypass); err != nil {
				return err
			}
		}
	}
	if p.s[t.tmCopyToCPU]&1 != 0 && s.cfg.CPUPort != 0 {
		return s.tnaForward(out, s.cfg.CPUPort, 0, false, bypass)
	}
	return nil
}

// tnaForward hands a copy of frame to egress for port, or sends it out when egress is
// bypassed.
func (s *Switch) tnaForward(frame []byte, port int, rid uint64, first, bypass bool) error {
	if bypass {
		return s.tnaEmit(port, frame)
	}
	q := s.newPacket()
	q.data = append(q.data, frame...)
	q.egressPort = port
	q.tna = tnaPacket{rid: rid, ridFirst: first}
	s.egressQ = append(s.egressQ, q)
	return nil
}

// tnaMirror sends hdr+frame to the destinations of a mirror session, through egress; an
// unconfigured session drops the copy.
func (s *Switch) tnaMirror(session uint32, hdr, frame []byte, inPort int) {
	sess, ok := s.sessions[int(session)]
	if !ok {
		return
	}
	mk := func(port int, rid uint64) {
		q := s.newPacket()
		q.data = append(append(q.data, hdr...), frame...)
		if sess.TruncateLen > 0 && sess.TruncateLen < len(q.data) {
			q.data = q.data[:sess.TruncateLen]
		}
		q.inPort, q.egressPort = inPort, port
		q.tna = tnaPacket{rid: rid}
		s.egressQ = append(s.egressQ, q)
	}
	if sess.HasPort {
		mk(sess.Port, 0)
	}
	if sess.McastGrp != 0 {
		for _, r := range s.replicas(sess.McastGrp) {
			mk(r.Port, uint64(r.Rid))
		}
	}
	for _, r := range sess.Replicas {
		mk(r.Port, uint64(r.Rid))
	}
}

// tnaEmit sends a frame out of port (the CPU port makes it a packet-in; a port in loopback
// mode recirculates it: it enters the ingress again, received on that port). A port outside
// the pipes (Config.Pipes > 1) is an error wrapping ErrNoPipe.
func (s *Switch) tnaEmit(port int, frame []byte) error {
	if s.pipes > 1 {
		if _, err := s.portPipe(port); err != nil {
			return err
		}
	}
	if s.tna.loopback[port] {
		q := s.newPacket()
		q.data = append(q.data, frame...)
		q.inPort = port
		q.tna = tnaPacket{}
		s.ingressQ = append(s.ingressQ, q)
		return nil
	}
	if s.cfg.CPUPort != 0 && port == s.cfg.CPUPort {
		s.res.PacketIn = append(s.res.PacketIn, frame)
		if s.cfg.OnPacketIn != nil {
			s.cfg.OnPacketIn(frame)
		}
		return nil
	}
	s.res.Out = append(s.res.Out, Output{Port: port, Data: frame})
	return nil
}

// tnaEgressPass runs the egress of the pipe of p.egressPort.
func (s *Switch) tnaEgressPass(p *packet) error {
	if s.pipes > 1 {
		if err := s.enterPortPipe(p.egressPort); err != nil {
			return err
		}
	}
	t := s.tna
	c := s.beginPass(p)
	c.gress = gressEgress
	now := s.nanos()
	pre := t.egPrefix.bytes
	in := t.tnaInput(pre, p.data)
	t.egPrefix.put(in, "egress_port", uint64(p.egressPort))
	t.egPrefix.put(in, "egress_rid", p.tna.rid)
	if p.tna.ridFirst {
		t.egPrefix.put(in, "egress_rid_first", 1)
	}
	t.egPrefix.put(in, "pkt_length", uint64(len(p.data)))
	t.egPrefix.put(in, "enq_tstamp", now)
	c.in = in
	c.plen = len(p.data)
	t.req.reset()
	p.s[t.egMirrorType] = tnaUnset

	r, err := s.runBlock(t.egParser)
	if err != nil {
		return err
	}
	s.applyDeposits()
	perr := uint64(0)
	if c.perr != 0 {
		perr = t.errBits[c.perr]
	} else if r == fExit {
		perr = tnaErrNoMatch
	}
	p.s[t.egPrsrErr] = perr // the egress parser never drops
	p.s[t.egPrsrTstamp] = now & (1<<48 - 1)
	p.payload = payloadStart(c.cur, pre, len(p.data))
	if _, err := s.runBlock(t.egress); err != nil {
		return err
	}
	c.out, c.outBits = p.out[:0], 0
	if _, err := s.runBlock(t.egDeparser); err != nil {
		return err
	}
	out := append(c.out, p.data[p.payload:]...)
	p.out = out
	drop := p.s[t.egDropCtl]
	if t.req.mirror && drop&4 == 0 {
		s.tnaMirror(t.req.mirrorSess, t.req.mirrorHdr, out, p.inPort) // egress to egress
	}
	if drop&1 != 0 {
		return nil
	}
	return s.tnaEmit(p.egressPort, out)
}

// posString is a source position for error messages.
func posString(p front.Pos) string { return strings.TrimSpace(p.String()) }
