package engine

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

type blockInst struct {
	fr *frame
	// A control with extern parameters is compiled at its (single) call site, once the
	// extern arguments are known.
	scope   *scope
	decl    *front.ControlDecl
	externs map[*front.Param]*binding
}

func hasExternParam(ps []*front.Param) bool {
	for _, p := range ps {
		if isExtern(p.T) {
			if et, ok := under(p.T).(*front.ExternType); ok && et.Decl.Name != "packet_in" && et.Decl.Name != "packet_out" {
				return true
			}
		}
	}
	return false
}

// bindExterns binds the extern arguments of a call to a control with extern parameters and
// compiles its body on the first call.
func (cp *compiler) bindExterns(sc *scope, bi *blockInst, call *front.CallExpr) {
	if bi.decl == nil || !hasExternParam(bi.decl.Params) {
		return
	}
	named := len(call.Args) > 0 && call.Args[0].Name != ""
	for i, p := range bi.decl.Params {
		if !isExtern(p.T) {
			continue
		}
		var e front.Expr
		for _, a := range call.Args {
			if named && a.Name == p.Name {
				e = a.Value
			}
		}
		if !named && i < len(call.Args) {
			e = call.Args[i].Value
		}
		n, ok := e.(*front.NameExpr)
		if !ok {
			continue
		}
		b := sc.lookup(n.Decl)
		if b == nil || b.kind != bExtern {
			continue
		}
		if prev, ok := bi.externs[p]; ok && prev.obj != b.obj {
			cp.fail(call.Position(), "not supported by the netlock engine: one control instance called with different extern arguments")
		}
		if bi.externs == nil {
			bi.externs = map[*front.Param]*binding{}
		}
		bi.externs[p] = b
		bi.scope.m[p] = b
	}
	if bi.fr.body == nil {
		bi.fr.body = cp.control(bi.scope, bi.decl)
	}
}

func isExtern(t front.Type) bool {
	_, ok := under(t).(*front.ExternType)
	return ok
}

// instance creates an extern object or a sub-block for a local instance declaration.
func (cp *compiler) instance(sc *scope, d *front.InstanceDecl) {
	name := cpName(sc.prefix, d.Annos, d.Name)
	switch t := d.T.(type) {
	case *front.ExternType:
		arg := func(i int) uint64 {
			if i < len(d.Args) {
				if v, ok := cp.checked.Const[d.Args[i].Value]; ok {
					if x, ok := cp.valueU128(v); ok {
						return x.lo
					}
				}
			}
			return 0
		}
		argName := func(i int) string {
			if i < len(d.Args) {
				if m, ok := d.Args[i].Value.(*front.MemberExpr); ok {
					return m.Name
				}
			}
			return ""
		}
		id := cp.ids[name]
		var obj any
		switch t.Decl.Name {
		case "register":
			w := 0
			if len(t.Args) > 0 {
				w = widthOf(t.Args[0])
			}
			if w > 128 || w == 0 {
				cp.fail(d.P, "not supported by the netlock engine: register of %v", t.Args)
			}
			cp.reserve(d.P, "register "+name, arg(0), cellBytes(w, true))
			r := newRegister(name, id, w, int(arg(0)), true)
			cp.sw.registers = append(cp.sw.registers, r)
			obj = r
		case "counter":
			n := arg(0)
			cp.reserve(d.P, "counter "+name, n, counterCellBytes)
			k := &Counter{Name: name, ID: id, Packets: make([]uint64, n), Bytes: make([]uint64, n)}
			cp.sw.counters = append(cp.sw.counters, k)
			obj = k
		case "direct_counter":
			k := &Counter{Name: name, ID: id, direct: true}
			cp.sw.counters = append(cp.sw.counters, k)
			obj = k
		case "meter":
			cp.reserve(d.P, "meter "+name, arg(0), meterCellBytes)
			m := &Meter{sw: cp.sw, Name: name, ID: id, cells: make([]meterState, arg(0)), bytes: argName(1) == "bytes"}
			cp.sw.meters = append(cp.sw.meters, m)
			obj = m
		case "direct_meter":
			m := &Meter{sw: cp.sw, Name: name, ID: id, direct: true, bytes: argName(0) == "bytes"}
			cp.sw.meters = append(cp.sw.meters, m)
			obj = m
		case "action_profile", "action_selector":
			obj = cp.newProfile(name, t.Decl.Name, d.Args, d.P)
		default:
			if front.IsTNADecl(t.Decl) {
				obj = cp.tnaInstance(sc, d, t, name, id) // tna_externs.go
				break
			}
			cp.fail(d.P, "not supported by the netlock engine: extern %s", t.Decl.Name)
		}
		sc.m[d] = &binding{kind: bExtern, t: t, obj: obj}
	case *front.ControlType:
		inner := &scope{m: map[front.Decl]*binding{}, prefix: name, actions: map[*front.ActionDecl]*Action{}, parent: cp.root}
		cp.bindCtor(inner, sc, t.Decl.CtorParams, d.Args)
		fr := cp.newFrame(t.Decl.Params, inner, nil)
		bi := &blockInst{fr: fr, scope: inner, decl: t.Decl}
		if !hasExternParam(t.Decl.Params) {
			fr.body = cp.control(inner, t.Decl)
		}
		sc.m[d] = &binding{kind: bBlock, obj: bi}
	case *front.ParserType:
		inner := &scope{m: map[front.Decl]*binding{}, prefix: name, actions: map[*front.ActionDecl]*Action{}, parent: cp.root}
		cp.bindCtor(inner, sc, t.Decl.CtorParams, d.Args)
		fr := cp.newFrame(t.Decl.Params, inner, nil)
		fr.body = cp.parser(inner, t.Decl)
		sc.m[d] = &binding{kind: bBlock, obj: &blockInst{fr: fr}}
	default:
		cp.fail(d.P, "not supported by the netlock engine: instance of %s", d.T)
	}
}

func (cp *compiler) bindCtor(inner, outer *scope, params []*front.Param, args []*front.Arg) {
	for i, p := range params {
		e := front.CtorArg(params, args, i)
		if e == nil {
			continue
		}
		if v, ok := cp.checked.Const[e]; ok {
			if x, ok := cp.valueU128(v); ok {
				inner.m[p] = &binding{kind: bConst, t: p.T, val: x, cval: v}
				continue
			}
		}
		if n, ok := e.(*front.NameExpr); ok {
			if b := outer.lookup(n.Decl); b != nil {
				inner.m[p] = b
				continue
			}
		}
		cp.fail(e.Position(), "not supported by the netlock engine: constructor argument %s", front.ExprString(e))
	}
}

// locals compiles the local declarations of a parser or control and returns their
// per-invocation initialization.
func (cp *compiler) locals(sc *scope, ls []front.Decl) []stmtFn {
	var init []stmtFn
	for _, l := range ls {
		switch d := l.(type) {
		case *front.VarDecl:
			init = append(init, cp.declVar(sc, d))
		case *front.ConstDecl:
			init = append(init, cp.stmt(sc, &front.DeclStmt{P: d.P, Decl: d}))
		case *front.InstanceDecl:
			cp.instance(sc, d)
		case *front.ValueSetDecl:
			cp.valueSet(sc, d)
		}
	}
	for _, l := range ls {
		if d, ok := l.(*front.TableDecl); ok {
			cp.table(sc, d)
		}
	}
	return init
}

func (cp *compiler) control(sc *scope, d *front.ControlDecl) stmtFn {
	init := cp.locals(sc, d.Locals)
	body := cp.block(sc, d.Body)
	all := seq(append(init, body))
	return func(c *ctx) flow {
		r := all(c)
		if r == fExit {
			return fExit
		}
		return fNext
	}
}

const (
	stAccept = -1
	stReject = -2
)

func (cp *compiler) parser(sc *scope, d *front.ParserDecl) stmtFn {
	init := seq(cp.locals(sc, d.Locals))
	index := map[string]int{"accept": stAccept, "reject": stReject}
	for i, s := range d.States {
		index[s.Name] = i
	}
	type state struct {
		body  stmtFn
		trans func(*ctx) int
	}
	states := make([]state, len(d.States))
	for i, s := range d.States {
		inner := sc.child()
		states[i].body = seq(cp.stmts(inner, s.Stmts))
		tr := s.Trans
		switch {
		case tr == nil:
			states[i].trans = func(*ctx) int { return stReject }
		case tr.Target != nil:
			n := index[tr.Target.Name]
			states[i].trans = func(*ctx) int { return n }
		default:
			states[i].trans = cp.selectFn(inner, tr.Select, index)
		}
	}
	start := index["start"]
	return func(c *ctx) flow {
		init(c)
		st := start
		for steps := 0; steps < 10000; steps++ {
			switch st {
			case stAccept:
				return fNext
			case stReject:
				return fExit
			}
			s := &states[st]
			if r := s.body(c); r != fNext || c.perr != 0 {
				return fExit
			}
			st = s.trans(c)
			if c.perr != 0 {
				return fExit
			}
		}
		c.perr = cp.errCode("ParserTimeout")
		return fExit
	}
}

type keysetElem struct {
	any       bool
	rng       bool
	val, mask u128
	lo, hi    u128
}

func (cp *compiler) selectFn(sc *scope, se *front.SelectExpr, index map[string]int) func(*ctx) int {
	var keys []scalarFn
	var widths []int
	for _, k := range se.Keys {
		keys = append(keys, cp.scalarOf(sc, k, nil))
		widths = append(widths, widthOf(k.Type()))
	}
	type cs struct {
		elems []keysetElem
		set   *ValueSet // a value set as the keyset: any of its members
		next  int
	}
	var cases []cs
	for _, c := range se.Cases {
		next, ok := index[c.State.Name]
		if !ok {
			cp.fail(c.P, "engine: unknown state %s", c.State.Name)
		}
		if n, ok := c.Keyset[0].(*front.NameExpr); ok && len(c.Keyset) == 1 {
			if vd, ok := n.Decl.(*front.ValueSetDecl); ok {
				b := sc.lookup(vd)
				vs, _ := b.objOrNil().(*ValueSet)
				if vs == nil || len(vs.Fields) != len(keys) {
					cp.fail(c.P, "engine: value set %s does not fit the select", vd.Name)
				}
				cases = append(cases, cs{set: vs, next: next})
				continue
			}
		}
		var elems []keysetElem
		ks := c.Keyset
		if len(ks) == 1 && len(keys) > 1 {
			if l, ok := ks[0].(*front.ListExpr); ok {
				ks = l.Elems
			}
		}
		for i, k := range ks {
			w := 128
			if i < len(widths) {
				w = widths[i]
			}
			elems = append(elems, cp.keysetElem(sc, k, w))
		}
		if len(ks) == 1 && elems[0].any {
			elems = nil
		}
		cases = append(cases, cs{elems: elems, next: next})
	}
	vals := make([]u128, len(keys))
	return func(c *ctx) int {
		for i, k := range keys {
			vals[i] = k(c)
		}
	outer:
		for i := range cases {
			if vs := cases[i].set; vs != nil {
				if vs.match(vals) {
					return cases[i].next
				}
				continue
			}
			for j, e := range cases[i].elems {
				v := vals[j]
				switch {
				case e.any:
				case e.rng:
					if v.cmp(e.lo) < 0 || v.cmp(e.hi) > 0 {
						continue outer
					}
				default:
					if v.and(e.mask) != e.val {
						continue outer
					}
				}
			}
			return cases[i].next
		}
		// No case matches and there is no default: bmv2's ParseState::find_next_state returns
		// the state's default next state, which p4c-bm2-ss leaves null, and the parser stops
		// there with no error (real simple_switch: parser.stf, 2026-11-28), as at an explicit
		// reject. The P4 spec's error.NoMatch is what TNA's parser reports (tna.go: a parser
		// that exits this way).
		return stReject
	}
}

func (cp *compiler) keysetElem(sc *scope, e front.Expr, w int) keysetElem {
	switch x := e.(type) {
	case *front.DefaultExpr, *front.DontCareExpr:
		return keysetElem{any: true}
	case *front.MaskExpr:
		v, m := cp.constScalar(sc, x.X).trunc(w), cp.constScalar(sc, x.Y).trunc(w)
		return keysetElem{val: v.and(m), mask: m}
	case *front.RangeExpr:
		return keysetElem{rng: true, lo: cp.constScalar(sc, x.X).trunc(w), hi: cp.constScalar(sc, x.Y).trunc(w)}
	}
	return keysetElem{val: cp.constScalar(sc, e).trunc(w), mask: mask128(w)}
}

// table compiles a table declaration of a control instance.
func (cp *compiler) table(sc *scope, d *front.TableDecl) {
	t := &Table{Name: cpName(sc.prefix, d.Annos, d.Name), sw: cp.sw, defAction: 0}
	t.ID = cp.ids[t.Name]
	sc.m[d] = &binding{kind: bTable, obj: t}
	cp.sw.tables = append(cp.sw.tables, t)
	t.allExact = true
	if p := d.Prop("key"); p != nil {
		for _, k := range p.Keys {
			if k.MatchKind == "selector" {
				t.selector = append(t.selector, cp.flatten(sc, k.Expr)...)
				continue
			}
			// TNA's atcam_partition_index is an exact match on the partition index.
			kind := map[string]MatchKind{"exact": Exact, "lpm": LPM, "ternary": Ternary, "range": Range, "optional": Optional, "atcam_partition_index": Exact}[k.MatchKind]
			if kind == 0 {
				cp.fail(k.P, "not supported by the netlock engine: match kind %s", k.MatchKind)
			}
			if kind != Exact {
				t.allExact = false
			}
			kname := front.KeyName(k.Expr)
			if a := k.Annos.Get("name"); a != nil {
				if n, ok := a.StringArg(); ok {
					kname = n
				}
			}
			t.Keys = append(t.Keys, KeyField{Name: kname, ID: uint32(len(t.Keys) + 1), Kind: kind, Width: widthOf(k.Expr.Type()), eval: cp.scalarOf(sc, k.Expr, nil)})
		}
	}
	t.kbuf = make([]u128, len(t.Keys))
	refIndex := map[*front.ActionDecl]int{}
	if p := d.Prop("actions"); p != nil {
		for _, ar := range p.Actions {
			refIndex[ar.Action] = len(t.actions)
			t.actions = append(t.actions, cp.boundAction(sc, ar))
		}
	}
	argsOf := func(ar *front.ActionRef, a *Action) []u128 {
		n := len(a.Params)
		var out []u128
		for i := len(ar.Args) - n; i < len(ar.Args); i++ {
			if i < 0 {
				continue
			}
			out = append(out, cp.constScalar(sc, ar.Args[i].Value).trunc(a.Params[len(out)].Width))
		}
		for len(out) < n {
			out = append(out, u128{})
		}
		return out
	}
	if p := d.Prop("default_action"); p != nil && len(p.Actions) == 1 {
		ar := p.Actions[0]
		i, ok := refIndex[ar.Action]
		if !ok {
			i = len(t.actions)
			t.actions = append(t.actions, cp.boundAction(sc, ar))
		}
		t.defAction, t.defArgs, t.defConst = i, argsOf(ar, t.actions[i]), p.Const
	} else {
		var na *front.ActionDecl
		for _, g := range cp.checked.Globals["NoAction"] {
			if a, ok := g.(*front.ActionDecl); ok {
				na = a
			}
		}
		i, ok := refIndex[na]
		if !ok {
			i = len(t.actions)
			t.actions = append(t.actions, cp.action(sc, na))
		}
		t.defAction = i
	}
	t.progDefAction, t.progDefArgs = t.defAction, t.defArgs
	if p := d.Prop("size"); p != nil {
		if v, ok := cp.checked.Const[p.Value].(*big.Int); ok {
			t.Size = int(v.Int64())
		}
	}
	for _, pn := range []string{"counters", "meters"} {
		if p := d.Prop(pn); p != nil {
			n, ok := p.Value.(*front.NameExpr)
			var b *binding
			if ok {
				b = sc.lookup(n.Decl)
			}
			if b == nil || b.kind != bExtern {
				cp.fail(p.P, "not supported by the netlock engine: table %s = %s", pn, front.ExprString(p.Value))
			}
			switch o := b.obj.(type) {
			case *Counter:
				t.counter = o
			case *Meter:
				t.meter = o
			}
		}
	}
	if p := d.Prop("implementation"); p != nil && !cp.tnaStorageOnly(sc, p) {
		t.profile = cp.profileOf(sc, d, p)
		t.profile.tables = append(t.profile.tables, t)
	}
	if t.profile == nil || !t.profile.Selector {
		t.selector = nil // selector keys without an action selector select nothing
	}
	t.entryCost = t.EntryBytes()
	if p := d.Prop("entries"); p != nil {
		cp.reserve(p.P, "the entries of table "+t.Name, uint64(len(p.Entries)), uint64(t.entryCost))
		prios := cp.entryPriorities(p.Entries)
		for i, en := range p.Entries {
			ai, ok := refIndex[en.Action.Action]
			if !ok {
				cp.fail(en.P, "engine: entry action not in the table's actions")
			}
			a := t.actions[ai]
			ent := &entry{action: ai, args: argsOf(en.Action, a), priority: prios[i], match: make([]fieldMatch, len(t.Keys))}
			keys := en.Keys
			if len(keys) == 1 && len(t.Keys) > 1 {
				if l, ok := keys[0].(*front.ListExpr); ok {
					keys = l.Elems
				}
			}
			for k, ke := range keys {
				if k >= len(t.Keys) {
					break
				}
				w := t.Keys[k].Width
				ks := cp.keysetElem(sc, ke, w)
				var fm fieldMatch
				switch {
				case ks.any:
					if t.Keys[k].Kind == Range {
						fm.hi = mask128(w)
					}
				case ks.rng:
					fm.lo, fm.hi = ks.lo, ks.hi
				default:
					fm.value, fm.mask = ks.val, ks.mask
					if t.Keys[k].Kind == Range {
						fm.lo, fm.hi = ks.val, ks.val
					}
					if t.Keys[k].Kind == LPM {
						fm.plen = onesCount(ks.mask)
					}
				}
				ent.match[k] = fm
			}
			if t.lpmOnly() {
				for _, fm := range ent.match {
					ent.plen += fm.plen
				}
			}
			ent.api = Entry{Priority: ent.priority, Action: a.Name, ActionID: a.ID, Match: t.apiMatch(ent)}
			for i, v := range ent.args {
				ent.api.Args = append(ent.api.Args, v.toBytes(a.Params[i].Width))
			}
			t.seq++
			ent.seq = t.seq
			t.entries = append(t.entries, ent)
		}
		t.constEnts = p.Const
		t.reindex()
	}
}

func onesCount(m u128) int {
	n := 0
	for i := 0; i < 128; i++ {
		if m.bit(i) {
			n++
		}
	}
	return n
}

// boundAction returns the action of an action-list reference, binding the arguments given in
// the list (data-plane arguments) so that only action data remain for the control plane.
func (cp *compiler) boundAction(sc *scope, ar *front.ActionRef) *Action {
	a := cp.action(sc, ar.Action)
	if len(ar.Args) == 0 {
		return a
	}
	nbound := 0
	for _, p := range ar.Action.Params {
		if p.Dir != front.DirNone {
			nbound++
		}
	}
	if nbound == 0 || len(ar.Args) < nbound {
		return a
	}
	call := &front.CallExpr{Args: ar.Args[:nbound], Params: ar.Action.Params[:nbound]}
	ins, outs := cp.bindArgs(sc, a.fr, call.Args, call.Params)
	run := a.run
	b := *a
	b.run = func(c *ctx) flow {
		for _, f := range ins {
			f(c)
		}
		r := run(c)
		for _, f := range outs {
			f(c)
		}
		return r
	}
	return &b
}

func (cp *compiler) tableOf(sc *scope, call *front.CallExpr) *Table {
	d, ok := call.Callee.(*front.TableDecl)
	if !ok {
		cp.fail(call.Position(), "engine: apply of a non-table")
	}
	b := sc.lookup(d)
	if b == nil || b.kind != bTable {
		cp.fail(call.Position(), "engine: unknown table %s", d.Name)
	}
	return b.obj.(*Table)
}

func (cp *compiler) tableApply(sc *scope, call *front.CallExpr) func(*ctx) int {
	t := cp.tableOf(sc, call)
	return func(c *ctx) int {
		r := t.apply(c)
		if r == applyExit {
			c.exiting = true
		}
		return r
	}
}

// profileOf returns the action profile or selector of a table's implementation property: an
// instance name or an inline constructor call.
func (cp *compiler) profileOf(sc *scope, d *front.TableDecl, p *front.TableProp) *ActionProfile {
	switch v := p.Value.(type) {
	case *front.NameExpr:
		if b := sc.lookup(v.Decl); b != nil {
			if ap, ok := b.obj.(*ActionProfile); ok {
				return ap
			}
		}
	case *front.CallExpr:
		et, ok := v.Type().(*front.ExternType)
		if !ok {
			break
		}
		name := cpName(sc.prefix, nil, d.Name+"_"+et.Decl.Name)
		if s, ok := p.Annos.Get("name").StringArg(); ok {
			name = strings.TrimPrefix(s, ".")
		}
		return cp.newProfile(name, et.Decl.Name, v.Args, p.P)
	}
	cp.fail(p.P, "not supported by the netlock engine: implementation = %s", front.ExprString(p.Value))
	return nil
}

func (cp *compiler) newProfile(name, kind string, args []*front.Arg, pos front.Pos) *ActionProfile {
	arg := func(i int) uint64 {
		if i < len(args) {
			if v, ok := cp.checked.Const[args[i].Value]; ok {
				if x, ok := cp.valueU128(v); ok {
					return x.lo
				}
			}
		}
		return 0
	}
	ap := &ActionProfile{Name: name, ID: cp.ids[name], members: map[uint32]*member{}, groups: map[uint32][]uint32{}}
	switch kind {
	case "action_profile":
		ap.Size = int(arg(0))
	case "action_selector":
		ap.Selector = true
		ap.algo = cp.hashAlgo(arg(0), pos)
		ap.Size, ap.outWidth = int(arg(1)), int(arg(2))
	default:
		cp.fail(pos, "not supported by the netlock engine: implementation %s", kind)
	}
	cp.sw.profiles = append(cp.sw.profiles, ap)
	return ap
}

// entryPriorities gives the const entries of a table their matching priorities (larger wins in
// the engine). As in bmv2 (p4c's non-standard @priority annotation), an entry's priority is its
// @priority(N) if it has one, else its 1-based position, and the numerically smallest wins; the
// engine's value is max+1-N, so without annotations earlier entries win, as the P4 spec says.
func (cp *compiler) entryPriorities(ents []*front.Entry) []int32 {
	bm := make([]int64, len(ents))
	hi := int64(0)
	for i, en := range ents {
		bm[i] = int64(i + 1)
		if a := en.Annos.Get("priority"); a != nil {
			v, ok := annotationInt(a)
			if !ok {
				cp.fail(a.P, "engine: @priority wants a non-negative integer")
			} else {
				bm[i] = v
			}
		}
		hi = max(hi, bm[i])
	}
	out := make([]int32, len(ents))
	for i := range ents {
		out[i] = int32(hi + 1 - bm[i])
	}
	return out
}

// annotationInt reads an annotation whose argument is one integer literal (8w3, 0x10, 42).
func annotationInt(a *front.Annotation) (int64, bool) {
	if len(a.Args) != 1 {
		return 0, false
	}
	if l := a.Args[0].Lit; l != nil {
		if l.Value.Sign() < 0 || !l.Value.IsInt64() || l.Value.Int64() > math.MaxInt32 {
			return 0, false
		}
		return l.Value.Int64(), true
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(a.Args[0].Text, "_", ""), 0, 32)
	return v, err == nil && v >= 0
}
