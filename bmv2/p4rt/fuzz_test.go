package p4rt

import (
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// FuzzWriteValidation feeds arbitrary WriteRequests (as protobuf bytes) to the
// validation and apply path of Write, against the test program on a
// MemDevice (with the undo of ROLLBACK_ON_ERROR for every other update), and
// to Read of the same entities. It must never panic, and every
// error must be a gRPC status.
func FuzzWriteValidation(f *testing.F) {
	b := testBundle(f)
	p, err := VerifyConfig(&p4v1.ForwardingPipelineConfig{P4Info: mustInfo(f, b), P4DeviceConfig: b.Encode()})
	if err != nil {
		f.Fatal(err)
	}
	n := names{p.P4Info}
	seeds := []*p4v1.Update{
		upd(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: n.table("MyIngress.dmac"), Match: []*p4v1.FieldMatch{exact(1, 2)}, Action: act(n.action("MyIngress.forward"), []byte{1})}),
		upd(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: n.table("MyIngress.acl"), Priority: 3, Match: []*p4v1.FieldMatch{ternary(1, []byte{1}, []byte{3}), rng(4, []byte{1}, []byte{9})}, Action: act(n.action("MyIngress.drop"))}),
		upd(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: n.table("MyIngress.ipv4_lpm"), Match: []*p4v1.FieldMatch{exact(1, 1), lpm(2, 8, 10)}, Action: act(n.action("MyIngress.route"), mac(1), []byte{1})}),
		upd(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: n.table("MyIngress.vrf_map"), Priority: 1, Match: []*p4v1.FieldMatch{exact(1, 1), optional(2, 8, 0)}, Action: act(n.action("MyIngress.set_vrf"), []byte{1})}),
		upd(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: n.table("MyIngress.dmac"), IsDefaultAction: true, Action: act(n.action("MyIngress.drop"))}),
		upd(p4v1.Update_MODIFY, &p4v1.CounterEntry{CounterId: n.id("counter", "MyIngress.port_counter")}),
		upd(p4v1.Update_MODIFY, &p4v1.RegisterEntry{RegisterId: n.id("register", "MyIngress.seen"), Index: &p4v1.Index{Index: 1}, Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{1}}}}),
		upd(p4v1.Update_INSERT, &p4v1.MulticastGroupEntry{MulticastGroupId: 1, Replicas: []*p4v1.Replica{{EgressPort: 1}}}),
		upd(p4v1.Update_INSERT, &p4v1.DigestEntry{DigestId: n.id("digest", "learn_t"), Config: &p4v1.DigestEntry_Config{MaxListSize: 1}}),
		upd(p4v1.Update_MODIFY, &p4v1.DirectMeterEntry{TableEntry: &p4v1.TableEntry{TableId: n.table("MyIngress.ipv4_lpm"), Match: []*p4v1.FieldMatch{exact(1, 1), lpm(2, 8, 10)}}, Config: &p4v1.MeterConfig{Cir: 1, Pir: 2}}),
	}
	for _, u := range seeds {
		data, _ := proto.Marshal(&p4v1.WriteRequest{Updates: []*p4v1.Update{u, u}})
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var req p4v1.WriteRequest
		if proto.Unmarshal(data, &req) != nil {
			return
		}
		dev := NewMemDevice()
		s, err := NewServer(Config{Device: dev})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.writeMu.Lock()
		if err := s.installLocked(p); err != nil {
			t.Fatal(err)
		}
		s.writeMu.Unlock()
		for i, u := range req.GetUpdates() {
			un := s.undoFor(s.sch, u) // ROLLBACK_ON_ERROR's undo capture
			err := s.applyUpdate(s.sch, u)
			if err != nil {
				if _, ok := status.FromError(err); !ok {
					t.Fatalf("not a status: %v", err)
				}
			} else if un != nil && i%2 == 1 {
				_ = un()
			}
			if ent := u.GetEntity(); ent != nil {
				r := &reader{s: s, sch: s.sch}
				_ = r.entityNoSend(ent)
			}
		}
	})
}
