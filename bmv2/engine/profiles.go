package engine

import (
	"fmt"
	"sort"
)

// ActionProfile is an action_profile or action_selector: members (an action with its data)
// that table entries point to, and, for selectors, groups of members among which a hash of
// the table's selector keys picks one (bmv2: hash truncated to outputWidth bits, modulo the
// group size, members in id order).
type ActionProfile struct {
	Name     string
	ID       uint32
	Size     int
	Selector bool
	algo     func(*ctx, []byte) u128
	outWidth int
	members  map[uint32]*member
	groups   map[uint32][]uint32
	tables   []*Table
}

type member struct {
	action string
	args   [][]byte
	// resolved per table: action index and converted data
	perTable map[*Table]resolved
}

type resolved struct {
	ai   int
	args []u128
}

// Profile finds an action profile or selector by name or unique suffix.
func (s *Switch) Profile(name string) (*ActionProfile, error) {
	return lookupName("action profile", name, s.profiles, func(p *ActionProfile) string { return p.Name })
}

// ProfileByID finds an action profile or selector by P4Info id.
func (s *Switch) ProfileByID(id uint32) (*ActionProfile, error) {
	for _, p := range s.profiles {
		if p.ID == id {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: action profile id %d", ErrNotFound, id)
}

func (ap *ActionProfile) resolveMember(m *member) error {
	m.perTable = map[*Table]resolved{}
	for _, t := range ap.tables {
		ai, err := t.findAction(m.action, 0)
		if err != nil {
			return err
		}
		args, err := t.args(ai, m.args)
		if err != nil {
			return err
		}
		m.perTable[t] = resolved{ai, args}
	}
	return nil
}

// SetMember inserts or replaces member id (action by name, data big-endian).
func (ap *ActionProfile) SetMember(id uint32, action string, args [][]byte) error {
	if _, ok := ap.members[id]; !ok && ap.Size > 0 && len(ap.members) >= ap.Size {
		return fmt.Errorf("%w: action profile %s is full", ErrInvalid, ap.Name)
	}
	m := &member{action: action, args: args}
	if err := ap.resolveMember(m); err != nil {
		return err
	}
	ap.members[id] = m
	return nil
}

// DeleteMember removes a member that no group uses.
func (ap *ActionProfile) DeleteMember(id uint32) error {
	if _, ok := ap.members[id]; !ok {
		return fmt.Errorf("%w: member %d of %s", ErrNotFound, id, ap.Name)
	}
	for g, ms := range ap.groups {
		for _, m := range ms {
			if m == id {
				return fmt.Errorf("%w: member %d is in group %d", ErrInvalid, id, g)
			}
		}
	}
	delete(ap.members, id)
	return nil
}

// Member returns a member's action and data.
func (ap *ActionProfile) Member(id uint32) (string, [][]byte, bool) {
	m, ok := ap.members[id]
	if !ok {
		return "", nil, false
	}
	return m.action, m.args, true
}

// SetGroup inserts or replaces group id with the given members (selectors only).
func (ap *ActionProfile) SetGroup(id uint32, members []uint32) error {
	if !ap.Selector {
		return fmt.Errorf("%w: %s is not an action selector", ErrInvalid, ap.Name)
	}
	for _, m := range members {
		if _, ok := ap.members[m]; !ok {
			return fmt.Errorf("%w: member %d of %s", ErrNotFound, m, ap.Name)
		}
	}
	ms := append([]uint32(nil), members...)
	sort.Slice(ms, func(i, j int) bool { return ms[i] < ms[j] })
	ap.groups[id] = ms
	return nil
}

// DeleteGroup removes a group.
func (ap *ActionProfile) DeleteGroup(id uint32) error {
	if _, ok := ap.groups[id]; !ok {
		return fmt.Errorf("%w: group %d of %s", ErrNotFound, id, ap.Name)
	}
	delete(ap.groups, id)
	return nil
}

// Group returns a group's members.
func (ap *ActionProfile) Group(id uint32) ([]uint32, bool) {
	ms, ok := ap.groups[id]
	return append([]uint32(nil), ms...), ok
}

// resolve returns the action of an entry that points to a member or a group; ok is false
// when the member or group no longer exists or the group is empty (the default action runs).
func (t *Table) resolve(c *ctx, en *entry) (int, []u128, bool) {
	ap := t.profile
	id := en.ref
	if en.indirect == 2 {
		ms := ap.groups[id]
		if len(ms) == 0 {
			return 0, nil, false
		}
		h := ap.algo(c, serialize(c, t.selector)).trunc(ap.outWidth)
		_, r := h.divmod(u128{lo: uint64(len(ms))})
		id = ms[r.lo]
	}
	m, ok := ap.members[id]
	if !ok {
		return 0, nil, false
	}
	r, ok := m.perTable[t]
	if !ok {
		return 0, nil, false
	}
	return r.ai, r.args, true
}
