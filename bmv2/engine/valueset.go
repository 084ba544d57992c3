package engine

import (
	"fmt"

	"github.com/netlock-go/netlock/bmv2/front"
)

// ValueSet is a parser value set (value_set<T>(size) name; in a parser): the members the control
// plane sets, at most Size of them, each a match on every field of T (structs and tuples
// flattened in order, one field per select key). A select case whose keyset is the value set
// matches when any member matches all the keys; with no members it matches nothing.
type ValueSet struct {
	Name   string // the control-plane name (the parser instance's path and the set's name)
	ID     uint32 // the P4Info id (0 when the program has no P4Info)
	Size   int
	Fields []ValueSetField
	// members are the members in the order set; each holds one element per field.
	members [][]keysetElem
	api     [][]FieldMatch
}

// ValueSetField is one field of a value set's element type: its width and how a member matches
// it (a struct field's @match annotation: exact unless it says ternary, lpm, range or optional).
type ValueSetField struct {
	Name  string
	Width int
	Kind  MatchKind
}

// SetMembers replaces the members (P4Runtime's ValueSetEntry). Each member has one FieldMatch
// per field, in field order, read as for a table entry of that match kind: Value (and Mask for
// ternary and optional, PrefixLen for lpm), Low and High for range.
func (v *ValueSet) SetMembers(ms [][]FieldMatch) error {
	if len(ms) > v.Size {
		return fmt.Errorf("%w: value set %s holds %d members, not %d", ErrInvalid, v.Name, v.Size, len(ms))
	}
	members := make([][]keysetElem, 0, len(ms))
	api := make([][]FieldMatch, 0, len(ms))
	for i, m := range ms {
		if len(m) != len(v.Fields) {
			return fmt.Errorf("%w: value set %s: member %d has %d fields, the set %d", ErrInvalid, v.Name, i, len(m), len(v.Fields))
		}
		elems := make([]keysetElem, len(m))
		for j, fm := range m {
			f := v.Fields[j]
			full := mask128(f.Width)
			e := keysetElem{val: fromBytes(fm.Value).trunc(f.Width), mask: full}
			switch f.Kind {
			case Ternary:
				e.mask = fromBytes(fm.Mask).trunc(f.Width)
			case Optional:
				if fm.Mask != nil && fromBytes(fm.Mask).isZero() {
					e.mask = u128{}
				}
			case LPM:
				if fm.PrefixLen < 0 || fm.PrefixLen > f.Width {
					return fmt.Errorf("%w: value set %s: prefix length %d for a %d-bit field", ErrInvalid, v.Name, fm.PrefixLen, f.Width)
				}
				e.mask = full.and(mask128(f.Width - fm.PrefixLen).not())
			case Range:
				e = keysetElem{rng: true, lo: fromBytes(fm.Low).trunc(f.Width), hi: fromBytes(fm.High).trunc(f.Width)}
			}
			e.val = e.val.and(e.mask)
			elems[j] = e
		}
		members = append(members, elems)
		api = append(api, append([]FieldMatch(nil), m...))
	}
	v.members, v.api = members, api
	return nil
}

// Members returns the members as SetMembers took them.
func (v *ValueSet) Members() [][]FieldMatch { return v.api }

// match reports whether a member matches the select keys' values.
func (v *ValueSet) match(vals []u128) bool {
outer:
	for _, m := range v.members {
		for j, e := range m {
			x := vals[j]
			if e.rng {
				if x.cmp(e.lo) < 0 || x.cmp(e.hi) > 0 {
					continue outer
				}
			} else if x.and(e.mask) != e.val {
				continue outer
			}
		}
		return true
	}
	return false
}

// ValueSets lists the parser value sets of the program's parser instances.
func (s *Switch) ValueSets() []*ValueSet { return s.valueSets }

// ValueSet finds a value set by name (exactly, or as a unique suffix after a dot).
func (s *Switch) ValueSet(name string) (*ValueSet, error) {
	return lookupName("value set", name, s.valueSets, func(v *ValueSet) string { return v.Name })
}

// valueSet creates the value set a parser instance declares.
func (cp *compiler) valueSet(sc *scope, d *front.ValueSetDecl) *ValueSet {
	name := cpName(sc.prefix, d.Annos, d.Name)
	v := &ValueSet{Name: name, ID: cp.ids[name], Size: d.N}
	var add func(fname string, annos front.Annotations, t front.Type)
	add = func(fname string, annos front.Annotations, t front.Type) {
		switch x := under(t).(type) {
		case *front.StructType:
			for _, f := range x.Fields {
				add(f.Name, f.Annos, f.T)
			}
			return
		case *front.TupleType:
			for _, e := range x.Elems {
				add("", nil, e)
			}
			return
		}
		w := widthOf(t)
		if w <= 0 || w > 128 {
			cp.fail(d.P, "not supported by the netlock engine: value set %s with a field of %s", d.Name, t)
		}
		kind := Exact
		if a := annos.Get("match"); a != nil && len(a.Args) == 1 {
			switch a.Args[0].Text {
			case "exact":
			case "ternary":
				kind = Ternary
			case "lpm":
				kind = LPM
			case "range":
				kind = Range
			case "optional":
				kind = Optional
			default:
				cp.fail(a.P, "not supported by the netlock engine: value set %s: @match(%s)", d.Name, a.Args[0].Text)
			}
		}
		v.Fields = append(v.Fields, ValueSetField{Name: fname, Width: w, Kind: kind})
	}
	add("", nil, d.T)
	cp.sw.valueSets = append(cp.sw.valueSets, v)
	sc.m[d] = &binding{kind: bExtern, obj: v}
	return v
}
