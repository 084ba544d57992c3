package engine

import "fmt"

// This file holds the parts of the runtime API a P4Runtime server needs beyond the table
// operations in tables.go. The Switch is not safe for concurrent use: a server serializes
// calls (or holds one mutex around Process and the API).

// CounterByID finds a counter (indexed or direct) by P4Info id.
func (s *Switch) CounterByID(id uint32) (*Counter, error) {
	for _, k := range s.counters {
		if k.ID == id {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w: counter id %d", ErrNotFound, id)
}

// MeterByID finds a meter (indexed or direct) by P4Info id.
func (s *Switch) MeterByID(id uint32) (*Meter, error) {
	for _, m := range s.meters {
		if m.ID == id {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w: meter id %d", ErrNotFound, id)
}

// Direct reports whether the counter is a direct counter (read through table entries).
func (k *Counter) Direct() bool { return k.direct }

// Size is the number of cells of an indexed counter.
func (k *Counter) Size() int { return len(k.Packets) }

// Read returns cell i, summed over the pipes when the counter has a copy in each
// (Config.Pipes > 1; ReadPipe reads one).
func (k *Counter) Read(i int) (packets, bytes uint64, err error) {
	if i < 0 || i >= len(k.Packets) {
		return 0, 0, fmt.Errorf("%w: counter %s index %d", ErrInvalid, k.Name, i)
	}
	if k.pkCopies == nil {
		return k.Packets[i], k.Bytes[i], nil
	}
	for p := range k.pkCopies {
		if k.pkCopies[p] != nil {
			packets += k.pkCopies[p][i]
			bytes += k.byCopies[p][i]
		}
	}
	return packets, bytes, nil
}

// Write sets cell i. With a copy in several pipes (Config.Pipes > 1) the values go to the
// home pipe (the first of Pipes()) and the other pipes' cells are zeroed, so that Read, which
// sums the pipes, returns them.
func (k *Counter) Write(i int, packets, bytes uint64) error {
	if i < 0 || i >= len(k.Packets) {
		return fmt.Errorf("%w: counter %s index %d", ErrInvalid, k.Name, i)
	}
	if k.pkCopies == nil {
		k.Packets[i], k.Bytes[i] = packets, bytes
		return nil
	}
	for p := range k.pkCopies {
		if k.pkCopies[p] != nil {
			k.pkCopies[p][i], k.byCopies[p][i] = 0, 0
		}
	}
	home := homeOf(k.inPipes)
	k.pkCopies[home][i], k.byCopies[home][i] = packets, bytes
	return nil
}

// Direct reports whether the meter is a direct meter (configured through table entries).
func (m *Meter) Direct() bool { return m.direct }

// Size is the number of cells of an indexed meter.
func (m *Meter) Size() int { return len(m.cells) }

// Reset makes cell i unconfigured again (every packet green), in every pipe.
func (m *Meter) Reset(i int) error {
	if i < 0 || i >= len(m.cells) {
		return fmt.Errorf("%w: meter %s index %d", ErrInvalid, m.Name, i)
	}
	for _, cs := range m.pipeCells() {
		cs[i] = meterState{}
	}
	return nil
}

// ResetDefault restores the default action the program declares.
func (t *Table) ResetDefault() {
	t.defAction, t.defArgs = t.progDefAction, t.progDefArgs
}

// Lookup returns the entry with key's match fields and priority (the action in key is
// ignored), with its counter values.
func (t *Table) Lookup(key Entry) (Entry, error) {
	i, err := t.findKey(key)
	if err != nil {
		return Entry{}, err
	}
	en := t.entries[i]
	e := en.api
	e.Packets, e.Bytes = en.packets, en.bytes
	return e, nil
}

// SetDirectCounter sets the direct counter values of the entry with key's match.
func (t *Table) SetDirectCounter(key Entry, packets, bytes uint64) error {
	i, err := t.findKey(key)
	if err != nil {
		return err
	}
	t.entries[i].packets, t.entries[i].bytes = packets, bytes
	return nil
}

// DirectMeter returns the direct meter configuration of an entry (nil: unconfigured; pipe 0's
// with Config.Pipes > 1).
func (t *Table) DirectMeter(key Entry) (*MeterConfig, error) {
	i, err := t.findKey(key)
	if err != nil {
		return nil, err
	}
	m := t.entries[i].meter
	if m == nil || !m.configured {
		return nil, nil
	}
	c := *m.cfg
	return &c, nil
}

// HasDirectCounter and HasDirectMeter report the table's direct resources.
func (t *Table) HasDirectCounter() bool { return t.counter != nil }

// HasDirectMeter reports whether the table has a direct meter.
func (t *Table) HasDirectMeter() bool { return t.meter != nil }

// ConstEntries reports whether the table's entries are const (no runtime writes).
func (t *Table) ConstEntries() bool { return t.constEnts }

func (t *Table) findKey(key Entry) (int, error) {
	key.Action, key.ActionID, key.Args = "", 0, nil
	if len(t.actions) > 0 {
		key.ActionID = t.actions[0].ID
		key.Action = t.actions[0].Name
		key.Args = make([][]byte, len(t.actions[0].Params))
	}
	en, err := t.convertDirect(key)
	if err != nil {
		return -1, err
	}
	i := t.find(en)
	if i < 0 {
		return -1, fmt.Errorf("%w: entry in table %s", ErrNotFound, t.Name)
	}
	return i, nil
}

// MulticastGroup returns a group's replicas.
func (s *Switch) MulticastGroup(grp int) ([]Replica, bool) {
	if _, ok := s.mcGroups[grp]; !ok {
		return nil, false
	}
	return append([]Replica(nil), s.replicas(grp)...), true
}

// MulticastGroups lists the group ids.
func (s *Switch) MulticastGroups() []int {
	out := make([]int, 0, len(s.mcGroups))
	for g := range s.mcGroups {
		out = append(out, g)
	}
	return out
}

// CloneSessions lists the mirroring sessions.
func (s *Switch) CloneSessions() map[int]CloneSession {
	out := make(map[int]CloneSession, len(s.sessions))
	for k, v := range s.sessions {
		out[k] = v
	}
	return out
}

// CopyPRE copies the multicast groups and clone sessions of another switch (a pipeline
// change keeps the PRE, as with bmv2).
func (s *Switch) CopyPRE(from *Switch) {
	for g := range from.mcGroups {
		s.SetMulticastGroup(g, from.replicas(g))
	}
	for k, v := range from.sessions {
		s.sessions[k] = v
	}
}

// DigestID returns the P4Info id of the digest whose data has the named type, or 0.
func (s *Switch) DigestID(name string) uint32 { return s.digestIDs[name] }
