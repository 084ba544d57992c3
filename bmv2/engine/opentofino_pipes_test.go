package engine

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/internal/testenv"
)

// TestOpenTofino32q2pipe runs Open-Tofino's tna_32q_2pipe example (two Pipelines,
// pipeline_profile_a and pipeline_profile_b) as its test.py's Sym32Q does: a packet received in
// pipe 0 (profile a's ingress) is pinned to an internal port of pipe 1 (profile b's egress), which
// loops it back into profile b's ingress, pinned to a port of pipe 0 (profile a's egress); it
// leaves with its TTL 4 lower (each of the four blocks decrements it, and the tag they add and
// increment must match each table's key), and profile a's egress direct counter has counted
// it. The entries are test.py's program_entries. It runs on the example's 32Q chip, profile a
// in pipes 0 and 2 and b in 1 and 3 (its switchd configuration's pipe_scope), the packet in and
// out of pipe 2 through pipe 3, and on a chip of two pipes, a in pipe 0 and b in pipe 1. Opt-in:
// it reads the example from an Open-Tofino checkout.
func TestOpenTofino32q2pipe(t *testing.T) {
	root := testenv.OptIn(t, "NETLOCK_OPEN_TOFINO", "an Open-Tofino checkout (commit 5a805ae) to run tna_32q_2pipe")
	dir := filepath.Join(root, "p4-examples", "p4_16_programs", "tna_32q_2pipe")
	checked, err := front.LoadOptions(filepath.Join(dir, "tna_32q_2pipe.p4"), front.Options{IncludeDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                    string
		pipes                   int
		scopes                  [][]int
		igPort, intPort, egPort int // external, internal (in loopback), external
	}{
		{"32Q", 4, [][]int{{0, 2}, {1, 3}}, 260, 388, 264},
		{"two pipes", 2, nil, 4, 132, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sw, err := Load(checked, Config{Pipes: tt.pipes, PipeScopes: tt.scopes, Loopback: []int{tt.intPort}})
			if err != nil {
				t.Fatal(err)
			}
			run32q(t, sw, tt.igPort, tt.intPort, tt.egPort)
		})
	}
}

// run32q is test.py's Sym32Q on sw.
func run32q(t *testing.T, sw *Switch, igPort, intPort, egPort int) {
	dmac := []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55}
	dip := []byte{5, 6, 7, 8}
	const ttl, tag = 64, 100
	u16 := func(v int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
	exact := func(vs ...[]byte) []FieldMatch {
		var ms []FieldMatch
		for _, v := range vs {
			ms = append(ms, FieldMatch{Value: v})
		}
		return ms
	}
	insert := func(table string, e Entry) {
		t.Helper()
		tbl, err := sw.Table(table)
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.Insert(e); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
	}
	a, b := "pipeline_profile_a.", "pipeline_profile_b."
	if err := sw.SetPortMetadata(igPort, []byte{0x12, 0x34, 0x56, 0x78, 0xab, 0xcd}); err != nil { // a: f1, f2
		t.Fatal(err)
	}
	if err := sw.SetPortMetadata(intPort, []byte{0x81}); err != nil { // b: f1
		t.Fatal(err)
	}
	insert(a+"SwitchIngress_a.storm_control", Entry{Match: exact(u16(igPort)), Action: "SwitchIngress_a.set_color", Args: [][]byte{u16(1)}})
	insert(a+"SwitchIngress_a.stats", Entry{Match: exact([]byte{0}, u16(igPort)), Action: "SwitchIngress_a.count"})
	insert(a+"SwitchIngress_a.forward", Entry{Match: exact(dmac, []byte{ttl}), Action: "SwitchIngress_a.hit"})
	insert(a+"SwitchIngress_a.encap_custom_metadata_hdr", Entry{Match: exact([]byte{0x12, 0x34, 0x56, 0x78}, []byte{0xab, 0xcd}),
		Action: "SwitchIngress_a.encap_custom_metadata", Args: [][]byte{u16(tag)}})
	insert(a+"SwitchIngress_a.pinning", Entry{Match: exact(u16(igPort)), Action: "SwitchIngress_a.modify_eg_port", Args: [][]byte{u16(intPort)}})
	insert(b+"SwitchEgress_b.forward", Entry{Match: []FieldMatch{{Value: dip, PrefixLen: 31}, {Value: []byte{ttl - 1}}, {Value: u16(tag)}},
		Action: "SwitchEgress_b.hit"})
	insert(b+"SwitchIngress_b.forward", Entry{Match: exact(dip, []byte{ttl - 2}, u16(tag+1), []byte{0x81}), Action: "SwitchIngress_b.hit"})
	insert(b+"SwitchIngress_b.pinning", Entry{Match: exact(u16(intPort)), Action: "SwitchIngress_b.modify_eg_port", Args: [][]byte{u16(egPort)}})
	aEgress := Entry{Match: []FieldMatch{{Value: dip, Mask: []byte{255, 255, 255, 255}}, {Value: []byte{ttl - 3}, Mask: []byte{255}},
		{Value: u16(tag + 2), Mask: []byte{255, 255}}}, Priority: 1, Action: "SwitchEgress_a.hit"}
	insert(a+"SwitchEgress_a.forward", aEgress)

	in := ipv4Frame(dmac, dip, ttl, 100)
	res, err := sw.Process(igPort, in)
	if err != nil {
		t.Fatal(err)
	}
	want := ipv4Frame(dmac, dip, ttl-4, 100)
	if len(res.Out) != 1 || res.Out[0].Port != egPort || !bytes.Equal(res.Out[0].Data, want) {
		t.Fatalf("out %v, want on port %d:\n%x", res.Out, egPort, want)
	}
	// test.py expects 106 bytes: 100, 2 of the custom header and the model's 4 of CRC; the
	// engine does not count the FCS.
	tbl, _ := sw.Table(a + "SwitchEgress_a.forward")
	if e, err := tbl.Lookup(aEgress); err != nil || e.Packets != 1 || e.Bytes != 102 {
		t.Errorf("profile a's egress counter: %d packets %d bytes (%v), want 1 and 102", e.Packets, e.Bytes, err)
	}
	if k, err := sw.Counter(a + "SwitchIngress_a.storm_control_stats"); err != nil {
		t.Error(err)
	} else if p, _, _ := k.Read(igPort); p != 1 {
		t.Errorf("storm_control_stats[%d] = %d, want 1", igPort, p)
	}
	// Without the entries the packet is dropped.
	for _, tb := range sw.Tables() {
		tb.Clear()
	}
	if res, err := sw.Process(igPort, in); err != nil || len(res.Out) != 0 {
		t.Errorf("without entries: %v %v, want a drop", res.Out, err)
	}
}

// ipv4Frame is an Ethernet/IPv4 frame of n bytes to dst (the IPv4 checksum correct), as ptf's
// simple_tcp_packet makes it less the TCP header's details: source 00:06:07:08:09:0a and
// 192.168.0.1, protocol TCP, id 1.
func ipv4Frame(dmac, dip []byte, ttl byte, n int) []byte {
	f := make([]byte, n)
	copy(f, dmac)
	copy(f[6:], []byte{0x00, 0x06, 0x07, 0x08, 0x09, 0x0a})
	f[12], f[13] = 0x08, 0x00
	ip := f[14:34]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(n-14))
	binary.BigEndian.PutUint16(ip[4:], 1)
	ip[8], ip[9] = ttl, 6
	copy(ip[12:], []byte{192, 168, 0, 1})
	copy(ip[16:], dip)
	binary.BigEndian.PutUint16(ip[10:], csum16(ip))
	return f
}
