package p4rt

import (
	"errors"
	"sort"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// readBatch is how many entities one ReadResponse carries at most.
const readBatch = 512

// Read implements p4v1.P4RuntimeServer. Any client may read; action parameters
// annotated @secret read as zero to anyone but the primary client of the read's
// role (auth.go). Zero ids and
// unset indices are wildcards; a table entry with a match reads that entry
// only (nothing if it does not exist); is_default_action reads default
// actions. Direct counter data and meter configs are returned with table
// entries only when the request's entry sets counter_data / meter_config.
func (s *Server) Read(req *p4v1.ReadRequest, srv p4v1.P4Runtime_ReadServer) error {
	if err := s.checkDevice(req.GetDeviceId()); err != nil {
		return err
	}
	s.mu.Lock()
	sch := s.sch
	s.mu.Unlock()
	if sch == nil {
		return status.Error(codes.FailedPrecondition, "no forwarding pipeline is installed")
	}
	r := &reader{s: s, sch: sch, srv: srv, redact: !s.isPrimary(srv.Context(), req.GetRole())}
	for _, e := range req.GetEntities() {
		if err := r.entity(e); err != nil {
			return err
		}
	}
	return r.flush(true)
}

type reader struct {
	s      *Server
	sch    *schema
	redact bool // zero the @secret action parameters
	srv    p4v1.P4Runtime_ReadServer
	batch  []*p4v1.Entity
	sent   bool
}

func (r *reader) add(e *p4v1.Entity) error {
	r.batch = append(r.batch, e)
	if len(r.batch) >= readBatch {
		return r.flush(false)
	}
	return nil
}

func (r *reader) flush(final bool) error {
	if len(r.batch) == 0 && (!final || r.sent) {
		return nil
	}
	if r.srv == nil { // entityNoSend: collect only
		r.batch, r.sent = r.batch[:0], true
		return nil
	}
	err := r.srv.Send(&p4v1.ReadResponse{Entities: r.batch})
	r.batch, r.sent = nil, true
	return err
}

// entityNoSend reads e without a stream (the fuzzer uses it).
func (r *reader) entityNoSend(e *p4v1.Entity) error {
	r.srv = nil
	return r.entity(e)
}

func devErr(err error) error {
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return toStatus(err)
}

func (r *reader) entity(e *p4v1.Entity) error {
	sch, dev := r.sch, r.s.dev
	switch ent := e.GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		return r.tables(ent.TableEntry)
	case *p4v1.Entity_CounterEntry:
		c := ent.CounterEntry
		ids := []uint32{c.GetCounterId()}
		if c.GetCounterId() == 0 {
			ids = sortedKeys(sch.counters)
		} else if _, ok := sch.counters[c.GetCounterId()]; !ok {
			return status.Errorf(codes.NotFound, "unknown counter id %d", c.GetCounterId())
		}
		for _, id := range ids {
			ci := sch.counters[id]
			if err := checkIndex(c.GetIndex(), ci.GetSize(), ci.GetPreamble().GetName()); err != nil {
				return err
			}
			err := forIndex(c.GetIndex(), ci.GetSize(), func(i int64) error {
				d, err := dev.Counter(id, i)
				if err != nil {
					return toStatus(err)
				}
				return r.add(&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
					CounterId: id, Index: &p4v1.Index{Index: i}, Data: cloneOr(d, &p4v1.CounterData{})}}})
			})
			if err != nil {
				return err
			}
		}
		return nil
	case *p4v1.Entity_MeterEntry:
		m := ent.MeterEntry
		ids := []uint32{m.GetMeterId()}
		if m.GetMeterId() == 0 {
			ids = sortedKeys(sch.meters)
		} else if _, ok := sch.meters[m.GetMeterId()]; !ok {
			return status.Errorf(codes.NotFound, "unknown meter id %d", m.GetMeterId())
		}
		for _, id := range ids {
			mi := sch.meters[id]
			if err := checkIndex(m.GetIndex(), mi.GetSize(), mi.GetPreamble().GetName()); err != nil {
				return err
			}
			err := forIndex(m.GetIndex(), mi.GetSize(), func(i int64) error {
				c, err := dev.Meter(id, i)
				if err != nil {
					return toStatus(err)
				}
				return r.add(&p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: &p4v1.MeterEntry{
					MeterId: id, Index: &p4v1.Index{Index: i}, Config: cloneOr(c, nil)}}})
			})
			if err != nil {
				return err
			}
		}
		return nil
	case *p4v1.Entity_RegisterEntry:
		rg := ent.RegisterEntry
		ids := []uint32{rg.GetRegisterId()}
		if rg.GetRegisterId() == 0 {
			ids = sortedKeys(sch.registers)
		} else if _, ok := sch.registers[rg.GetRegisterId()]; !ok {
			return status.Errorf(codes.NotFound, "unknown register id %d", rg.GetRegisterId())
		}
		for _, id := range ids {
			ri := sch.registers[id]
			size := int64(ri.r.GetSize())
			if err := checkIndex(rg.GetIndex(), size, ri.r.GetPreamble().GetName()); err != nil {
				return err
			}
			err := forIndex(rg.GetIndex(), size, func(i int64) error {
				v, err := dev.Register(id, i)
				if err != nil {
					return toStatus(err)
				}
				if bs := v.GetBitstring(); ri.fields != nil && bs != nil {
					v = splitStruct(bs, ri.fields)
				}
				return r.add(&p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
					RegisterId: id, Index: &p4v1.Index{Index: i}, Data: cloneOr(v, nil)}}})
			})
			if err != nil {
				return err
			}
		}
		return nil
	case *p4v1.Entity_DirectCounterEntry:
		return r.direct(ent.DirectCounterEntry.GetTableEntry(), false)
	case *p4v1.Entity_DirectMeterEntry:
		return r.direct(ent.DirectMeterEntry.GetTableEntry(), true)
	case *p4v1.Entity_PacketReplicationEngineEntry:
		switch pe := ent.PacketReplicationEngineEntry.GetType().(type) {
		case *p4v1.PacketReplicationEngineEntry_MulticastGroupEntry:
			return readPRE(r, dev.MulticastGroups, pe.MulticastGroupEntry.GetMulticastGroupId(),
				(*p4v1.MulticastGroupEntry).GetMulticastGroupId,
				func(g *p4v1.MulticastGroupEntry) *p4v1.PacketReplicationEngineEntry {
					return &p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: g}}
				})
		case *p4v1.PacketReplicationEngineEntry_CloneSessionEntry:
			return readPRE(r, dev.CloneSessions, pe.CloneSessionEntry.GetSessionId(),
				(*p4v1.CloneSessionEntry).GetSessionId,
				func(c *p4v1.CloneSessionEntry) *p4v1.PacketReplicationEngineEntry {
					return &p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: c}}
				})
		default:
			return status.Error(codes.InvalidArgument, "empty packet replication engine entry")
		}
	case *p4v1.Entity_DigestEntry:
		want := ent.DigestEntry.GetDigestId()
		if want != 0 {
			if _, ok := sch.digests[want]; !ok {
				return status.Errorf(codes.NotFound, "unknown digest id %d", want)
			}
		}
		r.s.mu.Lock()
		cfgs := r.s.dig.configsLocked()
		r.s.mu.Unlock()
		for _, id := range sortedKeys(cfgs) {
			if want == 0 || id == want {
				if err := r.add(&p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{
					DigestId: id, Config: proto.Clone(cfgs[id]).(*p4v1.DigestEntry_Config)}}}); err != nil {
					return err
				}
			}
		}
		return nil
	case *p4v1.Entity_ActionProfileMember, *p4v1.Entity_ActionProfileGroup:
		return status.Error(codes.Unimplemented, "action profiles are not supported")
	case *p4v1.Entity_ValueSetEntry:
		return status.Error(codes.Unimplemented, "value sets are not supported")
	case *p4v1.Entity_ExternEntry:
		return status.Error(codes.Unimplemented, "extern entries are not supported")
	default:
		return status.Error(codes.InvalidArgument, "read of an empty entity")
	}
}

// hasKey reports whether a read request's table entry names one entry.
func hasKey(e *p4v1.TableEntry) bool { return len(e.GetMatch()) > 0 || e.GetPriority() != 0 }

func (r *reader) tables(q *p4v1.TableEntry) error {
	sch, dev := r.sch, r.s.dev
	ids := []uint32{q.GetTableId()}
	if q.GetTableId() == 0 {
		if hasKey(q) {
			return status.Error(codes.InvalidArgument, "a match needs a table id")
		}
		ids = sortedKeys(sch.tables)
	} else if _, ok := sch.tables[q.GetTableId()]; !ok {
		return status.Errorf(codes.NotFound, "unknown table id %d", q.GetTableId())
	}
	wantCounter, wantMeter := q.GetCounterData() != nil, q.GetMeterConfig() != nil
	shape := func(e *p4v1.TableEntry) *p4v1.TableEntry {
		c := proto.Clone(e).(*p4v1.TableEntry)
		if r.redact {
			sch.redactEntry(c)
		}
		if !wantCounter {
			c.CounterData = nil
		}
		if !wantMeter {
			c.MeterConfig = nil
		}
		return c
	}
	emit := func(e *p4v1.TableEntry) error {
		return r.add(&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: e}})
	}
	for _, id := range ids {
		if q.GetIsDefaultAction() {
			a, err := dev.DefaultAction(id)
			if err != nil {
				return toStatus(err)
			}
			e := &p4v1.TableEntry{TableId: id, IsDefaultAction: true}
			if a != nil {
				a = proto.Clone(a).(*p4v1.Action)
				if r.redact {
					a = sch.redactAction(a)
				}
				e.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
			}
			if err := emit(e); err != nil {
				return err
			}
			continue
		}
		if hasKey(q) {
			key, _, err := sch.checkEntry(q, p4v1.Update_DELETE)
			if err != nil {
				return err
			}
			e, err := dev.TableEntry(key)
			if err != nil {
				return devErr(err)
			}
			if err := emit(shape(e)); err != nil {
				return err
			}
			continue
		}
		var out []*p4v1.TableEntry
		if err := dev.TableEntries(id, func(e *p4v1.TableEntry) bool {
			out = append(out, shape(e))
			return true
		}); err != nil {
			return toStatus(err)
		}
		sort.Slice(out, func(i, j int) bool { return EntryKey(out[i]) < EntryKey(out[j]) })
		for _, e := range out {
			if err := emit(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// direct reads direct counters (meter false) or meters of the entries q names.
func (r *reader) direct(q *p4v1.TableEntry, meter bool) error {
	sch, dev := r.sch, r.s.dev
	var ids []uint32
	switch {
	case q == nil || q.GetTableId() == 0:
		for _, id := range sortedKeys(sch.tables) {
			ti := sch.tables[id]
			if (meter && ti.directMeter != 0) || (!meter && ti.directCounter != 0) {
				ids = append(ids, id)
			}
		}
	default:
		ti, ok := sch.tables[q.GetTableId()]
		if !ok {
			return status.Errorf(codes.NotFound, "unknown table id %d", q.GetTableId())
		}
		if meter && ti.directMeter == 0 {
			return status.Errorf(codes.InvalidArgument, "table %s has no direct meter", ti.t.GetPreamble().GetName())
		}
		if !meter && ti.directCounter == 0 {
			return status.Errorf(codes.InvalidArgument, "table %s has no direct counter", ti.t.GetPreamble().GetName())
		}
		ids = []uint32{q.GetTableId()}
	}
	emit := func(e *p4v1.TableEntry) error {
		key := &p4v1.TableEntry{TableId: e.GetTableId(), Match: e.GetMatch(), Priority: e.GetPriority()}
		if meter {
			return r.add(&p4v1.Entity{Entity: &p4v1.Entity_DirectMeterEntry{DirectMeterEntry: &p4v1.DirectMeterEntry{
				TableEntry: key, Config: cloneOr(e.GetMeterConfig(), nil)}}})
		}
		return r.add(&p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{
			TableEntry: key, Data: cloneOr(e.GetCounterData(), &p4v1.CounterData{})}}})
	}
	for _, id := range ids {
		if q != nil && hasKey(q) {
			key, err := sch.directKey(q, meter)
			if err != nil {
				return err
			}
			e, err := dev.TableEntry(key)
			if err != nil {
				return devErr(err)
			}
			if err := emit(proto.Clone(e).(*p4v1.TableEntry)); err != nil {
				return err
			}
			continue
		}
		var out []*p4v1.TableEntry
		if err := dev.TableEntries(id, func(e *p4v1.TableEntry) bool {
			out = append(out, proto.Clone(e).(*p4v1.TableEntry))
			return true
		}); err != nil {
			return toStatus(err)
		}
		sort.Slice(out, func(i, j int) bool { return EntryKey(out[i]) < EntryKey(out[j]) })
		for _, e := range out {
			if err := emit(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// readPRE reads the multicast groups or clone sessions of the device: all of them when want is 0,
// else the one with that id, in ascending id order, each wrapped into a replication-engine entity.
func readPRE[T proto.Message](r *reader, walk func(func(T) bool) error, want uint32, id func(T) uint32,
	wrap func(T) *p4v1.PacketReplicationEngineEntry) error {
	var out []T
	err := walk(func(e T) bool {
		if want == 0 || id(e) == want {
			out = append(out, proto.Clone(e).(T))
		}
		return true
	})
	if err != nil {
		return toStatus(err)
	}
	sort.Slice(out, func(i, j int) bool { return id(out[i]) < id(out[j]) })
	for _, e := range out {
		if err := r.add(&p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: wrap(e)}}); err != nil {
			return err
		}
	}
	return nil
}
