package p4rtclient

import (
	"context"
	"fmt"
	"net/netip"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// Replica is one copy of a packet: out of Port, tagged with Instance (egress_rid).
type Replica struct {
	Port     uint32
	Instance uint32
}

// CloneSession is a clone (mirror) session of the packet replication engine: clones of a packet
// sent to session ID go to its replicas, truncated to PacketLength bytes if > 0.
type CloneSession struct {
	ID             uint32
	Replicas       []Replica
	ClassOfService uint32
	PacketLength   int32
}

// MulticastGroup is a multicast group of the packet replication engine.
type MulticastGroup struct {
	ID       uint32
	Replicas []Replica
}

func replicas(rs []Replica) []*p4v1.Replica {
	out := make([]*p4v1.Replica, len(rs))
	for i, r := range rs {
		out[i] = &p4v1.Replica{EgressPort: r.Port, Instance: r.Instance}
	}
	return out
}

// CloneSessionUpdate builds the update of a clone session (a DELETE needs only the ID).
func CloneSessionUpdate(op p4v1.Update_Type, s CloneSession) Update {
	e := &p4v1.CloneSessionEntry{SessionId: s.ID, ClassOfService: s.ClassOfService, PacketLengthBytes: s.PacketLength}
	if op != Delete {
		e.Replicas = replicas(s.Replicas)
	}
	return Update{Op: op, What: fmt.Sprintf("clone session %d", s.ID), Entity: &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{
		PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: e}}}}}
}

// MulticastGroupUpdate builds the update of a multicast group (a DELETE needs only the ID).
func MulticastGroupUpdate(op p4v1.Update_Type, g MulticastGroup) Update {
	e := &p4v1.MulticastGroupEntry{MulticastGroupId: g.ID}
	if op != Delete {
		e.Replicas = replicas(g.Replicas)
	}
	return Update{Op: op, What: fmt.Sprintf("multicast group %d", g.ID), Entity: &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{
		PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: e}}}}}
}

// WriteCloneSession inserts, modifies or deletes a clone session.
func (c *Client) WriteCloneSession(ctx context.Context, op p4v1.Update_Type, s CloneSession) error {
	return c.Write(ctx, false, CloneSessionUpdate(op, s))
}

// WriteMulticastGroup inserts, modifies or deletes a multicast group.
func (c *Client) WriteMulticastGroup(ctx context.Context, op p4v1.Update_Type, g MulticastGroup) error {
	return c.Write(ctx, false, MulticastGroupUpdate(op, g))
}

// CloneSessions reads every clone session of the switch.
func (c *Client) CloneSessions(ctx context.Context) ([]CloneSession, error) {
	var out []CloneSession
	err := c.read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
		Type: &p4v1.PacketReplicationEngineEntry_CloneSessionEntry{CloneSessionEntry: &p4v1.CloneSessionEntry{}}}}},
		func(e *p4v1.Entity) {
			s := e.GetPacketReplicationEngineEntry().GetCloneSessionEntry()
			if s == nil {
				return
			}
			cs := CloneSession{ID: s.GetSessionId(), ClassOfService: s.GetClassOfService(), PacketLength: s.GetPacketLengthBytes()}
			for _, r := range s.GetReplicas() {
				cs.Replicas = append(cs.Replicas, Replica{Port: r.GetEgressPort(), Instance: r.GetInstance()})
			}
			out = append(out, cs)
		})
	return out, err
}

// MulticastGroups reads every multicast group of the switch.
func (c *Client) MulticastGroups(ctx context.Context) ([]MulticastGroup, error) {
	var out []MulticastGroup
	err := c.read(ctx, &p4v1.Entity{Entity: &p4v1.Entity_PacketReplicationEngineEntry{PacketReplicationEngineEntry: &p4v1.PacketReplicationEngineEntry{
		Type: &p4v1.PacketReplicationEngineEntry_MulticastGroupEntry{MulticastGroupEntry: &p4v1.MulticastGroupEntry{}}}}},
		func(e *p4v1.Entity) {
			g := e.GetPacketReplicationEngineEntry().GetMulticastGroupEntry()
			if g == nil {
				return
			}
			mg := MulticastGroup{ID: g.GetMulticastGroupId()}
			for _, r := range g.GetReplicas() {
				mg.Replicas = append(mg.Replicas, Replica{Port: r.GetEgressPort(), Instance: r.GetInstance()})
			}
			out = append(out, mg)
		})
	return out, err
}

// RouteTable names an ipv4_lpm-style route table: an LPM key on the IPv4 destination.
type RouteTable struct {
	Table string // e.g. "MyIngress.ipv4_lpm"
	Field string // e.g. "hdr.ipv4.dst"
}

// Route is one route: packets to Prefix take Action with Params.
type Route struct {
	Prefix netip.Prefix
	Action string
	Params []Param
}

// Entry is the table entry of a route. The prefix must be IPv4 and not /0 (a /0 route is the
// table's default action; write it with Entry.Default); its host bits are cleared.
func (rt RouteTable) Entry(r Route) (Entry, error) {
	p := r.Prefix.Masked()
	if !p.Addr().Is4() {
		return Entry{}, fmt.Errorf("controlplane: route %v: not an IPv4 prefix", r.Prefix)
	}
	if p.Bits() == 0 {
		return Entry{}, fmt.Errorf("controlplane: route %v: a /0 route is the table's default action", r.Prefix)
	}
	return Entry{Table: rt.Table, Match: []Match{LPM{Field: rt.Field, Value: IPv4(p.Addr()), PrefixLen: int32(p.Bits())}},
		Action: r.Action, Params: r.Params}, nil
}

// RouteUpdate builds the update of a route in rt.
func (c *Client) RouteUpdate(op p4v1.Update_Type, rt RouteTable, r Route) (Update, error) {
	e, err := rt.Entry(r)
	if err != nil {
		return Update{}, err
	}
	return c.TableUpdate(op, e)
}

// AddRoutes inserts routes in one atomic batch: all of them or, on an error, none.
func (c *Client) AddRoutes(ctx context.Context, rt RouteTable, routes ...Route) error {
	ups := make([]Update, 0, len(routes))
	for _, r := range routes {
		e, err := rt.Entry(r)
		if err != nil {
			return err
		}
		us, err := c.TableUpdates(Insert, e) // every Pipeline's copy of the table
		if err != nil {
			return err
		}
		ups = append(ups, us...)
	}
	return c.Write(ctx, true, ups...)
}
