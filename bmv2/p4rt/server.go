package p4rt

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	p4infotext "github.com/netlock-go/netlock/internal/p4info"
)

// APIVersion is the P4Runtime API version Capabilities reports.
const APIVersion = "1.4.0"

// Config configures a Server.
type Config struct {
	// DeviceID is the P4Runtime device id the server answers for; requests
	// for other ids fail with NOT_FOUND.
	DeviceID uint64
	// Device stores and applies the entities. Required.
	Device Device
	// Logf logs arbitration changes and stream errors. Nil discards.
	Logf func(format string, args ...any)
	// MaxNesting bounds the nesting of a pushed program's expressions, statements, types and
	// macros (front.Options.MaxNesting); 0 is front.DefaultMaxNesting. A deeper program is
	// refused with INVALID_ARGUMENT before anything walks its tree.
	MaxNesting int
}

// Server is a P4Runtime server for one device. Register it on a grpc.Server
// with p4v1.RegisterP4RuntimeServer.
type Server struct {
	p4v1.UnimplementedP4RuntimeServer
	cfg Config
	dev Device

	// writeMu serializes everything that changes the device: writes and
	// pipeline changes. Lock order: writeMu before mu.
	writeMu sync.Mutex

	mu     sync.Mutex
	pipe   *Pipeline // installed pipeline, nil before the first commit
	sch    *schema   // schema of pipe
	saved  *Pipeline // VERIFY_AND_SAVE'd pipeline waiting for COMMIT
	roles  map[string]*roleState
	dig    digestState
	closed bool

	streams atomic.Int64 // open StreamChannels
}

// NewServer returns a server for cfg.Device and registers itself as the
// device's Listener.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Device == nil {
		return nil, errors.New("p4rt: Config.Device is nil")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	s := &Server{cfg: cfg, dev: cfg.Device, roles: map[string]*roleState{}}
	s.dig.init()
	cfg.Device.SetListener(s)
	return s, nil
}

// Close stops digest timers and detaches the server from its device. Streams
// end when the grpc.Server stops.
func (s *Server) Close() {
	s.dev.SetListener(nil)
	s.mu.Lock()
	s.closed = true
	s.dig.stopLocked()
	s.mu.Unlock()
}

// Pipeline returns the installed pipeline (nil if none).
func (s *Server) Pipeline() *Pipeline {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pipe
}

// Capabilities implements p4v1.P4RuntimeServer.
func (s *Server) Capabilities(context.Context, *p4v1.CapabilitiesRequest) (*p4v1.CapabilitiesResponse, error) {
	return &p4v1.CapabilitiesResponse{P4RuntimeApiVersion: APIVersion}, nil
}

func (s *Server) checkDevice(id uint64) error {
	if id != s.cfg.DeviceID {
		return status.Errorf(codes.NotFound, "unknown device id %d (this is device %d)", id, s.cfg.DeviceID)
	}
	return nil
}

// toStatus maps a Device error to a gRPC status error.
func toStatus(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrAlreadyExists):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, ErrResourceExhausted):
		return status.Error(codes.ResourceExhausted, err.Error())
	}
	if st, ok := status.FromError(err); ok {
		return st.Err()
	}
	return status.Error(codes.Internal, err.Error())
}

// SetForwardingPipelineConfig implements p4v1.P4RuntimeServer.
func (s *Server) SetForwardingPipelineConfig(ctx context.Context, req *p4v1.SetForwardingPipelineConfigRequest) (*p4v1.SetForwardingPipelineConfigResponse, error) {
	if err := s.checkDevice(req.GetDeviceId()); err != nil {
		return nil, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.checkPrimary(ctx, req.GetRole(), req.GetElectionId()); err != nil {
		return nil, err
	}
	act := req.GetAction()
	var p *Pipeline
	switch act {
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE,
		p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT:
		var err error
		if p, err = VerifyConfigNesting(req.GetConfig(), s.cfg.MaxNesting); err != nil {
			return nil, err
		}
	case p4v1.SetForwardingPipelineConfigRequest_COMMIT:
		s.mu.Lock()
		p = s.saved
		s.mu.Unlock()
		if p == nil {
			return nil, status.Error(codes.FailedPrecondition, "COMMIT without a saved config (use VERIFY_AND_SAVE first)")
		}
	default:
		return nil, status.Errorf(codes.InvalidArgument, "unsupported action %s", act)
	}
	switch act {
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY:
		return &p4v1.SetForwardingPipelineConfigResponse{}, nil
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE:
		s.mu.Lock()
		s.saved = p
		s.mu.Unlock()
		return &p4v1.SetForwardingPipelineConfigResponse{}, nil
	case p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT:
		return &p4v1.SetForwardingPipelineConfigResponse{}, s.reconcileLocked(p)
	}
	if err := s.installLocked(p); err != nil {
		return nil, err
	}
	return &p4v1.SetForwardingPipelineConfigResponse{}, nil
}

// installLocked installs p on the device. Precondition: s.writeMu is held.
func (s *Server) installLocked(p *Pipeline) error {
	if err := s.dev.InstallPipeline(p); err != nil {
		return toStatus(err)
	}
	s.mu.Lock()
	s.pipe, s.sch, s.saved = p, newSchema(p.P4Info), nil
	s.dig.resetLocked()
	s.mu.Unlock()
	return nil
}

// reconcileLocked installs p and carries over the table entries, default
// actions and digest configs that are still valid under p's P4Info (same ids
// and shapes). Indexed counters, meters and registers start afresh; the PRE
// is kept by the device. Precondition: s.writeMu is held.
func (s *Server) reconcileLocked(p *Pipeline) error {
	s.mu.Lock()
	old, oldSch := s.pipe, s.sch
	digs := s.dig.configsLocked()
	s.mu.Unlock()
	var entries []*p4v1.TableEntry
	var defaults []*p4v1.TableEntry
	if old != nil {
		for _, id := range sortedKeys(oldSch.tables) {
			_ = s.dev.TableEntries(id, func(e *p4v1.TableEntry) bool {
				if !oldSch.tables[id].t.GetIsConstTable() {
					entries = append(entries, proto.Clone(e).(*p4v1.TableEntry))
				}
				return true
			})
			if a, err := s.dev.DefaultAction(id); err == nil && a != nil {
				defaults = append(defaults, &p4v1.TableEntry{TableId: id, IsDefaultAction: true,
					Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}})
			}
		}
	}
	if err := s.installLocked(p); err != nil {
		return err
	}
	sch := newSchema(p.P4Info)
	kept, dropped := 0, 0
	for _, e := range append(entries, defaults...) {
		op := p4v1.Update_INSERT
		if e.GetIsDefaultAction() {
			op = p4v1.Update_MODIFY
		}
		if ti := sch.tables[e.GetTableId()]; ti != nil {
			// Keep the entry where the new program dropped its direct resources.
			if ti.directCounter == 0 {
				e.CounterData = nil
			}
			if ti.directMeter == 0 {
				e.MeterConfig = nil
			}
		}
		if err := s.applyTable(sch, op, e); err != nil {
			dropped++
			continue
		}
		kept++
	}
	s.mu.Lock()
	for id, c := range digs {
		if _, ok := sch.digests[id]; ok {
			s.dig.cfg[id] = c
		}
	}
	s.mu.Unlock()
	s.cfg.Logf("p4rt: reconcile kept %d table entries and default actions, dropped %d", kept, dropped)
	return nil
}

func sortedKeys[V any](m map[uint32]V) []uint32 {
	ks := make([]uint32, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// VerifyConfig checks a forwarding pipeline config: the device config must be
// a P4 source bundle the front end accepts, and the P4Info must equal the one
// the front end generates for it. Errors are INVALID_ARGUMENT.
func VerifyConfig(cfg *p4v1.ForwardingPipelineConfig) (*Pipeline, error) {
	return VerifyConfigNesting(cfg, 0)
}

// VerifyConfigNesting is VerifyConfig with the front end's nesting bound (Config.MaxNesting).
func VerifyConfigNesting(cfg *p4v1.ForwardingPipelineConfig, maxNesting int) (*Pipeline, error) {
	if cfg == nil {
		return nil, status.Error(codes.InvalidArgument, "no config")
	}
	if cfg.GetP4Info() == nil {
		return nil, status.Error(codes.InvalidArgument, "config has no P4Info")
	}
	b, err := ParseBundle(cfg.GetP4DeviceConfig())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "device config: %v", err)
	}
	prog, err := b.CompileNesting(maxNesting)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "device config does not compile: %v", err)
	}
	info, err := prog.P4Info()
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "device config: P4Info: %v", err)
	}
	// A client built on messages older than P4Runtime 1.4.0 sends the P4Info without the fields
	// they lack (initial_default_action, ...): accepted too.
	if !p4infotext.Equal(cfg.GetP4Info(), info) {
		return nil, status.Errorf(codes.InvalidArgument, "the P4Info does not match the one generated from the device config: %s", p4infoDiff(cfg.GetP4Info(), info))
	}
	return &Pipeline{P4Info: info, Bundle: b, Program: prog, Cookie: cfg.GetCookie().GetCookie()}, nil
}

// p4infoDiff names the first top-level part (and entity) where got and want differ.
func p4infoDiff(got, want *p4configv1.P4Info) string {
	gm, wm := got.ProtoReflect(), want.ProtoReflect()
	fields := gm.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		gv, wv := gm.Get(fd), wm.Get(fd)
		if fd.IsList() {
			gl, wl := gv.List(), wv.List()
			for j := 0; j < max(gl.Len(), wl.Len()); j++ {
				if j >= gl.Len() || j >= wl.Len() {
					return fmt.Sprintf("%s: %d entries, expected %d", fd.Name(), gl.Len(), wl.Len())
				}
				if !proto.Equal(gl.Get(j).Message().Interface(), wl.Get(j).Message().Interface()) {
					return fmt.Sprintf("%s[%d] (%s)", fd.Name(), j, entityName(wl.Get(j).Message()))
				}
			}
			continue
		}
		if fd.IsMap() {
			if !proto.Equal(got, want) && gv.Map().Len() != wv.Map().Len() {
				return string(fd.Name())
			}
			continue
		}
		if fd.Message() != nil {
			if gm.Has(fd) != wm.Has(fd) || (gm.Has(fd) && !proto.Equal(gv.Message().Interface(), wv.Message().Interface())) {
				return string(fd.Name())
			}
			continue
		}
		if gv.Interface() != wv.Interface() {
			return string(fd.Name())
		}
	}
	return "type_info"
}

func entityName(m protoreflect.Message) string {
	pre := m.Descriptor().Fields().ByName("preamble")
	if pre == nil {
		return "?"
	}
	p, ok := m.Get(pre).Message().Interface().(*p4configv1.Preamble)
	if !ok {
		return "?"
	}
	return p.GetName()
}

// GetForwardingPipelineConfig implements p4v1.P4RuntimeServer. With no
// pipeline installed it returns an empty config.
func (s *Server) GetForwardingPipelineConfig(ctx context.Context, req *p4v1.GetForwardingPipelineConfigRequest) (*p4v1.GetForwardingPipelineConfigResponse, error) {
	if err := s.checkDevice(req.GetDeviceId()); err != nil {
		return nil, err
	}
	s.mu.Lock()
	p := s.pipe
	s.mu.Unlock()
	cfg := &p4v1.ForwardingPipelineConfig{}
	if p == nil {
		return &p4v1.GetForwardingPipelineConfigResponse{Config: cfg}, nil
	}
	cfg.Cookie = &p4v1.ForwardingPipelineConfig_Cookie{Cookie: p.Cookie}
	switch req.GetResponseType() {
	case p4v1.GetForwardingPipelineConfigRequest_ALL:
		cfg.P4Info, cfg.P4DeviceConfig = p.P4Info, p.Bundle.Encode()
	case p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY:
	case p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE:
		cfg.P4Info = p.P4Info
	case p4v1.GetForwardingPipelineConfigRequest_DEVICE_CONFIG_AND_COOKIE:
		cfg.P4DeviceConfig = p.Bundle.Encode()
	default:
		return nil, status.Errorf(codes.InvalidArgument, "unknown response type %d", req.GetResponseType())
	}
	return &p4v1.GetForwardingPipelineConfigResponse{Config: cfg}, nil
}

// Write implements p4v1.P4RuntimeServer. Updates are applied in order. With
// CONTINUE_ON_ERROR, if any fails the RPC fails with UNKNOWN and one
// p4.v1.Error detail per update (OK for those that succeeded). With
// ROLLBACK_ON_ERROR the first failure stops the batch and the updates already
// applied are undone, last first: the failed update carries its error, the
// updates not attempted and those undone are ABORTED. An applied update that
// could not be undone (the device refused the undo, or its previous state could
// not be read) carries INTERNAL with the reason and stays applied; the RPC's
// message then says the rollback is incomplete, and it is logged.
// DATAPLANE_ATOMIC is UNIMPLEMENTED (the data plane may see intermediate
// states).
func (s *Server) Write(ctx context.Context, req *p4v1.WriteRequest) (*p4v1.WriteResponse, error) {
	if err := s.checkDevice(req.GetDeviceId()); err != nil {
		return nil, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.checkPrimary(ctx, req.GetRole(), req.GetElectionId()); err != nil {
		return nil, err
	}
	s.mu.Lock()
	sch := s.sch
	s.mu.Unlock()
	if sch == nil {
		return nil, status.Error(codes.FailedPrecondition, "no forwarding pipeline is installed")
	}
	rollback := false
	switch req.GetAtomicity() {
	case p4v1.WriteRequest_CONTINUE_ON_ERROR:
	case p4v1.WriteRequest_ROLLBACK_ON_ERROR:
		rollback = true
	default:
		return nil, status.Errorf(codes.Unimplemented, "atomicity %s is not supported (CONTINUE_ON_ERROR and ROLLBACK_ON_ERROR are)", req.GetAtomicity())
	}
	updates := req.GetUpdates()
	errs := make([]error, len(updates))
	type undoStep struct {
		update int
		undo   func() error // nil: the update cannot be undone
	}
	var undo []undoStep
	failed := false
	for i, u := range updates {
		if rollback && failed {
			errs[i] = status.Error(codes.Aborted, "not applied: an earlier update of the batch failed")
			continue
		}
		var un func() error
		if rollback {
			un = s.undoFor(sch, u)
		}
		errs[i] = s.applyUpdate(sch, u)
		failed = failed || errs[i] != nil
		if errs[i] == nil && rollback {
			undo = append(undo, undoStep{i, un})
		}
	}
	if !failed {
		return &p4v1.WriteResponse{}, nil
	}
	undoFailed := 0
	if rollback {
		for k := len(undo) - 1; k >= 0; k-- {
			st := undo[k]
			err := errors.New("no undo was captured for it")
			if st.undo != nil {
				err = st.undo()
			}
			if err != nil {
				undoFailed++
				errs[st.update] = status.Errorf(codes.Internal,
					"applied, and the rollback could not undo it, so the device keeps it: %v", err)
				s.cfg.Logf("p4rt: Write ROLLBACK_ON_ERROR: update %d of %d stays applied, its undo failed: %v",
					st.update, len(updates), err)
			}
		}
		for i, err := range errs {
			if err == nil {
				errs[i] = status.Error(codes.Aborted, "rolled back: another update of the batch failed")
			}
		}
	}
	return nil, batchError(errs, undoFailed)
}

// batchError builds the P4Runtime batch error: UNKNOWN with one p4.v1.Error
// per update. undoFailed counts the updates a ROLLBACK_ON_ERROR batch could
// not undo; the message says so when there are any.
func batchError(errs []error, undoFailed int) error {
	st := &spb.Status{Code: int32(codes.Unknown), Message: "write failed"}
	n := 0
	for _, err := range errs {
		e := &p4v1.Error{CanonicalCode: int32(codes.OK)}
		if err != nil {
			n++
			s := status.Convert(err)
			e.CanonicalCode, e.Message = int32(s.Code()), s.Message()
		}
		a, _ := anypb.New(e)
		st.Details = append(st.Details, a)
	}
	st.Message = fmt.Sprintf("%d of %d updates failed", n, len(errs))
	if n == 1 && len(errs) == 1 {
		st.Message += ": " + status.Convert(errs[0]).Message()
	}
	if undoFailed > 0 {
		st.Message += fmt.Sprintf("; rollback incomplete: %d applied updates could not be undone (INTERNAL in their details)", undoFailed)
	}
	return status.FromProto(st).Err()
}

// UpdateErrors extracts the per-update errors of a failed Write (nil entries
// for updates that succeeded). It returns nil if err is not a batch error.
func UpdateErrors(err error) []*status.Status {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unknown {
		return nil
	}
	var out []*status.Status
	for _, d := range st.Proto().GetDetails() {
		var e p4v1.Error
		if d.UnmarshalTo(&e) != nil {
			return nil
		}
		if codes.Code(e.GetCanonicalCode()) == codes.OK {
			out = append(out, nil)
			continue
		}
		out = append(out, status.New(codes.Code(e.GetCanonicalCode()), e.GetMessage()))
	}
	return out
}

func (s *Server) applyUpdate(sch *schema, u *p4v1.Update) (err error) {
	op := u.GetType()
	if op == p4v1.Update_UNSPECIFIED || p4v1.Update_Type_name[int32(op)] == "" {
		return invalid("update type %s", op)
	}
	modifyOnly := func(what string) error {
		if op != p4v1.Update_MODIFY {
			return invalid("%s entries can only be modified, not %s", what, op)
		}
		return nil
	}
	switch ent := u.GetEntity().GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		return s.applyTable(sch, op, ent.TableEntry)
	case *p4v1.Entity_CounterEntry:
		if err := modifyOnly("counter"); err != nil {
			return err
		}
		c := ent.CounterEntry
		ci, ok := sch.counters[c.GetCounterId()]
		if !ok {
			return status.Errorf(codes.NotFound, "unknown counter id %d", c.GetCounterId())
		}
		if err := checkIndex(c.GetIndex(), ci.GetSize(), ci.GetPreamble().GetName()); err != nil {
			return err
		}
		if err := checkCounterData(c.GetData()); err != nil {
			return err
		}
		return forIndex(c.GetIndex(), ci.GetSize(), func(i int64) error {
			return toStatus(s.dev.SetCounter(c.GetCounterId(), i, cloneOr(c.GetData(), &p4v1.CounterData{})))
		})
	case *p4v1.Entity_DirectCounterEntry:
		if err := modifyOnly("direct counter"); err != nil {
			return err
		}
		key, err := sch.directKey(ent.DirectCounterEntry.GetTableEntry(), false)
		if err != nil {
			return err
		}
		if err := checkCounterData(ent.DirectCounterEntry.GetData()); err != nil {
			return err
		}
		return toStatus(s.dev.SetDirectCounter(key, cloneOr(ent.DirectCounterEntry.GetData(), &p4v1.CounterData{})))
	case *p4v1.Entity_MeterEntry:
		if err := modifyOnly("meter"); err != nil {
			return err
		}
		m := ent.MeterEntry
		mi, ok := sch.meters[m.GetMeterId()]
		if !ok {
			return status.Errorf(codes.NotFound, "unknown meter id %d", m.GetMeterId())
		}
		if err := checkIndex(m.GetIndex(), mi.GetSize(), mi.GetPreamble().GetName()); err != nil {
			return err
		}
		if err := checkMeterConfig(m.GetConfig()); err != nil {
			return err
		}
		if m.GetCounterData() != nil {
			return status.Error(codes.Unimplemented, "meter counter data is not supported")
		}
		return forIndex(m.GetIndex(), mi.GetSize(), func(i int64) error {
			return toStatus(s.dev.SetMeter(m.GetMeterId(), i, cloneOr(m.GetConfig(), nil)))
		})
	case *p4v1.Entity_DirectMeterEntry:
		if err := modifyOnly("direct meter"); err != nil {
			return err
		}
		key, err := sch.directKey(ent.DirectMeterEntry.GetTableEntry(), true)
		if err != nil {
			return err
		}
		if err := checkMeterConfig(ent.DirectMeterEntry.GetConfig()); err != nil {
			return err
		}
		if ent.DirectMeterEntry.GetCounterData() != nil {
			return status.Error(codes.Unimplemented, "meter counter data is not supported")
		}
		return toStatus(s.dev.SetDirectMeter(key, cloneOr(ent.DirectMeterEntry.GetConfig(), nil)))
	case *p4v1.Entity_RegisterEntry:
		if err := modifyOnly("register"); err != nil {
			return err
		}
		r := ent.RegisterEntry
		ri, ok := sch.registers[r.GetRegisterId()]
		if !ok {
			return status.Errorf(codes.NotFound, "unknown register id %d", r.GetRegisterId())
		}
		name := ri.r.GetPreamble().GetName()
		if err := checkIndex(r.GetIndex(), int64(ri.r.GetSize()), name); err != nil {
			return err
		}
		var v []byte
		if ri.fields != nil {
			var err error
			if v, err = packStruct(r.GetData(), ri.fields, name); err != nil {
				return err
			}
		} else {
			bs, ok := r.GetData().GetData().(*p4v1.P4Data_Bitstring)
			if !ok || ri.width == 0 {
				return invalid("register %s: data must be a bitstring", name)
			}
			var err error
			if v, err = Canonical(bs.Bitstring, ri.width); err != nil {
				return invalid("register %s: %s", name, status.Convert(err).Message())
			}
		}
		return forIndex(r.GetIndex(), int64(ri.r.GetSize()), func(i int64) error {
			return toStatus(s.dev.SetRegister(r.GetRegisterId(), i, &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: v}}))
		})
	case *p4v1.Entity_PacketReplicationEngineEntry:
		switch pe := ent.PacketReplicationEngineEntry.GetType().(type) {
		case *p4v1.PacketReplicationEngineEntry_MulticastGroupEntry:
			g := pe.MulticastGroupEntry
			if g.GetMulticastGroupId() == 0 {
				return invalid("multicast group id 0 is reserved")
			}
			if err := checkReplicas(g.GetReplicas(), fmt.Sprintf("multicast group %d", g.GetMulticastGroupId())); err != nil {
				return err
			}
			return toStatus(s.dev.WriteMulticastGroup(op, proto.Clone(g).(*p4v1.MulticastGroupEntry)))
		case *p4v1.PacketReplicationEngineEntry_CloneSessionEntry:
			c := pe.CloneSessionEntry
			if c.GetSessionId() == 0 {
				return invalid("clone session id 0 is reserved")
			}
			if c.GetPacketLengthBytes() < 0 {
				return invalid("clone session %d: negative packet_length_bytes", c.GetSessionId())
			}
			if err := checkReplicas(c.GetReplicas(), fmt.Sprintf("clone session %d", c.GetSessionId())); err != nil {
				return err
			}
			return toStatus(s.dev.WriteCloneSession(op, proto.Clone(c).(*p4v1.CloneSessionEntry)))
		default:
			return invalid("empty packet replication engine entry")
		}
	case *p4v1.Entity_DigestEntry:
		return s.writeDigest(sch, op, ent.DigestEntry)
	case *p4v1.Entity_ActionProfileMember, *p4v1.Entity_ActionProfileGroup:
		return status.Error(codes.Unimplemented, "action profiles are not supported")
	case *p4v1.Entity_ValueSetEntry:
		return status.Error(codes.Unimplemented, "value sets are not supported")
	case *p4v1.Entity_ExternEntry:
		return status.Error(codes.Unimplemented, "extern entries are not supported")
	case nil:
		return invalid("update without an entity")
	default:
		return status.Errorf(codes.Unimplemented, "entity %T is not supported", ent)
	}
}

func (s *Server) applyTable(sch *schema, op p4v1.Update_Type, e *p4v1.TableEntry) error {
	ce, _, err := sch.checkEntry(e, op)
	if err != nil {
		return err
	}
	if ce.GetIsDefaultAction() {
		var a *p4v1.Action
		if ce.GetAction() != nil {
			a = ce.GetAction().GetAction()
		}
		return toStatus(s.dev.SetDefaultAction(ce.GetTableId(), a))
	}
	switch op {
	case p4v1.Update_INSERT:
		return toStatus(s.dev.InsertTableEntry(ce))
	case p4v1.Update_MODIFY:
		return toStatus(s.dev.ModifyTableEntry(ce))
	default:
		return toStatus(s.dev.DeleteTableEntry(ce))
	}
}

// directKey validates the table entry naming a direct counter or meter cell
// and returns its canonical key.
func (sch *schema) directKey(e *p4v1.TableEntry, meter bool) (*p4v1.TableEntry, error) {
	if e == nil {
		return nil, invalid("direct resource entry without a table entry")
	}
	ce, ti, err := sch.checkEntry(e, p4v1.Update_DELETE)
	if err != nil {
		return nil, err
	}
	if (meter && ti.directMeter == 0) || (!meter && ti.directCounter == 0) {
		what := "counter"
		if meter {
			what = "meter"
		}
		return nil, invalid("table %s has no direct %s", ti.t.GetPreamble().GetName(), what)
	}
	return ce, nil
}

// forIndex calls f for the given index, or for every index below size when ix is nil.
func forIndex(ix *p4v1.Index, size int64, f func(int64) error) error {
	if ix != nil {
		return f(ix.GetIndex())
	}
	for i := int64(0); i < size; i++ {
		if err := f(i); err != nil {
			return err
		}
	}
	return nil
}

func cloneOr[T proto.Message](m T, def T) T {
	if m.ProtoReflect().IsValid() {
		return proto.Clone(m).(T)
	}
	return def
}
