package p4rt

import (
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"
)

// undoFor captures, before u is applied, how to restore the state u changes.
// It returns nil when u changes nothing that can be read back (an update that
// will fail validation, for instance); the caller only keeps the undo of an
// update that succeeded. Precondition: s.writeMu is held.
func (s *Server) undoFor(sch *schema, u *p4v1.Update) func() {
	dev := s.dev
	op := u.GetType()
	switch ent := u.GetEntity().GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		ce, _, err := sch.checkEntry(ent.TableEntry, op)
		if err != nil {
			return nil
		}
		if ce.GetIsDefaultAction() {
			old, err := dev.DefaultAction(ce.GetTableId())
			if err != nil {
				return nil
			}
			old = cloneOr(old, nil)
			return func() { _ = dev.SetDefaultAction(ce.GetTableId(), old) }
		}
		key := &p4v1.TableEntry{TableId: ce.GetTableId(), Match: ce.GetMatch(), Priority: ce.GetPriority()}
		old, err := dev.TableEntry(key)
		if err != nil {
			old = nil
		} else {
			old = proto.Clone(old).(*p4v1.TableEntry)
		}
		switch {
		case op == p4v1.Update_INSERT && old == nil:
			return func() { _ = dev.DeleteTableEntry(key) }
		case op == p4v1.Update_MODIFY && old != nil:
			return func() { _ = dev.ModifyTableEntry(old) }
		case op == p4v1.Update_DELETE && old != nil:
			return func() { _ = dev.InsertTableEntry(old) }
		}
		return nil
	case *p4v1.Entity_CounterEntry:
		c := ent.CounterEntry
		ci, ok := sch.counters[c.GetCounterId()]
		if !ok || checkIndex(c.GetIndex(), ci.GetSize(), "") != nil {
			return nil
		}
		olds := map[int64]*p4v1.CounterData{}
		_ = forIndex(c.GetIndex(), ci.GetSize(), func(i int64) error {
			d, err := dev.Counter(c.GetCounterId(), i)
			if err == nil {
				olds[i] = cloneOr(d, &p4v1.CounterData{})
			}
			return nil
		})
		return func() {
			for i, d := range olds {
				_ = dev.SetCounter(c.GetCounterId(), i, d)
			}
		}
	case *p4v1.Entity_MeterEntry:
		m := ent.MeterEntry
		mi, ok := sch.meters[m.GetMeterId()]
		if !ok || checkIndex(m.GetIndex(), mi.GetSize(), "") != nil {
			return nil
		}
		olds := map[int64]*p4v1.MeterConfig{}
		_ = forIndex(m.GetIndex(), mi.GetSize(), func(i int64) error {
			c, err := dev.Meter(m.GetMeterId(), i)
			if err == nil {
				olds[i] = cloneOr(c, nil)
			}
			return nil
		})
		return func() {
			for i, c := range olds {
				_ = dev.SetMeter(m.GetMeterId(), i, c)
			}
		}
	case *p4v1.Entity_RegisterEntry:
		r := ent.RegisterEntry
		ri, ok := sch.registers[r.GetRegisterId()]
		if !ok || checkIndex(r.GetIndex(), int64(ri.r.GetSize()), "") != nil {
			return nil
		}
		olds := map[int64]*p4v1.P4Data{}
		_ = forIndex(r.GetIndex(), int64(ri.r.GetSize()), func(i int64) error {
			v, err := dev.Register(r.GetRegisterId(), i)
			if err == nil {
				olds[i] = cloneOr(v, nil)
			}
			return nil
		})
		return func() {
			for i, v := range olds {
				_ = dev.SetRegister(r.GetRegisterId(), i, v)
			}
		}
	case *p4v1.Entity_DirectCounterEntry, *p4v1.Entity_DirectMeterEntry:
		var te *p4v1.TableEntry
		meter := false
		if dc, ok := ent.(*p4v1.Entity_DirectCounterEntry); ok {
			te = dc.DirectCounterEntry.GetTableEntry()
		} else {
			te, meter = ent.(*p4v1.Entity_DirectMeterEntry).DirectMeterEntry.GetTableEntry(), true
		}
		key, err := sch.directKey(te, meter)
		if err != nil {
			return nil
		}
		old, err := dev.TableEntry(key)
		if err != nil {
			return nil
		}
		if meter {
			c := cloneOr(old.GetMeterConfig(), nil)
			return func() { _ = dev.SetDirectMeter(key, c) }
		}
		d := cloneOr(old.GetCounterData(), &p4v1.CounterData{})
		return func() { _ = dev.SetDirectCounter(key, d) }
	case *p4v1.Entity_PacketReplicationEngineEntry:
		switch pe := ent.PacketReplicationEngineEntry.GetType().(type) {
		case *p4v1.PacketReplicationEngineEntry_MulticastGroupEntry:
			id := pe.MulticastGroupEntry.GetMulticastGroupId()
			var old *p4v1.MulticastGroupEntry
			_ = dev.MulticastGroups(func(g *p4v1.MulticastGroupEntry) bool {
				if g.GetMulticastGroupId() == id {
					old = proto.Clone(g).(*p4v1.MulticastGroupEntry)
				}
				return old == nil
			})
			return preUndo(op, old, &p4v1.MulticastGroupEntry{MulticastGroupId: id}, dev.WriteMulticastGroup)
		case *p4v1.PacketReplicationEngineEntry_CloneSessionEntry:
			id := pe.CloneSessionEntry.GetSessionId()
			var old *p4v1.CloneSessionEntry
			_ = dev.CloneSessions(func(c *p4v1.CloneSessionEntry) bool {
				if c.GetSessionId() == id {
					old = proto.Clone(c).(*p4v1.CloneSessionEntry)
				}
				return old == nil
			})
			return preUndo(op, old, &p4v1.CloneSessionEntry{SessionId: id}, dev.WriteCloneSession)
		}
		return nil
	case *p4v1.Entity_DigestEntry:
		id := ent.DigestEntry.GetDigestId()
		s.mu.Lock()
		old, had := s.dig.cfg[id]
		s.mu.Unlock()
		return func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if had {
				s.dig.cfg[id] = old
			} else {
				delete(s.dig.cfg, id)
			}
		}
	}
	return nil
}

// preUndo undoes a PRE write: old is the entry before it (nil if absent),
// key names the entry for a delete.
func preUndo[T any](op p4v1.Update_Type, old *T, key *T, write func(p4v1.Update_Type, *T) error) func() {
	switch {
	case op == p4v1.Update_INSERT && old == nil:
		return func() { _ = write(p4v1.Update_DELETE, key) }
	case op == p4v1.Update_MODIFY && old != nil:
		return func() { _ = write(p4v1.Update_MODIFY, old) }
	case op == p4v1.Update_DELETE && old != nil:
		return func() { _ = write(p4v1.Update_INSERT, old) }
	}
	return nil
}
