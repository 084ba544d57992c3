package p4rt

import (
	"errors"
	"fmt"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"
)

// undoFor captures, before u is applied, how to restore the state u changes.
// The returned function restores it and reports every device error it met,
// and also a failure to read the previous state here (then it cannot restore
// that part). undoFor returns nil when u will fail validation, so there is
// nothing to undo; the caller only keeps the undo of an update that succeeded,
// and treats a successful update without one as not undoable.
// Precondition: s.writeMu is held.
func (s *Server) undoFor(sch *schema, u *p4v1.Update) func() error {
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
				return captureFailed("default action of table %d", ce.GetTableId(), err)
			}
			old = cloneOr(old, nil)
			return func() error {
				return wrapUndo(dev.SetDefaultAction(ce.GetTableId(), old), "restore the default action of table %d", ce.GetTableId())
			}
		}
		key := &p4v1.TableEntry{TableId: ce.GetTableId(), Match: ce.GetMatch(), Priority: ce.GetPriority()}
		old, err := dev.TableEntry(key)
		switch {
		case errors.Is(err, ErrNotFound):
			old = nil
		case err != nil:
			return captureFailed("entry of table %d", ce.GetTableId(), err)
		default:
			old = proto.Clone(old).(*p4v1.TableEntry)
		}
		switch {
		case op == p4v1.Update_INSERT && old == nil:
			return func() error {
				return wrapUndo(dev.DeleteTableEntry(key), "delete the inserted entry of table %d", key.GetTableId())
			}
		case op == p4v1.Update_MODIFY && old != nil:
			return func() error {
				return wrapUndo(dev.ModifyTableEntry(old), "restore the modified entry of table %d", key.GetTableId())
			}
		case op == p4v1.Update_DELETE && old != nil:
			return func() error {
				return wrapUndo(dev.InsertTableEntry(old), "re-insert the deleted entry of table %d", key.GetTableId())
			}
		}
		return nil
	case *p4v1.Entity_CounterEntry:
		c := ent.CounterEntry
		ci, ok := sch.counters[c.GetCounterId()]
		if !ok || checkIndex(c.GetIndex(), ci.GetSize(), "") != nil {
			return nil
		}
		olds := map[int64]*p4v1.CounterData{}
		capErr := forIndex(c.GetIndex(), ci.GetSize(), func(i int64) error {
			d, err := dev.Counter(c.GetCounterId(), i)
			if err != nil {
				return fmt.Errorf("the previous state of counter %d[%d] could not be read: %w", c.GetCounterId(), i, err)
			}
			olds[i] = cloneOr(d, &p4v1.CounterData{})
			return nil
		})
		return func() error {
			errs := []error{capErr}
			for i, d := range olds {
				errs = append(errs, wrapUndo(dev.SetCounter(c.GetCounterId(), i, d), "restore counter %d[%d]", c.GetCounterId(), i))
			}
			return errors.Join(errs...)
		}
	case *p4v1.Entity_MeterEntry:
		m := ent.MeterEntry
		mi, ok := sch.meters[m.GetMeterId()]
		if !ok || checkIndex(m.GetIndex(), mi.GetSize(), "") != nil {
			return nil
		}
		olds := map[int64]*p4v1.MeterConfig{}
		capErr := forIndex(m.GetIndex(), mi.GetSize(), func(i int64) error {
			c, err := dev.Meter(m.GetMeterId(), i)
			if err != nil {
				return fmt.Errorf("the previous state of meter %d[%d] could not be read: %w", m.GetMeterId(), i, err)
			}
			olds[i] = cloneOr(c, nil)
			return nil
		})
		return func() error {
			errs := []error{capErr}
			for i, c := range olds {
				errs = append(errs, wrapUndo(dev.SetMeter(m.GetMeterId(), i, c), "restore meter %d[%d]", m.GetMeterId(), i))
			}
			return errors.Join(errs...)
		}
	case *p4v1.Entity_RegisterEntry:
		r := ent.RegisterEntry
		ri, ok := sch.registers[r.GetRegisterId()]
		if !ok || checkIndex(r.GetIndex(), int64(ri.r.GetSize()), "") != nil {
			return nil
		}
		olds := map[int64]*p4v1.P4Data{}
		capErr := forIndex(r.GetIndex(), int64(ri.r.GetSize()), func(i int64) error {
			v, err := dev.Register(r.GetRegisterId(), i)
			if err != nil {
				return fmt.Errorf("the previous state of register %d[%d] could not be read: %w", r.GetRegisterId(), i, err)
			}
			olds[i] = cloneOr(v, nil)
			return nil
		})
		return func() error {
			errs := []error{capErr}
			for i, v := range olds {
				errs = append(errs, wrapUndo(dev.SetRegister(r.GetRegisterId(), i, v), "restore register %d[%d]", r.GetRegisterId(), i))
			}
			return errors.Join(errs...)
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
		if errors.Is(err, ErrNotFound) {
			return nil // the update fails: no such entry
		}
		if err != nil {
			return captureFailed("entry of table %d", key.GetTableId(), err)
		}
		if meter {
			c := cloneOr(old.GetMeterConfig(), nil)
			return func() error {
				return wrapUndo(dev.SetDirectMeter(key, c), "restore a direct meter of table %d", key.GetTableId())
			}
		}
		d := cloneOr(old.GetCounterData(), &p4v1.CounterData{})
		return func() error {
			return wrapUndo(dev.SetDirectCounter(key, d), "restore a direct counter of table %d", key.GetTableId())
		}
	case *p4v1.Entity_PacketReplicationEngineEntry:
		switch pe := ent.PacketReplicationEngineEntry.GetType().(type) {
		case *p4v1.PacketReplicationEngineEntry_MulticastGroupEntry:
			id := pe.MulticastGroupEntry.GetMulticastGroupId()
			var old *p4v1.MulticastGroupEntry
			if err := dev.MulticastGroups(func(g *p4v1.MulticastGroupEntry) bool {
				if g.GetMulticastGroupId() == id {
					old = proto.Clone(g).(*p4v1.MulticastGroupEntry)
				}
				return old == nil
			}); err != nil {
				return captureFailed("multicast group %d", id, err)
			}
			return preUndo(op, old, &p4v1.MulticastGroupEntry{MulticastGroupId: id}, dev.WriteMulticastGroup, "multicast group", id)
		case *p4v1.PacketReplicationEngineEntry_CloneSessionEntry:
			id := pe.CloneSessionEntry.GetSessionId()
			var old *p4v1.CloneSessionEntry
			if err := dev.CloneSessions(func(c *p4v1.CloneSessionEntry) bool {
				if c.GetSessionId() == id {
					old = proto.Clone(c).(*p4v1.CloneSessionEntry)
				}
				return old == nil
			}); err != nil {
				return captureFailed("clone session %d", id, err)
			}
			return preUndo(op, old, &p4v1.CloneSessionEntry{SessionId: id}, dev.WriteCloneSession, "clone session", id)
		}
		return nil
	case *p4v1.Entity_DigestEntry:
		id := ent.DigestEntry.GetDigestId()
		s.mu.Lock()
		old, had := s.dig.cfg[id]
		s.mu.Unlock()
		return func() error {
			s.mu.Lock()
			defer s.mu.Unlock()
			if had {
				s.dig.cfg[id] = old
			} else {
				delete(s.dig.cfg, id)
			}
			return nil
		}
	}
	return nil
}

// preUndo undoes a PRE write: old is the entry before it (nil if absent),
// key names the entry for a delete; what and id name it in errors.
func preUndo[T any](op p4v1.Update_Type, old *T, key *T, write func(p4v1.Update_Type, *T) error, what string, id uint32) func() error {
	switch {
	case op == p4v1.Update_INSERT && old == nil:
		return func() error { return wrapUndo(write(p4v1.Update_DELETE, key), "delete the inserted %s %d", what, id) }
	case op == p4v1.Update_MODIFY && old != nil:
		return func() error { return wrapUndo(write(p4v1.Update_MODIFY, old), "restore the modified %s %d", what, id) }
	case op == p4v1.Update_DELETE && old != nil:
		return func() error { return wrapUndo(write(p4v1.Update_INSERT, old), "re-insert the deleted %s %d", what, id) }
	}
	return nil
}

// wrapUndo describes a failed undo step; nil stays nil.
func wrapUndo(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}

// captureFailed is the undo of an update whose previous state could not be
// read: it restores nothing and says why.
func captureFailed(format string, id uint32, err error) func() error {
	err = fmt.Errorf("the previous state of %s could not be read: %w", fmt.Sprintf(format, id), err)
	return func() error { return err }
}
