package front

import (
	p4v1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// P4Info of TNA programs. bf-p4c writes a P4Info whose TNA externs live in the "externs"
// block (barefoot/p4info.proto); with --p4runtime-force-std-externs, the form Stratum serves,
// it converts them to the standard P4Info messages. We generate that standard form
// (backends/tofino/bf-p4c/control-plane/p4runtime_force_std.cpp and
// bfruntime_arch_handler.h in p4c describe it):
//
//   - tables and extern instances are named "Control.name" (bf-p4c names them
//     "pipe.Control.name" and strips the pipe prefix in the conversion) but their ids are
//     hashed from the name with the pipe prefix; actions are named and hashed without it;
//   - Counter, DirectCounter, Meter, DirectMeter, Register (with the cell type's type_spec)
//     and Digest<T> instances (type_spec of T) become counters, direct_counters, meters,
//     direct_meters, registers and digests;
//   - an ActionProfile becomes an action profile; an ActionSelector that names it adds
//     with_selector and max_group_size, and tables implemented by the selector point at the
//     profile; a selector with its own size (the deprecated constructors) is an action
//     profile with a selector;
//   - DirectRegister, Hash, Lpf, Wred and the other Tofino-only externs have no standard
//     message and are left out, as bf-p4c leaves them out;
//   - pkg_info.arch is "tna".
//
// Where bf-p4c's ids may differ: bf-p4c resolves hash collisions with linear probing first
// among its own resource types (0x81... prefixes) and again during the conversion; we probe
// once per standard type. Without collisions (the common case) the ids are equal.

// collectTNA visits the blocks of every pipe with the pipe's control-plane prefix.
func (b *p4infoBuilder) collectTNA() {
	pipes, err := b.c.TNAPipes()
	if err != nil {
		return // MultiParserSwitch: no entities (the engine does not run it either)
	}
	for _, p := range pipes {
		b.pipe = p.Name
		for _, blk := range p.Blocks() {
			switch {
			case blk.Control != nil:
				d := blk.Control
				b.withCtorArgs(d.CtorParams, blk.Args, func() { b.visitControl(d, d.Name) })
			case blk.Parser != nil:
				d := blk.Parser
				b.withCtorArgs(d.CtorParams, blk.Args, func() { b.visitParser(d, d.Name) })
			}
		}
	}
	b.pipe = ""
}

// addPiped adds a table or extern instance: in a TNA pipe, its id is hashed from the name
// with the pipe prefix.
func (b *p4infoBuilder) addPiped(prefix uint32, name string, annos Annotations, pos Pos, owner any) *symbol {
	if !b.tna || b.pipe == "" {
		return b.st.add(prefix, name, annos, pos, owner)
	}
	full := b.pipe + "." + name
	sym := b.st.add(prefix, full, annos, pos, owner)
	sym.name, sym.hashName = name, full
	return sym
}

// aliasName is the name aliases are computed from: for TNA, bf-p4c computes them before it
// strips the pipe prefix.
func (b *p4infoBuilder) aliasName(s *symbol) string {
	if b.tna {
		return s.key()
	}
	return s.name
}

// tnaExternPrefix is the P4Info resource type of a TNA extern instance, or 0 for the ones
// without a standard message (and for ActionSelectors that name an ActionProfile, which
// are folded into it).
func tnaExternPrefix(kind string, args []*Arg) uint32 {
	switch kind {
	case "Counter":
		return prefixCounter
	case "DirectCounter":
		return prefixDirectCounter
	case "Meter":
		return prefixMeter
	case "DirectMeter":
		return prefixDirectMeter
	case "Register":
		return prefixRegister
	case "ActionProfile":
		return prefixActionProfile
	case "ActionSelector":
		if selectorProfile(args) == nil {
			return prefixActionProfile // ActionSelector(size, hash, mode): its own profile
		}
	case "Digest":
		return prefixDigest
	}
	return 0
}

// selectorProfile returns the ActionProfile instance an ActionSelector's first argument
// names, or nil.
func selectorProfile(args []*Arg) *InstanceDecl {
	if len(args) == 0 {
		return nil
	}
	n, ok := args[0].Value.(*NameExpr)
	if !ok {
		return nil
	}
	inst, ok := n.Decl.(*InstanceDecl)
	if !ok {
		return nil
	}
	if et, ok := inst.T.(*ExternType); ok && et.Decl.Name == "ActionProfile" {
		return inst
	}
	return nil
}

// tnaSelector records an ActionSelector that names an ActionProfile.
func (b *p4infoBuilder) tnaSelector(inst *InstanceDecl) {
	pi := selectorProfile(inst.Args)
	if pi == nil {
		return
	}
	if es := b.extByI[pi]; es != nil {
		b.selectors[es] = &externSym{inst: inst, kind: "ActionSelector", args: inst.Args, vals: b.values(inst.Args)}
	}
}

// tnaProfileOf resolves a table's implementation property that names an ActionSelector to
// the ActionProfile that carries it in the standard P4Info.
func (b *p4infoBuilder) tnaProfileOf(p *TableProp) *externSym {
	if !b.tna {
		return nil
	}
	n, ok := p.Value.(*NameExpr)
	if !ok {
		return nil
	}
	inst, ok := n.Decl.(*InstanceDecl)
	if !ok {
		return nil
	}
	if et, ok := inst.T.(*ExternType); !ok || et.Decl.Name != "ActionSelector" {
		return nil
	}
	if pi := selectorProfile(inst.Args); pi != nil {
		return b.extByI[pi]
	}
	return nil
}

// buildTNAExtern adds the standard message of a TNA extern instance.
func (b *p4infoBuilder) buildTNAExtern(info *p4v1.P4Info, es *externSym, pre func(*symbol, Annotations) *p4v1.Preamble) {
	annos := es.annos
	switch es.kind {
	case "Counter":
		info.Counters = append(info.Counters, &p4v1.Counter{Preamble: pre(es.sym, annos), Spec: &p4v1.CounterSpec{Unit: b.counterUnit(es, 1)}, Size: b.intArg(es, 0)})
	case "DirectCounter":
		info.DirectCounters = append(info.DirectCounters, &p4v1.DirectCounter{Preamble: pre(es.sym, annos), Spec: &p4v1.CounterSpec{Unit: b.counterUnit(es, 0)}, DirectTableId: b.directTable(es, "counters")})
	case "Meter":
		info.Meters = append(info.Meters, &p4v1.Meter{Preamble: pre(es.sym, annos), Spec: &p4v1.MeterSpec{Unit: b.meterUnit(es, 1)}, Size: b.intArg(es, 0)})
	case "DirectMeter":
		info.DirectMeters = append(info.DirectMeters, &p4v1.DirectMeter{Preamble: pre(es.sym, annos), Spec: &p4v1.MeterSpec{Unit: b.meterUnit(es, 0)}, DirectTableId: b.directTable(es, "meters")})
	case "Register":
		var ts *p4v1.P4DataTypeSpec
		if len(es.et.Args) > 0 {
			ts = b.typeSpec(es.et.Args[0])
		}
		info.Registers = append(info.Registers, &p4v1.Register{Preamble: pre(es.sym, annos), TypeSpec: ts, Size: int32(b.intArg(es, 0))})
	case "Digest":
		var ts *p4v1.P4DataTypeSpec
		if len(es.et.Args) > 0 {
			ts = b.typeSpec(es.et.Args[0])
		}
		info.Digests = append(info.Digests, &p4v1.Digest{Preamble: pre(es.sym, annos), TypeSpec: ts})
	case "ActionProfile", "ActionSelector":
		ap := &p4v1.ActionProfile{Preamble: pre(es.sym, annos), Size: b.intArg(es, 0)}
		if es.kind == "ActionSelector" {
			ap.WithSelector = true // ActionSelector(size, hash, mode)
		}
		if sel := b.selectors[es]; sel != nil {
			ap.WithSelector = true
			ap.MaxGroupSize = int32(b.intArg(sel, 3))
		}
		for _, ts := range b.tables {
			ip := ts.decl.Prop("implementation")
			if ip == nil {
				continue
			}
			if b.implementationOf(ip, ts) == es || b.tnaProfileOf(ip) == es {
				ap.TableIds = append(ap.TableIds, ts.sym.id)
			}
		}
		info.ActionProfiles = append(info.ActionProfiles, ap)
	}
}
