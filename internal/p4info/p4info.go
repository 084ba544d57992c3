// Package p4info reads and writes P4Info in protobuf text format as today's p4c writes it.
//
// The project's Go messages are p4runtime v1.4.0-rc.5's (the P4Runtime client library it uses,
// antoninbas/p4runtime-go-client, does not build against later ones). P4Runtime 1.4.0 added
// fields to p4info.proto that p4c (34b86e9, which pins p4runtime ec4eb5e) writes and those
// messages lack: Table.initial_default_action, which p4c writes for every table, and
// Table.has_initial_entries, PkgInfo.platform_properties,
// ActionProfile.selector_size_semantics and MeterSpec.type. prototext refuses such text
// ("unknown field: initial_default_action").
//
// This package parses the text with p4info.proto as of p4runtime 1.4.0 (the rc.5 descriptor
// with those fields added, built at init) and converts the result into the rc.5 message
// through the wire format, so the new fields are kept as the message's unknown fields: they
// survive a round trip, they reach a P4Runtime server in SetForwardingPipelineConfig, and
// [Marshal] writes them back as text. [InitialDefaultAction] and [HasInitialEntries] read
// the two table fields.
package p4info

import (
	"fmt"
	"slices"

	p4v1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Field numbers of p4runtime 1.4.0's additions to p4info.proto.
const (
	tableInitialDefaultAction = 5  // Table.initial_default_action (TableActionCall)
	tableHasInitialEntries    = 11 // Table.has_initial_entries (bool)
	callActionID              = 1  // TableActionCall.action_id
	callArguments             = 4  // TableActionCall.arguments
	argParamID                = 2  // TableActionCall.Argument.param_id
	argValue                  = 3  // TableActionCall.Argument.value
)

// p4info14 is the descriptor of P4Info as of p4runtime 1.4.0.
var p4info14 = mustSchema()

func mustSchema() protoreflect.MessageDescriptor {
	fdp := protodesc.ToFileDescriptorProto(p4v1.File_p4_config_v1_p4info_proto)
	msg := func(ms []*descriptorpb.DescriptorProto, name string) *descriptorpb.DescriptorProto {
		for _, m := range ms {
			if m.GetName() == name {
				return m
			}
		}
		panic("p4info: no message " + name + " in p4runtime's p4info.proto")
	}
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{
			Name:     proto.String(name),
			JsonName: proto.String(protowireJSONName(name)),
			Number:   proto.Int32(num),
			Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:     typ.Enum(),
		}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	add := func(m *descriptorpb.DescriptorProto, fs ...*descriptorpb.FieldDescriptorProto) {
		m.Field = append(m.Field, fs...)
		// p4c (C++ TextFormat) writes fields in number order; so does prototext, in the order of
		// the descriptor's list.
		slices.SortStableFunc(m.Field, func(a, b *descriptorpb.FieldDescriptorProto) int {
			return int(a.GetNumber() - b.GetNumber())
		})
	}
	const (
		tMsg   = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		tInt32 = descriptorpb.FieldDescriptorProto_TYPE_INT32
		tU32   = descriptorpb.FieldDescriptorProto_TYPE_UINT32
		tBytes = descriptorpb.FieldDescriptorProto_TYPE_BYTES
		tBool  = descriptorpb.FieldDescriptorProto_TYPE_BOOL
		tEnum  = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	)
	// PlatformProperties and PkgInfo.platform_properties.
	fdp.MessageType = append(fdp.MessageType, &descriptorpb.DescriptorProto{
		Name: proto.String("PlatformProperties"),
		Field: []*descriptorpb.FieldDescriptorProto{
			field("multicast_group_table_size", 1, tInt32, ""),
			field("multicast_group_table_total_replicas", 2, tInt32, ""),
			field("multicast_group_table_max_replicas_per_entry", 3, tInt32, ""),
		},
	})
	add(msg(fdp.MessageType, "PkgInfo"), field("platform_properties", 11, tMsg, ".p4.config.v1.PlatformProperties"))
	// TableActionCall, Table.initial_default_action and Table.has_initial_entries.
	arg := &descriptorpb.DescriptorProto{
		Name: proto.String("Argument"),
		Field: []*descriptorpb.FieldDescriptorProto{
			field("param_id", argParamID, tU32, ""),
			field("value", argValue, tBytes, ""),
		},
	}
	call := &descriptorpb.DescriptorProto{
		Name:       proto.String("TableActionCall"),
		NestedType: []*descriptorpb.DescriptorProto{arg},
		Field: []*descriptorpb.FieldDescriptorProto{
			field("action_id", callActionID, tU32, ""),
			field("arguments", callArguments, tMsg, ".p4.config.v1.TableActionCall.Argument"),
		},
	}
	call.Field[1].Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	fdp.MessageType = append(fdp.MessageType, call)
	add(msg(fdp.MessageType, "Table"),
		field("initial_default_action", tableInitialDefaultAction, tMsg, ".p4.config.v1.TableActionCall"),
		field("has_initial_entries", tableHasInitialEntries, tBool, ""))
	// ActionProfile's selector_size_semantics oneof.
	ap := msg(fdp.MessageType, "ActionProfile")
	ap.NestedType = append(ap.NestedType,
		&descriptorpb.DescriptorProto{Name: proto.String("SumOfWeights")},
		&descriptorpb.DescriptorProto{Name: proto.String("SumOfMembers"),
			Field: []*descriptorpb.FieldDescriptorProto{field("max_member_weight", 1, tInt32, "")}})
	oneof := int32(len(ap.OneofDecl))
	ap.OneofDecl = append(ap.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("selector_size_semantics")})
	sw := field("sum_of_weights", 6, tMsg, ".p4.config.v1.ActionProfile.SumOfWeights")
	sm := field("sum_of_members", 7, tMsg, ".p4.config.v1.ActionProfile.SumOfMembers")
	sw.OneofIndex, sm.OneofIndex = proto.Int32(oneof), proto.Int32(oneof)
	add(ap, sw, sm)
	// MeterSpec.type.
	ms := msg(fdp.MessageType, "MeterSpec")
	ms.EnumType = append(ms.EnumType, &descriptorpb.EnumDescriptorProto{
		Name: proto.String("Type"),
		Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("TWO_RATE_THREE_COLOR"), Number: proto.Int32(0)},
			{Name: proto.String("SINGLE_RATE_THREE_COLOR"), Number: proto.Int32(1)},
			{Name: proto.String("SINGLE_RATE_TWO_COLOR"), Number: proto.Int32(2)},
		},
	})
	add(ms, field("type", 2, tEnum, ".p4.config.v1.MeterSpec.Type"))

	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		panic(fmt.Sprintf("p4info: p4info.proto with p4runtime 1.4.0's fields: %v", err))
	}
	return fd.Messages().ByName("P4Info")
}

// protowireJSONName is protoc's JSON name of a field: lowerCamelCase.
func protowireJSONName(s string) string {
	out := make([]byte, 0, len(s))
	up := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			up = true
			continue
		}
		if up && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		out = append(out, c)
	}
	return string(out)
}

// Unmarshal parses a P4Info in protobuf text format, with p4runtime 1.4.0's fields (kept as
// unknown fields of the returned message).
func Unmarshal(text []byte) (*p4v1.P4Info, error) {
	dyn := dynamicpb.NewMessage(p4info14)
	if err := prototext.Unmarshal(text, dyn); err != nil {
		return nil, fmt.Errorf("p4info: %w", err)
	}
	wire, err := proto.MarshalOptions{Deterministic: true}.Marshal(dyn)
	if err != nil {
		return nil, fmt.Errorf("p4info: %w", err)
	}
	info := &p4v1.P4Info{}
	if err := proto.Unmarshal(wire, info); err != nil {
		return nil, fmt.Errorf("p4info: %w", err)
	}
	return info, nil
}

// Marshal renders a P4Info in protobuf text format with p4c's layout ("name {", "key: value",
// two-space indentation), p4runtime 1.4.0's fields included.
func Marshal(info *p4v1.P4Info) (string, error) {
	wire, err := proto.MarshalOptions{Deterministic: true}.Marshal(info)
	if err != nil {
		return "", fmt.Errorf("p4info: %w", err)
	}
	dyn := dynamicpb.NewMessage(p4info14)
	if err := proto.Unmarshal(wire, dyn); err != nil {
		return "", fmt.Errorf("p4info: %w", err)
	}
	out, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(dyn)
	if err != nil {
		return "", fmt.Errorf("p4info: %w", err)
	}
	return NormalizeText(string(out)), nil
}

// ActionCall is a TableActionCall: an action and its arguments, by P4Info ids.
type ActionCall struct {
	ActionID uint32
	Args     []Arg
}

// Arg is one argument of an ActionCall.
type Arg struct {
	ParamID uint32
	Value   []byte
}

// InitialDefaultAction returns the table's initial_default_action; ok is false when the table
// has none.
func InitialDefaultAction(t *p4v1.Table) (call ActionCall, ok bool, err error) {
	b := t.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ActionCall{}, false, fmt.Errorf("p4info: table %s: %w", t.GetPreamble().GetName(), protowire.ParseError(n))
		}
		b = b[n:]
		if num == tableInitialDefaultAction && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return ActionCall{}, false, fmt.Errorf("p4info: table %s: %w", t.GetPreamble().GetName(), protowire.ParseError(n))
			}
			// The last occurrence wins, as protobuf merges a repeated singular message.
			if call, err = parseCall(v); err != nil {
				return ActionCall{}, false, fmt.Errorf("p4info: table %s: initial_default_action: %w", t.GetPreamble().GetName(), err)
			}
			ok = true
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ActionCall{}, false, fmt.Errorf("p4info: table %s: %w", t.GetPreamble().GetName(), protowire.ParseError(n))
		}
		b = b[n:]
	}
	return call, ok, nil
}

func parseCall(b []byte) (ActionCall, error) {
	var c ActionCall
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return c, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == callActionID && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return c, protowire.ParseError(n)
			}
			c.ActionID, b = uint32(v), b[n:]
		case num == callArguments && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return c, protowire.ParseError(n)
			}
			a, err := parseArg(v)
			if err != nil {
				return c, err
			}
			c.Args, b = append(c.Args, a), b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return c, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return c, nil
}

func parseArg(b []byte) (Arg, error) {
	var a Arg
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return a, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == argParamID && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return a, protowire.ParseError(n)
			}
			a.ParamID, b = uint32(v), b[n:]
		case num == argValue && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return a, protowire.ParseError(n)
			}
			a.Value, b = append([]byte(nil), v...), b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return a, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return a, nil
}

// SetInitialDefaultAction sets the table's initial_default_action (replacing one it had).
func SetInitialDefaultAction(t *p4v1.Table, c ActionCall) {
	var body []byte
	body = protowire.AppendTag(body, callActionID, protowire.VarintType)
	body = protowire.AppendVarint(body, uint64(c.ActionID))
	for _, a := range c.Args {
		var ab []byte
		ab = protowire.AppendTag(ab, argParamID, protowire.VarintType)
		ab = protowire.AppendVarint(ab, uint64(a.ParamID))
		ab = protowire.AppendTag(ab, argValue, protowire.BytesType)
		ab = protowire.AppendBytes(ab, a.Value)
		body = protowire.AppendTag(body, callArguments, protowire.BytesType)
		body = protowire.AppendBytes(body, ab)
	}
	u := withoutField(t.ProtoReflect().GetUnknown(), tableInitialDefaultAction)
	u = protowire.AppendTag(u, tableInitialDefaultAction, protowire.BytesType)
	u = protowire.AppendBytes(u, body)
	t.ProtoReflect().SetUnknown(u)
}

// HasInitialEntries returns the table's has_initial_entries.
func HasInitialEntries(t *p4v1.Table) bool {
	b := t.ProtoReflect().GetUnknown()
	has := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return has
		}
		b = b[n:]
		if num == tableHasInitialEntries && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return has
			}
			has, b = v != 0, b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return has
		}
		b = b[n:]
	}
	return has
}

// SetHasInitialEntries sets the table's has_initial_entries (false removes it, as proto3
// writes no default value).
func SetHasInitialEntries(t *p4v1.Table, v bool) {
	u := withoutField(t.ProtoReflect().GetUnknown(), tableHasInitialEntries)
	if v {
		u = protowire.AppendTag(u, tableHasInitialEntries, protowire.VarintType)
		u = protowire.AppendVarint(u, 1)
	}
	t.ProtoReflect().SetUnknown(u)
}

// withoutField returns the unknown-field bytes b without field num.
func withoutField(b []byte, num protowire.Number) []byte {
	var out []byte
	for len(b) > 0 {
		n0, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return append(out, b...)
		}
		m := protowire.ConsumeFieldValue(n0, typ, b[n:])
		if m < 0 {
			return append(out, b...)
		}
		if n0 != num {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return out
}

// Field numbers of the other p4runtime 1.4.0 additions.
const (
	apSumOfWeights      = 6  // ActionProfile.sum_of_weights (SumOfWeights, empty)
	apSumOfMembers      = 7  // ActionProfile.sum_of_members (SumOfMembers)
	membersMaxWeight    = 1  // SumOfMembers.max_member_weight (int32)
	pkgPlatformProps    = 11 // PkgInfo.platform_properties (PlatformProperties)
	PlatformMcGroupSize = 1  // PlatformProperties.multicast_group_table_size
	PlatformMcTotal     = 2  // PlatformProperties.multicast_group_table_total_replicas
	PlatformMcPerEntry  = 3  // PlatformProperties.multicast_group_table_max_replicas_per_entry
)

// SetSelectorSizeSemantics sets an action profile's selector_size_semantics: sum_of_members
// (with max_member_weight when it is not 0) or sum_of_weights.
func SetSelectorSizeSemantics(ap *p4v1.ActionProfile, sumOfMembers bool, maxMemberWeight int32) {
	u := withoutField(withoutField(ap.ProtoReflect().GetUnknown(), apSumOfWeights), apSumOfMembers)
	if sumOfMembers {
		var body []byte
		if maxMemberWeight != 0 {
			body = protowire.AppendTag(body, membersMaxWeight, protowire.VarintType)
			body = protowire.AppendVarint(body, uint64(int64(maxMemberWeight)))
		}
		u = protowire.AppendTag(u, apSumOfMembers, protowire.BytesType)
		u = protowire.AppendBytes(u, body)
	} else {
		u = protowire.AppendTag(u, apSumOfWeights, protowire.BytesType)
		u = protowire.AppendBytes(u, nil)
	}
	ap.ProtoReflect().SetUnknown(u)
}

// SetPlatformProperties sets PkgInfo.platform_properties from field number (PlatformMc*) to
// value; zero values are left out, as proto3 writes them.
func SetPlatformProperties(pkg *p4v1.PkgInfo, props map[protowire.Number]int32) {
	var body []byte
	for _, num := range []protowire.Number{PlatformMcGroupSize, PlatformMcTotal, PlatformMcPerEntry} {
		if v := props[num]; v != 0 {
			body = protowire.AppendTag(body, num, protowire.VarintType)
			body = protowire.AppendVarint(body, uint64(int64(v)))
		}
	}
	u := withoutField(pkg.ProtoReflect().GetUnknown(), pkgPlatformProps)
	u = protowire.AppendTag(u, pkgPlatformProps, protowire.BytesType)
	u = protowire.AppendBytes(u, body)
	pkg.ProtoReflect().SetUnknown(u)
}

// Without14 returns a copy of info without the fields of P4Runtime 1.4.0 (every unknown field,
// at every depth): the P4Info a client built on older messages sends.
func Without14(info *p4v1.P4Info) *p4v1.P4Info {
	c := proto.Clone(info).(*p4v1.P4Info)
	dropUnknown(c.ProtoReflect())
	return c
}

func dropUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil || fd.IsMap() {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				dropUnknown(l.Get(i).Message())
			}
			return true
		}
		dropUnknown(v.Message())
		return true
	})
}

// Equal reports whether a P4Info a client sent (got) is the one expected (want): equal, the
// fields of P4Runtime 1.4.0 included, or, when got has none of them (a client built on older
// messages), equal without them in want.
func Equal(got, want *p4v1.P4Info) bool {
	if proto.Equal(got, want) {
		return true
	}
	bare := Without14(got)
	return proto.Equal(bare, got) && proto.Equal(bare, Without14(want))
}
