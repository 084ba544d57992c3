package tofino

import (
	"slices"
	"strings"
	"testing"
)

// TestClusterDemand checks what ties fields into one super cluster, on the ingress of
// program() with a second Ethernet header (inner) the control makes valid: each header alone is
// 112 bits; what ties them makes one group of both.
func TestClusterDemand(t *testing.T) {
	inner := func(locals, body string) string {
		return strings.Replace(program(locals, "hdr.inner.setValid();\n"+body),
			"struct header_t { ethernet_h ethernet; }", "struct header_t { ethernet_h ethernet; ethernet_h inner; }", 1)
	}
	both := []string{"ethernet", "inner"}
	for _, tt := range []struct {
		name    string
		src     string
		bits    int
		headers []string // nil: one header, either
	}{
		{"no ties: each header alone", inner("", ""), 112, nil},
		{"a copy between headers ties them", inner("", `hdr.inner.src = hdr.ethernet.src;`), 224, both},
		{"through a metadata field, the bits it carries", inner("",
			`meta.a = (bit<32>)hdr.ethernet.ether_type; hdr.inner.ether_type = (bit<16>)meta.a;`), 224 + 16, both},
		{"a metadata field written and never read ties nothing", inner("",
			`meta.a[15:0] = hdr.ethernet.ether_type; meta.a[15:0] = hdr.inner.ether_type;`), 112, nil},
		{"... read, it ties", inner("",
			`meta.a[15:0] = hdr.ethernet.ether_type; meta.a[15:0] = hdr.inner.ether_type; if (meta.a == 0) { hdr.inner.src = 0; }`), 224 + 16, both},
		{"a hash's input is not an operand", inner(`Hash<bit<16>>(HashAlgorithm_t.IDENTITY) h;`,
			`hdr.inner.ether_type = h.get({hdr.ethernet.ether_type});`), 112, nil},
		{"an action's parameter is its argument", inner(`action set(bit<48> x) { hdr.inner.src = x; }`,
			`set(hdr.ethernet.dst);`), 224, both},
		{"action data ties nothing", inner(`
    action set(bit<48> x) { hdr.inner.src = x; hdr.ethernet.src = x; }
    table t { key = { hdr.ethernet.ether_type : exact; } actions = { set; NoAction; } size = 16; }`, `t.apply();`), 112, nil},
		{"the halves of a moved field tie apart", inner("",
			`meta.a[15:0] = hdr.ethernet.ether_type; meta.a[31:16] = hdr.inner.ether_type; meta.b = meta.a; if (meta.b == 1) { meta.c = 0; }`), 112 + 32, nil},
		{"an adder's result is one container: its halves tie", inner(`action inc() { meta.b = meta.a + 1; }`,
			`meta.a[15:0] = hdr.ethernet.ether_type; meta.a[31:16] = hdr.inner.ether_type; inc(); if (meta.b == 1) { meta.c = 0; }`), 224 + 64, both},
		{"a concatenation places its parts", inner("",
			`meta.a = hdr.ethernet.ether_type ++ hdr.inner.ether_type; hdr.ethernet.dst[31:16] = meta.a[15:0];`), 224 + 32, both},
		// (a shift's source is solitary: of inner, only ether_type joins)
		{"a shifted field ties at its new place", inner("",
			`meta.a = (bit<32>)hdr.inner.ether_type << 16; hdr.ethernet.dst[31:16] = meta.a[31:16]; meta.b = meta.a;`), 112 + 16 + 16, both},
		{"... and not where it was", inner("",
			`meta.a = (bit<32>)hdr.inner.ether_type << 16; hdr.ethernet.dst[15:0] = meta.a[15:0];`), 112 + 16, nil},
		{"a field with @pa_container_size is solitary", strings.Replace(inner("", `hdr.inner.src = hdr.ethernet.src;`),
			"control Ingress(", "@pa_container_size(\"ingress\", \"hdr.inner.src\", 16, 32)\ncontrol Ingress(", 1), 112 + 48, both},
		{"a solitary field breaks its header's slice list", inner("",
			`hdr.inner.ether_type = hdr.ethernet.ether_type + 1;`), 112 + 16, both},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := ingressPHV(t, tt.src).Cluster
			if c.Bits != tt.bits {
				t.Errorf("largest group %v, want %d bits", c, tt.bits)
			}
			if tt.headers == nil && len(c.Headers) != 1 || tt.headers != nil && !slices.Equal(c.Headers, tt.headers) {
				t.Errorf("largest group %v, want headers %v", c, tt.headers)
			}
		})
	}
}

// clusterLog is a phv_allocation_0.log's clustering results in the shape bf-p4c 9.13.4 prints
// them (hand-written; the constraints between a field's width and its range vary).
const clusterLog = `  PHV Analysis invoking Clustering
--- CLUSTERING RESULTS --------------------------------------------------------
Total SuperClusters : 3
PHV CANDIDATES:

SUPERCLUSTER Uid: 7
    slice lists:	
        [ ingress::hdr.a.x<16> ^0 ^bit[0..31] deparsed exact_containers [0:15]
          ingress::hdr.a.y<16> ^0 ^bit[0..15] deparsed exact_containers [0:15] ]
        [ ingress::hdr.b.x<16> ^0 ^bit[0..15] deparsed exact_containers [0:15] ]
    rotational clusters:	
        [[ingress::hdr.a.x<16> ^0 ^bit[0..31] deparsed exact_containers [0:15]], [ingress::meta.m<32> meta [0:15]], [ingress::hdr.b.x<16> ^0 ^bit[0..15] deparsed exact_containers [0:15]]]
        [[ingress::hdr.a.y<16> ^0 ^bit[0..15] deparsed exact_containers [0:15]]]

SUPERCLUSTER Uid: 8
    slice lists:	
    rotational clusters:	
        [[ingress::meta.big<64> meta solitary no_split [0:31]]]
        [[ingress::meta.big<64> meta solitary no_split [32:63]]]
        [[ingress::meta.m<32> meta [16:31]]]

SUPERCLUSTER Uid: 9
    slice lists:	
        [ egress::hdr.e.z<8> ^0 ^bit[0..7] deparsed exact_containers [0:7] ]
    rotational clusters:	
        [[egress::hdr.e.z<8> ^0 ^bit[0..7] deparsed exact_containers [0:7]], [egress::eg_md.w<8> meta [0:7]]]

TPHV CANDIDATES:
--- CLUSTERING RESULTS END ----------------------------------------------------
SUPERCLUSTER Uid: 10
    rotational clusters:	
        [[ingress::meta.later<512> meta [0:511]]]
`

func TestReadClusters(t *testing.T) {
	got := readClusters([]byte(clusterLog))
	want := [2]ClusterUse{
		{Bits: 16 + 64, Fields: 2, SliceLists: 0}, // Uid 8: more bits than Uid 7's 64
		{Bits: 16, Fields: 2, SliceLists: 1, Headers: []string{"e"}},
	}
	// the widest rotational cluster: Uid 7's first (three fields), and egress Uid 9's (two)
	want[0].Widest, want[1].Widest = 3, 2
	for g := range got {
		if got[g].Bits != want[g].Bits || got[g].Fields != want[g].Fields || got[g].SliceLists != want[g].SliceLists ||
			!slices.Equal(got[g].Headers, want[g].Headers) || got[g].Widest != want[g].Widest {
			t.Errorf("gress %d: %+v, want %+v", g, got[g], want[g])
		}
	}
	// Uid 7 alone: the two headers its slice lists and a rotational cluster tie.
	one := strings.Replace(clusterLog, "meta.big<64> meta solitary no_split [0:31]", "meta.big<64> meta solitary no_split [0:1]", 1)
	one = strings.Replace(one, "[32:63]", "[32:33]", 1)
	if c := readClusters([]byte(one))[0]; c.Bits != 64 || c.Fields != 4 || c.SliceLists != 2 || !slices.Equal(c.Headers, []string{"a", "b"}) {
		t.Errorf("Uid 7: %+v", c)
	}
	if c := readClusters([]byte("no clustering here")); c[0].Bits != 0 || c[1].Bits != 0 {
		t.Errorf("without results: %+v", c)
	}
}

// TestClusterWidth checks the widest cluster of instruction operands on the ingress of
// program(): the fields tied at one bit, each a container of one MAU group. Each rule has its
// negative control beside it.
func TestClusterWidth(t *testing.T) {
	use := ` if (meta.a == 1 && meta.c == 2) { hdr.ethernet.ether_type = 1; }`
	for _, tt := range []struct {
		name  string
		src   string
		names []string // of the widest, sorted; nil: no two fields tied
	}{
		{"moves tie what they copy", program("", `meta.a = meta.b; meta.c = meta.b;`+use), []string{"a", "b", "c"}},
		{"a hash's output is no operand", program(`Hash<bit<32>>(HashAlgorithm_t.IDENTITY) h;`,
			`meta.a = h.get({meta.b}); meta.c = meta.b;`+use), []string{"b", "c"}},
		{"an adder ties its operands", program(`action add() { meta.a = meta.b + meta.d; }`, `add(); meta.c = 0;`+use), []string{"a", "b", "d"}},
		{"a comparison of two fields ties them (a gateway XORs them)", program("", `if (meta.a == meta.b) { meta.c = 1; }`+use), []string{"a", "b"}},
		{"... with a constant, nothing", program("", `if (meta.a == 3) { meta.c = 1; }`+use), nil},
		{"action data ties nothing", program(`action set(bit<32> x) { meta.a = x; meta.c = x; }
    table t { key = { hdr.ethernet.ether_type : exact; } actions = { set; NoAction; } size = 16; }`, `t.apply();`+use), nil},
		{"two locals of one name are two fields", program("",
			`{ bit<32> x = meta.a; meta.b = x; } { bit<32> x = meta.b; meta.c = x; }`+use), []string{"a", "b", "c", "x", "x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := ingressPHV(t, tt.src).Widest
			if tt.names == nil {
				if len(w) > 0 {
					t.Errorf("widest %v, want no two fields tied", w[0])
				}
				return
			}
			if len(w) == 0 || w[0].Fields != len(tt.names) || !slices.Equal(w[0].Names, tt.names) {
				t.Errorf("widest %v, want %v", w, tt.names)
			}
		})
	}
}
