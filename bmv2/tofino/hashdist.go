package tofino

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// This file counts what the tables of a table dependency graph take of a stage's hash
// distribution, and bounds the stages a pipe needs by it. What bf-p4c 9.13.4 (p4c-barefoot,
// backends/tofino/bf-p4c; read, not run) says, Tofino 1 and 2 alike: specs/mau_spec.h gives
// JBayMauSpec the TofinoIXBarSpec that TofinoMauSpec has, and IXBar::create
// (mau/input_xbar.cpp) makes a Tofino::IXBar (mau/tofino/input_xbar.cpp) for every target;
// the sources hold no other input crossbar.
//
//   - Hash distribution takes the low 48 bits of two of the stage's eight hash functions
//     (hash_dist_groups[HASH_DIST_UNITS = 2]), each in three 16-bit slices
//     (HASH_DIST_SLICES = 3, HASH_DIST_BITS = 16): six units of 16 bits a stage (the comment
//     of IXBar::allocHashDist: "unit = hash_function_input * 3 + 16b hash_dist input of
//     48b"). The input crossbar is one a stage for ingress and egress together:
//     TablePlacement::try_alloc_ixbar (mau/table_placement.cpp) allocates a table beside every
//     table of the stage whose gress shares the pipe (Device::threadsSharePipe, true on both
//     targets, specs/device.h), exclusive or not.
//   - A table's requests go one destination at a time (XBarHashDist::allocate_hash_dist, an
//     allocHashDist a destination). A hash an action uses as data reaches it through the
//     immediate bus: its bits in immediate bits 0-15 go to HD_IMMED_LO, those in 16-31 to
//     HD_IMMED_HI (XBarHashDist::immediate_inputs), all of the table's hashes in one half in
//     one request, one unit; so a table's hashes as data take one unit (16 bits or fewer in
//     all) or two. The index of a register action, counter or meter that is a field or a
//     hash, not a constant or an action parameter, is a request of its own: a field is made
//     an IDENTITY hash of it (StatefulAttachmentSetup::Scan::setup_index_operand,
//     find_hash_dist, create_hash_dist, mau/instruction_selection.cpp), bound for
//     HD_METER_ADR (registers, meters) or HD_STATS_ADR (counters), one unit; a meter sends
//     its index to HD_STATS_ADR too, for its color map RAM (XBarHashDist::build_req,
//     color_mapram_shift): two. An address wider than 16 bits takes one unit and 7 bits of
//     the third slice's range (allocHashDistWideAddress); the model counts one unit.
//   - A request shares the unit of one already allocated in the stage, another table's too,
//     when the destination, the inputs and algorithm (P4HashFunction::equiv_inputs_alg), the
//     bits and the shift are the same (allocate_hash_dist).
//   - The units of one function are in one hash function: its first request takes a slice of
//     one of the two and adds its input crossbar hash tables to that function
//     (lockInHashDistArrays), and the next request with those inputs overlaps it and may take
//     a slice of that one only (IXBar::getHashDistGroups). So a hash wider than 16 bits used
//     as data (HD_IMMED_LO and HD_IMMED_HI, the same inputs) takes two slices of one hash
//     function, a pair, and a stage holds at most two pairs: a third would need two slices
//     of a function that has one left.
//
// The model: per table, the hashes its actions use as data (each Hash.get that is not an
// index, counted once per table: ceil(bits/16) units, at most two, a pair when a single hash
// is wider than 16 bits) and each register action's, counter's and meter's index that is not
// a constant or a directionless parameter (one unit, a meter's a pair; a Hash.get index is
// that unit, not data). Two tables' requests are the same function, and may share a unit,
// when their destination kind, algorithm (the Hash instance's arguments), width and inputs
// (fields by path, slices by bits) are the same, and for an index the register's cell width
// (the address's shift) or the counter's type. Not modelled: hash_action tables (a table
// with a key that the compiler addresses by a hash of the key, DoTableLayout::
// can_be_hash_action, whose address and direct attachments then take units: the model does
// not size tables), selectors (HD_HASHMOD), action data addresses (HD_ACTIONDATA_ADR), Lpf and
// Wred indexes, an index the compiler splits over stages (chained addresses, shared with
// nothing), the galois matrix bits within a hash function, the input crossbar bytes of the
// hashes' inputs (128 exact-match bytes a stage, the match keys' too), the allocator's greedy
// order (getHashDistGroups offers the first hash function with a free slice, so a pair can
// fail where another order fits), a hash in a key or an if's condition (the compiler first
// computes it in a table of its own), a hash an action writes to a field that the same action
// uses as an index (counted as data and as an index; the TNA program has none), and two
// CRCPolynomial instances of equal parameters (different algorithms here). The count is what
// a stage must hold at least; the bound below is a bound.

// HashDistUnits and HashDistPairs are a stage's hash distribution: six 16-bit units, in two
// hash functions of three, so at most two requests of two units of one function.
const (
	HashDistUnits = 6
	HashDistPairs = 2
)

// hdUse is one function a table sends through hash distribution: units 1, or 2 (two units in
// one hash function). key names what may share a unit with another table's in one stage.
type hdUse struct {
	key   string
	units int
}

// HashDistUnits returns the hash distribution units the table takes (HashDistBound).
func (t *Table) HashDistUnits() int {
	n := 0
	for _, u := range t.hdUses() {
		n += u.units
	}
	return n
}

// hdUses is what t sends through hash distribution: its immediate data's hashes and its
// indexes.
func (t *Table) hdUses() []hdUse {
	var uses []hdUse
	for _, u := range t.hdIndex {
		// one address per attached table and table, whatever the action (bf-p4c refuses
		// two: "Incompatible attached indexing between actions")
		if !slices.Contains(uses, u) {
			uses = append(uses, u)
		}
	}
	bits, wide := 0, ""
	var keys []string
	for _, h := range t.hdImm {
		if slices.Contains(keys, h.key) {
			continue // the same function in another action: counted once (a bound)
		}
		bits += h.bits
		keys = append(keys, h.key)
		if h.bits > 16 {
			wide = h.key
		}
	}
	switch units := min((bits+15)/16, 2); {
	case units == 0:
	case wide != "":
		// a hash wider than 16 bits: its halves, the same inputs, in one hash function
		uses = append(uses, hdUse{"imm/" + wide, 2})
	case units == len(keys):
		// one 16-bit half each at most
		for _, k := range keys {
			uses = append(uses, hdUse{"imm/" + k, 1})
		}
	default:
		// several hashes in a half: the half's requests together
		slices.Sort(keys)
		for i := 0; i < units; i++ {
			uses = append(uses, hdUse{fmt.Sprintf("imm%d/%s", i, strings.Join(keys, "+")), 1})
		}
	}
	return uses
}

// immHash is a hash an action uses as data: its function and bits.
type immHash struct {
	key  string
	bits int
}

// hashGet reports whether call is a Hash's get.
func hashGet(call *front.CallExpr) bool {
	m, ok := call.Callee.(*front.MethodDecl)
	return ok && m.Owner != nil && m.Owner.Name == "Hash" && m.Name == "get"
}

// hashKey names a Hash.get's function as bf-p4c compares two for sharing a unit
// (P4HashFunction::equiv_inputs_alg): its algorithm (the instance's arguments) and its inputs.
// Its width is left out: a request's bits are compared too, which a bound need not follow.
func (b *graphBuilder) hashKey(call *front.CallExpr) string {
	var alg []string
	if m, ok := call.Fun.(*front.MemberExpr); ok {
		if inst := instanceOf(m.X); inst != nil {
			for _, a := range inst.Args {
				alg = append(alg, front.ExprString(a.Value))
			}
		}
	}
	var in []string
	for _, a := range call.Args {
		in = append(in, b.exprKey(a.Value))
	}
	return strings.Join(alg, ",") + "/" + strings.Join(in, ",")
}

// exprKey names the value e denotes: its fields by their paths (an inlined control's
// parameters the arguments), their slices by their bits.
func (b *graphBuilder) exprKey(e front.Expr) string {
	switch x := e.(type) {
	case *front.ListExpr:
		var s []string
		for _, el := range x.Elems {
			s = append(s, b.exprKey(el))
		}
		return "{" + strings.Join(s, ",") + "}"
	case *front.SliceExpr:
		return fmt.Sprintf("%s[%d:%d]", b.exprKey(x.X), x.HiV, x.LoV)
	case *front.CastExpr:
		return fmt.Sprintf("(%d)%s", front.WidthOf(x.Type()), b.exprKey(x.X))
	case *front.CallExpr:
		if hashGet(x) {
			return "hash(" + b.hashKey(x) + ")"
		}
	case *front.NameExpr, *front.MemberExpr:
		if p, ok := b.fieldPath(e); ok {
			return p
		}
	}
	return front.ExprString(e)
}

// hashDistUses records what an extern's method call in t's actions sends through hash
// distribution: a Hash.get is immediate data unless it is an index (b.index); a register
// action's, counter's or meter's index that is not a constant is a request of its own.
func (b *graphBuilder) hashDistUses(call *front.CallExpr, m *front.MemberExpr, t *Table) {
	if t.Kind == TGateway || b.noHD {
		return
	}
	if hashGet(call) {
		if !b.index[call] {
			w := 0
			if ty := call.Type(); ty != nil {
				w = front.WidthOf(ty)
			}
			t.hdImm = append(t.hdImm, immHash{b.hashKey(call), w})
		}
		return
	}
	inst := instanceOf(m.X)
	if inst == nil || len(call.Args) == 0 {
		return
	}
	var dest string
	units := 1
	switch ext := externName(inst); {
	case ext == "RegisterAction" && m.Name == "execute":
		// the shift of the address depends on the register's cell width
		if len(inst.Args) > 0 {
			if reg := instanceOf(inst.Args[0].Value); reg != nil {
				_, bits := registerSize(reg)
				dest = fmt.Sprintf("meter_adr/reg%d", bits)
			}
		}
	case ext == "Counter" && m.Name == "count":
		var args []string
		for _, a := range inst.Args {
			args = append(args, front.ExprString(a.Value))
		}
		dest = "stats_adr/" + strings.Join(args, ",")
	case ext == "Meter" && m.Name == "execute":
		dest, units = "meter_adr/meter", 2 // and the color map RAM's HD_STATS_ADR
	}
	if dest == "" {
		return
	}
	args := call.Ordered
	if args == nil {
		args = call.Args
	}
	if len(args) == 0 || args[0] == nil {
		return
	}
	idx := args[0].Value
	for {
		c, ok := idx.(*front.CastExpr)
		if !ok {
			break
		}
		idx = c.X
	}
	if _, ok := b.consts[idx]; ok {
		return // an address from the action: no hash
	}
	switch x := idx.(type) {
	case *front.IntExpr:
		return
	case *front.NameExpr:
		if _, ok := x.Decl.(*front.ConstDecl); ok {
			return
		}
		if p, ok := x.Decl.(*front.Param); ok && p.Dir == front.DirNone {
			// a table's action parameter: the entry's address; or an action's called from
			// the apply block, bound to its argument, which the model does not follow
			return
		}
	case *front.CallExpr:
		if hashGet(x) {
			b.index[x] = true
		}
	}
	t.hdIndex = append(t.hdIndex, hdUse{dest + "/" + b.exprKey(idx), units})
}

// HashDistUse is what the tables of a pipe's graphs take of hash distribution: the tables that
// send something through it, their units (each table's own, HashDistUnits of Table), how many
// of those are pairs, HashDistBound, and Apart, the same bound with no unit shared between
// tables (bf-p4c shares one only between tables it happens to place in one stage).
type HashDistUse struct {
	Tables, Units, Pairs int
	Bound, Apart         int
}

// HashDistOf counts the hash distribution the tables of graphs take and bounds their stages.
func HashDistOf(graphs ...*Graph) HashDistUse {
	var u HashDistUse
	for _, g := range graphs {
		if g == nil {
			continue
		}
		for _, t := range g.Tables {
			uses := t.hdUses()
			if len(uses) > 0 {
				u.Tables++
			}
			for _, x := range uses {
				u.Units += x.units
				if x.units == 2 {
					u.Pairs++
				}
			}
		}
	}
	u.Bound = HashDistBound(graphs...)
	u.Apart = hdModel{noShare: true}.bound(graphs...)
	return u
}

// tails computes, for every table of g, the stages the dependencies need after it: a table
// that must go at least c stages after t adds c to that table's own (the latest stage of t
// in a layout of S stages is S - 1 - tail). The rules are the ones stages() applies forwards:
// a dependency's cost, a table no earlier than the one it runs under, and next-table
// injection (every table of the injecting table's subtree no later than the table injected).
func (g *Graph) tails() []int {
	tail := make([]int, len(g.Tables))
	for i := len(g.Tables) - 1; i >= 0; i-- {
		t := g.Tables[i]
		if t.ctl != nil {
			tail[t.ctl.idx] = max(tail[t.ctl.idx], tail[i])
		}
		for _, e := range t.in {
			if e.inject {
				for _, x := range g.Tables[e.from.idx:e.from.end] {
					tail[x.idx] = max(tail[x.idx], tail[i])
				}
				continue
			}
			tail[e.from.idx] = max(tail[e.from.idx], tail[i]+e.cost)
		}
	}
	return tail
}

// HashDistBound is the fewest stages, no fewer than the graphs' critical paths, in which the
// tables of the graphs (a pipe's ingress and egress, which share a stage's input crossbar)
// find the hash distribution they need (hdUses). In a layout of S stages a table goes no
// earlier than its earliest stage (Table.Stage) and no later than S - 1 minus the stages the
// dependencies after it need (tails); for every window of k stages, the tables that can go
// nowhere else take at most 6k units and 2k pairs (HashDistUnits, HashDistPairs), the
// requests that may share a unit (the same function and destination, in any of the window's
// tables) counted once. It is a bound, not a placement: each window is checked alone, and the
// tables' other resources (logical IDs: StageBound) are not.
func HashDistBound(graphs ...*Graph) int {
	return hdModel{}.bound(graphs...)
}

// hdModel turns rules of the bound off, for the tests' negative controls: noShare counts
// every table's requests apart (as a placement that never puts two tables with the same hash
// in one stage needs them).
type hdModel struct {
	noShare bool
}

func (m hdModel) bound(graphs ...*Graph) int {
	type item struct {
		earliest, tail int
		uses           []hdUse
	}
	var items []item
	chain := 0
	for _, g := range graphs {
		if g == nil {
			continue
		}
		chain = max(chain, g.Stages)
		tail := g.tails()
		for i, t := range g.Tables {
			if u := t.hdUses(); len(u) > 0 {
				items = append(items, item{t.Stage, tail[i], u})
			}
		}
	}
	fits := func(stages int) bool {
		for a := 0; a < stages; a++ {
			for b := a; b < stages; b++ {
				units := map[string]int{}
				for i, it := range items {
					if it.earliest >= a && stages-1-it.tail <= b {
						for _, u := range it.uses {
							k := u.key
							if m.noShare {
								k = fmt.Sprintf("%d/%s", i, k)
							}
							units[k] = max(units[k], u.units)
						}
					}
				}
				n, pairs := 0, 0
				for _, u := range units {
					n += u
					if u == 2 {
						pairs++
					}
				}
				k := b - a + 1
				if n > HashDistUnits*k || pairs > HashDistPairs*k {
					return false
				}
			}
		}
		return true
	}
	s := chain
	for !fits(s) {
		s++
	}
	return s
}
