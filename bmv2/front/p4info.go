package front

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	p4infotext "github.com/netlock-go/netlock/internal/p4info"
)

// P4Runtime resource-type prefixes: the top byte of every id (p4info.proto, P4Ids.Prefix).
const (
	prefixAction           = 0x01
	prefixTable            = 0x02
	prefixValueSet         = 0x03
	prefixControllerHeader = 0x04
	prefixActionProfile    = 0x11
	prefixCounter          = 0x12
	prefixDirectCounter    = 0x13
	prefixMeter            = 0x14
	prefixDirectMeter      = 0x15
	prefixRegister         = 0x16
	prefixDigest           = 0x17
)

// JenkinsOneAtATime is the hash p4c uses for P4Runtime ids: the low 24 bits of the hash of the
// fully qualified control-plane name, under the 8-bit resource-type prefix.
func JenkinsOneAtATime(s string) uint32 {
	var h uint32
	for i := 0; i < len(s); i++ {
		h += uint32(s[i])
		h += h << 10
		h ^= h >> 6
	}
	h += h << 3
	h ^= h >> 11
	h += h << 15
	return h
}

// symbol is one P4Runtime entity before ids are assigned.
type symbol struct {
	prefix uint32
	name   string
	userID uint32 // from @id, 0 if none
	pos    Pos
	id     uint32
	owner  any
	// hashName is the name the id is derived from when it differs from name: controller
	// headers are named by their @controller_header argument but hashed by the header type's name.
	hashName string
}

func (s *symbol) key() string {
	if s.hashName != "" {
		return s.hashName
	}
	return s.name
}

type symtab struct {
	syms     []*symbol
	byKey    map[string]*symbol
	assigned map[uint32]bool
	errs     ErrorList
}

// add registers a control-plane entity. owner identifies the declaration (or declaration and
// instance); a second owner under the same name is a conflict, as in p4c.
func (s *symtab) add(prefix uint32, name string, annos Annotations, pos Pos, owner any) *symbol {
	key := fmt.Sprintf("%d/%s", prefix, name)
	if x := s.byKey[key]; x != nil {
		if x.owner != owner || owner == nil {
			s.errs = append(s.errs, errorf(pos, "%s: conflicting control plane name (also used at %s)", name, x.pos))
		}
		return x
	}
	sym := &symbol{prefix: prefix, name: name, pos: pos, owner: owner}
	if a := annos.Get("id"); a != nil && len(a.Exprs) == 1 {
		if lit, ok := a.Exprs[0].(*IntExpr); ok && lit.Lit != nil && lit.Lit.Value.IsUint64() && lit.Lit.Value.Uint64() <= 0xffffffff {
			sym.userID = uint32(lit.Lit.Value.Uint64())
		}
	}
	s.syms = append(s.syms, sym)
	s.byKey[key] = sym
	return sym
}

// assignIDs follows p4c: @id values first (the prefix is added if missing), then, per resource
// type, names in sorted order get prefix|hash(name)&0xffffff with linear probing on collisions.
func (s *symtab) assignIDs() ErrorList {
	var errs ErrorList
	for _, sym := range s.syms {
		if sym.userID == 0 {
			continue
		}
		id := sym.userID
		if id>>24 != 0 && id>>24 != sym.prefix {
			errs = append(errs, errorf(sym.pos, "%s: @id has the wrong 8-bit prefix", sym.name))
			continue
		}
		id |= sym.prefix << 24
		if s.assigned[id] {
			errs = append(errs, errorf(sym.pos, "@id %d is assigned to multiple declarations", id))
			continue
		}
		s.assigned[id] = true
		sym.id = id
	}
	var todo []*symbol
	for _, sym := range s.syms {
		if sym.id == 0 {
			todo = append(todo, sym)
		}
	}
	sort.Slice(todo, func(i, j int) bool {
		if todo[i].prefix != todo[j].prefix {
			return todo[i].prefix < todo[j].prefix
		}
		return todo[i].key() < todo[j].key()
	})
	for _, sym := range todo {
		v := JenkinsOneAtATime(sym.key())
		start := v
		for {
			id := sym.prefix<<24 | v&0xffffff
			if !s.assigned[id] {
				s.assigned[id] = true
				sym.id = id
				break
			}
			v++
			if v == start {
				errs = append(errs, errorf(sym.pos, "no available id for %s", sym.name))
				break
			}
		}
	}
	return errs
}

// aliases computes p4c's alias: the shortest suffix of dot-separated components that is unique
// among all names.
func aliases(names []string) map[string]string {
	// Entities of different kinds may share a full name; it counts once.
	uniq := map[string]bool{}
	for _, n := range names {
		uniq[n] = true
	}
	count := map[string]int{}
	for n := range uniq {
		parts := strings.Split(n, ".")
		for i := range parts {
			count[strings.Join(parts[i:], ".")]++
		}
	}
	out := map[string]string{}
	for _, n := range names {
		parts := strings.Split(n, ".")
		out[n] = n
		for i := len(parts) - 1; i >= 0; i-- {
			suf := strings.Join(parts[i:], ".")
			if count[suf] == 1 {
				out[n] = suf
				break
			}
		}
	}
	return out
}

// cpName is the control-plane name of a declaration inside prefix, honoring @name (a leading
// dot makes it absolute).
func cpName(prefix string, annos Annotations, name string) string {
	if a := annos.Get("name"); a != nil {
		if s, ok := a.StringArg(); ok {
			if strings.HasPrefix(s, ".") {
				return s[1:]
			}
			name = s
		}
	}
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

type tableSym struct {
	decl   *TableDecl
	sym    *symbol
	prefix string
	locals map[*ActionDecl]bool // the owning control's own actions
}

// actionID identifies an action of one control instance (path "" for top-level actions): a
// control instantiated twice has two sets of actions in P4Info.
type actID struct {
	a    *ActionDecl
	path string
}

func hasKey(m map[actID][3]int, id actID) bool {
	_, ok := m[id]
	return ok
}

// actionID is the identity of action a as referenced by this table.
func (ts *tableSym) actionID(a *ActionDecl) actID {
	if ts.locals[a] {
		return actID{a, ts.prefix}
	}
	return actID{a, ""}
}

type externSym struct {
	inst   *InstanceDecl // nil for anonymous instances
	kind   string
	sym    *symbol
	args   []*Arg
	et     *ExternType
	call   *CallExpr   // anonymous instance in a table's implementation property
	vals   []Value     // constructor argument values (nil when not constant)
	annos  Annotations // of the instance, or of the table property for inline instances
	prefix string      // control-plane path of the owning control ("" at top level)
}

// valueSetSym is a parser value set of a visited parser instance.
type valueSetSym struct {
	decl *ValueSetDecl
	sym  *symbol
}

type digestSym struct {
	t   Type
	sym *symbol
}

type p4infoBuilder struct {
	c          *Checked
	env        map[*Param]Value // constructor parameters of the instance being visited
	st         *symtab
	tables     []*tableSym
	actions    []actID
	actSym     map[actID]*symbol
	actKey     map[actID][3]int // sort key: (control visit, global 0 / local 1, order)
	referenced map[Decl]bool    // declarations used by the visited controls
	visits     int              // top-level controls visited so far
	visit      int              // the top-level control being visited (its number), 0 outside
	refs       int              // global actions referenced so far
	locals     int              // local actions placed so far
	// typeInfoUsed: p4c would have created type_info (tables, action parameters, extern
	// instances, extern function calls in controls, controller headers), so it is present in
	// the P4Info even when empty; otherwise p4c's P4Info has none.
	typeInfoUsed bool
	strict       bool // P4Info proper, not the checker's name rules (p4infoWithMap)
	externs      []*externSym
	extByI       map[*InstanceDecl]*externSym
	digests      []*digestSym
	digSeen      map[string]bool
	headers      []*StructDecl
	hdrSym       map[*StructDecl]*symbol
	info         *p4v1.P4Info
	errs         ErrorList
	valueSets    []*valueSetSym
	// TNA programs (p4info_tna.go): tna is set for them; pipe is the control-plane prefix of
	// the pipe being visited, which tables' and externs' ids are hashed with.
	tna       bool
	pipe      string
	selectors map[*externSym]*externSym // TNA action profile -> the selector that uses it
}

// P4Info builds the P4Runtime P4Info of a checked v1model program.
func (c *Checked) P4Info() (*p4v1.P4Info, error) {
	info, _, err := c.P4InfoWithMap()
	return info, err
}

// P4InfoMap links P4Info ids back to the program, for a P4Runtime server and the engine.
type P4InfoMap struct {
	Tables            map[uint32]*TableEntity
	Actions           map[uint32]*ActionEntity
	Externs           map[uint32]*ExternEntity // counters, meters, registers, action profiles
	ControllerHeaders map[uint32]*StructDecl
	Digests           map[uint32]Type // the type of the digested data
}

// TableEntity is a table as the control plane sees it: the declaration and the control-plane
// path of the control instance that owns it ("MyIngress", or "MyIngress.inner" for a control
// instantiated inside another).
type TableEntity struct {
	Decl *TableDecl
	Path string
}

// ActionEntity is an action as the control plane sees it; Path is the owning control
// instance's path, "" for top-level actions such as NoAction.
type ActionEntity struct {
	Decl *ActionDecl
	Path string
}

// ExternEntity is an extern instance the control plane can address. Inline instances (a
// table's implementation = action_selector(...)) have Decl nil and Call set.
type ExternEntity struct {
	Decl *InstanceDecl
	Call *CallExpr
	Type *ExternType
	Path string
}

// P4InfoWithMap builds the P4Info and the map from its ids to the program's declarations.
func (c *Checked) P4InfoWithMap() (*p4v1.P4Info, *P4InfoMap, error) {
	return c.p4infoWithMap(true)
}

// p4infoWithMap builds the P4Info; the checker, which builds it for its control-plane name
// rules only, passes strict false to leave out what only P4Runtime refuses (anonymousProps:
// p4c compiles those programs when it writes no P4Info).
func (c *Checked) p4infoWithMap(strict bool) (*p4v1.P4Info, *P4InfoMap, error) {
	b := &p4infoBuilder{
		strict:     strict,
		c:          c,
		st:         &symtab{byKey: map[string]*symbol{}, assigned: map[uint32]bool{}},
		actSym:     map[actID]*symbol{},
		actKey:     map[actID][3]int{},
		referenced: map[Decl]bool{},
		extByI:     map[*InstanceDecl]*externSym{},
		digSeen:    map[string]bool{},
		hdrSym:     map[*StructDecl]*symbol{},
		tna:        c.Arch() == ArchTNA,
		selectors:  map[*externSym]*externSym{},
	}
	if c.Main == nil {
		return nil, nil, ErrorList{errorf(Pos{File: c.Program.File}, "the program declares no package instance called main (expected V1Switch(...) main;)")}
	}
	b.collect()
	b.sortActions()
	b.errs = append(b.errs, b.st.errs...)
	b.errs = append(b.errs, b.st.assignIDs()...)
	if len(b.errs) > 0 {
		return nil, nil, b.errs
	}
	b.build()
	if len(b.errs) > 0 {
		return nil, nil, b.errs
	}
	m := &P4InfoMap{
		Tables:            map[uint32]*TableEntity{},
		Actions:           map[uint32]*ActionEntity{},
		Externs:           map[uint32]*ExternEntity{},
		ControllerHeaders: map[uint32]*StructDecl{},
		Digests:           map[uint32]Type{},
	}
	for _, t := range b.tables {
		m.Tables[t.sym.id] = &TableEntity{Decl: t.decl, Path: t.prefix}
	}
	for _, a := range b.actions {
		m.Actions[b.actSym[a].id] = &ActionEntity{Decl: a.a, Path: a.path}
	}
	for _, e := range b.externs {
		m.Externs[e.sym.id] = &ExternEntity{Decl: e.inst, Call: e.call, Type: e.et, Path: e.prefix}
		if b.tna && e.kind == "Digest" && len(e.et.Args) > 0 {
			m.Digests[e.sym.id] = e.et.Args[0] // TNA's Digest<T> instances
		}
	}
	for h, sym := range b.hdrSym {
		m.ControllerHeaders[sym.id] = h
	}
	for _, d := range b.digests {
		m.Digests[d.sym.id] = d.t
	}
	return b.info, m, nil
}

// P4InfoText renders the P4Info in protobuf text format, as p4c's --p4runtime-files *.txtpb.
func (c *Checked) P4InfoText() (string, error) {
	info, err := c.P4Info()
	if err != nil {
		return "", err
	}
	out, err := p4infotext.Marshal(info)
	if err != nil {
		return "", err
	}
	return "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n" + out, nil
}

// P4InfoTextCompat renders the P4Info in protobuf text format without the fields P4Runtime
// 1.4.0 added (initial_default_action and the others of package internal/p4info), for clients
// whose messages predate them (antoninbas/p4runtime-go-client parses P4Info text with
// p4runtime v1.4.0-rc.5's, which refuse those fields).
func (c *Checked) P4InfoTextCompat() (string, error) {
	info, err := c.P4Info()
	if err != nil {
		return "", err
	}
	out, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(info) // unknown fields left out
	if err != nil {
		return "", err
	}
	return "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n" + p4infotext.NormalizeText(string(out)), nil
}

func (b *p4infoBuilder) collect() {
	if b.tna {
		b.collectTNA()
	}
	for _, a := range b.c.Main.Args {
		if b.tna {
			break // the pipes' blocks were visited by collectTNA
		}
		call, ok := a.Value.(*CallExpr)
		if !ok {
			if n, ok := a.Value.(*NameExpr); ok {
				if inst, ok := n.Decl.(*InstanceDecl); ok {
					b.visitInstance(inst.T, inst.Name, inst.Args)
				}
			}
			continue
		}
		switch d := call.Callee.(type) {
		case *ControlDecl:
			// p4c names objects after the control type, ignoring a @name on the control.
			b.withCtorArgs(d.CtorParams, call.Args, func() { b.visitControl(d, d.Name) })
		case *ParserDecl:
			b.withCtorArgs(d.CtorParams, call.Args, func() { b.visitParser(d, d.Name) })
		}
	}
	// Top-level extern instances that some control uses. p4c lists them before the blocks'
	// own: its generator walks the evaluated program breadth first, and they are children of
	// the top level, as the package instance is, whose controls come a level below.
	n := len(b.externs)
	for _, d := range b.c.Program.Decls {
		if inst, ok := d.(*InstanceDecl); ok && b.referenced[inst] {
			b.externInstance(inst, "")
		}
	}
	b.externs = slices.Concat(b.externs[n:], b.externs[:n])
	// Controller packet metadata: headers annotated @controller_header("packet_in"/"packet_out").
	for _, d := range b.c.Program.Decls {
		if sd, ok := d.(*StructDecl); ok && sd.Kind == "header" {
			if a := sd.Annos.Get("controller_header"); a != nil {
				name, ok := a.StringArg()
				if !ok {
					b.errs = append(b.errs, errorf(a.P, "@controller_header needs a string argument"))
					continue
				}
				b.headers = append(b.headers, sd)
				sym := b.st.add(prefixControllerHeader, name, sd.Annos, sd.P, sd)
				sym.hashName = cpName("", sd.Annos, sd.Name)
				b.hdrSym[sd] = sym
			}
		}
	}
}

func (b *p4infoBuilder) visitInstance(t Type, name string, args []*Arg) {
	switch tt := t.(type) {
	case *ControlType:
		b.withCtorArgs(tt.Decl.CtorParams, args, func() { b.visitControl(tt.Decl, name) })
	case *ParserType:
		b.withCtorArgs(tt.Decl.CtorParams, args, func() { b.visitParser(tt.Decl, name) })
	}
}

// withCtorArgs runs f with the constructor parameters bound to the instantiation's arguments, so
// that sizes given through parameters (Counting(SIZE) c; counter(buckets, ...)) are known.
func (b *p4infoBuilder) withCtorArgs(ps []*Param, args []*Arg, f func()) {
	saved := b.env
	env := map[*Param]Value{}
	for k, v := range saved {
		env[k] = v
	}
	for i, p := range ps {
		if i < len(args) {
			if v, ok := b.value(args[i].Value); ok {
				env[p] = v
			}
		}
	}
	b.env = env
	f()
	b.env = saved
}

func (b *p4infoBuilder) values(args []*Arg) []Value {
	out := make([]Value, len(args))
	for i, a := range args {
		out[i], _ = b.value(a.Value)
	}
	return out
}

// value is the constant value of e, looking through constructor parameters.
func (b *p4infoBuilder) value(e Expr) (Value, bool) {
	if v, ok := b.c.Const[e]; ok {
		return v, true
	}
	if n, ok := e.(*NameExpr); ok {
		if p, ok := n.Decl.(*Param); ok {
			v, ok := b.env[p]
			return v, ok
		}
	}
	return nil, false
}

func (b *p4infoBuilder) visitParser(d *ParserDecl, prefix string) {
	for _, l := range d.Locals {
		if vs, ok := l.(*ValueSetDecl); ok {
			b.valueSets = append(b.valueSets, &valueSetSym{decl: vs, sym: b.addPiped(prefixValueSet, cpName(prefix, vs.Annos, vs.Name), vs.Annos, vs.P, vs)})
			continue
		}
		if inst, ok := l.(*InstanceDecl); ok {
			if _, isP := inst.T.(*ParserType); isP {
				b.visitInstance(inst.T, cpName(prefix, inst.Annos, inst.Name), inst.Args)
				continue
			}
			b.externInstance(inst, prefix)
		}
	}
	for _, s := range d.States {
		for _, st := range s.Stmts {
			b.walkCalls(st, prefix, nil)
		}
	}
}

// visitControl lists the control-plane objects of control d (instance path prefix) in p4c's
// order. p4c's front end inlines a control instantiated inside another (frontends/p4/inlining.cpp
// puts the callee's locals right after the instance declaration), so a nested instance's tables,
// actions and externs come at the place of its declaration among the outer control's; then it
// copies the global actions a top-level control uses to the front of its locals
// (localizeActions.cpp), and the P4Info lists each top-level control's actions in that order.
func (b *p4infoBuilder) visitControl(d *ControlDecl, prefix string) {
	if b.visit == 0 {
		// A top-level control (a block of the package): its own set of actions.
		b.visits++
		b.visit = b.visits
		defer func() { b.visit = 0 }()
	}
	// Like p4c, which removes unused declarations before generating P4Info, only tables that
	// are applied, actions that can run and objects that are referenced count.
	used := controlUsageWith(d, b.value)
	for k := range used {
		b.referenced[k] = true
	}
	locals := map[*ActionDecl]bool{}
	for _, l := range d.Locals {
		if a, ok := l.(*ActionDecl); ok {
			locals[a] = true
		}
	}
	for _, l := range d.Locals {
		switch l := l.(type) {
		case *ActionDecl:
			b.localAction(actID{l, prefix})
			if used[l] {
				// Actions called from actions are inlined by p4c; only digests count here.
				b.walkCalls(l.Body, prefix, nil)
			}
		case *InstanceDecl:
			if et, ok := l.T.(*ExternType); ok && (et.Decl.Name == "action_profile" || et.Decl.Name == "action_selector" ||
				b.tna && (et.Decl.Name == "ActionProfile" || et.Decl.Name == "ActionSelector")) {
				used[l] = true // p4c keeps action profiles even when no table uses them
			}
			if !used[l] {
				continue
			}
			if _, isC := l.T.(*ControlType); isC {
				b.visitInstance(l.T, cpName(prefix, l.Annos, l.Name), l.Args)
				continue
			}
			b.externInstance(l, prefix)
		case *TableDecl:
			if !used[l] || l.Annos.Get("hidden") != nil {
				continue // unused, or hidden from the control plane
			}
			ts := &tableSym{decl: l, prefix: prefix, locals: locals, sym: b.addPiped(prefixTable, cpName(prefix, l.Annos, l.Name), l.Annos, l.P, nil)}
			b.tables = append(b.tables, ts)
			b.anonymousProps(l, ts.sym.name)
			if ip := l.Prop("implementation"); ip != nil {
				if call, ok := ip.Value.(*CallExpr); ok {
					if et, ok := call.Type().(*ExternType); ok {
						es := &externSym{kind: et.Decl.Name, args: call.Args, et: et, call: call, vals: b.values(call.Args), annos: ip.Annos, prefix: prefix}
						name := cpName(prefix, nil, l.Name+"_"+et.Decl.Name)
						if s, ok := ip.Annos.Get("name").StringArg(); ok {
							name = strings.TrimPrefix(s, ".")
						}
						es.sym = b.st.add(prefixActionProfile, name, ip.Annos, call.P, nil)
						b.externs = append(b.externs, es)
					}
				}
			}
			if p := l.Prop("actions"); p != nil {
				for _, ar := range p.Actions {
					if ar.Action != nil {
						b.action(ar.Action, prefix, locals)
					}
				}
			}
			if l.Prop("default_action") == nil {
				if na := b.noAction(); na != nil {
					b.action(na, prefix, locals)
				}
			}
		}
	}
	if b.callsExternFunction(d.Body, map[Decl]bool{}) {
		b.typeInfoUsed = true
	}
	for a := range used {
		if a, ok := a.(*ActionDecl); ok && b.callsExternFunction(a.Body, map[Decl]bool{}) {
			b.typeInfoUsed = true
		}
	}
	b.walkCalls(d.Body, prefix, locals)
}

// anonymousProps refuses, as p4c's P4Info generator does (control-plane/p4RuntimeArchHandler.cpp,
// getExternInstanceFromProperty), an extern constructed in a v1model table's implementation,
// counters or meters property without a @name: P4Runtime has no name to give it.
func (b *p4infoBuilder) anonymousProps(t *TableDecl, name string) {
	if b.tna || !b.strict {
		return // bf-p4c has the same rule; TNA programs are not compared with it here
	}
	for _, prop := range []string{"implementation", "counters", "meters"} {
		p := t.Prop(prop)
		if p == nil {
			continue
		}
		if call, ok := p.Value.(*CallExpr); ok && p.Annos.Get("name") == nil {
			if _, ok := call.Type().(*ExternType); ok {
				b.errs = append(b.errs, errorf(p.P, "Table '%s' has an anonymous table property '%s' with no name annotation, which is not supported by P4Runtime", name, prop))
			}
		}
	}
}

// localAction gives the local action id its place in the P4Info's list: after the global
// actions of its top-level control, in the order of the flattened control's declarations.
func (b *p4infoBuilder) localAction(id actID) {
	if !hasKey(b.actKey, id) {
		b.locals++
		b.actKey[id] = [3]int{b.visit, 1, b.locals}
	}
}

// callsExternFunction reports whether s calls an extern function (mark_to_drop, digest,
// update_checksum, ...), looking into the functions it calls. p4c's P4Info generator creates
// type_info for every such call in a control or its actions (P4RuntimeArchHandler's
// addExternFunction), so whether type_info is present, even empty, depends on it.
func (b *p4infoBuilder) callsExternFunction(s Stmt, seen map[Decl]bool) bool {
	found := false
	walkStmt(s, func(e Expr) {
		call, ok := e.(*CallExpr)
		if !ok || found {
			return
		}
		switch c := call.Callee.(type) {
		case *MethodDecl:
			found = c.Owner == nil && c.Name != "static_assert" // p4c's front end removes static_assert
		case *FunctionDecl:
			if !seen[c] {
				seen[c] = true
				found = b.callsExternFunction(c.Body, seen)
			}
		case *ActionDecl:
			if !seen[c] {
				seen[c] = true
				found = b.callsExternFunction(c.Body, seen)
			}
		}
	})
	return found
}

// controlUsage finds what a control uses: the tables it applies, the actions that can run
// (through applied tables, calls from the apply block and calls from such actions) and every
// declaration those refer to.
func controlUsage(d *ControlDecl) map[Decl]bool { return controlUsageWith(d, nil) }

// controlUsageWith is controlUsage for one instance of d: an if in the apply block whose
// condition value finds constant (a constructor parameter bound by the instance, as in
// if (is_ternary) t1.apply(); else t2.apply();) counts its taken branch only, as p4c, which
// specializes the control per instance and drops the dead branch before it names tables.
func controlUsageWith(d *ControlDecl, value func(Expr) (Value, bool)) map[Decl]bool {
	used := map[Decl]bool{}
	var queue []Decl
	mark := func(x Decl) {
		if x != nil && !used[x] {
			used[x] = true
			queue = append(queue, x)
		}
	}
	visit := func(e Expr) {
		switch x := e.(type) {
		case *NameExpr:
			if x.Decl != nil {
				if _, isTable := x.Decl.(*TableDecl); !isTable {
					mark(x.Decl)
				}
			}
		case *CallExpr:
			if t, ok := x.Callee.(*TableDecl); ok && x.Method == "apply" {
				mark(t)
			}
		}
	}
	walkLive(d.Body, visit, value)
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		switch x := x.(type) {
		case *ActionDecl:
			if x != nil { // nil: a reference the checker could not resolve, reported there
				walkStmt(x.Body, visit)
			}
		case *TableDecl:
			if x == nil {
				continue
			}
			inspectDecl(x, visit)
			for _, p := range x.Props {
				for _, a := range p.Actions {
					if a.Action != nil { // nil: not declared before the table, reported by the checker
						mark(a.Action)
					}
				}
				for _, e := range p.Entries {
					if e.Action.Action != nil {
						mark(e.Action.Action)
					}
				}
			}
		case *InstanceDecl:
			for _, a := range x.Args {
				walkExpr(a.Value, visit)
			}
		}
	}
	return used
}

// sortActions orders actions as p4c does: by control in pipeline order; within a control, the
// global actions it uses in order of use, then its own actions in declaration order.
func (b *p4infoBuilder) sortActions() {
	sort.SliceStable(b.actions, func(i, j int) bool {
		x, y := b.actKey[b.actions[i]], b.actKey[b.actions[j]]
		for k := range x {
			if x[k] != y[k] {
				return x[k] < y[k]
			}
		}
		return false
	})
}

// noAction returns core.p4's NoAction.
func (b *p4infoBuilder) noAction() *ActionDecl {
	for _, d := range b.c.Globals["NoAction"] {
		if a, ok := d.(*ActionDecl); ok {
			return a
		}
	}
	return nil
}

func (b *p4infoBuilder) action(a *ActionDecl, prefix string, locals map[*ActionDecl]bool) {
	p := ""
	if locals[a] {
		p = prefix
	}
	id := actID{a, p}
	if _, done := b.actSym[id]; done || a.Annos.Get("hidden") != nil {
		return
	}
	switch {
	case hasKey(b.actKey, id):
	case p != "":
		b.localAction(id)
	default:
		// p4c copies the global actions a control uses into it, in order of use, before the
		// control's own actions.
		b.refs++
		b.actKey[id] = [3]int{b.visit, 0, b.refs}
	}
	b.actSym[id] = b.st.add(prefixAction, cpName(p, a.Annos, a.Name), a.Annos, a.P, id)
	b.actions = append(b.actions, id)
}

// walkCalls finds digest calls and direct control invocations (C.apply()) under s.
func (b *p4infoBuilder) walkCalls(s Stmt, prefix string, locals map[*ActionDecl]bool) {
	walkStmt(s, func(e Expr) {
		call, ok := e.(*CallExpr)
		if !ok {
			return
		}
		if a, ok := call.Callee.(*ActionDecl); ok && locals != nil {
			// Actions called from an apply block are control-plane visible too (p4c keeps them).
			b.action(a, prefix, locals)
		}
		if m, ok := call.Callee.(*MethodDecl); ok && m.Owner == nil && m.Name == "digest" && len(call.Args) == 2 {
			t := call.Args[1].Value.Type()
			name := ""
			switch tt := t.(type) {
			case *StructType:
				name = tt.Decl.Name
			default:
				name = fmt.Sprintf("digest_%d", len(b.digests))
			}
			if !b.digSeen[name] {
				b.digSeen[name] = true
				b.digests = append(b.digests, &digestSym{t: t, sym: b.st.add(prefixDigest, name, nil, call.P, name)})
			}
		}
		if call.Method == "apply" {
			if me, ok := call.Fun.(*MemberExpr); ok {
				if tn, ok := me.X.Type().(*TypeName); ok {
					b.visitInstance(tn.T, prefix+"."+tn.T.(interface{ declName() string }).declName(), nil)
				}
			}
		}
	})
}

func (t *ControlType) declName() string { return t.Decl.Name }
func (t *ParserType) declName() string  { return t.Decl.Name }

func (b *p4infoBuilder) externInstance(inst *InstanceDecl, prefix string) {
	et, ok := inst.T.(*ExternType)
	if !ok {
		return
	}
	b.typeInfoUsed = true // p4c's addExternInstance creates type_info for every extern instance
	var pfx uint32
	switch et.Decl.Name {
	case "counter":
		pfx = prefixCounter
	case "direct_counter":
		pfx = prefixDirectCounter
	case "meter":
		pfx = prefixMeter
	case "direct_meter":
		pfx = prefixDirectMeter
	case "register":
		pfx = prefixRegister
	case "action_profile", "action_selector":
		pfx = prefixActionProfile
	default:
		if !b.tna || !isTNAExtern(et.Decl) {
			return
		}
		if pfx = tnaExternPrefix(et.Decl.Name, inst.Args); pfx == 0 {
			if et.Decl.Name == "ActionSelector" {
				b.tnaSelector(inst)
			}
			return
		}
	}
	es := &externSym{inst: inst, kind: et.Decl.Name, args: inst.Args, et: et, vals: b.values(inst.Args), annos: inst.Annos, prefix: prefix}
	es.sym = b.addPiped(pfx, cpName(prefix, inst.Annos, inst.Name), inst.Annos, inst.P, nil)
	b.externs = append(b.externs, es)
	b.extByI[inst] = es
}

// ---- building the message -----------------------------------------------------------------------

// pkgInfo builds pkg_info from @pkginfo(key = "value", ...) on the main instance.
func pkgInfo(as Annotations) *p4v1.PkgInfo {
	pi := &p4v1.PkgInfo{Arch: "v1model"}
	a := as.Get("pkginfo")
	if a == nil {
		return pi
	}
	for i := 0; i+2 < len(a.Args); i++ {
		if a.Args[i].Kind != TIdent || a.Args[i+1].Text != "=" || a.Args[i+2].Kind != TString {
			continue
		}
		v := a.Args[i+2].Text
		switch a.Args[i].Text {
		case "name":
			pi.Name = v
		case "version":
			pi.Version = v
		case "arch":
			pi.Arch = v
		case "organization":
			pi.Organization = v
		case "contact":
			pi.Contact = v
		case "url":
			pi.Url = v
		}
	}
	return pi
}

// platformProperties sets pkg_info.platform_properties from @platform_property(key = N, ...)
// on the main instance, as p4c does (a field of P4Runtime 1.4.0: package internal/p4info).
func platformProperties(pi *p4v1.PkgInfo, as Annotations) {
	a := as.Get("platform_property")
	if a == nil {
		return
	}
	nums := map[string]protowire.Number{
		"multicast_group_table_size":                   p4infotext.PlatformMcGroupSize,
		"multicast_group_table_total_replicas":         p4infotext.PlatformMcTotal,
		"multicast_group_table_max_replicas_per_entry": p4infotext.PlatformMcPerEntry,
	}
	props := map[protowire.Number]int32{}
	for i := 0; i+2 < len(a.Args); i++ {
		if a.Args[i].Kind != TIdent || a.Args[i+1].Text != "=" || a.Args[i+2].Kind != TInt || a.Args[i+2].Lit == nil {
			continue
		}
		if num, ok := nums[a.Args[i].Text]; ok && a.Args[i+2].Lit.Value.IsInt64() {
			props[num] = int32(a.Args[i+2].Lit.Value.Int64())
		}
	}
	p4infotext.SetPlatformProperties(pi, props)
}

// notExported lists annotations P4Info represents elsewhere (as p4c: names, ids, and the
// documentation fields).
var notExported = map[string]bool{"name": true, "id": true, "brief": true, "description": true}

// annotationStrings renders the annotations P4Info carries verbatim: all but @name, @id, @brief
// and @description.
func annotationStrings(as Annotations) []string {
	var out []string
	for _, a := range as {
		if notExported[a.Name] {
			continue
		}
		out = append(out, annotationString(a))
	}
	return out
}

// documentation builds the doc field from @brief and @description.
func documentation(as Annotations) *p4v1.Documentation {
	brief, ok1 := as.Get("brief").StringArg()
	desc, ok2 := as.Get("description").StringArg()
	if !ok1 && !ok2 {
		return nil
	}
	return &p4v1.Documentation{Brief: brief, Description: desc}
}

func annotationString(a *Annotation) string {
	if a.Args == nil {
		return "@" + a.Name
	}
	var b strings.Builder
	b.WriteString("@" + a.Name + "(")
	for i, t := range a.Args {
		if i > 0 && (t.Kind == TIdent || t.Kind == TInt) && (a.Args[i-1].Kind == TIdent || a.Args[i-1].Kind == TInt) {
			b.WriteByte(' ')
		}
		if t.Kind == TString {
			fmt.Fprintf(&b, "%q", t.Text)
		} else {
			b.WriteString(t.Text)
		}
	}
	b.WriteString(")")
	return b.String()
}

func (b *p4infoBuilder) build() {
	var names []string
	for _, s := range b.st.syms {
		names = append(names, b.aliasName(s))
	}
	alias := aliases(names)
	pre := func(s *symbol, annos Annotations) *p4v1.Preamble {
		return &p4v1.Preamble{Id: s.id, Name: s.name, Alias: alias[b.aliasName(s)], Annotations: annotationStrings(annos), Doc: documentation(annos)}
	}
	info := &p4v1.P4Info{PkgInfo: pkgInfo(b.c.Main.Annos), TypeInfo: &p4v1.P4TypeInfo{}}
	platformProperties(info.PkgInfo, b.c.Main.Annos)
	if b.tna {
		info.PkgInfo.Arch = "tna"
		if pt, ok := b.c.Main.T.(*PackageType); ok && pt.Decl.Position().File == "tofino2_arch.p4" {
			info.PkgInfo.Arch = "t2na"
		}
	}
	b.info = info
	for _, ts := range b.tables {
		info.Tables = append(info.Tables, b.table(ts, pre))
	}
	inTable := map[*ActionDecl]bool{}
	for _, ts := range b.tables {
		for _, name := range []string{"actions", "default_action"} {
			if p := ts.decl.Prop(name); p != nil {
				for _, ar := range p.Actions {
					inTable[ar.Action] = true
				}
			}
		}
	}
	for _, id := range b.actions {
		a := id.a
		pa := &p4v1.Action{Preamble: pre(b.actSym[id], a.Annos)}
		id := uint32(0)
		for _, p := range a.Params {
			// Actions that are only called directly get their arguments at the call, so, as in
			// p4c, they have no control-plane parameters.
			if p.Dir != DirNone || !inTable[a] {
				continue
			}
			id++
			pname := p.Name
			if s, ok := p.Annos.Get("name").StringArg(); ok {
				pname = s
			}
			// p4c copies a parameter's annotations (and documentation) into P4Info too; netlock's
			// P4Runtime server reads @secret there (docs/p4.md, "Secrets").
			pa.Params = append(pa.Params, &p4v1.Action_Param{Id: id, Name: pname, Bitwidth: cpWidth(p.T), TypeName: b.namedType(p.T),
				Annotations: annotationStrings(p.Annos), Doc: documentation(p.Annos)})
		}
		info.Actions = append(info.Actions, pa)
	}
	for _, vs := range b.valueSets {
		info.ValueSets = append(info.ValueSets, b.valueSet(vs, pre(vs.sym, vs.decl.Annos)))
	}
	for _, es := range b.externs {
		annos := es.annos
		switch es.kind {
		case "counter":
			info.Counters = append(info.Counters, &p4v1.Counter{Preamble: pre(es.sym, annos), Spec: &p4v1.CounterSpec{Unit: b.counterUnit(es, 1)}, Size: b.intArg(es, 0)})
		case "direct_counter":
			info.DirectCounters = append(info.DirectCounters, &p4v1.DirectCounter{Preamble: pre(es.sym, annos), Spec: &p4v1.CounterSpec{Unit: b.counterUnit(es, 0)}, DirectTableId: b.directTable(es, "counters")})
		case "meter":
			info.Meters = append(info.Meters, &p4v1.Meter{Preamble: pre(es.sym, annos), Spec: &p4v1.MeterSpec{Unit: b.meterUnit(es, 1)}, Size: b.intArg(es, 0)})
		case "direct_meter":
			info.DirectMeters = append(info.DirectMeters, &p4v1.DirectMeter{Preamble: pre(es.sym, annos), Spec: &p4v1.MeterSpec{Unit: b.meterUnit(es, 0)}, DirectTableId: b.directTable(es, "meters")})
		case "register":
			var ts *p4v1.P4DataTypeSpec
			if len(es.et.Args) > 0 {
				ts = b.typeSpec(es.et.Args[0])
			}
			info.Registers = append(info.Registers, &p4v1.Register{Preamble: pre(es.sym, annos), TypeSpec: ts, Size: int32(b.intArg(es, 0))})
		case "action_profile", "action_selector":
			// Selector sizing annotations become fields (selector_size_semantics is not in
			// p4runtime v1.4.0-rc.5's messages).
			var kept Annotations
			for _, a := range annos {
				switch a.Name {
				case "max_group_size", "selector_size_semantics", "max_member_weight":
				default:
					kept = append(kept, a)
				}
			}
			ap := &p4v1.ActionProfile{Preamble: pre(es.sym, kept)}
			if a := annos.Get("max_group_size"); a != nil && es.kind == "action_selector" && len(a.Exprs) == 1 {
				if lit, ok := a.Exprs[0].(*IntExpr); ok && lit.Lit != nil && lit.Lit.Value.IsInt64() {
					ap.MaxGroupSize = int32(lit.Lit.Value.Int64())
				}
			}
			for _, ts := range b.tables {
				if ip := ts.decl.Prop("implementation"); ip != nil && b.implementationOf(ip, ts) == es {
					ap.TableIds = append(ap.TableIds, ts.sym.id)
				}
			}
			if es.kind == "action_selector" {
				ap.WithSelector = true
				ap.Size = b.intArg(es, 1)
				// selector_size_semantics, a field of P4Runtime 1.4.0 (internal/p4info), as
				// p4c sets it from @selector_size_semantics and @max_member_weight.
				if sem, ok := annos.Get("selector_size_semantics").StringArg(); ok {
					switch strings.ToUpper(sem) {
					case "SUM_OF_WEIGHTS":
						p4infotext.SetSelectorSizeSemantics(ap, false, 0)
					case "SUM_OF_MEMBERS":
						w := int32(0)
						if a := annos.Get("max_member_weight"); a != nil && len(a.Exprs) == 1 {
							if lit, ok := a.Exprs[0].(*IntExpr); ok && lit.Lit != nil && lit.Lit.Value.IsInt64() {
								w = int32(lit.Lit.Value.Int64())
							}
						}
						p4infotext.SetSelectorSizeSemantics(ap, true, w)
					}
				}
			} else {
				ap.Size = b.intArg(es, 0)
			}
			info.ActionProfiles = append(info.ActionProfiles, ap)
		default:
			if b.tna {
				b.buildTNAExtern(info, es, pre)
			}
		}
	}
	for _, d := range b.digests {
		info.Digests = append(info.Digests, &p4v1.Digest{Preamble: pre(d.sym, nil), TypeSpec: b.typeSpec(d.t)})
	}
	for _, h := range b.headers {
		cpm := &p4v1.ControllerPacketMetadata{Preamble: pre(b.hdrSym[h], h.Annos)}
		var add func(prefix string, fs []*Field)
		add = func(prefix string, fs []*Field) {
			for _, f := range fs {
				if st, ok := f.T.(*StructType); ok {
					add(prefix+f.Name+".", st.Fields) // nested structs are flattened, as in p4c
					continue
				}
				cpm.Metadata = append(cpm.Metadata, &p4v1.ControllerPacketMetadata_Metadata{Id: uint32(len(cpm.Metadata) + 1), Name: prefix + f.Name, Bitwidth: cpWidth(f.T), TypeName: b.namedType(f.T)})
			}
		}
		add("", h.Fields)
		info.ControllerPacketMetadata = append(info.ControllerPacketMetadata, cpm)
		b.typeInfoUsed = b.typeInfoUsed || len(cpm.Metadata) > 0
	}
	for _, a := range info.Actions {
		b.typeInfoUsed = b.typeInfoUsed || len(a.Params) > 0
	}
	// p4c's P4Info has type_info only when its generator asked for it (typeInfoUsed), even
	// empty. TNA programs keep it always: bf-p4c's generator is not compared here.
	if !b.tna && !b.typeInfoUsed && len(b.tables) == 0 && proto.Size(info.TypeInfo) == 0 {
		info.TypeInfo = nil
	}
}

func (b *p4infoBuilder) implementationOf(p *TableProp, ts *tableSym) *externSym {
	switch v := p.Value.(type) {
	case *NameExpr:
		if inst, ok := v.Decl.(*InstanceDecl); ok {
			return b.extByI[inst]
		}
	case *CallExpr:
		for _, es := range b.externs {
			if es.call == v {
				return es
			}
		}
	}
	return nil
}

func (b *p4infoBuilder) directTable(es *externSym, prop string) uint32 {
	for _, ts := range b.tables {
		if p := ts.decl.Prop(prop); p != nil {
			if n, ok := p.Value.(*NameExpr); ok && n.Decl == es.inst {
				return ts.sym.id
			}
		}
	}
	return 0
}

func (b *p4infoBuilder) intArg(es *externSym, i int) int64 {
	if i >= len(es.vals) {
		return 0
	}
	v := es.vals[i]
	if m, ok := v.(*EnumMember); ok {
		v = m.Val
	}
	if v, ok := v.(*big.Int); ok && v.IsInt64() {
		return v.Int64()
	}
	return 0
}

func (b *p4infoBuilder) enumArg(es *externSym, i int) string {
	if i >= len(es.vals) {
		return ""
	}
	if m, ok := es.vals[i].(*EnumMember); ok {
		return m.Name
	}
	return ""
}

func (b *p4infoBuilder) counterUnit(es *externSym, i int) p4v1.CounterSpec_Unit {
	switch strings.ToLower(b.enumArg(es, i)) { // v1model's packets, TNA's PACKETS
	case "packets":
		return p4v1.CounterSpec_PACKETS
	case "bytes":
		return p4v1.CounterSpec_BYTES
	case "packets_and_bytes":
		return p4v1.CounterSpec_BOTH
	}
	return p4v1.CounterSpec_UNSPECIFIED
}

func (b *p4infoBuilder) meterUnit(es *externSym, i int) p4v1.MeterSpec_Unit {
	switch strings.ToLower(b.enumArg(es, i)) {
	case "packets":
		return p4v1.MeterSpec_PACKETS
	case "bytes":
		return p4v1.MeterSpec_BYTES
	}
	return p4v1.MeterSpec_UNSPECIFIED
}

var matchTypes = map[string]p4v1.MatchField_MatchType{
	"exact": p4v1.MatchField_EXACT, "lpm": p4v1.MatchField_LPM, "ternary": p4v1.MatchField_TERNARY,
	"range": p4v1.MatchField_RANGE, "optional": p4v1.MatchField_OPTIONAL,
}

func (b *p4infoBuilder) table(ts *tableSym, pre func(*symbol, Annotations) *p4v1.Preamble) *p4v1.Table {
	d := ts.decl
	t := &p4v1.Table{Preamble: pre(ts.sym, d.Annos), Size: 1024}
	if kp := d.Prop("key"); kp != nil {
		id := uint32(0)
		for _, k := range kp.Keys {
			if k.MatchKind == "selector" {
				continue
			}
			id++
			name := KeyName(k.Expr)
			if a := k.Annos.Get("name"); a != nil {
				if s, ok := a.StringArg(); ok {
					name = s
				}
			}
			mf := &p4v1.MatchField{Id: id, Name: name, Bitwidth: cpWidth(k.Expr.Type()), TypeName: b.namedType(k.Expr.Type()), Annotations: annotationStrings(k.Annos), Doc: documentation(k.Annos)}
			if mt, ok := matchTypes[k.MatchKind]; ok {
				mf.Match = &p4v1.MatchField_MatchType_{MatchType: mt}
			} else {
				mf.Match = &p4v1.MatchField_OtherMatchType{OtherMatchType: k.MatchKind}
			}
			t.MatchFields = append(t.MatchFields, mf)
		}
	}
	if ap := d.Prop("actions"); ap != nil {
		for _, ar := range ap.Actions {
			sym := b.actSym[ts.actionID(ar.Action)]
			if sym == nil {
				continue // a @hidden action
			}
			ref := &p4v1.ActionRef{Id: sym.id, Annotations: annotationStrings(ar.Annos)}
			if ar.Annos.Get("defaultonly") != nil {
				ref.Scope = p4v1.ActionRef_DEFAULT_ONLY
			} else if ar.Annos.Get("tableonly") != nil {
				ref.Scope = p4v1.ActionRef_TABLE_ONLY
			}
			t.ActionRefs = append(t.ActionRefs, ref)
		}
	}
	if d.Prop("default_action") == nil {
		// Like p4c, a table without default_action gets NoAction as its default-only action.
		if na := b.noAction(); na != nil && b.actSym[actID{na, ""}] != nil {
			listed := false
			for _, ref := range t.ActionRefs {
				listed = listed || ref.Id == b.actSym[actID{na, ""}].id
			}
			if !listed {
				t.ActionRefs = append(t.ActionRefs, &p4v1.ActionRef{Id: b.actSym[actID{na, ""}].id, Scope: p4v1.ActionRef_DEFAULT_ONLY, Annotations: []string{"@defaultonly"}})
			}
		}
	}
	if dp := d.Prop("default_action"); dp != nil && dp.Const && b.actSym[ts.actionID(dp.Actions[0].Action)] != nil {
		t.ConstDefaultActionId = b.actSym[ts.actionID(dp.Actions[0].Action)].id
	}
	if sp := d.Prop("size"); sp != nil {
		if v, ok := b.c.Const[sp.Value].(*big.Int); ok && v.IsInt64() {
			t.Size = v.Int64()
		}
	}
	if ip := d.Prop("implementation"); ip != nil {
		if es := b.implementationOf(ip, ts); es != nil {
			t.ImplementationId = es.sym.id
		}
		if es := b.tnaProfileOf(ip); es != nil {
			t.ImplementationId = es.sym.id
		}
	}
	for _, prop := range []string{"counters", "meters"} {
		if p := d.Prop(prop); p != nil {
			if n, ok := p.Value.(*NameExpr); ok {
				if inst, ok := n.Decl.(*InstanceDecl); ok && b.extByI[inst] != nil {
					t.DirectResourceIds = append(t.DirectResourceIds, b.extByI[inst].sym.id)
				}
			}
		}
	}
	if p := d.Prop("idle_timeout"); p != nil && b.tna {
		if v, ok := b.c.Const[p.Value].(bool); ok && v {
			t.IdleTimeoutBehavior = p4v1.Table_NOTIFY_CONTROL
		}
	}
	if p := d.Prop("support_timeout"); p != nil {
		if v, ok := b.c.Const[p.Value].(bool); ok && v {
			t.IdleTimeoutBehavior = p4v1.Table_NOTIFY_CONTROL
		}
	}
	if p := d.Prop("entries"); p != nil && p.Const {
		t.IsConstTable = true
	}
	// P4Runtime 1.4.0's fields, as p4c writes them (kept as unknown fields: the project's
	// p4runtime messages predate them; package internal/p4info).
	b.initialDefaultAction(ts, t)
	if p := d.Prop("entries"); p != nil && len(p.Entries) > 0 {
		p4infotext.SetHasInitialEntries(t, true)
	}
	return t
}

// initialDefaultAction sets the table's initial_default_action as p4c's P4RuntimeSerializer
// does: the default action (NoAction when the table declares none), and each argument that is
// a constant as a parameter id (the position among the arguments, from 1) and the value in
// bytes padded to the argument's width.
func (b *p4infoBuilder) initialDefaultAction(ts *tableSym, t *p4v1.Table) {
	var a *ActionDecl
	var args []*Arg
	if dp := ts.decl.Prop("default_action"); dp != nil && len(dp.Actions) > 0 {
		a, args = dp.Actions[0].Action, dp.Actions[0].Args
	} else {
		a = b.noAction()
	}
	if a == nil {
		return
	}
	sym := b.actSym[ts.actionID(a)]
	if sym == nil {
		sym = b.actSym[actID{a, ""}]
	}
	if sym == nil {
		return
	}
	call := p4infotext.ActionCall{ActionID: sym.id}
	id := uint32(1)
	for _, arg := range args {
		var v *big.Int
		switch x := b.c.Const[arg.Value].(type) {
		case *big.Int:
			v = x
		case bool:
			v = big.NewInt(0)
			if x {
				v.SetInt64(1)
			}
		case *EnumMember:
			v, _ = x.Val.(*big.Int)
		}
		if v == nil || v.Sign() < 0 {
			continue // p4c refuses such arguments (a negative value, an expression)
		}
		w := int(cpWidth(arg.Value.Type()))
		if w == 0 {
			w = 1
		}
		call.Args = append(call.Args, p4infotext.Arg{ParamID: id, Value: bigBytes(v, w)})
		id++
	}
	p4infotext.SetInitialDefaultAction(t, call)
}

// cpWidth is the bit width the control plane sees: @p4runtime_translation("uri", W) on a new
// type sets it (W is an integer, or string for 0), otherwise the type's width.
func cpWidth(t Type) int32 {
	if nt, ok := t.(*NewType); ok {
		if a := nt.Decl.Annos.Get("p4runtime_translation"); a != nil && len(a.Args) == 3 && a.Args[1].Text == "," {
			switch a.Args[2].Kind {
			case TInt:
				if a.Args[2].Lit != nil && a.Args[2].Lit.Value.IsInt64() {
					return int32(a.Args[2].Lit.Value.Int64())
				}
			case TIdent:
				if a.Args[2].Text == "string" {
					return 0
				}
			}
		}
		if a := nt.Decl.Annos.Get("p4runtime_translation"); a != nil && len(a.Args) == 6 && a.Args[2].Text == "bit" && a.Args[4].Lit != nil && a.Args[4].Lit.Value.IsInt64() {
			return int32(a.Args[4].Lit.Value.Int64())
		}
	}
	return int32(max(WidthOf(t), 0))
}

// namedType returns the P4NamedType for new types (registering them in type_info), or nil.
// Serializable enums get no type name but are described in type_info, as p4c does.
func (b *p4infoBuilder) namedType(t Type) *p4v1.P4NamedType {
	switch tt := t.(type) {
	case *EnumType:
		if tt.Underlying != nil {
			b.typeSpec(t)
		}
	case *NewType:
		b.typeSpec(t)
		return &p4v1.P4NamedType{Name: tt.Decl.Name}
	}
	return nil
}

func bitstringSpec(t *BitsType) *p4v1.P4BitstringLikeTypeSpec {
	if t.Signed {
		return &p4v1.P4BitstringLikeTypeSpec{TypeSpec: &p4v1.P4BitstringLikeTypeSpec_Int{Int: &p4v1.P4IntTypeSpec{Bitwidth: int32(t.Width)}}}
	}
	return &p4v1.P4BitstringLikeTypeSpec{TypeSpec: &p4v1.P4BitstringLikeTypeSpec_Bit{Bit: &p4v1.P4BitTypeSpec{Bitwidth: int32(t.Width)}}}
}

// typeSpec converts a type to a P4DataTypeSpec, adding named types to type_info.
func (b *p4infoBuilder) typeSpec(t Type) *p4v1.P4DataTypeSpec {
	ti := b.info.TypeInfo
	switch tt := t.(type) {
	case *BitsType:
		return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_Bitstring{Bitstring: bitstringSpec(tt)}}
	case *VarbitType:
		return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_Bitstring{Bitstring: &p4v1.P4BitstringLikeTypeSpec{TypeSpec: &p4v1.P4BitstringLikeTypeSpec_Varbit{Varbit: &p4v1.P4VarbitTypeSpec{MaxBitwidth: int32(tt.Max)}}}}}
	case *BoolType:
		return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_Bool{Bool: &p4v1.P4BoolType{}}}
	case *ErrorType:
		if ti.Error == nil {
			ti.Error = &p4v1.P4ErrorTypeSpec{}
			for _, m := range b.c.ErrorMembers {
				ti.Error.Members = append(ti.Error.Members, m.Name)
			}
		}
		return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_Error{Error: &p4v1.P4ErrorType{}}}
	case *TupleType:
		tup := &p4v1.P4TupleTypeSpec{}
		for _, el := range tt.Elems {
			tup.Members = append(tup.Members, b.typeSpec(el))
		}
		return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_Tuple{Tuple: tup}}
	case *StackType:
		if st, ok := tt.Elem.(*StructType); ok && st.IsUnion() {
			b.typeSpec(st)
			return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_HeaderUnionStack{HeaderUnionStack: &p4v1.P4HeaderUnionStackTypeSpec{HeaderUnion: &p4v1.P4NamedType{Name: st.Decl.Name}, Size: int32(tt.Size)}}}
		}
		b.typeSpec(tt.Elem)
		name := ""
		if st, ok := tt.Elem.(*StructType); ok {
			name = st.Decl.Name
		}
		return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_HeaderStack{HeaderStack: &p4v1.P4HeaderStackTypeSpec{Header: &p4v1.P4NamedType{Name: name}, Size: int32(tt.Size)}}}
	case *StructType:
		name := tt.Decl.Name
		switch tt.Decl.Kind {
		case "header":
			if ti.Headers == nil {
				ti.Headers = map[string]*p4v1.P4HeaderTypeSpec{}
			}
			if _, ok := ti.Headers[name]; !ok {
				hs := &p4v1.P4HeaderTypeSpec{}
				ti.Headers[name] = hs
				for _, f := range tt.Fields {
					var bs *p4v1.P4BitstringLikeTypeSpec
					switch ft := underlying(f.T).(type) {
					case *BitsType:
						bs = bitstringSpec(ft)
					case *VarbitType:
						bs = &p4v1.P4BitstringLikeTypeSpec{TypeSpec: &p4v1.P4BitstringLikeTypeSpec_Varbit{Varbit: &p4v1.P4VarbitTypeSpec{MaxBitwidth: int32(ft.Max)}}}
					default:
						bs = bitstringSpec(bitsT(max(WidthOf(f.T), 1)))
					}
					hs.Members = append(hs.Members, &p4v1.P4HeaderTypeSpec_Member{Name: f.Name, TypeSpec: bs})
				}
			}
			return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_Header{Header: &p4v1.P4NamedType{Name: name}}}
		case "header_union":
			if ti.HeaderUnions == nil {
				ti.HeaderUnions = map[string]*p4v1.P4HeaderUnionTypeSpec{}
			}
			if _, ok := ti.HeaderUnions[name]; !ok {
				us := &p4v1.P4HeaderUnionTypeSpec{}
				ti.HeaderUnions[name] = us
				for _, f := range tt.Fields {
					b.typeSpec(f.T)
					us.Members = append(us.Members, &p4v1.P4HeaderUnionTypeSpec_Member{Name: f.Name, Header: &p4v1.P4NamedType{Name: f.T.(*StructType).Decl.Name}})
				}
			}
			return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_HeaderUnion{HeaderUnion: &p4v1.P4NamedType{Name: name}}}
		default:
			if ti.Structs == nil {
				ti.Structs = map[string]*p4v1.P4StructTypeSpec{}
			}
			if _, ok := ti.Structs[name]; !ok {
				ss := &p4v1.P4StructTypeSpec{}
				ti.Structs[name] = ss
				for _, f := range tt.Fields {
					ss.Members = append(ss.Members, &p4v1.P4StructTypeSpec_Member{Name: f.Name, TypeSpec: b.typeSpec(f.T)})
				}
			}
			return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_Struct{Struct: &p4v1.P4NamedType{Name: name}}}
		}
	case *EnumType:
		name := tt.Decl.Name
		if tt.Underlying != nil {
			if ti.SerializableEnums == nil {
				ti.SerializableEnums = map[string]*p4v1.P4SerializableEnumTypeSpec{}
			}
			if _, ok := ti.SerializableEnums[name]; !ok {
				se := &p4v1.P4SerializableEnumTypeSpec{UnderlyingType: &p4v1.P4BitTypeSpec{Bitwidth: int32(tt.Underlying.Width)}}
				for _, m := range tt.Decl.Members {
					v, _ := m.Val.(*big.Int)
					if v == nil {
						v = new(big.Int)
					}
					se.Members = append(se.Members, &p4v1.P4SerializableEnumTypeSpec_Member{Name: m.Name, Value: bigBytes(v, tt.Underlying.Width)})
				}
				ti.SerializableEnums[name] = se
			}
			return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_SerializableEnum{SerializableEnum: &p4v1.P4NamedType{Name: name}}}
		}
		if ti.Enums == nil {
			ti.Enums = map[string]*p4v1.P4EnumTypeSpec{}
		}
		if _, ok := ti.Enums[name]; !ok {
			es := &p4v1.P4EnumTypeSpec{}
			for _, m := range tt.Decl.Members {
				es.Members = append(es.Members, &p4v1.P4EnumTypeSpec_Member{Name: m.Name})
			}
			ti.Enums[name] = es
		}
		return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_Enum{Enum: &p4v1.P4NamedType{Name: name}}}
	case *NewType:
		if ti.NewTypes == nil {
			ti.NewTypes = map[string]*p4v1.P4NewTypeSpec{}
		}
		if _, ok := ti.NewTypes[tt.Decl.Name]; !ok {
			spec := &p4v1.P4NewTypeSpec{}
			var kept Annotations
			for _, a := range tt.Decl.Annos {
				if a.Name != "p4runtime_translation" {
					kept = append(kept, a)
				}
			}
			spec.Annotations = annotationStrings(kept)
			if a := tt.Decl.Annos.Get("p4runtime_translation"); a != nil && len(a.Args) >= 3 && a.Args[0].Kind == TString {
				tr := &p4v1.P4NewTypeTranslation{Uri: a.Args[0].Text}
				if a.Args[2].Text == "string" {
					tr.SdnType = &p4v1.P4NewTypeTranslation_SdnString_{SdnString: &p4v1.P4NewTypeTranslation_SdnString{}}
				} else {
					tr.SdnType = &p4v1.P4NewTypeTranslation_SdnBitwidth{SdnBitwidth: cpWidth(tt)}
				}
				spec.Representation = &p4v1.P4NewTypeSpec_TranslatedType{TranslatedType: tr}
			} else {
				// Like p4c, a new type of a new type is described by the innermost representation.
				spec.Representation = &p4v1.P4NewTypeSpec_OriginalType{OriginalType: b.typeSpec(underlying(tt.Underlying))}
			}
			ti.NewTypes[tt.Decl.Name] = spec
		}
		return &p4v1.P4DataTypeSpec{TypeSpec: &p4v1.P4DataTypeSpec_NewType{NewType: &p4v1.P4NamedType{Name: tt.Decl.Name}}}
	}
	return &p4v1.P4DataTypeSpec{}
}

// bigBytes encodes v (wrapped to width bits) big-endian in the minimum number of bytes for width.
func bigBytes(v *big.Int, width int) []byte {
	w := wrap(v, bitsT(width))
	n := (width + 7) / 8
	out := make([]byte, n)
	return w.FillBytes(out)
}

// valueSet is the P4Info of a parser value set, as p4c's P4RuntimeAnalyzer::addValueSet writes
// it: a bit<W> element is one unnamed exact match; a struct one match per field (all bit<W>),
// named by the field and matched as its @match annotation says (exact by default); a
// serializable enum one exact match per member. Other element types have no P4Runtime form.
func (b *p4infoBuilder) valueSet(vs *valueSetSym, pre *p4v1.Preamble) *p4v1.ValueSet {
	d := vs.decl
	out := &p4v1.ValueSet{Preamble: pre, Size: int32(d.N)}
	switch t := underlying(d.T).(type) {
	case *BitsType:
		out.Match = append(out.Match, &p4v1.MatchField{Id: 1, Bitwidth: int32(t.Width), Match: &p4v1.MatchField_MatchType_{MatchType: p4v1.MatchField_EXACT}})
	case *EnumType:
		if t.Underlying == nil {
			break
		}
		for i, m := range t.Decl.Members {
			out.Match = append(out.Match, &p4v1.MatchField{Id: uint32(i + 1), Name: m.Name, Bitwidth: int32(t.Underlying.Width), Match: &p4v1.MatchField_MatchType_{MatchType: p4v1.MatchField_EXACT}})
		}
		return out
	case *StructType:
		for i, f := range t.Fields {
			ft, ok := underlying(f.T).(*BitsType)
			if !ok {
				b.errs = append(b.errs, errorf(d.P, "%s: unsupported type argument for value set: P4Runtime requires the fields of a value set's struct to be bit<W>, but %s is %s", d.Name, f.Name, f.T))
				continue
			}
			mf := &p4v1.MatchField{Id: uint32(i + 1), Name: f.Name, Bitwidth: int32(ft.Width), Match: &p4v1.MatchField_MatchType_{MatchType: p4v1.MatchField_EXACT}}
			if a := f.Annos.Get("match"); a != nil && len(a.Args) == 1 {
				switch kind := a.Args[0].Text; kind {
				case "exact":
				case "ternary":
					mf.Match = &p4v1.MatchField_MatchType_{MatchType: p4v1.MatchField_TERNARY}
				case "lpm":
					mf.Match = &p4v1.MatchField_MatchType_{MatchType: p4v1.MatchField_LPM}
				case "range":
					mf.Match = &p4v1.MatchField_MatchType_{MatchType: p4v1.MatchField_RANGE}
				case "optional":
					mf.Match = &p4v1.MatchField_MatchType_{MatchType: p4v1.MatchField_OPTIONAL}
				default:
					mf.Match = &p4v1.MatchField_OtherMatchType{OtherMatchType: kind}
				}
			}
			out.Match = append(out.Match, mf)
		}
		return out
	}
	if len(out.Match) == 0 {
		b.errs = append(b.errs, errorf(d.P, "%s: unsupported type argument for value set: P4Runtime requires a bit<W>, a struct of bit<W> fields or a serializable enum, not %s", d.Name, d.T))
	}
	return out
}

// walkLive is walkStmt, but an if whose condition value finds to be a constant bool walks its
// taken branch only (value nil: both, as walkStmt).
func walkLive(s Stmt, f func(Expr), value func(Expr) (Value, bool)) {
	if value == nil {
		walkStmt(s, f)
		return
	}
	switch s := s.(type) {
	case *BlockStmt:
		if s == nil {
			return
		}
		for _, x := range s.Stmts {
			walkLive(x, f, value)
		}
	case *IfStmt:
		if v, ok := value(s.Cond); ok {
			if taken, ok := v.(bool); ok {
				if taken {
					walkLive(s.Then, f, value)
				} else if s.Else != nil {
					walkLive(s.Else, f, value)
				}
				return
			}
		}
		walkExpr(s.Cond, f)
		walkLive(s.Then, f, value)
		if s.Else != nil {
			walkLive(s.Else, f, value)
		}
	default:
		walkStmt(s, f)
	}
}
