package p4rt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"
)

// Who may do what (docs/p4.md, "Who may write and read what"):
//
//   - Writes and pipeline changes come from the primary client of their role: the election id
//     must be the primary's AND the RPC must come from the primary's own client, the one whose
//     StreamChannel won the arbitration. A client that learned the primary's election id (it is
//     no secret: every stream of the role is told it) cannot write with it from a connection
//     of its own.
//   - Reads are open to every client, but action parameters annotated @secret (netlock.p4's
//     rack key) are read back as zero to anyone but the primary of the role the read names.
//
// A client is identified by its TLS client certificate when the server requires one (the
// certificate's SHA-256: every connection of the controller that holds it), else by the remote
// address of its connection (one gRPC connection carries a client's stream and its unary RPCs).

// callerID identifies the client of an RPC or a stream ("" when ctx carries no peer, as in
// tests that call the server directly).
func callerID(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return ""
	}
	if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.PeerCertificates) > 0 {
		sum := sha256.Sum256(ti.State.PeerCertificates[0].Raw)
		return "cert:" + hex.EncodeToString(sum[:])
	}
	if p.Addr != nil {
		return p.Addr.Network() + ":" + p.Addr.String()
	}
	return ""
}

// SecretAnnotation marks an action parameter whose value only the primary controller may read.
const SecretAnnotation = "@secret"

// secretParams returns the ids of a's parameters annotated @secret (nil if none).
func secretParams(a *p4configv1.Action) map[uint32]bool {
	var m map[uint32]bool
	for _, p := range a.GetParams() {
		for _, an := range p.GetAnnotations() {
			if an == SecretAnnotation || strings.HasPrefix(an, SecretAnnotation+"(") {
				if m == nil {
					m = map[uint32]bool{}
				}
				m[p.GetId()] = true
			}
		}
	}
	return m
}

// redactAction returns a with its @secret parameters zeroed (a itself if it has none).
func (sch *schema) redactAction(a *p4v1.Action) *p4v1.Action {
	ai := sch.actions[a.GetActionId()]
	if ai == nil || ai.secret == nil {
		return a
	}
	c := proto.Clone(a).(*p4v1.Action)
	for _, p := range c.GetParams() {
		if ai.secret[p.GetParamId()] {
			p.Value = []byte{0}
		}
	}
	return c
}

// redactEntry zeroes the @secret parameters of e's action (e is the reader's own copy).
func (sch *schema) redactEntry(e *p4v1.TableEntry) {
	if a := e.GetAction().GetAction(); a != nil {
		e.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: sch.redactAction(a)}}
	}
}

// isPrimary reports whether the caller of ctx is the primary client of role.
func (s *Server) isPrimary(ctx context.Context, role string) bool {
	id := callerID(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.roles[role]
	return rs != nil && rs.primary != nil && rs.primary.peer == id
}
