// Package p4rt is the P4Runtime server of netlock's software switch.
//
// [Server] implements the p4.v1.P4Runtime gRPC service (the v1.4.0-rc.5
// protos): Capabilities, StreamChannel (master arbitration per device and
// role, PacketOut/PacketIn with @controller_header metadata, DigestList and
// acks, stream errors), SetForwardingPipelineConfig and
// GetForwardingPipelineConfig, Write and Read. It validates every request
// against the P4Info of the installed pipeline and then stores and applies
// entities through a [Device], the interface the execution engine implements.
// [MemDevice] is an in-memory reference Device (no packet processing; a
// packet-out is looped back as a packet-in).
//
// The device config of a pipeline is a P4 source [Bundle]: the server compiles
// it with the bmv2/front front end and requires the P4Info of the request to
// equal the generated one.
//
// Entities reach the Device validated and canonical: match fields sorted by
// id, every bytestring in canonical form (no leading zero bytes, zero is one
// 0x00 byte), ternary values masked and LPM values zero past the prefix,
// action parameters sorted by id. [EntryKey] gives the identity of a table
// entry (table, priority, match), so Device implementations agree with the
// server on what "the same entry" means.
package p4rt
