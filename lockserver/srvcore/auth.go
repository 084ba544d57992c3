package srvcore

import (
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	"github.com/netlock-go/netlock/wire"
)

// Peers says who may send which control message to a server. Each entry is an IP address
// ("10.0.0.1"), a prefix ("10.0.1.0/24") or an address with a port ("10.0.0.1:9559",
// "[fd00::1]:9559"); a packet matches when its source address does. Empty lists allow nobody.
type Peers struct {
	// Switches may send overflow and queue-empty (the ToR switch's data-plane address(es)), and
	// requests flagged forwarded (the switch forwards on a client's behalf).
	Switches []string
	// Controllers may send every admin sub-operation (the control plane and operators' tools).
	Controllers []string
	// RDMANodes may send the RDMA admin sub-operations rdma-join and rdma-peer only (remote
	// RDMA clients, client/rdmaclient).
	RDMANodes []string
}

// peerRule is one parsed Peers entry: a prefix and, if non-zero, a port.
type peerRule struct {
	prefix netip.Prefix
	port   uint16
}

// peerSet is a parsed list of Peers entries.
type peerSet []peerRule

// ParsePeers checks one list of Peers entries; what names it in errors.
func ParsePeers(what string, list []string) error {
	_, err := parsePeers(what, list)
	return err
}

func parsePeers(what string, list []string) (peerSet, error) {
	var ps peerSet
	for _, s := range list {
		s = strings.TrimSpace(s)
		var p peerRule
		if ap, err := netip.ParseAddrPort(s); err == nil {
			a := ap.Addr().Unmap()
			p = peerRule{prefix: netip.PrefixFrom(a, a.BitLen()), port: ap.Port()}
		} else if pf, err := netip.ParsePrefix(s); err == nil {
			if pf.Addr().Is4In6() {
				return nil, fmt.Errorf("%s: %q: write an IPv4 prefix as such", what, s)
			}
			p = peerRule{prefix: pf.Masked()}
		} else if a, err := netip.ParseAddr(s); err == nil {
			a = a.Unmap()
			p = peerRule{prefix: netip.PrefixFrom(a, a.BitLen())}
		} else {
			return nil, fmt.Errorf("%s: %q is not an IP address, prefix or address:port", what, s)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func (ps peerSet) contains(a netip.AddrPort) bool {
	ip := a.Addr().Unmap()
	for i := range ps {
		if ps[i].prefix.Contains(ip) && (ps[i].port == 0 || ps[i].port == a.Port()) {
			return true
		}
	}
	return false
}

// Reasons a control message (or a forwarded request) is refused, for Refused and the metric
// netlock_control_refused_total{reason}. They are checked in this order.
const (
	RefusedNoKey     = iota // the server has no rack key configured
	RefusedPeer             // the source is not a peer allowed to send this op
	RefusedShort            // no authentication trailer
	RefusedBadKey           // the trailer holds another key
	RefusedForwarded        // a forwarded request (answers go to the address in its header) not from a switch
	RefusedBatched          // a control message inside a batch datagram (batches carry client requests only)
	RefusedReasons
)

// RefusedNames are the reasons' metric labels.
var RefusedNames = [RefusedReasons]string{"no-key-configured", "peer-not-allowed", "short", "bad-key",
	"forwarded-not-from-switch", "control-in-batch"}

// Reasons a datagram is dropped as malformed, for Malformed and netlock_malformed_packets_total.
const (
	BadShort = iota
	BadVersion
	BadOp
	BadMode
	BadUnexpected // a valid header of an op the server does not accept (a reply, a push-back, a grant)
	BadBatch      // a batch datagram that is not 1..wire.MaxBatch whole headers each flagged batch
	BadBatchOff   // a batch datagram to a server that does not accept batches (Config.AcceptBatch)
	BadReasons
)

// BadNames are the reasons' metric labels.
var BadNames = [BadReasons]string{"short", "version", "op", "mode", "unexpected", "batch", "batch-off"}

// auth is a server's parsed control-message policy.
type auth struct {
	key         [8]byte // the rack key in network byte order
	hasKey      bool
	switches    peerSet
	controllers peerSet
	rdmaNodes   peerSet
}

func newAuth(key wire.Key, p Peers) (*auth, error) {
	a := &auth{hasKey: key != 0}
	binary.BigEndian.PutUint64(a.key[:], uint64(key))
	var err error
	if a.switches, err = parsePeers("peers.switches", p.Switches); err != nil {
		return nil, err
	}
	if a.controllers, err = parsePeers("peers.controllers", p.Controllers); err != nil {
		return nil, err
	}
	if a.rdmaNodes, err = parsePeers("peers.rdma_nodes", p.RDMANodes); err != nil {
		return nil, err
	}
	return a, nil
}

// forwardOK reports whether a request flagged forwarded may come from from: only a switch
// forwards requests on a client's behalf (its answers go to the client address in the header),
// so from anyone else the flag would turn the server into a reflector that sends grants and
// rejects to any address an attacker writes.
func (a *auth) forwardOK(from netip.AddrPort) bool { return a.switches.contains(from) }

// check decides whether the control message b (a valid header of a control op) from from may
// be processed. It returns -1 if so, else the reason it is refused. It does not allocate.
func (a *auth) check(b []byte, h wire.Header, from netip.AddrPort) int {
	if !a.hasKey {
		return RefusedNoKey
	}
	allowed := false
	switch h.Op() {
	case wire.OpOverflow, wire.OpQueueEmpty:
		allowed = a.switches.contains(from)
	case wire.OpAdmin:
		allowed = a.controllers.contains(from)
		if s := h.Status(); !allowed && (s == wire.AdminRDMAJoin || s == wire.AdminRDMAPeer) {
			allowed = a.rdmaNodes.contains(from)
		}
	}
	// Push-back goes from servers to the switch: no server accepts it from anyone.
	if !allowed {
		return RefusedPeer
	}
	if len(b) < wire.ControlLen {
		return RefusedShort
	}
	if subtle.ConstantTimeCompare(b[wire.Len:wire.ControlLen], a.key[:]) != 1 {
		return RefusedBadKey
	}
	return -1
}
