package p4rtclient

import (
	"errors"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"ok", Config{Addr: "127.0.0.1:9559", ElectionID: ElectionID{Low: 1}}, true},
		{"high election id", Config{Addr: "sw1:9559", ElectionID: ElectionID{High: 1}}, true},
		{"no address", Config{ElectionID: ElectionID{Low: 1}}, false},
		{"no port", Config{Addr: "127.0.0.1", ElectionID: ElectionID{Low: 1}}, false},
		{"election id 0", Config{Addr: "127.0.0.1:9559"}, false},
		{"negative backoff", Config{Addr: "127.0.0.1:9559", ElectionID: ElectionID{Low: 1}, Backoff: Backoff{Initial: -1}}, false},
		{"max below initial", Config{Addr: "127.0.0.1:9559", ElectionID: ElectionID{Low: 1}, Backoff: Backoff{Initial: time.Second, Max: time.Millisecond}}, false},
	} {
		cfg := tc.cfg
		err := cfg.validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v does not wrap ErrConfig", tc.name, err)
		}
		if err == nil && (cfg.Backoff.Initial <= 0 || cfg.Backoff.Max < cfg.Backoff.Initial || cfg.Log == nil) {
			t.Errorf("%s: defaults not filled: %+v", tc.name, cfg)
		}
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	for n, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		if got := b.Delay(n); got != want*time.Millisecond {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want*time.Millisecond)
		}
	}
	if got := b.Delay(1000); got != time.Second {
		t.Errorf("Delay(1000) = %v", got)
	}
}

// TestPipelineRoutesForwarding pushes the test program, checks the cookie, installs routes and
// sees a frame forwarded by them; then modifies and deletes a route.
func TestPipelineRoutesForwarding(t *testing.T) {
	s := startSwitch(t)
	c := dial(t, s.addr, 1)
	ctx := ctxWait(t)
	if err := c.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if pi, err := c.Pipeline(ctx); err != nil || pi != nil {
		t.Fatalf("fresh switch: pipeline %+v, %v; want none", pi, err)
	}
	if _, err := c.TableUpdate(Insert, Entry{Table: "MyIngress.ipv4_lpm"}); !errors.Is(err, ErrNoPipeline) {
		t.Fatalf("entry before a pipeline: %v, want ErrNoPipeline", err)
	}
	if err := c.SetPipeline(ctx, testProgram(t), 42); err != nil {
		t.Fatal(err)
	}
	if pi, err := c.Pipeline(ctx); err != nil || pi == nil || pi.Cookie != 42 {
		t.Fatalf("pipeline %+v, %v; want cookie 42", pi, err)
	}
	if err := c.AddRoutes(ctx, routes, route("10.0.2.0/24", 2), route("10.0.3.7/32", 3)); err != nil {
		t.Fatal(err)
	}
	s.dev.Inject(1, ipFrame(t, "10.0.2.9", layers.IPProtocolTCP, "hello"))
	if mac, ttl, payload := decode(t, s.hosts[2].next(t)); mac.String() != dstMAC.String() || ttl != 63 || payload != "hello" {
		t.Fatalf("forwarded frame: dmac %s ttl %d payload %q", mac, ttl, payload)
	}
	// Modify: 10.0.2.0/24 now goes to port 3.
	e, err := routes.Entry(route("10.0.2.0/24", 3))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ModifyEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	s.dev.Inject(1, ipFrame(t, "10.0.2.9", layers.IPProtocolTCP, "again"))
	if _, _, payload := decode(t, s.hosts[3].next(t)); payload != "again" {
		t.Fatalf("after modify: payload %q on port 3", payload)
	}
	entries, err := c.TableEntries(ctx, "ipv4_lpm") // by alias
	if err != nil || len(entries) != 2 {
		t.Fatalf("read %d entries, %v; want 2", len(entries), err)
	}
	if err := c.DeleteEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	if entries, err := c.TableEntries(ctx, "MyIngress.ipv4_lpm"); err != nil || len(entries) != 1 {
		t.Fatalf("after delete: %d entries, %v", len(entries), err)
	}
	// The default action can be changed (MODIFY of the default entry).
	if err := c.ModifyEntry(ctx, Entry{Table: "MyIngress.ipv4_lpm", Default: true, Action: "MyIngress.route",
		Params: []Param{{"dmac", MAC(dstMAC)}, {"port", Uint(1)}}}); err != nil {
		t.Fatal(err)
	}
	s.dev.Inject(2, ipFrame(t, "192.168.1.1", layers.IPProtocolUDP, "default"))
	if _, _, payload := decode(t, s.hosts[1].next(t)); payload != "default" {
		t.Fatalf("default route: payload %q", payload)
	}
}

// TestTypedErrors: refused updates keep their gRPC code, locally invalid entries never reach
// the switch, and a backup cannot write.
func TestTypedErrors(t *testing.T) {
	s := startSwitch(t)
	c := primary(t, s.addr, 2)
	ctx := ctxWait(t)
	r := route("10.0.2.0/24", 2)
	if err := c.AddRoutes(ctx, routes, r); err != nil {
		t.Fatal(err)
	}
	// Duplicate insert.
	err := c.AddRoutes(ctx, routes, r)
	var we *WriteError
	if !errors.As(err, &we) || we.Code != codes.AlreadyExists || we.Op != Insert || we.Entity != "table MyIngress.ipv4_lpm" {
		t.Fatalf("duplicate insert: %v", err)
	}
	if !errors.Is(err, ErrAlreadyExists) || status.Code(err) != codes.AlreadyExists || errors.Is(err, ErrNotFound) {
		t.Fatalf("duplicate insert: errors.Is / status.Code do not see AlreadyExists: %v", err)
	}
	// Delete of a missing entry.
	missing, _ := routes.Entry(route("10.9.0.0/16", 1))
	if err := c.DeleteEntry(ctx, missing); !errors.Is(err, ErrNotFound) || status.Code(err) != codes.NotFound {
		t.Fatalf("delete of a missing entry: %v", err)
	}
	// A batch with one bad update: CONTINUE_ON_ERROR applies the others.
	u1, _ := c.RouteUpdate(Insert, routes, route("10.0.4.0/24", 1))
	u2, _ := c.RouteUpdate(Insert, routes, r) // exists
	u3, _ := c.RouteUpdate(Insert, routes, route("10.0.5.0/24", 1))
	err = c.Write(ctx, false, u1, u2, u3)
	var be *BatchError
	if !errors.As(err, &be) || len(be.Errors) != 3 || be.Errors[0] != nil || be.Errors[2] != nil || be.Errors[1].Code != codes.AlreadyExists {
		t.Fatalf("batch: %v", err)
	}
	if !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("errors.Is does not see into the batch: %v", err)
	}
	if n, _ := c.TableEntries(ctx, "MyIngress.ipv4_lpm"); len(n) != 3 {
		t.Fatalf("%d entries after the batch, want 3", len(n))
	}
	// Atomic: all or nothing.
	u6, _ := c.RouteUpdate(Insert, routes, route("10.0.6.0/24", 1))
	err = c.Write(ctx, true, u6, u2)
	if !errors.As(err, &be) || be.Errors[1].Code != codes.AlreadyExists || be.Errors[0] == nil || be.Errors[0].Code != codes.Aborted {
		t.Fatalf("atomic batch: %v", err)
	}
	if n, _ := c.TableEntries(ctx, "MyIngress.ipv4_lpm"); len(n) != 3 {
		t.Fatalf("%d entries after a rolled-back batch, want 3", len(n))
	}
	// Invalid entries are caught before the switch sees them.
	for _, tc := range []struct {
		name string
		e    Entry
	}{
		{"unknown table", Entry{Table: "MyIngress.nope", Action: "MyIngress.drop"}},
		{"unknown field", Entry{Table: "MyIngress.ipv4_lpm", Match: []Match{Exact{"hdr.ipv4.src", Uint(1)}}, Action: "MyIngress.drop"}},
		{"wrong kind", Entry{Table: "MyIngress.ipv4_lpm", Match: []Match{Exact{"hdr.ipv4.dst", Uint(1)}}, Action: "MyIngress.drop"}},
		{"bits past prefix", Entry{Table: "MyIngress.ipv4_lpm", Match: []Match{LPM{"hdr.ipv4.dst", []byte{10, 0, 0, 1}, 24}}, Action: "MyIngress.drop"}},
		{"prefix too long", Entry{Table: "MyIngress.ipv4_lpm", Match: []Match{LPM{"hdr.ipv4.dst", []byte{10, 0, 0, 1}, 33}}, Action: "MyIngress.drop"}},
		{"value too wide", Entry{Table: "MyIngress.acl", Match: []Match{Exact{"hdr.ipv4.protocol", Uint(256)}}, Action: "NoAction", Priority: 1}},
		{"bits outside mask", Entry{Table: "MyIngress.acl", Match: []Match{Ternary{"hdr.ipv4.src", Uint(3), Uint(1)}, Exact{"hdr.ipv4.protocol", Uint(6)}}, Action: "NoAction", Priority: 1}},
		{"unknown action", Entry{Table: "MyIngress.ipv4_lpm", Match: []Match{LPM{"hdr.ipv4.dst", []byte{10, 0, 0, 0}, 8}}, Action: "MyIngress.fly"}},
		{"action of another table", Entry{Table: "MyIngress.ipv4_lpm", Match: []Match{LPM{"hdr.ipv4.dst", []byte{10, 0, 0, 0}, 8}}, Action: "MyIngress.mirror", Params: []Param{{"session", Uint(1)}}}},
		{"missing parameter", Entry{Table: "MyIngress.ipv4_lpm", Match: []Match{LPM{"hdr.ipv4.dst", []byte{10, 0, 0, 0}, 8}}, Action: "MyIngress.route", Params: []Param{{"port", Uint(1)}}}},
		{"extra parameter", Entry{Table: "MyIngress.ipv4_lpm", Match: []Match{LPM{"hdr.ipv4.dst", []byte{10, 0, 0, 0}, 8}}, Action: "MyIngress.drop", Params: []Param{{"port", Uint(1)}}}},
		{"parameter too wide", Entry{Table: "MyIngress.ipv4_lpm", Match: []Match{LPM{"hdr.ipv4.dst", []byte{10, 0, 0, 0}, 8}}, Action: "MyIngress.route", Params: []Param{{"dmac", MAC(dstMAC)}, {"port", Uint(512)}}}},
	} {
		if _, err := c.TableUpdate(Insert, tc.e); err == nil {
			t.Errorf("%s: accepted", tc.name)
		} else {
			var we *WriteError
			if errors.As(err, &we) {
				t.Errorf("%s: reached the switch: %v", tc.name, err)
			}
		}
	}
	// The switch's own validation still answers with the right code (priority 0 in a ternary
	// table is INVALID_ARGUMENT; we do not check priorities locally).
	err = c.InsertEntry(ctx, Entry{Table: "MyIngress.acl", Match: []Match{Exact{"hdr.ipv4.protocol", Uint(6)}}, Action: "NoAction"})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("priority 0 in a ternary table: %v", err)
	}

	// A backup may not write.
	b := dial(t, s.addr, 1)
	waitState(t, b, Backup)
	b.UseP4Info(testProgram(t).P4Info)
	e, _ := routes.Entry(route("10.0.7.0/24", 1))
	if err := b.InsertEntry(ctx, e); !errors.Is(err, ErrPermissionDenied) || status.Code(err) != codes.PermissionDenied {
		t.Fatalf("write from a backup: %v", err)
	}
}

// TestCloneAndMulticast programs a clone session and a multicast group and sees the switch use
// them: an ACL entry mirrors UDP from 10.0.0.0/8 to session 5 (port 3) while the route sends it
// to port 2; another floods ICMP to group 7 (ports 2 and 3).
func TestCloneAndMulticast(t *testing.T) {
	s := startSwitch(t)
	c := primary(t, s.addr, 1)
	ctx := ctxWait(t)
	if err := c.AddRoutes(ctx, routes, route("10.0.2.0/24", 2)); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteCloneSession(ctx, Insert, CloneSession{ID: 5, Replicas: []Replica{{Port: 3}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMulticastGroup(ctx, Insert, MulticastGroup{ID: 7, Replicas: []Replica{{Port: 2}, {Port: 3, Instance: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteCloneSession(ctx, Insert, CloneSession{ID: 5, Replicas: []Replica{{Port: 1}}}); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second clone session 5: %v", err)
	}
	acl := func(proto uint64, action string, params ...Param) Entry {
		return Entry{Table: "MyIngress.acl", Priority: 10, Action: action, Params: params, Match: []Match{
			Ternary{"hdr.ipv4.src", []byte{10, 0, 0, 0}, []byte{255, 0, 0, 0}}, Exact{"hdr.ipv4.protocol", Uint(proto)}}}
	}
	if err := c.InsertEntry(ctx, acl(17, "MyIngress.mirror", Param{"session", Uint(5)})); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertEntry(ctx, acl(1, "MyIngress.flood", Param{"group", Uint(7)})); err != nil {
		t.Fatal(err)
	}
	s.dev.Inject(1, ipFrame(t, "10.0.2.1", layers.IPProtocolUDP, "mirrored"))
	if _, _, p := decode(t, s.hosts[2].next(t)); p != "mirrored" {
		t.Fatalf("routed copy: %q", p)
	}
	if _, _, p := decode(t, s.hosts[3].next(t)); p != "mirrored" {
		t.Fatalf("clone: %q", p)
	}
	s.dev.Inject(1, ipFrame(t, "10.0.2.1", layers.IPProtocolICMPv4, "flooded"))
	for _, port := range []int{2, 3} {
		if _, _, p := decode(t, s.hosts[port].next(t)); p != "flooded" {
			t.Fatalf("multicast copy on port %d: %q", port, p)
		}
	}
	sessions, err := c.CloneSessions(ctx)
	if err != nil || len(sessions) != 1 || sessions[0].ID != 5 || len(sessions[0].Replicas) != 1 || sessions[0].Replicas[0].Port != 3 {
		t.Fatalf("clone sessions %+v, %v", sessions, err)
	}
	groups, err := c.MulticastGroups(ctx)
	if err != nil || len(groups) != 1 || groups[0].ID != 7 || len(groups[0].Replicas) != 2 {
		t.Fatalf("multicast groups %+v, %v", groups, err)
	}
	if err := c.WriteMulticastGroup(ctx, Modify, MulticastGroup{ID: 7, Replicas: []Replica{{Port: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteCloneSession(ctx, Delete, CloneSession{ID: 5}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteCloneSession(ctx, Delete, CloneSession{ID: 5}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a deleted session: %v", err)
	}
	if sessions, err := c.CloneSessions(ctx); err != nil || len(sessions) != 0 {
		t.Fatalf("after delete: %+v, %v", sessions, err)
	}
}
