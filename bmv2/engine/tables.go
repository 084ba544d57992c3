package engine

import (
	"errors"
	"fmt"
	"sort"

	"github.com/netlock-go/netlock/bmv2/front"
)

// MatchKind of a table key field.
type MatchKind uint8

// Match kinds.
const (
	Exact MatchKind = iota + 1
	LPM
	Ternary
	Range
	Optional
)

func (k MatchKind) String() string {
	return [...]string{"?", "exact", "lpm", "ternary", "range", "optional"}[k]
}

// Errors of the runtime API.
var (
	ErrNotFound      = errors.New("engine: not found")
	ErrAlreadyExists = errors.New("engine: entry already exists")
	ErrInvalid       = errors.New("engine: invalid argument")
	ErrConstTable    = errors.New("engine: table has const entries")
)

// KeyField describes one key element of a table.
type KeyField struct {
	Name  string // p4c's control-plane name (front.KeyName)
	ID    uint32 // P4Info match field id (1-based position)
	Kind  MatchKind
	Width int
	eval  scalarFn
}

// ActionParam is a control-plane parameter of an action.
type ActionParam struct {
	Name  string
	Width int
	base  int
	mask  uint64 // the low min(Width, 64) bits
}

// Action is a compiled action of a block instance.
type Action struct {
	Name   string
	ID     uint32
	Params []ActionParam
	decl   *front.ActionDecl
	fr     *frame
	run    stmtFn
}

// FieldMatch is the match on one key field; values are big-endian byte strings as in
// P4Runtime. Exact and Optional use Value; LPM uses Value and PrefixLen; Ternary uses Value
// and Mask; Range uses Low and High. A field left out of Entry.Match (Optional, Ternary,
// Range, LPM) is a wildcard.
type FieldMatch struct {
	Name      string
	Value     []byte
	Mask      []byte
	PrefixLen int
	Low, High []byte
}

// Entry is a table entry as the runtime API takes and returns it.
type Entry struct {
	Match []FieldMatch
	// Priority orders ternary, range and optional entries: larger wins (P4Runtime).
	Priority int32
	Action   string // action name (full or suffix), or empty if ActionID is set
	ActionID uint32
	Args     [][]byte // action data, in parameter order
	// Tables with an action profile or selector take a member or a group instead of an
	// action (set HasMember or HasGroup).
	MemberID  uint32
	HasMember bool
	GroupID   uint32
	HasGroup  bool
	// Counter values of the entry's direct counter (read only).
	Packets, Bytes uint64
}

type fieldMatch struct {
	value, mask u128
	lo, hi      u128
	plen        int
}

type lpmLevel struct {
	plen  int
	mask  u128
	byKey map[u128]*entry
}

type entry struct {
	indirect uint8 // 0 direct action, 1 member, 2 group
	ref      uint32
	match    []fieldMatch
	priority int32
	plen     int // total LPM prefix length (longest wins)
	seq      int
	action   int
	args     []u128
	packets  uint64
	bytes    uint64
	meter    *meterState
	api      Entry
}

// Table is a match-action table.
type Table struct {
	Name    string
	ID      uint32
	Keys    []KeyField
	Size    int
	actions []*Action
	// default action
	defAction int
	defArgs   []u128
	defConst  bool
	// the program's default, for ResetDefault
	progDefAction int
	progDefArgs   []u128
	constEnts     bool
	entries       []*entry
	exactIdx      map[uint64][]*entry
	allExact      bool
	lpmIdx        []lpmLevel // single-LPM-key tables: one map per prefix length, longest first
	counter       *Counter
	meter         *Meter
	profile       *ActionProfile
	selector      []piece
	kbuf          []u128
	seq           int
	sw            *Switch
	// entryCost is EntryBytes, reserved from the switch's memory budget for every entry held
	// (const entries at Load, the others in insert, given back in remove and Clear).
	entryCost int64
}

func (t *Table) zeroArgs(ai int) [][]byte {
	out := make([][]byte, len(t.actions[ai].Params))
	for i := range out {
		out[i] = []byte{0}
	}
	return out
}

// apiMatch renders an entry's match in the runtime API's form (used for const entries).
func (t *Table) apiMatch(en *entry) []FieldMatch {
	out := make([]FieldMatch, len(t.Keys))
	for i, k := range t.Keys {
		m := en.match[i]
		fm := FieldMatch{Name: k.Name}
		switch k.Kind {
		case Exact:
			fm.Value = m.value.toBytes(k.Width)
		case LPM:
			fm.Value, fm.PrefixLen = m.value.toBytes(k.Width), m.plen
		case Ternary, Optional:
			fm.Value, fm.Mask = m.value.toBytes(k.Width), m.mask.toBytes(k.Width)
		case Range:
			fm.Low, fm.High = m.lo.toBytes(k.Width), m.hi.toBytes(k.Width)
		}
		out[i] = fm
	}
	return out
}

// lpmOnly reports whether entries are ordered by prefix length (no ternary, range or
// optional key), as bmv2 orders lpm tables.
func (t *Table) lpmOnly() bool {
	for _, k := range t.Keys {
		if k.Kind == Ternary || k.Kind == Range || k.Kind == Optional {
			return false
		}
	}
	return true
}

// Actions lists the actions the table may run.
func (t *Table) Actions() []*Action { return t.actions }

func (t *Table) findAction(name string, id uint32) (int, error) {
	if id != 0 {
		for i, a := range t.actions {
			if a.ID == id {
				return i, nil
			}
		}
		return -1, fmt.Errorf("%w: action id %d in table %s", ErrNotFound, id, t.Name)
	}
	cand := -1
	for i, a := range t.actions {
		if a.Name == name || a.decl.Name == name {
			return i, nil
		}
		if len(a.Name) > len(name) && a.Name[len(a.Name)-len(name)-1:] == "."+name {
			cand = i
		}
	}
	if cand >= 0 {
		return cand, nil
	}
	return -1, fmt.Errorf("%w: action %q in table %s", ErrNotFound, name, t.Name)
}

func (t *Table) args(ai int, raw [][]byte) ([]u128, error) {
	a := t.actions[ai]
	if len(raw) != len(a.Params) {
		return nil, fmt.Errorf("%w: action %s takes %d arguments, got %d", ErrInvalid, a.Name, len(a.Params), len(raw))
	}
	out := make([]u128, len(raw))
	for i, r := range raw {
		out[i] = fromBytes(r).trunc(a.Params[i].Width)
	}
	return out, nil
}

func (t *Table) convert(e Entry) (*entry, error) {
	if t.profile != nil && (e.HasMember || e.HasGroup) {
		en, err := t.convertDirect(Entry{Match: e.Match, Priority: e.Priority, Action: t.actions[t.defAction].Name, Args: t.zeroArgs(t.defAction)})
		if err != nil {
			return nil, err
		}
		if e.HasGroup {
			if !t.profile.Selector {
				return nil, fmt.Errorf("%w: %s is not an action selector", ErrInvalid, t.profile.Name)
			}
			en.indirect, en.ref = 2, e.GroupID
		} else {
			en.indirect, en.ref = 1, e.MemberID
		}
		en.api = e
		en.api.Match = t.apiMatch(en)
		en.api.Action, en.api.ActionID, en.api.Args = "", 0, nil
		return en, nil
	}
	if t.profile != nil {
		return nil, fmt.Errorf("%w: table %s takes action profile members or groups", ErrInvalid, t.Name)
	}
	return t.convertDirect(e)
}

func (t *Table) convertDirect(e Entry) (*entry, error) {
	ai, err := t.findAction(e.Action, e.ActionID)
	if err != nil {
		return nil, err
	}
	args, err := t.args(ai, e.Args)
	if err != nil {
		return nil, err
	}
	en := &entry{priority: e.Priority, action: ai, args: args, match: make([]fieldMatch, len(t.Keys))}
	given := make([]bool, len(t.Keys))
	for i, fm := range e.Match {
		k := i
		if fm.Name != "" {
			k = -1
			for j, kf := range t.Keys {
				if kf.Name == fm.Name {
					k = j
				}
			}
			if k < 0 {
				return nil, fmt.Errorf("%w: key field %q of table %s", ErrNotFound, fm.Name, t.Name)
			}
		}
		if k >= len(t.Keys) {
			return nil, fmt.Errorf("%w: too many key fields for table %s", ErrInvalid, t.Name)
		}
		given[k] = true
		kf := t.Keys[k]
		full := mask128(kf.Width)
		m := fieldMatch{value: fromBytes(fm.Value).trunc(kf.Width)}
		switch kf.Kind {
		case Exact:
			m.mask = full
		case Optional:
			m.mask = full
			if fm.Mask != nil && fromBytes(fm.Mask).isZero() {
				m.mask = u128{}
			}
		case LPM:
			if fm.PrefixLen < 0 || fm.PrefixLen > kf.Width {
				return nil, fmt.Errorf("%w: prefix length %d for %s", ErrInvalid, fm.PrefixLen, kf.Name)
			}
			m.plen = fm.PrefixLen
			m.mask = full.and(mask128(kf.Width - fm.PrefixLen).not())
			if t.lpmOnly() {
				en.plen += fm.PrefixLen
			}
		case Ternary:
			m.mask = fromBytes(fm.Mask).trunc(kf.Width)
		case Range:
			m.lo, m.hi = fromBytes(fm.Low).trunc(kf.Width), fromBytes(fm.High).trunc(kf.Width)
		}
		m.value = m.value.and(m.mask)
		en.match[k] = m
	}
	for k, kf := range t.Keys {
		if !given[k] {
			switch kf.Kind {
			case Exact:
				return nil, fmt.Errorf("%w: exact key field %s missing", ErrInvalid, kf.Name)
			case Range:
				en.match[k] = fieldMatch{hi: mask128(kf.Width)}
			}
		}
	}
	en.api = e
	en.api.Match = t.apiMatch(en) // canonical: every key field, values at key width
	en.api.Args = make([][]byte, len(args))
	for i, v := range args {
		en.api.Args[i] = v.toBytes(t.actions[ai].Params[i].Width)
	}
	en.api.Action = t.actions[ai].Name
	en.api.ActionID = t.actions[ai].ID
	if t.meter != nil {
		en.meter = &meterState{}
	}
	return en, nil
}

func (t *Table) sameKey(a, b *entry) bool {
	if a.priority != b.priority && !t.allExact {
		return false
	}
	for i := range a.match {
		if a.match[i] != b.match[i] {
			return false
		}
	}
	return true
}

// find returns the index of the entry with en's key, or -1. Indexed tables (all-exact and
// single-LPM) look the key up in their index and then locate the entry by pointer.
func (t *Table) find(en *entry) int {
	var hit *entry
	switch {
	case t.lpmSingle():
		for i := range t.lpmIdx {
			if lv := &t.lpmIdx[i]; lv.plen == en.match[0].plen {
				if x, ok := lv.byKey[en.match[0].value]; ok && t.sameKey(x, en) {
					hit = x
				}
			}
		}
		if hit == nil {
			return t.findLinear(en) // a same-prefix entry with another priority
		}
	case t.allExact:
		for _, x := range t.exactIdx[hashKey(en.match, nil)] {
			if t.sameKey(x, en) {
				hit = x
			}
		}
		if hit == nil {
			return -1
		}
	default:
		return t.findLinear(en)
	}
	for i, x := range t.entries {
		if x == hit {
			return i
		}
	}
	return -1
}

func (t *Table) findLinear(en *entry) int {
	for i, x := range t.entries {
		if t.sameKey(x, en) {
			return i
		}
	}
	return -1
}

func (t *Table) lpmSingle() bool { return len(t.Keys) == 1 && t.Keys[0].Kind == LPM }

// before reports whether a comes before b in lookup order.
func before(a, b *entry) bool {
	if a.plen != b.plen {
		return a.plen > b.plen
	}
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	return a.seq < b.seq
}

// add inserts an entry in lookup order and into the index.
func (t *Table) add(en *entry) {
	i := sort.Search(len(t.entries), func(i int) bool { return before(en, t.entries[i]) })
	t.entries = append(t.entries, nil)
	copy(t.entries[i+1:], t.entries[i:])
	t.entries[i] = en
	t.meter.addEntry(en)
	switch {
	case t.lpmSingle():
		t.lpmAdd(en)
	case t.allExact:
		if t.exactIdx == nil {
			t.exactIdx = map[uint64][]*entry{}
		}
		h := hashKey(en.match, nil)
		t.exactIdx[h] = append(t.exactIdx[h], en)
	}
}

func (t *Table) lpmAdd(en *entry) {
	pl := en.match[0].plen
	var lv *lpmLevel
	for i := range t.lpmIdx {
		if t.lpmIdx[i].plen == pl {
			lv = &t.lpmIdx[i]
		}
	}
	if lv == nil {
		t.lpmIdx = append(t.lpmIdx, lpmLevel{plen: pl, mask: en.match[0].mask, byKey: map[u128]*entry{}})
		sort.Slice(t.lpmIdx, func(i, j int) bool { return t.lpmIdx[i].plen > t.lpmIdx[j].plen })
		for i := range t.lpmIdx {
			if t.lpmIdx[i].plen == pl {
				lv = &t.lpmIdx[i]
			}
		}
	}
	if x, dup := lv.byKey[en.match[0].value]; !dup || before(en, x) {
		lv.byKey[en.match[0].value] = en
	}
}

// remove deletes entry i from the entries and the index.
func (t *Table) remove(i int) {
	en := t.entries[i]
	t.entries = append(t.entries[:i], t.entries[i+1:]...)
	t.meter.removeEntry(en)
	t.sw.mem.release(t.entryCost)
	switch {
	case t.lpmSingle():
		for k := range t.lpmIdx {
			lv := &t.lpmIdx[k]
			if lv.plen != en.match[0].plen || lv.byKey[en.match[0].value] != en {
				continue
			}
			delete(lv.byKey, en.match[0].value)
			for _, x := range t.entries { // another entry with the same prefix takes its place
				if x.match[0].plen == lv.plen && x.match[0].value == en.match[0].value {
					lv.byKey[x.match[0].value] = x
					break
				}
			}
			if len(lv.byKey) == 0 {
				t.lpmIdx = append(t.lpmIdx[:k], t.lpmIdx[k+1:]...)
			}
			break
		}
	case t.allExact:
		h := hashKey(en.match, nil)
		b := t.exactIdx[h]
		for j, x := range b {
			if x == en {
				b = append(b[:j], b[j+1:]...)
				break
			}
		}
		if len(b) == 0 {
			delete(t.exactIdx, h)
		} else {
			t.exactIdx[h] = b
		}
	}
}

// Insert adds an entry.
func (t *Table) Insert(e Entry) error {
	if t.constEnts {
		return fmt.Errorf("%w: %s", ErrConstTable, t.Name)
	}
	return t.insert(e)
}

func (t *Table) insert(e Entry) error {
	en, err := t.convert(e)
	if err != nil {
		return err
	}
	if t.find(en) >= 0 {
		return fmt.Errorf("%w in table %s", ErrAlreadyExists, t.Name)
	}
	if t.Size > 0 && len(t.entries) >= t.Size && !t.constEnts {
		return fmt.Errorf("%w: table %s is full (%d entries)", ErrInvalid, t.Name, t.Size)
	}
	if !t.sw.mem.reserve(t.entryCost) {
		return fmt.Errorf("table %s: one more entry (%d bytes) passes the switch's memory limit (%d bytes, %d used): %w",
			t.Name, t.entryCost, t.sw.mem.limit, t.sw.mem.used, ErrMemoryLimit)
	}
	t.seq++
	en.seq = t.seq
	t.add(en)
	return nil
}

// Modify changes the action of an existing entry (matched by key and priority).
func (t *Table) Modify(e Entry) error {
	if t.constEnts {
		return fmt.Errorf("%w: %s", ErrConstTable, t.Name)
	}
	en, err := t.convert(e)
	if err != nil {
		return err
	}
	i := t.find(en)
	if i < 0 {
		return fmt.Errorf("%w: entry in table %s", ErrNotFound, t.Name)
	}
	old := t.entries[i]
	old.action, old.args, old.api = en.action, en.args, en.api
	old.indirect, old.ref = en.indirect, en.ref
	return nil
}

// Delete removes an entry (matched by key and priority).
func (t *Table) Delete(e Entry) error {
	if t.constEnts {
		return fmt.Errorf("%w: %s", ErrConstTable, t.Name)
	}
	e.Action, e.ActionID, e.Args = "", 0, nil
	if len(t.actions) > 0 {
		e.ActionID = t.actions[0].ID
		e.Action = t.actions[0].Name
		e.Args = make([][]byte, len(t.actions[0].Params))
	}
	en, err := t.convertDirect(e)
	if err != nil {
		return err
	}
	i := t.find(en)
	if i < 0 {
		return fmt.Errorf("%w: entry in table %s", ErrNotFound, t.Name)
	}
	t.remove(i)
	return nil
}

// Clear removes all non-const entries.
func (t *Table) Clear() {
	if t.constEnts {
		return
	}
	t.sw.mem.release(int64(len(t.entries)) * t.entryCost)
	for _, en := range t.entries {
		t.meter.removeEntry(en)
	}
	t.entries = nil
	t.reindex()
}

// Entries returns the entries in lookup order, with their direct counter values.
func (t *Table) Entries() []Entry {
	out := make([]Entry, 0, len(t.entries))
	for _, en := range t.entries {
		e := en.api
		e.Packets, e.Bytes = en.packets, en.bytes
		out = append(out, e)
	}
	return out
}

// SetDefault sets the default action (fails if it is declared const).
func (t *Table) SetDefault(action string, id uint32, args [][]byte) error {
	if t.defConst {
		return fmt.Errorf("%w: default action of %s is const", ErrInvalid, t.Name)
	}
	ai, err := t.findAction(action, id)
	if err != nil {
		return err
	}
	a, err := t.args(ai, args)
	if err != nil {
		return err
	}
	t.defAction, t.defArgs = ai, a
	return nil
}

// Default returns the current default action name and arguments.
func (t *Table) Default() (string, [][]byte) {
	a := t.actions[t.defAction]
	var args [][]byte
	for i, v := range t.defArgs {
		args = append(args, v.toBytes(a.Params[i].Width))
	}
	return a.Name, args
}

// SetMeter configures the direct meter of the entry with e's key, in every pipe.
func (t *Table) SetMeter(e Entry, cfg MeterConfig) error {
	if t.meter == nil {
		return fmt.Errorf("%w: table %s has no direct meter", ErrInvalid, t.Name)
	}
	if len(t.actions) > 0 && e.Action == "" && e.ActionID == 0 {
		e.ActionID = t.actions[0].ID
		e.Args = make([][]byte, len(t.actions[0].Params))
	}
	en, err := t.convertDirect(e)
	if err != nil {
		return err
	}
	i := t.find(en)
	if i < 0 {
		return fmt.Errorf("%w: entry in table %s", ErrNotFound, t.Name)
	}
	now := t.sw.micros()
	en = t.entries[i]
	en.meter.set(cfg, now)
	for k := range t.meter.entryCopies[en] {
		t.meter.entryCopies[en][k].set(cfg, now)
	}
	return nil
}

// reindex sorts entries into lookup order and rebuilds the exact-match index.
func (t *Table) reindex() {
	sort.SliceStable(t.entries, func(i, j int) bool {
		a, b := t.entries[i], t.entries[j]
		if a.plen != b.plen {
			return a.plen > b.plen
		}
		if a.priority != b.priority {
			return a.priority > b.priority
		}
		return a.seq < b.seq
	})
	if len(t.Keys) == 1 && t.Keys[0].Kind == LPM {
		t.lpmIdx = t.lpmIdx[:0]
		for _, en := range t.entries {
			pl := en.match[0].plen
			var lv *lpmLevel
			for i := range t.lpmIdx {
				if t.lpmIdx[i].plen == pl {
					lv = &t.lpmIdx[i]
				}
			}
			if lv == nil {
				t.lpmIdx = append(t.lpmIdx, lpmLevel{plen: pl, mask: en.match[0].mask, byKey: map[u128]*entry{}})
				lv = &t.lpmIdx[len(t.lpmIdx)-1]
			}
			if _, dup := lv.byKey[en.match[0].value]; !dup {
				lv.byKey[en.match[0].value] = en
			}
		}
		sort.Slice(t.lpmIdx, func(i, j int) bool { return t.lpmIdx[i].plen > t.lpmIdx[j].plen })
		return
	}
	if !t.allExact {
		return
	}
	t.exactIdx = make(map[uint64][]*entry, len(t.entries))
	for _, en := range t.entries {
		h := hashKey(en.match, nil)
		t.exactIdx[h] = append(t.exactIdx[h], en)
	}
}

// The FNV-1a constants of hashKey, the exact-match index's key.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashKey1 is hashKey(nil, []u128{{lo: v}}): the index key of a one-key lookup.
func hashKey1(v uint64) uint64 {
	return (fnvOffset ^ v) * fnvPrime * fnvPrime // the second mix is the zero high word's
}

func hashKey(m []fieldMatch, k []u128) uint64 {
	h := uint64(fnvOffset)
	mix := func(x uint64) {
		h ^= x
		h *= fnvPrime
	}
	if k != nil {
		for _, v := range k {
			mix(v.lo)
			mix(v.hi)
		}
		return h
	}
	for _, f := range m {
		mix(f.value.lo)
		mix(f.value.hi)
	}
	return h
}

func (t *Table) matches(en *entry) bool {
	for i := range t.Keys {
		f := &en.match[i]
		v := t.kbuf[i]
		if t.Keys[i].Kind == Range {
			if v.cmp(f.lo) < 0 || v.cmp(f.hi) > 0 {
				return false
			}
			continue
		}
		if v.and(f.mask) != f.value {
			return false
		}
	}
	return true
}

// lookup returns the matching entry or nil.
func (t *Table) lookup(c *ctx) *entry {
	for i := range t.Keys {
		t.kbuf[i] = t.Keys[i].eval(c)
	}
	return t.search()
}

// search returns the entry matching the key in t.kbuf, or nil.
func (t *Table) search() *entry {
	if len(t.entries) == 0 {
		return nil // a table the control plane has not filled (or a keyless one): its default
	}
	if t.lpmIdx != nil {
		v := t.kbuf[0]
		for i := range t.lpmIdx {
			lv := &t.lpmIdx[i]
			if en, ok := lv.byKey[v.and(lv.mask)]; ok {
				return en
			}
		}
		return nil
	}
	if t.allExact {
		if len(t.kbuf) == 1 && t.kbuf[0].hi == 0 {
			// One exact key of at most 64 bits (a lock id, a server id, a port): hashKey of
			// that one value, and one comparison per candidate.
			v := t.kbuf[0].lo
			for _, en := range t.exactIdx[hashKey1(v)] {
				if f := &en.match[0]; v&f.mask.lo == f.value.lo && f.value.hi == 0 {
					return en
				}
			}
			return nil
		}
		for _, en := range t.exactIdx[hashKey(nil, t.kbuf)] {
			if t.matches(en) {
				return en
			}
		}
		return nil
	}
	for _, en := range t.entries {
		if t.matches(en) {
			return en
		}
	}
	return nil
}

const applyExit = -2

// choose returns the action to run for the entry a lookup found (nil on a miss), its data and
// the entry that counts as hit: nil on a miss or when an indirect entry resolves to no member
// (the default action runs then). A direct hit is counted in the entry's direct counter. The
// interpreter's apply and the generated code's Gen.Apply both choose through it.
func (t *Table) choose(c *ctx, en *entry) (int, []u128, *entry) {
	if en == nil {
		return t.defAction, t.defArgs, nil
	}
	if en.indirect != 0 {
		ai, args, ok := t.resolve(c, en)
		if !ok {
			return t.defAction, t.defArgs, nil
		}
		return ai, args, en
	}
	en.packets++
	en.bytes += uint64(c.pktLen())
	return en.action, en.args, en
}

// apply runs the table; it returns the hit entry's action index, -1 on a miss, or applyExit.
func (t *Table) apply(c *ctx) int {
	ai, args, en := t.choose(c, t.lookup(c))
	hit := en != nil
	a := t.actions[ai]
	if f := t.sw.cfg.OnTable; f != nil {
		f(t.Name, a.Name, hit)
	}
	for i := range a.Params {
		p := &a.Params[i]
		if p.Width < 64 {
			c.s[p.base] = args[i].lo & p.mask
			continue
		}
		writeSlot(c.s, p.base, p.Width, args[i])
	}
	prev := c.entry
	c.entry = en
	if c.actDepth == 0 {
		c.actInvocation++
	}
	c.actDepth++
	r := a.run(c)
	c.actDepth--
	c.entry = prev
	c.lastAction = ai
	if r == fExit {
		return applyExit
	}
	if hit {
		return ai
	}
	return -1
}
