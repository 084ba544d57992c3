package p4rt

import (
	"math/big"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// Registers whose cells are structs of bitstrings (TNA's pairs, Register<pair, _>) travel as
// P4Data structs, one bitstring per member; devices hold such a cell as one bitstring of the
// members concatenated, the first member most significant.

// structFields returns the member widths of a register type that is a struct of bit<W> or
// int<W> members, or nil.
func structFields(info *p4configv1.P4Info, ts *p4configv1.P4DataTypeSpec) []int {
	st := ts.GetStruct()
	if st == nil {
		return nil
	}
	spec := info.GetTypeInfo().GetStructs()[st.GetName()]
	if spec == nil || len(spec.GetMembers()) == 0 {
		return nil
	}
	var ws []int
	for _, m := range spec.GetMembers() {
		bs := m.GetTypeSpec().GetBitstring()
		switch {
		case bs.GetBit() != nil:
			ws = append(ws, int(bs.GetBit().GetBitwidth()))
		case bs.GetInt() != nil:
			ws = append(ws, int(bs.GetInt().GetBitwidth()))
		default:
			return nil
		}
	}
	return ws
}

// packStruct checks a struct P4Data against the member widths and concatenates the members
// into the canonical bitstring of the cell.
func packStruct(d *p4v1.P4Data, fields []int, name string) ([]byte, error) {
	members := d.GetStruct().GetMembers()
	if d.GetStruct() == nil || len(members) != len(fields) {
		return nil, invalid("register %s: data must be a struct of %d bitstrings", name, len(fields))
	}
	v := new(big.Int)
	for i, m := range members {
		bs, ok := m.GetData().(*p4v1.P4Data_Bitstring)
		if !ok {
			return nil, invalid("register %s: member %d must be a bitstring", name, i+1)
		}
		c, err := Canonical(bs.Bitstring, fields[i])
		if err != nil {
			return nil, invalid("register %s: member %d: %s", name, i+1, err.Error())
		}
		v.Lsh(v, uint(fields[i]))
		v.Or(v, new(big.Int).SetBytes(c))
	}
	if v.Sign() == 0 {
		return []byte{0}, nil
	}
	return v.Bytes(), nil
}

// splitStruct turns a cell's bitstring back into a struct P4Data.
func splitStruct(b []byte, fields []int) *p4v1.P4Data {
	v := new(big.Int).SetBytes(b)
	members := make([]*p4v1.P4Data, len(fields))
	for i := len(fields) - 1; i >= 0; i-- {
		m := new(big.Int).And(v, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(fields[i])), big.NewInt(1)))
		v.Rsh(v, uint(fields[i]))
		c := m.Bytes()
		if len(c) == 0 {
			c = []byte{0}
		}
		members[i] = &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: c}}
	}
	return &p4v1.P4Data{Data: &p4v1.P4Data_Struct{Struct: &p4v1.P4StructLike{Members: members}}}
}
